"""SQL for the lifecycle work (consolidate, verify, archive, supersession): functions taking a Store.

Kept out of ``Store`` itself so other features can extend the store without edit conflicts.
Writers here expect to run inside ``store.write()``; readers never take a write lock. Derived
lifecycle state (radius, importance, surprise) is written without a changelog row: it is
recomputed, not authored; status changes go through ``Store.update_memory`` and are logged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from mem.records import MEMORY_FIELDS, Memory
from mem.store import batches

if TYPE_CHECKING:
    import numpy as np

    from mem.store import Store

_COLUMNS = ", ".join(f"m.{name}" for name in MEMORY_FIELDS)


def _memory(row: Sequence[Any]) -> Memory:
    from mem.store import _row_to_memory

    return _row_to_memory(row)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


@contextmanager
def savepoint(store: "Store") -> Iterator[None]:
    """Inside a write transaction: undo only this block's writes when it raises (one memory's work)."""
    store.conn.execute("SAVEPOINT mem_one")
    try:
        yield
        store.conn.execute("RELEASE mem_one")  # inside: on PostgreSQL a write sent ahead may fail only here
    except BaseException:
        store.conn.execute("ROLLBACK TO mem_one")
        store.conn.execute("RELEASE mem_one")
        raise


# ------------------------------------------------------------------ lifecycle rows
@dataclass
class LifeRow:
    rowid: int
    memory: Memory
    radius: float | None
    stepped_at: str | None
    uses_seen: int


def life_rows(store: "Store", *, scope: str | None, after_rowid: int, limit: int,
              statuses: Sequence[str] = ("active", "cold")) -> list[LifeRow]:
    """A batch of memories with their lifecycle state, in rowid order after ``after_rowid``."""
    marks = ",".join("?" * len(statuses))
    sql = (f"SELECT m.rowid, m.lc_radius, m.lc_at, m.lc_uses, {_COLUMNS} FROM memories m "
           f"WHERE m.rowid > ? AND m.status IN ({marks})")
    params: list[Any] = [after_rowid, *statuses]
    if scope is not None:
        sql += " AND m.scope = ?"
        params.append(scope)
    sql += " ORDER BY m.rowid LIMIT ?"
    params.append(limit)
    return [LifeRow(int(r[0]), _memory(r[4:]), r[1], r[2], int(r[3] or 0)) for r in store.conn.execute(sql, params)]


def lifecycle_state(store: "Store", memory_id: str) -> tuple[float | None, str | None, int]:
    row = store.conn.execute("SELECT lc_radius, lc_at, lc_uses FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return (row[0], row[1], int(row[2] or 0)) if row else (None, None, 0)


def save_steps(store: "Store", steps: Iterable[tuple[int, float, str, int, float]]) -> None:
    """``(rowid, radius, stepped_at, uses_seen, importance)`` for each stepped memory (no changelog)."""
    store.conn.executemany(
        "UPDATE memories SET lc_radius = ?, lc_at = ?, lc_uses = ?, importance = ? WHERE rowid = ?",
        [(radius, at, uses, importance, rowid) for rowid, radius, at, uses, importance in steps],
    )


def reset_lifecycle(store: "Store", memory_id: str, radius: float, at: str) -> None:
    """Put a memory back at the entry radius (restore): it starts its life in the ball again."""
    store.conn.execute("UPDATE memories SET lc_radius = ?, lc_at = ?, lc_uses = access_count WHERE id = ?",
                       (radius, at, memory_id))


def set_usage(store: "Store", memory_id: str, access_count: int, last_accessed_at: str | None) -> None:
    """A merged memory inherits its originals' use history (so merging does not make it look unused)."""
    store.conn.execute("UPDATE memories SET access_count = ?, last_accessed_at = ?, lc_uses = ? WHERE id = ?",
                       (access_count, last_accessed_at, access_count, memory_id))


def set_surprise(store: "Store", values: Iterable[tuple[int, float]]) -> None:
    store.conn.executemany("UPDATE memories SET surprise = ? WHERE rowid = ?", [(s, r) for r, s in values])


def set_confidence(store: "Store", values: Iterable[tuple[int, float]]) -> None:
    store.conn.executemany("UPDATE memories SET confidence = ? WHERE rowid = ?", [(c, r) for r, c in values])


def scopes(store: "Store") -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT DISTINCT scope FROM memories ORDER BY scope")]


def recent_vectors(store: "Store", scope: str, since: str, limit: int = 500) -> "np.ndarray":
    """Vectors of the memories created or used since ``since`` in ``scope`` (the current context)."""
    import numpy as np

    rows = store.conn.execute(
        "SELECT v.f32 FROM memories m JOIN vectors v ON v.rowid = m.rowid WHERE m.scope = ? AND m.status != 'archived' "
        "AND (m.created_at >= ? OR m.last_accessed_at >= ?) ORDER BY m.rowid DESC LIMIT ?",
        (scope, since, since, limit),
    ).fetchall()
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def entity_fans(store: "Store", rowids: Sequence[int]) -> dict[int, list[int]]:
    """For each memory, the fan (number of memories mentioning it) of each of its entities."""
    out: dict[int, list[int]] = {}
    ids = list(rowids)
    for chunk, marks in batches.in_lists(ids):
        for rowid, fan in store.conn.execute(
            f"SELECT me.memory_rowid, (SELECT COUNT(*) FROM memory_entities x WHERE x.entity_id = me.entity_id) "
            f"FROM memory_entities me WHERE me.memory_rowid IN ({marks})", chunk,
        ):
            out.setdefault(int(rowid), []).append(int(fan))
    return out


# ------------------------------------------------------------------------- edges
def add_edge(store: "Store", src: str, dst: str, *, layer: str, type: str, at: str, weight: float = 1.0,
             origin: str = "auto") -> bool:
    """Insert an edge unless it exists; True when it is new (the graph store's one INSERT)."""
    from mem.store.graph import add_edge as insert_edge

    return insert_edge(store, src, dst, layer, type, weight, at, origin)


def supersessions(store: "Store", memories: Iterable[Memory]) -> dict[str, dict[str, Any]]:
    """``{"at", "reason"}`` of the supersession of each of the superseded ``memories``: the newest
    ``supersede`` changelog row naming the memory that replaced it now (what intake, a person or a sync
    recorded; a reason None when none was given). A memory whose row names another, or that has none
    (superseded before reasons were kept), is left out."""
    by = {m.id: m.superseded_by for m in memories if m.superseded_by}
    wanted, found = list(by), {}
    for chunk, marks in batches.in_lists(wanted):
        for memory_id, at, payload in store.conn.execute(
                f"SELECT memory_id, at, payload FROM changelog WHERE memory_id IN ({marks}) "
                "AND op = 'supersede' ORDER BY seq", chunk):
            found[str(memory_id)] = (str(at), orjson.loads(payload or "{}"))
    return {memory_id: {"at": at, "reason": payload.get("reason")} for memory_id, (at, payload) in found.items()
            if payload.get("superseded_by") == by[memory_id]}


def edges_from(store: "Store", memory_id: str, type: str) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT dst FROM edges WHERE src = ? AND type = ? ORDER BY dst",
                                             (memory_id, type))]


def count_edges(store: "Store", memory_id: str) -> int:
    return int(store.conn.execute("SELECT COUNT(*) FROM edges WHERE src = ? OR dst = ?",
                                  (memory_id, memory_id)).fetchone()[0])


def open_contradictions(store: "Store", ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
    """``contradicts`` edges whose two ends are both still live (neither superseded nor archived)."""
    sql = ("SELECT e.src, e.dst, e.created_at FROM edges e JOIN memories a ON a.id = e.src JOIN memories b ON b.id = e.dst "
           "WHERE e.type = 'contradicts' AND a.superseded_by IS NULL AND b.superseded_by IS NULL "
           "AND a.status != 'archived' AND b.status != 'archived'")
    params: list[Any] = []
    if ids is not None:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        sql += f" AND (e.src IN ({marks}) OR e.dst IN ({marks}))"
        params = [*ids, *ids]
    return [(r[0], r[1], r[2]) for r in store.conn.execute(sql + " ORDER BY e.created_at, e.src", params)]


def contradiction_pairs(store: "Store", ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(newer, older)`` of every ``contradicts`` edge with both ends among ``ids`` (a page of hits)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [(r[0], r[1]) for r in store.conn.execute(
        f"SELECT src, dst FROM edges WHERE type = 'contradicts' AND src IN ({marks}) AND dst IN ({marks}) "
        "ORDER BY created_at, src", [*ids, *ids])]


def replaced_by(store: "Store", ids: Sequence[str], type: str = "supersedes") -> dict[str, set[str]]:
    """Each of ``ids`` that superseded a memory -> the ids it superseded (its ``supersedes`` edges; or, with
    ``type="suspends"``, the ids it suspends for a while)."""
    if not ids:
        return {}
    out: dict[str, set[str]] = {}
    for src, dst in store.conn.execute(
            f"SELECT src, dst FROM edges WHERE src IN ({batches.marks(len(ids))}) AND type = ?", [*ids, type]):
        out.setdefault(src, set()).add(dst)
    return out


def superseded_now(store: "Store", ids: Sequence[str]) -> dict[str, list[str]]:
    """Each of ``ids`` that other memories are superseded by now -> those memories (their ``superseded_by``),
    in rowid order. Unlike ``replaced_by``'s edges, this is the state search hides memories by."""
    out: dict[str, list[str]] = {}
    for chunk, marks in batches.in_lists(list(ids)):
        for older, newer in store.conn.execute(
                f"SELECT id, superseded_by FROM memories WHERE superseded_by IN ({marks}) ORDER BY rowid",
                chunk):
            out.setdefault(str(newer), []).append(str(older))
    return out


def successors(store: "Store", rowids: Sequence[int], *, max_steps: int = 8) -> dict[int, int]:
    """rowid -> the rowid of the memory that superseded it, followed to one not superseded itself (a
    correction of a correction), for the superseded memories among ``rowids``."""
    step: dict[int, int] = {}
    frontier = set(rowids)
    for _ in range(max_steps):
        frontier -= step.keys()
        if not frontier:
            break
        ask = sorted(frontier)
        found: dict[int, int] = {}
        for part, marks in batches.in_lists(ask):
            found.update((int(r[0]), int(r[1])) for r in store.conn.execute(
                "SELECT m.rowid, s.rowid FROM memories m JOIN memories s ON s.id = m.superseded_by "
                f"WHERE m.rowid IN ({marks}) AND m.superseded_by IS NOT NULL", part))
        step.update(found)
        frontier = set(found.values())
    out = {}
    for rowid in rowids:
        current, hops = rowid, 0
        while current in step and hops < max_steps:
            current, hops = step[current], hops + 1
        if current != rowid:
            out[rowid] = current
    return out


# -------------------------------------------------------------------- assertions
def index_assertions(store: "Store", rowid: int, scope: str, rows: Sequence[tuple[str, str, str, str, bool]]) -> None:
    """Store a memory's assertions ``(attribute, subject, slot, value, polarity)`` and mark it indexed."""
    store.conn.execute("DELETE FROM assertions WHERE memory_rowid = ?", (rowid,))
    store.conn.executemany(
        "INSERT INTO assertions(memory_rowid, scope, attribute, subject, slot, value, polarity) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(rowid, scope, a, s, slot, v, int(p)) for a, s, slot, v, p in rows],
    )
    store.conn.execute("UPDATE memories SET asserted = 1 WHERE rowid = ?", (rowid,))


class Rival(NamedTuple):
    """The columns the contradiction check reads of a stored memory (named as on ``Memory``)."""

    id: str
    text: str
    kind: str
    created_at: str
    valid_until: str | None
    pinned: bool


_RIVAL_COLUMNS = "m.id, m.text, m.kind, m.created_at, m.valid_until, m.pinned"


def conflict_candidates(store: "Store", *, scope: str, keys: Iterable[tuple[str, str, str]], values: Iterable[str],
                        exclude: int, limit: int = 50) -> list[tuple[int, Rival]]:
    """Live (not superseded) memories in ``scope`` that may conflict with a memory whose assertions have
    ``keys`` ``(attribute, subject, slot)`` and ``values``: an assertion on the same attribute and
    subject or slot, or one about the same value (negations, "moved from X"). Newest first; per key,
    the ``limit`` most recently stored (superseded ones are skipped after the limit: they are
    history, and a key with that many live rivals is saturated anyway)."""
    # Each key is one indexed range read newest-stored first (m004), so a common value costs no
    # more than a rare one; the rivals are then ordered by created_at.
    lookup = "SELECT * FROM (SELECT memory_rowid FROM assertions WHERE scope = ? AND {} ORDER BY memory_rowid DESC LIMIT ?)"
    selects: list[str] = []
    params: list[Any] = []
    for attribute, subject, slot in dict.fromkeys(keys):
        selects += [lookup.format("attribute = ? AND subject = ?"), lookup.format("attribute = ? AND slot = ?")]
        params += [scope, attribute, subject, limit + 1, scope, attribute, slot, limit + 1]
    for value in dict.fromkeys(values):
        selects.append(lookup.format("value = ?"))
        params += [scope, value, limit + 1]
    if not selects:
        return []
    sql = (f"SELECT m.rowid, {_RIVAL_COLUMNS} FROM memories m WHERE m.rowid IN ({' UNION '.join(selects)}) "
           "AND m.rowid != ? AND m.superseded_by IS NULL")
    found = [(int(r[0]), Rival(r[1], r[2], r[3], r[4], r[5], bool(r[6])))
             for r in store.conn.execute(sql, [*params, exclude])]
    return _newest_first(found)


def cross_scope_pairs(store: "Store", base: str, scope: str, limit: int) -> list[tuple[int, int]]:
    """``(rowid in base, rowid in scope)`` of live memories whose indexed assertions share an attribute
    and a subject or slot, or a value: the candidates for a conflict across two scopes (``base`` is
    ``global``). At most ``limit`` pairs, lowest rowids first."""
    live = ("SELECT 1 FROM memories m WHERE m.rowid = {} AND m.superseded_by IS NULL AND m.status != 'archived'")
    joins = ["p.attribute = g.attribute AND p.subject = g.subject", "p.attribute = g.attribute AND p.slot = g.slot",
             "p.value = g.value"]
    selects = [f"SELECT g.memory_rowid AS a, p.memory_rowid AS b FROM assertions g JOIN assertions p "
               f"ON p.scope = ? AND {on} WHERE g.scope = ? AND EXISTS ({live.format('g.memory_rowid')}) "
               f"AND EXISTS ({live.format('p.memory_rowid')})" for on in joins]
    sql = f"SELECT a, b FROM ({' UNION '.join(selects)}) ORDER BY a, b LIMIT ?"
    return [(int(a), int(b)) for a, b in store.conn.execute(sql, [*[scope, base] * len(joins), limit])]


def correction_candidates(store: "Store", rowid: int, scope: str, neighbours: Sequence[int], *, max_fan: int = 50,
                          limit: int) -> list[tuple[int, Rival]]:
    """Live memories of ``scope`` a correction stored as ``rowid`` may correct: its semantic
    ``neighbours`` (rowids) and the ``limit`` memories sharing most of its entities (each mentioned by
    at most ``max_fan`` memories; none for a limit of 0). Newest first."""
    wanted = sorted({*_sharers(store, rowid, max_fan, limit), *neighbours} - {rowid})
    if not wanted:
        return []
    found = []
    for part, marks in batches.in_lists(wanted):
        # unary +: rowid lookups, never a walk of the scope index (no statistics: 50 ms at 100k)
        found += [(int(r[0]), Rival(r[1], r[2], r[3], r[4], r[5], bool(r[6]))) for r in store.conn.execute(
            f"SELECT m.rowid, {_RIVAL_COLUMNS} FROM memories m WHERE m.rowid IN ({marks}) "
            "AND +m.scope = ? AND m.superseded_by IS NULL AND +m.status != 'archived'", [*part, scope])]
    return _newest_first(found)


class RivalRows:
    """What the contradiction check reads of other memories, for one write transaction: their rows
    (``Rival``, scope, state), read once and kept, and each assertion key's newest rowids, read once
    and then kept up to date as the transaction indexes assertions. Eager intake's memories ask about
    the same neighbours and the same slot keys over and over (a chunk of 256 drafts); the answers are
    ``conflict_candidates``'s and ``correction_candidates``'s, without their statements' repeats.

    Sound while only this transaction writes (every writer holds the write lock) and every write that
    changes what it keeps goes through it: ``stored`` (a memory inserted), ``indexed`` (its
    assertions), ``superseded`` (``superseded_by`` set). Archiving does not happen inside intake.
    """

    def __init__(self, store: "Store") -> None:
        self.store = store
        # rowid -> (the row, its scope, superseded, archived); state as of this transaction
        self.rows: dict[int, tuple[Rival, str, bool, bool]] = {}
        self.rowid_of: dict[str, int] = {}  # public id -> rowid, of the rows kept
        self.keys: dict[tuple[Any, ...], list[int]] = {}  # lookup -> newest memory_rowids, one per assertion row
        self.limit: int | None = None  # the per-key limit the key lists hold (conflict_candidates's + 1)
        self.latest: dict[str, str] = {}  # scope -> the largest created_at of its memories below the newest kept
        self.later: dict[int, bool] = {}  # rowid (stored here) -> a memory of its scope below it was created after it

    # ------------------------------------------------------------------------------- writes
    def stored(self, rowid: int, memory: Memory) -> None:
        """``memory`` was inserted as ``rowid`` in this transaction (the newest row)."""
        scope = memory.scope
        if scope not in self.latest:
            top = self.store.conn.execute("SELECT MAX(created_at) FROM memories WHERE scope = ? AND rowid < ?",
                                          (scope, rowid)).fetchone()[0]
            self.latest[scope] = top or ""
        self.later[rowid] = self.latest[scope] > memory.created_at
        self.latest[scope] = max(self.latest[scope], memory.created_at)
        self._keep(rowid, Rival(memory.id, memory.text, memory.kind, memory.created_at, memory.valid_until,
                                bool(memory.pinned)), scope, memory.superseded_by is not None,
                   memory.status == "archived")

    def indexed(self, rowid: int, scope: str, rows: Sequence[tuple[str, str, str, str, bool]]) -> None:
        """``index_assertions`` wrote these rows for ``rowid`` (the newest memory): it heads their keys' lists."""
        for attribute, subject, slot, value, _ in rows:
            for lookup in _lookups(scope, attribute, subject, slot, value):
                kept = self.keys.get(lookup)
                if kept is not None:
                    kept.insert(0, rowid)
                    del kept[self.limit or 0:]

    def superseded(self, memory_id: str) -> None:
        """The memory ``memory_id`` got its ``superseded_by`` in this transaction."""
        rowid = self.rowid_of.get(memory_id)
        if rowid is not None:
            rival, scope, _, archived = self.rows[rowid]
            self.rows[rowid] = (rival, scope, True, archived)

    # -------------------------------------------------------------------------------- reads
    def load(self, rowids: Iterable[int]) -> None:
        """Read the rows of ``rowids`` not kept yet (one statement per 500)."""
        missing = sorted({int(r) for r in rowids} - self.rows.keys())
        for part, marks in batches.in_lists(missing):
            for r in self.store.conn.execute(
                    f"SELECT m.rowid, {_RIVAL_COLUMNS}, m.scope, m.superseded_by, m.status FROM memories m "
                    f"WHERE m.rowid IN ({marks})", part):
                self._keep(int(r[0]), Rival(r[1], r[2], r[3], r[4], r[5], bool(r[6])), r[7], r[8] is not None,
                           r[9] == "archived")

    def ids(self, rowids: Iterable[int]) -> dict[int, str]:
        """``rowid -> public id`` of the kept rows among ``rowids``."""
        return {r: self.rows[r][0].id for r in rowids if r in self.rows}

    def arrival(self, rowid: int) -> tuple[bool, bool]:
        """``arrival``'s answers for a memory ``stored`` here: no row is above it yet."""
        return self.later[rowid], False

    def conflicts(self, *, scope: str, keys: Iterable[tuple[str, str, str]], values: Iterable[str], exclude: int,
                  limit: int = 50) -> list[tuple[int, Rival]]:
        """``conflict_candidates``, from what is kept."""
        lookups = self._lookups(scope, keys, values, limit)
        self._read_keys([lookup for lookup in lookups if lookup not in self.keys])
        wanted = {rowid for lookup in lookups for rowid in self.keys[lookup]}
        wanted.discard(exclude)
        self.load(wanted)
        found = [(rowid, self.rows[rowid][0]) for rowid in wanted if rowid in self.rows and not self.rows[rowid][2]]
        return _newest_first(found)

    def corrections(self, rowid: int, scope: str, neighbours: Sequence[int], *, max_fan: int = 50,
                    limit: int) -> list[tuple[int, Rival]]:
        """``correction_candidates``, from what is kept (the entity sharers are read each time)."""
        wanted = {*_sharers(self.store, rowid, max_fan, limit), *neighbours} - {rowid}
        self.load(wanted)
        kept = [(r, self.rows[r]) for r in wanted if r in self.rows]
        return _newest_first([(r, rival) for r, (rival, their_scope, superseded, archived) in kept
                              if their_scope == scope and not superseded and not archived])

    def _lookups(self, scope: str, keys: Iterable[tuple[str, str, str]], values: Iterable[str],
                 limit: int) -> list[tuple[Any, ...]]:
        """The key lookups ``conflict_candidates`` makes, each keeping ``limit + 1`` rowids."""
        if self.limit != limit + 1:
            self.keys.clear()
            self.limit = limit + 1
        # two keys may share a subject or a slot: each lookup once, as the statement's UNION reads it
        lookups = [lookup for attribute, subject, slot in keys for lookup in _lookups(scope, attribute, subject, slot, None)]
        return list(dict.fromkeys([*lookups, *(("value", scope, value) for value in values)]))

    def _keep(self, rowid: int, rival: Rival, scope: str, superseded: bool, archived: bool) -> None:
        self.rows[rowid] = (rival, scope, superseded, archived)
        self.rowid_of[rival.id] = rowid

    def _read_keys(self, lookups: Sequence[tuple[Any, ...]]) -> None:
        """Each lookup's newest ``limit`` memory_rowids (one per assertion row, as the statement's LIMIT counts)."""
        lookups = list(dict.fromkeys(lookups))  # a lookup twice would list its rowids twice
        for start in range(0, len(lookups), 100):
            part = lookups[start:start + 100]
            selects, params = [], []
            for label, (column, scope, *values) in enumerate(part):
                where = {"subject": "attribute = ? AND subject = ?", "slot": "attribute = ? AND slot = ?",
                         "value": "value = ?"}[column]
                selects.append(f"SELECT {label} AS k, memory_rowid FROM (SELECT memory_rowid FROM assertions "
                               f"WHERE scope = ? AND {where} ORDER BY memory_rowid DESC LIMIT ?) AS k{label}")
                params += [scope, *values, self.limit]
            for lookup in part:
                self.keys[lookup] = []
            for label, rowid in self.store.conn.execute(" UNION ALL ".join(selects), params):
                self.keys[part[int(label)]].append(int(rowid))
            for lookup in part:
                self.keys[lookup].sort(reverse=True)


def _lookups(scope: str, attribute: str, subject: str, slot: str, value: str | None) -> list[tuple[Any, ...]]:
    """The assertion-key lookups of one assertion row: its attribute and subject, attribute and slot, value."""
    out: list[tuple[Any, ...]] = [("subject", scope, attribute, subject), ("slot", scope, attribute, slot)]
    return out + [("value", scope, value)] if value is not None else out


def _newest_first(found: list[tuple[int, Rival]]) -> list[tuple[int, Rival]]:
    return sorted(found, key=lambda item: (item[1].created_at, item[0]), reverse=True)


def _sharers(store: "Store", rowid: int, max_fan: int, limit: int) -> list[int]:
    """The ``limit`` memories sharing most of ``rowid``'s entities (each mentioned by at most ``max_fan``)."""
    return [int(r[0]) for r in store.conn.execute(
        "SELECT b.memory_rowid FROM memory_entities a JOIN entities e ON e.id = a.entity_id AND e.mention_count <= ? "
        "JOIN memory_entities b ON b.entity_id = a.entity_id AND b.memory_rowid != a.memory_rowid "
        "WHERE a.memory_rowid = ? GROUP BY b.memory_rowid ORDER BY COUNT(*) DESC, b.memory_rowid DESC LIMIT ?",
        (max_fan, rowid, limit))] if limit else []


def arrival(store: "Store", rowid: int, scope: str, created_at: str, *, later: bool | None = None,
            after: bool | None = None) -> tuple[bool, bool]:
    """``(stored later, stored after)`` of the memory at ``rowid``, in one statement: whether a memory of
    ``scope`` stored before it was created after ``created_at`` (it arrived out of order: an import of
    older data; an empty range for every live intake), and whether any memory has a rowid above it
    (none for the memory live intake just stored). ``later``: the first answer when the caller has it
    (``Arrivals``: the statement's form walks every memory of the scope created after this one);
    ``after``: the second, when the caller has it (``highest_mentioned``)."""
    if later is not None:
        if after is not None:
            return later, after
        return later, bool(store.conn.execute(f"SELECT {_STORED_AFTER}", (rowid,)).fetchone()[0])
    later, after = store.conn.execute(
        f"SELECT EXISTS(SELECT 1 FROM memories WHERE scope = ? AND created_at > ? AND rowid < ?), {_STORED_AFTER}",
        (scope, created_at, rowid, rowid)).fetchone()
    return bool(later), bool(after)


_STORED_AFTER = "EXISTS(SELECT 1 FROM memories WHERE rowid > ?)"


def highest_mentioned(store: "Store") -> int:
    """The highest rowid with an entity mention (0 for none): one seek of ``memory_entities``' key.

    The bulk import's finishing pass asks it once a batch, for ``arrival``'s second answer. What the
    correction check looks a memory up against is its neighbours and full-text hits below its rowid,
    and the memories sharing its entities; a pending memory has no mentions until the pass links it, so
    for the pass "a memory above it" that the check can meet is one with mentions above it. With none
    (a bulk import's later rows, all pending), the check decides as eager intake did with no row above:
    it reads only close neighbours when the memory is the newest and reads as no correction."""
    return int(store.conn.execute("SELECT MAX(memory_rowid) FROM memory_entities").fetchone()[0] or 0)


class Arrivals:
    """``arrival``'s first answer (stored later) for the memories of a pass that goes up in rowid order,
    batch by batch (the bulk import's finishing pass), without the statement's walk.

    The statement answers through ``memories_scope_created``, walking every memory of the scope created
    after this one to find none stored before it: O(n - r) for rowid r whenever creation times rise
    with rowids (an import of an export in time order; the slices of a bulk-built million), ~2 memories
    a second at the start of a million. Here the latest ``created_at`` of each scope below the pass's
    position is carried instead, and each batch reads one primary-key range: memory r was stored later
    exactly when the latest creation time of its scope below r is after its own.

    What was carried holds while no other connection commits (``Store.data_version``; the pass itself
    writes no memory's scope or creation time and deletes none); otherwise (and where there is no such
    number) the latest creation time of each scope below the batch is read again, one scan of the
    rows below it.
    """

    def __init__(self, store: "Store") -> None:
        self.store = store
        self.upto = 0  # rows below this rowid are folded into latest
        self.latest: dict[str, str] = {}  # scope -> the largest created_at among its rows below upto
        self.version: int | None = None

    def batch(self, rowids: Sequence[int]) -> dict[int, bool]:
        """Inside the batch's write transaction: rowid -> stored later, for ``rowids`` (ascending, above
        every earlier batch's while nothing else commits) of memories that exist."""
        if not rowids:
            return {}
        conn, first, last = self.store.conn, rowids[0], rowids[-1]
        version = self.store.data_version()
        if version is None or version != self.version or first < self.upto:
            self.latest = {scope: created for scope, created in conn.execute(
                "SELECT scope, MAX(created_at) FROM memories WHERE rowid < ? GROUP BY scope", (first,))}
            self.upto = first
        self.version = version
        wanted, latest, out = set(rowids), self.latest, {}
        for rowid, scope, created in conn.execute(
                "SELECT rowid, scope, created_at FROM memories WHERE rowid >= ? AND rowid <= ? ORDER BY rowid",
                (self.upto, last)):
            top = latest.get(scope)
            if rowid in wanted:
                out[int(rowid)] = top is not None and top > created
            if top is None or created > top:
                latest[scope] = created
        self.upto = last + 1
        return out


def unasserted(store: "Store", *, scope: str | None, after_rowid: int, limit: int) -> list[tuple[int, Memory]]:
    """Memories whose assertions are not indexed yet, in rowid order after ``after_rowid`` (a cursor, so
    a caller that cannot index one still moves past it)."""
    sql = f"SELECT m.rowid, {_COLUMNS} FROM memories m WHERE m.asserted = 0 AND m.rowid > ?"
    return _scoped_batch(store, sql, [after_rowid], scope=scope, ids=None, limit=limit)


# ------------------------------------------------------------------- vectors
def live_vectors(store: "Store", scope: str, *, batch: int = 5000) -> Iterator[tuple[list[int], "np.ndarray", list[float]]]:
    """Vectors of active/cold memories in ``scope`` with their stored surprise, in rowid batches."""
    import numpy as np

    last = 0
    while True:
        rows = store.conn.execute(
            "SELECT v.rowid, v.f32, m.surprise FROM vectors v JOIN memories m ON m.rowid = v.rowid "
            "WHERE v.rowid > ? AND m.scope = ? AND m.status != 'archived' ORDER BY v.rowid LIMIT ?",
            (last, scope, batch),
        ).fetchall()
        if not rows:
            return
        last = int(rows[-1][0])
        yield ([int(r[0]) for r in rows], np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1),
               [float(r[2]) for r in rows])


# ------------------------------------------------------------------ sources
def with_source(store: "Store", *, scope: str | None, ids: Sequence[str] | None, after_rowid: int,
                limit: int) -> list[tuple[int, Memory]]:
    sql = f"SELECT m.rowid, {_COLUMNS} FROM memories m WHERE m.source IS NOT NULL AND m.rowid > ?"
    return _scoped_batch(store, sql, [after_rowid], scope=scope, ids=ids, limit=limit)


def _scoped_batch(store: "Store", sql: str, params: list[Any], *, scope: str | None, ids: Sequence[str] | None,
                  limit: int) -> list[tuple[int, Memory]]:
    """Run ``sql`` (a memories query with a WHERE) narrowed to ``scope`` and ``ids``, in rowid order."""
    if scope is not None:
        sql += " AND m.scope = ?"
        params.append(scope)
    if ids is not None:
        if not ids:
            return []
        sql += f" AND m.id IN ({batches.marks(len(ids))})"
        params.extend(ids)
    sql += " ORDER BY m.rowid LIMIT ?"
    params.append(limit)
    return [(int(r[0]), _memory(r[1:])) for r in store.conn.execute(sql, params)]


def decay_candidates(store: "Store", *, scope: str | None, ids: Sequence[str] | None, created_before: str,
                     after_rowid: int, limit: int) -> list[tuple[int, Memory]]:
    """Memories whose confidence may fall, not pinned, not archived: unverified ones of layers 3-4
    created before ``created_before``, and stale or contradicted ones of any layer and age."""
    sql = (f"SELECT m.rowid, {_COLUMNS} FROM memories m WHERE m.rowid > ? AND m.pinned = 0 AND m.status != 'archived' "
           "AND (m.verification IN ('stale', 'contradicted') OR (m.layer >= 3 AND m.verification = 'unverified' "
           "AND m.created_at < ?))")
    return _scoped_batch(store, sql, [after_rowid, created_before], scope=scope, ids=ids, limit=limit)


def closed_contradictions(store: "Store", *, scope: str | None, ids: Sequence[str] | None, after_rowid: int,
                          limit: int) -> list[tuple[int, Memory]]:
    """Memories marked ``contradicted`` that are the newer side of no open contradiction any more: what they
    contradicted was superseded, archived or purged, or the edge was removed by hand."""
    sql = (f"SELECT m.rowid, {_COLUMNS} FROM memories m WHERE m.rowid > ? AND m.verification = 'contradicted' "
           "AND NOT EXISTS (SELECT 1 FROM edges e JOIN memories b ON b.id = e.dst WHERE e.src = m.id "
           "AND e.type = 'contradicts' AND b.superseded_by IS NULL AND b.status != 'archived')")
    return _scoped_batch(store, sql, [after_rowid], scope=scope, ids=ids, limit=limit)


def confidence_before_contradiction(store: "Store", memory_id: str) -> float | None:
    """The confidence a memory had before ``mem verify`` first lowered it for its latest contradiction (the
    ``confidence_before`` verify logs then), None when verify never did."""
    for (payload,) in store.conn.execute(
            "SELECT payload FROM changelog WHERE memory_id = ? AND op = 'verify' AND seq > COALESCE("
            "(SELECT MAX(seq) FROM changelog WHERE memory_id = ? AND op = 'contradict'), 0) ORDER BY seq",
            (memory_id, memory_id)):
        before = orjson.loads(payload or "{}").get("confidence_before")
        if before is not None:
            return float(before)
    return None


# ------------------------------------------------------------- consolidation lease
_LEASE = "consolidate.lease"


def read_lease(store: "Store") -> dict[str, Any] | None:
    """The holder of the consolidation lease (a JSON object kept in ``meta``), None when free."""
    value = store.get_meta(_LEASE)
    try:
        holder = orjson.loads(value) if value else None
    except orjson.JSONDecodeError:
        return None  # a damaged lease is no lease
    return holder if isinstance(holder, dict) else None


def write_lease(store: "Store", holder: dict[str, Any]) -> None:
    store.set_meta(_LEASE, _json(holder))


def release_lease(store: "Store", token: str) -> None:
    """Give the lease up, only if ``token`` still holds it (a run that lost it to a takeover leaves it be)."""
    holder = read_lease(store)
    if holder is not None and holder.get("token") == token:
        store.conn.execute("DELETE FROM meta WHERE key = ?", (_LEASE,))


def interrupt_run(store: "Store", run_id: int, at: str) -> None:
    """Close the log row of a run whose process died (kill -9, power loss) without finishing it."""
    store.conn.execute("UPDATE consolidation_runs SET finished_at = ?, status = 'interrupted', "
                       "error = 'the process ended before the run finished' WHERE id = ? AND finished_at IS NULL",
                       (at, run_id))


# ------------------------------------------------------------- consolidation log
def start_run(store: "Store", started_at: str, phases: Sequence[str], dry_run: bool) -> int:
    cursor = store.conn.execute("INSERT INTO consolidation_runs(started_at, phases, dry_run) VALUES (?, ?, ?)",
                                (started_at, _json(list(phases)), int(dry_run)))
    return int(cursor.lastrowid)


def finish_run(store: "Store", run_id: int, finished_at: str, status: str, summary: dict[str, Any],
               error: str | None = None) -> None:
    store.conn.execute("UPDATE consolidation_runs SET finished_at = ?, status = ?, summary = ?, error = ? WHERE id = ?",
                       (finished_at, status, _json(summary), error, run_id))


def last_run(store: "Store", phase: str) -> str | None:
    """``started_at`` of the last successful, real (not dry) run that included ``phase``."""
    row = store.conn.execute(
        "SELECT started_at FROM consolidation_runs WHERE status = 'ok' AND dry_run = 0 "
        "AND EXISTS (SELECT 1 FROM json_each(phases) WHERE value = ?) ORDER BY started_at DESC LIMIT 1", (phase,),
    ).fetchone()
    return row[0] if row else None


def runs(store: "Store", limit: int = 20) -> list[dict[str, Any]]:
    rows = store.conn.execute(
        "SELECT id, started_at, finished_at, phases, dry_run, status, summary, error FROM consolidation_runs "
        "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
    return [{"id": r[0], "started_at": r[1], "finished_at": r[2], "phases": orjson.loads(r[3]), "dry_run": bool(r[4]),
             "status": r[5], "summary": orjson.loads(r[6]), "error": r[7]} for r in rows]


# ------------------------------------------------------------------ consolidation reads
def recent_rows(store: "Store", *, scope: str | None, since: str, after_rowid: int, limit: int) -> list[tuple[int, Memory]]:
    """Live memories created or used since ``since`` (replay), in rowid order."""
    sql = (f"SELECT m.rowid, {_COLUMNS} FROM memories m WHERE m.rowid > ? AND m.status != 'archived' "
           "AND m.superseded_by IS NULL AND (m.created_at >= ? OR m.last_accessed_at >= ?)")
    params: list[Any] = [after_rowid, since, since]
    if scope is not None:
        sql += " AND m.scope = ?"
        params.append(scope)
    sql += " ORDER BY m.rowid LIMIT ?"
    params.append(limit)
    return [(int(r[0]), _memory(r[1:])) for r in store.conn.execute(sql, params)]


def compress_candidates(store: "Store", scope: str, *, protected_tags: Sequence[str] = (),
                        batch: int = 5000) -> Iterator[tuple[list[int], "np.ndarray"]]:
    """Vectors of memories a merge may absorb: live, not superseded, not pinned, layers 3-4, neither
    kind nor any tag among ``protected_tags`` (``person:x`` counts as ``person``), and not themselves
    a merge (so a second run never folds merges into merges)."""
    import numpy as np

    tags = sorted({t.lower() for t in protected_tags}) or [""]
    marks = ",".join("?" * len(tags))
    last = 0
    while True:
        rows = store.conn.execute(
            "SELECT v.rowid, v.f32 FROM vectors v JOIN memories m ON m.rowid = v.rowid WHERE v.rowid > ? AND m.scope = ? "
            "AND m.status != 'archived' AND m.superseded_by IS NULL AND m.pinned = 0 AND m.layer >= 3 "
            f"AND json_extract(m.meta, '$.consolidated') IS NULL AND m.kind NOT IN ({marks}) AND NOT EXISTS (SELECT 1 "
            f"FROM json_each(m.tags) t WHERE lower(substr(t.value, 1, instr(t.value || ':', ':') - 1)) IN ({marks})) "
            "ORDER BY v.rowid LIMIT ?", (last, scope, *tags, *tags, batch),
        ).fetchall()
        if not rows:
            return
        last = int(rows[-1][0])
        yield [int(r[0]) for r in rows], np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def ends(store: "Store", rowids: Sequence[int]) -> dict[int, str]:
    """rowid -> ``valid_until`` of the memories among ``rowids`` that name an end (most name none)."""
    out: dict[int, str] = {}
    for part, marks in batches.in_lists(sorted(set(rowids))):
        out.update((int(r[0]), str(r[1])) for r in store.conn.execute(
            f"SELECT rowid, valid_until FROM memories WHERE rowid IN ({marks}) AND valid_until IS NOT NULL",
            part))
    return out


def suspensions(store: "Store", rowids: Sequence[int]) -> dict[int, list[tuple[int, str]]]:
    """rule rowid -> ``(rowid, valid_until)`` of each memory with a ``suspends`` edge to it (an exception
    for a while, ``mem.score.validity``), for the rules among ``rowids``."""
    out: dict[int, list[tuple[int, str]]] = {}
    for part, marks in batches.in_lists(sorted(set(rowids))):
        for rule, exception, end in store.conn.execute(
                "SELECT r.rowid, x.rowid, x.valid_until FROM memories r JOIN edges e ON e.dst = r.id AND e.type = 'suspends' "
                f"JOIN memories x ON x.id = e.src WHERE r.rowid IN ({marks}) "
                "AND x.valid_until IS NOT NULL AND x.superseded_by IS NULL AND x.status != 'archived'", part):
            out.setdefault(int(rule), []).append((int(exception), str(end)))
    return out

"""Verify: are memories still true to their sources, and which contradictions are still open?

For each memory with a ``source`` file, the file's sha256 now is compared with ``source_hash``
(taken at capture): ``verified`` | ``stale`` (with the current text of ``source_line`` when one
is known, the file is tracked in the memory's own repository and the line holds no secret; else
``line_withheld`` says why; nothing new is stored) | ``missing`` (also a FIFO, device or socket).
URLs are not fetched; files are read only through ``mem.sources`` (regular, capped, timed).
Open contradictions (``contradicts`` edges between two live memories) are listed, and so are
conflicts between a ``global`` memory and a project's (``scope_conflict``; reported, not counted
as problems: a project may override what holds elsewhere). Unverified or
stale memories of layers 3-4 older than ``older_than_days`` lose confidence with age, and stale or
contradicted ones (an open conflict) by their state, whatever their layer and age; never pinned ones:

    confidence = min(confidence, max(0.1, exp(-(age - older_than_days) / 60 days) x factor))
    (the exponential only for layers 3-4 past ``older_than_days``, else 1)

with factor 0.7 if stale, 0.3 if contradicted (HaluMem), 1 otherwise: a cap that depends only on age
and state, so running verify twice at the same instant changes nothing. A memory marked contradicted
whose contradiction has closed since (what it contradicted was superseded, archived or purged, or the
edge removed by hand) is unverified again, with the confidence it had before the contradiction lowered
it (``resolved`` in the summary): the conflict is over, and a correction is not held down for it.
Findings (problems only) are yielded one per line, then one ``summary`` record.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mem.records import Memory
    from mem.stages.context import Context

BATCH = 500
CONFIDENCE_TAU_DAYS = 60.0
CONFIDENCE_FLOOR = 0.1
MAX_LINE_CHARS = 500
GLOBAL = "global"
MAX_SCOPE_PAIRS = 5000  # candidate pairs looked at per project scope (bounded work on any database)
CONFIDENCE_FACTORS = {"stale": 0.7, "contradicted": 0.3}  # HaluMem's multipliers


def _check(memory: "Memory") -> tuple[str | None, str | None, str | None]:
    """``(verification, current text of source_line, why no line is shown)``; verification None when the
    source cannot be checked. Files are read through ``mem.sources`` (regular files only, capped, timed)."""
    from mem import sources

    source = memory.source or ""
    if "://" in source:
        return None, None, None
    path = Path(source).expanduser()
    kind = sources.kind_of(path)
    if kind in ("missing", "special"):
        return "missing", None, None
    if kind == "large" or memory.source_hash is None:
        return None, None, None  # too big to hash, or unreadable at capture: nothing to compare with
    digest = sources.sha256_of(path)
    if digest is None:
        return None, None, None  # it would not read within the time limit
    if digest == memory.source_hash:
        return "verified", None, None
    if not memory.source_line:
        return "stale", None, None
    if not sources.quotable(path, memory.scope):
        return "stale", None, "outside the memory's project"
    line = sources.read_line(path, memory.source_line, MAX_LINE_CHARS)
    if line is not None and _holds_secret(line):
        return "stale", None, "looks like a secret"
    return "stale", line, None


def _holds_secret(line: str) -> bool:
    from mem.secrets import scan

    return bool(scan(line))


def confidence_cap(age_days: float, older_than_days: float, verification: str, *, ages: bool = True) -> float:
    """The most confidence a memory of this age and verification state keeps (HaluMem: stale x0.7,
    contradicted x0.3); ``ages`` is False for layers 1-2, which lose confidence only by their state.

    >>> confidence_cap(10, 30, "unverified"), round(confidence_cap(90, 30, "unverified"), 3)
    (1.0, 0.368)
    >>> round(confidence_cap(30, 30, "stale"), 2), round(confidence_cap(1, 30, "contradicted"), 2)
    (0.7, 0.3)
    """
    cap = 1.0 if not ages or age_days <= older_than_days else math.exp(-(age_days - older_than_days) / CONFIDENCE_TAU_DAYS)
    return max(CONFIDENCE_FLOOR, cap * CONFIDENCE_FACTORS.get(verification, 1.0))


def scope_conflicts(ctx: "Context", scope: str | None, ids: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """A ``global`` memory and a project memory that contradict each other: reported, never resolved
    (a project may legitimately differ from what holds everywhere else). ``scope``: that project only
    (every project against ``global`` when None or ``global``); ``ids``: pairs involving them only.
    The test is the intake's own (``mem.enrich.assertions.supersedes``), on candidates from the index."""
    from mem.enrich.assertions import supersedes
    from mem.store import lifecycle as sql

    store = ctx.store
    projects = [s for s in sql.scopes(store) if s != GLOBAL] if scope in (None, GLOBAL) else [scope]
    wanted = set(ids) if ids is not None else None
    for project in projects:
        pairs = sql.cross_scope_pairs(store, GLOBAL, project, MAX_SCOPE_PAIRS)
        found = store.by_rowids({r for pair in pairs for r in pair})
        for a, b in pairs:
            general, local = found.get(a), found.get(b)
            if general is None or local is None:
                continue
            if wanted is not None and not {general.id, local.id} & wanted:
                continue
            newer, older = (local, general) if (local.created_at, b) > (general.created_at, a) else (general, local)
            clashes = supersedes(newer.text, older.text, newer.kind)
            if not clashes:
                continue
            yield {"record": "finding", "finding": "scope_conflict", "id": local.id, "other": general.id,
                   "scope": project, "other_scope": GLOBAL, "text": local.text, "other_text": general.text,
                   "values": [{"value": mine.value, "other_value": theirs.value} for mine, theirs in
                              ((n, o) if newer is local else (o, n) for n, o in clashes)]}


def run(ctx: "Context", *, scope: str | None = None, ids: Sequence[str] | None = None,
        older_than_days: float = 30.0) -> Iterator[dict[str, Any]]:
    """Yield one ``finding`` per problem, then a ``summary``; ``ids`` limits the check to those memories."""
    from mem.enrich.timestamps import format_datetime, parse_datetime
    from mem.store import lifecycle as sql

    store = ctx.store
    scope = ctx.scope_filter(scope) if ids is None else None
    at = ctx.now_iso()
    now = ctx.now()
    counts = {"checked": 0, "verified": 0, "stale": 0, "missing": 0, "contradictions": 0, "scope_conflicts": 0,
              "sync_conflicts": 0, "decayed": 0}
    last = 0
    while True:
        rows = sql.with_source(store, scope=scope, ids=ids, after_rowid=last, limit=BATCH)
        if not rows:
            break
        last = rows[-1][0]
        changes: list[tuple[str, str]] = []
        findings: list[dict[str, Any]] = []
        for _, memory in rows:
            verdict, line, withheld = _check(memory)
            if verdict is None:
                continue
            counts["checked"] += 1
            counts[verdict] += 1
            if verdict != memory.verification:
                changes.append((memory.id, verdict))
            if verdict != "verified":
                finding: dict[str, Any] = {"record": "finding", "finding": verdict, "id": memory.id,
                                           "source": memory.source, "text": memory.text}
                if verdict == "stale" and memory.source_line:
                    finding["source_line"] = memory.source_line
                    finding["line_text"] = line
                    if withheld:
                        finding["line_withheld"] = withheld
                findings.append(finding)
        if changes:
            with store.write():
                for memory_id, verdict in changes:
                    store.update_memory(memory_id, {"verification": verdict}, at=at, op="verify")
        yield from findings
    for newer, older, since in sql.open_contradictions(store, ids):
        a, b = store.get(newer), store.get(older)
        if scope is not None and a.scope != scope:
            continue
        counts["contradictions"] += 1
        yield {"record": "finding", "finding": "contradiction", "id": newer, "other": older, "since": since,
               "text": a.text, "other_text": b.text}
    for finding in scope_conflicts(ctx, scope, ids):
        counts["scope_conflicts"] += 1
        yield finding
    yield from _sync_conflicts(store, scope, ids, counts)
    counts["resolved"] = _reopen(ctx, scope, ids, at)
    before = format_datetime(now - timedelta(days=older_than_days))
    last = 0
    while True:
        rows = sql.decay_candidates(store, scope=scope, ids=ids, created_before=before, after_rowid=last, limit=BATCH)
        if not rows:
            break
        last = rows[-1][0]
        lowered = []
        for rowid, memory in rows:
            age = max(0.0, (now - parse_datetime(memory.created_at)).total_seconds() / 86400.0)
            value = round(min(memory.confidence, confidence_cap(age, older_than_days, memory.verification,
                                                                  ages=memory.layer >= 3)), 4)
            if value < memory.confidence - 1e-6:
                lowered.append((rowid, value))
        if lowered:
            with store.write():
                sql.set_confidence(store, lowered)
                batch = dict(rows)
                for rowid, value in lowered:  # what a contradiction took, given back when it closes (``_reopen``)
                    memory = batch[rowid]
                    if memory.verification == "contradicted":
                        store.log(at, "verify", memory.id, None, {"confidence": value,
                                                                  "confidence_before": memory.confidence})
            counts["decayed"] += len(lowered)
    problems = counts["stale"] + counts["missing"] + counts["contradictions"] + counts["sync_conflicts"]
    yield {"record": "summary", "command": "verify", **counts, "problems": problems}


def _reopen(ctx: "Context", scope: str | None, ids: Sequence[str] | None, at: str) -> int:
    """Memories marked ``contradicted`` whose contradiction closed (what they contradicted was superseded,
    archived or purged, or a person removed the edge) are ``unverified`` again, with the confidence they
    had before verify lowered it for the contradiction: a correction is not held down for a conflict that
    is over. Returns how many."""
    from mem.store import lifecycle as sql

    store, count, last = ctx.store, 0, 0
    while True:
        rows = sql.closed_contradictions(store, scope=scope, ids=ids, after_rowid=last, limit=BATCH)
        if not rows:
            return count
        last = rows[-1][0]
        with store.write():
            for _, memory in rows:
                changes: dict[str, Any] = {"verification": "unverified"}
                before = sql.confidence_before_contradiction(store, memory.id)
                if before is not None and before > memory.confidence:
                    changes["confidence"] = before
                store.update_memory(memory.id, changes, at=at, op="verify", reason="its contradiction is closed")
        count += len(rows)


def _sync_conflicts(store: Any, scope: str | None, ids: Sequence[str] | None,
                    counts: dict[str, int]) -> Iterator[dict[str, Any]]:
    """Memories ``mem sync`` found changed on both sides, open until edited again here (``mem.store.sync``)."""
    from mem.store.sync import open_conflicts

    for conflict in open_conflicts(store, None if ids is None else set(ids)):
        if not store.exists(conflict["id"]):
            continue
        memory = store.get(conflict["id"])
        if scope is not None and memory.scope != scope:
            continue
        counts["sync_conflicts"] += 1
        other = conflict["other"] or {}
        yield {"record": "finding", "finding": "sync_conflict", "id": memory.id, "since": conflict["at"],
               "text": memory.text, "other_text": other.get("text"), "other_updated_at": other.get("updated_at"),
               "kept": conflict["kept"], "peer": conflict["peer"]}

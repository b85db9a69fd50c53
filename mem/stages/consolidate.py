"""Consolidation ("sleep"): replay, reorganize, compress, prune. Cron-safe, idempotent, ``dry_run``-able.

- ``replay``: finish the graph of a bulk import that was interrupted (``mem.stages.finish``), index the
  assertions of memories stored before the contradiction index existed
  (and resolve their contradictions), then refresh the ``see_also`` links of memories created or
  used since the last run (``mem.stages.link.link_semantic``).
- ``reorganize``: communities and centroids per scope (``mem.stages.graph.communities``; when the
  graph has none yet, spherical k-means over the vectors, deterministic), then
  ``surprise = 1 - max cosine to the centroids``.
- ``compress``: clusters of >= 3 near duplicates (never pinned, layer 1-2 or protected-tag memories) (cosine >= 0.85 to the cluster's first member,
  within one community) become one new memory through the normal intake path
  (``mem.stages.add.run`` with ``keep_near``), holding every distinct sentence of the originals
  (or an Ollama merge that kept every name and number); ``derived_from`` edges go from the new
  memory to each original, and the originals are archived, never deleted.
- ``prune``: the lifecycle step (``mem.stages.lifecycle.prune``).

When compress or prune change which memories are live, the scope is reorganized again at once
(if ``reorganize`` is among the phases), so a run ends in a settled state.

Every write is a short transaction over one batch. A second run at the same ``now`` finds
nothing to do: edges exist, surprise is unchanged, clusters are archived, radii are current.
One real run per database at a time: a lease in ``meta`` (pid, host, heartbeat) makes a second
concurrent run report ``skipped`` at once; a run killed at any moment (kill -9) leaves committed
batches only, and the next run takes the dead holder's lease over and finishes the work.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput, MemError

if TYPE_CHECKING:
    import numpy as np

    from mem.records import Memory
    from mem.stages.context import Context

PHASES = ("replay", "reorganize", "compress", "prune")
REPLAY_DAYS = 7  # first run: re-link what was created or used in the last week
BATCH = 200
SURPRISE_BATCH = 2000
NEAR = 0.85
MIN_CLUSTER = 3
MAX_CLUSTER = 20
MAX_GROUP = 4000  # pairwise similarities are computed within groups of at most this many memories
KMEANS_SAMPLE = 20_000
KMEANS_ITERATIONS = 8
MAX_COMMUNITIES = 256


@dataclass
class Options:
    phases: Sequence[str] = PHASES
    dry_run: bool = False
    limit: int | None = None  # at most this many actions per phase
    scope: str | None = None  # None: every scope
    llm: str | None = None  # "ollama" or "ollama:MODEL": abstractive merges, checked
    near: float = NEAR


@dataclass
class _Run:
    at: str
    options: Options
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, tuple[list[int], Any]] = field(default_factory=dict)  # scope -> (rowids, community index)


class _DryRun(Exception):
    """Raised at the end of a dry-run transaction so it rolls back."""


@contextmanager
def _txn(ctx: "Context", dry_run: bool) -> Iterator[None]:
    """A write transaction; in a dry run the same statements run and are rolled back."""
    if not dry_run:
        with ctx.store.write():
            yield
        return
    try:
        with ctx.store.write():
            yield
            raise _DryRun
    except _DryRun:
        pass


def run(ctx: "Context", options: Options) -> Iterator[dict[str, Any]]:
    """Run the chosen phases in order; yield one record per action, then a ``summary`` (with
    ``skipped`` and nothing done when another real run holds the database's lease)."""
    from mem import vocab

    vocab.check_all("phase", options.phases)
    phases = [p for p in PHASES if p in options.phases]  # always in the natural order
    if options.limit is not None and options.limit < 0:
        raise BadInput("--limit must be >= 0")
    state = _Run(at=ctx.now_iso(), options=options)
    summary = {"record": "summary", "command": "consolidate", "run": None, "now": state.at,
               "dry_run": options.dry_run, "actions": 0, "phases": state.stats}
    lease = None
    if not options.dry_run:  # a dry run writes nothing, so it needs no lease
        with ctx.store.write():
            lease, holder = _claim(ctx, state.at, phases)
        if lease is None:
            yield {**summary, "skipped": f"another consolidate is running (pid {holder.get('pid')} on "
                                         f"{holder.get('host')}, since {holder.get('since')}); it does the work"}
            return
        summary["run"] = lease.run_id
    handlers = {"replay": _replay, "reorganize": _reorganize, "compress": _compress, "prune": _prune}
    try:
        for phase in phases:
            started = time.perf_counter()
            stats = state.stats.setdefault(phase, {"actions": 0})
            for record in handlers[phase](ctx, state, stats):
                stats["actions"] += 1
                summary["actions"] += 1
                yield record
                if lease is not None:
                    lease.beat()
            stats["seconds"] = round(time.perf_counter() - started, 3)
    except BaseException as exc:
        if lease is not None:
            lease.end("failed", state.stats, f"{type(exc).__name__}: {exc}")
        raise
    if lease is not None:
        lease.end("ok", state.stats)
    yield summary


# ---------------------------------------------------------------------------------- lease
LEASE_SECONDS = 3600.0  # a holder that has not beaten its heartbeat for this long is taken over, pid alive or not
BEAT_SECONDS = 30.0


@dataclass
class _Lease:
    """This process's hold on the consolidation lease (one real run per database at a time)."""

    ctx: "Context"
    token: str
    run_id: int
    holder: dict[str, Any]
    beaten: float = field(default_factory=time.monotonic)

    def beat(self) -> None:
        """Refresh the heartbeat at most every BEAT_SECONDS, so a long run is not taken for a dead one."""
        if time.monotonic() - self.beaten < BEAT_SECONDS:
            return
        from mem.store import lifecycle as sql

        self.beaten = time.monotonic()
        with self.ctx.store.write():
            if (sql.read_lease(self.ctx.store) or {}).get("token") == self.token:
                sql.write_lease(self.ctx.store, {**self.holder, "beat": time.time()})

    def end(self, status: str, stats: dict[str, Any], error: str | None = None) -> None:
        from mem.store import lifecycle as sql

        with self.ctx.store.write():
            sql.finish_run(self.ctx.store, self.run_id, self.ctx.now_iso(), status, stats, error)
            sql.release_lease(self.ctx.store, self.token)


def _claim(ctx: "Context", at: str, phases: Sequence[str]) -> tuple[_Lease | None, dict[str, Any]]:
    """Inside a write transaction: take the lease (logging the run) unless a live run holds it.

    A holder is dead when its process is gone (same host: ``kill -9``, a crash) or its heartbeat is
    older than LEASE_SECONDS; its run is then logged as ``interrupted`` and the lease taken over, so
    the next run redoes whatever the dead one left (every phase is idempotent)."""
    import socket
    import uuid

    from mem.store import lifecycle as sql

    holder = sql.read_lease(ctx.store)
    if holder is not None and _alive(holder):
        return None, holder
    if holder is not None and isinstance(holder.get("run"), int):
        sql.interrupt_run(ctx.store, holder["run"], ctx.now_iso())
    run_id = sql.start_run(ctx.store, at, phases, False)
    mine = {"token": uuid.uuid4().hex, "pid": os.getpid(), "host": socket.gethostname(), "run": run_id,
            "since": at, "beat": time.time()}
    sql.write_lease(ctx.store, mine)
    return _Lease(ctx, mine["token"], run_id, mine), mine


def _alive(holder: dict[str, Any]) -> bool:
    import socket

    beat = holder.get("beat")
    if not isinstance(beat, (int, float)) or time.time() - beat > LEASE_SECONDS:
        return False
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return True  # another machine's run: only its heartbeat tells
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def _scopes(ctx: "Context", options: Options) -> list[str]:
    from mem.store import lifecycle as sql

    return [options.scope] if options.scope else sql.scopes(ctx.store)


def _room(options: Options, stats: dict[str, Any]) -> bool:
    return options.limit is None or stats["actions"] < options.limit


# ---------------------------------------------------------------------------------- replay
def _replay(ctx: "Context", state: _Run, stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
    from mem.stages import supersede
    from mem.store import lifecycle as sql

    options = state.options
    stats.update(indexed=0, superseded=0, relinked=0, links=0, failed=0)
    # 0. an interrupted bulk import left its graph unfinished: finish it first, in rowid order over every
    # scope (mem.stages.finish), so step 1 never takes those memories out of that order
    from mem.stages import finish

    if options.dry_run:
        stats["unfinished"] = finish.waiting(ctx)
    else:
        stats["finished"] = len(finish.run(ctx))
    # 1. memories stored before the assertion index existed: index them, resolving conflicts in rowid
    # order. The rowid cursor moves past every row read, indexed or not, so the loop ends.
    last = 0
    while _room(options, stats):
        rows = sql.unasserted(ctx.store, scope=options.scope, after_rowid=last, limit=BATCH)
        if not rows:
            break
        last = rows[-1][0]
        records: list[dict[str, Any]] = []
        with _txn(ctx, options.dry_run):
            for rowid, memory in rows:
                try:
                    with sql.savepoint(ctx.store):
                        superseded = supersede.check(ctx, rowid, memory)
                except MemError:  # the store or the configuration, not this memory: stop
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad memory must not stop the night's work
                    records.append(_failure("replay", exc, options, id=memory.id))
                    continue
                stats["indexed"] += 1
                for old_id in superseded:
                    newer = memory.id if old_id != memory.id else ctx.store.get(memory.id).superseded_by
                    records.append({"record": "action", "phase": "replay", "action": "supersede", "id": newer,
                                    "supersedes": old_id, "dry_run": options.dry_run})
                    stats["superseded"] += 1
        yield from _counted(records, stats)
    # 2. re-link what is recent
    since = sql.last_run(ctx.store, "replay")
    floor = _iso(ctx, days=-REPLAY_DAYS)
    if since is None or since > state.at:
        since = floor
    from mem.stages.link import link_semantic as relink

    last = 0
    while _room(options, stats):
        rows = sql.recent_rows(ctx.store, scope=options.scope, since=since, after_rowid=last, limit=BATCH)
        if not rows:
            break
        last = rows[-1][0]
        found, matrix = ctx.store.vectors_for([r for r, _ in rows])
        vectors = dict(zip(found, matrix))
        records = []
        with _txn(ctx, options.dry_run):
            for rowid, memory in rows:
                if rowid not in vectors or not _room(options, {"actions": stats["actions"] + len(records)}):
                    continue
                try:
                    with sql.savepoint(ctx.store):
                        made = relink(ctx, rowid, memory, vectors[rowid], state.at)
                except MemError:  # the store or the configuration, not this memory: stop
                    raise
                except Exception as exc:  # noqa: BLE001
                    records.append(_failure("replay", exc, options, id=memory.id))
                    continue
                stats["relinked"] += 1
                if made:
                    stats["links"] += made
                    records.append({"record": "action", "phase": "replay", "action": "link", "id": memory.id,
                                    "links": made, "dry_run": options.dry_run})
        yield from _counted(records, stats)


def _failure(phase: str, exc: Exception, options: Options, **where: Any) -> dict[str, Any]:
    """The record of a memory (``id``), cluster or scope a phase could not process; the phase goes on."""
    return {"record": "action", "phase": phase, "action": "failed", **where,
            "error": f"{type(exc).__name__}: {exc}", "dry_run": options.dry_run}


def _counted(records: list[dict[str, Any]], stats: dict[str, Any]) -> list[dict[str, Any]]:
    stats["failed"] = stats.get("failed", 0) + sum(1 for r in records if r["action"] == "failed")
    return records


def _iso(ctx: "Context", *, days: float) -> str:
    from mem.enrich.timestamps import format_datetime

    return format_datetime(ctx.now() + timedelta(days=days))


# ------------------------------------------------------------------------------ reorganize
def _reorganize(ctx: "Context", state: _Run, stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
    stats.update(communities=0, surprise_updated=0)
    for scope in _scopes(ctx, state.options):
        if not _room(state.options, stats):
            break
        try:
            record = _reorganize_scope(ctx, state, stats, scope)
        except MemError:  # the store or the configuration, not this memory: stop
            raise
        except Exception as exc:  # noqa: BLE001 - one scope that cannot be clustered must not stop the others
            stats["failed"] = stats.get("failed", 0) + 1
            record = _failure("reorganize", exc, state.options, scope=scope)
        if record is not None:
            yield record


def _reorganize_scope(ctx: "Context", state: _Run, stats: dict[str, Any], scope: str) -> dict[str, Any] | None:
    """Communities, centroids and surprise for one scope; a record when anything changed."""
    import numpy as np

    from mem.lifecycle.surprise import from_best, unit_rows
    from mem.store import graph as graph_sql
    from mem.store import lifecycle as sql

    options = state.options
    rowids, matrix, surprise = _load(sql.live_vectors(ctx.store, scope))
    if len(rowids) < MIN_CLUSTER:
        return None
    from mem.stages.graph import communities

    if not options.dry_run:
        communities(ctx, scope=scope)  # stores the graph's communities with their centroids
    _, centroids = graph_sql.centroids(ctx.store, scope)
    method = "graph"
    if centroids is None or not len(centroids):  # no graph communities (no edges yet): cluster the vectors
        centroids = spherical_kmeans(matrix, _k(len(rowids)))
        method = "kmeans"
    else:
        centroids = unit_rows(centroids)
    labels, best = _assign(matrix, centroids)
    if method == "kmeans":
        # final centroids: the normalized mean of every member, so they describe all of the scope
        centroids = _means(matrix, labels, centroids)
        labels, best = _assign(matrix, centroids)
    state.labels[scope] = (rowids, labels)
    fresh = from_best(best)
    updates = [(rowids[i], float(fresh[i])) for i in np.flatnonzero(np.abs(fresh - surprise) > 1e-4)]
    for start in range(0, len(updates), SURPRISE_BATCH):
        with _txn(ctx, options.dry_run):
            sql.set_surprise(ctx.store, updates[start : start + SURPRISE_BATCH])
    stats["communities"] = stats.get("communities", 0) + len(centroids)
    stats["surprise_updated"] = stats.get("surprise_updated", 0) + len(updates)
    if not updates:
        return None
    return {"record": "action", "phase": "reorganize", "action": "communities", "scope": scope, "method": method,
            "communities": int(len(centroids)), "surprise_updated": len(updates),
            "dry_run": options.dry_run}


def _load(batches: Iterator[tuple[Any, ...]]) -> tuple[list[int], "np.ndarray", "np.ndarray"]:
    import numpy as np

    rowids: list[int] = []
    blocks = []
    extra: list[float] = []
    for batch in batches:
        rowids.extend(batch[0])
        blocks.append(batch[1])
        if len(batch) > 2:
            extra.extend(batch[2])
    if not blocks:
        return [], np.zeros((0, 0), dtype=np.float32), np.zeros(0)
    return rowids, np.vstack(blocks), np.asarray(extra, dtype=np.float64)


def _k(n: int) -> int:
    return max(1, min(MAX_COMMUNITIES, round((n / 2) ** 0.5)))


def spherical_kmeans(matrix: "np.ndarray", k: int, *, seed: int = 0) -> "np.ndarray":
    """Deterministic spherical k-means on a sample: (k, dim) unit centroids.

    >>> import numpy as np
    >>> x = np.array([[1, 0], [0.99, 0.1], [0, 1], [0.1, 0.99]], dtype=np.float32)
    >>> c = spherical_kmeans(x / np.linalg.norm(x, axis=1, keepdims=True), 2)
    >>> sorted(np.argmax(x @ c.T, axis=1).tolist()) == [0, 0, 1, 1] or sorted(np.argmax(x @ c.T, axis=1).tolist()) == [0, 0, 1, 1]
    True
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(matrix)
    sample = matrix if n <= KMEANS_SAMPLE else matrix[np.sort(rng.choice(n, KMEANS_SAMPLE, replace=False))]
    k = min(k, len(sample))
    centroids = sample[np.sort(rng.choice(len(sample), k, replace=False))].astype(np.float32)
    for _ in range(KMEANS_ITERATIONS):
        labels, _ = _assign(sample, centroids)
        centroids = _means(sample, labels, centroids)
    return centroids


def _assign(matrix: "np.ndarray", centroids: "np.ndarray", block: int = 4096) -> tuple["np.ndarray", "np.ndarray"]:
    import numpy as np

    labels = np.zeros(len(matrix), dtype=np.int64)
    best = np.zeros(len(matrix), dtype=np.float32)
    for start in range(0, len(matrix), block):
        sims = matrix[start : start + block] @ centroids.T
        labels[start : start + block] = np.argmax(sims, axis=1)
        best[start : start + block] = sims[np.arange(len(sims)), labels[start : start + block]]
    return labels, best


def _means(matrix: "np.ndarray", labels: "np.ndarray", previous: "np.ndarray") -> "np.ndarray":
    import numpy as np

    sums = np.zeros_like(previous, dtype=np.float64)
    np.add.at(sums, labels, matrix)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    empty = norms[:, 0] == 0
    out = np.where(empty[:, None], previous, sums / np.where(norms == 0, 1.0, norms))
    return out.astype(np.float32)


# -------------------------------------------------------------------------------- compress
def _compress(ctx: "Context", state: _Run, stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
    import numpy as np

    from mem.lifecycle.policy import PROTECTED_TAGS
    from mem.store import graph as graph_sql
    from mem.store import lifecycle as sql

    options = state.options
    stats.update(clusters=0, merged=0, llm=0, llm_fallback=0)
    for scope in _scopes(ctx, options):
        rowids, matrix, _ = _load(sql.compress_candidates(ctx.store, scope, protected_tags=sorted(PROTECTED_TAGS)))
        if len(rowids) < MIN_CLUSTER:
            continue
        known = state.labels.get(scope)
        if known is not None:
            position = {r: i for i, r in enumerate(known[0])}
            labels = np.array([known[1][position[r]] if r in position else -1 for r in rowids])
        else:
            _, centroids = graph_sql.centroids(ctx.store, scope)
            labels = _assign(matrix, centroids)[0] if centroids is not None and len(centroids) else np.zeros(len(rowids), int)
        merged = False
        for group in _groups(labels):
            for cluster in near_clusters(matrix[group], options.near):
                if not _room(options, stats):
                    break
                members = [rowids[group[i]] for i in cluster]
                try:
                    record = _merge(ctx, state, stats, members)
                except MemError:  # the store or the configuration, not this memory: stop
                    raise
                except Exception as exc:  # noqa: BLE001 - the cluster stays as it is; the next one is tried
                    stats["failed"] = stats.get("failed", 0) + 1
                    record = _failure("compress", exc, options,
                                      derived_from=[m.id for m in ctx.store.by_rowids(members).values()])
                if record is not None:
                    merged = merged or not options.dry_run
                    yield record
        if merged and "reorganize" in options.phases:
            # the merges changed the scope's memories: refresh its communities and surprise now,
            # so that the next run finds nothing to do
            _reorganize_scope(ctx, state, state.stats.setdefault("reorganize", {"actions": 0}), scope)


def _groups(labels: "np.ndarray") -> list[list[int]]:
    """Row indexes per community (rowid order kept), big ones cut into MAX_GROUP slices."""
    import numpy as np

    out: list[list[int]] = []
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label).tolist()
        out.extend(members[i : i + MAX_GROUP] for i in range(0, len(members), MAX_GROUP))
    return out


def near_clusters(matrix: "np.ndarray", near: float = NEAR) -> list[list[int]]:
    """Leader clustering with complete linkage: in order, a memory and the unclaimed memories with
    cosine >= ``near`` to it AND to every member already taken (most similar first) form a cluster
    when they are at least MIN_CLUSTER (at most MAX_CLUSTER). Requiring every pair to be close keeps
    a chain of loosely related memories (A~B, B~C, A!~C) from being merged into one.

    >>> import numpy as np
    >>> m = np.array([[1, 0], [0.99, 0.14], [0.98, 0.2], [0, 1]], dtype=np.float32)
    >>> near_clusters(m / np.linalg.norm(m, axis=1, keepdims=True))
    [[0, 1, 2]]
    """
    import numpy as np

    if len(matrix) < MIN_CLUSTER:
        return []
    sims = matrix @ matrix.T
    claimed = np.zeros(len(matrix), dtype=bool)
    out: list[list[int]] = []
    for i in range(len(matrix)):
        if claimed[i]:
            continue
        close = np.flatnonzero((sims[i] >= near) & ~claimed)
        close = close[close != i]
        if len(close) + 1 < MIN_CLUSTER:
            continue
        taken = [i]
        for j in close[np.argsort(-sims[i, close], kind="stable")].tolist():
            if len(taken) >= MAX_CLUSTER:
                break
            if all(sims[j, t] >= near for t in taken):
                taken.append(j)
        if len(taken) < MIN_CLUSTER:
            continue
        members = sorted(taken)
        claimed[members] = True
        out.append(members)
    return out


def _merge(ctx: "Context", state: _Run, stats: dict[str, Any], rowids: list[int]) -> dict[str, Any] | None:
    from mem.lifecycle.merge import merge_extractive
    from mem.stages import add
    from mem.store import lifecycle as sql

    options = state.options
    found = ctx.store.by_rowids(rowids)
    originals = _agreeing(sorted((found[r] for r in rowids if r in found), key=lambda m: (m.created_at, m.id)))
    if len(originals) < MIN_CLUSTER:
        return None
    texts = [m.text for m in originals]
    method, note = "extractive", None
    text = merge_extractive(texts)
    if options.llm:
        merged, note = _llm_merge(ctx, texts, options.llm)
        if merged is not None:
            text, method = merged, "llm"
            stats["llm"] += 1
        else:
            stats["llm_fallback"] += 1
    stats["clusters"] += 1
    ids = [m.id for m in originals]
    record: dict[str, Any] = {"record": "action", "phase": "compress", "action": "merge", "id": None,
                              "derived_from": ids, "method": method, "text": text, "dry_run": options.dry_run}
    if note:
        record["note"] = note
    if options.dry_run:
        return record
    kinds = Counter(m.kind for m in originals)
    sources = {m.source for m in originals}
    raw: dict[str, Any] = {
        "text": text, "kind": kinds.most_common(1)[0][0], "scope": originals[0].scope,
        "tags": list(dict.fromkeys(t for m in originals for t in m.tags)),
        "layer": min(m.layer for m in originals), "confidence": max(m.confidence for m in originals),
        "created_at": max(m.created_at for m in originals),
        "meta": {"consolidated": {"from": ids, "method": method, "at": state.at}},
    }
    if len(sources) == 1 and None not in sources:
        raw["source"] = sources.pop()
    outcome = next(iter(add.run(ctx, [(None, raw)], add.AddOptions(keep_near=True))))
    if outcome.id is None:
        record.update(action="skip", reason=outcome.reason or outcome.status)
        return record
    uses = sum(m.access_count for m in originals)
    last_used = max((m.last_accessed_at for m in originals if m.last_accessed_at), default=None)
    with ctx.store.write():
        for memory in originals:
            sql.add_edge(ctx.store, outcome.id, memory.id, layer="lifecycle", type="derived_from", at=state.at,
                         origin="consolidate")
            if ctx.store.get(memory.id).status != "archived":
                ctx.store.update_memory(memory.id, {"status": "archived", "updated_at": state.at}, at=state.at,
                                        op="consolidate")
        if outcome.status == "added":
            sql.set_usage(ctx.store, outcome.id, uses, last_used)
    stats["merged"] += len(originals)
    record.update(id=outcome.id, status=outcome.status)
    return record


def _agreeing(originals: "list[Memory]") -> "list[Memory]":
    """The members of a cluster a merge may fold into one: the largest group (the earliest first of equals), in
    age order, whose stated values (numbers, versions, names in capitals, code: ``supersede.stated_values``)
    each include or are included in every other's, and that are no rows of one table (two deployment
    environments, two cases: ``supersede.rows_apart``). Two near duplicates each stating a value the other does
    not ("The kestrel-big pool is 20 machines." / "... 16 machines.") are an update or two rows: merged, one
    memory would claim both at once and which is current would be lost. Intake keeps them apart for the same
    reason (``supersede.changes``); one adding a fact to the other ("... Owner: Dana.") merges."""
    from mem.stages.supersede import rows_apart, stated_values

    values = [stated_values(m.text) for m in originals]
    fits = [[(a <= b or b <= a) and not rows_apart(m.text, n.text) for b, n in zip(values, originals)]
            for a, m in zip(values, originals)]  # each pair once: a cluster holds at most MAX_CLUSTER
    best: list[int] = []
    for seed in range(len(originals)):
        group = [seed]
        for i in range(len(originals)):
            if i != seed and all(fits[i][j] for j in group):
                group.append(i)
        if len(group) > len(best):
            best = group
    return [originals[i] for i in sorted(best)]


def _llm_merge(ctx: "Context", texts: list[str], llm: str) -> tuple[str | None, str | None]:
    """An Ollama merge, accepted only when every name and number of the originals survived."""
    from mem.lifecycle.merge import missing_facts

    backend, _, model = llm.partition(":")
    if backend != "ollama":
        raise BadInput(f"unknown --llm {llm!r}: use ollama or ollama:MODEL")
    model = model or ctx.settings.llm
    prompt = ("Merge these notes into ONE short note. Keep every fact, name, number, date and identifier "
              "exactly as written; add nothing.\n\n" + "\n".join(f"- {t}" for t in texts) + "\n\nMerged note:")
    try:
        import ollama

        client = ollama.Client(host=ctx.settings.ollama_host, timeout=60)
        response = client.generate(model=model, prompt=prompt, options={"temperature": 0, "seed": 0})
        merged = str(response["response"]).strip()
    except Exception as exc:  # Ollama down or model missing: the extractive merge is always there
        return None, f"llm unavailable ({type(exc).__name__}); extractive merge used"
    lost = missing_facts(texts, merged)
    if not merged or lost:
        return None, f"llm merge lost {', '.join(lost[:5]) or 'everything'}; extractive merge used"
    return merged, None


# ----------------------------------------------------------------------------------- prune
def _prune(ctx: "Context", state: _Run, stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
    from mem.stages.lifecycle import prune

    counts: dict[str, int] = {}
    options = state.options
    touched: set[str] = set()
    for record in prune(ctx, scope=options.scope, dry_run=options.dry_run, limit=options.limit, counts=counts):
        if record["action"] == "archived" or record["from"] == "archived":
            touched.add(ctx.store.get(record["id"]).scope)
        yield record
    stats.update(counts)
    if touched and not options.dry_run and "reorganize" in options.phases:
        # archiving changed which memories are live: refresh communities and surprise now, so the
        # next run starts from a settled state and finds nothing to do
        for scope in sorted(touched):
            _reorganize_scope(ctx, state, state.stats.setdefault("reorganize", {"actions": 0}), scope)

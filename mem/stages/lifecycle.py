"""Lifecycle stage: score memories (importance, activation), move them in the ball, change their status.

``prune`` is the lifecycle step shared by ``mem consolidate --phase prune`` and ``mem archive``
(by policy); ``explain`` is what ``mem get --explain`` shows. Both read the policy from the
config file (``[lifecycle]``, see ``mem.lifecycle.policy``) and the clock from ``ctx.now()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from mem.lifecycle import archivable, transition
from mem.lifecycle.policy import Policy, is_protected, load_policy
from mem.score.importance import Activation, Importance, activation, importance

if TYPE_CHECKING:
    import numpy as np

    from mem.records import Memory
    from mem.stages.context import Context
    from mem.store.lifecycle import LifeRow

CONTEXT_DAYS = 14  # the "current context" for relevance: memories created or used in the last two weeks
BATCH = 500


def policy_of(ctx: "Context") -> Policy:
    return load_policy(ctx.settings.config)


def _days(later: datetime, earlier_iso: str | None) -> float:
    from mem.enrich.timestamps import parse_datetime

    if not earlier_iso:
        return 0.0
    try:
        return max(0.0, (later - parse_datetime(earlier_iso)).total_seconds() / 86400.0)
    except ValueError:
        return 0.0


def last_use(memory: "Memory") -> str:
    return max(memory.created_at, memory.last_accessed_at or "")


class Relevance:
    """Cosine of a memory's vector to its scope's current context (the mean of recent vectors).

    A scope with no recent activity has no context: every memory gets a neutral 0.5.
    """

    def __init__(self, ctx: "Context", now: datetime) -> None:
        self.ctx = ctx
        from mem.enrich.timestamps import format_datetime

        self.since = format_datetime(now - timedelta(days=CONTEXT_DAYS))
        self._centroids: dict[str, Any] = {}

    def centroid(self, scope: str) -> "np.ndarray | None":
        import numpy as np

        from mem.store import lifecycle as sql

        if scope not in self._centroids:
            recent = sql.recent_vectors(self.ctx.store, scope, self.since)
            centroid = None
            if len(recent):
                mean = recent.mean(axis=0)
                norm = float(np.linalg.norm(mean))
                centroid = mean / norm if norm > 0 else None
            self._centroids[scope] = centroid
        return self._centroids[scope]

    def of(self, rowids: Sequence[int], scope: str) -> dict[int, float]:
        """Relevance in [0, 1] for each memory (all of ``scope``) that has a vector."""
        import numpy as np

        centroid = self.centroid(scope)
        if centroid is None:
            return {}
        found, matrix = self.ctx.store.vectors_for(list(rowids))
        if not found or matrix.shape[1] != centroid.shape[0]:
            return {}
        sims = np.clip(matrix @ centroid, 0.0, 1.0)
        return {rowid: float(s) for rowid, s in zip(found, sims)}


@dataclass
class Assessment:
    importance: Importance
    activation: Activation
    radius: float
    status: str
    days_unused: float
    stepped: bool


def assess(row: "LifeRow", *, policy: Policy, now: datetime, at: str, relevance: float | None,
           fans: Sequence[int]) -> Assessment:
    """Score one memory and move it to ``now`` (pure: nothing written)."""
    from mem.lifecycle import decay, langevin

    memory = row.memory
    layer = policy.layer(memory.layer)
    days_unused = _days(now, last_use(memory))
    imp = importance(0.5 if relevance is None else relevance, memory.access_count, days_unused, layer.decay,
                     memory.surprise)
    act = activation(memory.access_count, _days(now, memory.created_at), layer.actr_decay, fans, layer.floor)
    radius0 = row.radius if row.radius is not None else policy.start_radius
    since = row.stepped_at or memory.created_at
    days = _days(now, since)
    uses = max(0, memory.access_count - row.uses_seen)
    stepped = row.radius is None or uses > 0 or days >= policy.min_step_days
    if not stepped:
        radius = radius0
    elif policy.mover == "decay":
        radius = decay.position(days_unused=days_unused, pinned=memory.pinned, layer=layer, policy=policy)
    else:
        radius = langevin.step(memory.id, radius0, uses=uses, days=days, importance=imp.value, pinned=memory.pinned,
                               layer=layer, policy=policy, at=at)
    status = transition(memory.status, radius, layer=layer, pinned=memory.pinned, days_unused=days_unused,
                        importance=imp.value, policy=policy, protected=is_protected(memory.tags, memory.kind))
    return Assessment(imp, act, radius, status, days_unused, stepped)


def prune(ctx: "Context", *, scope: str | None = None, dry_run: bool = False, limit: int | None = None,
          policy: Policy | None = None, counts: dict[str, int] | None = None) -> Iterator[dict[str, Any]]:
    """Step every active and cold memory to now; yield one action per status change.

    Writes go in short transactions of ``BATCH`` memories, so a concurrent ``mem add`` waits
    at most one batch. Running it twice at the same instant changes nothing the second time.
    """
    from mem.store import lifecycle as sql

    policy = policy or policy_of(ctx)
    now = ctx.now()
    at = ctx.now_iso()
    relevance = Relevance(ctx, now)
    counts = counts if counts is not None else {}
    changed = 0
    last = 0
    while True:
        rows = sql.life_rows(ctx.store, scope=scope, after_rowid=last, limit=BATCH)
        if not rows:
            break
        last = rows[-1].rowid
        scores: dict[int, float] = {}
        for scope_name in sorted({r.memory.scope for r in rows}):
            ids = [r.rowid for r in rows if r.memory.scope == scope_name]
            scores.update(relevance.of(ids, scope_name))
        fans = sql.entity_fans(ctx.store, [r.rowid for r in rows])
        steps: list[tuple[int, float, str, int, float]] = []
        moves: list[tuple["LifeRow", Assessment]] = []
        for row in rows:
            result = assess(row, policy=policy, now=now, at=at, relevance=scores.get(row.rowid),
                            fans=fans.get(row.rowid, []))
            if result.stepped:
                steps.append((row.rowid, result.radius, at, row.memory.access_count, result.importance.value))
            if result.status != row.memory.status:
                if limit is not None and changed >= limit:
                    continue
                changed += 1
                moves.append((row, result))
        counts["stepped"] = counts.get("stepped", 0) + len(steps)
        counts["seen"] = counts.get("seen", 0) + len(rows)
        if not dry_run and (steps or moves):
            with ctx.store.write():
                sql.save_steps(ctx.store, steps)
                for row, result in moves:
                    ctx.store.update_memory(row.memory.id, {"status": result.status, "updated_at": at}, at=at,
                                            op=f"lifecycle:{result.status}")
        for row, result in moves:
            counts[result.status] = counts.get(result.status, 0) + 1
            yield {"record": "action", "phase": "prune", "action": result.status, "id": row.memory.id,
                   "from": row.memory.status, "layer": row.memory.layer, "radius": round(result.radius, 6),
                   "importance": round(result.importance.value, 4), "days_unused": round(result.days_unused, 2),
                   "dry_run": dry_run}


def _superseded(ctx: "Context", memory: "Memory") -> dict[str, Any]:
    """For a superseded memory, ``{"superseded": {"by", "at", "reason"}}``: what replaced it, when and why
    (the reason intake, a person or the store it came from gave, from the changelog; None for a
    supersession stored before reasons were kept, or brought by an import that gave none)."""
    from mem.store import lifecycle as sql

    if not memory.superseded_by:
        return {}
    logged = sql.supersessions(ctx.store, [memory]).get(memory.id, {"at": None, "reason": None})
    return {"superseded": {"by": memory.superseded_by, **logged}}


def _suspensions(ctx: "Context", memory: "Memory") -> dict[str, Any]:
    """What holds for a while around ``memory`` (``mem.score.validity``): for a memory that names its end,
    ``{"validity": {"until", "expired", "suspends"}}``; for one an exception suspends, ``{"suspended": [{"by",
    "until", "in_force"}]}``."""
    from mem.score.validity import expired
    from mem.stages.supersede import suspended_by
    from mem.store import lifecycle as sql

    now, out = ctx.now(), {}
    if memory.valid_until is not None:
        out["validity"] = {"until": memory.valid_until, "expired": expired(memory.valid_until, now),
                           "suspends": suspended_by(ctx, memory)}
    exceptions = sql.suspensions(ctx.store, [ctx.store.rowid_of(memory.id)])
    if exceptions:
        by_rowid = ctx.store.by_rowids([x for found in exceptions.values() for x, _ in found])
        out["suspended"] = [{"by": by_rowid[x].id, "until": end, "in_force": not expired(end, now)}
                            for found in exceptions.values() for x, end in sorted(found) if x in by_rowid]
    return out


def explained(ctx: "Context", memories: "Iterable[Memory]") -> list[dict[str, Any]]:
    """Each memory's record with its ``explain`` (what ``mem get --explain`` and MCP ``get`` return)."""
    return [{**m.to_record(), "explain": explain(ctx, m)} for m in memories]


def explain(ctx: "Context", memory: "Memory") -> dict[str, Any]:
    """Why a memory scores and moves as it does now: importance and activation parts, radius, policy."""
    from mem.store import lifecycle as sql
    from mem.store.lifecycle import LifeRow

    policy = policy_of(ctx)
    now = ctx.now()
    rowid = ctx.store.rowid_of(memory.id)
    radius, stepped_at, uses_seen = sql.lifecycle_state(ctx.store, memory.id)
    row = LifeRow(rowid, memory, radius, stepped_at, uses_seen)
    relevance = Relevance(ctx, now).of([rowid], memory.scope).get(rowid)
    result = assess(row, policy=policy, now=now, at=ctx.now_iso(), relevance=relevance,
                    fans=sql.entity_fans(ctx.store, [rowid]).get(rowid, []))
    layer = policy.layer(memory.layer)
    return {
        **_superseded(ctx, memory),
        **_suspensions(ctx, memory),
        "importance": result.importance.to_record(),
        "activation": result.activation.to_record(),
        "lifecycle": {
            "mover": policy.mover, "radius": None if radius is None else round(radius, 6), "stepped_at": stepped_at,
            "radius_now": round(result.radius, 6), "status_now": result.status,
            "days_unused": round(result.days_unused, 2), "cold_radius": round(policy.cold_radius, 6),
            "archive_radius": round(policy.archive_radius, 6),
            "policy": {"layer": layer.layer, "name": layer.name, "decay": layer.decay, "floor": layer.floor,
                       "archivable": archivable(layer, pinned=memory.pinned, protected=is_protected(memory.tags, memory.kind)),
                       "protected": is_protected(memory.tags, memory.kind),
                       "archive_after_days": layer.archive_after_days, "archive_below": layer.archive_below},
            "pinned": memory.pinned,
        },
    }

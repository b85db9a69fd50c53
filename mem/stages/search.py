"""Hybrid retrieval in three steps: candidates from each channel, weighted RRF fusion, bounded priors.

Channels are plain functions ``(ctx, plan) -> Ranking`` in ``CHANNELS``; each hit's ``why`` shows
every channel's rank and score and every prior, so a result can always be explained.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput
from mem.records import Hit, Memory
from mem.score.fusion import LAYER_PRIOR, STATUS_PRIOR, actr_activation, apply_prior, prior, rrf, squash
from mem.text import fts_query

if TYPE_CHECKING:
    import numpy as np

    from mem.stages.context import Context

CANDIDATES = 200  # per channel
RESCORE = 100  # coarse int8 neighbours rescored in float32
MAX_K = 1000


@dataclass
class Query:
    """One search request; every field but ``text`` is a filter or a knob with a default."""

    text: str
    k: int = 10
    scope: str | None = None  # None: the settings' scope; "*": every scope
    kinds: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    since: str | None = None
    until: str | None = None
    include_superseded: bool = False
    include_archived: bool = False
    channels: list[str] | None = None  # None: every channel; else only these (for benchmarks/ablation)
    bump: bool = True


@dataclass
class Plan:
    """What the channels share for one query: the text, its vector (computed once), the scope."""

    query: Query
    scope: str | None
    now: datetime
    candidates: int
    _vector: Any = None
    _ctx: Any = None

    @property
    def vector(self) -> "np.ndarray":
        if self._vector is None:
            self._vector = self._ctx.embedder.embed([self.query.text])[0]
        return self._vector


@dataclass
class Ranking:
    ranked: list[int]
    scores: dict[int, float]


def semantic(ctx: "Context", plan: Plan) -> Ranking:
    """int8 KNN over the vec0 index, rescored with the float32 vectors."""
    import numpy as np

    coarse = ctx.store.knn(plan.vector, max(RESCORE, plan.candidates), plan.scope)
    rowids, matrix = ctx.store.vectors_for(coarse)
    if not rowids:
        return Ranking([], {})
    sims = matrix @ np.asarray(plan.vector, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")[: plan.candidates]
    ranked = [rowids[i] for i in order]
    return Ranking(ranked, {rowids[i]: float(sims[i]) for i in order})


def bm25(ctx: "Context", plan: Plan) -> Ranking:
    """FTS5 BM25 over text and tags; the query is tokenized and every term quoted, so nothing raises."""
    match = fts_query(plan.query.text)
    if match is None:
        return Ranking([], {})
    hits = ctx.store.bm25(match, plan.candidates, plan.scope)
    return Ranking([r for r, _ in hits], dict(hits))


Channel = Callable[["Context", Plan], Ranking]
CHANNELS: dict[str, Channel] = {"semantic": semantic, "bm25": bm25}
WEIGHTS: dict[str, float] = {"semantic": 1.0, "bm25": 1.0}


def _age_days(memory: Memory, now: datetime) -> float:
    from mem.enrich.dates import parse_datetime

    try:
        return max(0.0, (now - parse_datetime(memory.created_at)).total_seconds() / 86400.0)
    except ValueError:
        return 0.0


def priors_of(memory: Memory, now: datetime) -> dict[str, float]:
    """Each prior component of a memory, in [0, 1]."""
    return {
        "activation": round(squash(actr_activation(memory.access_count, _age_days(memory, now))), 4),
        "confidence": memory.confidence,
        "layer": LAYER_PRIOR.get(memory.layer, 0.5),
        "pinned": 1.0 if memory.pinned else 0.0,
        "status": STATUS_PRIOR.get(memory.status, 0.5),
    }


def run(ctx: "Context", query: Query) -> list[Hit]:
    """The top ``query.k`` hits, best first; the same query on the same data gives the same order."""
    if not isinstance(query.k, int) or query.k < 1:
        raise BadInput(f"k must be a positive integer, got {query.k!r}")
    k = min(query.k, MAX_K)
    if not query.text or not query.text.strip():
        raise BadInput("empty query")
    plan = Plan(query=query, scope=ctx.scope_filter(query.scope), now=ctx.now(),
                candidates=max(CANDIDATES, 2 * k), _ctx=ctx)
    names = query.channels if query.channels is not None else list(CHANNELS)
    unknown = [n for n in names if n not in CHANNELS]
    if unknown:
        raise BadInput(f"unknown channel(s) {', '.join(unknown)}; known: {', '.join(CHANNELS)}")
    rankings = {name: CHANNELS[name](ctx, plan) for name in names}
    fused = rrf({n: r.ranked for n, r in rankings.items()}, WEIGHTS)
    statuses = None if query.include_archived else ("active", "cold")
    allowed = dict(ctx.store.select(
        scope=plan.scope, kinds=query.kinds, tags=query.tags, statuses=statuses,
        include_superseded=query.include_superseded, since=query.since, until=query.until,
        rowids=list(fused), order="m.rowid",
    ))
    scored: list[tuple[float, int, dict[str, float]]] = []
    for rowid, relevance in fused.items():
        memory = allowed.get(rowid)
        if memory is None:
            continue
        components = priors_of(memory, plan.now)
        scored.append((apply_prior(relevance, prior(components)), rowid, components))
    scored.sort(key=lambda item: (-item[0], item[1]))
    top = scored[:k]
    hits = [Hit(memory=allowed[rowid], rank=i + 1, score=score, why=_why(rowid, rankings, fused, components))
            for i, (score, rowid, components) in enumerate(top)]
    if query.bump and top:
        from mem.enrich.dates import format_datetime

        ctx.store.bump_access([rowid for _, rowid, _ in top], format_datetime(plan.now))
    return hits


def _why(rowid: int, rankings: dict[str, Ranking], fused: dict[int, float], components: dict[str, float]) -> dict[str, Any]:
    why: dict[str, Any] = {}
    for name, ranking in rankings.items():
        if rowid in ranking.scores:
            why[name] = {"rank": ranking.ranked.index(rowid) + 1, "score": round(ranking.scores[rowid], 6)}
    why["fused"] = round(fused[rowid], 6)
    why["priors"] = {**components, "combined": round(prior(components), 4)}
    return why


def run_many(ctx: "Context", queries: Iterable[tuple[int, Query]]) -> Iterator[Hit]:
    """Answer many queries with one loaded model; each hit carries its query's line number."""
    for line, query in queries:
        for hit in run(ctx, query):
            hit.query_line = line
            yield hit

"""Hybrid retrieval in three steps: candidates from each channel, weighted fusion, bounded priors.

Fusion is a convex blend of min-max normalized channel scores by default (``rrf`` on request).

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
from mem.store import PriorRow
from mem.store.lifecycle import contradiction_pairs
from mem.score.classify_query import classify, weights_for
from mem.score.contradiction import newer_first
from mem.score.fusion import (LAYER_PRIOR, STATUS_PRIOR, actr_activation, apply_prior, blend, peak_factor, prior, rrf,
                               squash)
from mem.stages import channels as graph_channels
from mem.text import MAX_QUERY_TERMS, content_terms, fts_any

if TYPE_CHECKING:
    import numpy as np

    from mem.stages.context import Context

CANDIDATES = 200  # per channel
MAX_K = 1000
FUSION = "blend"  # LoCoMo dev R@10: rrf .618, blend .699 (same channels and weights)
SCENE_SLACK = 10  # rank a few past k so scene expansion can weigh pulled neighbours against them
RANK_BATCH = 64  # candidates whose prior rows are read at a time (the first batch usually suffices)


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
    fusion: str | None = None  # "rrf" | "blend"; None: FUSION


@dataclass
class Plan:
    """What the channels share for one query: the text, its vector (computed once), the scope."""

    query: Query
    scope: str | None
    now: datetime
    candidates: int
    _vector: Any = None
    _ctx: Any = None
    memo: dict[str, Any] = field(default_factory=dict)  # work channels share (query entities, windows, rankings)

    @property
    def vector(self) -> "np.ndarray":
        if self._vector is None:
            self._vector = self._ctx.embedder.embed([self.query.text])[0]
        return self._vector


@dataclass
class Ranking:
    ranked: list[int]
    scores: dict[int, float]
    notes: dict[int, dict[str, Any]] = field(default_factory=dict)  # per-hit detail shown in ``why``

    def position(self, rowid: int) -> int:
        """1-based rank of ``rowid`` in this channel."""
        if not hasattr(self, "_positions"):
            self._positions = {r: i + 1 for i, r in enumerate(self.ranked)}
        return self._positions[rowid]


def semantic(ctx: "Context", plan: Plan) -> Ranking:
    """Cosine over the float32 vectors (coarse int8 index when cold, in-RAM matrix when warm)."""
    found = ctx.vectors.nearest(plan.vector, plan.candidates, plan.scope)
    return Ranking([r for r, _ in found], dict(found))


def bm25(ctx: "Context", plan: Plan) -> Ranking:
    """FTS5 BM25 over text and tags; the query is tokenized and every term quoted, so nothing raises.

    Terms in half the memories or more weigh nothing in BM25 (idf clamped to 1e-6) but cost a score
    per row, so they are left out while a rarer term remains; rows matching only them fill any room
    left at score 0 (their true score is ~1e-6), so the list and its min-max range stay the same.
    """
    terms = content_terms(plan.query.text)[:MAX_QUERY_TERMS]
    if not terms:
        return Ranking([], {})
    warm = ctx.store.bm25_warm(terms, plan.candidates, plan.scope)  # a process that searches often
    if warm is not None:
        return Ranking([r for r, _ in warm], dict(warm))
    common = ctx.store.common_terms(terms) if len(terms) > 1 else set()
    kept = [t for t in terms if t not in common] or terms
    hits = ctx.store.bm25(fts_any(kept), plan.candidates, plan.scope)
    if len(kept) < len(terms) and len(hits) < plan.candidates:
        seen = {r for r, _ in hits}
        hits += [(r, 0.0) for r in ctx.store.fts_rowids(fts_any([t for t in terms if t in common]),
                                                        plan.candidates - len(hits), plan.scope, seen)]
    return Ranking([r for r, _ in hits], dict(hits))



Channel = Callable[["Context", Plan], Ranking]
CHANNELS: dict[str, Channel] = {"semantic": semantic, "bm25": bm25, "entity": graph_channels.entity,
                                 "temporal": graph_channels.temporal, "community": graph_channels.community}
# Defaults; the query classifier (mem.score.classify_query) picks the weights per query type.
WEIGHTS: dict[str, float] = {"semantic": 1.0, "bm25": 1.0, "entity": 0.5, "temporal": 0.3, "community": 0.2}
# Channels whose membership is itself the evidence: every member keeps this much credit in the blend.
MEMBERSHIP_FLOORS: dict[str, float] = {"temporal": 0.5, "entity": 0.5, "community": 0.5}
OUTSIDE_WINDOW = 0.3  # share of relevance kept by a memory outside the time the query names
# Semantic weight times (cosine of the best hit - cosine of the 5th) / 0.1, clamped to [0.5, 2]: a
# peaked dense ranking has found the topic (paraphrases), a flat one leaves it to BM25. LoCoMo dev
# R@10 .732 -> .734, R@5 .645 -> .648; coding-memory R@5 .884 -> .916 (ref 0.08: .729 / .926;
# 0.15: .732 / .895; floor 1.0 instead of 0.5: .728 / .916).
SEMANTIC_PEAK = {"ref": 0.1, "low": 0.5, "high": 2.0, "nth": 5}
# A "<Name>: ..." turn by someone other than the speaker the query names keeps 1 - this of its
# relevance (scene neighbours too). LoCoMo dev, with scene: R@10 .726 -> .732, multi-hop .410 -> .455,
# R@5 .628 -> .645; penalty 0.1 / 0.35: R@10 .722 / .727 (before scene neighbours were discounted
# too, the step cost R@10: .717). Coding memory (no speakers): unchanged.
SPEAKER_PENALTY = 0.2
# Per query type, over SPEAKER_PENALTY. Open-domain questions ("would X enjoy ...?") ask about one
# person's dispositions, which only that person's own turns show: LoCoMo dev (with SELF_PENALTY)
# open-domain R@10 .432 -> .455 at 0.5 (0.35: .443; 0.7 / 1.0, with an earlier variant of the
# first-person step: no better than 0.5 and cost single-hop), overall .745 -> .747; coding memory
# (no speakers): unchanged.
SPEAKER_PENALTIES: dict[str, float] = {"open-domain": 0.5}
# When the query names a speaker, a "<Name>: ..." turn with no first-person word ("Wow, that's so
# cool!", "What did you paint?") keeps 1 - this of its relevance: people say what they did, like
# and plan in the first person, and 98 % of the gold turns of LoCoMo's open-domain questions that
# reach the top 30 do (63 % of the other top-30 turns). LoCoMo dev R@10 .737 -> .745, open-domain
# .375 -> .432, temporal .881 -> .897, multi-hop .461 -> .471, single-hop .816 -> .815, R@1 .377
# -> .391 (0.2 / 0.3 / 0.4, with the open-domain speaker penalty: R@10 .742 / .745 / .742,
# open-domain .455 each, single-hop .807 / .810 / .800). Coding memory (no speakers): unchanged.
SELF_PENALTY = 0.25
SPEAKER_CANDIDATES = 50  # best fused candidates read for a speaker prefix (100: the same figures)
# Post-fusion steps, named like channels so ``--channel`` ablations can leave them out.
POST_STEPS = ("speaker", "scene")


def _age_days(created_at: str, now: datetime) -> float:
    try:  # stored times are ISO-8601 with "Z", which fromisoformat reads fast
        return max(0.0, (now - datetime.fromisoformat(created_at)).total_seconds() / 86400.0)
    except ValueError:
        return 0.0


def priors_of(memory: Memory | PriorRow, now: datetime) -> dict[str, float]:
    """Each prior component of a memory (or of its PriorRow), in [0, 1]."""
    return {
        "activation": round(squash(actr_activation(memory.access_count, _age_days(memory.created_at, now))), 4),
        "confidence": memory.confidence,
        "layer": LAYER_PRIOR.get(memory.layer, 0.5),
        "pinned": 1.0 if memory.pinned else 0.0,
        "status": STATUS_PRIOR.get(memory.status, 0.5),
    }


def _rank(ctx: "Context", fused: dict[int, float], filters: dict[str, Any], now: datetime,
          k: int) -> tuple[list[tuple[float, int, dict[str, float]]], dict[int, PriorRow]]:
    """Apply the priors and sort, best first (ties by rowid); also returns the prior rows read.

    Exact, but lazy: a prior can only take relevance down, so once a candidate's bare relevance
    is below the k-th final score nothing after it can enter the top k, and its priors are never
    computed. The rows the priors need (and the filters) are read in growing batches in fused
    order, so that stop also spares reading most candidates (at 100k memories, 1.9 ms a query).
    """
    import heapq

    order = sorted(fused, key=lambda r: (-fused[r], r))
    allowed: dict[int, PriorRow] = {}

    def passing() -> Iterator[tuple[int, PriorRow]]:
        """The candidates that pass the filters, in fused order, their rows read a growing batch at a time."""
        start, size = 0, max(RANK_BATCH, 4 * k)
        while start < len(order):
            batch = order[start : start + size]
            start, size = start + len(batch), 2 * size
            rows = ctx.store.prior_rows(batch, **filters)
            allowed.update(rows)
            yield from ((rowid, rows[rowid]) for rowid in batch if rowid in rows)

    scored: list[tuple[float, int, dict[str, float]]] = []
    best: list[float] = []  # min-heap of the k best final scores so far
    for rowid, row in passing():
        relevance = fused[rowid]
        if len(best) >= k and relevance < best[0]:
            break
        components = priors_of(row, now)
        final = apply_prior(relevance, prior(components))
        scored.append((final, rowid, components))
        if len(best) < k:
            heapq.heappush(best, final)
        elif final > best[0]:
            heapq.heapreplace(best, final)
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored, allowed


def run(ctx: "Context", query: Query) -> list[Hit]:
    """The top ``query.k`` hits, best first; the same query on the same data gives the same order."""
    if not isinstance(query.k, int) or query.k < 1:
        raise BadInput(f"k must be a positive integer, got {query.k!r}")
    k = min(query.k, MAX_K)
    if not query.text or not query.text.strip():
        raise BadInput("empty query")
    plan = Plan(query=query, scope=ctx.scope_filter(query.scope), now=ctx.now(),
                candidates=max(CANDIDATES, 2 * k), _ctx=ctx)
    names = query.channels if query.channels is not None else [*CHANNELS, *POST_STEPS]
    unknown = [n for n in names if n not in CHANNELS and n not in POST_STEPS]
    if unknown:
        raise BadInput(f"unknown channel(s) {', '.join(unknown)}; known: {', '.join([*CHANNELS, *POST_STEPS])}")
    query_type = plan.memo["query_type"] = _classify(ctx, plan)
    rankings: dict[str, Ranking] = {}
    for name in names:
        if name in CHANNELS:
            rankings[name] = plan.memo[f"ranking:{name}"] = CHANNELS[name](ctx, plan)
    weights = weights_for(query_type, WEIGHTS)
    if "semantic" in rankings and "bm25" in rankings:
        weights["semantic"] = weights.get("semantic", 1.0) * peak_factor(rankings["semantic"].scores, **SEMANTIC_PEAK)
    if (query.fusion or FUSION) == "blend":
        fused = blend({n: r.scores for n, r in rankings.items()}, weights, MEMBERSHIP_FLOORS)
    else:
        fused = rrf({n: r.ranked for n, r in rankings.items()}, weights)
    if "temporal" in rankings and graph_channels.time_windows(plan):
        # The query names a time ("in May 2023", "last week"): that reads as a soft filter, so
        # memories outside every window keep only part of their relevance.
        inside = rankings["temporal"].scores
        fused = {r: v if r in inside else v * OUTSIDE_WINDOW for r, v in fused.items()}
    if "speaker" in names:
        fused = _speaker(ctx, plan, fused)
    statuses = None if query.include_archived else ("active", "cold")
    filters = dict(scope=plan.scope, kinds=query.kinds, tags=query.tags, statuses=statuses,
                   include_superseded=query.include_superseded, since=query.since, until=query.until)
    scored, allowed = _rank(ctx, fused, filters, plan.now, k + SCENE_SLACK)
    pulled: dict[int, tuple[float, int]] = {}
    if "scene" in names and scored:
        pulled = _scene(ctx, plan, scored, allowed, filters)
    top = scored[:k]
    memories = dict(ctx.store.select(statuses=None, rowids=[rowid for _, rowid, _ in top], order="m.rowid", scope=None))
    hits = [Hit(memory=memories[rowid], rank=i + 1, score=score,
                why=_why(rowid, rankings, fused, components, query_type, pulled, memories,
                         plan.memo.get("speaker_factors")))
            for i, (score, rowid, components) in enumerate(top)]
    hits = newer_first(hits, contradiction_pairs(ctx.store, [h.memory.id for h in hits]))  # open contradictions
    if query.bump and top:
        from mem.enrich.dates import format_datetime

        ctx.store.bump_access([rowid for _, rowid, _ in top], format_datetime(plan.now))
    return hits


def _classify(ctx: "Context", plan: Plan) -> str:
    """The query type (single-hop | multi-hop | temporal | open-domain) that picks the fusion weights."""
    from mem.enrich.dates import is_when_question

    return classify(plan.query.text, has_time=bool(graph_channels.time_windows(plan)),
                    when_question=is_when_question(plan.query.text),
                    entity_count=len(graph_channels.query_entities(ctx, plan)))


def _speaker(ctx: "Context", plan: Plan, fused: dict[int, float]) -> dict[int, float]:
    """Speaker-aware matching (``mem.score.speaker``): when the query names one of the speakers of
    the best candidates, the other speakers' turns keep ``1 - SPEAKER_PENALTY`` of their relevance
    (``SPEAKER_PENALTIES`` per query type), and turns with no first-person word ``1 - SELF_PENALTY``."""
    from mem.score.speaker import speaker_factors, wanted_speakers

    best = sorted(fused, key=lambda r: (-fused[r], r))[:SPEAKER_CANDIDATES]
    texts = {r: m.text for r, m in ctx.store.by_rowids(best).items()}
    wanted = wanted_speakers(plan.query.text, texts)
    if not wanted:
        return fused
    factors = speaker_factors(plan.query.text, texts, _speaker_penalty(plan), wanted, SELF_PENALTY)
    plan.memo["speakers"] = wanted
    plan.memo["speaker_factors"] = factors
    return {r: v * factors.get(r, 1.0) for r, v in fused.items()}


def _speaker_penalty(plan: Plan) -> float:
    return SPEAKER_PENALTIES.get(plan.memo.get("query_type", ""), SPEAKER_PENALTY)


def _speaker_factors_for(ctx: "Context", plan: Plan, rowids: list[int]) -> dict[int, float]:
    """The speaker factors of memories the speaker step did not see (scene neighbours)."""
    wanted = plan.memo.get("speakers")
    if not wanted:
        return {}
    from mem.score.speaker import speaker_factors

    known: dict[int, float] = plan.memo["speaker_factors"]
    unseen = [r for r in rowids if r not in known]
    if unseen:
        texts = {r: m.text for r, m in ctx.store.by_rowids(unseen).items()}
        known.update(speaker_factors(plan.query.text, texts, _speaker_penalty(plan), wanted, SELF_PENALTY))
        known.update({r: 1.0 for r in unseen if r not in known})
    return {r: known[r] for r in rowids if r in known}


def _scene(ctx: "Context", plan: Plan, scored: list[tuple[float, int, dict[str, float]]],
           allowed: dict[int, PriorRow], filters: dict[str, Any]) -> dict[int, tuple[float, int]]:
    """Scene expansion (post-fusion): session neighbours of the best hits join with a discounted score.

    Updates ``scored`` in place (re-sorted) and ``allowed``; returns what it pulled in and from where.
    """
    pulled = graph_channels.scene(ctx, [(score, rowid) for score, rowid, _ in scored])
    if not pulled:
        return {}
    # A neighbour spoken by someone other than the speaker the query names is discounted the same
    # way as in the fused scores, or scene expansion would undo the speaker step.
    factors = _speaker_factors_for(ctx, plan, list(pulled))
    pulled = {r: (value * factors.get(r, 1.0), parent) for r, (value, parent) in pulled.items()}
    missing = [r for r in pulled if r not in allowed]
    if missing:
        allowed.update(ctx.store.prior_rows(missing, **filters))
    position = {rowid: i for i, (_, rowid, _) in enumerate(scored)}
    kept: dict[int, tuple[float, int]] = {}
    for rowid, (value, parent) in pulled.items():
        row = allowed.get(rowid)
        if row is None:
            continue
        if rowid in position:
            i = position[rowid]
            if scored[i][0] >= value:
                continue
            scored[i] = (value, rowid, scored[i][2])
        else:
            scored.append((value, rowid, priors_of(row, plan.now)))
        kept[rowid] = (value, parent)
    scored.sort(key=lambda item: (-item[0], item[1]))
    return kept


def _why(rowid: int, rankings: dict[str, Ranking], fused: dict[int, float], components: dict[str, float],
         query_type: str | None = None, pulled: dict[int, tuple[float, int]] | None = None,
         allowed: dict[int, Memory] | None = None, speaker: dict[int, float] | None = None) -> dict[str, Any]:
    why: dict[str, Any] = {}
    for name, ranking in rankings.items():
        if rowid in ranking.scores:
            why[name] = {"rank": ranking.position(rowid), "score": round(ranking.scores[rowid], 6)}
            if rowid in ranking.notes:
                why[name].update(ranking.notes[rowid])
    if pulled and rowid in pulled:
        value, parent = pulled[rowid]
        parent_memory = (allowed or {}).get(parent)
        why["scene"] = {"from": parent_memory.id if parent_memory else None, "score": round(value, 6)}
    if speaker and speaker.get(rowid, 1.0) != 1.0:
        # spoken by someone other than the one the query names, or not in the first person
        why["speaker"] = {"factor": speaker[rowid]}
    why["fused"] = round(fused.get(rowid, 0.0), 6)
    why["priors"] = {**components, "combined": round(prior(components), 4)}
    if query_type is not None:
        why["query_type"] = query_type
    return why


def run_many(ctx: "Context", queries: Iterable[tuple[int, Query]]) -> Iterator[Hit]:
    """Answer many queries with one loaded model; each hit carries its query's line number."""
    for line, query in queries:
        for hit in run(ctx, query):
            hit.query_line = line
            yield hit

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
from mem.store.lifecycle import contradiction_pairs, replaced_by, successors
from mem.score.classify_query import classify
from mem.score.contradiction import CURRENT_WINDOW, current_pairs, inherit, newer_first, open_pairs
from mem.score.validity import expired_ids, in_force_pairs
from mem.score.fusion import (LAYER_PRIOR, STATUS_PRIOR, apply_prior, base_level, blend, peak_factor,
                               prior, rrf, seed_score, spread_of, spread_term, squash)
from mem.stages import channels as graph_channels
from mem.stages import rescore
from mem.stages.query import Plan, Query, Ranking  # noqa: F401  (Query and Ranking: the stage's public API)
from mem.text import MAX_QUERY_TERMS

if TYPE_CHECKING:
    from mem.stages.context import Context

CANDIDATES = 200  # per channel
MAX_K = 1000
FUSION = "blend"  # LoCoMo dev R@10: rrf .618, blend .699 (same channels and weights)
SCENE_SLACK = 10  # rank a few past k so scene expansion can weigh pulled neighbours against them
RANK_BATCH = 64  # candidates whose prior rows are read at a time (the first batch usually suffices)


Channel = Callable[["Context", Plan], Ranking]
CHANNELS: dict[str, Channel] = {"semantic": graph_channels.semantic, "bm25": graph_channels.bm25, "entity": graph_channels.entity,
                                 "temporal": graph_channels.temporal, "community": graph_channels.community,
                                 "ppr": graph_channels.ppr, "fisher": rescore.fisher, "maxsim": rescore.maxsim}
# One weight table for every query type. Semantic and BM25 are the backbone; BM25 at 1.25 is the
# compromise between the two benchmarks (LoCoMo dev R@10 .716/.723/.733 and coding-memory R@5
# .874/.863/.853 at 1.0/1.25/1.5); the entity channel is kept small (its spreading activation
# mostly adds noise: LoCoMo R@10 .699 at 0.5-1.0, .719 at 0.2). The per-query-type tables this
# replaced (temporal 1.5 for temporal questions, entity 0 and semantic 1.2 for open-domain ones)
# were fitted on the whole dev split and lost in the held-back folds (bench/README.md).
WEIGHTS: dict[str, float] = {"semantic": 1.0, "bm25": 1.25, "entity": 0.2, "temporal": 0.3, "community": 0.2,
                             "ppr": 0.2, "fisher": 0.5, "maxsim": 0.5}
# A time the query names ("in May 2023", "last week") is the question's own constraint, so the
# memories inside it weigh this much (the temporal channel's members), and the ones outside keep
# OUTSIDE_WINDOW of their relevance. "When ..." questions that name no time keep the table's weight.
WINDOW_WEIGHT = 1.5
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
# A memory naming only other deployment environments than the query names keeps 1 - this of its
# relevance (``mem.score.environment``). The 22 studied coding sets (eighteenth session), with intake's
# environment gate: rank-1 2,513 -> 2,516 of 2,970, above 128 -> 127 (0.15: 2,514; 0.5: 2,515).
ENV_PENALTY = 0.3
SPEAKER_CANDIDATES = 50  # best fused candidates read for a speaker prefix (100: the same figures)
# Post-fusion steps, named like channels so ``--channel`` ablations can leave them out.
POST_STEPS = ("speaker", "environment", "validity", "scene", "causal", "shape", "recency")
FUSIONS = ("blend", "rrf", "seed")  # "seed": the seed's scoring, for comparison (bench/README.md)


def _age_days(created_at: str, now: datetime) -> float:
    try:  # stored times are ISO-8601 with "Z", which fromisoformat reads fast
        return max(0.0, (now - datetime.fromisoformat(created_at)).total_seconds() / 86400.0)
    except ValueError:
        return 0.0


# The governance terms of the priors, named like channels so ``--channel`` ablations can leave them out:
# ACT-R base level with the layer floor, spreading activation from the query's entities and tags with
# the fan penalty, the stored (HaluMem) confidence, and surprise at intake.
PRIOR_TERMS = ("activation", "spread", "confidence", "surprise")
PARTS = (*CHANNELS, *POST_STEPS, *PRIOR_TERMS)  # what ``Query.channels`` names
# Parts measured but off by default (bench/README.md, LoCoMo dev folds and both coding sets): the
# held-back folds did not gain from spread (no change at all), PPR instead of or beside the entity
# channel (cv R@10 -.0038 / -.0008 on the sixth session's default) or Fisher-Rao (cv R@10 -.003, 3 of 5 folds lose). MaxSim is on:
# every fold gains (cv R@10 +.008, R@5 +.022), and it reads stored token states (mem.store.token_states).
OFF_BY_DEFAULT: frozenset[str] = frozenset({"spread", "ppr", "fisher"})


def default_parts() -> list[str]:
    """Every channel, post-fusion step and prior term a search uses unless told otherwise."""
    return [n for n in PARTS if n not in OFF_BY_DEFAULT]


def parts_for(channels: list[str] | None, where: str = "") -> list[str]:
    """The parts a search uses: the defaults (None), exactly ``channels``, or, when every name starts
    with ``+`` or ``-``, the defaults with those added or left out (``["+maxsim", "-entity"]``).

    >>> "maxsim" in parts_for(["+maxsim"]) and "entity" not in parts_for(["+maxsim", "-entity"])
    True
    """
    if channels is None:
        return default_parts()
    from mem import vocab

    if isinstance(channels, (str, bytes)) or not isinstance(channels, list):
        vocab.check_all("channel", channels, where=where)  # says "must be a list"
    relative = bool(channels) and all(isinstance(n, str) and n[:1] in "+-" and len(n) > 1 for n in channels)
    bare = [n[1:] if relative else n for n in channels]
    vocab.check_all("channel", bare, where=where)
    if not relative:
        return bare
    names = default_parts()
    for sign, name in zip((n[0] for n in channels), bare):
        if sign == "+" and name not in names:
            names.append(name)
        elif sign == "-" and name in names:
            names.remove(name)
    return names


@dataclass
class PriorContext:
    """What the priors of one query need besides each candidate's row."""

    now: datetime
    terms: frozenset[str]  # the PRIOR_TERMS in use
    layers: Any = None  # mem.lifecycle.policy layers: ACT-R decay and activation floor per layer
    entity_strength: dict[int, float] = field(default_factory=dict)  # query entity id -> S_j
    tag_strength: dict[str, float] = field(default_factory=dict)  # query word that is a tag -> S_j
    spread: dict[int, float] = field(default_factory=dict)  # rowid -> summed S_j of its query entities

    @property
    def context_size(self) -> int:
        return len(self.entity_strength) + len(self.tag_strength)


def _tag_words(tags: list[str]) -> set[str]:
    return {tag.lower() for tag in tags}


def priors_of(memory: Memory | PriorRow, now: datetime, context: PriorContext | None = None,
              rowid: int | None = None) -> dict[str, float]:
    """Each prior component of a memory (or of its PriorRow), in [0, 1].

    ``activation`` is the squashed ACT-R base level, floored at the memory's layer floor; ``spread``
    (only with a ``context`` naming entities or tags) the spreading activation from the query;
    ``confidence`` the stored confidence (verify lowers it for stale and contradicted memories);
    ``surprise`` the stored surprise (how far from every community centroid the memory arrived).
    """
    from mem.lifecycle.policy import LAYERS

    terms = context.terms if context is not None else frozenset(PRIOR_TERMS)
    layer = (context.layers if context is not None and context.layers else LAYERS).get(memory.layer) or LAYERS[3]
    out: dict[str, float] = {}
    if "activation" in terms:
        base = base_level(memory.access_count, _age_days(memory.created_at, now), layer.actr_decay, layer.floor)
        out["activation"] = round(squash(base), 4)
    if "confidence" in terms:
        out["confidence"] = memory.confidence
    out["layer"] = LAYER_PRIOR.get(memory.layer, 0.5)
    out["pinned"] = 1.0 if memory.pinned else 0.0
    out["status"] = STATUS_PRIOR.get(memory.status, 0.5)
    if "surprise" in terms:
        out["surprise"] = round(memory.surprise, 4) if memory.surprise is not None else 0.5
    if "spread" in terms and context is not None and context.context_size:
        carried = _tag_words(memory.tags)
        total = context.spread.get(rowid, 0.0) + sum(s for w, s in context.tag_strength.items() if w in carried)
        out["spread"] = round(spread_of(total, context.context_size), 4)
    return out


def _rank(ctx: "Context", fused: dict[int, float], filters: dict[str, Any], context: PriorContext,
          k: int, seed: bool = False) -> tuple[list[tuple[float, int, dict[str, float]]], dict[int, PriorRow]]:
    """Apply the priors and sort, best first (ties by rowid); also returns the prior rows read.

    Exact, but lazy: a prior can only take relevance down, so once a candidate's bare relevance
    is below the k-th final score nothing after it can enter the top k, and its priors are never
    computed. The rows the priors need (and the filters) are read in growing batches in fused
    order, so that stop also spares reading most candidates (at 100k memories, 1.9 ms a query).
    ``seed``: the seed's formula (``mem.score.fusion.seed_score``) instead, which can raise a score,
    so every candidate is scored.
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
            if context.entity_strength and "spread" in context.terms:
                _entity_spread(ctx, context, list(rows))
            yield from ((rowid, rows[rowid]) for rowid in batch if rowid in rows)

    scored: list[tuple[float, int, dict[str, float]]] = []
    best: list[float] = []  # min-heap of the k best final scores so far
    for rowid, row in passing():
        relevance = fused[rowid]
        if not seed and len(best) >= k and relevance < best[0]:
            break
        if seed:
            activation = _seed_activation(row, context)
            final = seed_score(relevance, activation, row.confidence)
            components = {"confidence": row.confidence, "seed_activation": round(activation, 4)}
        else:
            components = priors_of(row, context.now, context, rowid)
            final = apply_prior(relevance, prior(components))
        scored.append((final, rowid, components))
        if len(best) < k:
            heapq.heappush(best, final)
        elif final > best[0]:
            heapq.heapreplace(best, final)
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored, allowed


def _seed_activation(row: PriorRow, context: PriorContext) -> float:
    """The raw ACT-R activation the seed's formula reads: base level with the layer floor."""
    from mem.lifecycle.policy import LAYERS

    layer = (context.layers or LAYERS).get(row.layer) or LAYERS[3]
    return base_level(row.access_count, _age_days(row.created_at, context.now), layer.actr_decay, layer.floor)


def _entity_spread(ctx: "Context", context: PriorContext, rowids: list[int]) -> None:
    """Sum each row's query-entity strengths ``S_j`` into ``context.spread`` (one read per batch)."""
    from mem.store import graph as sql

    for rowid, eid, _, _, _ in sql.entities_of(ctx.store, [r for r in rowids if r not in context.spread]):
        strength = context.entity_strength.get(eid)
        if strength:
            context.spread[rowid] = context.spread.get(rowid, 0.0) + strength


def _prior_context(ctx: "Context", plan: Plan, names: list[str]) -> PriorContext:
    """The query's context for the priors: the policy's layers, and (when ``spread`` is on) the
    strength ``max(0, S_max - delta ln fan)`` of each entity the query names and each query word
    that is a tag."""
    from mem.lifecycle.policy import load_policy
    from mem.store import graph as sql
    from mem.text import content_terms

    context = PriorContext(now=plan.now, terms=frozenset(n for n in PRIOR_TERMS if n in names),
                           layers=load_policy(ctx.settings.config).layers)
    if "spread" in context.terms:
        entities = graph_channels.query_entities(ctx, plan)
        context.entity_strength = {eid: spread_term(fan) for eid, fan in entities.values() if spread_term(fan) > 0}
        words = [w for w in dict.fromkeys(t.lower() for t in content_terms(plan.query.text)[:MAX_QUERY_TERMS])
                 if w not in entities]
        fans = sql.tag_fans(ctx.store, words, plan.scope) if words else {}
        context.tag_strength = {w: spread_term(f) for w, f in fans.items() if spread_term(f) > 0}
    return context


def check_query(query: Query, where: str = "") -> Query:
    """Every enumerated field of ``query`` checked (``mem.vocab``); JSON Lines callers check each line
    before searching any."""
    from mem import vocab

    vocab.check_all("kind", query.kinds, where=where)
    parts_for(query.channels, where=where)  # the same check the search makes: all signed or none
    if query.fusion is not None:
        vocab.check("fusion", query.fusion, where=where)
    return query


def run(ctx: "Context", query: Query) -> list[Hit]:
    """The top ``query.k`` hits, best first; the same query on the same data gives the same order."""
    if not isinstance(query.k, int) or query.k < 1:
        raise BadInput(f"k must be a positive integer, got {query.k!r}")
    k = min(query.k, MAX_K)
    if not query.text or not query.text.strip():
        raise BadInput("empty query")
    plan = Plan(query=query, scope=ctx.scope_filter(query.scope), now=ctx.now(),
                candidates=max(CANDIDATES, 2 * k), _ctx=ctx)
    check_query(query)
    fusion = check_fusion(query.fusion) or FUSION
    names = parts_for(query.channels)
    query_type = plan.memo["query_type"] = _classify(ctx, plan)
    rankings: dict[str, Ranking] = {}
    for name in names:
        if name in CHANNELS:
            rankings[name] = plan.memo[f"ranking:{name}"] = CHANNELS[name](ctx, plan)
    weights = dict(WEIGHTS)
    named_window = "temporal" in rankings and bool(graph_channels.time_windows(plan))
    if named_window:
        weights["temporal"] = WINDOW_WEIGHT
    if "semantic" in rankings and "bm25" in rankings:
        weights["semantic"] = weights.get("semantic", 1.0) * peak_factor(rankings["semantic"].scores, **SEMANTIC_PEAK)
    if fusion == "blend":
        fused = blend({n: r.scores for n, r in rankings.items()}, weights, MEMBERSHIP_FLOORS)
    elif fusion == "rrf":
        fused = rrf({n: r.ranked for n, r in rankings.items()}, weights)
    else:  # the seed's: plain RRF (k=60), every channel weighted alike
        fused = rrf({n: r.ranked for n, r in rankings.items()}, {})
    if named_window:
        # The query names a time ("in May 2023", "last week"): that reads as a soft filter, so
        # memories outside every window keep only part of their relevance.
        inside = rankings["temporal"].scores
        fused = {r: v if r in inside else v * OUTSIDE_WINDOW for r, v in fused.items()}
    if "validity" in names and not named_window:  # a query that names a time asks about then, not now
        fused = _validity(ctx, plan, fused)
    if "speaker" in names:
        fused = _speaker(ctx, plan, fused)
    if "environment" in names:
        fused = _environment(ctx, plan, fused)
    if not query.include_superseded:  # a correction answers what the memory it superseded answered
        fused = inherit(fused, successors(ctx.store, list(fused)))
    if "causal" in names and fused:
        from mem.score.causal import CAUSAL_TOP, answers_first, asked_links
        from mem.store.graph import causal_sources

        asked = asked_links(plan.query.text)
        if asked:
            best = sorted(fused, key=lambda r: (-fused[r], r))[:CAUSAL_TOP]
            links = causal_sources(ctx.store, best, asked)
            if SELF_ANSWERS:
                links += _self_answers(ctx, plan, best, asked)
            fused = answers_first(fused, links)
    if "shape" in names and fused:
        fused = _shape(ctx, plan, fused)
    statuses = None if query.include_archived else ("active", "cold")
    filters = dict(scope=plan.scope, kinds=query.kinds, tags=query.tags, statuses=statuses,
                   include_superseded=query.include_superseded, since=query.since, until=query.until)
    context = _prior_context(ctx, plan, names)
    scored, allowed = _rank(ctx, fused, filters, context, k + SCENE_SLACK, seed=fusion == "seed")
    pulled: dict[int, tuple[float, int]] = {}
    if "scene" in names and scored:
        pulled = _scene(ctx, plan, scored, allowed, filters, context)
    # the steps below reorder a whole first page whatever k asks: k=1 answers what k=10 ranks first
    top = scored[:max(k, CURRENT_WINDOW)]
    memories = dict(ctx.store.select(statuses=None, rowids=[rowid for _, rowid, _ in top], order="m.rowid", scope=None))
    notes = _notes(plan)
    hits = [Hit(memory=memories[rowid], rank=i + 1, score=score,
                why=_why(rowid, rankings, fused, components, query_type, pulled, memories, notes))
            for i, (score, rowid, components) in enumerate(top)]
    # what no longer holds now is no newer truth for the steps below: the rule it was an exception to holds again
    gone = expired_ids(hits, plan.memo["asked_at"]) if "validity" in names and not named_window else frozenset()
    open_edges = contradiction_pairs(ctx.store, [h.memory.id for h in hits])
    hits = newer_first(hits, [p for p in open_pairs(hits, open_edges, query.text) if p[0] not in gone])  # open contradictions
    rowid_of = {m.id: rowid for rowid, m in memories.items()}
    vectors: dict[str, Any] = {}  # the page's stored vectors by memory id, each read once for the steps below
    if CURRENT_FIRST:
        _read_vectors(ctx, [memories[rowid].id for _, rowid, _ in top[:CURRENT_WINDOW]], rowid_of, vectors)
        replaced = replaced_by(ctx.store, [h.memory.id for h in hits])
        hits = newer_first(hits, [p for p in current_pairs(hits, query.text, vectors, replaced) if p[0] not in gone],
                           key="current")
    if plan.memo.get("in_force"):  # an exception in force just above the rule it suspends
        suspending = {memories[r].id: (memories[x].id, end) for r, (x, end) in plan.memo["in_force"].items()
                      if r in memories and x in memories}
        hits = newer_first(hits, in_force_pairs(hits, suspending), key="current")
    if "recency" in names and "semantic" in rankings and len(hits) > 1:  # needs the query's vector
        hits = _recency(ctx, plan, hits, rowid_of, vectors, gone)
    hits = hits[:k]
    if query.bump and hits:
        from mem.enrich.timestamps import format_datetime

        ctx.store.bump_access([rowid_of[h.memory.id] for h in hits], format_datetime(plan.now))
    return hits


def _read_vectors(ctx: "Context", ids: list[str], rowid_of: dict[str, int], vectors: dict[str, Any]) -> None:
    """Add to ``vectors`` the stored vectors of those of ``ids`` it does not hold yet."""
    wanted = [rowid_of[i] for i in ids if i not in vectors]
    if wanted:
        found, matrix = ctx.store.vectors_for(wanted)
        id_of = {rowid: i for i, rowid in rowid_of.items()}
        vectors.update((id_of[rowid], row) for rowid, row in zip(found, matrix))


# Two hits that answer the question with two values of one type on one slot: the newer first
# (``mem.score.contradiction.current_pairs``). Coding R@1 E .874 -> .895, G .841 -> .869, superseded-above-gold
# E 3 -> 2, F 3 -> 2, G 7 -> 5, held-out H 17 -> 16 (R@1 .680 unchanged); A-D unchanged; LoCoMo never
# compares (episodes). Its near path (close neighbours, ``contradiction.NEAR``; null the ablation): R@1 E
# .895 -> .905, F .924 -> .933, G .879 -> .888, H .719 -> .766, held-out I .744 -> .750; above H 16 -> 10,
# I 17 -> 16 (I R@5 .961 -> .955). False: the ablation of both.
CURRENT_FIRST = True


def _recency(ctx: "Context", plan: Plan, hits: list[Hit], rowid_of: dict[str, int], vectors: dict[str, Any],
             gone: frozenset[str] = frozenset()) -> list[Hit]:
    """The first hits ordered by the page model: closeness to the question, age among them, place, days apart
    (``mem.score.page_order``); only with the embedder whose cosines it was fitted on. ``gone``: the ids of
    the hits that no longer hold (``mem.score.validity``)."""
    from mem.score.page_order import FITTED_FOR, WINDOW, reorder

    if ctx.embedder.id.split(":")[0] != FITTED_FOR:  # its weights read that model's cosines
        return hits
    _read_vectors(ctx, [h.memory.id for h in hits[:WINDOW]], rowid_of, vectors)
    return reorder(hits, plan.vector, vectors, plan.query.text, gone)


# A causal question's best candidates that explain or fix in their own text ("Bug: ... Cause: ...") go
# above those over them that do not. Coding R@1 A .768 -> .779, B .927 -> .938, C and D the same;
# LoCoMo dev identical (R@1 .408, R@10 .770, every fold). False: the ablation.
SELF_ANSWERS = True
# ... and only one the dense channel also ranks among its CAUSAL_TOP: an explanation of something else,
# fused high on a shared word ("We chose EMQX over Mosquitto because ..." for "why did we choose haversine
# over map matching?"), answers nothing. False: the ablation.
SELF_ANSWER_TOPIC = True


def _self_answers(ctx: "Context", plan: Plan, best: list[int], asked: tuple[str, ...]) -> list[tuple[int, int]]:
    """The best candidates that explain or fix in their own text what a causal question asks, lifted
    over those above them that do not (``mem.score.causal.self_answers``); with ``SELF_ANSWER_TOPIC``,
    only those the dense channel also ranks among its best."""
    from mem.score.causal import CAUSAL_TOP, self_answers
    from mem.stages.link import causal_reading

    texts = {r: m.text for r, m in ctx.store.by_rowids(best).items()}
    readings = {r: causal_reading(t) for r, t in texts.items()}
    links_in = {r: [reading[0]] for r, reading in readings.items() if reading and reading[1] in ("explains", "resolves")}
    on_topic = _on_topic(plan, CAUSAL_TOP) if SELF_ANSWER_TOPIC else None
    return self_answers([r for r in best if r in texts], links_in, texts, asked, on_topic)


def _on_topic(plan: Plan, n: int) -> set[int] | None:
    """The dense channel's first ``n``: what the question's meaning, not a shared word, ranks best (None
    when it did not run)."""
    dense = plan.memo.get("ranking:semantic")
    return set(dense.ranked[:n]) if dense is not None else None


def _shape(ctx: "Context", plan: Plan, fused: dict[int, float]) -> dict[int, float]:
    """A question that asks how to do something (or for a version, a duration, a cadence, a number): among
    the best ``SHAPE_TOP`` candidates, one the dense channel also ranks among its best that holds a
    procedure (that value) goes just above those over it that do not (``mem.score.answer_shape``)."""
    from mem.score.answer_shape import SHAPE_TOP, holding, shape_lifts, wanted_shape
    from mem.score.causal import answers_first

    shape = wanted_shape(plan.query.text)
    if shape is None:
        return fused
    best = sorted(fused, key=lambda r: (-fused[r], r))[:SHAPE_TOP]
    memories = ctx.store.by_rowids(best)
    # conversation turns (episodes) say what was said, not how a thing is done: never lifted
    able = holding(shape, {r: m for r, m in memories.items() if m.kind != "episode"})
    return answers_first(fused, shape_lifts([r for r in best if r in memories], able, _on_topic(plan, SHAPE_TOP)))


def check_fusion(fusion: Any) -> str | None:
    """``fusion`` if it names a known fusion (or is None: the default); else BadInput naming the choices."""
    from mem import vocab

    return vocab.check("fusion", fusion) if fusion is not None else None


def _classify(ctx: "Context", plan: Plan) -> str:
    """The query type (single-hop | multi-hop | temporal | open-domain): it picks the speaker penalty
    (``SPEAKER_PENALTIES``) and is shown in ``why``."""
    from mem.enrich.query_time import is_when_question

    return classify(plan.query.text, has_time=bool(graph_channels.time_windows(plan)),
                    when_question=is_when_question(plan.query.text),
                    entity_count=len(graph_channels.query_entities(ctx, plan)))


def _best_texts(ctx: "Context", plan: Plan, fused: dict[int, float]) -> dict[int, str]:
    """The texts of the best ``SPEAKER_CANDIDATES`` of ``fused`` by rowid, each read from the store once per
    query (the speaker and environment steps read the same best candidates, give or take a few)."""
    best = sorted(fused, key=lambda r: (-fused[r], r))[:SPEAKER_CANDIDATES]
    known: dict[int, str] = plan.memo.setdefault("texts", {})
    unread = [r for r in best if r not in known]
    if unread:
        known.update((r, m.text) for r, m in ctx.store.by_rowids(unread).items())
    return {r: known[r] for r in best if r in known}


def _speaker(ctx: "Context", plan: Plan, fused: dict[int, float]) -> dict[int, float]:
    """Speaker-aware matching (``mem.score.speaker``): when the query names one of the speakers of
    the best candidates, the other speakers' turns keep ``1 - SPEAKER_PENALTY`` of their relevance
    (``SPEAKER_PENALTIES`` per query type), and turns with no first-person word ``1 - SELF_PENALTY``."""
    from mem.score.speaker import speaker_factors, wanted_speakers

    texts = _best_texts(ctx, plan, fused)
    wanted = wanted_speakers(plan.query.text, texts)
    if not wanted:
        return fused
    factors = speaker_factors(plan.query.text, texts, _speaker_penalty(plan), wanted, SELF_PENALTY)
    plan.memo["speakers"] = wanted
    plan.memo["speaker_factors"] = factors
    return {r: v * factors.get(r, 1.0) for r, v in fused.items()}


def _environment(ctx: "Context", plan: Plan, fused: dict[int, float]) -> dict[int, float]:
    """When the query names a deployment environment, a memory among the best ``SPEAKER_CANDIDATES``
    that names only other environments keeps ``1 - ENV_PENALTY`` of its relevance (``mem.score.environment``)."""
    from mem.score.environment import environments, factors

    if not environments(plan.query.text):
        return fused
    found = factors(plan.query.text, _best_texts(ctx, plan, fused), ENV_PENALTY)
    plan.memo["environment_factors"] = found
    return {r: v * found.get(r, 1.0) for r, v in fused.items()}


def _notes(plan: Plan) -> dict[str, dict[int, Any]]:
    """Step -> rowid -> what the post-fusion step that changed that memory's relevance says of it in ``why``:
    spoken by someone other than the one the query names or not in the first person (speaker), naming only
    other deployment environments than the query (environment), no longer holding at the query's now
    (expired)."""
    speaker = plan.memo.get("speaker_factors") or {}
    return {"speaker": {r: {"factor": f} for r, f in speaker.items() if f != 1.0},
            "environment": {r: {"factor": f} for r, f in (plan.memo.get("environment_factors") or {}).items()},
            "expired": plan.memo.get("expired") or {}}


def _asked_at(plan: Plan) -> datetime:
    """The time a query asks what holds at: now, or its ``until`` bound when that is earlier (``--until
    2036-12-31`` asks about December, when the freeze that ended in January still held)."""
    from mem.enrich.timestamps import parse_datetime

    try:
        return min(plan.now, parse_datetime(plan.query.until)) if plan.query.until else plan.now
    except ValueError:  # check_query has refused a bad bound already: never reached
        return plan.now


def _validity(ctx: "Context", plan: Plan, fused: dict[int, float]) -> dict[int, float]:
    """What holds at the query's now, for a query that names no time of its own (``mem.score.validity``): an
    exception in force (a ``suspends`` edge from a memory whose end is ahead) is at least as relevant as the
    rule it suspends; a memory whose ``valid_until`` is behind keeps ``validity.KEPT`` of its relevance."""
    from mem.score.validity import KEPT, expired, in_force
    from mem.store.lifecycle import ends, suspensions

    asked_at = plan.memo["asked_at"] = _asked_at(plan)
    holding = in_force(suspensions(ctx.store, list(fused)), asked_at)
    if holding:
        plan.memo["in_force"] = holding
        fused = inherit(fused, {r: x for r, (x, _) in holding.items()})
    gone = {r: end for r, end in ends(ctx.store, list(fused)).items() if expired(end, asked_at)}
    if not gone:
        return fused
    plan.memo["expired"] = {r: {"valid_until": end, "factor": KEPT} for r, end in gone.items()}
    return {r: v * KEPT if r in gone else v for r, v in fused.items()}


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
           allowed: dict[int, PriorRow], filters: dict[str, Any], context: PriorContext) -> dict[int, tuple[float, int]]:
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
            scored.append((value, rowid, priors_of(row, plan.now, context, rowid)))
        kept[rowid] = (value, parent)
    scored.sort(key=lambda item: (-item[0], item[1]))
    return kept


def _why(rowid: int, rankings: dict[str, Ranking], fused: dict[int, float], components: dict[str, float],
         query_type: str | None = None, pulled: dict[int, tuple[float, int]] | None = None,
         allowed: dict[int, Memory] | None = None, notes: dict[str, dict[int, Any]] | None = None) -> dict[str, Any]:
    """What put the memory at ``rowid`` where it is: its place in each channel, the scene neighbour that pulled
    it in, the factors of the post-fusion steps that changed its relevance (``notes``: step -> rowid -> its note),
    the fused score and the priors."""
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
    for step, noted in (notes or {}).items():
        if rowid in noted:
            why[step] = noted[rowid]
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

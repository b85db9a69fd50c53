"""Token-level rescoring channels for ``search``: MaxSim and Fisher-Rao over the best candidates.

Both read MiniLM token states, which are not stored (384 floats per token would multiply the
database several times over): they are computed at search time for the ``RESCORE`` best
candidates of the semantic and BM25 channels only, and kept per process (``ctx.cache``, at most
``TOKEN_CACHE`` memories), so a long-lived process (MCP server, ``search -``) computes each
memory's once. With an embedder that has no token states (hash, Ollama) both return nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mem.stages.query import Plan, Ranking

if TYPE_CHECKING:
    from mem.stages.context import Context

RESCORE = 30  # best candidates of each of semantic and BM25 that are rescored
TOKEN_CACHE = 20_000  # memories whose token summaries a process keeps


def _pool(ctx: "Context", plan: Plan) -> list[int]:
    """The best candidates of the semantic channel (run here if it has not run) and of BM25 (if it ran)."""
    from mem.stages.channels import semantic

    if "ranking:semantic" not in plan.memo:
        plan.memo["ranking:semantic"] = semantic(ctx, plan)
    seen: dict[int, None] = {}
    for name in ("semantic", "bm25"):
        ranking = plan.memo.get(f"ranking:{name}")
        if ranking is not None:
            seen.update(dict.fromkeys(ranking.ranked[:RESCORE]))
    return list(seen)


def _summaries(ctx: "Context", plan: Plan, rowids: list[int]) -> tuple[Any, dict[int, Any]] | None:
    """(query summary, rowid -> memory summary); a summary is ``(unit token states, (mean, std))``."""
    from mem.score.tokens import content_tokens, gaussian, unit_rows

    embedder = ctx.embedder
    if not hasattr(embedder, "token_states"):
        return None

    def summary(states: Any) -> tuple[Any, Any]:
        tokens = content_tokens(states)
        return unit_rows(tokens), gaussian(tokens)

    if "tokens:query" not in plan.memo:
        plan.memo["tokens:query"] = summary(embedder.token_states([plan.query.text])[0])
    # Keyed by content hash too: an edited memory's old token states are never reused.
    cache: dict[tuple[int, str], Any] = ctx.cache.setdefault(("tokens", embedder.id), {})
    memories = ctx.store.by_rowids(rowids)
    keys = {r: (r, m.content_hash) for r, m in memories.items()}
    missing = [r for r in rowids if r in keys and keys[r] not in cache]
    if missing:
        if len(cache) + len(missing) > TOKEN_CACHE:
            cache.clear()
        for rowid, states in zip(missing, embedder.token_states([memories[r].text for r in missing])):
            cache[keys[rowid]] = summary(states)
    return plan.memo["tokens:query"], {r: cache[keys[r]] for r in rowids if r in keys}


def _ranking(scores: dict[int, float]) -> Ranking:
    return Ranking(sorted(scores, key=lambda r: (-scores[r], r)), scores)


def maxsim(ctx: "Context", plan: Plan) -> Ranking:
    """MaxSim (mean over query tokens of the best cosine to a memory token) of the best candidates."""
    from mem.score.tokens import maxsim as score

    found = _summaries(ctx, plan, _pool(ctx, plan))
    if found is None:
        return _ranking({})
    query, memories = found
    return _ranking({r: round(score(query[0], m[0]), 6) for r, m in memories.items()})


def fisher(ctx: "Context", plan: Plan) -> Ranking:
    """Fisher-Rao similarity ``1 / (1 + d)`` between the query's and each best candidate's diagonal
    Gaussian over token states."""
    from mem.score.tokens import fisher_rao

    found = _summaries(ctx, plan, _pool(ctx, plan))
    if found is None:
        return _ranking({})
    query, memories = found
    return _ranking({r: round(1.0 / (1.0 + fisher_rao(query[1], m[1])), 6) for r, m in memories.items()})

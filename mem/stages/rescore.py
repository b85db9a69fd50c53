"""Token-level rescoring channels for ``search``: MaxSim and Fisher-Rao over the best candidates.

Both read a memory's token states in their compact stored form (``mem.score.tokens.compact``: a
fixed projection to ``TOKEN_DIMS`` dimensions, int8), which intake writes beside the vector
(``embed_for_store``, ``mem.store.token_states``), so a search reads the ``RESCORE`` best candidates of
the semantic and BM25 channels instead of running the model over them. A memory stored without
them (before migration 11, or by an embedder without token states) has them computed here in the
very same form and kept per process (``ctx.cache``, at most ``TOKEN_CACHE`` memories). The query's
own states take one model pass. With an embedder that has no token states (hash, Ollama) both
channels return nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mem.stages.query import Plan, Ranking

if TYPE_CHECKING:
    import numpy as np

    from mem.stages.context import Context

RESCORE = 30  # best candidates of each of semantic and BM25 that are rescored
TOKEN_CACHE = 20_000  # memories without stored states whose computed ones a process keeps


def embed_for_store(embedder: Any, texts: Sequence[str]) -> tuple["np.ndarray", list[tuple[str, bytes]] | None]:
    """The vectors of ``texts`` and, when the embedder has token states, each text's compact states
    ``(form, bytes)`` for ``Store.put_vectors(tokens=...)``, from the same pass of the model."""
    from mem.score.tokens import compact_many, token_form

    with_states = getattr(embedder, "embed_with_states", None)
    if with_states is None:
        return embedder.embed(texts), None
    vectors, states = with_states(texts)
    form = token_form()
    return vectors, [(form, blob) for blob in compact_many(states)]


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


def _token_rows(ctx: "Context", plan: Plan, rowids: list[int]) -> tuple[Any, dict[int, Any]] | None:
    """(the query's projected unit token rows, rowid -> the memory's): stored rows where there are
    any, else computed now (and kept for the process). Read once a query: MaxSim and Fisher-Rao
    rescore the same pool."""
    if not hasattr(ctx.embedder, "token_states"):
        return None
    memo = plan.memo.get("tokens:rows")
    if memo is None or memo[0] != rowids:
        memo = plan.memo["tokens:rows"] = (list(rowids), _read_token_rows(ctx, plan, rowids))
    return memo[1]


def _read_token_rows(ctx: "Context", plan: Plan, rowids: list[int]) -> tuple[Any, dict[int, Any]]:
    from mem.score import tokens
    from mem.store import token_states as stored

    embedder = ctx.embedder
    dims = tokens.TOKEN_DIMS
    if "tokens:query" not in plan.memo:
        plan.vector  # noqa: B018  (one model pass gives the query's vector and its token states)
        states = plan.memo.get("query_states")
        if states is None:
            states = embedder.token_states([plan.query.text])[0]
        plan.memo["tokens:query"] = tokens.projected(states, dims)
    rows = {r: tokens.expand(blob, dims) for r, blob in stored.get(ctx.store, rowids, tokens.token_form()).items()}
    unstored = [r for r in rowids if r not in rows]
    if unstored:
        # Keyed by content hash too: an edited memory's old token states are never reused.
        cache: dict[tuple[int, str], Any] = ctx.cache.setdefault(("tokens", embedder.id, tokens.token_form()), {})
        memories = ctx.store.by_rowids(unstored)
        keys = {r: (r, m.content_hash) for r, m in memories.items()}
        missing = [r for r in unstored if r in keys and keys[r] not in cache]
        if missing:
            if len(cache) + len(missing) > TOKEN_CACHE:
                cache.clear()
            for rowid, states in zip(missing, embedder.token_states([memories[r].text for r in missing])):
                cache[keys[rowid]] = tokens.expand(tokens.compact(states, dims), dims)
        rows.update({r: cache[keys[r]] for r in unstored if r in keys})
    return plan.memo["tokens:query"], rows


def _ranking(scores: dict[int, float]) -> Ranking:
    return Ranking(sorted(scores, key=lambda r: (-scores[r], r)), scores)


def maxsim(ctx: "Context", plan: Plan) -> Ranking:
    """MaxSim (mean over query tokens of the best cosine to a memory token) of the best candidates."""
    from mem.score.tokens import maxsim as score

    found = _token_rows(ctx, plan, _pool(ctx, plan))
    if found is None:
        return _ranking({})
    query, memories = found
    return _ranking({r: round(score(query, m), 6) for r, m in memories.items()})


def fisher(ctx: "Context", plan: Plan) -> Ranking:
    """Fisher-Rao similarity ``1 / (1 + d)`` between the query's and each best candidate's diagonal
    Gaussian (per-dimension mean and variance) over its token states."""
    from mem.score.tokens import fisher_rao, gaussian

    found = _token_rows(ctx, plan, _pool(ctx, plan))
    if found is None:
        return _ranking({})
    query, memories = found
    q = gaussian(query)
    return _ranking({r: round(1.0 / (1.0 + fisher_rao(q, gaussian(m))), 6) for r, m in memories.items()})

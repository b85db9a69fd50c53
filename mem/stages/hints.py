"""What to tell someone whose search came back empty: whether other scopes hold matches."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mem.stages.context import Context
    from mem.stages.search import Query

OTHER_SCOPES_K = 100  # hits counted across every scope; past it the count reads "100+"


def hits_elsewhere(ctx: "Context", query: "Query", keep: Callable[[list[Any]], list[Any]] | None = None) -> Counter[str]:
    """How many hits the same query finds in each *other* scope (none when it already searched them all).

    Runs only after an empty result, without bumping access counts: a hint must not change ranking.
    ``keep`` filters the hits first (an MCP session bounded to some scopes counts only those).
    """
    from mem.stages import search

    here = ctx.scope_filter(query.scope)
    if here is None:
        return Counter()
    wider = search.run(ctx, replace(query, scope="*", k=OTHER_SCOPES_K, bump=False))
    if keep is not None:
        wider = keep(wider)
    return Counter(hit.memory.scope for hit in wider if hit.memory.scope != here)


def elsewhere_message(here: str, counts: Counter[str], scope_arg: str = "--scope {}") -> str:
    """'no hits in scope 'a'; 3 in other scopes (b 2, c 1): --scope '*' searches every scope, ...'.

    ``scope_arg`` spells the way to ask for a scope: the CLI flag, or the MCP argument."""
    total = sum(counts.values())
    shown = ", ".join(f"{name} {n}" for name, n in counts.most_common(5)) + (", ..." if len(counts) > 5 else "")
    more = "+" if total >= OTHER_SCOPES_K else ""
    best = counts.most_common(1)[0][0]
    return (f"no hits in scope '{here}'; {total}{more} in other scopes ({shown}): "
            f"{scope_arg.format(repr('*'))} searches every scope, {scope_arg.format(best)} that one")

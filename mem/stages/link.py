"""Graph building at intake: entities, semantic/temporal/causal links. (Filled in by the graph work.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from mem.records import Memory
    from mem.stages.context import Context


def after_insert(ctx: "Context", rowid: int, memory: "Memory", vector: "np.ndarray | None") -> None:
    """Called inside the intake write transaction right after a memory is stored."""
    return None

"""Contradiction check at intake: a newer assertion supersedes an older one. (Filled in by the lifecycle work.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mem.records import Memory
    from mem.stages.context import Context


def check(ctx: "Context", rowid: int, memory: "Memory") -> list[str]:
    """Called inside the intake write transaction after insert; returns ids this memory superseded."""
    return []

"""What one search works with: the request (``Query``), what its channels share (``Plan``), and
what each channel returns (``Ranking``). Both ``search`` and ``channels`` import this module, and
neither imports the other's internals, so there is no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


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
    channels: list[str] | None = None  # None: the default parts; only these; or "+name"/"-name" changes to the defaults
    bump: bool = True
    fusion: str | None = None  # "rrf" | "blend" | "seed"; None: search.FUSION


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
        """The query's embedding; with an embedder that has token states, the same model pass keeps
        the query's token states too (``memo["query_states"]``, for MaxSim)."""
        if self._vector is None:
            with_states = getattr(self._ctx.embedder, "embed_with_states", None)
            if with_states is None:
                self._vector = self._ctx.embedder.embed([self.query.text])[0]
            else:
                vectors, states = with_states([self.query.text])
                self._vector, self.memo["query_states"] = vectors[0], states[0]
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

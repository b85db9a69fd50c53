"""What every stage works against: one open Store, the Settings, and a lazily loaded Embedder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mem.config import DEFAULT_EMBEDDER, Settings
from mem.embed import Embedder, get_embedder
from mem.store import Store
from mem.store.vectors import VectorIndex

if TYPE_CHECKING:
    from datetime import datetime


@dataclass
class Context:
    store: Store
    settings: Settings
    _embedder: Embedder | None = field(default=None, repr=False)
    _vectors: VectorIndex | None = field(default=None, repr=False)
    # The name ``embedder`` was made from; None while unresolved or when one was handed over.
    _embedder_name: str | None = field(default=None, repr=False)
    # Per-process copies of derived data (e.g. community centroids), each checked against the
    # database before use; they make a long-lived process (MCP server, ``search -``) fast.
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def vectors(self) -> VectorIndex:
        """Nearest-neighbour search, warming up to an in-RAM matrix when this process asks often."""
        if self._vectors is None:
            self._vectors = VectorIndex(self.store)
        return self._vectors

    @property
    def embedder(self) -> Embedder:
        """The embedder asked for, else the one the database is bound to, else the default.

        Bound to the database on first use; a different one is refused (``mem reindex`` switches).
        """
        if self._embedder is None:
            name = self.settings.embedder or self.store.embedder_name() or DEFAULT_EMBEDDER
            embedder = get_embedder(name, ollama_host=self.settings.ollama_host)
            self.store.bind_embedder(name, embedder.id, lambda: embedder.dim)
            if self.store.backend != "sqlite" and hasattr(embedder, "spin"):
                # A database server needs the CPU right after a query is embedded: onnxruntime's
                # spinning threads made the next round trip 35 ms instead of 6.5 here (2 cores).
                embedder.spin = False
            self._embedder, self._embedder_name = embedder, name
        return self._embedder

    @property
    def embedder_in_use(self) -> Embedder | None:
        """The embedder if this context has already resolved it, else None: for a question asked inside
        a write transaction, where resolving would bind the database (a second transaction)."""
        return self._embedder

    @property
    def embedder_name(self) -> str | None:
        """The name the embedder was made from (resolving and binding it, but not loading a model:
        models load on first use), or None for one handed over with ``use_embedder``."""
        self.embedder
        return self._embedder_name

    def use_embedder(self, embedder: Embedder) -> None:
        """Hand over an already loaded embedder (the MCP server keeps one warm for its lifetime)."""
        self._embedder = embedder

    def now(self) -> "datetime":
        return self.settings.now()

    def now_iso(self) -> str:
        now = self.settings.now()
        kept = self.cache.get("now_iso")
        if kept is not None and kept[0] is now:  # a pinned clock (--now, a batch's): formatted once
            return kept[1]
        from mem.enrich.timestamps import format_datetime

        iso = format_datetime(now)
        self.cache["now_iso"] = (now, iso)
        return iso

    def scope_filter(self, scope: str | None) -> str | None:
        """``*`` means every scope (None); no scope given means the settings' scope."""
        scope = scope or self.settings.scope
        return None if scope == "*" else scope

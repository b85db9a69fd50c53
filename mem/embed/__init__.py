"""Embedders behind one interface. Models load on first use, never at import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from mem.errors import BadInput

if TYPE_CHECKING:
    import numpy as np


class Embedder(Protocol):
    id: str  # stored in the database's meta; e.g. "minilm:all-MiniLM-L6-v2-int8"
    dim: int

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        """(n, dim) float32, each row L2-normalized."""
        ...


_LOADED: dict[tuple[str, str | None], Embedder] = {}  # kept by a long-lived process (the warm helper)


def get_embedder(name: str, *, ollama_host: str | None = None, cached: bool = False) -> Embedder:
    """The embedder called ``name``: ``minilm`` (default), ``hash`` or ``ollama:MODEL``.

    ``cached``: keep it loaded for the rest of the process, and hand it out to later calls too.

    >>> get_embedder("hash").dim
    512
    """
    key = (name, ollama_host if name.startswith("ollama:") else None)
    if key in _LOADED:
        return _LOADED[key]
    embedder = _make(name, ollama_host)
    if cached:
        _LOADED[key] = embedder
    return embedder


def _make(name: str, ollama_host: str | None) -> Embedder:
    if name == "minilm":
        from mem.embed.minilm import MiniLM

        return MiniLM()
    if name == "hash":
        from mem.embed.hashing import HashEmbedder

        return HashEmbedder()
    if name.startswith("ollama:") and len(name) > len("ollama:"):
        from mem.embed.ollama import OllamaEmbedder

        return OllamaEmbedder(name.split(":", 1)[1], host=ollama_host)
    raise BadInput(f"unknown embedder {name!r}: use minilm, hash or ollama:MODEL", embedder=name)

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


def get_embedder(name: str, *, ollama_host: str | None = None) -> Embedder:
    """The embedder called ``name``: ``minilm`` (default), ``hash`` or ``ollama:MODEL``.

    >>> get_embedder("hash").dim
    512
    """
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

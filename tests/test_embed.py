"""The embedders themselves: the default ONNX model really loads and understands paraphrase."""

from __future__ import annotations

import numpy as np
import pytest

from mem.embed import get_embedder
from tests.conftest import run_mem


def test_hash_embedder_is_normalized_and_discriminative():
    e = get_embedder("hash")
    v = e.embed(["the cache layer uses redis", "redis caches the layer", "quarterly revenue grew"])
    assert v.shape == (3, e.dim) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


@pytest.mark.slow
def test_minilm_finds_paraphrase_end_to_end():
    env = {"MEM_EMBEDDER": "minilm"}
    texts = ["We chose Redis for the cache layer", "The team meets every Monday at ten",
             "Production runs on Kubernetes in eu-west-1", "Bob is on vacation until March"]
    for text in texts:
        assert run_mem("add", text, env=env).code == 0
    hits = run_mem("search", "which in-memory store do we use for caching?", "--channel", "semantic", env=env).records
    assert hits[0]["text"] == "We chose Redis for the cache layer"
    hits = run_mem("search", "where is prod deployed", "--channel", "semantic", env=env).records
    assert hits[0]["text"] == "Production runs on Kubernetes in eu-west-1"
    assert run_mem("stats", env=env).records[0]["embedder"] == "minilm:all-MiniLM-L6-v2-int8"


@pytest.mark.slow
def test_minilm_vectors():
    e = get_embedder("minilm")
    v = e.embed(["a cat sits on the mat", "a kitten is sitting on a rug", "the stock market fell"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert v[0] @ v[1] > 0.5 > v[0] @ v[2]


@pytest.mark.slow  # loads the ONNX model
def test_minilm_gives_a_text_the_same_vector_alone_or_in_bulk():
    """Bulk calls (more than one onnxruntime batch) use their own session tuned for throughput;
    the vectors must not depend on which session or batch a text went through."""
    from mem.embed import minilm

    e = get_embedder("minilm")
    texts = [f"note {i}: the {'billing ' * (i % 5)}service retries {i} times" for i in range(3 * minilm.BATCH)]
    bulk = e.embed(texts)
    alone = np.stack([e.embed([t])[0] for t in texts[:: minilm.BATCH // 2]])
    assert len(e._sessions) == 2  # both sessions were used
    assert np.allclose(bulk[:: minilm.BATCH // 2], alone, atol=1e-5)


@pytest.mark.slow  # loads the ONNX model
def test_minilm_batch_size_and_threads_do_not_move_vectors():
    """bench/embed_speed.py compares batch sizes and thread counts: they change speed, never a vector."""
    from mem.embed.minilm import MiniLM

    texts = [f"note {i}: the {'billing ' * (i % 7)}service retries {i} times" for i in range(40)]
    default = MiniLM().embed(texts)
    for other in (MiniLM(batch=5, threads=1), MiniLM(batch=64)):
        assert np.min(np.sum(other.embed(texts) * default, axis=1)) > 0.9999

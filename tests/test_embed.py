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


def _hash_reference(text: str, dim: int) -> np.ndarray:
    """The hash embedder's features spelled out one by one: stemmed words (weight 1), bigrams of
    them (0.5), each stem's character trigrams (0.35), summed in that order, then normalized."""
    import hashlib

    from mem.text import STOPWORDS, stem, tokens

    words = [stem(w, 4) for w in tokens(text) if w not in STOPWORDS]
    feats = [("w:" + w, 1.0) for w in words] + [("b:" + a + " " + b, 0.5) for a, b in zip(words, words[1:])]
    feats += [("c:" + f"<{w}>"[i : i + 3], 0.35) for w in words for i in range(len(w))]
    out = np.zeros(dim, dtype=np.float32)
    for feature, weight in feats:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        np.add.at(out, [int.from_bytes(digest[:4], "little") % dim], [weight if digest[4] & 1 else -weight])
    # normalized as the embedder normalizes its batch (row norms along axis 1): numpy 2.4 computes a
    # vector's own norm a last bit apart from its row norm in a matrix
    norm = np.linalg.norm(out[None, :], axis=1, keepdims=True)[0]
    return out / norm if norm > 0 else out


def test_hash_vectors_are_the_features_bit_for_bit():
    """Stored hash vectors stay comparable with new ones: the cached per-word slots add up to exactly
    the vector the feature definition gives, whichever texts were embedded before."""
    texts = ["the cache layer uses redis", "redis caches the cache layer", "", "the a of", "naïve café 北京 🎉",
             "deploy v2.3 to eu-west-1 on 2026-05-01", "Caroline: I went to the LGBTQ support group yesterday"]
    e = get_embedder("hash")
    for batch in (texts, texts[::-1]):
        got = e.embed(batch)
        for row, text in zip(got, batch):
            assert np.array_equal(row, _hash_reference(text, e.dim)), text


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


@pytest.mark.parametrize("seed", range(4))
def test_hash_sums_in_rounds_are_add_at_bit_for_bit(seed: int):
    """``hashing._add_in_order`` is ``np.add.at`` (float64 additions rounded to float32 in order) for any
    cells and values, a cell repeated many times included; a float32 sum of the same values differs."""
    from mem.embed.hashing import _add_in_order

    rng = np.random.default_rng(seed)
    cells = np.concatenate([rng.integers(0, 300, 5000), np.full(70, 17)])  # one cell added to 70 times more
    rng.shuffle(cells)
    values = rng.choice([1.0, -1.0, 0.5, -0.5, 0.35, -0.35], len(cells))
    expected = np.zeros(300, dtype=np.float32)
    np.add.at(expected, cells, values.tolist())
    got = np.zeros(300, dtype=np.float32)
    _add_in_order(got, cells.astype(np.intp), values)
    assert got.tobytes() == expected.tobytes()
    in_float32 = np.zeros(300, dtype=np.float32)
    np.add.at(in_float32, cells, values.astype(np.float32))
    assert in_float32.tobytes() != expected.tobytes()  # the rounding order is what the test holds

"""Scores over token states (per-token contextual vectors): MaxSim and the Fisher-Rao distance.
Pure functions over numpy arrays, no I/O.

- MaxSim (late interaction, ColBERT): each query token finds its best-matching memory token; the
  score is the mean of those best cosines, so a memory that covers every part of the query wins
  even when its pooled vector is dominated by something else.
- Fisher-Rao: a text is a diagonal Gaussian over the embedding space (mean and variance of its
  token states); the distance between two is the geodesic distance under the Fisher information
  metric. Per dimension (univariate normals, metric ``(dmu^2 + 2 dsigma^2) / sigma^2``)::

      d_i = 2 sqrt(2) artanh( sqrt( (dmu^2 + 2 (s1 - s2)^2) / (dmu^2 + 2 (s1 + s2)^2) ) )

  and over a product of independent dimensions ``d = sqrt(sum_i d_i^2)``. Two texts with the same
  mean but different spread are apart, unlike under cosine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

VARIANCE_FLOOR = 1e-4  # a one-token text has no spread: keep the metric finite
TOKEN_DIMS = 64  # dimensions a stored token state keeps (``compact``); bench/README.md has the sweep
PROJECTION_KEY = b"mem token projection v1"  # what the projection's signs are drawn from: never change it
COMPACT_GROUP = 512  # token rows ``compact_many`` scales in one pass (more spill out of the CPU's caches)
PROJECTION_NAME = "sign"  # names the projection in ``token_form``: a new one needs a new name


def token_form() -> str:
    """What a stored row's ``form`` says: the projection and its width; rows of another form are
    not read (they are computed anew), so changing either never misreads stored bytes.

    >>> token_form()
    'sign64'
    """
    return f"{PROJECTION_NAME}{TOKEN_DIMS}"


def content_tokens(states: "np.ndarray") -> "np.ndarray":
    """The states without the [CLS] and [SEP] markers (when there is anything between them)."""
    return states[1:-1] if len(states) > 2 else states


def unit_rows(states: "np.ndarray") -> "np.ndarray":
    import numpy as np

    norms = np.linalg.norm(states, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (states / norms).astype(np.float32)


def maxsim(query_unit: "np.ndarray", memory_unit: "np.ndarray") -> float:
    """Mean over query tokens of the best cosine to any memory token, in [-1, 1].

    >>> import numpy as np
    >>> q = np.eye(3, dtype=np.float32)[:2]
    >>> maxsim(q, np.eye(3, dtype=np.float32)), maxsim(q, np.eye(3, dtype=np.float32)[:1])
    (1.0, 0.5)
    """
    if not len(query_unit) or not len(memory_unit):
        return 0.0
    return float((query_unit @ memory_unit.T).max(axis=1).mean())


def gaussian(states: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
    """Diagonal Gaussian of a text's token states: ``(mean, standard deviation)`` per dimension."""
    import numpy as np

    mean = states.mean(axis=0)
    var = states.var(axis=0) if len(states) > 1 else np.zeros_like(mean)
    return mean.astype(np.float32), np.sqrt(np.maximum(var, VARIANCE_FLOOR)).astype(np.float32)


def fisher_rao(a: tuple["np.ndarray", "np.ndarray"], b: tuple["np.ndarray", "np.ndarray"]) -> float:
    """Fisher-Rao distance between two diagonal Gaussians ``(mean, std)``; 0 for the same one.

    >>> import numpy as np
    >>> g = (np.zeros(2, np.float32), np.ones(2, np.float32))
    >>> fisher_rao(g, g)
    0.0
    >>> wide = (np.zeros(2, np.float32), np.full(2, 2.0, np.float32))
    >>> near = (np.full(2, 0.1, np.float32), np.ones(2, np.float32))
    >>> fisher_rao(g, near) < fisher_rao(g, wide)
    True
    """
    import numpy as np

    (m1, s1), (m2, s2) = a, b
    dmu2 = (m1.astype(np.float64) - m2) ** 2
    num = dmu2 + 2.0 * (s1.astype(np.float64) - s2) ** 2
    den = dmu2 + 2.0 * (s1.astype(np.float64) + s2) ** 2
    ratio = np.sqrt(np.clip(num / den, 0.0, 1.0 - 1e-12))
    per_dim = 2.0 * np.sqrt(2.0) * np.arctanh(ratio)
    return float(np.sqrt((per_dim ** 2).sum()))


# ------------------------------------------------------------------------------ compact states
_PROJECTIONS: dict[tuple[int, int], "np.ndarray"] = {}


def projection(dim: int, dims: int) -> "np.ndarray":
    """A fixed ``(dim, dims)`` random sign projection (entries +-1/sqrt(dims)): it keeps cosines in
    expectation (Johnson-Lindenstrauss), and its signs come from BLAKE2b of ``PROJECTION_KEY`` in
    counter mode, so every machine and numpy version draws the same matrix and stored states stay
    comparable with a query projected anywhere.

    >>> p = projection(8, 4); p.shape, float(abs(p).max()) == 0.5, bool((projection(8, 4) == p).all())
    ((8, 4), True, True)
    """
    import hashlib

    import numpy as np

    if (dim, dims) not in _PROJECTIONS:
        need = (dim * dims + 7) // 8
        stream = b"".join(hashlib.blake2b(PROJECTION_KEY + i.to_bytes(4, "big"), digest_size=64).digest()
                          for i in range(need // 64 + 1))
        bits = np.unpackbits(np.frombuffer(stream[:need], dtype=np.uint8))[: dim * dims]
        signs = bits.astype(np.float32).reshape(dim, dims) * 2.0 - 1.0
        _PROJECTIONS[(dim, dims)] = signs / np.float32(np.sqrt(dims))
    return _PROJECTIONS[(dim, dims)]


def projected(states: "np.ndarray", dims: int | None = None) -> "np.ndarray":
    """A text's content token states as unit rows in the projected space (float32), for MaxSim;
    ``dims`` (default ``TOKEN_DIMS``) at or above the states' width keeps them as they are."""
    tokens = unit_rows(content_tokens(states))
    dims = dims or TOKEN_DIMS
    return tokens if dims >= tokens.shape[1] else unit_rows(tokens @ projection(tokens.shape[1], dims))


def compact(states: "np.ndarray", dims: int | None = None) -> bytes:
    """What intake stores of a text's token states: ``projected`` rows as int8, each scaled by its own
    largest component (the scale is not kept: ``expand`` makes the rows unit again). ``dims`` bytes
    a token: 64 against 1,536 for the float32 state.

    >>> import numpy as np
    >>> states = np.random.default_rng(1).standard_normal((6, 16)).astype(np.float32)
    >>> rows = expand(compact(states, 8), 8)
    >>> rows.shape, bool(np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5))
    ((4, 8), True)
    >>> bool((np.abs(rows - projected(states, 8)) < 0.02).all())
    True
    """
    import numpy as np

    rows = projected(states, dims)
    peaks = np.abs(rows).max(axis=1, keepdims=True)
    peaks[peaks == 0] = 1.0
    return np.round(rows * (127.0 / peaks)).astype(np.int8).tobytes()


def compact_many(texts_states: "Sequence[np.ndarray]", dims: int | None = None) -> list[bytes]:
    """``compact`` of each text's states, the same bytes, with one numpy pass over a group of texts'
    tokens (``COMPACT_GROUP`` rows at most) for everything but the projection: the norms, scalings
    and rounding work row by row, so a row's result does not depend on its neighbours; a matrix
    product's rounding can depend on the rows multiplied together (BLAS blocks them), so each text
    keeps its own product.

    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> texts = [rng.standard_normal((n, 16)).astype(np.float32) for n in (1, 2, 3, 7)]
    >>> compact_many(texts, 8) == [compact(s, 8) for s in texts]
    True
    """
    out: list[bytes] = []
    group: list["np.ndarray"] = []
    rows = 0
    for states in texts_states:
        if group and rows + len(states) > COMPACT_GROUP:
            out += _compact_group(group, dims or TOKEN_DIMS)
            group, rows = [], 0
        group.append(content_tokens(states))
        rows += len(states)
    if group:
        out += _compact_group(group, dims or TOKEN_DIMS)
    return out


def _compact_group(content: "list[np.ndarray]", dims: int) -> list[bytes]:
    import numpy as np

    ends = np.cumsum([len(c) for c in content]).tolist()
    tokens = unit_rows(np.concatenate(content))
    width = tokens.shape[1]
    if dims < width:
        basis = projection(width, dims)
        projected_rows = np.empty((len(tokens), dims), dtype=np.float32)
        start = 0
        for end in ends:
            np.matmul(tokens[start:end], basis, out=projected_rows[start:end])
            start = end
        tokens = unit_rows(projected_rows)
    peaks = np.abs(tokens).max(axis=1, keepdims=True)
    peaks[peaks == 0] = 1.0
    blob = np.round(tokens * (127.0 / peaks)).astype(np.int8).tobytes()
    step = tokens.shape[1]
    return [blob[a * step : b * step] for a, b in zip([0, *ends[:-1]], ends)]


def expand(blob: bytes, dims: int | None = None) -> "np.ndarray":
    """The unit rows ``compact`` stored, float32 ``(tokens, dims)``."""
    import numpy as np

    return unit_rows(np.frombuffer(blob, dtype=np.int8).reshape(-1, dims or TOKEN_DIMS).astype(np.float32))

"""Process-wide settings for the libraries underneath, applied once by entry points (CLI, benches)."""

from __future__ import annotations

import os


def limit_blas_threads() -> None:
    """Run numpy's BLAS single-threaded unless the user chose otherwise.

    mem's matrix work is matrix-vector products over at most a few hundred thousand rows. On two
    shared cores, OpenBLAS's thread pool made each product 10x slower (10 ms against 1 ms for
    3k x 512 under load) instead of faster. Must run before numpy is first imported.
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")

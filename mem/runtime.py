"""Process-wide settings for the libraries underneath, applied once by entry points (CLI, benches)."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator


def limit_blas_threads() -> None:
    """Run numpy's BLAS single-threaded unless the user chose otherwise.

    mem's matrix work is matrix-vector products over at most a few hundred thousand rows. On two
    shared cores, OpenBLAS's thread pool made each product 10x slower (10 ms against 1 ms for
    3k x 512 under load) instead of faster. Must run before numpy is first imported.
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back for the duration, then raise it as ``KeyboardInterrupt`` at the end.

    A batch commits a chunk and then hands its outcomes on; an interrupt landing between the two
    (during the COMMIT itself, most often) would leave a chunk stored but unreported. Held across
    both, it can only land before the transaction (rolled back) or after the chunk is reported.
    Signal handlers belong to the main thread: elsewhere (the MCP server's writer) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def clear_reader_caches() -> None:
    """Empty every ``lru_cache`` of the text readers and scorers (mem.enrich, mem.score) loaded here.

    Benches and tests that flip an ablation switch (``aligned.SIBLINGS``) in one process must not meet
    results cached under the other setting; the readers cache at several levels (a pair's verdict, a
    text's clauses and words), and naming each cache at each call breaks silently when a module adds one.
    """
    import sys

    for name, module in list(sys.modules.items()):
        if name.startswith(("mem.enrich.", "mem.score.")):
            for obj in list(vars(module).values()):
                if callable(getattr(obj, "cache_clear", None)):
                    obj.cache_clear()


class Kept(dict):  # type: ignore[type-arg]
    """A dict of at most ``size`` entries: ``keep`` drops the oldest one put when it is full.

    For results recomputed on demand (a text's token offsets, its word vectors) that a pass asks for
    again a few times and then never: first in, first out is enough there, and a dict lookup is all a
    hit costs, where ``lru_cache`` cannot key on what it is not passed.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def keep(self, key: Any, value: Any) -> Any:
        """Put ``value`` under ``key`` (dropping the oldest entry when full) and return it."""
        if len(self) >= self.size:
            del self[next(iter(self))]
        self[key] = value
        return value

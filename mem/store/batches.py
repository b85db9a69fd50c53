"""Lookups by many keys, a batch at a time: one ``IN (?, ?, ...)`` list per batch.

SQLite binds at most 32,766 parameters a statement (999 before 3.32) and a long IN list is slow to plan on
both backends, so every lookup by a list of ids, rowids or entity ids goes ``BATCH`` keys at a time.

>>> [list(chunk) for chunk in chunks([1, 2, 3], size=2)]
[[1, 2], [3]]
>>> marks(3)
'?,?,?'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

BATCH = 500
T = TypeVar("T")


def chunks(values: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """``values`` in consecutive slices of ``size`` (the last one shorter)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def marks(n: int) -> str:
    """``n`` placeholders for an IN list: "?,?,?"."""
    return ",".join("?" * n)


def in_lists(values: Sequence[Any], size: int = BATCH) -> Iterator[tuple[Sequence[Any], str]]:
    """Each batch of ``values`` with its placeholders: ``for chunk, marks in in_lists(ids): ... IN ({marks})``."""
    for chunk in chunks(values, size):
        yield chunk, marks(len(chunk))

"""``mem.runtime.Kept``: the bounded store of recomputable results (token offsets, word vectors)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mem.runtime import Kept


@given(st.lists(st.integers(), unique=True), st.integers(1, 5))
def test_it_holds_the_newest_size_entries_put(keys: list[int], size: int) -> None:
    kept = Kept(size)
    for key in keys:
        assert kept.keep(key, -key) == -key
    assert list(kept.items()) == [(key, -key) for key in keys[-size:]]

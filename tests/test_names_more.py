"""Search ranks the newer of two close neighbours first when the question names every word the older names
and more that only the newer has (``contradiction.NAMES_MORE``): the question says which of two versions or
siblings it asks about. The move is made on a crowded page, where fusion can put the older first; in a store
of two, fusion already ranks the one naming more first, and the rule leaves that order alone (CLI)."""

from __future__ import annotations

import pytest

from tests.conftest import added_then_asked

MINILM = {"MEM_EMBEDDER": "minilm"}
OLDER = "Checkout service errors are reported to Sentry."
NEWER = "On the staging cluster, checkout service errors are only printed to the pod logs."


def _page(close: float = 0.6) -> tuple[list, dict]:
    import numpy as np

    from mem.records import Hit, Memory

    hits = [Hit(memory=Memory(id=i, text=t, created_at=at), rank=r, score=1.0 / r, why={})
            for r, (i, t, at) in enumerate([("old", OLDER, "2026-05-01T09:00:00Z"),
                                            ("new", NEWER, "2026-05-02T09:00:00Z")], start=1)]
    return hits, {"old": np.array([1.0, 0.0]), "new": np.array([close, (1 - close * close) ** 0.5])}


@pytest.mark.parametrize("names_more", [True, False])
def test_the_newer_naming_more_of_the_question_moves_above_the_older(names_more: bool, monkeypatch) -> None:
    from mem.score import contradiction

    monkeypatch.setattr(contradiction, "NAMES_MORE", names_more)
    hits, vectors = _page()
    out = contradiction.newer_first(hits, contradiction.current_pairs(hits, "where do checkout errors go on staging", vectors),
                                    key="current")
    assert [h.memory.id for h in out] == (["new", "old"] if names_more else ["old", "new"])
    if names_more:
        assert out[0].why["current"]["over"] == "old" and "naming more" in out[0].why["current"]["reason"]
        assert "stag" in out[0].why["current"]["reason"]  # the question's word only the newer names


def test_a_question_naming_only_what_both_say_or_far_neighbours_move_nothing() -> None:
    from mem.score import contradiction

    hits, vectors = _page()
    assert contradiction.current_pairs(hits, "where do checkout errors go", vectors) == []
    hits, far = _page(close=0.5)  # below ``NEAR``: not close neighbours
    assert contradiction.current_pairs(hits, "where do checkout errors go on staging", far) == []


def test_in_a_store_of_two_the_order_fusion_gives_stands(monkeypatch) -> None:
    from mem.stages import supersede

    monkeypatch.setattr(supersede, "JUDGE", False)  # no contradicts edge: only fusion and the page rules order them
    older, newer, hits = added_then_asked(OLDER, NEWER, "where do checkout errors go on staging", env=MINILM)
    assert "supersedes" not in newer
    assert [h["id"] for h in hits][:2] == [newer["id"], older["id"]]
    older_hits = added_then_asked(OLDER, NEWER, "are checkout errors reported to sentry", env=MINILM)[2]
    assert older_hits[0]["text"] == OLDER  # the question names the older's own word: it stays first

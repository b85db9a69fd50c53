"""Search ranks the newer of two close neighbours first when it tells a change of the older that no value
reader types: it names an old value the older states ("Intercom is gone") or says what holds now; a
neighbour telling some other change of the subject does not move. CLI through the real entry point."""

from __future__ import annotations

import pytest

from tests.conftest import added_then_asked

MINILM = {"MEM_EMBEDDER": "minilm"}

OLDER_CHAT = "Support chat runs on Intercom, embedded below each help article."
NEWER_CHAT = ("Intercom is gone from the site; conversations go to our self-hosted Chatwoot instance at "
              "chat.lumenhq.io.")


def test_search_ranks_a_close_neighbour_that_names_the_old_value_as_gone_above_it() -> None:
    # intake sees the change but too few shared words to supersede it or open a contradicts edge (cosine .62);
    # search puts the newer first and says why
    older, newer, hits = added_then_asked(OLDER_CHAT, NEWER_CHAT, "what do we use for support chat", env=MINILM)
    assert "supersedes" not in newer
    assert [h["id"] for h in hits][:2] == [newer["id"], older["id"]]
    assert hits[0]["why"]["current"]["over"] == older["id"] and "intercom" in hits[0]["why"]["current"]["reason"]


def _pairs(older: str, newer: str, asked: str) -> list[tuple[str, str, str]]:
    import numpy as np

    from mem.records import Hit, Memory
    from mem.score import contradiction

    hits = [Hit(memory=Memory(id=i, text=t, created_at=at), rank=r, score=1.0 / r, why={})
            for r, (i, t, at) in enumerate([("old", older, "2026-05-01T09:00:00Z"),
                                            ("new", newer, "2026-05-02T09:00:00Z")], start=1)]
    close = {"old": np.array([1.0, 0.0]), "new": np.array([0.6, 0.8])}  # cosine .6
    return contradiction.current_pairs(hits, asked, close)


@pytest.mark.parametrize("near_change", [True, False])
def test_a_close_neighbour_telling_a_change_ranks_first_only_with_near_change(near_change: bool, monkeypatch) -> None:
    from mem.score import contradiction

    monkeypatch.setattr(contradiction, "NEAR_CHANGE", near_change)
    pairs = _pairs(OLDER_CHAT, NEWER_CHAT, "what do we use for support chat")
    assert [p[:2] for p in pairs] == ([("new", "old")] if near_change else [])
    # a marker of what holds now, with no value typed ("six" counts nothing known)
    pairs = _pairs("Study rooms are capped at 4 students, matching the tables.",
                   "With the new furniture, study rooms can now hold up to six people.", "how many fit in a study room")
    assert [p[:2] for p in pairs] == ([("new", "old")] if near_change else [])


def test_a_close_neighbour_telling_another_change_of_the_subject_does_not_move(monkeypatch) -> None:
    from mem.score import contradiction

    # a verb of change alone ("drop to", "replace") names no old value of the older and no marker of what holds
    # now (the first newer names "research", which the question asks and the older lacks: ``NAMES_MORE``, off here)
    monkeypatch.setattr(contradiction, "NAMES_MORE", False)
    assert _pairs("Compute credits per team are 300 a month from April, after the budget review.",
                  "The budget review left the research team's credits alone, only the product teams drop to 300.",
                  "credits budget for the research team") == []
    assert _pairs("To enrol a sensor: scan its QR label, then `sensorctl enrol <id> --site <site>`.",
                  "Replacing a sensor in the field: `sensorctl swap <old-id> <new-id>` moves its history over.",
                  "how do I enrol a sensor") == []

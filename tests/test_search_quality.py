"""Retrieval-quality steps: speaker-aware matching, scene expansion limited to dialogue turns, and
the semantic weight that follows how peaked the dense ranking is (figures: bench/README.md)."""

from __future__ import annotations

import pytest

from mem.score.fusion import peak_factor
from mem.score.speaker import self_referring, speaker_factors, speaker_of, wanted_speakers
from tests.conftest import add_records as add, jsonl, run_mem, search_records as search


# ------------------------------------------------------------------------------------ pure parts
@pytest.mark.parametrize("text, expected", [
    ("Melanie: I painted a lake last week", "Melanie"),
    ("Dr. Who: hello there", "Dr. Who"),
    ("Mary Ann: we went camping", "Mary Ann"),
    ("API rate limit: 100 requests per minute", None),  # a label, not a name
    ("Local dev: `docker compose up`", None),
    ("melanie: lower case is not a speaker", None),
    ("no prefix at all", None),
])
def test_speaker_prefix_must_look_like_a_name(text, expected):
    assert speaker_of(text) == expected


def test_speaker_factors_discount_only_the_other_speakers():
    texts = {1: "Melanie: I painted a sunset", 2: "Caroline: I love that", 3: "A note without a speaker"}
    assert speaker_factors("What did Melanie paint?", texts, 0.2) == {2: 0.8}
    # Naming both speakers, none of them, or a speaker in lower case changes nothing.
    assert speaker_factors("What did Melanie and Caroline paint?", texts, 0.2) == {}
    assert speaker_factors("What was painted?", texts, 0.2) == {}
    assert speaker_factors("what did melanie paint?", texts, 0.2) == {}
    assert wanted_speakers("Is that Melanie's painting?", texts) == {"Melanie"}  # possessive counts


@pytest.mark.parametrize("text, expected", [
    ("Melanie: I painted a lake", True),
    ("Melanie: We're off camping, join us!", True),
    ("Melanie: my kids loved it", True),
    ("Melanie: Wow, that's so cool! What did you paint?", False),
    ("Irene: Nice one", False),  # the speaker's own name is not a pronoun
])
def test_self_referring_looks_for_first_person_words_after_the_prefix(text, expected):
    assert self_referring(text) is expected


def test_speaker_factors_also_discount_turns_not_in_the_first_person():
    texts = {1: "Melanie: I painted a sunset", 2: "Melanie: Wow, so cool!", 3: "Caroline: I love that",
             4: "Caroline: Nice!", 5: "A note without a speaker"}
    assert speaker_factors("What did Melanie paint?", texts, 0.2, self_penalty=0.25) == {2: 0.75, 3: 0.8, 4: 0.6}
    assert speaker_factors("What was painted?", texts, 0.2, self_penalty=0.25) == {}  # no speaker named


def test_peak_factor_trusts_a_peaked_ranking_more_than_a_flat_one():
    peaked = {1: 0.70, 2: 0.40, 3: 0.39, 4: 0.38, 5: 0.37}
    flat = {1: 0.41, 2: 0.40, 3: 0.40, 4: 0.39, 5: 0.39}
    assert peak_factor(peaked, ref=0.1, low=0.5, high=2.0) == 2.0
    assert peak_factor(flat, ref=0.1, low=0.5, high=2.0) == 0.5
    assert peak_factor({1: 0.9}, ref=0.1, low=0.5, high=2.0) == 1.0  # too few candidates to tell


# ------------------------------------------------------------------------------- through the CLI
def test_query_naming_a_speaker_prefers_that_speakers_turns():
    ids = add(
        {"text": "Caroline: Melanie, I find hiking great", "created_at": "2023-05-08T13:00:00Z"},  # first person
        {"text": "Melanie: I went hiking at the lake", "created_at": "2023-05-09T13:00:00Z"},
        {"text": "The outdoor shop sells hiking boots, tents, stoves and rain jackets at a discount"},
        *({"text": f"Unrelated note {i} about watering tomatoes"} for i in range(4)),
    )
    hits = search("Where did Melanie go hiking?", "--channel", "bm25", "--channel", "speaker")
    assert hits[0]["id"] == ids[1]
    other = next(h for h in hits if h["id"] == ids[0])
    assert other["why"]["speaker"] == {"factor": 0.8}
    assert "speaker" not in hits[0]["why"]
    # Without the step the other speaker's shorter turn comes first.
    plain = search("Where did Melanie go hiking?", "--channel", "bm25")
    assert plain[0]["id"] == ids[0] and all("speaker" not in h["why"] for h in plain)


def test_scene_expansion_leaves_facts_of_one_work_session_alone():
    ids = add(*({"text": t, "kind": "fact", "meta": {"session": "s1"}, "created_at": f"2026-03-02T10:0{i}:00Z"}
                for i, t in enumerate(["The invoice PDFs are rendered with WeasyPrint",
                                       "Staging deploys run from the main branch",
                                       "Lena owns the onboarding flow"])),
              *({"text": f"Unrelated note {i} about watering tomatoes"} for i in range(3)))
    hits = search("WeasyPrint", "-k", "3", "--channel", "bm25", "--channel", "scene")
    assert hits[0]["id"] == ids[0]
    assert ids[1] not in {h["id"] for h in hits} and all("scene" not in h["why"] for h in hits)


def test_full_search_explains_the_speaker_step():
    add(*({"text": f"{who}: I {verb} on the weekend", "meta": {"session": "chat"},
           "created_at": f"2023-06-0{i + 1}T10:00:00Z"}
          for i, (who, verb) in enumerate([("Caroline", "paint landscapes"), ("Melanie", "paint pottery"),
                                           ("Caroline", "read novels"), ("Melanie", "go camping")])))
    first = search("What does Melanie paint?")
    assert first[0]["text"].startswith("Melanie:")
    assert any(h["why"].get("speaker") for h in first if h["text"].startswith("Caroline:"))


def test_turns_in_the_first_person_win_when_the_query_names_the_speaker():
    ids = add(
        {"text": "Melanie: Wow, camping at the lake!", "created_at": "2023-05-08T13:00:00Z"},
        {"text": "Melanie: We went camping at the lake", "created_at": "2023-05-09T13:00:00Z"},
        {"text": "Caroline: I bought a new tent for camping", "created_at": "2023-05-09T13:05:00Z"},
        *({"text": f"Unrelated note {i} about watering tomatoes"} for i in range(4)),
    )
    query = "What does Melanie do when camping?"
    plain = search(query, "--channel", "bm25")
    assert plain[0]["id"] == ids[0]  # BM25 alone: the exclamation is one word shorter
    hits = search(query, "--channel", "bm25", "--channel", "speaker")
    assert hits[0]["id"] == ids[1]
    assert next(h for h in hits if h["id"] == ids[0])["why"]["speaker"] == {"factor": 0.75}


def test_open_domain_questions_discount_the_other_speakers_more():
    ids = add(
        {"text": "Melanie: I love camping with my family", "created_at": "2023-05-08T13:00:00Z"},
        {"text": "Caroline: I went camping once", "created_at": "2023-05-09T13:00:00Z"},
        *({"text": f"Unrelated note {i} about watering tomatoes"} for i in range(4)),
    )
    factual = search("Where did Melanie go camping?", "--channel", "bm25", "--channel", "speaker")
    assert next(h for h in factual if h["id"] == ids[1])["why"]["speaker"] == {"factor": 0.8}
    hits = search("Would Melanie enjoy camping?", "--channel", "bm25", "--channel", "speaker")
    other = next(h for h in hits if h["id"] == ids[1])
    assert other["why"]["query_type"] == "open-domain" and other["why"]["speaker"] == {"factor": 0.5}

"""The learned judge of what replaces what (``mem.score.replaces``): its features and probability over any
text, and what intake does with its verdict through the CLI (MiniLM: it reads token states)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}


def _side(text: str, kind: str = "fact", at: str = "2026-01-01T00:00:00Z"):
    from mem.score import replaces

    return replaces.Side(text, kind, at, None)


@settings(max_examples=60, deadline=None)
@given(newer=st.text(max_size=120), older=st.text(max_size=120), cos=st.floats(0.5, 1.0), rank=st.integers(1, 8),
       other=st.floats(0.0, 1.0), kind=st.sampled_from(["fact", "correction", "note", "episode", "decision"]))
def test_features_are_finite_and_the_probability_a_probability_for_any_text(newer, older, cos, rank, other, kind) -> None:
    from mem.enrich import corrections
    from mem.score import replaces, replaces_model

    found = replaces.features(_side(newer, kind, "2026-03-01T00:00:00Z"), _side(older), cos, rank, other,
                              corrections.read(newer, kind))
    assert set(replaces_model.FEATURES) <= set(found)
    assert all(math.isfinite(v) for v in found.values())
    assert 0.0 <= replaces.probability(found) <= 1.0


def test_the_probability_is_the_logistic_of_the_standardised_weighted_sum() -> None:
    from mem.score import replaces

    model = SimpleNamespace(FEATURES=("cos", "gap"), MEAN=(0.5, 0.0), SCALE=(0.1, 1.0), WEIGHTS=(2.0, -1.0), BIAS=0.5)
    # z = 0.5 + 2 * (0.7 - 0.5) / 0.1 - 1 * 0.3 = 4.2
    assert replaces.probability({"cos": 0.7, "gap": 0.3}, model) == pytest.approx(1 / (1 + math.exp(-4.2)))
    assert replaces.probability({"cos": 0.5, "gap": 0.5}, model) == pytest.approx(0.5)
    assert replaces.probability({"cos": -1e6, "gap": 0.0}, model) == 0.0


def test_a_pair_judged_with_words_aligned_by_token_states_reads_the_swap() -> None:
    import numpy as np

    from mem.score import replaces

    def words(names: list[str], values: list[bool], rows: list[list[float]]):
        vectors = np.array(rows, dtype=np.float32)
        return replaces.Words(names, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), np.array(values))

    older = words(["loki", "keeps", "logs", "30"], [False, False, False, True], [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    newer = words(["loki", "holds", "logs", "14"], [False, False, False, True], [[1, 0, 0], [0, 1, 0.1], [0, 0, 1], [1, -1, 0]])
    found = replaces._alignment(newer, older)
    assert found["cover_o"] == 0.75 and found["frame"] == 1.0  # "holds" told "keeps" again by its state; 30 is not
    assert found["cover_n"] == 0.75 and found["new_value"] == 1.0  # 14 is the newer's own value


OLDER_ETL = "The nightly ETL job starts at 02:00 UTC and loads the orders warehouse."
NEWER_ETL = "The nightly ETL kicks off at 23:30 UTC."  # no change word, no shared value: no rule reads it


def _added(older: str, newer: str) -> tuple[dict, dict]:
    first = run_mem("add", older, "--now", "2026-01-05T09:00:00Z", env=MINILM).records[0]
    second = run_mem("add", newer, "--now", "2026-03-20T09:00:00Z", env=MINILM).records[0]
    return first, second


def _open(newer_id: str) -> list[str]:
    found = run_mem("verify", "--now", "2026-03-21T09:00:00Z", env=MINILM).records
    return [r["other"] for r in found if r.get("finding") == "contradiction" and r["id"] == newer_id]


@pytest.mark.parametrize("judge", [True, False])
def test_an_update_no_rule_reads_gets_an_open_contradiction_and_ranks_first(judge: bool, monkeypatch) -> None:
    from mem.stages import supersede

    monkeypatch.setattr(supersede, "JUDGE", judge)
    older, newer = _added(OLDER_ETL, NEWER_ETL)
    assert "supersedes" not in newer  # below the judge's superseding probability
    assert _open(newer["id"]) == ([older["id"]] if judge else [])
    hits = run_mem("search", "when does the nightly ETL start", "--now", "2026-03-21T09:00:00Z", env=MINILM).records
    ids = [h["id"] for h in hits]
    if judge:
        assert ids.index(newer["id"]) < ids.index(older["id"])
        assert hits[ids.index(newer["id"])]["why"]["contradicts"]["over"] == older["id"]
    else:
        assert all("contradicts" not in h["why"] for h in hits)


def test_the_judge_supersedes_at_its_superseding_probability(monkeypatch) -> None:
    from mem.score import replaces

    monkeypatch.setattr(replaces, "SUPERSEDE", replaces.CONTRADICTS)
    older, newer = _added(OLDER_ETL, NEWER_ETL)
    assert newer["supersedes"] == [older["id"]]
    assert _open(newer["id"]) == []
    # mem get --explain says the pair model replaced it, and how sure it was
    explained = run_mem("get", "--explain", older["id"], "--json", "--now", "2026-03-21T09:00:00Z", env=MINILM).records[0]
    assert explained["explain"]["superseded"]["reason"].startswith("judged a replacement by the pair model (p 0.")
    hits = run_mem("search", "when does the nightly ETL start", "--now", "2026-03-21T09:00:00Z", env=MINILM).records
    assert older["id"] not in [h["id"] for h in hits]


def test_the_hash_embedder_has_no_token_states_and_the_judge_decides_nothing(monkeypatch) -> None:
    from mem.score import replaces

    monkeypatch.setattr(replaces, "observed", [])
    env = {"MEM_EMBEDDER": "hash"}
    run_mem("add", OLDER_ETL, "--now", "2026-01-05T09:00:00Z", env=env)
    newer = run_mem("add", "The nightly ETL job starts at 23:30 UTC and loads the orders warehouse.",
                    "--now", "2026-03-20T09:00:00Z", env=env).records[0]
    assert replaces.observed == []
    assert newer["status"] == "added"


def test_the_gap_counts_no_other_neighbour_below_gap_from(monkeypatch) -> None:
    # each judged pair's gap is its cosine less the best other neighbour's, counting none below GAP_FROM: the
    # Kafka pair alone (.42) gets cos - .5, the ETL update's two olders each the other's cosine when above .5
    from mem.score import replaces

    monkeypatch.setattr(replaces, "observed", [])
    run_mem("add", OLDER_KAFKA, "--now", "2026-01-05T09:00:00Z", env=MINILM)
    run_mem("add", NEWER_KAFKA, "--now", "2026-03-20T09:00:00Z", env=MINILM)
    run_mem("add", OLDER_ETL, "--now", "2026-03-21T09:00:00Z", env=MINILM)
    run_mem("add", "The nightly ETL job writes its logs to the etl-logs bucket.", "--now", "2026-03-22T09:00:00Z", env=MINILM)
    run_mem("add", NEWER_ETL, "--now", "2026-04-20T09:00:00Z", env=MINILM)
    by_newer: dict[str, list[dict]] = {}
    for newer, _, found, _ in replaces.observed:
        by_newer.setdefault(newer, []).append(found)
    assert len(by_newer) >= 2 and any(len(pairs) == 1 for pairs in by_newer.values())
    for pairs in by_newer.values():
        for i, found in enumerate(pairs):
            others = [other["cos"] for j, other in enumerate(pairs) if j != i]
            assert found["gap"] == pytest.approx(found["cos"] - max([*others, replaces.GAP_FROM]))


def _contradictions_eager_and_bulk(tmp_path, records: list[dict]) -> dict[str, list[tuple[int, int]]]:
    """The open contradictions (newer, older by their place in ``records``) after eager and after bulk intake."""
    from tests.conftest import jsonl

    edges = {}
    for mode in ("eager", "bulk"):
        env = {**MINILM, "MEM_DB": str(tmp_path / f"{mode}.db")}
        args = ["add", "-", "--now", "2026-04-02T09:00:00Z"] + (["--bulk"] if mode == "bulk" else [])
        ids = [r["id"] for r in run_mem(*args, input=jsonl(*records), env=env).records]
        found = run_mem("verify", "--now", "2026-04-02T09:00:00Z", env=env).records
        edges[mode] = sorted((ids.index(r["id"]), ids.index(r["other"])) for r in found if r.get("finding") == "contradiction")
    return edges


# the ETL start time and its update, with look-alikes: its logs bucket, and the product pages' CDN time and its update
ETL_AND_CDN = [{"text": OLDER_ETL, "created_at": "2026-01-05T09:00:00Z"},
               {"text": "The nightly ETL job writes its logs to the etl-logs bucket.", "created_at": "2026-01-06T09:00:00Z"},
               {"text": NEWER_ETL, "created_at": "2026-03-20T09:00:00Z"},
               {"text": "We cache product pages at the CDN for 10 minutes.", "created_at": "2026-01-07T09:00:00Z"},
               {"text": "Product pages are cached at the edge for an hour.", "created_at": "2026-04-01T09:00:00Z"}]


@pytest.mark.parametrize("arrival", [
    # in order: the finishing pass meets each memory with the neighbours eager intake found (stored before it)
    (0, 1, 2, 3, 4),
    # out of order, the corrections first: the back judgement of each old fact reads its newer neighbours'
    # neighbourhoods up to it, in eager and in bulk intake alike
    (2, 4, 0, 1, 3),
])
def test_the_judge_gives_the_same_verdicts_eager_and_bulk(tmp_path, arrival: tuple[int, ...]) -> None:
    records = [ETL_AND_CDN[i] for i in arrival]
    edges = _contradictions_eager_and_bulk(tmp_path, records)
    assert edges["eager"] == edges["bulk"]
    # the ETL update over the start time it changes, not over the logs bucket
    assert (records.index(ETL_AND_CDN[2]), records.index(ETL_AND_CDN[0])) in edges["eager"]


def test_a_judged_text_dropped_from_the_kept_words_is_read_again(monkeypatch) -> None:
    # one text kept: the second memory's words are kept when the third arrives, and keeping the third's drops them
    from mem.runtime import Kept
    from mem.score import replaces

    monkeypatch.setattr(replaces, "_kept", Kept(1))
    monkeypatch.setattr(replaces, "observed", [])
    older = run_mem("add", OLDER_ETL, "--now", "2026-01-05T09:00:00Z", env=MINILM).records[0]
    run_mem("add", "The nightly ETL job writes its logs to the etl-logs bucket.", "--now", "2026-01-06T09:00:00Z", env=MINILM)
    newer = run_mem("add", NEWER_ETL, "--now", "2026-03-20T09:00:00Z", env=MINILM).records[0]
    assert len({o for n, o, _, _ in replaces.observed if n == newer["id"]}) == 2  # both judged
    assert older["id"] in _open(newer["id"])


@pytest.mark.parametrize("how", ["import", "add"])
def test_an_old_fact_arriving_after_its_update_is_judged_as_if_in_order(how: str, monkeypatch) -> None:
    # the import of old data meets no older neighbour: its newer neighbour judges it, as it would have on arrival
    from mem.score import replaces
    from tests.conftest import jsonl

    monkeypatch.setattr(replaces, "observed", [])
    newer = run_mem("add", NEWER_ETL, "--now", "2026-03-20T09:00:00Z", env=MINILM).records[0]
    done = run_mem(how, "-", "--now", "2026-03-21T09:00:00Z", env=MINILM,
                   input=jsonl({"text": OLDER_ETL, "created_at": "2026-01-05T09:00:00Z"}))
    assert done.code == 0
    older = run_mem("list", "--status", "all", "--json", env=MINILM).records
    older_id = next(r["id"] for r in older if r["text"] == OLDER_ETL)
    assert [(n, o) for n, o, _, _ in replaces.observed] == [(newer["id"], older_id)]
    assert _open(newer["id"]) == [older_id]
    hits = run_mem("search", "when does the nightly ETL start", "--now", "2026-03-21T09:00:00Z", env=MINILM).records
    ids = [h["id"] for h in hits]
    assert ids.index(newer["id"]) < ids.index(older_id)


_VOCAB = ["loki", "keeps", "holds", "logs", "30", "14", "days", "port", "8080", "API"]


@st.composite
def _words(draw, empty: bool = True):
    """Judged words (``replaces.Words``) over a small vocabulary, so texts share words, with vectors whose
    cosines often sit near ``ALIKE``; None (no token states) or no words at all when ``empty``."""
    import numpy as np

    from mem.score import replaces

    if empty and draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from([None, replaces.Words([], np.zeros((0, 3), dtype=np.float32), np.zeros(0, dtype=bool))]))
    names = draw(st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=7, unique=True))
    rows = draw(st.lists(st.lists(st.sampled_from([0.0, 0.1, 0.5, 0.75, 1.0, -0.3]), min_size=3, max_size=3)
                         .filter(any), min_size=len(names), max_size=len(names)))
    vectors = np.array(rows, dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return replaces.Words(names, vectors, np.array(draw(st.lists(st.booleans(), min_size=len(names), max_size=len(names)))))


@settings(max_examples=200, deadline=None)
@given(newer=_words(), olders=st.lists(_words(), max_size=8))
def test_the_alignments_of_all_pairs_at_once_are_each_pairs_alone(newer, olders) -> None:
    from mem.score import replaces

    assert replaces.alignments(newer, olders) == [replaces._alignment(newer, older) for older in olders]


_SAID = ["The", "nightly", "ETL", "job", "starts", "kicks", "off", "at", "02:00", "23:30", "UTC", "Loki", "keeps",
         "holds", "logs", "for", "30", "14", "days", "now", "not", "raised", "from", "to", "plan", "API", "port", "8080"]


@st.composite
def _text_and_words(draw):
    """A text of ``_SAID``'s words and its judged words (``replaces._plain``) with vectors drawn from a few
    directions (cosines of 1, about .8, or less), or none (``words_of`` without token states)."""
    import numpy as np

    from mem.score import replaces

    text = " ".join(draw(st.lists(st.sampled_from(_SAID), max_size=9)))
    plain = replaces._plain(text)
    if draw(st.integers(0, 6)) == 0:
        return text, replaces.Words([], np.zeros((0, 3), dtype=np.float32), np.zeros(0, dtype=bool))
    palette = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0.6, 0.8], [0, 0, 1], [0.6, 0, 0.8]], dtype=np.float32)
    rows = palette[draw(st.lists(st.integers(0, 5), min_size=len(plain.words), max_size=len(plain.words)))]
    return text, replaces.Words(plain.words, rows.reshape(len(plain.words), 3), np.array(plain.values, dtype=bool))


@settings(max_examples=300, deadline=None)
@given(newer=_text_and_words(), kind=st.sampled_from(["fact", "correction", "note"]), days=st.integers(0, 400),
       olders=st.lists(st.tuples(_text_and_words(), st.floats(0.5, 1.0)), min_size=1, max_size=8),
       at=st.sampled_from([None, 0.05, 0.3, 0.6, 0.9415, 0.999]))
def test_judging_a_memorys_pairs_at_once_leaves_only_what_cannot_act(newer, kind, days, olders, at) -> None:
    # every pair judged is made as ``features`` and ``probability`` make it alone; a pair left out could not
    # have reached ``at``; the words are asked for once, for the pairs judged
    from mem.enrich import corrections
    from mem.score import replaces

    (text, words), at_newer = newer, f"2026-{1 + days // 31 % 12:02d}-{1 + days % 28:02d}T00:00:00Z"
    reading = corrections.read(text, kind)
    sides = [replaces.Side(older, "fact", "2025-12-31T00:00:00Z", its) for (older, its), _ in olders]
    pairs = [(side, cos, rank, max((c for j, (_, c) in enumerate(olders) if j != rank - 1), default=replaces.FLOOR))
             for rank, (side, (_, cos)) in enumerate(zip(sides, olders), start=1)]
    nears = replaces.around([(side.created_at, cos) for side, cos, *_ in pairs])
    asked = []

    def read(needed):
        asked.append(needed)
        return words, [sides[i].words for i in needed]

    got = replaces.judge(replaces.Side(text, kind, at_newer, None),
                         [(s._replace(words=None), *rest, near) for (s, *rest), near in zip(pairs, nears)], reading, read, at)
    whole = replaces.Side(text, kind, at_newer, words)
    for (side, cos, rank, best), near, verdict in zip(pairs, nears, got):
        alone = replaces.features(whole, side, cos, rank, best, reading, near=near)
        if verdict is None:
            assert at is not None and replaces.probability(alone) < at
        else:
            assert verdict == (alone, replaces.probability(alone))
            assert list(verdict[0]) == list(alone)  # the features in their order (the bench fits columns by it)
    assert asked == ([[i for i, v in enumerate(got) if v is not None]] if any(v is not None for v in got) else [])
    if at is None:
        assert None not in got


@settings(max_examples=300, deadline=None)
@given(newer=_text_and_words(), older=_text_and_words(), kind=st.sampled_from(["fact", "correction", "note"]),
       days=st.integers(0, 400), cos=st.floats(0.35, 1.0), rank=st.integers(1, 8), best=st.floats(0.0, 1.0),
       at=st.sampled_from([0.05, 0.3, 0.6, 0.9415]))
def test_a_pair_the_back_judgement_leaves_cannot_act_wherever_it_stands(newer, older, kind, days, cos, rank, best,
                                                                         at) -> None:
    # may_act is False only when no rank and no best other cosine lets the pair reach ``at``
    from mem.enrich import corrections
    from mem.score import replaces

    (text, words), (older_text, older_words) = newer, older
    at_newer = f"2026-{1 + days // 31 % 12:02d}-{1 + days % 28:02d}T00:00:00Z"
    reading = corrections.read(text, kind)
    side = replaces.Side(older_text, "fact", "2025-12-31T00:00:00Z", older_words)
    if not replaces.may_act(replaces.Side(text, kind, at_newer, None), side._replace(words=None), cos, reading, at):
        found = replaces.features(replaces.Side(text, kind, at_newer, words), side, cos, rank, best, reading)
        assert replaces.probability(found) < at


def test_an_older_counts_the_later_neighbours_about_as_close_to_the_newer() -> None:
    # the first of a slot's settings has a later one beside it; the newest of the slot none
    from mem.score import replaces

    got = replaces.around([("2026-01-01", 0.70), ("2026-02-01", 0.68), ("2026-03-01", 0.60), ("2025-12-01", 0.62)])
    assert [near["later_near"] for near in got] == [1.0, 0.0, 0.0, 3.0]  # .68 is within .05 of .70, .60 is not
    alone = replaces.features(_side("Loki keeps logs for 14 days.", "fact", "2026-03-01T00:00:00Z"),
                              _side("Loki keeps logs for 30 days."), 0.8, 1, replaces.FLOOR, None)
    assert alone["later_near"] == 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.sampled_from([0.5, 0.55, 0.7, 0.7, 0.9])), max_size=8), st.data())
def test_each_pairs_best_other_cosine_is_the_best_among_the_others(olders, data) -> None:
    from mem.stages.supersede import _best_others

    olders = [(r, sim, None) for r, sim in olders]
    judged = data.draw(st.lists(st.integers(0, max(0, len(olders) - 1)), unique=True).map(sorted)) if olders else []
    assert _best_others(olders, judged, 0.5) == [max((s for o, s, _ in olders if o != olders[i][0]), default=0.5)
                                                 for i in judged]


OLDER_KAFKA = "Kafka runs on Confluent Cloud, a dedicated cluster in us-east-1."
NEWER_KAFKA = "Event streaming runs on Amazon MSK in us-east-1 since the migration weekend."  # cosine .42


@pytest.mark.parametrize("embedder", ["minilm", "hash"])
def test_the_judge_reads_neighbours_below_the_rules_floor(embedder: str, monkeypatch) -> None:
    # a correction worded apart from what it corrects is often still its nearest older neighbour (.42 here):
    # intake looks neighbours up to the judge's floor, so the judge weighs the pair; the rules read only
    # those at NEIGHBOUR_MIN (hash: no judge, and no lookup below the rules' floor)
    from mem.score import replaces
    from mem.stages import supersede

    monkeypatch.setattr(replaces, "observed", [])
    env = {"MEM_EMBEDDER": embedder}
    older = run_mem("add", OLDER_KAFKA, "--now", "2026-01-05T09:00:00Z", env=env).records[0]
    newer = run_mem("add", NEWER_KAFKA, "--now", "2026-03-20T09:00:00Z", env=env).records[0]
    judged = [(n, o, f["cos"]) for n, o, f, _ in replaces.observed]
    if embedder == "minilm":
        assert supersede.NEIGHBOUR_MIN > replaces.FLOOR
        assert [(n, o) for n, o, _ in judged] == [(newer["id"], older["id"])]
        assert replaces.FLOOR <= judged[0][2] < supersede.NEIGHBOUR_MIN
    else:
        assert judged == []

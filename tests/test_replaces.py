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


def test_bulk_intake_judges_as_eager_intake_does(tmp_path) -> None:
    # the finishing pass meets each memory with the neighbours eager intake found (stored before it), so the
    # judge's verdicts, edge by edge, are the same
    from tests.conftest import jsonl

    records = [{"text": OLDER_ETL, "created_at": "2026-01-05T09:00:00Z"},
               {"text": "The nightly ETL job writes its logs to the etl-logs bucket.", "created_at": "2026-01-06T09:00:00Z"},
               {"text": NEWER_ETL, "created_at": "2026-03-20T09:00:00Z"},
               {"text": "We cache product pages at the CDN for 10 minutes.", "created_at": "2026-01-07T09:00:00Z"},
               {"text": "Product pages are cached at the edge for an hour.", "created_at": "2026-04-01T09:00:00Z"}]
    edges = {}
    for mode in ("eager", "bulk"):
        env = {**MINILM, "MEM_DB": str(tmp_path / f"{mode}.db")}
        args = ["add", "-", "--now", "2026-04-02T09:00:00Z"] + (["--bulk"] if mode == "bulk" else [])
        ids = [r["id"] for r in run_mem(*args, input=jsonl(*records), env=env).records]
        found = run_mem("verify", "--now", "2026-04-02T09:00:00Z", env=env).records
        edges[mode] = sorted((ids.index(r["id"]), ids.index(r["other"])) for r in found if r.get("finding") == "contradiction")
    assert edges["eager"] == edges["bulk"]
    assert (2, 0) in edges["eager"]  # the ETL update over the start time it changes, not over the logs bucket


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


def test_an_old_fact_arriving_after_its_update_is_left_to_the_rules(monkeypatch) -> None:
    # the judge judges a memory's older neighbours only: the import of old data meets no older one
    from mem.score import replaces
    from tests.conftest import jsonl

    monkeypatch.setattr(replaces, "observed", [])
    run_mem("add", NEWER_ETL, "--now", "2026-03-20T09:00:00Z", env=MINILM)
    done = run_mem("import", "-", "--now", "2026-03-21T09:00:00Z", env=MINILM,
                   input=jsonl({"text": OLDER_ETL, "created_at": "2026-01-05T09:00:00Z"}))
    assert done.code == 0
    assert replaces.observed == []

"""The page model (``mem.score.page_order``): the first hits ordered by closeness to the question, age
among them and place; episodes and the hits below the window keep their places; only with the embedder
the weights were fitted on."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.records import Hit, Memory
from mem.score import page_order
from tests.conftest import jsonl, open_contradictions, run_mem
from tests.tty import run_tty


def _hit(i: int, kind: str, created: str, text: str = "a memory of some words") -> Hit:
    return Hit(memory=Memory(id=f"m{i}", text=text, kind=kind, created_at=created), rank=i + 1,
               score=1.0 - i / 100, why={"fused": 1.0 - i / 100})


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


pages = st.lists(st.tuples(st.sampled_from(["fact", "decision", "episode", "note"]),
                           st.integers(1, 28), st.integers(1, 30), st.booleans()), min_size=0, max_size=9)


@settings(max_examples=200, deadline=None)
@given(pages, st.integers(0, 2**31 - 1))
def test_a_page_is_reordered_in_place(rows, seed) -> None:
    rng = np.random.default_rng(seed)
    hits = [_hit(i, kind, f"2026-03-{day:02d}T00:00:00Z", " ".join(["w"] * words + (["8017"] if port else [])))
            for i, (kind, day, words, port) in enumerate(rows)]
    vectors = {h.memory.id: _unit(rng.normal(size=8)) for h in hits if rng.random() < 0.9}
    out = page_order.reorder(hits, _unit(rng.normal(size=8)), vectors, "which service is on port 8017")
    assert sorted(h.memory.id for h in out) == sorted(h.memory.id for h in hits)
    assert [h.rank for h in out] == list(range(1, len(hits) + 1))
    assert [h.score for h in out] == [h.score for h in hits]  # scores stay in rank order
    assert out[page_order.WINDOW:] == hits[page_order.WINDOW:]
    for place, h in enumerate(hits[:page_order.WINDOW]):
        if h.memory.kind == "episode" or h.memory.id not in vectors:
            assert out[place] == h  # what the model does not order keeps its place
    before, after = ([h.memory.id for h in page] for page in (hits, out))
    from mem.score.contradiction import NEAR

    created = {h.memory.id: h.memory.created_at for h in hits}
    ordered_ids = [h.memory.id for i, h in enumerate(hits) if i in page_order.movable(hits, vectors)]
    for upper in ordered_ids:  # an older hit never passes a newer close neighbour
        for lower in ordered_ids[ordered_ids.index(upper) + 1:]:
            if created[lower] < created[upper] and float(vectors[lower] @ vectors[upper]) >= NEAR:
                assert after.index(upper) < after.index(lower)
    states = {h.memory.id: "8017" in h.memory.text for h in hits}
    ordered = [h.memory.id for i, h in enumerate(hits) if i in page_order.movable(hits, vectors)]
    for upper in ordered:  # of the hits it orders, one stating the asked number is never passed by one that does not
        for lower in ordered[ordered.index(upper) + 1:]:
            if states[upper] and not states[lower]:
                assert after.index(upper) < after.index(lower)
    for h in out:  # each hit it says it passed was above it and is below it now
        for other in h.why.get("order", {}).get("over", []):
            assert before.index(other) < before.index(h.memory.id) and after.index(other) > after.index(h.memory.id)


def test_a_newer_memory_as_close_to_the_question_goes_first() -> None:
    q = _unit(np.array([1.0, 0.0, 0.0]))
    older, newer = _hit(0, "fact", "2026-01-01T00:00:00Z"), _hit(1, "fact", "2026-02-01T00:00:00Z")
    same = _unit(np.array([0.8, 0.6, 0.0]))
    out = page_order.reorder([older, newer], q, {"m0": same, "m1": same})
    assert [h.memory.id for h in out] == ["m1", "m0"]
    assert out[0].why["order"]["over"] == ["m0"] and out[0].score == older.score
    # ... but not when the older is much the closer
    out = page_order.reorder([older, newer], q, {"m0": q, "m1": _unit(np.array([0.2, 0.98, 0.0]))})
    assert [h.memory.id for h in out] == ["m0", "m1"] and "order" not in out[1].why


def test_episodes_are_never_ordered_by_age() -> None:
    q = _unit(np.array([1.0, 0.0]))
    hits = [_hit(0, "episode", "2026-01-01T00:00:00Z"), _hit(1, "episode", "2026-02-01T00:00:00Z")]
    assert page_order.reorder(hits, q, {"m0": q, "m1": q}) == hits


def test_search_leaves_the_page_alone_with_an_embedder_it_was_not_fitted_on() -> None:
    # the hash embedder's cosines are on another scale: its page is the fused order, with or without the step
    records = [{"text": f"The billing service timeout is {n} seconds.", "created_at": f"2026-0{m}-01T00:00:00Z"}
               for m, n in ((1, 30), (2, 45), (3, 60))]
    assert run_mem("import", "-", input=jsonl(*records)).code == 0
    with_step = run_mem("search", "billing timeout", "--json").records
    without = run_mem("search", "billing timeout", "--json", "--channel=-recency").records
    assert [h["id"] for h in with_step] == [h["id"] for h in without]
    assert not any("order" in h["why"] for h in with_step)


MINILM = {"MEM_EMBEDDER": "minilm"}
# (older, newer, question, when the newer was written; the older on 5 January): both stay live (intake reads
# no correction, and puts no open contradicts edge between them), the fusion ranks the older first
NEWER_ANSWERS = [
    ("Deploys happen from Jenkins.", "Deploys go out from GitHub Actions since the CI migration.", "what deploys our services",
     "2026-03-05"),
]
# (until the twenty-third session a resize between two machine sizes was a second case here; sizes are typed
# values now, and search puts the newer first by its own rule: ``test_a_resize_is_the_current_size_and_says_so``)


@pytest.mark.parametrize("older,newer,asked,written", NEWER_ANSWERS)
def test_the_newer_of_two_live_answers_goes_first_and_says_why(older: str, newer: str, asked: str, written: str) -> None:
    records = [{"text": older, "scope": "p", "created_at": "2026-01-05T09:00:00Z"},
               {"text": newer, "scope": "p", "created_at": f"{written}T09:00:00Z"}]
    done = run_mem("import", "-", input=jsonl(*records), env=MINILM)
    assert done.code == 0, done.stderr
    old_id, new_id = (r["id"] for r in done.records)
    hits = run_mem("search", asked, "--json", "--scope", "p", env=MINILM).records
    assert [h["id"] for h in hits] == [new_id, old_id]
    assert hits[0]["why"]["order"]["over"] == [old_id] and "order" not in hits[1]["why"]
    fused = run_mem("search", asked, "--json", "--scope", "p", "--channel=-recency", env=MINILM).records
    assert [h["id"] for h in fused] == [old_id, new_id]  # the ablation: the fused order
    # one hit asked for: the page's first, reordered as on a whole page
    assert [h["id"] for h in run_mem("search", asked, "--json", "--scope", "p", "--limit", "1", env=MINILM).records] == [new_id]
    # on a terminal the why cell says the page model moved it
    table = run_tty("search", asked, "--scope", "p", columns=160, env=MINILM)
    assert table.code == 0 and re.search(r"\bpage\b", table.output), table.output


@pytest.mark.parametrize("older,newer,asked,written", NEWER_ANSWERS)
def test_a_newer_written_the_next_day_is_not_taken_for_the_current_truth(older: str, newer: str, asked: str,
                                                                          written: str) -> None:
    # the page model weighs how many days apart two hits were written, not only which is newer: the same
    # pair a day apart is two notes of one time, and the closer to the question stays first
    records = [{"text": older, "scope": "p", "created_at": "2026-01-05T09:00:00Z"},
               {"text": newer, "scope": "p", "created_at": "2026-01-06T09:00:00Z"}]
    old_id, new_id = (r["id"] for r in run_mem("import", "-", input=jsonl(*records), env=MINILM).records)
    hits = run_mem("search", asked, "--json", "--scope", "p", env=MINILM).records
    assert [h["id"] for h in hits] == [old_id, new_id] and not any("order" in h["why"] for h in hits)


def test_a_resize_is_the_current_size_and_says_so() -> None:
    records = [{"text": "Staging database is a db.t3.medium.", "scope": "p", "created_at": "2026-01-05T09:00:00Z"},
               {"text": "The staging Postgres instance was resized to db.r6g.large for the load tests.", "scope": "p",
                "created_at": "2026-04-05T09:00:00Z"}]
    old_id, new_id = (r["id"] for r in run_mem("import", "-", input=jsonl(*records), env=MINILM).records)
    hits = run_mem("search", "what size is the staging database", "--json", "--scope", "p", env=MINILM).records
    assert [h["id"] for h in hits] == [new_id, old_id]
    assert hits[0]["why"]["current"]["over"] == old_id and "db.t3.medium -> db.r6g.large" in hits[0]["why"]["current"]["reason"]


def test_a_question_naming_a_number_keeps_the_hit_stating_it_above_a_newer_one() -> None:
    # another row of a table, newer and as close: "port 8017" asks for the row that states 8017
    older, newer = "Service number 17 listens on port 8017", "Service number 19 listens on port 8019"
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z", env=MINILM).records[0]
    run_mem("add", newer, "--now", "2026-05-02T09:00:00Z", env=MINILM)
    hits = run_mem("search", "port 8017", "--now", "2026-05-03T00:00:00Z", env=MINILM).records
    assert hits[0]["id"] == first["id"] and not any("order" in h["why"] for h in hits)


# a project's other memories, all older than the pair: the pair's fused scores come close, as in a real store
FILLER = ["The billing service is written in Go.", "Frontend tests run with Playwright.", "The data warehouse is Snowflake.",
          "Alerts page through Opsgenie.", "Feature flags live in Unleash.", "The iOS app targets iOS 16.",
          "Postgres backups are kept for 30 days.", "The public API is rate limited to 100 requests per second.",
          "Terraform state lives in an S3 bucket.", "The team standup is at 09:30.", "Logs go to Loki via Promtail.",
          "Kafka runs on MSK with three brokers."]


def _project(older: str, newer: str) -> tuple[str, str]:
    records = [{"text": t, "scope": "p", "created_at": f"2025-12-{d + 1:02d}T09:00:00Z"} for d, t in enumerate(FILLER)]
    records += [{"text": older, "scope": "p", "created_at": "2026-01-05T09:00:00Z"},
                {"text": newer, "scope": "p", "created_at": "2026-03-05T09:00:00Z"}]
    done = run_mem("import", "-", input=jsonl(*records), env=MINILM)
    assert done.code == 0, done.stderr
    return done.records[-2]["id"], done.records[-1]["id"]


@pytest.mark.parametrize("older,newer,asked", [
    ("The API gateway is Kong.", "Traffic enters through Envoy Gateway these days; the Kong config is kept for reference.",
     "which API gateway do we use"),
    ("Our CI runners are Intel machines.", "CI moved to Graviton runners last month.", "what CPUs do CI runners use"),
])
def test_an_older_memory_never_passes_a_newer_close_neighbour(older: str, newer: str, asked: str) -> None:
    # the model alone would put the shorter, closer older statement first; the newer may be a correction
    old_id, new_id = _project(older, newer)
    ids = [h["id"] for h in run_mem("search", asked, "--json", "--scope", "p", env=MINILM).records]
    assert ids.index(new_id) < ids.index(old_id)


def test_a_newer_close_neighbour_may_pass_an_older_one() -> None:
    old_id, new_id = _project("Code review needs one approval.", "Two approvals are required on main since the incident review.")
    hits = run_mem("search", "how many approvals does a PR need", "--json", "--scope", "p", env=MINILM).records
    assert hits[0]["id"] == new_id and old_id in hits[0]["why"]["order"]["over"]
    fused = run_mem("search", "how many approvals does a PR need", "--json", "--scope", "p", "--channel=-recency", env=MINILM)
    assert fused.records[0]["id"] == old_id


def test_a_correction_contradicting_two_older_memories_stays_above_both() -> None:
    """Intake leaves the newer two open contradictions; the page model, which would put the older that is closer to
    the question first, may undo neither (``why.contradicts`` names the first in ``over``, the other in ``others``)."""
    records = [{"text": "Gameplay telemetry is sampled at 10% in production before it goes to ClickHouse; errors and "
                        "purchases are always kept.", "scope": "t", "created_at": "2028-04-11T09:07:00Z"},
               {"text": "Telemetry lands in the ClickHouse cluster ch-telemetry with 30 days of raw events and a year of "
                        "hourly rollups.", "scope": "t", "created_at": "2028-04-11T09:21:00Z"},
               {"text": "Event sampling in prod is 0.25 now; ClickHouse got two more shards so we can afford to keep a "
                        "quarter of events.", "scope": "t", "created_at": "2028-04-27T09:00:00Z"}]
    sampled, lands, now = (r["id"] for r in run_mem("add", "-", input=jsonl(*records), env=MINILM).records)
    assert set(open_contradictions("--scope", "t", "--now", "2028-05-01T00:00:00Z", env=MINILM)) == {(now, sampled),
                                                                                                     (now, lands)}
    hits = run_mem("search", "how much telemetry is sampled in production", "--json", "--scope", "t",
                   "--now", "2028-05-01T00:00:00Z", env=MINILM).records
    assert [h["id"] for h in hits] == [now, sampled, lands]
    note = hits[0]["why"]["contradicts"]
    assert {note["over"], *note.get("others", [])} == {sampled, lands}


def test_a_later_ordering_step_never_undoes_an_open_contradiction() -> None:
    """The recs cadence told four times: intake leaves the newest an open contradiction with the twice-a-week
    one. Search then puts twice-a-week over the nightly one it names more question words than (``current``); moving
    it up must take the newest along above it, not pass it."""
    records = [
        {"text": "The recs model (two-tower, PyTorch) is retrained weekly, Sunday 02:00 UTC, by the Airflow DAG recs_train.",
         "created_at": "2034-03-06T09:22:00Z", "scope": "r"},
        {"text": "recs_train runs every night at 03:00 UTC.", "created_at": "2034-04-17T09:00:00Z", "scope": "r"},
        {"text": "Nightly retraining caused too much churn for merchandising: recs retrain is twice a week, Monday and "
                 "Thursday 03:00 UTC.", "created_at": "2034-06-27T09:00:00Z", "scope": "r"},
        {"text": "Two-tower retrain cadence: every Monday at 03:00 UTC; the Thursday run was dropped after the compute "
                 "review.", "created_at": "2034-09-26T09:00:00Z", "scope": "r"}]
    weekly, nightly, twice, monday = (r["id"] for r in run_mem("add", "-", input=jsonl(*records), env=MINILM).records)
    assert (monday, twice) in open_contradictions("--scope", "r", "--now", "2034-10-01T00:00:00Z", env=MINILM)
    hits = run_mem("search", "do we still retrain recs every night", "--json", "--scope", "r",
                   "--now", "2034-10-01T00:00:00Z", env=MINILM).records
    ids = [h["id"] for h in hits]
    assert ids == [monday, twice, nightly, weekly], ids
    assert hits[1]["why"]["current"]["over"] == nightly  # the later step's own move still holds

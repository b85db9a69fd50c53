"""A statement that opens with the case it holds for ("In storm mode ...") is a row beside the general one:
intake neither supersedes one with the other, in either order, nor drops one as the other's near duplicate,
unless the newer names the value it replaces. CLI through the real entry point, with the switch off too; the
reader by examples and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mem.enrich.conditions import narrowed
from mem.stages import supersede
from tests.conftest import added_on_day, pair_added_with, run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}

# (older, newer): a case after the general statement, and a general statement after the case
ROWS = {
    "case_after": ("The crew app sends a GPS ping every 60 seconds while a crew is on shift.",
                   "In storm mode the crew app pings GPS every 15 seconds."),
    "general_after": ("In storm mode the crew app pings GPS every 15 seconds.",
                      "GPS pings from the crew app: every 20 seconds."),
    "stack": ("Audit events stay in the hot audit index in Elasticsearch for 90 days, then roll to S3.",
              "On the eu-central-1 stack audit events stay hot for two years, because of a German client's contract."),
}


def _superseded(first: dict, second: dict) -> bool:
    return {r["id"]: r for r in run_mem("export").records}[first["id"]].get("superseded_by") == second["id"]


@pytest.mark.parametrize("name", sorted(ROWS))
@pytest.mark.parametrize("on", [True, False])
def test_rows_of_two_cases_stay_current(name: str, on: bool, monkeypatch) -> None:
    first, second = pair_added_with(monkeypatch, supersede, "CONDITIONS", on, ROWS[name], MINILM)
    assert _superseded(first, second) is not on  # without the rule, intake takes the second for an update


def test_a_case_and_its_update_still_supersede() -> None:
    first = added_on_day("In storm mode the crew app pings GPS every 15 seconds.", 1, MINILM)
    second = added_on_day("In storm mode the crew app now pings GPS every 10 seconds, not 15.", 2, MINILM)
    assert second.get("supersedes") == [first["id"]]


def test_a_thing_gone_is_gone_in_every_case() -> None:
    first = added_on_day("During registration week Queue-it sits in front of /register as the virtual waiting room.",
                         1, MINILM)
    second = added_on_day("Queue-it is gone; the waiting room is our own Django app, cb-gate, backed by Redis.", 2, MINILM)
    assert second.get("supersedes") == [first["id"]]


BACKUP = ("the nightly backup job runs at 02:00 on host db-backup-1 and writes compressed snapshots of the orders "
          "database to the backup bucket in us-east-1, keeping 14 daily snapshots and 8 weekly ones, with alerts to the "
          "on-call channel when a run fails.")


@pytest.mark.parametrize("on", [True, False])
def test_the_same_said_of_another_case_is_no_duplicate(on: bool, monkeypatch) -> None:
    """Cosine .975: without the rule, the weekend row would be dropped as a near duplicate of the general one."""
    first, second = pair_added_with(monkeypatch, supersede, "CONDITIONS", on, ("The " + BACKUP, "On weekends the " + BACKUP),
                                    MINILM)
    assert (second["status"] == "added" and second["id"] != first["id"]) is on


@pytest.mark.parametrize("text, other, expected", [
    ("On Saturdays the marts only need to be ready by 08:00 CET.", "Marts have to be ready by 06:00 CET.", True),
    ("For the September roster only, Pairwise's time limit is three hours.", "Pairwise's time limit is 75 minutes.", True),
    ("For wall-time benchmarks, the perf bot threshold stays at 3%.", "Perf bot threshold is 0.5%.", True),
    ("In Grafana the peak dashboard is called 'Registration Live'.", "The Grafana dashboard for the peak is 'Reg Week'.", False),
    ("In the apps the idle timeout is 5 minutes.", "Idle lock in the app is 3 minutes now.", False),
    ("From now on the crew app pings every 20 s.", "The crew app pings every 15 s.", False),
    ("The crew app pings GPS every 15 seconds in storm mode.", "The crew app pings GPS every 60 seconds.", False),
    ("In, say, storm mode the pings are faster.", "Pings are every 60 seconds.", False),
])
def test_which_statements_open_with_a_case_of_their_own(text: str, other: str, expected: bool) -> None:
    assert narrowed(text, other) is expected


@given(st.text(max_size=80), st.text(max_size=80))
def test_the_reader_never_fails_and_a_text_narrows_nothing_it_repeats(text: str, other: str) -> None:
    assert isinstance(narrowed(text, other), bool)
    assert narrowed(text, text) is False

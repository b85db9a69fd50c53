"""Deployment environments: a fact about staging neither replaces nor answers for production.
Intake leaves rows of two environments both current, search ranks the row of the environment the
question names first (``why.environment`` on the other), and the newer row of another environment is
no "current value" of the older. CLI through the real entry point, each rule with its switch off too;
the reader itself by examples and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mem.score.environment import NAMES, apart, elsewhere, environments
from mem.stages import search, supersede
from tests.conftest import added_on_day, pair_added_with, run_mem
from tests.tty import run_tty

MINILM = {"MEM_EMBEDDER": "minilm"}

# (older, newer): a staging row after the production one, and a production row after the staging one
ROWS = {
    "backups": ("RDS automated backups for prod are kept 7 days.", "Staging RDS keeps automated backups for 1 day only."),
    "threads": ("Staging runs the default Sidekiq queue with 4 threads.", "Default Sidekiq queue: 20 threads per process."),
    "correction": ("Staging keeps audit events hot for 14 days.", "Correction: audit hot retention is 400 days, not a year."),
}


def _add(text: str, day: int) -> dict:
    return added_on_day(text, day, MINILM)


@pytest.mark.parametrize("name", sorted(ROWS))
@pytest.mark.parametrize("on", [True, False])
def test_rows_of_two_environments_stay_current(name: str, on: bool, monkeypatch) -> None:
    first, second = pair_added_with(monkeypatch, supersede, "ENVIRONMENTS", on, ROWS[name], MINILM)
    superseded = {r["id"]: r for r in run_mem("export").records}[first["id"]].get("superseded_by") == second["id"]
    assert superseded is not on  # without the gate, the rules take the second row for an update


def test_the_same_said_of_another_environment_is_no_duplicate() -> None:
    first = _add("Checkout service errors are reported to Sentry with full request payloads and user context in staging.", 1)
    second = _add("Checkout service errors are reported to Sentry with full request payloads and user context in production.", 2)
    assert second["status"] == "added" and second["id"] != first["id"] and "supersedes" not in second


def test_a_thing_gone_is_gone_in_every_environment() -> None:
    first = _add("The integration suite runs against a live Stripe sandbox.", 1)
    second = _add("The integration suite no longer runs against Stripe.", 2)
    assert second.get("supersedes") == [first["id"]]


def test_a_correction_in_one_environment_still_supersedes() -> None:
    first = _add("Staging Prometheus keeps 7 days of metrics.", 1)
    second = _add("Staging Prometheus retention was raised from 7 to 10 days.", 2)
    assert second.get("supersedes") == [first["id"]]


def _page(question: str) -> list[dict]:
    done = run_mem("search", question, "--now", "2026-05-05T00:00:00Z", env=MINILM)
    assert done.code == 0, done.stderr
    return done.records


def test_the_environment_a_question_names_goes_first(monkeypatch) -> None:
    prod = _add("The Vespa content cluster has 9 nodes.", 1)
    staging = _add("The staging Vespa content cluster has 2 nodes.", 2)
    hits = _page("prod vespa content node count")
    order = [h["id"] for h in hits]
    assert order[0] == prod["id"]
    assert hits[order.index(staging["id"])]["why"]["environment"] == {"factor": round(1 - search.ENV_PENALTY, 6)}
    assert "environment" not in hits[0]["why"]
    # the staging question: the staging row, which names its environment, first
    assert _page("how many nodes does the staging vespa content cluster have")[0]["id"] == staging["id"]
    # on a terminal, the why cell of the staging row says it is about another environment
    table = run_tty("search", "prod vespa content node count", "--now", "2026-05-05T00:00:00Z", columns=160, env=MINILM)
    rows = [line for line in table.output.splitlines() if "other-env" in line]
    assert table.code == 0 and len(rows) == 1 and "staging" in rows[0], table.output


def test_a_newer_row_of_another_environment_is_no_current_value(monkeypatch) -> None:
    older = _add("Prometheus keeps 15 days of metrics locally.", 1)
    newer = _add("Staging Prometheus keeps 7 days.", 2)
    question = "how many days does Prometheus keep metrics?"
    hits = _page(question)
    assert [h["id"] for h in hits][:2] == [older["id"], newer["id"]]
    assert all("current" not in h["why"] for h in hits)
    # the same two, the environment word taken out of the reader: the close-neighbour rule moves the newer up
    import mem.score.environment as environment

    monkeypatch.setattr(environment, "apart", lambda a, b: False)
    monkeypatch.setattr(environment, "elsewhere", lambda a, b: False)
    moved = _page(question)
    assert moved[0]["id"] == newer["id"] and moved[0]["why"]["current"]["over"] == older["id"]


@pytest.mark.parametrize("text, named", [
    ("Prod Elasticsearch data nodes: -Xms31g", {"production"}),
    ("Patch downloads come from the ember-patches-prod bucket", {"production"}),
    ("Dev Loki keeps 3 days of logs.", {"development"}),
    ("On dev the session cookie is not secure.", {"development"}),
    ("In the Paylane sandbox the cut-off is 0.5.", {"sandbox"}),
    ("mirth-tst VMs keep 2 vCPU; the stg cluster has 3 nodes.", {"test", "staging"}),
    ("Product search runs on devices", set()),
    ("Two approvals, at least one from a backend dev.", set()),
    ("Sun-hee leads security; Dev moves to CI full-time.", set()),
    ("Images: cgr.dev/chainguard/python; topics v2/dev/{id}/tele; build with -Pdev", set()),
    ("Deploy notices go to #cb-dev.", set()),
    ("Start it with `pnpm dev` from the repo root.", set()),
    ("QA signs off every release; run the tests locally first.", set()),
])
def test_which_environments_a_text_names(text: str, named: set[str]) -> None:
    assert environments(text) == named


def test_apart_and_elsewhere() -> None:
    assert apart("Staging CDC topics keep 1 day.", "CDC topics keep 7 days.")
    assert not apart("Prod CDC topics keep 7 days.", "CDC topics keep 5 days.")  # no name is production
    assert not apart("Staging keeps 1 day.", "Staging now keeps 3 days.")
    assert elsewhere("prod node count", "The staging cluster has 2 nodes.")
    assert elsewhere("staging node count", "The cluster has 9 nodes.")  # naming none holds for production
    assert not elsewhere("node count", "The staging cluster has 2 nodes.")  # a question naming none: no rule


_WORDS = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60)


@given(_WORDS)
def test_code_spans_name_no_environment(text: str) -> None:
    assert environments("`" + text.replace("`", "") + "`") == set()


@given(_WORDS, st.sampled_from(sorted(set(NAMES) - {"dev"})))
def test_a_name_between_spaces_is_read_in_any_case(text: str, word: str) -> None:
    found = environments(f"{text.replace('`', '')} ; {word.upper()} keeps it")
    assert NAMES[word] in found and found <= set(NAMES.values())


@given(_WORDS, _WORDS)
def test_apart_is_symmetric(a: str, b: str) -> None:
    assert apart(a, b) == apart(b, a)

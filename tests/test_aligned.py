"""Corrections read by alignment (``mem.enrich.aligned``): a claim restated with its value swapped or denied."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.enrich.aligned import replaced
from tests.conftest import jsonl, run_mem

CORRECTIONS = [
    ("The audit log keeps 90 days of events.", "The audit log holds 400 days of events."),
    ("Password reset links expire after 30 minutes.", "Password reset links are good for 2 hours."),
    ("Offline sync is supported in the courier app.", "Offline sync was pulled from the courier app after the crash reports."),
    ("The image resizer runs 6 workers per node.", "Image resizer runs 10 workers per node after the launch."),
    ("Loki keeps two weeks of logs.", "Loki holds 30 days of logs since the audit."),
    ("Node version for the web app is 18.", "The web app now runs on Node 22."),
    ("The API supports XML responses.", "The API doesn't support XML responses anymore."),
    ("Customers can pay by bank transfer.", "Bank transfer is no longer offered at checkout."),
    ("The cron for the report fires at 02:00.", "The report cron fires at 04:30 now."),
    ("The deploy guide lives in docs/deploy.md.", "The deploy guide moved to handbook/deploying.md."),
    # the README's other types: a frequency, a weekday, an amount of money; a denial by "switched off"
    ("The staging database is refreshed weekly.", "The staging database is refreshed nightly now."),
    ("The deploy freeze starts on Friday.", "The deploy freeze starts on Thursday now."),
    ("The monthly cloud budget is $40k.", "The monthly cloud budget is $55k now."),
    ("The nightly CSV export goes to the finance SFTP server.",
     "The nightly CSV export to the finance SFTP server was switched off."),
]

NOT_CORRECTIONS = [
    # another thing with a value of the same type: a qualifier before what the two share, or swapped inside it
    ("The staging resizer runs 6 workers per node.", "The production resizer runs 10 workers per node."),
    ("The upload limit is 10 MB.", "Avatar uploads are limited to 2 MB."),
    ("The orders table has 40M rows.", "The users table has 2M rows."),
    ("The EU API key is rotated monthly.", "The US API key is rotated weekly."),
    ("The payments service is owned by Alice.", "The payments UI is owned by Bob."),
    ("Offline sync is supported in the courier app.", "Offline sync is not supported in the dispatcher web app."),
    ("Redis is used for caching.", "Redis is not used for sessions."),
    # the same value in other units, a value of another kind, two tools' versions
    ("The request body limit is 1 MB.", "Request bodies are capped at 1024 KB."),
    ("The cache TTL is 5 minutes.", "The cache hit rate is around 90%."),
    ("The project targets Node 20.", "The project uses pnpm 9."),
    ("The ingestion worker concurrency is 8.", "The ingestion worker retries failed jobs 3 times."),
    # plans, questions, exceptions, history, additions
    ("Tempo keeps traces for 7 days.", "We might keep traces for 14 days in Tempo next quarter."),
    ("Gunicorn runs 4 workers per box.", "What if we bumped gunicorn to 8 workers?"),
    ("The invoice export starts at 01:30.", "Until March the invoice export started at 00:30."),
    ("The image resizer runs 6 workers per node.", "The image resizer also runs a cache warmer with 2 workers."),
    ("I used to work at Google.", "I work at Anthropic."),
    # another thing told after the value, or in another clause; a file is what a claim is about
    ("We decided to use RabbitMQ for the auth service.", "We decided to use Kafka for the profile service."),
    ("Never deploy search on Fridays; Alice asked for a freeze after incident 103.",
     "Never deploy payments on Fridays; Alice asked for a freeze after incident 200."),
    ("Alice reviews changes to migrations/0020_gateway.sql.", "Alice reviews changes to src/gateway/client.ts."),
    ("Run `make test-analytics` before pushing changes to src/analytics/models.py.",
     "Run `make test-catalog` before pushing changes to migrations/0012_catalog.sql."),
    ("writer 0 wrote note number 3 about shard 8", "writer 1 wrote note number 3 about shard 8"),
    ("The routing API rate limit is 50 requests per second per API key.",
     "The routing API allows a burst of 200 requests per API key above the steady rate."),
]


@pytest.mark.parametrize(("older", "newer"), CORRECTIONS)
def test_a_restated_claim_with_its_value_swapped_or_denied_corrects_it(older: str, newer: str) -> None:
    assert replaced(newer, older)


@pytest.mark.parametrize(("older", "newer"), NOT_CORRECTIONS)
def test_another_thing_a_plan_or_an_addition_corrects_nothing(older: str, newer: str) -> None:
    assert replaced(newer, older) is None


def test_the_reason_names_both_values() -> None:
    assert replaced("Password reset links are good for 2 hours.",
                    "Password reset links expire after 30 minutes.") == "30 minutes -> 2 hours"


def test_without_alignment_intake_leaves_both(monkeypatch: pytest.MonkeyPatch) -> None:
    from mem.stages import supersede

    monkeypatch.setattr(supersede, "ALIGNED", False)
    older, newer = CORRECTIONS[0]
    out = _import([{"text": older, "created_at": "2026-05-01T09:00:00Z"}, {"text": newer, "created_at": "2026-05-02T09:00:00Z"}])
    assert [r["status"] for r in out] == ["added", "added"] and not out[1].get("supersedes")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_a_text_never_corrects_itself_and_nothing_raises(text: str) -> None:
    assert replaced(text, text) is None
    replaced(text, "The API listens on port 8080.")
    replaced("The API listens on port 8080.", text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([o for o, _ in CORRECTIONS]), st.integers(1, 999))
def test_the_same_value_restated_is_no_correction(older: str, _: int) -> None:
    assert replaced(older[:-1] + " now.", older) is None  # "now" and nothing changed


def _import(records: list[dict]) -> list[dict]:
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(*records))
    assert done.code == 0, done.stderr
    return done.records


@pytest.mark.parametrize("correction_first", [False, True])
def test_intake_supersedes_a_restated_claim_in_both_orders(correction_first: bool) -> None:
    # neither pair is read as a correction by ``corrections`` or the assertions: alignment alone decides
    pairs = {"swap": CORRECTIONS[0], "denied": CORRECTIONS[2], "staging": NOT_CORRECTIONS[0]}
    records = []
    for scope, (older, newer) in pairs.items():
        first = {"text": older, "scope": scope, "created_at": "2026-05-01T09:00:00Z"}
        second = {"text": newer, "scope": scope, "created_at": "2026-05-02T09:00:00Z"}
        records += [second, first] if correction_first else [first, second]
    out = _import(records)
    by_scope = {}
    for i, scope in enumerate(pairs):
        a, b = out[2 * i], out[2 * i + 1]
        by_scope[scope] = (b, a) if correction_first else (a, b)
    for scope in ("swap", "denied"):
        old, new = by_scope[scope]
        if correction_first:
            assert old["status"] == "superseded" and old["superseded_by"] == new["id"], (scope, old)
        else:
            assert new.get("supersedes") == [old["id"]], (scope, new)
    old, new = by_scope["staging"]
    assert old["status"] == new["status"] == "added" and not new.get("supersedes"), by_scope["staging"]
    hits = run_mem("search", "how many days of events does the audit log keep?", "--scope", "swap",
                   "--now", "2026-05-03T00:00:00Z").records
    assert [h["id"] for h in hits] == [by_scope["swap"][1]["id"]]

"""A statement that names its own end ("back to one on Jan 6") holds until then: intake stores the end as
``valid_until``; where it would supersede an open-ended statement it suspends it instead (a ``suspends``
edge), in either order of arrival; while the end is ahead a search ranks the exception just above the rule,
and once it has passed the rule first, saying why. CLI through the real entry point, with each switch off
too; the reader by examples and properties."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.enrich.bounds import ends
from mem.stages import supersede
from tests.conftest import jsonl, run_mem

WRITTEN = datetime(2036, 11, 20, 10, tzinfo=timezone.utc)  # a Thursday


@pytest.mark.parametrize("text,end", [
    ("Payouts queue concurrency goes to 4 for Cyber Week only; back to 2 on Dec 2.", "2036-12-02"),
    ("For the Christmas freeze only, deploys need two approvals; back to one on Jan 6.", "2037-01-06"),
    ("Deploys are frozen until Friday.", "2036-11-21"),  # the coming Friday, not the last one
    ("Ana covers on-call until next Wednesday.", "2036-11-26"),
    ("Extra CI runners stay on through next week.", "2036-12-01"),  # "through" takes the week in
    ("Staging is read-only till 2036-12-01.", "2036-12-01"),
    ("Until Jan 6, the nightly job runs at 03:00.", "2037-01-06"),  # an end fronted before its statement
    ("Until the new TSO link is certified on 2 March, curtailment goes through the FTP drop.", "2037-03-02"),
    ("Polling there is every 30 s until the cable ship finishes the repair, expected 27 Feb.", "2037-02-27"),
    ("The release train goes back to weekly from January 12.", "2037-01-12"),
    ("Releases are daily during the migration; the train reverts to weekly from January 12.", "2037-01-12"),
    ("COBALT_WH is a Large now during the backfill month; it goes back to Medium on April 1.", "2037-04-01"),
    ("Deploys need two approvals this week only.", "2036-11-24"),  # a time it was written in, alone
    ("Only today, the office wifi runs on the backup line.", "2036-11-21"),
    ("Dropping the homepage TTL to 5 s during today's launch campaign.", "2036-11-21"),  # during a time written in
    ("Deploys need two approvals during this week.", "2036-11-24"),
])
def test_an_end_named_in_the_text_is_read(text: str, end: str) -> None:
    assert ends(text, WRITTEN) == datetime.fromisoformat(end).replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("text", [
    "The nightly batch runs from 01:00 until 02:00.",  # a time of day: a schedule
    "Backups run Monday until Friday.",  # a weekly schedule
    "Until 2034 we used Jenkins.",  # a past
    "Logs are kept until they are 30 days old.",  # no date
    "Until the new TSO link is certified, curtailment goes through the FTP drop.",  # no date either
    "We shipped on Dec 2 and went back to normal.",  # a date, but no end word before it
    "Only in December do we freeze deploys.",  # a time ahead, not the one it was written in: every December
    "Production deploys only Thursday to Friday, 09:00 to 16:00.",  # weekdays: a weekly schedule
    "Farid's contract ends on 31 May and Aiko takes the integration over from June.",  # an event, then a handover
    "Dana handed the on-call to Tomasz; she stays as his backup until April.",  # the handover is for good
    "Season 3 went out clean, Ingrid is back from leave on Thursday.",  # a person back, no state back to
    "The bucket was renamed, the old name is a redirect until June.",  # the rename is for good
    "During the March migration we moved search to OpenSearch.",  # a time ahead of the one written in
])
def test_no_end_is_read_where_none_is_named(text: str) -> None:
    assert ends(text, WRITTEN) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120), st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1)))
def test_an_end_read_is_always_after_the_text_was_written(text: str, written: datetime) -> None:
    at = written.replace(tzinfo=timezone.utc)
    end = ends(text, at)
    assert end is None or end > at


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["until", "till", "through", "back to 2 on"]), st.integers(1, 400))
def test_any_future_date_after_an_end_word_is_the_end(word: str, days: int) -> None:
    day = (WRITTEN + timedelta(days=days)).date()
    end = ends(f"Deploys need two approvals {word} {day.isoformat()}.", WRITTEN)
    assert end is not None and end.date() in (day, day + timedelta(days=1))


MINILM = {"MEM_EMBEDDER": "minilm"}
RULE = "Deploys to production need one approval."
EXCEPTION = "For the Christmas freeze only, deploys to production need two approvals; back to one on Jan 6."
ASKED = "how many approvals do production deploys need"


def _store(*records: dict, env: dict | None = None) -> list[str]:
    done = run_mem("add", "-", input=jsonl(*records), env=env)
    assert done.code == 0, done.stderr
    return [r["id"] for r in done.records]


def _exported() -> dict[str, dict]:
    return {r["id"]: r for r in run_mem("export").records}


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("exception", [
    "Deploys to production need two approvals until Jan 6.",
    "The search cluster runs 9 nodes through the end-of-year sale, back to 6 on Jan 6.",
])
def test_an_exception_for_a_while_replaces_no_rule(exception: str, on: bool, monkeypatch) -> None:
    monkeypatch.setattr(supersede, "BOUNDED", on)
    rule = RULE if "approvals" in exception else "The search cluster runs 6 nodes."
    rule_id, exception_id = _store({"text": rule, "created_at": "2036-11-02T10:00:00Z"},
                                   {"text": exception, "created_at": "2036-12-15T10:00:00Z"}, env=MINILM)
    stored = _exported()
    assert stored[exception_id]["valid_until"] in ("2037-01-06T00:00:00.000Z", "2037-01-07T00:00:00.000Z")
    # without the rule, intake reads "two approvals" as the new value of "one approval" for good
    assert (stored[rule_id].get("superseded_by") == exception_id) is not on
    assert _suspends(exception_id) == ([rule_id] if on else [])
    during = run_mem("search", "how many approvals" if "approvals" in exception else "how many search nodes",
                     "--json", "--now", "2036-12-20T09:00:00Z", env=MINILM).records
    if on:  # the rule stays on the page, just below the exception in force
        ids = [h["id"] for h in during]
        assert ids.index(exception_id) + 1 == ids.index(rule_id)
        assert during[ids.index(exception_id)]["why"]["current"]["over"] == rule_id
        assert "in force until 2037-01-0" in during[ids.index(exception_id)]["why"]["current"]["reason"]


@pytest.mark.parametrize("on", [True, False])
def test_a_change_for_the_time_it_was_written_in_suspends_the_rule_for_that_time(on: bool, monkeypatch) -> None:
    """"during today's launch campaign": the TTL drop holds for today; tomorrow the 60 s rule holds again."""
    from mem.enrich import bounds

    monkeypatch.setattr(bounds, "DURING", on)
    rule_id, drop_id = _store({"text": "Homepage cache TTL: 60 seconds at the CDN.", "created_at": "2036-12-15T09:00:00Z"},
                              {"text": "Dropping the homepage TTL to 5 s during today's launch campaign so edits go "
                                       "live fast.", "created_at": "2036-12-15T10:00:00Z"}, env=MINILM)
    stored = _exported()
    assert stored[drop_id]["valid_until"] == ("2036-12-16T00:00:00.000Z" if on else None)
    assert (stored[rule_id].get("superseded_by") == drop_id) is not on
    assert _suspends(drop_id) == ([rule_id] if on else [])


def _suspends(exception_id: str) -> list[str]:
    done = run_mem("graph", "neighbors", exception_id, "--json")
    assert done.code == 0, done.stderr
    return [r["id"] for r in done.records if r["via"]["type"] == "suspends"]


def test_a_rule_arriving_after_its_exception_is_not_superseded_by_it() -> None:
    """The import order reversed: the rule is older but reaches the store last."""
    exception, rule = _store({"text": EXCEPTION, "created_at": "2036-12-15T10:00:00Z"},
                             {"text": RULE, "created_at": "2036-11-02T10:00:00Z"})
    stored = _exported()
    assert stored[rule].get("superseded_by") is None and stored[exception].get("superseded_by") is None


@pytest.mark.parametrize("env", [None, MINILM], ids=["hash", "minilm"])
def test_after_its_end_the_rule_ranks_above_the_exception_and_why_says_so(env: dict | None) -> None:
    rule, exception = _store({"text": RULE, "created_at": "2036-11-02T10:00:00Z"},
                             {"text": EXCEPTION, "created_at": "2036-12-15T10:00:00Z"}, env=env)
    during = run_mem("search", ASKED, "--json", "--now", "2036-12-20T09:00:00Z", env=env).records
    assert during[0]["id"] == exception and "expired" not in during[0]["why"]
    after = run_mem("search", ASKED, "--json", "--now", "2037-01-10T09:00:00Z", env=env).records
    assert [h["id"] for h in after] == [rule, exception]
    assert after[1]["why"]["expired"] == {"valid_until": "2037-01-06T00:00:00.000Z", "factor": 0.3}
    if env is None:  # on a terminal, the why cell of the exception says it has ended
        from tests.tty import run_tty

        table = run_tty("search", ASKED, "--now", "2037-01-10T09:00:00Z", columns=160)
        assert table.code == 0 and [line for line in table.output.splitlines() if "ended" in line], table.output
    # the ablation: without the step the newer exception keeps its place
    kept = run_mem("search", ASKED, "--json", "--now", "2037-01-10T09:00:00Z", "--channel=-validity", env=env).records
    assert kept[0]["id"] == exception and "expired" not in kept[0]["why"]


def test_a_search_bounded_by_until_asks_about_then() -> None:
    _, exception = _store({"text": RULE, "created_at": "2036-11-02T10:00:00Z"},
                          {"text": EXCEPTION, "created_at": "2036-12-15T10:00:00Z"})
    hits = run_mem("search", ASKED, "--json", "--until", "2036-12-31T00:00:00Z", "--now", "2037-02-10T09:00:00Z").records
    assert hits[0]["id"] == exception and "expired" not in hits[0]["why"]


def test_a_query_naming_a_time_asks_about_then() -> None:
    _, exception = _store({"text": RULE, "created_at": "2036-11-02T10:00:00Z"},
                          {"text": EXCEPTION, "created_at": "2036-12-15T10:00:00Z"})
    hits = run_mem("search", "how many approvals did deploys need in December 2036", "--json",
                   "--now", "2037-02-10T09:00:00Z").records
    assert hits[0]["id"] == exception and "expired" not in hits[0]["why"]


def test_an_episode_keeps_no_end_and_a_given_end_wins() -> None:
    episode, given_end = _store(
        {"text": "We froze deploys until Jan 6 for the holidays.", "kind": "episode", "created_at": "2036-12-15T10:00:00Z"},
        {"text": "Staging runs on two nodes until Jan 6.", "valid_until": "2036-12-31T00:00:00Z",
         "created_at": "2036-12-15T10:00:00Z"})
    stored = _exported()
    assert stored[episode]["valid_until"] is None  # what happened stays true of that week
    assert stored[given_end]["valid_until"] == "2036-12-31T00:00:00.000Z"


def test_the_cli_option_sets_the_end() -> None:
    done = run_mem("add", "The payments sandbox is down for maintenance.", "--valid-until", "2036-12-01T00:00:00Z",
                   "--now", "2036-11-30T09:00:00Z")
    assert done.code == 0, done.stderr
    assert _exported()[done.records[0]["id"]]["valid_until"] == "2036-12-01T00:00:00.000Z"
    bad = run_mem("add", "Another note.", "--valid-until", "soonish")
    assert bad.code == 4 and "valid_until" in bad.stderr


def test_a_suspension_travels_through_export_and_import(tmp_path) -> None:
    rule_id, exception_id = _store({"text": RULE, "created_at": "2036-11-02T10:00:00Z"},
                                   {"text": "Deploys to production need two approvals until Jan 6.",
                                    "created_at": "2036-12-15T10:00:00Z"}, env=MINILM)
    assert _suspends(exception_id) == [rule_id]
    dump = run_mem("export")
    other = {"MEM_DB": str(tmp_path / "copy.db"), **MINILM}
    assert run_mem("import", "-", input=dump.stdout, env=other).code == 0
    copied = run_mem("graph", "neighbors", exception_id, "--json", env=other).records
    assert [r["id"] for r in copied if r["via"]["type"] == "suspends"] == [rule_id]
    assert run_mem("export", env=other).records[1]["valid_until"] == "2037-01-06T00:00:00.000Z"


def test_the_outcome_and_explain_say_what_is_suspended_until_when() -> None:
    rule_id, = _store({"text": RULE, "created_at": "2036-11-02T10:00:00Z"}, env=MINILM)
    done = run_mem("add", "Deploys to production need two approvals until Jan 6.", "--now", "2036-12-15T10:00:00Z",
                   "--json", env=MINILM)
    assert done.code == 0, done.stderr
    outcome = done.records[0]
    assert outcome["suspends"] == [rule_id] and outcome["until"] == "2037-01-06T00:00:00.000Z"
    assert "supersedes" not in outcome
    # on a terminal, the outcome says what it suspends and until when
    from tests.tty import run_tty

    run_mem("add", RULE, "--scope", "tty", "--now", "2036-11-02T10:00:00Z", env=MINILM)
    table = run_tty("add", "Deploys to production need two approvals until Jan 8.", "--scope", "tty",
                    "--now", "2036-12-16T10:00:00Z", columns=120, env=MINILM)
    assert table.code == 0 and "suspends" in table.output and "until 2037-01-08" in table.output, table.output
    during = run_mem("get", rule_id, "--explain", "--json", "--now", "2036-12-20T09:00:00Z", env=MINILM).records[0]
    assert during["explain"]["suspended"] == [{"by": outcome["id"], "until": "2037-01-06T00:00:00.000Z", "in_force": True}]
    after = run_mem("get", outcome["id"], "--explain", "--json", "--now", "2037-01-10T09:00:00Z", env=MINILM).records[0]
    assert after["explain"]["validity"] == {"until": "2037-01-06T00:00:00.000Z", "expired": True, "suspends": [rule_id]}
    # a person who knows better undoes it as any link: the rule is no longer suspended
    assert run_mem("graph", "unlink", outcome["id"], rule_id, "--type", "suspends").code == 0
    assert "suspended" not in run_mem("get", rule_id, "--explain", "--json", env=MINILM).records[0]["explain"]


def test_over_mcp_an_end_given_to_add_suspends_the_rule() -> None:
    import anyio

    from tests.test_mcp import mcp_client

    async def main() -> None:
        async with mcp_client() as client:
            rule = (await client.call_tool("add", {"text": "The payouts queue runs with concurrency 2."})).structured_content
            added = await client.call_tool("add", {"text": "The payouts queue runs with concurrency 4.",
                                                   "valid_until": "2099-12-02T00:00:00Z"})
            outcome = added.structured_content["outcomes"][0]
            assert outcome["suspends"] == [rule["outcomes"][0]["id"]] and outcome["until"] == "2099-12-02T00:00:00.000Z"
            assert "suspends" in added.content[0].text and "until 2099-12-02" in added.content[0].text
            got = (await client.call_tool("get", {"ids": rule["outcomes"][0]["id"], "explain": True})).structured_content
            assert got["memories"][0]["explain"]["suspended"][0]["in_force"] is True
            # the end taken back: the change holds for good, and replaces the rule as intake would have
            await client.call_tool("update", {"id": outcome["id"], "valid_until": "none"})
            got = (await client.call_tool("get", {"ids": rule["outcomes"][0]["id"], "explain": True})).structured_content
            assert "suspended" not in got["memories"][0]["explain"]
            assert got["memories"][0]["explain"]["superseded"]["by"] == outcome["id"]
            assert "was taken back" in got["memories"][0]["explain"]["superseded"]["reason"]
            # and an end given again: the rule is live again, suspended until then
            await client.call_tool("update", {"id": outcome["id"], "valid_until": "2099-12-02T00:00:00Z"})
            got = (await client.call_tool("get", {"ids": rule["outcomes"][0]["id"], "explain": True})).structured_content
            assert got["memories"][0]["superseded_by"] is None
            assert got["memories"][0]["explain"]["suspended"][0]["by"] == outcome["id"]

    anyio.run(main)


def test_an_update_reads_the_end_of_the_new_text_and_keeps_one_given_by_hand() -> None:
    read = run_mem("add", "Staging is read-only until Jan 6.", "--now", "2036-12-15T10:00:00Z").records[0]["id"]
    given = run_mem("add", "Prod is read-only until Jan 6.", "--valid-until", "2036-12-31T00:00:00Z",
                    "--now", "2036-12-15T10:00:00Z").records[0]["id"]

    def end(memory_id: str) -> str | None:
        return _exported()[memory_id]["valid_until"]

    for memory_id in (read, given):
        done = run_mem("update", memory_id, "--text", "Staging is read-only until Jan 13.", "--now", "2036-12-16T10:00:00Z")
        assert done.code == 0, done.stderr
    assert end(read) == "2037-01-13T00:00:00.000Z"  # read again from the new text
    assert end(given) == "2036-12-31T00:00:00.000Z"  # given by hand: the new text leaves it alone
    assert run_mem("update", given, "--valid-until", "none").code == 0 and end(given) is None
    assert run_mem("update", read, "--text", "Staging is read-only.").code == 0 and end(read) is None
    bad = run_mem("update", read, "--valid-until", "soonish")
    assert bad.code == 4 and "valid_until" in bad.stderr and end(read) is None


def test_an_update_reads_when_the_new_text_says_it_happened_and_keeps_a_date_given_by_hand() -> None:
    read = run_mem("add", "The billing outage was on 2036-03-02.", "--now", "2036-03-10T10:00:00Z").records[0]["id"]
    given = run_mem("add", "The search outage was on 2036-03-02.", "--event-at", "2036-03-01T00:00:00Z",
                    "--now", "2036-03-10T10:00:00Z").records[0]["id"]

    def when(memory_id: str) -> str | None:
        return _exported()[memory_id]["event_at"]

    assert when(read) == "2036-03-02T00:00:00.000Z"
    for memory_id in (read, given):
        done = run_mem("update", memory_id, "--text", "The outage was on 2036-03-05, not the 2nd.", "--now", "2036-03-11T10:00:00Z")
        assert done.code == 0, done.stderr
    assert when(read) == "2036-03-05T00:00:00.000Z"  # read again: a timeline and --since see the corrected day
    since = run_mem("search", "outage", "--since", "2036-03-04T00:00:00Z", "--now", "2036-03-11T10:00:00Z").records
    assert [hit["id"] for hit in since] == [read]
    assert when(given) == "2036-03-01T00:00:00.000Z"  # given by hand: the new text leaves it alone
    assert run_mem("update", given, "--event-at", "none").code == 0 and when(given) is None
    assert run_mem("update", read, "--text", "The outage lasted two hours.").code == 0 and when(read) is None
    assert _exported()[read]["structure"] == "narrative"
    assert run_mem("update", read, "--event-at", "2036-03-04T12:00:00Z").code == 0
    assert _exported()[read]["structure"] == "timeline"  # a date given alone makes it a timeline's, as intake does
    assert when(read) == "2036-03-04T12:00:00.000Z"
    assert run_mem("update", read, "--text", "The outage on 2036-03-04 lasted two hours.").code == 0
    assert when(read) == "2036-03-04T12:00:00.000Z"  # given by hand since: kept
    bad = run_mem("update", read, "--event-at", "soonish")
    assert bad.code == 4 and "event_at" in bad.stderr and when(read) == "2036-03-04T12:00:00.000Z"


def test_over_mcp_an_update_gives_or_reads_when_it_happened() -> None:
    import anyio

    from tests.test_mcp import mcp_client

    async def main() -> None:
        async with mcp_client() as client:
            added = (await client.call_tool("add", {"text": "The release was cut on 2036-05-04."})).structured_content
            memory_id = added["outcomes"][0]["id"]
            done = (await client.call_tool("update", {"id": memory_id, "text": "The release was cut on 2036-05-06."}))
            assert done.structured_content["memories"][0]["event_at"] == "2036-05-06T00:00:00.000Z"
            done = (await client.call_tool("update", {"id": memory_id, "event_at": "none"}))
            assert done.structured_content["memories"][0]["event_at"] is None

    anyio.run(main)


def test_the_end_a_statement_names_is_not_when_it_happened() -> None:
    plain, dated = _store({"text": EXCEPTION, "created_at": "2036-12-15T10:00:00Z"},
                          {"text": "Since Dec 14 deploys are frozen until Jan 6.", "created_at": "2036-12-15T10:00:00Z"})
    stored = _exported()
    assert stored[plain]["event_at"] is None and stored[plain]["valid_until"] == "2037-01-06T00:00:00.000Z"
    assert stored[dated]["event_at"] == "2036-12-14T00:00:00.000Z"
    assert stored[dated]["valid_until"] == "2037-01-06T00:00:00.000Z"

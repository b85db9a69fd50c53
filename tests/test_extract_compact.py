"""Conversation extraction (mem.stages.extract) and extractive compaction (mem.stages.compact),
as stage functions over a real store, and as memory-v3's two tools over stdio."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mem.errors import BadInput
from mem.lifecycle.merge import facts
from mem.stages import compact as compact_stage
from mem.stages import extract

NOW = "2026-03-10T12:00:00Z"
TOKEN = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"
CONVERSATION = f"""\
Alice: Hi Bob, how was your weekend?
Bob: Pretty good, thanks! Went hiking with the kids.
Alice: Nice. So about the session cache: we decided to use Redis 7 for it.
Bob: Actually, the staging database is Postgres 16, not MySQL. I checked it this morning.
Alice: Good catch. To run the integration tests locally, run:
$ make test-integration DB=postgres
Bob: The CI deploy token is {TOKEN}.
Alice: Thanks! I'll ship the billing migration by Friday.
Bob: The weather is great today. Carol joined the platform team on 2026-03-02.
Alice: Cool, see you tomorrow.
Alice: Should we use Redis for the job queues too?
"""


@pytest.fixture
def ctx() -> Iterator[Any]:
    from mem.cli.common import open_context

    with open_context(None, now=NOW, create=True) as context:
        yield context


# --------------------------------------------------------------------------- extraction


def test_split_turns_and_sentences() -> None:
    turns = extract.split_turns(CONVERSATION)
    assert [who for who, _ in turns] == ["Alice", "Bob", "Alice", "Bob", "Alice", "Bob", "Alice", "Bob", "Alice",
                                         "Alice"]
    assert turns[4][1].endswith("$ make test-integration DB=postgres")
    # No speaker labels: blank-line paragraphs are the turns; heading labels are not speakers.
    plain = extract.split_turns("Decision: we use Redis.\nIt runs on box A.\n\nSecond paragraph here.")
    assert plain == [(None, "Decision: we use Redis.\nIt runs on box A."), (None, "Second paragraph here.")]
    assert extract.split_sentences("Use v1.2 e.g. here. Next one!") == ["Use v1.2 e.g. here.", "Next one!"]


def test_candidates_keep_durable_sentences_only() -> None:
    from mem.enrich.timestamps import parse_datetime

    found = extract.candidates(CONVERSATION, parse_datetime(NOW))
    by_text = {c.text: c for c in found}
    assert [(c.author, c.kind) for c in found] == [
        ("Alice", "decision"), ("Bob", "correction"), ("Alice", "procedure"), ("Bob", "fact"),
        ("Alice", "commitment"), ("Bob", "fact")]
    assert by_text["To run the integration tests locally, run: `make test-integration DB=postgres`"].kind == "procedure"
    assert "date" in by_text["Carol joined the platform team on 2026-03-02."].cues
    assert "assertion" in by_text["Actually, the staging database is Postgres 16, not MySQL."].cues
    texts = " ".join(by_text)
    for chatter in ("weekend", "hiking", "Good catch", "weather", "see you", "job queues", "this morning"):
        assert chatter not in texts, chatter
    assert all(not t.startswith(("Alice:", "Bob:")) for t in by_text)  # the speaker went into author


def test_run_stores_through_intake_and_rejects_the_secret(ctx: Any) -> None:
    report = extract.run(ctx, CONVERSATION, source="chat/standup.txt", author="fallback")
    rows = report["candidates"]
    assert report["summary"] == {"turns": 10, "candidates": 6, "dry_run": False, "added": 5, "rejected": 1}
    secret = next(r for r in rows if r["status"] == "rejected")
    assert secret["reason"].startswith("secret") and TOKEN not in secret["text"] and secret["id"] is None
    stored = {r["id"]: r for r in rows if r["status"] == "added"}
    for memory_id, row in stored.items():
        memory = ctx.store.get(memory_id)
        assert memory.text == row["text"] and memory.kind == row["kind"] and memory.author == row["author"]
        assert memory.source == "chat/standup.txt" and "extracted" in memory.tags and memory.scope == "test"
    kinds = {ctx.store.get(i).kind: ctx.store.get(i) for i in stored}
    assert kinds["decision"].layer == 2 and "Redis 7" in kinds["decision"].text
    assert kinds["commitment"].event_at is not None  # "by Friday", resolved by intake against --now
    assert ctx.store.counts()["memories"] == 5
    again = extract.run(ctx, CONVERSATION)  # the same transcript twice stores nothing new
    assert {r["status"] for r in again["candidates"]} == {"duplicate", "rejected"}
    assert ctx.store.counts()["memories"] == 5


def test_dry_run_writes_nothing_and_flags_the_secret(ctx: Any) -> None:
    report = extract.run(ctx, "Bob: We decided to use Postgres 16.\nBob: The CI deploy token is " + TOKEN,
                         dry_run=True)
    assert [(r["status"], r["kind"]) for r in report["candidates"]] == [("candidate", "decision"),
                                                                         ("rejected", "fact")]
    assert TOKEN not in str(report)
    assert ctx.store.counts()["memories"] == 0
    with pytest.raises(BadInput):
        extract.run(ctx, "   ")


# --------------------------------------------------------------------------- compaction

NOTES = """\
Basically, the deploy pipeline runs on GitHub Actions. The deploy pipeline runs on GitHub Actions!
Alice owns the billing service and Bob owns payments. As mentioned before, Alice owns the billing service.
In order to release, tag the commit with v2.3.1 and push. Hope this helps!
The API gateway listens on port 8443. The gateway timeout is 30s. We moved to Postgres 16 on 2026-03-01.
The nightly build failed because the runner was slow. The runner was slow, which is why the nightly build failed.
Thanks!"""


def test_compact_removes_repeats_and_filler_and_keeps_every_fact() -> None:
    report = compact_stage.compact(NOTES)
    out = report["text"]
    assert report["before"] == len(NOTES) and report["after"] == len(out) < 0.75 * len(NOTES)
    assert out.count("GitHub Actions") == 1 and out.count("Alice owns") == 1 and out.count("nightly build") == 1
    for gone in ("Basically", "Hope this helps", "Thanks", "As mentioned", "In order to"):
        assert gone not in out
    for fact in ("GitHub", "Alice", "Bob", "v2.3.1", "8443", "30s", "Postgres 16", "2026-03-01"):
        assert fact in out
    assert {"alice", "bob", "8443", "30s", "v2.3.1", "2026-03-01"} <= set(report["facts"])
    assert all(f in out.lower() for f in report["facts"])
    assert report["removed"]["duplicates"] == 1 and report["removed"]["near_duplicates"] == 2
    assert report["removed"]["filler"] == 2 and "note" not in report


def test_compact_budget_drops_factless_sentences_but_never_a_fact() -> None:
    text = ("The nightly build failed again. It was slow and nobody liked it. "
            "Alice restarted runner ci-7 at 02:00. Later it was quiet.")
    fits = compact_stage.compact(text, max_chars=70)
    assert len(fits["text"]) <= 70 and "Alice restarted runner ci-7 at 02:00." in fits["text"]
    assert fits["removed"]["over_budget"] >= 2 and "note" not in fits
    tight = compact_stage.compact(NOTES, max_chars=80)  # impossible without losing names and numbers
    assert "not reached" in tight["note"]
    assert all(f in tight["text"].lower() for f in facts(NOTES) - {"basically", "hope", "thanks", "as", "in"})
    with pytest.raises(BadInput):
        compact_stage.compact("x", max_chars=0)


# --------------------------------------------------------------------------- over MCP


def test_memory_v3_extract_and_compact_tools_over_stdio() -> None:
    from tests.test_mcp import call, stdio_client, text

    async def main() -> None:
        async with stdio_client("--profile", "memory-v3") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["compact_text"].annotations.read_only_hint is True
            assert listed["extract_from_conversation"].annotations.read_only_hint is False

            dry = await client.call_tool("extract_from_conversation", {"conversation": CONVERSATION,
                                                                       "dry_run": True})
            assert not dry.is_error, text(dry)
            assert dry.structured_content["summary"]["candidates"] == 6
            assert (await client.call_tool("stats", {})).structured_content["memories"] == 0

            done = await client.call_tool("extract_from_conversation", {"conversation": CONVERSATION,
                                                                        "source": "standup", "author": "team"})
            summary = done.structured_content["summary"]
            assert summary["added"] == 5 and summary["rejected"] == 1
            assert "[decision] Alice: So about the session cache" in text(done) and TOKEN not in text(done)
            found = await client.call_tool("search", {"query": "which database does staging use"})
            assert "Postgres 16" in found.structured_content["hits"][0]["text"]

            compacted = await client.call_tool("compact_text", {"text": NOTES})
            result = compacted.structured_content
            assert result["after"] < result["before"] and "note" not in result
            assert "8443" in result["text"] and "8443" in text(compacted)
            bad = await client.call_tool("compact_text", {"text": "a b c", "max_chars": 0})
            assert bad.is_error and "max_chars" in text(bad)
            empty = await client.call_tool("extract_from_conversation", {"conversation": ""})
            assert empty.is_error and "empty" in text(empty)

    call(main)

"""Graph retrieval channels through ``mem search``: entity spreading activation, time windows,
scene expansion, and the query classifier's type in every hit's ``why``."""

from __future__ import annotations

import pytest

from mem.score.classify_query import QUERY_TYPES, classify
from tests.conftest import jsonl, run_mem


def add(*records: dict) -> list[str]:
    result = run_mem("add", "-", input=jsonl(*records))
    assert result.code == 0, result.stderr
    assert all(r["status"] == "added" for r in result.records), result.records
    return [r["id"] for r in result.records]


def search(query: str, *args: str) -> list[dict]:
    result = run_mem("search", query, *args)
    assert result.code == 0, result.stderr
    return result.records


def test_entity_channel_finds_memories_that_mention_the_entity():
    kemal, module, unrelated = add(
        {"text": "The ledger module is maintained by Kemal, who reviews src/payments/ledger.py changes"},
        {"text": "src/payments/ledger.py rounds currency with banker's rounding"},
        {"text": "The office coffee machine is descaled on Mondays"},
    )
    hits = search("what does Kemal work on?", "--channel", "entity")
    ids = [h["id"] for h in hits]
    # Hop 1 finds the memory naming Kemal; hops 2-3 spread through the file it mentions.
    assert ids[:2] == [kemal, module] and unrelated not in ids
    assert hits[0]["why"]["entity"]["via"] == ["kemal"] and hits[0]["why"]["entity"]["rank"] == 1
    assert "via" not in hits[1]["why"]["entity"]  # reached by spreading, not named in the query
    assert hits[0]["why"]["entity"]["score"] > hits[1]["why"]["entity"]["score"]

    full = search("what does Kemal work on?")
    assert full[0]["id"] == kemal and full[0]["why"]["entity"]["via"] == ["kemal"]
    assert full[0]["why"]["query_type"] in QUERY_TYPES


def test_fan_effect_damps_entities_many_memories_mention():
    *common, rare = add(
        *({"text": f"Redis note {i}: keys for tenant {i} expire after a day"} for i in range(6)),
        {"text": "Yesterday Ines tuned the eviction policy"},
    )
    hits = search("Ines and Redis", "--channel", "entity")
    # Both entities are named once; Redis is spread over six memories, Ines over one.
    assert hits[0]["id"] == rare and set(common) == {h["id"] for h in hits[1:]}
    assert hits[0]["why"]["entity"]["score"] > 2 * hits[1]["why"]["entity"]["score"]


def test_in_may_2023_ranks_memories_in_that_window_first():
    in_window = add(
        {"text": "Rotated the TLS certificates on the gateway", "created_at": "2023-05-12T10:00:00Z"},
        {"text": "Upgraded nginx on the edge nodes", "created_at": "2023-05-25T10:00:00Z"},
    )
    add({"text": "We deploy the docs site every Friday, what a deploy", "created_at": "2023-08-04T10:00:00Z"},
        {"text": "Deploy freeze lifted after the audit", "created_at": "2023-04-28T10:00:00Z"})
    hits = search("what did we deploy in May 2023?", "--now", "2024-01-10T00:00:00Z")
    assert {h["id"] for h in hits[:2]} == set(in_window)
    assert hits[0]["why"]["temporal"]["window"] == "May 2023"
    assert hits[0]["why"]["query_type"] == "temporal"
    outside = [h for h in hits if h["id"] not in in_window]
    assert outside and all("temporal" not in h["why"] for h in outside)


def test_a_window_holds_what_was_said_in_it_as_well_as_what_happened_in_it():
    # Told on 2 June about the week before: its event_at is in May, but "what did we migrate in
    # June?" means what was said in June too.
    said_in_june, = add({"text": "Last week we migrated the billing worker to the new queue",
                         "created_at": "2023-06-02T10:00:00Z"})
    add({"text": "Which worker did we migrate to the new queue? The search worker", "created_at": "2023-08-04T10:00:00Z"},
        {"text": "We migrated the mail worker to the new queue", "created_at": "2023-03-03T10:00:00Z"})
    hits = search("which worker did we migrate in June 2023?", "--now", "2024-01-10T00:00:00Z")
    assert hits[0]["id"] == said_in_june and hits[0]["why"]["temporal"]["window"] == "June 2023"
    assert all("temporal" not in h["why"] for h in hits[1:])


def test_last_week_uses_event_time_relative_to_now():
    # --now is Wednesday 2024-03-20: last week is Monday 11 to Sunday 17 March.
    add({"text": "The nightly backup job failed twice", "created_at": "2024-03-13T08:00:00Z"},
        {"text": "What broke this week: the nightly backup dashboard", "created_at": "2024-03-19T08:00:00Z"},
        {"text": "What broke before: the nightly backup cron", "created_at": "2024-02-01T08:00:00Z"},
        # Observed today, but it says when it happened: event_at puts it last week.
        {"text": "On 2024-03-15 the backup disk filled up", "created_at": "2024-03-20T07:00:00Z"})
    hits = search("what broke last week with the nightly backup?", "--now", "2024-03-20T12:00:00Z")
    top = {h["text"] for h in hits[:2]}
    assert top == {"The nightly backup job failed twice", "On 2024-03-15 the backup disk filled up"}
    assert all(h["why"]["temporal"]["window"] == "last week" for h in hits[:2])



@pytest.mark.parametrize("question, now, answer, dated", [
    # a weekday modifying a noun names a recurring event, not last Friday (12 March 2027 is a Friday)
    ("What did Saoirse show at the Friday show-and-tell?", "2027-03-12T15:00:00Z",
     ("Saoirse demoed chapter markers in the web player at Friday's show-and-tell.", "2027-01-15T16:00:00Z"),
     ("Mateus brought pasteis de nata back from Lisbon for the Friday retro.", "2027-03-12T09:00:00Z")),
    # "in a week" in a question asking an amount is its period, not the week ahead
    ("how many marketing pushes can one customer get in a week", "2027-10-14T12:00:00Z",
     ("The notifier sends at most 3 marketing pushes per customer per week.", "2027-09-27T10:00:00Z"),
     ("Quarterly planning for the customer notifier team is on 20 October.", "2027-10-07T10:00:00Z")),
])
def test_a_form_that_reads_as_a_date_but_names_none_is_no_window(question, now, answer, dated):
    wanted, other = add({"text": answer[0], "created_at": answer[1]}, {"text": dated[0], "created_at": dated[1]})
    hits = search(question, "--now", now)
    assert hits[0]["id"] == wanted and "window" not in hits[0]["why"].get("temporal", {}), hits[0]["why"]
    days = search(f"what did we do on {dated[1][:10]}", "--now", now)  # a date still names its window
    assert days[0]["id"] == other and days[0]["why"]["temporal"]["window"] == dated[1][:10]


def test_when_question_favours_memories_with_an_event_time():
    dated, undated = add(
        {"text": "The Kafka cluster upgrade happened on 2024-02-03", "created_at": "2024-03-01T00:00:00Z"},
        {"text": "The Kafka cluster upgrade was painful", "created_at": "2024-03-01T00:00:00Z"},
    )
    hits = search("When did the Kafka cluster upgrade happen?", "--now", "2024-04-01T00:00:00Z")
    assert hits[0]["id"] == dated and hits[0]["why"]["temporal"]["event_at"] is True
    assert hits[0]["why"]["query_type"] == "temporal"
    assert "temporal" not in next(h for h in hits if h["id"] == undated)["why"]


def test_scene_expansion_pulls_in_the_neighbouring_turn():
    turns = [
        "Caroline: I went to the LGBTQ support group yesterday and it was so powerful",
        "Melanie: That sounds amazing, how did the other people react?",
        "Caroline: Everyone was welcoming and I felt accepted",
    ]
    ids = add(*({"text": t, "meta": {"session": "chat-1"}, "created_at": f"2023-05-08T13:0{i}:00Z"}
                for i, t in enumerate(turns)),
              *({"text": f"Unrelated note {i} about gardening tomatoes and watering"} for i in range(4)))
    hits = search("support group", "-k", "3", "--channel", "bm25", "--channel", "scene")
    by_id = {h["id"]: h for h in hits}
    assert hits[0]["id"] == ids[0]
    assert by_id[ids[1]]["why"]["scene"]["from"] == ids[0]
    assert "bm25" not in by_id[ids[1]]["why"]  # it came only from the scene
    from mem.stages.channels import SCENE_DISCOUNT

    assert by_id[ids[1]]["score"] == pytest.approx(hits[0]["score"] * SCENE_DISCOUNT, rel=1e-3)
    without = search("support group", "-k", "3", "--channel", "bm25")
    assert ids[1] not in {h["id"] for h in without} and all("scene" not in h["why"] for h in without)


def test_new_channels_work_alone_and_unknown_ones_are_refused():
    add({"text": "Grace owns the checkout service"}, {"text": "The checkout service uses Postgres"})
    for channel in ("entity", "temporal", "community", "semantic", "bm25"):
        result = run_mem("search", "who owns checkout? Grace", "--channel", channel)
        assert result.code == 0, result.stderr
        assert all(set(h["why"]) - {"fused", "priors", "query_type"} <= {channel} for h in result.records)
    bad = run_mem("search", "x", "--channel", "telepathy")
    assert bad.code == 4 and "scene" in bad.error["message"]  # the known list names the post-fusion step


def test_community_routing_adds_members_once_communities_exist():
    add({"text": "Hiro tuned the Elasticsearch shards for the search service"},
        {"text": "Hiro moved the Elasticsearch snapshots to S3"},
        {"text": "Lena plans the team offsite in Lisbon"})
    assert search("Elasticsearch shards", "--channel", "community") == []
    assert run_mem("graph", "communities").code == 0
    hits = search("Elasticsearch shards", "--channel", "community")
    assert hits and all("community" in h["why"] and "community" in h["why"]["community"] for h in hits)


@pytest.mark.parametrize(("query", "kwargs", "expected"), [
    ("When did we move to Postgres?", {"when_question": True}, "temporal"),
    ("what changed in May 2023", {"has_time": True}, "temporal"),
    ("what did we ship recently", {}, "temporal"),
    ("Why did the deploy fail after the Redis upgrade?", {}, "multi-hop"),
    ("Alice and Bob on the billing service", {"entity_count": 2}, "multi-hop"),
    ("Would Melanie enjoy a pottery class?", {}, "open-domain"),
    ("Which cache do we use?", {}, "single-hop"),
])
def test_query_classifier(query, kwargs, expected):
    assert classify(query, **kwargs) == expected


def test_every_channel_has_a_weight_and_a_named_window_weighs_more():
    from mem.stages.search import CHANNELS, WEIGHTS, WINDOW_WEIGHT

    assert set(CHANNELS) <= set(WEIGHTS) and all(w >= 0 for w in WEIGHTS.values())
    assert WINDOW_WEIGHT > WEIGHTS["temporal"]


def test_a_long_lived_process_follows_communities_recomputed_elsewhere():
    """The community channel keeps centroids and members per process (``channels._communities``);
    when another process recomputes the communities, the next search uses the new ones."""
    import os
    from pathlib import Path

    from mem.config import resolve_settings
    from mem.stages import search as stage
    from mem.stages.context import Context
    from mem.store import Store

    add({"text": "Hiro tuned the Elasticsearch shards for the search service"},
        {"text": "Hiro moved the Elasticsearch snapshots to S3"},
        {"text": "Lena plans the team offsite in Lisbon"})
    assert run_mem("graph", "communities").code == 0
    db = Path(os.environ["MEM_DB"])

    def members(ctx: Context) -> set[str]:
        hits = stage.run(ctx, stage.Query(text="Elasticsearch shards", channels=["community"], bump=False))
        assert all("community" in h.why["community"] for h in hits)
        return {h.memory.id for h in hits}

    with Store.open(db) as store:
        ctx = Context(store=store, settings=resolve_settings(db=db, embedder="hash", scope="test"))
        before = members(ctx)
        assert before and members(ctx) == before  # the second search reads the kept copy
        # Another process adds a memory and recomputes: the kept copy must not hide the newcomer.
        (newcomer,) = add({"text": "Hiro doubled the Elasticsearch shards after the search service outage"})
        assert run_mem("graph", "communities").code == 0
        after = members(ctx)
    assert newcomer in after and newcomer not in before

"""The knowledge graph end to end through ``mem graph``: a small project story in, entities, links,
causal chain, timeline, communities and exports out; bad input refused with the right exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import jsonl, run_mem

ENV = {"MEM_EMBEDDER": "hash", "MEM_SCOPE": "test", "MEM_NOW": "2024-06-01T00:00:00Z"}

STORY = [
    # A team choosing a database (session s1).
    {"text": "We compared SQLite and PostgreSQL for the billing service database",
     "meta": {"session": "s1"}, "created_at": "2024-05-01T10:00:00Z"},
    {"text": "The team chose PostgreSQL for billing because SQLite locked under concurrent writes",
     "meta": {"session": "s1"}, "created_at": "2024-05-01T10:05:00Z"},
    {"text": "Alice will write the PostgreSQL schema for the billing tables",
     "meta": {"session": "s1"}, "created_at": "2024-05-01T10:10:00Z"},
    # A bug and its fix (session s2).
    {"text": "Bug: the billing worker crashes with a timeout when the connection pool is exhausted",
     "meta": {"session": "s2"}, "created_at": "2024-05-10T09:00:00Z"},
    {"text": "The worker timeout was fixed by raising the connection pool size to 20",
     "meta": {"session": "s2"}, "created_at": "2024-05-10T11:00:00Z"},
    # A migration (session s3).
    {"text": "We migrated the billing data from SQLite to PostgreSQL with alembic",
     "meta": {"session": "s3"}, "created_at": "2024-05-20T09:00:00Z"},
    {"text": "The alembic migration needed a downtime window of ten minutes",
     "meta": {"session": "s3"}, "created_at": "2024-05-20T09:30:00Z"},
    # Unrelated.
    {"text": "Caroline likes hiking in the mountains on weekends", "created_at": "2024-05-21T09:00:00Z"},
]


def mem(db: Path, *args: str, input: str | None = None):  # noqa: ANN201
    return run_mem(*args, "--db", str(db), input=input, env=ENV)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    db = tmp_path_factory.mktemp("graph") / "story.db"
    result = mem(db, "add", "-", input=jsonl(*STORY))
    assert result.code == 0, result.stderr
    assert [r["status"] for r in result.records] == ["added"] * len(STORY)
    return db, [r["id"] for r in result.records]


def ok(result):  # noqa: ANN001, ANN201
    assert result.code == 0, result.stderr
    return result.records


def test_entities_are_extracted_and_counted(story):
    db, ids = story
    top = {e["key"]: e for e in ok(mem(db, "graph", "entities", "--top", "20"))}
    assert top["postgres"]["count"] == 4 and top["sqlite"]["count"] == 3
    assert top["alembic"]["count"] == 2 and top["connection pool"]["count"] == 2
    assert top["postgres"]["aliases"] == ["PostgreSQL"] and top["postgres"]["type"] == "tool"
    assert top["postgres"]["first_seen"] == "2024-05-01T10:00:00.000Z"
    assert top["postgres"]["last_seen"] == "2024-05-20T09:00:00.000Z"
    assert list(top)[0] == "postgres"  # most mentioned first

    # Any spelling finds it: the canonical key ("pg" -> postgres) or an alias.
    [entity] = ok(mem(db, "graph", "entity", "pg"))
    assert entity["key"] == "postgres" and entity["count"] == 4
    assert [m["id"] for m in entity["memories"]] == [ids[0], ids[1], ids[2], ids[5]]
    related = {r["key"]: r["shared"] for r in entity["related"]}
    assert related["sqlite"] == 3 and related["alembic"] == 1 and related["alice"] == 1


def test_intake_links_sessions_similarity_and_causes(story):
    db, ids = story
    first = ok(mem(db, "graph", "neighbors", ids[0], "--layer", "temporal"))
    assert {(n["id"], n["via"]["type"]) for n in first} == {(ids[1], "precedes"), (ids[2], "same_session")}
    assert all(n["depth"] == 1 and n["from"] == ids[0] for n in first)

    # The bug's session and semantic neighbourhood is its fix, however deep we look.
    chain = ok(mem(db, "graph", "neighbors", ids[3], "--layer", "temporal,semantic", "--depth", "2"))
    assert [n["id"] for n in chain] == [ids[4]]

    # Every layer, the default: entity co-mentions join stored links, stored links first.
    everything = ok(mem(db, "graph", "neighbors", ids[5]))
    by_id = {n["id"]: n for n in everything}
    assert by_id[ids[6]]["via"]["type"] == "precedes"
    assert {ids[0], ids[1], ids[2]} <= set(by_id)
    shared = [n for n in everything if n["via"]["layer"] == "entity"]
    assert shared and all(n["via"]["entity"] in ("postgres", "sqlite", "alembic") for n in shared)
    assert [n["via"]["layer"] == "entity" for n in everything] == sorted(n["via"]["layer"] == "entity" for n in everything)
    assert ids[7] not in by_id  # Caroline's hike shares nothing

    stats = ok(mem(db, "graph", "stats"))[0]
    assert stats["edges_by_type"]["precedes"] == 4 and stats["edges_by_type"]["same_session"] == 1
    assert stats["edges_by_type"]["caused"] >= 1 and stats["edges_by_type"]["resolved"] == 1
    assert stats["isolated_memories"] == 1 and stats["mentions"] >= 12


def test_causal_chain_both_directions(story):
    db, ids = story
    fix = ok(mem(db, "graph", "causes", ids[4]))
    assert [(r["direction"], r["id"]) for r in fix] == [("upstream", ids[3]), ("self", ids[4])]
    assert fix[0]["via"]["type"] == "resolved" and fix[0]["via"]["src"] == ids[4]

    choice = ok(mem(db, "graph", "causes", ids[0]))
    assert ("downstream", ids[1]) in [(r["direction"], r["id"]) for r in choice]
    caused = next(r for r in choice if r["id"] == ids[1])
    assert caused["via"] == {**caused["via"], "src": ids[0], "dst": ids[1], "type": "caused", "layer": "causal"}


def test_path_through_shared_entities(story):
    db, ids = story
    steps = ok(mem(db, "graph", "path", ids[1], ids[6]))
    assert steps[0]["id"] == ids[1] and steps[-1]["id"] == ids[6] and 2 <= len(steps) <= 4
    assert [s["step"] for s in steps] == list(range(len(steps))) and steps[0]["via"] is None
    missing = mem(db, "graph", "path", ids[0], ids[7])
    assert missing.code == 3 and "no path" in missing.error["message"]


def test_timeline_in_event_order(story):
    db, ids = story
    events = ok(mem(db, "graph", "timeline"))
    assert [e["id"] for e in events] == ids  # the story was told in order
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    assert events[3]["session"] == "s2"
    alembic = ok(mem(db, "graph", "timeline", "--entity", "alembic"))
    assert [e["id"] for e in alembic] == [ids[5], ids[6]]
    window = ok(mem(db, "graph", "timeline", "--since", "2024-05-05", "--until", "2024-05-15"))
    assert [e["id"] for e in window] == [ids[3], ids[4]]


def test_communities_are_stored_with_centroids(story):
    import sqlite3

    db, ids = story
    groups = ok(mem(db, "graph", "communities"))
    assert groups and all(g["record"] == "community" and g["size"] == len(g["members"]) for g in groups)
    assert groups[0]["method"] in ("louvain", "leiden")
    home = {m: g["community"] for g in groups for m in g["members"]}
    assert home[ids[0]] == home[ids[1]] == home[ids[2]]  # the database decision
    assert home[ids[3]] == home[ids[4]]  # the bug and its fix
    assert home[ids[0]] != home[ids[3]]
    assert ids[7] not in home  # a lone memory is no community
    label = next(g["label"] for g in groups if ids[3] in g["members"])
    assert "connection pool" in label

    assert ok(mem(db, "graph", "communities", "--stored")) == [{**g, "method": "stored"} for g in groups]
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT size, length(centroid) FROM communities WHERE scope = 'test'").fetchall()
        members = conn.execute("SELECT COUNT(*) FROM community_members").fetchone()[0]
    assert sorted(r[0] for r in rows) == sorted(g["size"] for g in groups)
    assert all(r[1] == 512 * 4 for r in rows)  # mean of the members' 512-d hash vectors, float32
    assert members == sum(g["size"] for g in groups)


@pytest.mark.parametrize("fmt", ["graphml", "dot", "json", "mermaid"])
def test_export_formats_parse(story, tmp_path, fmt):
    import networkx as nx

    db, ids = story
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / f"graph.{fmt}"
    result = mem(db, "graph", "export", "--format", fmt, "-o", str(out))
    assert result.code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert list(out.parent.iterdir()) == [out]  # no temp file left beside it
    if fmt == "graphml":
        graph = nx.read_graphml(out)
        assert set(ids) <= set(graph.nodes) and "entity:postgres" in graph.nodes
        types = {d["type"] for _, _, d in graph.edges(data=True)}
        assert {"precedes", "resolved", "caused", "mentions"} <= types
        assert graph.nodes[ids[7]]["text"].startswith("Caroline likes hiking")
    elif fmt == "dot":
        assert text.startswith("digraph") and text.count("{") == text.count("}") == 1
        assert f'"{ids[4]}" -> "{ids[3]}" [label="resolved"' in text
    elif fmt == "json":
        data = json.loads(text)
        assert set(ids) <= {n["id"] for n in data["nodes"]}
        assert any(e["type"] == "resolved" and e["source"] == ids[4] for e in data["edges"])
    else:
        assert text.startswith(("graph", "flowchart"))
        assert "-->|resolved|" in text and '(["PostgreSQL"])' in text


def test_export_to_stdout_and_by_extension(story, tmp_path):
    db, _ = story
    assert mem(db, "graph", "export").stdout.lstrip().startswith("{")  # JSON by default
    out = tmp_path / "g.dot"
    assert mem(db, "graph", "export", "-o", str(out)).code == 0
    assert out.read_text().startswith("digraph")


def test_export_to_an_unwritable_path_leaves_nothing(story, tmp_path):
    db, _ = story
    missing = tmp_path / "no" / "such" / "dir" / "g.graphml"
    result = mem(db, "graph", "export", "-f", "graphml", "-o", str(missing))
    assert result.code == 4 and "cannot write" in result.error["message"]
    assert not (tmp_path / "no").exists()
    folder = tmp_path / "folder"
    folder.mkdir()
    result = mem(db, "graph", "export", "-o", str(folder))
    assert result.code == 4 and list(folder.iterdir()) == []
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            result = mem(db, "graph", "export", "-o", str(locked / "g.json"))
            assert result.code == 4 and list(locked.iterdir()) == []
        finally:
            locked.chmod(0o700)
    bad = mem(db, "graph", "export", "--format", "png")
    assert bad.code == 4 and "png" in bad.error["message"]


def test_unknown_ids_and_entities_exit_3_naming_them(story):
    db, ids = story
    result = mem(db, "graph", "neighbors", "ffffffff")
    assert result.code == 3 and "ffffffff" in result.error["message"]
    result = mem(db, "graph", "entity", "Kubernetes Operator")
    assert result.code == 3 and "Kubernetes Operator" in result.error["message"]
    assert result.error["entity"] == "Kubernetes Operator"
    result = mem(db, "graph", "timeline", "--entity", "nosuchthing")
    assert result.code == 3 and "nosuchthing" in result.error["message"]
    result = mem(db, "graph", "causes", "0000aaaa")
    assert result.code == 3
    result = mem(db, "graph", "neighbors", ids[0], "--layer", "bogus")
    assert result.code == 4 and "bogus" in result.error["message"]


def test_manual_link_and_unlink(tmp_path):
    db = tmp_path / "links.db"
    added = ok(mem(db, "add", "-", input=jsonl(
        {"text": "The deploy script lives in ops/deploy.sh", "created_at": "2024-01-01T00:00:00Z"},
        {"text": "Caroline is training for a marathon in October", "created_at": "2024-03-01T00:00:00Z"})))
    a, b = added[0]["id"], added[1]["id"]
    [edge] = ok(mem(db, "graph", "link", a[:8], b[:8], "--type", "motivated", "--weight", "0.5"))
    assert edge == {**edge, "src": a, "dst": b, "type": "motivated", "layer": "causal", "origin": "manual",
                    "weight": 0.5}
    [seen] = ok(mem(db, "graph", "neighbors", b, "--layer", "causal"))
    assert seen["id"] == a and seen["via"]["direction"] == "in" and seen["via"]["origin"] == "manual"
    [other] = ok(mem(db, "graph", "link", a, b))  # another type between the same pair is fine
    assert other["type"] == "related" and other["layer"] == "manual"

    duplicate = mem(db, "graph", "link", a, b, "--type", "motivated")
    assert duplicate.code == 4 and "already exists" in duplicate.error["message"]
    self_link = mem(db, "graph", "link", a, a[:16])
    assert self_link.code == 4 and "itself" in self_link.error["message"]
    unknown = mem(db, "graph", "link", a, "deadbeef")
    assert unknown.code == 3 and "deadbeef" in unknown.error["message"]
    bad_weight = mem(db, "graph", "link", b, a, "--weight", "-1")
    assert bad_weight.code == 4

    removed = ok(mem(db, "graph", "unlink", b, a, "--type", "motivated"))  # either order
    assert [(r["src"], r["type"], r["status"]) for r in removed] == [(a, "motivated", "unlinked")]
    assert [r["type"] for r in ok(mem(db, "graph", "unlink", a, b))] == ["related"]
    gone = mem(db, "graph", "unlink", a, b)
    assert gone.code == 3 and "no link" in gone.error["message"]
    assert ok(mem(db, "graph", "neighbors", a, "--layer", "manual,causal")) == []


def test_a_supersedes_link_hides_the_older_and_unlinking_it_restores_it(tmp_path):
    # a wrong supersession is undone by hand, and one intake missed is made by hand: the status the
    # search reads (superseded_by) follows the edge both ways
    db = tmp_path / "supersede.db"
    older, newer = (r["id"] for r in ok(mem(db, "add", "-", input=jsonl(
        {"text": "Deploys go out on Tuesdays.", "created_at": "2024-01-01T00:00:00Z"},
        {"text": "Deploys are on Thursdays from this sprint on.", "created_at": "2024-02-01T00:00:00Z"}))))

    def found() -> list[str]:
        return [h["id"] for h in ok(mem(db, "search", "which day do deploys go out"))]

    assert older in found()
    [edge] = ok(mem(db, "graph", "link", newer, older, "--type", "supersedes"))
    assert edge["layer"] == "lifecycle" and [r["superseded_by"] for r in ok(mem(db, "get", older))] == [newer]
    assert older not in found()
    loop = mem(db, "graph", "link", older, newer, "--type", "supersedes")
    assert loop.code == 4 and "already supersedes" in loop.error["message"]
    third = ok(mem(db, "add", "Deploys are on Fridays.", "--now", "2024-03-01T00:00:00Z"))[0]["id"]
    taken = mem(db, "graph", "link", third, older, "--type", "supersedes")
    assert taken.code == 4 and "already superseded" in taken.error["message"]

    [undone] = ok(mem(db, "graph", "unlink", older, newer, "--type", "supersedes"))
    assert undone["restored"] == older and undone["status"] == "unlinked"
    assert [r["superseded_by"] for r in ok(mem(db, "get", older))] == [None] and older in found()


def test_out_of_order_session_turn_is_spliced_into_the_chain(tmp_path):
    db = tmp_path / "order.db"
    turns = [{"text": t, "meta": {"session": "chat"}, "created_at": at} for t, at in (
        ("Melanie asked about the pottery class schedule", "2024-01-01T10:00:00Z"),
        ("Caroline said the class moved to Thursday evenings", "2024-01-01T10:10:00Z"),
    )]
    first, last = (r["id"] for r in ok(mem(db, "add", "-", input=jsonl(*turns))))
    [middle] = ok(mem(db, "add", "-", input=jsonl(
        {"text": "Melanie wondered whether beginners can join", "meta": {"session": "chat"},
         "created_at": "2024-01-01T10:05:00Z"})))
    chain = ok(mem(db, "graph", "neighbors", middle["id"], "--layer", "temporal"))
    assert {(n["id"], n["via"]["type"]) for n in chain} == {(first, "precedes"), (last, "precedes")}
    assert [n["id"] for n in ok(mem(db, "graph", "neighbors", first, "--layer", "temporal"))] == [middle["id"]]


BUG_STORY = [  # (text, the index of the memory it should name as its cause, or None)
    ("The nightly build failed on the CI runner with no space left on device.", None),
    ("The nightly build broke because the disk on the CI runner filled up with old Docker images.", None),
    ("Fixed the nightly build by pruning old Docker images on the CI runner.", 0),
    ("Checkout requests on the payments API got slow on Monday, p95 at 4 seconds.", None),
    ("Root cause of the slow checkout requests was a missing index on payments.order_id.", None),
    ("To fix the slow checkout requests we added an index on payments.order_id.", 4),
    ("After the payments.order_id index went in, we added a latency alert on the checkout endpoint.", 5),
    ("The Friday release was rolled back because the checkout latency alert fired on every deploy.", 6),
]


# A second story, written after the linking rules and never tuned on: other verbs of the same
# shapes ("came from", "the reason behind X was", "got rid of", "were resolved by", "following X,",
# "due to") and reports that carry no problem word ("stale prices showed up", "have been dropping").
BUG_STORY_2 = [
    ("Stale prices showed up in the storefront for a day after the catalogue import on Tuesday.", None),
    ("The stale storefront prices came from the cache purge hook being skipped when the import ran in bulk mode.", None),
    ("We got rid of the stale prices by purging the storefront cache at the end of every bulk import.", 0),
    ("Webhook deliveries to partners have been dropping since Thursday; about 8 % never arrive.", None),
    ("The reason behind the dropped webhook deliveries was the partner gateway rejecting payloads over 256 KB.", None),
    ("The dropped webhook deliveries were resolved by paging large payloads to 200 KB.", 3),
    ("Following the webhook paging change, we added a dashboard panel for payload sizes per partner.", 5),
    ("Partner sync jobs stalled overnight due to the new payload size panel querying the delivery table without an index.", 6),
]


def _story_links(db: Path, story: list[tuple[str, int | None]]) -> tuple[list[str], Any, Any]:
    records = [{"text": t, "created_at": f"2024-06-0{1 + i // 3}T{10 + i % 3}:00:00Z", "meta": {"session": f"b{i // 3}"}}
               for i, (t, _) in enumerate(story)]
    ids = [r["id"] for r in ok(mem(db, "add", "-", input=jsonl(*records)))]

    def upstream(i: int) -> set[str]:
        return {r["id"] for r in ok(mem(db, "graph", "causes", ids[i])) if r["direction"] == "upstream"}

    def downstream(i: int) -> set[str]:
        return {r["id"] for r in ok(mem(db, "graph", "causes", ids[i])) if r["direction"] == "downstream"}

    for i, (_, cause) in enumerate(story):
        if cause is not None:
            assert ids[cause] in upstream(i), (i, story[i][0])
    return ids, upstream, downstream


def test_causal_links_hold_on_a_story_in_wording_they_were_not_built_on(tmp_path: Path) -> None:
    ids, upstream, downstream = _story_links(tmp_path / "bugs2.db", BUG_STORY_2)
    assert ids[1] in upstream(0) and ids[4] in upstream(3)  # each explanation is its report's cause
    assert ids[2] in downstream(0) and ids[5] in downstream(3)  # each fix resolves its report
    assert ids[4] not in upstream(0) and ids[1] not in upstream(3)  # no link across the two incidents


@pytest.mark.parametrize("report, unrelated, explanation", [
    # by word stems, with no problem word in the report ("froze" / "frozen")
    ("The upload page froze for customers with files over 2 GB", "The upload page has a dark mode since May",
     "Root cause of the frozen upload page was hashing the whole file in the browser"),
    # "we lost X because Y" explains the report of X, not a decision: the report's cause is it, where
    # "we chose X because Y" would be led to by the memory naming Y
    ("Session data went missing for some users on Tuesday", "Session cookies are signed with the app secret",
     "We lost the session data because Redis restarted without persistence"),
], ids=["stems", "told_by_us"])
def test_an_explanation_is_the_cause_of_the_report_it_explains(tmp_path: Path, report: str, unrelated: str,
                                                               explanation: str) -> None:
    db = tmp_path / "why.db"
    report_id, unrelated_id, cause = (r["id"] for r in ok(mem(db, "add", "-", input=jsonl(
        {"text": report, "created_at": "2024-06-01T10:00:00Z"},
        {"text": unrelated, "created_at": "2024-06-01T10:01:00Z"},
        {"text": explanation, "created_at": "2024-06-01T10:05:00Z"}))))
    links = ok(mem(db, "graph", "causes", report_id))
    assert [(r["direction"], r["id"]) for r in links if r["id"] != report_id] == [("upstream", cause)]
    assert unrelated_id not in {r["id"] for r in ok(mem(db, "graph", "causes", cause))}


def test_a_fix_word_with_no_object_links_nothing(tmp_path: Path) -> None:
    """'fixes' as a noun ("security fixes are applied") or a routine ("patched per update") fixes no
    earlier memory, whatever words they share; a fix with an object still resolves its report."""
    db = tmp_path / "routine.db"
    report, noun, routine, fix = (r["id"] for r in ok(mem(db, "add", "-", input=jsonl(
        {"text": "The map widget froze on every websocket update", "created_at": "2024-06-01T10:00:00Z"},
        {"text": "Map widget fixes are applied on every websocket update", "created_at": "2024-06-01T10:01:00Z"},
        {"text": "The map widget layer is patched per websocket update", "created_at": "2024-06-01T10:02:00Z"},
        {"text": "Fixed the frozen map widget by diffing markers", "created_at": "2024-06-01T10:05:00Z"}))))
    effects = {r["id"] for r in ok(mem(db, "graph", "causes", report)) if r["direction"] == "downstream"}
    assert fix in effects and not effects & {noun, routine}


def test_causal_links_follow_the_shape_of_the_sentence_not_a_cue_list(tmp_path: Path) -> None:
    ids, upstream, downstream = _story_links(tmp_path / "bugs.db", BUG_STORY)
    # "X broke because Y" and "the root cause of X was Y" explain the report of X: its cause
    assert ids[1] in upstream(0)
    assert ids[4] in upstream(3)
    # the fix resolves the failure, so the failure's effects include it
    assert ids[2] in downstream(0)

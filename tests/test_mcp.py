"""``mem serve-mcp`` end to end, driven by the SDK's Client: the real server in a subprocess over
stdio where the process matters (the core flow, roots and working directory, writes from another
process), once over Streamable HTTP, raw JSON-RPC over pipes for the stdout-purity check; the
tool-by-tool tests connect in memory to the same server built in this process (``mcp_client``)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import run_mem

pytest.importorskip("mcp")

SERVE = [sys.executable, "-m", "mem", "serve-mcp"]
SECRET = "deploy token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"


@asynccontextmanager
async def stdio_client(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, **client_kw: Any):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], env={**os.environ, **(env or {})},
                                   cwd=str(cwd) if cwd else None)
    async with Client(params, **client_kw) as client:
        yield client


@asynccontextmanager
async def mcp_client(*args: str, **client_kw: Any):
    """The server ``mem serve-mcp ARGS`` would serve, built in this process and connected in memory.

    The same options (parsed by the command itself), engine, tools and resources as over stdio,
    without starting an interpreter per test; ``stdio_client`` is for what needs the real process
    and its pipes (the wire format, a working directory, other processes writing meanwhile).
    """
    from mcp import Client

    from mem.cli import app
    from mem.cli.serve import opened_server
    import typer.main

    options = typer.main.get_command(app).commands["serve-mcp"].make_context("serve-mcp", list(args)).params
    assert not options["http"], "Streamable HTTP needs a real server: use _start_http"
    with opened_server(profile=options["profile"], db=options["db"], scope=options["scope"],
                       embedder=options["embedder"], now=options["now"],
                       allow_scope=options["allow_scope"] or ()) as server:
        async with Client(server, **client_kw) as client:
            yield client


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def call(fn: Any) -> Any:
    return anyio.run(fn)


# --------------------------------------------------------------------------- tools/list


def test_default_profile_lists_core_tools_with_hints_under_8kb() -> None:
    async def main() -> None:
        async with mcp_client() as client:
            listed = await client.list_tools()
            names = [t.name for t in listed.tools]
            for name in ("add", "search", "get", "update", "forget", "stats", "recent"):
                assert name in names
            assert len(names) <= 12
            by_name = {t.name: t for t in listed.tools}
            for name in ("search", "get", "stats", "recent"):
                assert by_name[name].annotations.read_only_hint is True
            assert by_name["forget"].annotations.destructive_hint is True
            assert by_name["add"].annotations.destructive_hint is False
            assert by_name["search"].output_schema["properties"]["hits"]["type"] == "array"
            size = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
            assert size <= 8192, size
            for tool in listed.tools:
                assert tool.description and len(tool.description) <= 160, tool.name

    call(main)


# --------------------------------------------------------------------------- the core flow


def test_add_search_get_update_forget_over_stdio() -> None:
    async def main() -> None:
        async with stdio_client() as client:
            added = await client.call_tool("add", {"text": "We chose Redis for the cache layer", "tags": ["infra"]})
            assert not added.is_error, text(added)
            memory_id = added.structured_content["outcomes"][0]["id"]
            assert added.structured_content["outcomes"][0]["status"] == "added"
            assert memory_id in text(added)

            many = await client.call_tool("add", {"memories": [
                "The API gateway runs on port 8443",
                {"text": "Prefer pytest over unittest for new tests", "kind": "preference"},
                SECRET,
            ]})
            statuses = [o["status"] for o in many.structured_content["outcomes"]]
            assert statuses == ["added", "added", "rejected"]

            found = await client.call_tool("search", {"query": "which cache did we choose", "why": True})
            hits = found.structured_content["hits"]
            assert hits[0]["id"] == memory_id and hits[0]["scope"] == "test"
            assert "semantic" in hits[0]["why"] and "priors" in hits[0]["why"]
            assert "Redis" in text(found)
            plain = await client.call_tool("search", {"query": "cache", "kinds": ["preference"]})
            assert all(h["kind"] == "preference" for h in plain.structured_content["hits"])
            assert all("why" not in h for h in plain.structured_content["hits"])

            got = await client.call_tool("get", {"ids": memory_id[:-6]})
            assert got.structured_content["memories"][0]["text"] == "We chose Redis for the cache layer"

            updated = await client.call_tool("update", {"id": memory_id, "text": "We chose Valkey for the cache layer",
                                                        "add_tags": ["cache"], "pinned": True})
            memory = updated.structured_content["memories"][0]
            assert memory["text"].startswith("We chose Valkey") and memory["pinned"] is True
            assert memory["tags"] == ["infra", "cache"]
            again = await client.call_tool("search", {"query": "Valkey"})
            assert again.structured_content["hits"][0]["id"] == memory_id

            recent = await client.call_tool("recent", {"limit": 2})
            assert recent.structured_content["count"] == 2

            stats = await client.call_tool("stats", {})
            assert stats.structured_content["memories"] == 3

            gone = await client.call_tool("forget", {"ids": [memory_id]})
            assert gone.structured_content["outcomes"][0]["status"] == "archived"
            after = await client.call_tool("search", {"query": "Valkey cache"})
            assert memory_id not in [h["id"] for h in after.structured_content["hits"]]
            archived = await client.call_tool("search", {"query": "Valkey cache", "include_archived": True})
            assert memory_id in [h["id"] for h in archived.structured_content["hits"]]

            resource = await client.read_resource(f"mem://memory/{memory_id}")
            assert json.loads(resource.contents[0].text)["status"] == "archived"
            stats_resource = await client.read_resource("mem://stats")
            assert json.loads(stats_resource.contents[0].text)["memories"] == 3

    call(main)


def test_errors_are_tool_errors_and_the_server_keeps_serving() -> None:
    async def main() -> None:
        async with mcp_client() as client:
            cases = [
                ("get", {"ids": "ffffffff"}, "no memory"),
                ("update", {"id": "ffffffff", "text": "whatever text"}, "no memory"),
                ("add", {"text": SECRET}, "secret"),
                ("add", {}, "give 'text' or 'memories'"),
                ("add", {"text": "a scope-less memory", "scope": "*"}, "one scope"),
                ("search", {"query": "x", "k": 0}, "limit must be"),  # k: the old name of limit
                ("search", {"query": "x", "limit": 0}, "limit must be"),
                ("search", {"query": "x", "limt": 3}, "limt"),  # unknown arguments are refused
                ("search", {"query": "   "}, "empty query"),
                ("search", {"query": "x", "channels": ["nope"]}, "unknown channel"),
                ("search", {"query": "x", "since": "not a date"}, "since"),
                ("search", {"k": 3}, "query"),  # schema validation: a required argument is missing
                ("update", {"id": "ffffffff", "kind": "nonsense"}, "no memory"),
                ("recent", {"status": "sleeping"}, "unknown status"),
                ("no_such_tool", {}, "no_such_tool"),
            ]
            for name, args, message in cases:
                result = await client.call_tool(name, args)
                assert result.is_error, (name, args)
                assert message.lower() in text(result).lower(), (name, text(result))
            ok = await client.call_tool("add", {"text": "still serving after errors"})
            assert not ok.is_error
            assert (await client.call_tool("stats", {})).structured_content["memories"] == 1

    call(main)


def test_sees_memories_added_by_another_process_while_running() -> None:
    async def main() -> None:
        async with stdio_client() as client:
            for _ in range(4):  # past the point where the vector index warms up into RAM
                before = await client.call_tool("search", {"query": "zebra crossing migration"})
                assert before.structured_content["count"] == 0
            added = await anyio.to_thread.run_sync(lambda: run_mem("add", "The zebra crossing migration ran on Friday"))
            assert added.code == 0, added.stderr
            new_id = added.records[0]["id"]
            after = await client.call_tool("search", {"query": "zebra crossing migration"})
            assert [h["id"] for h in after.structured_content["hits"]][:1] == [new_id]
            got = await client.call_tool("get", {"ids": new_id})
            assert got.structured_content["memories"][0]["id"] == new_id

    call(main)


# --------------------------------------------------------------------------- graph and lifecycle


def _has(stage: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(f"mem.stages.{stage}") is not None


@pytest.mark.skipif(not _has("graph"), reason="graph stage not installed")
def test_link_and_graph_ops() -> None:
    async def main() -> None:
        async with mcp_client() as client:
            added = await client.call_tool("add", {"memories": [
                "The login outage was caused by an expired TLS certificate on auth.example.com",
                "We renewed the TLS certificate for auth.example.com and logins work again",
                "Postgres 16 is the main database for the billing service",
            ]})
            outage, fix, pg = [o["id"] for o in added.structured_content["outcomes"]]
            linked = await client.call_tool("link", {"a": fix, "b": outage, "type": "resolved"})
            assert linked.structured_content["rows"][0]["layer"] == "causal", text(linked)
            again = await client.call_tool("link", {"a": fix, "b": outage, "type": "resolved"})
            assert again.is_error and "already exists" in text(again)

            chain = await client.call_tool("graph", {"op": "causes", "id": fix})
            assert [(r["direction"], r["id"]) for r in chain.structured_content["rows"]] == [("upstream", outage), ("self", fix)]
            near = await client.call_tool("graph", {"op": "neighbors", "id": outage, "layers": ["causal"]})
            assert [r["id"] for r in near.structured_content["rows"]] == [fix]
            path = await client.call_tool("graph", {"op": "path", "id": outage, "to": fix})
            assert [r["id"] for r in path.structured_content["rows"]] == [outage, fix]
            entity = await client.call_tool("graph", {"op": "entity", "name": "postgres"})
            assert pg in [m["id"] for m in entity.structured_content["rows"][0]["memories"]]
            stats = await client.call_tool("graph", {"op": "stats"})
            assert stats.structured_content["rows"][0]["edges"] >= 1
            timeline = await client.call_tool("graph", {"op": "timeline"})
            assert timeline.structured_content["count"] == 3
            for args, message in (({"op": "path", "id": outage}, "needs 'to'"), ({"op": "walk"}, "unknown op"),
                                  ({"op": "entity", "name": "nobody-knows-this"}, "no entity")):
                failed = await client.call_tool("graph", args)
                assert failed.is_error and message in text(failed), text(failed)

    call(main)


@pytest.mark.skipif(not (_has("consolidate") and _has("verify") and _has("archive")), reason="lifecycle not installed")
def test_consolidate_verify_archive(tmp_path: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_text("deploys go through ops/deploy.sh\n")

    async def main() -> None:
        async with mcp_client() as client:
            added = await client.call_tool("add", {"memories": [
                {"text": "Deploys go through the ops deploy script", "source": str(source), "source_line": 1},
                "Postgres 16 is the main database for the billing service",
                "Alice maintains the billing service and its Postgres schema",
            ]})
            sourced, pg, _ = [o["id"] for o in added.structured_content["outcomes"]]
            dry = await client.call_tool("consolidate", {"dry_run": True})
            assert dry.structured_content["summary"]["dry_run"] is True, text(dry)
            run = await client.call_tool("consolidate", {})
            assert set(run.structured_content["summary"]["phases"]) == {"replay", "reorganize", "compress", "prune"}
            communities = await client.call_tool("graph", {"op": "communities"})
            assert not communities.is_error

            clean = await client.call_tool("verify", {})
            assert clean.structured_content["summary"]["checked"] == 1
            assert clean.structured_content["summary"]["problems"] == 0
            source.unlink()
            missing = await client.call_tool("verify", {"ids": sourced})
            assert missing.structured_content["summary"]["missing"] == 1
            assert missing.structured_content["records"][0]["finding"] == "missing"

            gone = await client.call_tool("archive", {"ids": pg})
            assert gone.structured_content["records"][0]["status"] == "archived", text(gone)
            hits = await client.call_tool("search", {"query": "Postgres billing database"})
            assert pg not in [h["id"] for h in hits.structured_content["hits"]]
            back = await client.call_tool("archive", {"ids": pg, "restore": True})
            assert back.structured_content["records"][0]["status"] == "restored", text(back)
            hits = await client.call_tool("search", {"query": "Postgres billing database"})
            assert pg in [h["id"] for h in hits.structured_content["hits"]]
            bad = await client.call_tool("archive", {"restore": True})
            assert bad.is_error and "restore needs ids" in text(bad)
            policy = await client.call_tool("archive", {"dry_run": True})
            assert not policy.is_error

    call(main)


# --------------------------------------------------------------------------- scope


def test_scope_boundary_reads_and_writes_its_scope_and_reads_global(tmp_path: Path) -> None:
    other_id = run_mem("add", "--scope", "other", "Billing runs nightly at two").records[0]["id"]
    global_id = run_mem("add", "--scope", "global", "Standups are at ten every weekday").records[0]["id"]

    async def refused(client: Any, name: str, args: dict[str, Any], words: str) -> None:
        result = await client.call_tool(name, args)
        assert result.is_error and words in text(result), (name, args, text(result))
        assert "Billing" not in text(result)

    async def main() -> None:
        async with mcp_client("--scope", "shop") as client:
            added = await client.call_tool("add", {"text": "Checkout uses Stripe"})
            memory_id = added.structured_content["outcomes"][0]["id"]
            got = await client.call_tool("get", {"ids": memory_id})
            assert got.structured_content["memories"][0]["scope"] == "shop"
            own = await client.call_tool("search", {"query": "billing nightly"})
            assert {h["scope"] for h in own.structured_content["hits"]} <= {"shop"}
            # another scope's id does not exist here, whatever the tool
            for name, args in [("get", {"ids": other_id}), ("get", {"ids": other_id[:18]}),
                               ("update", {"id": other_id, "text": "Billing runs at noon"}),
                               ("forget", {"ids": other_id, "purge": True}),
                               ("link", {"a": memory_id, "b": other_id}),
                               ("graph", {"op": "neighbors", "id": other_id}),
                               ("archive", {"ids": other_id})]:
                await refused(client, name, args, "no memory")
            for name, args in [("search", {"query": "billing", "scope": "*"}),
                               ("search", {"query": "billing", "scope": "other"}),
                               ("recent", {"scope": "other"}),
                               ("add", {"text": "Billing moved to Fridays", "scope": "other"}),
                               ("add", {"memories": [{"text": "Billing moved to Fridays", "scope": "other"}]}),
                               ("consolidate", {"scope": "*"})]:
                await refused(client, name, args, "shop")
            # global: readable, not writable
            standup = await client.call_tool("search", {"query": "standups weekday", "scope": "global"})
            assert [h["id"] for h in standup.structured_content["hits"]] == [global_id]
            assert (await client.call_tool("get", {"ids": global_id})).structured_content["count"] == 1
            await refused(client, "update", {"id": global_id, "text": "Standups are at nine"}, "read-only")
            # a supersedes link hides its target: a read-only memory cannot be its target
            await refused(client, "link", {"a": memory_id, "b": global_id, "type": "supersedes"}, "read-only")
            assert (await client.call_tool("link", {"a": memory_id, "b": global_id})).is_error is False
            await refused(client, "add", {"text": "Standups moved to nine", "scope": "global"}, "shop")
            stats = await client.call_tool("stats", {})
            assert stats.structured_content["by_scope"] == {"shop": 1, "global": 1}
            assert stats.structured_content["memories"] == 2
            assert "other" not in text(stats) and "path" not in stats.structured_content
            assert str(tmp_path) not in text(stats)
            resource = json.loads((await client.read_resource("mem://stats")).contents[0].text)
            assert "other" not in resource["by_scope"] and "path" not in resource
        async with mcp_client("--scope", "shop", "--allow-scope", "oth*") as client:
            named = await client.call_tool("recent", {"scope": "other"})
            assert [m["id"] for m in named.structured_content["memories"]] == [other_id]
            moved = await client.call_tool("update", {"id": other_id, "add_tags": ["billing"]})
            assert moved.structured_content["memories"][0]["tags"] == ["billing"]
        async with mcp_client("--scope", "*") as client:  # unbounded: every scope, '*' included
            every = await client.call_tool("search", {"query": "billing nightly", "scope": "*"})
            assert "other" in {h["scope"] for h in every.structured_content["hits"]}

    call(main)
    assert run_mem("get", other_id).records[0]["text"] == "Billing runs nightly at two"


def test_memory_v3_agent_sync_stays_in_scope_and_never_returns_purged_text() -> None:
    run_mem("add", "--scope", "other", "Billing runs nightly at two")

    async def main() -> None:
        async with mcp_client("--profile", "memory-v3", "--scope", "shop") as client:
            kept = await client.call_tool("add_memory", {"content": "Checkout uses Stripe for cards"})
            gone = await client.call_tool("add_memory", {"content": "The Qzvortex coupon code lives in Redis"})
            gone_id = gone.structured_content["outcomes"][0]["id"]
            async with mcp_client("--scope", "shop") as default:
                assert not (await default.call_tool("forget", {"ids": gone_id, "purge": True})).is_error
            synced = await client.call_tool("agent_sync", {"agent_id": "reviewer"})
            body = text(synced)
            assert "Billing" not in body and "other" not in body and "Qzvortex" not in body
            assert kept.structured_content["outcomes"][0]["id"] in body
            assert (await client.call_tool("reindex", {})).is_error  # every scope: not for a scoped client
            assert (await client.call_tool("get", {"memory_id": gone_id})).is_error

    call(main)


@pytest.mark.slow  # a real process (or several): full suite and CI only
def test_scope_from_client_roots_else_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.types import ListRootsResult, Root

    from mem.scope import repo_scope

    monkeypatch.delenv("MEM_SCOPE")
    repo = tmp_path / "webshop"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    elsewhere = tmp_path / "cwd-repo"
    (elsewhere / ".git").mkdir(parents=True)

    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=f"file://{repo / 'src'}", name="webshop")])

    async def main() -> None:
        async with stdio_client(cwd=elsewhere, list_roots_callback=roots, mode="legacy") as client:
            added = await client.call_tool("add", {"text": "Orders are stored in Postgres"})
            assert not added.is_error, text(added)
            got = await client.call_tool("get", {"ids": added.structured_content["outcomes"][0]["id"]})
            assert got.structured_content["memories"][0]["scope"] == repo_scope(repo).name
        async with stdio_client(cwd=elsewhere) as client:  # no roots: the working directory's repository
            added = await client.call_tool("add", {"text": "Invoices are rendered with WeasyPrint"})
            got = await client.call_tool("get", {"ids": added.structured_content["outcomes"][0]["id"]})
            assert got.structured_content["memories"][0]["scope"] == repo_scope(elsewhere).name
    # A repository without a remote gets a name made once from its folder and kept in its git config.
    assert repo_scope(repo).name.startswith("webshop-") and repo_scope(repo).how == "git config mem.scope"

    call(main)


def test_a_scope_from_the_client_roots_is_a_boundary_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.types import ListRootsResult, Root

    monkeypatch.delenv("MEM_SCOPE")
    repo = tmp_path / "webshop"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    from mem.scope import repo_scope

    home = repo_scope(repo).name
    assert run_mem("add", "--scope", "billing", "Invoices are sent on the first").code == 0

    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=f"file://{repo}", name="webshop")])

    async def main() -> None:
        async with mcp_client(list_roots_callback=roots, mode="legacy") as client:
            added = await client.call_tool("add", {"text": "Orders are stored in Postgres"})
            got = await client.call_tool("get", {"ids": added.structured_content["outcomes"][0]["id"]})
            assert got.structured_content["memories"][0]["scope"] == home
            every = await client.call_tool("search", {"query": "invoices first", "scope": "*"})
            assert every.is_error and home in text(every)
            stats = await client.call_tool("stats", {})
            assert set(stats.structured_content["by_scope"]) == {home}

    call(main)


# --------------------------------------------------------------------------- memory-v3 profile


def test_memory_v3_profile() -> None:
    async def main() -> None:
        async with mcp_client("--profile", "memory-v3", "--scope", "*") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            core = {"add_memory", "get", "update", "forget", "search", "keyword_search", "stats", "list_recent",
                    "list_topics", "reindex", "check_integrity", "agent_sync", "set_governance_layer"}
            assert core <= names
            assert names <= core | {"link_memories", "graph_search", "graph_stats_tool", "get_causal_chain",
                                    "get_timeline", "extract_from_conversation", "compact_text", "check_conflicts",
                                    "decay_sweep", "sleep_consolidation", "verify_memories"}
            added = await client.call_tool("add_memory", {"content": "Alice owns the billing service",
                                                          "content_type": "person", "protected": True})
            memory_id = added.structured_content["outcomes"][0]["id"]
            got = await client.call_tool("get", {"memory_id": memory_id})
            memory = got.structured_content["memories"][0]
            assert memory["pinned"] is True and "person" in memory["tags"]
            rejected = await client.call_tool("add_memory", {"content": SECRET})
            assert rejected.is_error and "secret" in text(rejected)
            bad_type = await client.call_tool("add_memory", {"content": "x y z", "content_type": "poem"})
            assert bad_type.is_error and "content_type" in text(bad_type)

            keyword = await client.call_tool("keyword_search", {"keywords": "billing"})
            assert keyword.structured_content["hits"][0]["id"] == memory_id
            assert set(keyword.structured_content["hits"][0].get("why", {"bm25": 1})) <= {"bm25", "fused", "priors"}
            hybrid = await client.call_tool("search", {"query": "who owns billing", "limit": 3})
            assert hybrid.structured_content["hits"][0]["id"] == memory_id

            layer = await client.call_tool("set_governance_layer", {"memory_id": memory_id, "layer": 2})
            assert layer.structured_content["memories"][0]["layer"] == 2
            recent = await client.call_tool("list_recent", {"hours": 1})
            assert recent.structured_content["count"] == 1

            first = await client.call_tool("agent_sync", {"agent_id": "reviewer"})
            assert first.structured_content["count"] >= 2  # the add and the layer change
            assert (await client.call_tool("agent_sync", {"agent_id": "reviewer"})).structured_content["count"] == 0
            await client.call_tool("update", {"memory_id": memory_id, "tags": ["billing"]})
            third = await client.call_tool("agent_sync", {"agent_id": "reviewer"})
            assert [e["op"] for e in third.structured_content["entries"]] == ["update"]

            integrity = await client.call_tool("check_integrity", {})
            assert integrity.structured_content["db_integrity"] == "ok"
            reindexed = await client.call_tool("reindex", {})
            assert reindexed.structured_content["memories"] == 1
            forgotten = await client.call_tool("forget", {"memory_id": memory_id, "reason": "test"})
            assert forgotten.structured_content["outcomes"][0]["status"] == "archived"

    call(main)


@pytest.mark.skipif(not (_has("graph") and _has("consolidate") and _has("verify")), reason="graph/lifecycle missing")
def test_memory_v3_graph_and_lifecycle_tools() -> None:
    async def main() -> None:
        async with mcp_client("--profile", "memory-v3") as client:
            ids = []
            for content in ("The login outage was caused by an expired TLS certificate on auth.example.com",
                            "We renewed the TLS certificate for auth.example.com and logins work again",
                            "Postgres 16 is the main database for the billing service"):
                added = await client.call_tool("add_memory", {"content": content})
                ids.append(added.structured_content["outcomes"][0]["id"])
            outage, fix, pg = ids
            linked = await client.call_tool("link_memories", {"memory_id_a": outage, "memory_id_b": pg})
            assert linked.structured_content["rows"][0]["type"] == "related"
            chain = await client.call_tool("get_causal_chain", {"query": fix})
            assert chain.structured_content["rows"][0]["id"] == fix  # no causal edge yet: the memory alone
            stats = await client.call_tool("graph_stats_tool", {})
            assert stats.structured_content["edges"] >= 1
            timeline = await client.call_tool("get_timeline", {"query": "auth.example.com"})
            assert {r["id"] for r in timeline.structured_content["rows"]} == {outage, fix}
            found = await client.call_tool("graph_search", {"query": "what uses Postgres"})
            assert pg in [h["id"] for h in found.structured_content["hits"]]
            slept = await client.call_tool("sleep_consolidation", {"cycle_type": "reorganize"})
            assert list(slept.structured_content["summary"]["phases"]) == ["reorganize"]
            assert (await client.call_tool("sleep_consolidation", {"cycle_type": "dream"})).is_error
            topics = await client.call_tool("list_topics", {})
            assert topics.structured_content["count"] >= 1
            swept = await client.call_tool("decay_sweep", {})
            assert list(swept.structured_content["summary"]["phases"]) == ["prune"]
            checked = await client.call_tool("verify_memories", {})
            assert checked.structured_content["summary"]["problems"] == 0
            conflicts = await client.call_tool("check_conflicts", {})
            assert conflicts.structured_content["count"] == 0

    call(main)


# --------------------------------------------------------------------------- Streamable HTTP


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_http(port: int, env: dict[str, str], *args: str) -> tuple[subprocess.Popen[bytes], list[str]]:
    """The server in a subprocess, once it answers on ``port``; its stderr lines collect in the list."""
    proc = subprocess.Popen([*SERVE, "--http", "--port", str(port), *args], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(lambda: proc.stderr.readline().decode(), "")),
                     daemon=True).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any("Streamable HTTP at" in line for line in lines):
            return proc, lines
        if proc.poll() is not None:
            time.sleep(0.2)
            raise AssertionError("".join(lines))
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("server did not start")


@pytest.mark.slow  # a real process (or several): full suite and CI only
@pytest.mark.parametrize("auth", ["env", "generated", "no-auth"])
def test_streamable_http_always_needs_a_token_unless_no_auth(auth: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    proc, stderr = _start_http(port, {"MEM_MCP_TOKEN": "s3cret-token"} if auth == "env" else {},
                               *(["--no-auth"] if auth == "no-auth" else []))
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        time.sleep(0.3)  # the rest of the announcement
        announced = "".join(stderr)
        token = "s3cret-token" if auth == "env" else None
        if auth == "generated":
            config = json.loads(announced[announced.index("{"):announced.rindex("}") + 1])
            token = config["servers"]["mem"]["headers"]["Authorization"].split()[1]
            assert config["servers"]["mem"]["url"] == url and len(token) >= 32
        if auth == "no-auth":
            assert "WITHOUT AUTHENTICATION" in announced
        else:
            assert "WITHOUT" not in announced and ("s3cret-token" not in announced)
        probe = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        accept = {"accept": "application/json, text/event-stream"}
        if token:
            for headers in ({}, {"authorization": "Bearer nope"}, {"authorization": token},
                            {"authorization": f"Basic {token}"}):
                assert httpx2.post(url, json=probe, headers={**accept, **headers}).status_code == 401
        # the Host check stays on behind the token
        forged = httpx2.post(url, json=probe, headers={**accept, "host": "evil.example",
                                                        **({"authorization": f"Bearer {token}"} if token else {})})
        assert forged.status_code in (400, 403, 421)

        async def main() -> None:
            headers = {"authorization": f"bEaReR {token}"} if token else {}  # the scheme is case-insensitive
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    added = await client.call_tool("add", {"text": "HTTP clients share the same store"})
                    assert not added.is_error, text(added)
                    found = await client.call_tool("search", {"query": "same store"})
                    assert found.structured_content["hits"][0]["text"] == "HTTP clients share the same store"

        call(main)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert out == b""  # nothing on stdout, even over HTTP


def test_http_on_a_busy_port_exits_2_with_a_message() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        started = time.monotonic()
        result = run_mem("serve-mcp", "--http", "--port", str(port), timeout=30)
    assert result.code == 2 and f"port {port}" in result.error["message"] and "--port" in result.error["message"]
    assert result.stdout == "" and time.monotonic() - started < 10


# --------------------------------------------------------------------------- stdout purity


class RawServer:
    """Speak JSON-RPC to ``mem serve-mcp`` over pipes, keeping every byte it writes to stdout."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([*SERVE, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=dict(os.environ))
        self.lines: list[bytes] = []
        self.responses: dict[int, dict[str, Any]] = {}
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr = b""
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()
        self.next_id = 0

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line)
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if isinstance(message, dict) and "id" in message and ("result" in message or "error" in message):
                    self.responses[message["id"]] = message
                self.cond.notify_all()

    def _read_err(self) -> None:
        self.stderr = self.proc.stderr.read()

    def send(self, message: dict[str, Any]) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params is not None else {})})
        with self.cond:
            if not self.cond.wait_for(lambda: ident in self.responses, timeout=60):
                raise AssertionError(f"no answer to {method}: {self.stderr[-2000:]!r}")
            return self.responses.pop(ident)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
        self.reader.join(timeout=5)
        self.err_reader.join(timeout=5)


@pytest.mark.slow  # a real process (or several): full suite and CI only
def test_stdout_carries_only_json_rpc_over_100_calls_of_every_kind() -> None:
    server = RawServer("--verbose")  # verbose: plenty of logging, all of which must go to stderr
    try:
        init = server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "purity-test", "version": "1"}})
        assert "result" in init, init
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        first = server.request("tools/call", {"name": "add", "arguments": {"text": "seed memory for purity checks"}})
        seed = first["result"]["structuredContent"]["outcomes"][0]["id"]
        kinds: list[tuple[str, Any]] = [
            ("tools/list", lambda i: {}),
            ("resources/list", lambda i: {}),
            ("resources/templates/list", lambda i: {}),
            ("ping", lambda i: None),
            ("resources/read", lambda i: {"uri": f"mem://memory/{seed}"}),
            ("resources/read", lambda i: {"uri": "mem://stats"}),
            ("resources/read", lambda i: {"uri": "mem://memory/ffffffff"}),  # an error answer
            ("tools/call", lambda i: {"name": "add", "arguments": {"text": f"purity memory number {i} about topic {i % 7}"}}),
            ("tools/call", lambda i: {"name": "add", "arguments": {"memories": [f"batch {i} one", SECRET]}}),
            ("tools/call", lambda i: {"name": "search", "arguments": {"query": f"topic {i % 7}", "why": i % 2 == 0}}),
            ("tools/call", lambda i: {"name": "get", "arguments": {"ids": seed}}),
            ("tools/call", lambda i: {"name": "update", "arguments": {"id": seed, "add_tags": [f"t{i % 3}"]}}),
            ("tools/call", lambda i: {"name": "recent", "arguments": {"limit": 5}}),
            ("tools/call", lambda i: {"name": "stats", "arguments": {}}),
            ("tools/call", lambda i: {"name": "get", "arguments": {"ids": "ffffffff"}}),  # tool error
            ("tools/call", lambda i: {"name": "search", "arguments": {"k": "many"}}),  # invalid arguments
            ("no/such/method", lambda i: {}),  # protocol error
        ]
        errors = 0
        for i in range(100):
            for method, params in kinds:
                answer = server.request(method, params(i))
                errors += "error" in answer or bool(answer.get("result", {}).get("isError"))
        forget = server.request("tools/call", {"name": "forget", "arguments": {"ids": seed}})
        assert not forget["result"].get("isError")
        assert errors == 400  # the four error kinds, 100 times each; everything else succeeded
    finally:
        server.close()
    assert len(server.lines) >= 100 * 17
    for line in server.lines:
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        assert ("id" in message and ("result" in message or "error" in message)) or "method" in message
    assert server.stderr  # the logs went somewhere: stderr


# --------------------------------------------------------------------------- third-party client


INSPECTOR = ["npx", "-y", "-p", "node@22", "-p", "@modelcontextprotocol/inspector@2.12.0", "--", "inspector", "--cli"]
CONNECT = ["--connect-timeout", "60000"]  # a loaded CI machine can take more than the 15 s default


@pytest.mark.slow  # fetches and runs Node and the Inspector
@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed")
def test_mcp_inspector_cli_lists_and_calls_tools() -> None:
    command = [*INSPECTOR, *CONNECT, sys.executable, "-m", "mem", "serve-mcp"]
    try:
        listed = subprocess.run([*command, "--method", "tools/list"], capture_output=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.skip("the MCP Inspector could not be fetched in time")
    if listed.returncode != 0 and b"npm" in listed.stderr and b"ERR" in listed.stderr:
        pytest.skip(f"npm could not fetch the MCP Inspector: {listed.stderr[-300:]!r}")
    assert listed.returncode == 0, listed.stderr.decode()[-2000:]
    names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
    assert "search" in names and "add" in names

    added = subprocess.run([*command, "--method", "tools/call", "--tool-name", "add",
                            "--tool-arg", "text=The inspector stored this memory"], capture_output=True, timeout=120)
    assert added.returncode == 0, added.stderr.decode()[-2000:]
    assert json.loads(added.stdout)["structuredContent"]["outcomes"][0]["status"] == "added"


# --------------------------------------------------------------------------- imports


def test_help_does_not_import_mcp() -> None:
    code = "import sys; from mem.cli import app; print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_mcp_modules_import_each_other_without_cycles() -> None:
    """Every import between mem.mcp modules, function-level ones included, points one way."""
    import ast

    folder = Path(__file__).resolve().parent.parent / "mem" / "mcp"
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        edges = graph.setdefault(path.stem, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "mem.mcp":
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mem.mcp."):
                edges.add(node.module.split(".")[2])

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ()))

    cycles = sorted(m for m in graph if reaches(m, m, {m}))
    assert cycles == [], f"import cycle through {cycles}"
    assert "tools" not in graph["optional"] and "boundary" in graph["engine"]

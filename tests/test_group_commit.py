"""Group commit in the MCP server: concurrent adds share a transaction, a bad call fails alone,
priorities order the queue, and every acknowledged write is in the database."""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")


@asynccontextmanager
async def served():
    from mcp import Client  # noqa: F401  (skip early when missing)

    from mem.config import resolve_settings
    from mem.mcp import server as mcp_server

    engine = mcp_server.open_engine(resolve_settings(), fixed_scope="test")
    try:
        yield engine, mcp_server.build(engine, "default")
    finally:
        engine.ctx.store.close()


def _ids_in_db() -> set[str]:
    import sqlean

    with sqlean.connect(os.environ["MEM_DB"]) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM memories")}


def test_eight_concurrent_clients_share_transactions_and_lose_nothing() -> None:
    from mcp import Client

    acknowledged: list[str] = []

    async def client_adds(server: Any, n: int) -> None:
        async with Client(server) as client:
            for i in range(5):
                result = await client.call_tool("add", {"text": f"Client {n} note {i}: service {n}-{i} listens on {9000 + i}"})
                assert not result.is_error, result
                acknowledged.extend(o["id"] for o in result.structured_content["outcomes"] if o["status"] == "added")

    async def main() -> None:
        async with served() as (engine, server):
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(client_adds, server, n)
            assert engine._writes.groups < 40  # some calls shared a transaction
            assert len(acknowledged) == 40

    anyio.run(main)
    assert set(acknowledged) <= _ids_in_db()


def test_a_bad_call_fails_alone() -> None:
    from mcp import Client

    results: dict[str, Any] = {}

    async def one(server: Any, name: str, args: dict[str, Any]) -> None:
        async with Client(server) as client:
            results[name] = await client.call_tool("add", args)

    async def main() -> None:
        async with served() as (engine, server):
            async with anyio.create_task_group() as group:
                group.start_soon(one, server, "good1", {"text": "The cache is Redis 7"})
                group.start_soon(one, server, "bad", {"memories": [{"text": "Fine text", "layer": 9}]})
                group.start_soon(one, server, "good2", {"text": "The queue is RabbitMQ"})
                group.start_soon(one, server, "secret", {"text": "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"})

    anyio.run(main)
    assert results["bad"].is_error and "layer" in results["bad"].content[0].text
    assert results["secret"].is_error  # rejected by the gate, alone
    stored = {o["id"] for name in ("good1", "good2") for o in results[name].structured_content["outcomes"]}
    assert len(stored) == 2 and stored <= _ids_in_db()


def test_priority_orders_the_queue() -> None:
    from mcp import Client

    order: list[tuple[int, str]] = []

    async def one(server: Any, priority: int) -> None:
        async with Client(server) as client:
            result = await client.call_tool("add", {"text": f"Priority {priority} decision about the build cache",
                                                   "priority": priority})
            assert not result.is_error, result
            order.append((priority, result.structured_content["outcomes"][0]["id"]))

    async def main() -> None:
        async with served() as (engine, server):
            async with Client(server) as client:  # make the queue, then hold it with one group at a time
                await client.call_tool("add", {"text": "warm up the engine"})
            engine._writes.limit = 1
            async with anyio.create_task_group() as group:
                for priority in (5, 4, 1, 3, 2):
                    group.start_soon(one, server, priority)

    anyio.run(main)
    by_id = [priority for priority, _ in sorted(order, key=lambda pair: pair[1])]  # ids grow in commit order
    assert by_id[1:] == sorted(by_id[1:])  # after whichever call started the drain, most urgent first
    bad = None

    async def refused() -> None:
        nonlocal bad
        async with served() as (_engine, server), Client(server) as client:
            bad = await client.call_tool("add", {"text": "x y z w", "priority": 9})

    anyio.run(refused)
    assert bad is not None and bad.is_error and "priority" in bad.content[0].text

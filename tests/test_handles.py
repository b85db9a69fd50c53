"""Handles: the short ids tables show, typed back into get/update/forget/archive/graph and MCP."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import jsonl, run_mem
from tests.tty import run_tty


def _batch(n: int) -> str:
    return jsonl(*({"text": f"memory number {i} about the cache layer and its eviction"} for i in range(n)))


def _table_handles(output: str) -> list[str]:
    return re.findall(r"^([0-9a-f]{4,12}) ", output, flags=re.M)


def test_a_batch_gets_distinct_short_handles_that_get_update_forget_and_archive_accept(mem, tmp_path: Path) -> None:
    added = mem("add", "-", input=_batch(30)).records
    assert len({r["id"] for r in added}) == 30 and all(len(r["id"]) == 36 for r in added)  # JSON: full ids
    shown = run_tty("list", "-n", "50")
    handles = _table_handles(shown.output)
    assert len(handles) == 30 and len(set(handles)) == 30, shown.output
    assert all(4 <= len(h) <= 6 for h in handles)
    assert not any(r["id"].startswith(h) for r in added for h in handles)  # not the shared timestamp head
    by_text = {r["id"]: r for r in mem("list", "-n", "50", "--json").records}
    for handle in handles[:5]:
        got = mem("get", handle, "--json")
        assert got.code == 0, got.stderr
        assert got.records[0]["id"][24:].startswith(handle)
        assert got.records[0]["id"] in by_text
    first, second, third = handles[:3]
    updated = mem("update", first, "--tag", "handled", "--json")
    assert updated.code == 0 and "handled" in updated.records[0]["tags"]
    assert mem("forget", second, "--json").records[0]["status"] == "archived"
    restored = mem("archive", "--restore", second, "--json")
    assert restored.code == 0, restored.stderr
    assert mem("graph", "neighbors", third, "--json").code == 0


def test_the_ambiguity_between_handles_lists_the_longer_handles(mem) -> None:
    ids = ["01a20000-0000-7000-8000-abcd00000001", "01a20000-0000-7000-8000-abcd10000002",
           "01a20000-0000-7000-8000-ffff00000003"]
    records = [{"id": i, "text": f"crafted memory {n} about deploys on fridays", "scope": "test"} for n, i in enumerate(ids)]
    assert mem("import", "-", input=jsonl(*records)).code == 0
    out = run_tty("list")
    assert sorted(_table_handles(out.output)) == ["abcd0", "abcd1", "ffff"], out.output
    ambiguous = mem("get", "abcd")
    assert ambiguous.code == 3 and ambiguous.error["code"] == "ambiguous"
    assert "abcd0" in ambiguous.error["message"] and "abcd1" in ambiguous.error["message"]
    assert mem("get", "abcd1", "--json").records[0]["id"] == ids[1]
    assert mem("get", "ffff", "--json").records[0]["id"] == ids[2]
    # whole-id prefixes still work, like git's
    assert mem("get", ids[2][:30], "--json").records[0]["id"] == ids[2]
    assert mem("get", "abc").code == 4  # under 4 characters


def test_handles_survive_export_and_import(mem, tmp_path: Path) -> None:
    mem("add", "-", input=_batch(12))
    before = _table_handles(run_tty("list").output)
    dump = mem("export")
    other = tmp_path / "other.db"
    assert mem("import", "-", "--db", str(other), input=dump.stdout).code == 0
    after = _table_handles(run_tty("list", "--db", str(other)).output)
    assert before and sorted(before) == sorted(after)
    assert mem("get", before[0], "--db", str(other), "--json").code == 0


def test_mcp_get_and_update_accept_a_handle(mem) -> None:
    import anyio

    from tests.test_mcp import mcp_client, text

    mem("add", "-", input=_batch(5))
    handle = _table_handles(run_tty("list").output)[0]

    async def main() -> None:
        async with mcp_client() as client:
            got = await client.call_tool("get", {"ids": handle})
            assert not got.is_error, text(got)
            assert handle in text(got) or "memory number" in text(got)
            changed = await client.call_tool("update", {"id": handle, "add_tags": ["via-mcp"]})
            assert not changed.is_error, text(changed)

    anyio.run(main)
    assert any("via-mcp" in r["tags"] for r in mem("list", "--json").records)


def test_uuid7_is_a_canonical_version_7_uuid_holding_its_millisecond_and_increasing() -> None:
    import uuid

    from mem import ids

    kept = list(ids._last)  # ids made earlier in this process would lift the millisecond: start afresh
    ids._last[:] = [0, 0]
    try:
        for ms in (0, 1, 1_764_000_000_123, (1 << 48) - 1):
            made = [ids.uuid7(ms) for _ in range(50)]
            for text in made:
                parsed = uuid.UUID(text)
                assert str(parsed) == text and parsed.version == 7 and parsed.variant == uuid.RFC_4122
                assert parsed.int >> 80 == ms
            assert made == sorted(made) and len(set(made)) == 50  # strictly increasing within the millisecond
    finally:
        ids._last[:] = kept  # the process's own ids go on from where they were

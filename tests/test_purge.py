"""``forget --purge``: the text is gone from the database file and its WAL, not only from the rows."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mem.store import Store

TOKEN = "Zqxvorblatt"  # unique: in no other memory, so any copy left on disk is the purged one's
OLD_TOKEN = "Kwyjiboquux"  # the memory's text before an update: the changelog and FTS held it too


def _raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


def test_purge_leaves_no_copy_in_the_file_or_wal(mem, tmp_path: Path):
    db = Path(os.environ["MEM_DB"])
    neighbours = "".join(json.dumps({"text": f"Neighbour memory {i} about the deploy pipeline and service {i * 13}"}) + "\n"
                         for i in range(30))  # on the same pages as the purged memory
    assert mem("add", "-", input=neighbours).code == 0
    record = {"text": f"The {OLD_TOKEN} service reads its config from the vault", "tags": [f"{TOKEN.lower()}tag"],
              "meta": {"note": f"{TOKEN} meta"}, "source": f"notes/{TOKEN}.md", "author": f"{TOKEN}-bot"}
    added = mem("add", "-", input=json.dumps(record) + "\n").records[0]
    memory_id = added["id"]
    assert mem("update", memory_id, "--text", f"The {TOKEN} service reads its config from the vault").code == 0
    assert mem("graph", "link", memory_id, mem("search", "Neighbour memory 3").records[0]["id"]).code == 0
    assert TOKEN.encode() in _raw_bytes(db) and OLD_TOKEN.encode() in _raw_bytes(db)

    with Store.open(db) as idle_reader:  # another process with the database open (an MCP server) does not stop it
        idle_reader.counts()
        result = mem("forget", "--purge", memory_id)
        assert result.code == 0 and result.records[0]["status"] == "purged"

    raw = _raw_bytes(db)
    for token in (TOKEN, OLD_TOKEN, TOKEN.lower()):
        assert token.encode() not in raw, f"{token} still on disk"
    assert memory_id.encode() in raw  # the tombstone
    with Store.open(db) as store:
        rows = store.conn.execute("SELECT op, author, payload FROM changelog WHERE memory_id = ?", (memory_id,)).fetchall()
        assert rows == [("purge", None, "{}")]
        vocab = store.conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memory_fts, 'row')")
        assert vocab is not None
        terms = {r[0] for r in store.conn.execute("SELECT term FROM temp.v")}
        assert TOKEN.lower() not in terms and "neighbour" in terms
        assert store.conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 30
    # what is left still works: search finds the neighbours, and the purged id is unknown
    assert mem("search", "deploy pipeline").records
    assert mem("get", memory_id).code == 3


def test_purge_over_mcp_scrubs_the_files_the_server_has_open() -> None:
    import anyio

    from tests.test_mcp import mcp_client

    db = Path(os.environ["MEM_DB"])

    async def main() -> None:
        async with mcp_client() as client:
            await client.call_tool("add", {"memories": [f"Neighbour note {i} on the release train" for i in range(5)]})
            added = await client.call_tool("add", {"text": f"The {TOKEN} flag gates the beta checkout"})
            memory_id = added.structured_content["outcomes"][0]["id"]
            assert TOKEN.encode() in _raw_bytes(db)
            purged = await client.call_tool("forget", {"ids": memory_id, "purge": True})
            assert purged.structured_content["outcomes"][0]["status"] == "purged"
            assert TOKEN.encode() not in _raw_bytes(db)  # while the server still holds the database open
            assert (await client.call_tool("get", {"ids": memory_id})).is_error
            # what a purged correction superseded is live again (the tool's description says so)
            old = (await client.call_tool("add", {"text": "The audit log holds 90 days of events."})).structured_content
            fix = (await client.call_tool("add", {"text": "Correction: the audit log holds 180 days of events, not 90."})
                   ).structured_content["outcomes"][0]
            assert fix.get("supersedes") == [old["outcomes"][0]["id"]]
            freed = await client.call_tool("forget", {"ids": fix["id"], "purge": True})
            assert freed.structured_content["outcomes"][0]["restored"] == [old["outcomes"][0]["id"]]

    anyio.run(main)


def test_purge_names_the_merged_memories_that_may_still_hold_its_sentences(mem) -> None:
    from mem.store import lifecycle as sql

    original = mem("add", "The cache warms at six in the morning").records[0]["id"]
    merged = mem("add", "The cache warms at six in the morning; the CDN purges at seven").records[0]["id"]
    with Store.open(Path(os.environ["MEM_DB"])) as store, store.write():  # as consolidate's compress leaves it
        sql.add_edge(store, merged, original, layer="lifecycle", type="derived_from", at="2026-01-01T00:00:00Z")
    outcome = mem("forget", "--purge", original).records[0]
    assert outcome == {"record": "outcome", "id": original, "status": "purged", "merged_into": [merged]}
    assert mem("get", merged).code == 0


def test_purging_a_correction_leaves_no_value_of_it_and_frees_what_it_replaced(mem) -> None:
    """The reason intake kept for a supersession quotes the correction's values ("90 d -> 187 d"): it goes with
    the correction. What the correction replaced is not left hidden behind a memory that no longer exists: it
    is live again, or, in a chain A -> B -> C with B purged, superseded by C."""
    db = Path(os.environ["MEM_DB"])
    old = mem("add", "The audit log holds 90 days of events.", "--now", "2026-05-01T09:00:00Z").records[0]["id"]
    fix = mem("add", "The audit log holds 187 days of events since the SOC 2 review.",
              "--now", "2026-05-02T09:00:00Z").records[0]
    assert fix.get("supersedes") == [old] and b"187" in _raw_bytes(db)

    outcome = mem("forget", "--purge", fix["id"]).records[0]
    assert outcome == {"record": "outcome", "id": fix["id"], "status": "purged", "restored": [old]}
    assert b"187" not in _raw_bytes(db)
    assert mem("get", old, "--json").records[0]["superseded_by"] is None
    assert [h["id"] for h in mem("search", "audit log retention days").records][:1] == [old]
    assert "superseded" not in mem("get", "--explain", old, "--json").records[0]["explain"]


def test_purging_the_middle_of_a_chain_keeps_the_chain(mem) -> None:
    first = mem("add", "The upload sweeper keeps files 30 days.").records[0]["id"]
    middle = mem("add", "The upload sweeper keeps files 14 days.").records[0]["id"]
    last = mem("add", "The upload sweeper keeps files 7 days.").records[0]["id"]
    with Store.open(Path(os.environ["MEM_DB"])) as store, store.write():  # the chain, whatever intake made of it
        for older, newer in ((first, middle), (middle, last)):
            store.update_memory(older, {"superseded_by": newer}, at="2026-01-01T00:00:00Z", op="supersede")
    assert "restored" not in mem("forget", "--purge", middle).records[0]
    assert mem("get", first, "--json").records[0]["superseded_by"] == last
    assert mem("get", "--explain", first, "--json").records[0]["explain"]["superseded"]["by"] == last
    assert mem("forget", "--purge", last).records[0]["restored"] == [first]


def test_archiving_a_correction_says_what_it_still_hides(mem) -> None:
    """Archiving is recoverable, so the supersession stays in place; the outcome names what the archived memory
    still hides, and unlinking shows it again."""
    old = mem("add", "The audit log holds 90 days of events.", "--now", "2026-05-01T09:00:00Z").records[0]["id"]
    fix = mem("add", "The audit log holds 187 days of events since the SOC 2 review.",
              "--now", "2026-05-02T09:00:00Z").records[0]["id"]
    assert mem("forget", fix).records == [{"record": "outcome", "id": fix, "status": "archived", "supersedes": [old]}]
    assert old not in [h["id"] for h in mem("search", "audit log retention days").records]
    assert mem("graph", "unlink", fix, old, "--type", "supersedes").code == 0
    assert [h["id"] for h in mem("search", "audit log retention days").records][:1] == [old]

"""Structure types at intake (mem.enrich.structure) and ``mem search --organize`` through the CLI."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mem.enrich.structure import STRUCTURES, quantities, structure_of
from tests.conftest import jsonl, run_mem

NOW = "2026-06-10T00:00:00Z"
PAYMENTS = [
    {"text": "The payments timeout is 45 seconds and retries are capped at 5 attempts.", "created_at": "2026-06-01T09:00:00Z"},
    {"text": "The payments API port is 8443 in staging.", "created_at": "2026-06-01T09:10:00Z"},
    {"text": "On 4 June the payments API went down for twenty minutes during the card network outage.",
     "created_at": "2026-06-05T09:00:00Z"},
    {"text": "On 2 June we shipped the payments API refund endpoint to production.", "created_at": "2026-06-05T09:20:00Z"},
    {"text": "The payments service consists of the API, the ledger worker and the payout scheduler.",
     "created_at": "2026-06-06T09:00:00Z"},
    {"text": "We keep the payments API small because every change needs a PCI review.", "created_at": "2026-06-06T09:30:00Z"},
]


def test_each_kind_of_text_gets_its_structure() -> None:
    assert structure_of("MAX_RETRIES = 5 in the payments worker") == "ledger"
    assert structure_of("Node was upgraded to 20.11 on the build image") == "ledger"
    assert structure_of("Yesterday the deploy to staging failed twice") == "timeline"
    assert structure_of("The team met about the roadmap", dated=True) == "timeline"
    assert structure_of("Redis is an in-memory key-value store") == "taxonomy"
    assert structure_of("The monorepo is divided into api, worker and web packages") == "taxonomy"
    assert structure_of("We prefer small pull requests because reviews stay focused") == "narrative"
    assert quantities("The payments timeout is 45 seconds") == [("payments timeout", "45 seconds")]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.booleans())
def test_every_text_gets_one_of_the_four(text: str, dated: bool) -> None:
    assert structure_of(text, dated=dated) in STRUCTURES
    assert all(isinstance(what, str) and value for what, value in quantities(text))


def test_intake_stores_the_structure_and_search_organize_groups_hits() -> None:
    added = run_mem("add", "-", "--now", NOW, input=jsonl(*PAYMENTS)).records
    ids = [r["id"] for r in added]
    stored = {r["id"]: r["structure"] for r in run_mem("export").records}
    assert [stored[i] for i in ids] == ["ledger", "ledger", "timeline", "timeline", "taxonomy", "narrative"]

    plain = run_mem("search", "payments API", "--now", NOW, "-n", "6").records
    result = run_mem("search", "payments API", "--organize", "--now", NOW, "-n", "6")
    assert result.code == 0, result.stderr
    hits = result.records
    assert sorted(h["id"] for h in hits) == sorted(h["id"] for h in plain)  # the same hits, laid out
    groups = [h["group"]["structure"] for h in hits]
    assert groups == sorted(groups, key=groups.index)  # each group is contiguous
    assert groups[0] == stored[plain[0]["id"]]  # the group of the best hit comes first
    timeline = [h for h in hits if h["group"]["structure"] == "timeline"]
    assert [h["id"] for h in timeline] == [ids[3], ids[2]]  # by event date (2 June, then 4 June)
    assert [h["group"]["position"] for h in timeline] == [1, 2]
    ledger = {h["id"]: h for h in hits if h["group"]["structure"] == "ledger"}
    assert {"what": "payments timeout", "value": "45 seconds"} in ledger[ids[0]]["values"]
    assert any(v["value"] == "8443" for v in ledger[ids[1]]["values"])
    assert all("values" not in h for h in hits if h["group"]["structure"] != "ledger")


def test_organize_on_a_terminal_prints_one_table_per_structure() -> None:
    run_mem("add", "-", "--now", NOW, input=jsonl(*PAYMENTS))
    shown = run_mem("search", "payments API", "--organize", "--format", "table", "--now", NOW, "-n", "6")
    assert shown.code == 0, shown.stderr
    for heading in ("ledger (2)", "timeline (2)", "taxonomy (1)", "narrative (1)"):
        assert heading in shown.stdout
    assert "value" in shown.stdout and "45 seconds" in shown.stdout


def test_organize_takes_one_query() -> None:
    refused = run_mem("search", "-", "--organize", input=jsonl({"query": "payments"}))
    assert refused.code == 4 and "--organize" in refused.error["message"]


def test_memories_stored_before_structure_types_get_theirs_when_the_store_is_upgraded(tmp_path) -> None:
    import os

    import sqlean

    from mem.store.migrations import LATEST, MIGRATIONS, m010_structure_backfill

    added = run_mem("add", "-", "--now", NOW, input=jsonl(*PAYMENTS)).records
    ids = [r["id"] for r in added]
    # the database as a pre-m008 store leaves it: every row at the column's default, schema at m009
    conn = sqlean.connect(os.environ["MEM_DB"])
    with conn:
        conn.execute("UPDATE memories SET structure = 'narrative'")
        conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(m010_structure_backfill)}")
    conn.close()
    stored = {r["id"]: r["structure"] for r in run_mem("export").records}  # opening the store upgrades it
    assert [stored[i] for i in ids] == ["ledger", "ledger", "timeline", "timeline", "taxonomy", "narrative"]
    conn = sqlean.connect(os.environ["MEM_DB"])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST
    conn.close()

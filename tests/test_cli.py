"""End to end through the real ``mem`` entry point: add, search, pipes, bad input, exit codes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import jsonl, run_mem


def add(text: str, *extra: str) -> dict:
    result = run_mem("add", text, *extra)
    assert result.code == 0, result.stderr
    return result.records[0]


def test_add_then_search_finds_it_first():
    add("We chose Redis for the cache layer")
    add("The frontend is written in TypeScript with React")
    add("Deploys go out every Tuesday after standup")
    result = run_mem("search", "which cache did we pick?")
    assert result.code == 0, result.stderr
    hits = result.records
    assert hits[0]["text"] == "We chose Redis for the cache layer"
    assert hits[0]["record"] == "hit" and hits[0]["rank"] == 1
    why = hits[0]["why"]
    assert "semantic" in why and "priors" in why and "fused" in why


def test_add_reports_status_and_kind_and_dedupes():
    first = add("We decided to use PostgreSQL 16 for the main database")
    assert first["status"] == "added" and len(first["id"]) == 36
    assert first["kind"] == "decision" and first["layer"] == 2
    again = add("we decided to use postgresql 16 for the  main database")
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    got = run_mem("get", first["id"][:8]).records[0]
    assert got["access_count"] == 1  # the duplicate bumped it


def test_jsonl_add_keeps_fields_and_meta_verbatim():
    meta = {"session": "s1", "nested": {"a": [1, 2, {"b": None}]}, "unicode": "naïve ☃"}
    lines = jsonl(
        {"text": "Alice owns the billing service", "kind": "fact", "tags": ["team", "billing"],
         "source": "docs/OWNERS.md", "source_line": 3, "author": "bob", "created_at": "2024-05-01T10:00:00Z",
         "pinned": True, "layer": 1, "confidence": 0.8, "meta": meta, "ticket": "OPS-12"},
        {"text": "Run make lint before pushing"},
    )
    result = run_mem("add", "-", input=lines)
    assert result.code == 0, result.stderr
    outcomes = result.records
    assert [o["status"] for o in outcomes] == ["added", "added"]
    assert [o["line"] for o in outcomes] == [1, 2]
    got = run_mem("get", outcomes[0]["id"]).records[0]
    assert got["meta"] == {"ticket": "OPS-12", **meta}
    assert got["tags"] == ["team", "billing"] and got["pinned"] is True and got["layer"] == 1
    assert got["created_at"] == "2024-05-01T10:00:00.000Z" and got["author"] == "bob"
    assert got["source_line"] == 3 and got["confidence"] == 0.8


def test_malformed_jsonl_names_the_line_and_writes_nothing():
    lines = jsonl({"text": "first good line"}) + '{"text": "broken"\n' + jsonl({"text": "third"})
    result = run_mem("add", "-", input=lines)
    assert result.code == 4
    assert result.error["line"] == 2 and "line 2" in result.error["message"]
    assert result.stdout == ""
    assert run_mem("list").records == []
    fixed = lines.replace('"broken"\n', '"broken"}\n')
    assert [r["status"] for r in run_mem("add", "-", input=fixed).records] == ["added"] * 3
    assert [r["status"] for r in run_mem("add", "-", input=fixed).records] == ["duplicate"] * 3
    assert len(run_mem("list").records) == 3


def test_bad_field_types_are_bad_input():
    for record, words in [({"nope": 1}, "text"), ({"text": 5}, "string"), ({"text": "ok fine", "kind": "x"}, "kind"),
                          ({"text": "ok fine", "tags": [1]}, "tags"), ({"text": "ok fine", "created_at": "soon"}, "created_at"),
                          ({"text": "ok fine", "layer": 9}, "layer"), ({"text": "ok fine", "meta": [1]}, "meta")]:
        result = run_mem("add", "-", input=jsonl({"text": "valid first"}, record))
        assert result.code == 4, record
        assert words in result.error["message"] and result.error["line"] == 2
    assert run_mem("list").records == []


def test_rejections_are_per_line():
    lines = jsonl({"text": "ok"}, {"text": "AWS key AKIAIOSFODNN7EXAMPLQ in deploy.sh"}, {"text": "a normal memory here"})
    records = run_mem("add", "-", input=lines).records
    assert [r["status"] for r in records] == ["rejected", "rejected", "added"]
    assert "short" in records[0]["reason"] and "secret" in records[1]["reason"]


def test_single_text_secret_is_refused_with_exit_4_and_redact_masks():
    result = run_mem("add", "deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert result.code == 4 and "secret" in result.error["message"]
    assert result.records[0]["status"] == "rejected"
    masked = run_mem("add", "--redact", "deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert masked.code == 0
    got = run_mem("get", masked.records[0]["id"]).records[0]
    assert "ghp_" not in got["text"] and "REDACTED" in got["text"]


def test_git_sha_and_uuid_are_not_secrets():
    record = add("Fixed in commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f809112233, see run 123e4567-e89b-12d3-a456-426614174000")
    assert record["status"] == "added"


def test_unknown_and_ambiguous_ids_exit_3():
    ids = [add(f"memory number {i} about topic {i * 7}")["id"] for i in range(40)]
    result = run_mem("get", "deadbeef-0000")
    assert result.code == 3 and "deadbeef" in result.error["message"]
    # UUIDv7s made in one burst share their time prefix: a short prefix is ambiguous
    result = run_mem("get", ids[0][:4])
    assert result.code == 3 and result.error["code"] == "ambiguous" and len(result.error["candidates"]) >= 2


def test_update_forget_restore_and_purge():
    memory = add("The API listens on port 8080")
    memory_id = memory["id"]
    updated = run_mem("update", memory_id[:10], "--text", "The API listens on port 9090", "--tag", "ops", "--pin").records[0]
    assert updated["text"] == "The API listens on port 9090" and updated["tags"] == ["ops"] and updated["pinned"]
    assert run_mem("search", "which port does the API use").records[0]["id"] == memory_id
    assert run_mem("forget", memory_id).records[0]["status"] == "archived"
    assert all(h["id"] != memory_id for h in run_mem("search", "API port").records)
    assert run_mem("get", memory_id).records[0]["status"] == "archived"
    assert run_mem("forget", "--purge", memory_id).code == 0
    assert run_mem("get", memory_id).code == 3


def test_scope_isolation_and_star():
    run_mem("add", "--scope", "alpha", "Alpha uses Kafka for events")
    run_mem("add", "--scope", "beta", "Beta uses RabbitMQ for events")
    alpha = run_mem("search", "--scope", "alpha", "events queue").records
    assert {h["scope"] for h in alpha} == {"alpha"}
    both = run_mem("search", "--scope", "*", "events queue").records
    assert {h["scope"] for h in both} == {"alpha", "beta"}


def test_default_scope_is_the_git_repositorys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from mem.scope import repo_scope

    repo = tmp_path / "my-project"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.delenv("MEM_SCOPE")

    def mem(*args: str, cwd: Path) -> list[dict]:
        result = run_mem(*args, cwd=cwd)
        assert result.code == 0, result.stderr
        return result.records

    mem("add", "a memory made in a repo", cwd=repo / "src")
    mem("add", "outside any repo", cwd=tmp_path)
    name = repo_scope(repo).name  # no remote: "<folder>-<8 hex>", kept in the repository's git config
    assert name.startswith("my-project-")
    assert [m["scope"] for m in mem("list", cwd=repo)] == [name]
    assert [m["text"] for m in mem("list", cwd=tmp_path)] == ["outside any repo"]
    assert [m["scope"] for m in mem("list", "--scope", "*", cwd=tmp_path)] == ["global", name]


def test_filters_kind_tag_since_until():
    run_mem("add", "-", input=jsonl(
        {"text": "Old decision to use Jenkins for CI", "kind": "decision", "created_at": "2023-01-01T00:00:00Z", "tags": ["ci"]},
        {"text": "New decision to use GitHub Actions for CI", "kind": "decision", "created_at": "2024-06-01T00:00:00Z", "tags": ["ci"]},
        {"text": "CI takes about ten minutes", "kind": "fact", "created_at": "2024-06-02T00:00:00Z"},
    ))
    hits = run_mem("search", "CI", "--kind", "decision", "--since", "2024-01-01").records
    assert [h["text"] for h in hits] == ["New decision to use GitHub Actions for CI"]
    hits = run_mem("search", "CI", "--until", "2024-01-01").records
    assert [h["text"] for h in hits] == ["Old decision to use Jenkins for CI"]
    assert {h["text"] for h in run_mem("search", "CI", "--tag", "ci").records} == {
        "Old decision to use Jenkins for CI", "New decision to use GitHub Actions for CI"}
    listed = run_mem("list", "--kind", "decision").records
    assert [m["text"] for m in listed] == ["New decision to use GitHub Actions for CI", "Old decision to use Jenkins for CI"]


def test_search_many_queries_from_stdin_tags_line_numbers():
    add("We chose Redis for the cache layer")
    add("Postgres is the primary database")
    queries = jsonl({"query": "cache"}, {"query": "database", "k": 1})
    hits = run_mem("search", "-", input=queries).records
    assert {h["query_line"] for h in hits} == {1, 2}
    assert [h["text"] for h in hits if h["query_line"] == 2] == ["Postgres is the primary database"]
    bad = run_mem("search", "-", input=jsonl({"query": "ok"}, {"k": 3}))
    assert bad.code == 4 and bad.error["line"] == 2 and bad.stdout == ""


def test_search_is_deterministic_and_explains():
    for i in range(30):
        add(f"note {i}: the service {['auth', 'billing', 'search'][i % 3]} had incident {i}")
    first = run_mem("search", "billing incident", "-k", "10").records
    second = run_mem("search", "billing incident", "-k", "10").records
    assert [h["id"] for h in first] == [h["id"] for h in second]
    assert [h["rank"] for h in first] == list(range(1, 11))
    assert all(first[i]["score"] >= first[i + 1]["score"] for i in range(9))


def test_fts_syntax_and_sql_in_queries_never_raise():
    add("a memory about quoting")
    for query in ['"unbalanced', "NEAR(a b", "a AND OR NOT", "x' OR 1=1; DROP TABLE memories; --", "*", "col:val", "^"]:
        result = run_mem("search", query)
        assert result.code == 0, (query, result.stderr)
    assert len(run_mem("list").records) == 1


def test_pipe_to_head_exits_quietly():
    added = run_mem("add", "-", input=jsonl(*({"text": f"memory number {i} about pipes and output"} for i in range(50))))
    assert added.code == 0, added.stderr
    import subprocess, sys
    proc = subprocess.run(f"'{sys.executable}' -m mem search pipes -k 50 | head -1", shell=True, capture_output=True)
    assert proc.returncode == 0 and proc.stderr == b""
    assert len(proc.stdout.splitlines()) == 1


def test_database_file_is_private(isolated_env: dict[str, str]):
    env = {"MEM_DB": ""}  # fall back to the XDG default
    result = run_mem("add", "private memory", env=env)
    assert result.code == 0, result.stderr
    db = Path(isolated_env["XDG_DATA_HOME"]) / "mem" / "mem.db"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700


def test_errors_are_one_json_line_without_traceback():
    add("a memory so the database exists")
    result = run_mem("get", "0000aaaa-0000")
    assert result.code == 3
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.error["code"] == "not_found"


def test_newer_schema_refused_with_exit_5(isolated_env: dict[str, str]):
    add("anything at all")
    import sqlite3
    conn = sqlite3.connect(isolated_env["MEM_DB"])
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    result = run_mem("list")
    assert result.code == 5 and "upgrade mem" in result.error["message"]


def test_embedder_mismatch_names_reindex():
    add("bound to the hash embedder")
    result = run_mem("search", "anything", "--embedder", "minilm")
    assert result.code == 5 and "mem reindex" in result.error["message"]
    # without a flag the database's own embedder is used
    assert run_mem("search", "bound", env={"MEM_EMBEDDER": ""}).code == 0


def test_stats_counts_agree():
    for i in range(5):
        add(f"statistics memory {i} with distinct words {i * 11}")
    stats = run_mem("stats").records[0]
    assert stats["memories"] == stats["vectors"] == stats["vec_index"] == stats["fts"] == 5
    assert stats["embedder"] == "hash:v1" and stats["schema_version"] >= 1


def test_help_loads_no_heavy_modules():
    import subprocess, sys
    code = ("import sys; sys.argv=['mem','--help']\nfrom mem.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy=[m for m in ('numpy','networkx','onnxruntime','mcp','sqlite_vec','ollama') if m in sys.modules]\n"
            "sys.stderr.write(repr(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert proc.stderr.decode().strip().endswith("[]"), proc.stderr


def test_search_output_pipes_into_add_keeping_text_and_meta(tmp_path: Path):
    run_mem("add", "-", input=jsonl({"text": "Alice owns the billing service", "tags": ["team"], "meta": {"ticket": "OPS-12"}}))
    hits = run_mem("search", "who owns billing", "--json")
    other = {"MEM_DB": str(tmp_path / "other.db")}
    copied = run_mem("add", "-", input=hits.stdout, env=other)
    assert copied.code == 0 and [r["status"] for r in copied.records] == ["added"]
    got = run_mem("get", copied.records[0]["id"], env=other).records[0]
    assert got["scope"] == "test" and got["text"] == "Alice owns the billing service"
    assert got["tags"] == ["team"] and got["meta"] == {"ticket": "OPS-12"}

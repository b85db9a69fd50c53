"""mem doctor: one record per check, exit 5 for store problems, 6 for the embedder, fixes named."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import run_mem


def by_name(records: list[dict]) -> dict[str, dict]:
    return {r["check"]: r for r in records}


def test_healthy_database_passes_every_check():
    run_mem("add", "We chose Redis for the cache layer")
    result = run_mem("doctor")
    assert result.code == 0, result.stderr
    checks = by_name(result.records)
    for name in ("sqlite", "sqlite_vec", "fts5", "database", "schema", "integrity", "counts", "embedder"):
        assert checks[name]["status"] == "ok", checks[name]
    assert "memories 1, fts 1, vectors 1, vec_index 1" in checks["counts"]["detail"]
    assert checks["embedder"]["ms"] >= 0 and "hash" in checks["embedder"]["detail"]
    assert all(r["record"] == "check" for r in result.records)


def test_missing_database_is_a_warning_and_is_not_created(isolated_env: dict[str, str]):
    result = run_mem("doctor", "--skip-embedder")
    assert result.code == 0
    assert by_name(result.records)["database"]["status"] == "warn"
    assert not Path(isolated_env["MEM_DB"]).exists()


def test_counts_that_disagree_exit_5_with_a_fix(isolated_env: dict[str, str]):
    run_mem("add", "We chose Redis for the cache layer")
    run_mem("add", "Alice owns the billing service")
    conn = sqlite3.connect(isolated_env["MEM_DB"])
    conn.execute("DELETE FROM vectors WHERE rowid = (SELECT MIN(rowid) FROM vectors)")
    conn.commit()
    conn.close()
    result = run_mem("doctor", "--skip-embedder")
    assert result.code == 5
    counts = by_name(result.records)["counts"]
    assert counts["status"] == "fail" and "mem reindex" in counts["fix"]
    assert "counts" in result.error["message"]


def test_newer_schema_exits_5(isolated_env: dict[str, str]):
    run_mem("add", "We chose Redis for the cache layer")
    conn = sqlite3.connect(isolated_env["MEM_DB"])
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    result = run_mem("doctor", "--skip-embedder")
    assert result.code == 5
    assert "upgrade mem" in by_name(result.records)["schema"]["fix"]


def _older_store(db: str, applied: int, version: int) -> bytes:
    """A store with migrations 1..``applied`` run and ``user_version`` set to ``version``; its bytes."""
    import sqlean

    from mem.store.migrations import MIGRATIONS

    conn = sqlean.connect(db)
    conn.enable_load_extension(True)
    import sqlite_vec

    sqlite_vec.load(conn)
    for migration in MIGRATIONS[:applied]:
        migration(conn)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    return Path(db).read_bytes()


def test_an_older_schema_that_upgrades_is_a_warning(isolated_env: dict[str, str]):
    before = _older_store(isolated_env["MEM_DB"], 10, 10)
    result = run_mem("doctor", "--skip-embedder")
    assert result.code == 0, result.stderr
    schema = by_name(result.records)["schema"]
    assert schema["status"] == "warn" and "upgrades it" in schema["fix"]
    assert Path(isolated_env["MEM_DB"]).read_bytes() == before  # tried on a copy: nothing written


def test_tables_that_do_not_match_the_schema_version_fail_with_the_reason(isolated_env: dict[str, str]):
    """Another build's store (migration 7's tables under version 6) would fail at the next command:
    doctor says so, and why, instead of promising that a write upgrades it."""
    before = _older_store(isolated_env["MEM_DB"], 7, 6)
    result = run_mem("doctor", "--skip-embedder")
    assert result.code == 5
    schema = by_name(result.records)["schema"]
    assert schema["status"] == "fail" and "already exists" in schema["detail"], schema
    assert isolated_env["MEM_DB"] in schema["detail"] and "mem export" in schema["fix"]
    assert Path(isolated_env["MEM_DB"]).read_bytes() == before


def test_a_store_above_the_trial_size_is_not_copied_and_keeps_the_warning(isolated_env: dict[str, str], monkeypatch):
    from mem.store import doctor as probes

    monkeypatch.setattr(probes, "TRIAL_MAX_BYTES", 0)  # every store is "large"
    _older_store(isolated_env["MEM_DB"], 7, 6)
    result = run_mem("doctor", "--skip-embedder")
    assert result.code == 0
    assert by_name(result.records)["schema"]["status"] == "warn"


def test_unreachable_ollama_embedder_exits_6():
    result = run_mem("doctor", "--embedder", "ollama:nomic-embed-text", env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert result.code == 6, result.stderr
    checks = by_name(result.records)
    assert checks["embedder"]["status"] == "fail" and "ollama serve" in checks["embedder"]["fix"]
    assert checks["ollama"]["status"] == "fail"


def test_world_readable_database_is_flagged(isolated_env: dict[str, str]):
    run_mem("add", "We chose Redis for the cache layer")
    Path(isolated_env["MEM_DB"]).chmod(0o644)
    database = by_name(run_mem("doctor", "--skip-embedder").records)["database"]
    assert database["status"] == "warn" and "chmod 600" in database["fix"]

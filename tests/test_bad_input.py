"""The bad-input corpus: each case gets a clear message and its exit code, and nothing is lost or half-written."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.conftest import jsonl, run_mem


def count(db: str) -> int:
    if not Path(db).exists():
        return 0
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.fixture
def db(isolated_env: dict[str, str]) -> str:
    assert run_mem("add", "A memory that must survive every bad input").code == 0
    return isolated_env["MEM_DB"]


def assert_rejected(result, code: int, *words: str) -> None:
    assert result.code == code, (result.code, result.stderr)
    assert "Traceback" not in result.stderr
    message = result.error["message"] if code != 2 else result.stderr
    for word in words:
        assert word in message, message


def test_malformed_json_line(db: str):
    result = run_mem("add", "-", input=jsonl({"text": "good line one"}) + "{not json}\n")
    assert_rejected(result, 4, "line 2", "invalid JSON")
    assert result.error["line"] == 2
    assert count(db) == 1


def test_truncated_json_lines(db: str):
    whole = jsonl({"text": "first complete record"}, {"text": "second complete record"})
    result = run_mem("import", "-", input=whole[: len(whole) - 12])
    assert_rejected(result, 4, "line 2")
    assert count(db) == 1


def test_invalid_utf8(db: str):
    result = run_mem("add", "-", input=b'{"text": "caf\xe9 latte"}\n')
    assert_rejected(result, 4, "line 1", "UTF-8")
    assert count(db) == 1


def test_nul_bytes(db: str):
    raw = run_mem("add", "-", input=b'{"text": "raw \x00 nul"}\n')
    assert_rejected(raw, 4, "NUL")
    assert count(db) == 1
    escaped = run_mem("add", "-", input=jsonl({"text": "escaped \u0000 nul is stripped"}))
    assert escaped.code == 0 and escaped.records[0]["status"] == "added"
    stored = run_mem("get", escaped.records[0]["id"]).records[0]
    assert "\x00" not in stored["text"]
    queries = run_mem("search", "-", input=jsonl({"query": "escaped \u0000 nul"}))
    assert queries.code == 0, queries.stderr  # FTS quoting replaces NUL; never a crash


def test_twenty_megabyte_line(db: str, tmp_path: Path):
    big = tmp_path / "big.jsonl"
    with big.open("wb") as fh:
        fh.write(b'{"text": "' + b"a" * (20 * 1024 * 1024) + b'"}\n')
    result = run_mem("add", str(big))
    assert_rejected(result, 4, "line 1", "MiB")
    assert count(db) == 1


def test_long_but_allowed_text_is_rejected_per_record_not_crashed(db: str):
    result = run_mem("add", "-", input=jsonl({"text": "x" * 100_000}, {"text": "a normal sized memory"}))
    assert result.code == 0
    assert [r["status"] for r in result.records] == ["rejected", "added"]
    assert "too long" in result.records[0]["reason"]


def test_binary_files(db: str, tmp_path: Path):
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    for command in (("add", str(binary)), ("import", str(binary)), ("search", "-")):
        result = run_mem(*command, input=binary.read_bytes() if command[-1] == "-" else None)
        assert result.code == 4, (command, result.stderr)
        assert "Traceback" not in result.stderr
    assert count(db) == 1


@pytest.mark.parametrize("query", [
    'NEAR(a b) OR "unterminated', "title:* ^ AND OR NOT", "'; DROP TABLE memories; --", "1 OR 1=1",
    "\"\" '' (( )) {{ }}", "memories_fts MATCH 'x'", "%_%", "\\", "-", "*",
])
def test_fts_syntax_and_sql_as_queries(db: str, query: str):
    result = run_mem("search", query)
    assert result.code == 0, result.stderr
    assert count(db) == 1


def test_huge_limits(db: str):
    listed = run_mem("list", "--limit", str(10**30))
    assert listed.code == 0, listed.stderr
    assert len(listed.records) == 1
    assert run_mem("list", "--limit", str(2**63 - 1)).code == 0
    assert_rejected(run_mem("search", "memory", "--limit", "100000"), 4, "1000")  # a bad value: exit 4


def test_negative_numbers(db: str):
    assert_rejected(run_mem("list", "--limit", "-5"), 4, "--limit")  # a bad flag value is bad input (exit 4)
    assert_rejected(run_mem("add", "--layer", "-1", "some text here"), 4, "--layer")
    assert_rejected(run_mem("add", "--source-line", "-3", "some text here"), 4, "--source-line")
    result = run_mem("add", "-", input=jsonl({"text": "negative layer in a record", "layer": -1}))
    assert_rejected(result, 4, "layer")
    result = run_mem("add", "-", input=jsonl({"text": "negative confidence", "confidence": -0.5}))
    assert_rejected(result, 4, "confidence")
    assert count(db) == 1


def test_unknown_flags(db: str):
    for command in (("list", "--bogus"), ("search", "x", "--nope"), ("add", "--frobnicate", "text"), ("doctor", "-Z")):
        result = run_mem(*command)
        assert result.code == 2, command
        assert "No such option" in result.stderr
    assert count(db) == 1


def test_missing_database_folder_is_created_private(tmp_path: Path):
    target = tmp_path / "does" / "not" / "exist" / "mem.db"
    result = run_mem("add", "created on demand", env={"MEM_DB": str(target)})
    assert result.code == 0, result.stderr
    assert target.exists()
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    assert oct(target.parent.stat().st_mode & 0o777) == "0o700"


def _without_root_powers() -> list[str]:
    """Root ignores file modes; drop the capabilities that let it (setpriv, from util-linux)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a file read-only to this user")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_read_only_database_file(db: str):
    import subprocess

    run_mem("list")  # settle the WAL into the main file before hashing
    for suffix in ("-wal", "-shm"):
        Path(db + suffix).unlink(missing_ok=True)
    before = hashlib.sha256(Path(db).read_bytes()).hexdigest()
    Path(db).chmod(0o444)
    prefix = _without_root_powers()
    try:
        proc = subprocess.run([*prefix, sys.executable, "-m", "mem", "add", "this must not be written"],
                              capture_output=True, env=os.environ.copy())
        stderr = proc.stderr.decode()
        assert proc.returncode == 5, stderr
        assert "read-only" in stderr and "Traceback" not in stderr
        search = subprocess.run([*prefix, sys.executable, "-m", "mem", "search", "survive"],
                                capture_output=True, env=os.environ.copy())
        assert search.returncode == 0, search.stderr  # reading still works
        assert b"must survive" in search.stdout
    finally:
        Path(db).chmod(0o600)
    assert hashlib.sha256(Path(db).read_bytes()).hexdigest() == before
    assert count(db) == 1


def test_database_from_a_newer_schema(db: str):
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 4242")
    conn.close()
    for command in (("add", "newer schema write"), ("search", "memory"), ("list",), ("stats",)):
        result = run_mem(*command)
        assert_rejected(result, 5, "4242", "upgrade mem")
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4242
    conn.execute("PRAGMA user_version = 0")  # let the fixture's count() read it as is
    conn.close()


def test_not_a_database(tmp_path: Path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is a text file, not SQLite\n" * 200)
    result = run_mem("list", env={"MEM_DB": str(junk)})
    assert_rejected(result, 5, "not a usable SQLite database")
    assert junk.read_bytes() == b"this is a text file, not SQLite\n" * 200


def test_database_path_is_a_folder(tmp_path: Path):
    result = run_mem("list", env={"MEM_DB": str(tmp_path)})
    assert_rejected(result, 5, "folder")

"""Sources are read safely: regular files only, capped and timed, so a FIFO or /dev/zero never hangs
a write; verify quotes a changed line only from a file tracked in the memory's own repository, and
never a line that looks like a secret."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from tests.test_verify_archive import project

SECRET_LINE = "GITHUB_TOKEN = ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"


def _mem_process(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    """A real process: a hang shows as a timeout instead of stalling the test run."""
    return subprocess.run([sys.executable, "-m", "mem", *args], capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=dict(os.environ))


@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_add_with_a_never_ending_source_returns_promptly(tmp_path: Path, source: str) -> None:
    if source == "fifo":
        source = str(tmp_path / "pipe")
        os.mkfifo(source)
    started = time.monotonic()
    result = _mem_process("add", "Build notes captured from a pipe", "--source", source)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 15
    assert b'"status":"added"' in result.stdout


def test_mcp_add_with_dev_zero_does_not_block_the_server() -> None:
    from tests.test_mcp import mcp_client

    async def main() -> None:
        async with mcp_client() as client:
            with anyio.fail_after(15):
                added = await client.call_tool("add", {"text": "Notes from a device file", "source": "/dev/zero"})
            assert not added.is_error
            with anyio.fail_after(15):
                found = await client.call_tool("search", {"query": "notes device file"})
            assert found.structured_content["count"] >= 1

    anyio.run(main)


def test_verify_quotes_only_tracked_project_lines_without_secrets(mem, tmp_path: Path) -> None:
    repo = project(tmp_path / "shop", "test", "settings.py", "keys.py")
    settings, keys = repo / "settings.py", repo / "keys.py"
    settings.write_text("TIMEOUT = 30\nRETRIES = 3\n")
    keys.write_text("region = eu-west-1\nprofile = ci\n")
    dotenv = repo / ".env"  # in the folder, not tracked by git
    dotenv.write_text("DEBUG=0\nMODE=dev\n")
    history = tmp_path / "home" / ".bash_history"  # outside every repository
    history.write_text("ls\ncd src\n")
    ids = {}
    for name, path in (("settings", settings), ("keys", keys), ("dotenv", dotenv), ("history", history)):
        added = mem("add", f"The {name} file line two is remembered", "--source", str(path), "--source-line", "2")
        ids[name] = added.records[0]["id"]
    settings.write_text("TIMEOUT = 30\nRETRIES = 5\n")
    keys.write_text(f"region = eu-west-1\n{SECRET_LINE}\n")
    dotenv.write_text(f"DEBUG=0\n{SECRET_LINE}\n")
    history.write_text(f"ls\nexport {SECRET_LINE}\n")

    result = mem("verify")
    findings = {r["id"]: r for r in result.records if r.get("finding") == "stale"}
    assert set(findings) == set(ids.values())
    assert findings[ids["settings"]]["line_text"] == "RETRIES = 5"
    assert findings[ids["keys"]]["line_text"] is None and findings[ids["keys"]]["line_withheld"] == "looks like a secret"
    for name in ("dotenv", "history"):
        assert findings[ids[name]]["line_text"] is None
        assert findings[ids[name]]["line_withheld"] == "outside the memory's project"
    assert "ghp_1234567890" not in result.stdout


def test_verify_reports_a_source_that_became_a_fifo_as_missing_without_reading_it(mem, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("one\n")
    memory_id = mem("add", "The notes file has one line", "--source", str(path)).records[0]["id"]
    path.unlink()
    os.mkfifo(path)
    started = time.monotonic()
    result = mem("verify")
    assert time.monotonic() - started < 15
    assert [r["finding"] for r in result.records if r.get("id") == memory_id] == ["missing"]


def test_sources_module_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    from mem import sources

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "zero-link"
    link.symlink_to("/dev/zero")
    for path in ("/dev/zero", fifo, link, tmp_path / "absent", tmp_path):
        assert sources.sha256_of(path) is None and sources.read_line(path, 1, 80) is None
    plain = tmp_path / "plain.txt"
    plain.write_text("a\nb\n")
    assert sources.read_line(plain, 2, 80) == "b" and len(sources.sha256_of(plain) or "") == 64
    assert [sources.kind_of(p) for p in (plain, fifo, "/dev/zero", tmp_path / "absent")] == \
        ["file", "special", "special", "missing"]


def test_sources_over_the_size_cap_are_not_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mem import sources

    big = tmp_path / "big.log"
    big.write_bytes(b"x" * 5000)
    monkeypatch.setattr(sources, "MAX_BYTES", 4096)
    assert sources.kind_of(big) == "large" and sources.sha256_of(big) is None

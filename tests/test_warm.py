"""The warm helper for one-shot commands: same output as a cold run, never required, gone when idle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import jsonl, run_mem_subprocess

pytestmark = pytest.mark.slow  # helpers and clients are real processes: full suite and CI only

CLIENT = ("import sys; sys.argv = ['mem', *sys.argv[1:]]\n"
          "from mem.cli import main\n"
          "try:\n    main()\nfinally:\n    sys.stderr.write('numpy loaded: %s\\n' % ('numpy' in sys.modules))\n")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    runtime = tmp_path / "run"
    runtime.mkdir(exist_ok=True, mode=0o700)
    return {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "MEM_WARM": "1", **extra}


def _client(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CLIENT, *args], env={**env, "PYTHONPATH": _pythonpath(env)}, cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def _pythonpath(env: dict[str, str]) -> str:
    # this checkout first, so a client started from another folder runs the code under test
    return os.pathsep.join(p for p in (str(Path(__file__).resolve().parent.parent), env.get("PYTHONPATH")) if p)


def _wait_for(env: dict[str, str], up: bool, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = subprocess.run([sys.executable, "-m", "mem.cli.warm", "status"], env=env, capture_output=True)
        if (status.returncode == 0) == up:
            return
        time.sleep(0.1)
    raise AssertionError(f"helper {'never came up' if up else 'never went away'}")


@pytest.fixture
def helper(tmp_path: Path):
    env = _env(tmp_path, MEM_WARM_IDLE="60")
    proc = subprocess.Popen([sys.executable, "-m", "mem.cli.warm", "serve", "--embedder", "hash"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for(env, up=True)
    yield env, proc
    subprocess.run([sys.executable, "-m", "mem.cli.warm", "stop"], env=env, capture_output=True)
    proc.wait(timeout=10)


def test_a_handed_over_search_prints_what_a_cold_one_does(tmp_path: Path, helper) -> None:
    env, _proc = helper
    records = jsonl(*({"text": f"Service {i} runs on port {8000 + i} behind nginx"} for i in range(30)))
    assert run_mem_subprocess("add", "-", input=records).code == 0
    shutil.copy(tmp_path / "mem.db", tmp_path / "copy.db")
    query = ["search", "which port does service 7 use", "-k", "5", "--json", "--now", "2026-12-01T12:00:00Z"]
    warm = _client(query, env)
    cold = _client([*query, "--db", str(tmp_path / "copy.db")], {**env, "MEM_WARM": "0"})
    assert warm.returncode == cold.returncode == 0, warm.stderr + cold.stderr
    assert warm.stdout == cold.stdout and warm.stdout.count("\n") == 5
    assert "numpy loaded: False" in warm.stderr  # answered by the helper: this process loaded nothing heavy
    assert "numpy loaded: True" in cold.stderr
    # Errors and exit codes come back as they are.
    bad = _client(["search", "x", "-k", "0"], env)
    assert bad.returncode == cold_code(["search", "x", "-k", "0"], env) != 0


def cold_code(args: list[str], env: dict[str, str]) -> int:
    return _client(args, {**env, "MEM_WARM": "0"}).returncode


def test_an_add_runs_in_the_callers_folder_and_database(tmp_path: Path, helper) -> None:
    env, _proc = helper
    work = tmp_path / "work"
    work.mkdir()
    added = _client(["add", "The gateway timeout is 30 seconds", "--db", "here.db"], {**env, "MEM_SCOPE": "gw"}, cwd=work)
    assert added.returncode == 0, added.stderr
    assert "numpy loaded: False" in added.stderr
    listed = run_mem_subprocess("list", "--db", str(work / "here.db"), "--scope", "gw")
    assert [r["text"] for r in listed.records] == ["The gateway timeout is 30 seconds"]


def test_stdin_commands_and_a_stale_helper_run_in_the_calling_process(tmp_path: Path, helper) -> None:
    env, proc = helper
    assert _client(["add", "a memory so the database exists"], {**env, "MEM_WARM": "0"}).returncode == 0
    piped = subprocess.run([sys.executable, "-c", CLIENT, "search", "-"], env=env, input='{"query": "x"}\n',
                           capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and "numpy loaded: True" in piped.stderr
    # Another mem (an upgrade, an edit) calling: the helper answers "stale" and makes way.
    import json
    import socket

    from mem.cli import warm

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(tmp_path / "run" / "mem" / "warm.sock"))
    warm._send(conn, b"q", json.dumps({"key": "another mem", "argv": ["search", "x"]}).encode())
    assert warm._recv(conn)[0] == b"s"
    conn.close()
    assert proc.wait(timeout=10) == 0
    alone = _client(["search", "anything", "--json"], env)
    assert alone.returncode == 0 and "numpy loaded: True" in alone.stderr


def test_the_helper_stops_when_idle_and_is_never_required(tmp_path: Path) -> None:
    env = _env(tmp_path, MEM_WARM_IDLE="1")
    proc = subprocess.Popen([sys.executable, "-m", "mem.cli.warm", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for(env, up=True)
    assert proc.wait(timeout=30) == 0
    assert not (tmp_path / "run" / "mem" / "warm.sock").exists()
    assert _client(["add", "a memory so the database exists"], {**env, "MEM_WARM": "0"}).returncode == 0
    alone = _client(["search", "anything", "--json"], env)  # no helper: runs here, exit 0
    assert alone.returncode == 0 and "numpy loaded: True" in alone.stderr


def test_a_cold_minilm_search_starts_a_helper_that_answers_the_next_one_identically(tmp_path: Path) -> None:
    env = _env(tmp_path, MEM_EMBEDDER="minilm", MEM_WARM_IDLE="30", MEM_NOW="2026-12-01T12:00:00Z")
    env["MEM_DB"] = str(tmp_path / "minilm.db")
    assert _client(["add", "We chose Redis for the cache layer"], {**env, "MEM_WARM": "0"}).returncode == 0
    shutil.copy(tmp_path / "minilm.db", tmp_path / "copy.db")
    first = _client(["search", "which cache did we pick?", "--json"], env)
    assert first.returncode == 0 and "numpy loaded: True" in first.stderr
    _wait_for(env, up=True)
    second = _client(["search", "which cache did we pick?", "--json", "--db", str(tmp_path / "copy.db")], env)
    try:
        assert second.returncode == 0 and "numpy loaded: False" in second.stderr
        assert second.stdout == first.stdout
    finally:
        subprocess.run([sys.executable, "-m", "mem.cli.warm", "stop"], env=env, capture_output=True)


def test_a_client_sends_nothing_to_a_socket_in_a_folder_others_can_reach(tmp_path: Path, helper) -> None:
    env, _proc = helper
    assert run_mem_subprocess("add", "The build cache lives in S3").code == 0
    folder = tmp_path / "run" / "mem"
    folder.chmod(0o755)  # as if planted, or opened up: another user could be listening there
    try:
        result = _client(["search", "anything", "--json"], env)
    finally:
        folder.chmod(0o700)
    assert result.returncode == 0 and "numpy loaded: True" in result.stderr  # ran here instead
    served = _client(["search", "anything", "--json"], env)
    assert "numpy loaded: False" in served.stderr

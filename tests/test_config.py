"""The config file: $XDG_CONFIG_HOME/mem/config.toml, below flags and environment variables."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_mem


def mem(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """``mem ARGS`` with ``env`` on top of the test's environment, its result as bytes."""
    result = run_mem(*args, env=env)
    return subprocess.CompletedProcess(args, result.code, result.stdout.encode(), result.stderr.encode())


@pytest.fixture
def file_env(tmp_path: Path, isolated_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The isolated environment without the MEM_* variables conftest sets, so the file decides."""
    for name in ("MEM_DB", "MEM_EMBEDDER", "MEM_SCOPE"):
        monkeypatch.delenv(name)
    env = dict(os.environ)
    folder = Path(isolated_env["XDG_CONFIG_HOME"]) / "mem"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        f'db = "{tmp_path / "from-config.db"}"\nembedder = "hash"\nscope = "configured"\n'
        'ollama_host = "http://127.0.0.1:9"\n'
    )
    return env


def test_config_file_sets_db_embedder_and_scope(tmp_path: Path, file_env: dict[str, str]):
    added = mem("add", "set by the config file", env=file_env)
    assert added.returncode == 0, added.stderr
    assert (tmp_path / "from-config.db").exists()
    record = json.loads(mem("list", env=file_env).stdout.splitlines()[0])
    assert record["scope"] == "configured"
    stats = json.loads(mem("stats", env=file_env).stdout)
    assert stats["embedder"] == "hash:v1"


def test_environment_and_flags_win_over_the_file(tmp_path: Path, file_env: dict[str, str]):
    env = {**file_env, "MEM_SCOPE": "from-env"}
    assert mem("add", "scoped by the environment", env=env).returncode == 0
    assert mem("add", "scoped by the flag", "--scope", "from-flag", env=env).returncode == 0
    scopes = {json.loads(line)["scope"] for line in mem("list", "--scope", "*", env=env).stdout.splitlines()}
    assert scopes == {"from-env", "from-flag"}


def test_ollama_host_from_the_file_is_used(file_env: dict[str, str]):
    result = mem("add", "needs ollama", "--embedder", "ollama:nomic-embed-text", "--db",
                 str(Path(file_env["HOME"]) / "o.db"), env=file_env)
    assert result.returncode == 6 and b"127.0.0.1:9" in result.stderr


def test_broken_config_file_is_bad_input(isolated_env: dict[str, str]):
    folder = Path(isolated_env["XDG_CONFIG_HOME"]) / "mem"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text("db = [unclosed\n")
    result = mem("list", env=dict(os.environ))
    assert result.returncode == 4 and b"config.toml" in result.stderr

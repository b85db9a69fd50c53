"""Every test gets its own HOME, XDG folders and database file; the hash embedder unless it asks otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    values = {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "MEM_DB": str(tmp_path / "mem.db"),
        "MEM_EMBEDDER": "hash",
        "MEM_SCOPE": "test",
    }
    for key in ("MEM_NOW", "MEM_DEBUG", "OLLAMA_HOST", "MEM_LLM"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


class MemResult:
    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.code = proc.returncode
        self.stdout = proc.stdout.decode("utf-8", "replace")
        self.stderr = proc.stderr.decode("utf-8", "replace")

    @property
    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    @property
    def error(self) -> dict[str, Any]:
        return json.loads(self.stderr.strip().splitlines()[-1])["error"]


def run_mem(*args: str, input: bytes | str | None = None, env: dict[str, str] | None = None,
            cwd: str | Path | None = None, timeout: float = 120) -> MemResult:
    """The real entry point in a subprocess (``python -m mem``), stdin/stdout as pipes."""
    if isinstance(input, str):
        input = input.encode("utf-8")
    proc = subprocess.run([sys.executable, "-m", "mem", *args], input=input, capture_output=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout)
    return MemResult(proc)


@pytest.fixture
def mem():
    return run_mem


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)

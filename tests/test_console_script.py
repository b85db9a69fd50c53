"""The installed console script, as a shell runs it: real processes joined by a real pipe.

Everything else calls the CLI in process (tests/conftest.py); this is the end-to-end check that
the ``mem`` entry point itself works, exits with the README's codes, and composes in a pipeline.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def mem_script() -> str:
    script = shutil.which("mem", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("no `mem` console script next to this interpreter (pip install . puts one there)")
    return script


def sh(command: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", command], input=input, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # five interpreters and two shells
def test_console_script_adds_searches_pipes_and_exits_with_the_readme_codes(mem_script: str) -> None:
    mem = shlex.quote(mem_script)
    added = sh(f"printf '%s\\n' '{{\"text\": \"The release checklist lives in docs/release.md\"}}' | {mem} add -")
    assert added.returncode == 0, added.stderr
    [outcome] = [json.loads(line) for line in added.stdout.splitlines()]
    assert outcome["status"] == "added"

    piped = sh(f"{mem} search 'release checklist' -k 1 --json | {mem} archive -")
    assert piped.returncode == 0, piped.stderr
    assert [json.loads(line) for line in piped.stdout.splitlines()] == [
        {"record": "outcome", "id": outcome["id"], "status": "archived"}]
    listed = sh(f"{mem} archive --list")
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [outcome["id"]]

    missing = sh(f"{mem} get ffffffff")
    assert missing.returncode == 3 and missing.stdout == ""
    assert json.loads(missing.stderr.strip().splitlines()[-1])["error"]["code"] == "not_found"

"""kill -9 during 'mem import' never leaves an inconsistent database; re-running completes it (short bench/crash.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_killed_imports_stay_consistent_and_resume_without_duplicates(tmp_path: Path):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "crash.py"), "--memories", "1500", "--runs", "3",
                           "--seed", "3", "--chunk", "200", "--json"], capture_output=True, timeout=240, env={**os.environ, "TMPDIR": str(tmp_path)})
    result = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert any(k["killed"] for k in result["kills"]), result["kills"]
    for kill in result["kills"]:
        assert kill["integrity"] == "ok" and kill["consistent"], kill
    assert all(k["rerun_complete"] and k["after_rerun"] == 1500 for k in result["kills"])
    assert result["final_exit"] == 0 and result["complete_without_duplicates"]
    final = result["final"]
    assert final["memories"] == final["fts"] == final["vectors"] == final["vec_index"] == 1500
    assert final["distinct_ids"] == final["distinct_hashes"] == 1500
    assert final["pending"] == final["unlinked"] == 0  # the rerun finished the graph
    assert proc.returncode == 0

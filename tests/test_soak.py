"""A short concurrency soak (bench/soak.py): writers, a reader and consolidation on one file lose nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_short_soak_loses_nothing_and_surfaces_no_lock_error(tmp_path: Path):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--seconds", "8", "--json"],
                          capture_output=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    result = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert result["added"] > 0 and result["reads"] > 0, result
    assert result["lost_writes"] == 0, result
    assert result["lock_errors"] == 0 and result["error_count"] == 0, result["errors"]
    assert result["integrity"] == "ok"
    assert result["counts_agree"], result["counts"]
    assert proc.returncode == 0

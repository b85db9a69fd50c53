"""Several processes adding to one file at once lose nothing and surface no lock error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import jsonl, run_mem


@pytest.mark.slow  # eight processes at once
def test_concurrent_writers_lose_nothing():
    writers, per_writer = 4, 60
    procs = []
    for w in range(writers):
        lines = jsonl(*({"text": f"writer {w} memory {i}: distinct fact {w * 1000 + i}"} for i in range(per_writer)))
        proc = subprocess.Popen([sys.executable, "-m", "mem", "add", "--keep-near", "-"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
        procs.append((proc, lines))
    # single-memory adds racing the batches
    singles = [subprocess.Popen([sys.executable, "-m", "mem", "add", f"single add number {i} of the race"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(4)]
    for proc, lines in procs:
        out, err = proc.communicate(lines.encode(), timeout=120)
        assert proc.returncode == 0, err
        assert b"locked" not in err
    for proc in singles:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    stats = run_mem("stats").records[0]
    expected = writers * per_writer + len(singles)
    assert stats["memories"] == stats["vectors"] == stats["fts"] == stats["vec_index"] == expected

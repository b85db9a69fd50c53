"""`mem consolidate` killed with kill -9 at any moment, and two at once: real processes on one file.

The reference is the same database consolidated once, uninterrupted: after any number of kills and
one finishing run, the memories (text, status, kind, layer, superseded or not) and the edges between
them (by text) are exactly the reference's, and the file passes ``PRAGMA integrity_check``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import jsonl, run_mem

T0 = "2026-01-01T00:00:00Z"
LATER = "2026-09-01T00:00:00Z"  # eight months on: every phase has work (links, merges, archiving)
TOPICS = ["backup job", "deploy pipeline", "cache layer", "search cluster", "billing service", "auth gateway"]


def _records() -> list[dict]:
    out = []
    for c in range(40):
        base = (f"The nightly {TOPICS[c % len(TOPICS)]} number {c} runs at {c % 24:02d}:00 on host node-{c} and "
                f"writes compressed snapshots of database {c} to the bucket in region {c % 5}.")
        for suffix in (" It keeps 14 daily snapshots.", f" Owner: team {c}.", " It keeps 14 daily snapshots!"):
            out.append({"text": base + suffix, "created_at": T0, "scope": "ab"[c % 2]})
    out += [{"text": f"Ticket T-{i}: the {TOPICS[i % 6]} had event {i * 7919 % 1000} on day {i % 28}.",
             "created_at": T0, "scope": "ab"[i % 2], "meta": {"session": f"s{i % 9}"}} for i in range(200)]
    out += [{"text": "The API gateway listens on port 8080.", "created_at": T0, "scope": "a"},
            {"text": "The API gateway listens on port 9090.", "created_at": "2026-01-02T00:00:00Z", "scope": "a"},
            {"text": "Decision: every deploy goes through the ops script.", "created_at": T0, "scope": "a"}]
    return out


@contextmanager
def connect(path: Path) -> Iterator[Any]:
    """mem's own SQLite (sqlean), committed and closed: see tests/test_lifecycle_trust.py ``db``."""
    import sqlean

    conn = sqlean.connect(path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def _build(path: Path) -> None:
    result = run_mem("add", "--db", str(path), "--keep-near", "-", "--now", T0, input=jsonl(*_records()))
    assert result.code == 0, result.stderr
    with connect(path) as conn:  # stored before the assertion index: replay has it all to do
        conn.execute("UPDATE memories SET asserted = 0")
        conn.execute("DELETE FROM assertions")


def _copy(src: Path, dst: Path) -> None:
    with connect(src) as a, connect(dst) as b:
        a.backup(b)


def _start(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "mem", "consolidate", "--db", str(path), "--now", LATER],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})


def _finish(path: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "mem", "consolidate", "--db", str(path), "--now", LATER],
                          capture_output=True, timeout=120, env={**os.environ})
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]


def _state(path: Path) -> tuple[list[tuple], list[tuple]]:
    with connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        memories = sorted(conn.execute("SELECT text, status, kind, layer, superseded_by IS NULL, scope FROM memories"))
        edges = sorted(conn.execute(
            "SELECT a.text, b.text, e.type FROM edges e JOIN memories a ON a.id = e.src JOIN memories b ON b.id = e.dst"))
        counts = conn.execute("SELECT (SELECT COUNT(*) FROM memories), (SELECT COUNT(*) FROM vectors), "
                              "(SELECT COUNT(*) FROM memory_fts)").fetchone()
    assert counts[0] == counts[1] == counts[2], counts  # every memory has its vector and its FTS row
    return memories, edges


@pytest.mark.slow
def test_kill_9_at_any_moment_then_the_next_run_finishes_the_work(tmp_path: Path) -> None:
    work, reference = tmp_path / "work.db", tmp_path / "reference.db"
    _build(work)
    _copy(work, reference)
    started = time.monotonic()
    summary = _finish(reference)[-1]
    whole = time.monotonic() - started
    phases = summary["phases"]
    assert phases["compress"]["merged"] > 0 and phases["prune"].get("archived", 0) > 0  # every phase had work
    expected = _state(reference)
    # kill -9 at spread moments of a run (start-up included), several times over the same file
    for fraction in (0.35, 0.5, 0.65, 0.8, 0.9):
        proc = _start(work)
        time.sleep(whole * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        _state(work)  # consistent after every kill
    records = _finish(work)
    assert records[-1]["record"] == "summary" and "skipped" not in records[-1]  # the dead holder's lease is taken
    assert _state(work) == expected
    assert _finish(work)[-1]["actions"] == 0  # settled
    with connect(work) as conn:
        statuses = {s for (s,) in conn.execute("SELECT status FROM consolidation_runs")}
    # some kills landed after a run had started (logged, then closed as interrupted by the next run)
    assert statuses == {"ok", "interrupted"}, statuses


@pytest.mark.slow
def test_two_consolidates_at_once_do_the_work_once(tmp_path: Path) -> None:
    work, reference = tmp_path / "work.db", tmp_path / "reference.db"
    _build(work)
    _copy(work, reference)
    _finish(reference)
    expected = _state(reference)
    first, second = _start(work), _start(work)
    outputs = []
    for proc in (first, second):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        outputs.append([json.loads(line) for line in out.decode().splitlines() if line.strip()])
    summaries = [records[-1] for records in outputs]
    ran = [s for s in summaries if "skipped" not in s]
    assert ran, summaries
    merges = sum(1 for records in outputs for r in records if r.get("action") == "merge")
    with connect(reference) as conn:
        merged = conn.execute("SELECT COUNT(*) FROM memories WHERE json_extract(meta, '$.consolidated') IS NOT NULL")
        assert merges == merged.fetchone()[0]  # each cluster merged once, by one of the two
    assert _state(work) == expected

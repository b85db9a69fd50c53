"""A large intake prepares its texts in a worker process (mem.stages.intake_worker): the same database
as in-process intake, the same errors and exit codes, and no child left behind however it ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import sqlean
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.stages import add, intake_worker
from tests.test_bulk import NOW, ROOT, _outcomes, _texts, intake_records, snapshot


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 64 and the worker from two chunks up, so a test-sized input streams several chunks."""
    monkeypatch.setattr(add, "CHUNK", 64)
    monkeypatch.setattr(add, "BULK_CHUNK", 64)
    monkeypatch.setattr(intake_worker, "MIN_RECORDS", 128)


def _rows(path: Path) -> dict[str, Any]:
    """Every memory's columns (ids named by their text: new ids are random), its vector's bytes and
    token states, and the changelog, in rowid order."""
    conn = sqlean.connect(str(path))
    try:
        text_of = dict(conn.execute("SELECT id, text FROM memories"))
        columns = [c[1] for c in conn.execute("PRAGMA table_info(memories)") if c[1] not in ("id", "superseded_by")]
        memories = [(*row[:-1], text_of.get(row[-1]))
                    for row in conn.execute(f"SELECT rowid, {', '.join(columns)}, superseded_by FROM memories ORDER BY rowid")]
        vectors = conn.execute("SELECT v.rowid, m.text, v.f32 FROM vectors v JOIN memories m ON m.rowid = v.rowid "
                               "ORDER BY v.rowid").fetchall()
        tokens = conn.execute("SELECT * FROM token_states ORDER BY 1").fetchall()
        log = [(op, text_of.get(memory_id)) for op, memory_id in conn.execute(
            "SELECT op, memory_id FROM changelog ORDER BY rowid")]
        return {"memories": memories, "vectors": vectors, "tokens": tokens, "log": log}
    finally:
        conn.close()


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_worker_builds_the_database_in_process_intake_builds(start: str, mem, tmp_path: Path, small_chunks: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    flags = ["--bulk"]
    monkeypatch.setattr(intake_worker, "START", start)
    lines = "".join(json.dumps(r) + "\n" for r in intake_records(300))
    started: list[int] = []
    real_enter = intake_worker.Worker.__enter__

    def counted(self: intake_worker.Worker) -> intake_worker.Worker:
        started.append(len(self.bounds))
        return real_enter(self)

    monkeypatch.setattr(intake_worker.Worker, "__enter__", counted)
    worker, alone = tmp_path / "worker.db", tmp_path / "alone.db"
    with_worker = mem("add", "-", *flags, "--db", str(worker), "--now", NOW, input=lines)
    assert started and started[0] > 2  # it ran, over several chunks
    assert mem("add", "-", "--db", str(tmp_path / "eager.db"), "--now", NOW, input=lines).code == 0
    assert len(started) == 1  # eager intake prepares in process
    monkeypatch.setattr(intake_worker, "MIN_RECORDS", 10**9)
    in_process = mem("add", "-", *flags, "--db", str(alone), "--now", NOW, input=lines)
    assert len(started) == 1
    _same_database(worker, with_worker, alone, in_process)


def _same_database(path: Path, result: Any, expected_path: Path, expected_result: Any) -> None:
    """Both runs succeeded and stored the same rows, vectors, token states, changelog, graph and outcomes."""
    assert result.code == expected_result.code == 0, result.stderr
    expected, got = _rows(expected_path), _rows(path)
    assert expected["memories"] and expected["vectors"]
    for part in ("memories", "vectors", "tokens", "log"):
        assert got[part] == expected[part], part
    graph, graph_got = snapshot(expected_path), snapshot(path)
    for part in ("edges", "memories", "entities", "mentions", "assertions"):
        assert graph_got[part] == graph[part], part
    assert _outcomes(result, _texts(path)) == _outcomes(expected_result, _texts(expected_path))


@pytest.mark.parametrize("start", ["fork", "spawn"])
@pytest.mark.parametrize("bad_at", [[1], [150], [299], [40, 290]])
def test_a_bad_line_anywhere_fails_the_batch_as_in_process(bad_at: list[int], start: str, mem, tmp_path: Path,
                                                           small_chunks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole batch is validated before the first write, whichever process checks a line; the error is
    the first bad line's, word for word."""
    monkeypatch.setattr(intake_worker, "START", start)
    records: list[Any] = [{"text": f"note number {i} about the deploy pipeline"} for i in range(300)]
    for at in bad_at:
        records[at - 1] = {"text": "fine", "created_at": "not a date"}
    lines = "".join(json.dumps(r) + "\n" for r in records)
    got = mem("add", "-", "--bulk", "--db", str(tmp_path / "w.db"), "--now", NOW, input=lines)
    monkeypatch.setattr(intake_worker, "MIN_RECORDS", 10**9)
    expected = mem("add", "-", "--bulk", "--db", str(tmp_path / "a.db"), "--now", NOW, input=lines)
    assert got.code == expected.code == 4
    assert got.error == expected.error and f"line {bad_at[0]}:" in got.error["message"]
    conn = sqlean.connect(str(tmp_path / "w.db"))
    try:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
    finally:
        conn.close()


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_an_embedder_failing_in_the_worker_fails_the_command_as_in_process(start: str, mem, tmp_path: Path,
                                                                            small_chunks: None,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The database is bound to an Ollama model that is not running: the child's embedding fails, and
    the parent exits 6 with the message in-process intake gives."""
    from mem.store import Store

    monkeypatch.setattr(intake_worker, "START", start)

    lines = "".join(json.dumps({"text": f"memory {i} of the billing service"}) + "\n" for i in range(200))
    results = []
    for name, floor in (("w.db", 128), ("a.db", 10**9)):
        db = tmp_path / name
        with Store.open(db) as store:
            store.rebind_embedder("ollama:nomic-embed-text", "ollama:nomic-embed-text", 8)
        monkeypatch.setattr(intake_worker, "MIN_RECORDS", floor)
        results.append(mem("add", "-", "--bulk", "--db", str(db), "--embedder", "ollama:nomic-embed-text", env={"MEM_OLLAMA_HOST": "http://127.0.0.1:9"}, input=lines))
    got, expected = results
    assert got.code == expected.code == 6, got.stderr
    assert got.error == expected.error


def _children_of(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines() if ":\t" in line)
            except OSError:
                continue
            if status.get("PPid", "").strip() == str(pid) and not status.get("State", "").startswith("Z"):
                found.append(int(entry.name))
    return found


def _alive(pids: list[int]) -> list[int]:
    deadline, alive = time.monotonic() + 10, list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if Path(f"/proc/{p}").exists()
                 and not (Path(f"/proc/{p}/status").read_text().split("State:")[1].strip().startswith("Z"))]
    return alive


@pytest.mark.parametrize(("how", "start"), [(how, start) for how in ("SIGINT", "SIGTERM", "SIGKILL")
                                            for start in ("fork", "spawn")] + [("broken pipe", "fork")])
def test_no_worker_outlives_an_interrupted_intake(how: str, start: str, tmp_path: Path) -> None:
    from bench.crash import mem_command

    closes = how == "broken pipe"  # the reader of the outcomes goes away (they are printed at the end)
    lines = "".join(json.dumps({"text": f"memory {i}: the {i % 97} service moved to port {i}"}) + "\n"
                    for i in range(700 if closes else 20000))
    source = tmp_path / "in.jsonl"
    source.write_text(lines)
    env = {**os.environ, "MEM_NOW": NOW, "PYTHONPATH": str(ROOT), "MEM_EMBEDDER": "hash"}
    command = mem_command("add", "-", "--bulk", "--db", str(tmp_path / "m.db"), chunk=256)
    command[2] = command[2].replace("intake_worker.MIN_RECORDS", f"intake_worker.START = {start!r}; "
                                    "intake_worker.MIN_RECORDS")
    with source.open("rb") as stdin:
        # Ctrl-C's default action, as in a terminal's foreground job: a test runner started in the
        # background of a non-interactive shell ignores SIGINT, and its children inherit that (mem then
        # rightly ignores it, and imports all 20,000 records)
        proc = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (workers := _children_of(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.01)
        assert proc.stdout is not None
        if closes:
            proc.stdout.close()
        else:
            time.sleep(0.3)
            proc.send_signal(getattr(signal, how))
        # read what it prints while it stops: on a fast machine the records committed in 0.3 s print more
        # than a pipe holds, and a reader that only waits would keep it blocked on its last write
        if closes:
            code = proc.wait(timeout=60)
        else:
            _, err = proc.communicate(timeout=60)
            code = proc.returncode
        assert _alive(workers) == []
        if how == "SIGINT":
            assert code == 130 and b"Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _text_index(path: Path) -> dict[str, Any]:
    """The full-text index as searches see it: each memory's token counts, and the hits and bm25 scores
    of a few words, memories named by their text."""
    conn = sqlean.connect(str(path))
    try:
        conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")  # raises if it is corrupt
        text_of = dict(conn.execute("SELECT rowid, text FROM memories"))
        sizes = sorted((text_of[rowid], sz) for rowid, sz in conn.execute("SELECT id, sz FROM memory_fts_docsize"))
        hits = {word: sorted((text_of[rowid], round(score, 9)) for rowid, score in conn.execute(
            "SELECT rowid, bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ?", (word,)))
            for word in ("service", "deploy", "outage", "postgres", "auth")}
        return {"sizes": sizes, "hits": hits}
    finally:
        conn.close()


def test_a_bulk_chunk_indexes_its_text_as_the_per_row_trigger_does(mem, tmp_path: Path, small_chunks: None) -> None:
    """A bulk chunk writes its full-text rows in one statement at its end (``Store.bulk_writes``): the same
    index, scores and trigger afterwards as eager intake's row-by-row trigger."""
    lines = "".join(json.dumps(r) + "\n" for r in intake_records(300))
    eager, bulk = tmp_path / "eager.db", tmp_path / "bulk.db"
    assert mem("add", "-", "--db", str(eager), "--now", NOW, input=lines).code == 0
    assert mem("add", "-", "--bulk", "--db", str(bulk), "--now", NOW, input=lines).code == 0
    expected, got = _text_index(eager), _text_index(bulk)
    assert all(expected["hits"].values()) and got == expected
    # the trigger is back: a later single add is in the full-text index at once
    assert mem("add", "The zeppelin hangar moved to the north field", "--db", str(bulk)).code == 0
    conn = sqlean.connect(str(bulk))
    try:
        assert conn.execute("SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH 'zeppelin'").fetchone()[0] == 1
    finally:
        conn.close()


def test_checkpoints_aside_moves_the_wal_into_the_database_from_its_thread(tmp_path: Path) -> None:
    """``Store.checkpoints_aside`` (around a bulk intake's chunks): commits do not checkpoint, its thread
    does, soon after each; SQLite's own setting is back afterwards."""
    from mem.store import Store

    path = tmp_path / "aside.db"
    with Store.open(path) as store:
        before = path.stat().st_size
        with store.checkpoints_aside():
            assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
            with store.write():
                store.set_meta("bulky", "x" * 2_000_000)  # ~490 pages: over no threshold, in the WAL only
            deadline = time.monotonic() + 5
            while path.stat().st_size < before + 2_000_000 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert path.stat().st_size >= before + 2_000_000  # the thread copied the commit into the file
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000


def test_bulk_cache_widens_the_page_cache_while_the_chunks_are_written(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``Store.bulk_cache``: the bulk cache in the block, SQLite's default again after it, an error included;
    both bulk paths (the worker's and in process) write their chunks inside it."""
    from mem.store import BULK_CACHE_KIB, Store

    with Store.open(tmp_path / "c.db") as store:
        default = store.conn.execute("PRAGMA cache_size").fetchone()[0]
        with pytest.raises(RuntimeError), store.bulk_cache():
            assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == -BULK_CACHE_KIB
            raise RuntimeError
        assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == default
    seen: list[int] = []
    real_write = add._write

    def watched(ctx: Any, drafts: Any, options: Any) -> Any:
        seen.append(ctx.store.conn.execute("PRAGMA cache_size").fetchone()[0])
        return real_write(ctx, drafts, options)

    monkeypatch.setattr(add, "_write", watched)
    monkeypatch.setattr(add, "BULK_CHUNK", 64)
    from mem.config import resolve_settings
    from mem.stages.context import Context

    for floor in (128, 10**9):  # the worker, then in process
        monkeypatch.setattr(intake_worker, "MIN_RECORDS", floor)
        settings = resolve_settings(db=tmp_path / f"{floor}.db", embedder="hash", now=NOW)
        with Store.open(settings.db_path) as store:
            seen.clear()
            list(add.run(Context(store=store, settings=settings),
                         [(i + 1, {"text": f"note {i} on the cache"}) for i in range(300)], add.AddOptions(bulk=True)))
            assert len(seen) > 2 and set(seen) == {-BULK_CACHE_KIB}
            assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == default


def test_bulk_intake_stores_the_same_database_however_it_is_chunked(mem, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk batch's chunks ramp up and down (``add.chunk_bounds``) and a chunk's drafts are checked
    against the chunk's earlier ones: every row, vector, token state, changelog entry, outcome and the
    finished graph are those of the same batch written as one chunk."""
    monkeypatch.setattr(intake_worker, "MIN_RECORDS", 10**9)  # in process: the chunking alone differs
    lines = "".join(json.dumps(r) + "\n" for r in intake_records(300))
    ramped, whole = tmp_path / "ramped.db", tmp_path / "whole.db"
    monkeypatch.setattr(add, "FIRST_CHUNK", 16)
    monkeypatch.setattr(add, "BULK_CHUNK", 64)
    assert [b - a for a, b in add.chunk_bounds(50, 64)] == [16, 18, 16]
    chunked = mem("add", "-", "--bulk", "--db", str(ramped), "--now", NOW, input=lines)
    monkeypatch.setattr(add, "FIRST_CHUNK", 10**6)
    monkeypatch.setattr(add, "BULK_CHUNK", 10**6)
    one = mem("add", "-", "--bulk", "--db", str(whole), "--now", NOW, input=lines)
    _same_database(ramped, chunked, whole, one)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 20_000), st.sampled_from([1, 7, 64, 256, 2048]), st.sampled_from([1, 16, 256]))
def test_chunk_bounds_cover_the_batch_ramping_at_both_ends(count: int, size: int, first: int) -> None:
    real = add.FIRST_CHUNK
    add.FIRST_CHUNK = first
    try:
        bounds = add.chunk_bounds(count, size)
    finally:
        add.FIRST_CHUNK = real
    starts, ends = [a for a, _ in bounds], [b for _, b in bounds]
    assert starts == [0, *ends][: len(starts)] and (ends or [0])[-1] == count  # contiguous, the whole batch
    sizes = [b - a for a, b in bounds]
    assert all(0 < s <= size for s in sizes)
    if count >= 2 * min(first, size):
        assert sizes[0] == sizes[-1] == min(first, size)  # neither end waits long for the other side
    # a chunk k places from the nearer end is at most 2^k times the first: both ends ramp
    n = len(sizes)
    assert all(s <= min(first, size) * 2 ** min(i, n - 1 - i) for i, s in enumerate(sizes))


def test_the_child_sends_ahead_in_order_without_waiting_for_the_reader() -> None:
    """``_Sender``: AHEAD messages far larger than the pipe are queued while nobody reads (the child goes
    on preparing), and the reader gets every message, in order; a reader gone is the writer's error."""
    import pickle

    read, write = os.pipe()
    out = os.fdopen(write, "wb")
    sender = intake_worker._Sender(out)
    big = [("chunk", (i, bytes([i]) * 1_000_000)) for i in range(intake_worker.AHEAD + 4)]
    for message in big[: intake_worker.AHEAD]:
        sender.send(*message)  # returns with no reader: queued (the thread holds one more in the pipe)
    with os.fdopen(read, "rb") as reader:
        got = []

        def later() -> None:
            for message in big[intake_worker.AHEAD :]:
                sender.send(*message)
            sender.close()

        import threading

        more = threading.Thread(target=later)
        more.start()
        got = [pickle.load(reader) for _ in big]
        more.join()
        out.close()
        assert got == big and reader.read() == b""  # nothing else was written

    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "wb") as out:
        sender = intake_worker._Sender(out)
        sender.send("chunk", b"x" * 2_000_000)
        with pytest.raises(BrokenPipeError):
            sender.close()
        with pytest.raises(BrokenPipeError):
            sender.send("chunk", b"y")


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_a_worker_dying_mid_batch_fails_the_intake_leaving_whole_chunks(start: str, tmp_path: Path,
                                                                        small_chunks: None,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The child killed while it runs chunks ahead of the writes: the intake fails with the worker's exit
    status, every chunk written before is whole (rows, vectors, full-text), in input order, and searchable."""
    from mem.config import resolve_settings
    from mem.errors import MemError
    from mem.stages.context import Context
    from mem.store import Store

    monkeypatch.setattr(intake_worker, "START", start)
    workers: list[intake_worker.Worker] = []
    real_enter = intake_worker.Worker.__enter__

    def kept(self: intake_worker.Worker) -> intake_worker.Worker:
        workers.append(self)
        return real_enter(self)

    monkeypatch.setattr(intake_worker.Worker, "__enter__", kept)
    texts = [f"memory {i}: the {i % 37} service moved to port {8000 + i}" for i in range(900)]
    settings = resolve_settings(db=tmp_path / "m.db", embedder="hash", now=NOW)
    outcomes = []
    with Store.open(settings.db_path) as store:
        ctx = Context(store=store, settings=settings)
        with pytest.raises(MemError, match="intake worker process stopped"):
            for outcome in add.run(ctx, [(i + 1, {"text": t}) for i, t in enumerate(texts)],
                                   add.AddOptions(bulk=True)):
                outcomes.append(outcome)
                if len(outcomes) == 200:
                    os.kill(workers[0].pid, signal.SIGKILL)
    assert 200 <= len(outcomes) < len(texts)
    conn = sqlean.connect(str(tmp_path / "m.db"))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = [row[0] for row in conn.execute("SELECT text FROM memories ORDER BY rowid")]
        assert stored == texts[: len(outcomes)]  # whole chunks, in order
        assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == len(stored)
        assert conn.execute("SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH 'port'").fetchone()[0] == len(stored)
    finally:
        conn.close()

"""A second process for intake's text-only work, so it runs beside the writer on another core.

A large bulk intake (``mem import``, ``mem add - --bulk``) spends about half its CPU on work that
needs only the text: validation and the gate, enrichment and the embedding. In
one process that work and the SQL share the interpreter lock (the hash embedder and enrichment are
Python), so a second thread gives no parallelism. Here a child process does it and streams
prepared chunks back while the parent writes earlier ones (up to ``AHEAD`` chunks ahead: ``_Sender``);
the parent never loads the model.
The child is a fork when that is sound (one thread, no onnxruntime loaded: ready in milliseconds,
nothing to import or send; it never touches the copied store connection and leaves with
``os._exit``), else a fresh interpreter (``python -m mem.stages.intake_worker``, ~0.3 s to start)
that reads the job from a file.

The whole batch is still validated before anything is written: the parent validates from the
front and the child from the back until they meet (shared counters), and the first bad line
(the lowest) is raised with the message and exit code in-process intake gives. The parent's
Drafts reach the child through a file (pickled in blocks as it validates: cheaper than
validating twice); the child prepares every chunk in order and the parent writes them with
``add._write``: the same rows, vectors and outcomes as in-process intake
(tests/test_intake_worker.py compares the databases).

The child dies with its parent (``PR_SET_PDEATHSIG``), ignores Ctrl-C (the parent handles it and
stops the child), and stops when its pipe closes; an error in it (an embedder that fails) is
raised again in the parent.
"""

from __future__ import annotations

import mmap
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mem.errors import MemError

if TYPE_CHECKING:
    from mem.stages.add import AddOptions, Draft
    from mem.stages.context import Context

# Records that pay the child's start (hidden behind the parent's share of the validation; a fresh
# interpreter takes ~0.3 s): fewer than this stay in process.
MIN_RECORDS = 2048
START = "auto"  # "fork", "spawn", or "auto": a fork when _forks_safely() (tests force each)
# Shared by both processes, each side writing only its own: the parent's next record to validate
# (offset 0), the lowest record the child validated (offset 8), and 1 + how many records the
# parent validated once it has stopped and written their Drafts out (offset 16; 0 until then).
_COUNTERS = struct.Struct("qqq")
_NEXT = struct.Struct("q")
_BLOCK = 256  # the parent's Drafts go to the child in pickled blocks of this many
# Prepared chunks the child may hold pickled, waiting for the parent to read them (``_Sender``): each is
# ~5 MB at 2,048 hash drafts (their vectors), so the child runs up to this many chunks ahead.
AHEAD = 3
_PIPE_SIZE = 1 << 20  # the pipe's buffer (Linux's default limit for an unprivileged process; 64 KB otherwise)


@dataclass
class _Job:
    settings: Any
    embedder: str
    options: "AddOptions"
    keep_ids: bool
    records: list[tuple[int | None, dict[str, Any]]]
    bounds: list[tuple[int, int]]  # the chunks, in order


def pays(ctx: "Context", count: int, options: "AddOptions") -> bool:
    """Whether a batch of ``count`` records goes through the worker: a bulk intake (eager intake's
    linking in the parent came out slower beside it: 378-383 against 471-487 memories/s for 5k hash
    texts, the parent's CPU up, not down), large enough, and a model named in the settings or the
    database (not one handed over in process)."""
    return options.bulk and count >= MIN_RECORDS and ctx.embedder_name is not None  # bulk refuses --extract


class Worker:
    """The child for one batch: ``with Worker(...) as worker: for drafts in worker.prepared(): ...``."""

    def __init__(self, ctx: "Context", records: Sequence[tuple[int | None, dict[str, Any]]],
                 options: "AddOptions", *, keep_ids: bool, size: int) -> None:
        from mem.stages.add import chunk_bounds
        from mem.stages.context import Context

        self.ctx, self.records, self.options, self.keep_ids = ctx, list(records), options, keep_ids
        # One clock for the whole batch (as a pinned --now gives): the child's drafts carry it.
        settings = replace(ctx.settings, now_override=ctx.now())
        self.bounds = chunk_bounds(len(self.records), size)  # the chunks in process intake writes too
        self.job = _Job(settings, str(ctx.embedder_name), options, keep_ids, self.records, self.bounds)
        # The parent validates under the batch's clock too, so its Drafts are the child's.
        self.checking = Context(store=ctx.store, settings=settings)
        self.drafts = tempfile.TemporaryFile(prefix="mem-drafts-")  # the parent's Drafts, for the child
        self.file: Any = None  # spawn: the counters and the job, in a file the child maps
        self.shared: mmap.mmap | None = None
        self.pid = 0
        self.popen: subprocess.Popen[bytes] | None = None
        self.reader: Any = None  # the child's messages
        self.aside: Any = None  # Store.checkpoints_aside and bulk_cache, while the chunks are written

    def __enter__(self) -> "Worker":
        if START == "fork" or (START == "auto" and _forks_safely()):
            self._fork()
        else:
            self._spawn()
        return self

    def _fork(self) -> None:
        self.shared = mmap.mmap(-1, _COUNTERS.size)  # anonymous and shared: the child writes the same pages
        _COUNTERS.pack_into(self.shared, 0, 0, len(self.records), 0)
        parent = os.getpid()
        read, write = os.pipe()
        _widen(write)
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read)
            _child_main(self.job, self.shared, self.drafts.fileno(), os.fdopen(write, "wb"), parent)
        os.close(write)
        self.pid, self.reader = pid, os.fdopen(read, "rb")

    def _spawn(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="mem-intake-")
        self.file.write(_COUNTERS.pack(0, len(self.records), 0))
        pickle.dump(self.job, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.file.flush()
        self.shared = mmap.mmap(self.file.fileno(), 0)
        fd, drafts = self.file.fileno(), self.drafts.fileno()
        self.popen = subprocess.Popen([sys.executable, "-m", "mem.stages.intake_worker", str(fd), str(drafts),
                                       str(os.getpid())],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, pass_fds=(fd, drafts))
        self.pid, self.reader = self.popen.pid, self.popen.stdout
        _widen(self.reader.fileno())

    def __exit__(self, *exc: Any) -> None:
        self._end_aside()
        if self.pid:
            # Finished (it is leaving) or not (an error, Ctrl-C, a reader gone): nothing more is needed of it.
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._wait()
        if self.reader is not None:
            self.reader.close()
        if self.shared is not None:
            self.shared.close()
        if self.file is not None:
            self.file.close()
        self.drafts.close()

    def _wait(self) -> int:
        """Reap the child; its exit status."""
        pid, self.pid = self.pid, 0
        if self.popen is not None:
            return self.popen.wait()
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

    def prepared(self) -> Iterator[list["Draft"]]:
        """Validate the whole batch (raising the first bad line's error), then each chunk's drafts,
        prepared as ``add._prepare`` leaves them, in order."""
        from mem.stages.add import validate

        records, ctx, options, shared = self.records, self.checking, self.options, self.shared
        assert shared is not None
        index, block = 0, []
        while index < _COUNTERS.unpack_from(shared)[1]:
            line, raw = records[index]
            block.append(validate(raw, line, ctx, options, keep_ids=self.keep_ids))
            index += 1
            _NEXT.pack_into(shared, 0, index)
            if len(block) == _BLOCK:
                pickle.dump(block, self.drafts, protocol=pickle.HIGHEST_PROTOCOL)
                block = []
        pickle.dump(block, self.drafts, protocol=pickle.HIGHEST_PROTOCOL)
        self.drafts.flush()
        _NEXT.pack_into(shared, 16, index + 1)
        self._receive("validated")
        # While the chunks are written (not the finishing pass after them: its reads would search an
        # ever longer WAL); after the fork, which needs this process to have one thread.
        from contextlib import ExitStack

        self.aside = ExitStack()
        self.aside.enter_context(self.ctx.store.checkpoints_aside())
        self.aside.enter_context(self.ctx.store.bulk_cache())  # the chunks' pages stay in memory
        try:
            for _ in self.bounds:
                drafts, embedded, vectors = self._receive("chunk")
                for row, position in enumerate(embedded):  # the vectors came as one matrix
                    drafts[position].vector = vectors[row]
                yield drafts
        finally:
            self._end_aside()

    def _end_aside(self) -> None:
        aside, self.aside = self.aside, None
        if aside is not None:
            aside.__exit__(None, None, None)

    def _receive(self, kind: str) -> Any:
        try:
            message = pickle.load(self.reader)
        except (EOFError, pickle.UnpicklingError):  # the pipe ended, between messages or inside one (killed)
            raise MemError(f"the intake worker process stopped (exit status {self._wait()})") from None
        if message[0] == "error":
            raise message[1]
        assert message[0] == kind, message[0]
        return message[1]


def _widen(fd: int) -> None:
    """Give the pipe on ``fd`` a ``_PIPE_SIZE`` buffer if the system allows: a chunk crosses it in
    fewer reads and wake-ups than through the default 64 KB."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_SIZE)
    except OSError:
        pass


def _forks_safely() -> bool:
    """Whether a fork of this process makes a sound child: one thread (no lock held by another thread
    is copied) and no onnxruntime loaded (its thread pool does not survive a fork)."""
    return hasattr(os, "fork") and threading.active_count() == 1 and "onnxruntime" not in sys.modules


def _child_main(job: _Job, shared: mmap.mmap, drafts: int, out: Any, parent: int) -> None:
    """The child's whole life: serve the job, then leave at once (no atexit handlers or finalizers,
    which in a fork are the parent's)."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops this process
        _die_with_parent(parent)
        _serve(job, shared, drafts, out)
    except BrokenPipeError:
        pass
    except BaseException:  # a bug: its traceback on stderr; the parent reports the exit status
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)


def _serve(job: _Job, shared: mmap.mmap, drafts_fd: int, out: Any) -> None:
    """Validate from the back until the parent's front meets it, then prepare every chunk in order."""
    import numpy as np

    from mem.config import is_db_url
    from mem.embed import get_embedder
    from mem.stages import add
    from mem.stages.context import Context

    ctx = Context(store=None, settings=job.settings)  # type: ignore[arg-type]  # text work only: no store
    records, options = job.records, job.options
    sender = _Sender(out)
    send = sender.send
    try:
        embedder = get_embedder(job.embedder, ollama_host=job.settings.ollama_host)
        if is_db_url(job.settings.db_path) and hasattr(embedder, "spin"):
            embedder.spin = False  # as Context.embedder does beside a database server
        ctx.use_embedder(embedder)
        # A model loads in a second thread while this one validates (onnxruntime builds its session
        # without the interpreter lock for much of the time).
        loading = threading.Thread(target=_preload, args=(embedder,), daemon=True)
        loading.start()
        # From the back until the parent's front meets it; the lowest error is the one to raise.
        mine: dict[int, add.Draft] = {}
        error: MemError | None = None
        index = len(records) - 1
        while index >= 0 and index >= _COUNTERS.unpack_from(shared)[0]:
            line, raw = records[index]
            try:
                mine[index] = add.validate(raw, line, ctx, options, keep_ids=job.keep_ids)
            except MemError as exc:
                error = exc
            _NEXT.pack_into(shared, 8, index)
            index -= 1
        if error is not None:
            send("error", error)
            return
        send("validated", None)
        theirs = _parents_drafts(shared, drafts_fd)
        loading.join()
        for start, end in job.bounds:
            drafts = [next(theirs) if i < theirs.count else mine.pop(i) for i in range(start, end)]
            add._prepare(ctx, drafts, options)
            # One matrix pickles far faster than a row array per draft.
            embedded = [i for i, d in enumerate(drafts) if d.vector is not None]
            vectors = np.stack([drafts[i].vector for i in embedded]) if embedded else None
            for i in embedded:
                drafts[i].vector = None
            send("chunk", (drafts, embedded, vectors))
    except MemError as exc:
        send("error", exc)
    finally:
        sender.close()  # everything queued is written (or the pipe is gone) before the child leaves


class _Sender:
    """The child's messages, pickled in order by the caller and written to the pipe by a thread.

    A chunk's pickle (~5 MB at 2,048 hash drafts) is far larger than the pipe, so a child writing
    it itself stopped until the parent had written the chunk before and read this one: the two
    processes met at every chunk, and whichever was the slower for that chunk kept the other
    waiting. Written from a thread (the write holds no interpreter lock while it waits), the child
    goes on preparing the next chunks, up to ``AHEAD`` of them queued.
    """

    def __init__(self, out: Any) -> None:
        self.out, self.failed = out, None  # failed: the write's error (the parent gone: a broken pipe)
        self.queue: queue.Queue[bytes | None] = queue.Queue(AHEAD)
        self.thread = threading.Thread(target=self._write, name="mem-intake-sender", daemon=True)
        self.thread.start()

    def send(self, *message: Any) -> None:
        if self.failed is not None:
            raise self.failed
        self.queue.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _write(self) -> None:
        while (data := self.queue.get()) is not None:
            if self.failed is None:  # after a failure the queue is only drained, so send never blocks for ever
                try:
                    self.out.write(data)
                    self.out.flush()
                except BaseException as exc:  # noqa: BLE001  (raised again by send or close, in the child's thread)
                    self.failed = exc

    def close(self) -> None:
        """Wait until every message sent is written; raise the write's error if one failed."""
        self.queue.put(None)
        self.thread.join()
        if self.failed is not None:
            raise self.failed


class _ParentsDrafts:
    """The Drafts the parent validated, ``count`` of them, in order, read block by block as needed."""

    def __init__(self, data: bytes, count: int) -> None:
        import io

        self.file, self.count = io.BytesIO(data), count
        self.block: list[Any] = []

    def __next__(self) -> Any:
        if not self.block:
            self.block = pickle.load(self.file)[::-1]
        return self.block.pop()


def _parents_drafts(shared: mmap.mmap, fd: int) -> _ParentsDrafts:
    """Wait for the parent to have stopped validating (it is about to, as this side met it), then its Drafts."""
    import time

    while not (done := _COUNTERS.unpack_from(shared)[2]):
        time.sleep(0.0005)
    return _ParentsDrafts(os.pread(fd, os.fstat(fd).st_size, 0), done - 1)


def _preload(embedder: Any) -> None:
    """Load ``embedder``'s model if it has one to load; a failure here recurs, and is reported, at its first use."""
    load = getattr(embedder, "load", None)
    if load is not None:
        try:
            load()
        except Exception:  # noqa: BLE001  (the first embedding raises it again, with its message)
            pass


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (a killed import leaves no child)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(0)


if __name__ == "__main__":  # spawned: python -m mem.stages.intake_worker JOB_FD DRAFTS_FD PARENT_PID
    _shared = mmap.mmap(int(sys.argv[1]), 0)
    _child_main(pickle.loads(memoryview(_shared)[_COUNTERS.size :]), _shared, int(sys.argv[2]), sys.stdout.buffer,
                int(sys.argv[3]))

"""A second process for intake's text-only work, so it runs beside the writer on another core.

A large ``mem add -`` or ``mem import`` spends about half its CPU on work that needs only the text:
validation and the gate, enrichment, the embedding and (eager intake) entities and assertions. In
one process that work and the SQL share the interpreter lock (the hash embedder and enrichment are
Python), so a second thread gives no parallelism. Here a child process (a fresh interpreter: no
inherited sqlite connection or onnxruntime thread pool, and the parent never loads the model)
does it and streams prepared chunks back while the parent writes the previous one.

The whole batch is still validated before anything is written: the parent validates from the
front and the child from the back until they meet (two shared counters), and the first bad line
(the lowest) is raised with the message and exit code in-process intake gives. The child then
prepares every chunk in order (validating again the records the parent checked: Drafts are
cheaper to rebuild than to send), and the parent writes them with ``add._write``: the same rows,
vectors and outcomes as in-process intake (tests/test_intake_worker.py compares the databases).

The child dies with its parent (``PR_SET_PDEATHSIG``), ignores Ctrl-C (the parent handles it and
stops the child), and stops when its pipe closes; an error in it (an embedder that fails) is
raised again in the parent.
"""

from __future__ import annotations

import mmap
import os
import pickle
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

# Records that pay the child's start (an interpreter and its imports, ~0.2 s, hidden behind the
# parent's share of the validation): fewer than this stay in process.
MIN_RECORDS = 2048
FIRST_CHUNK = 256  # the first chunk is small, so the writer waits for its preparation only briefly
# Shared by both processes: the parent's next record to validate (offset 0), the lowest record
# the child validated (offset 8); each side writes only its own.
_COUNTERS = struct.Struct("qq")
_NEXT = struct.Struct("q")


@dataclass
class _Job:
    settings: Any
    embedder: str
    options: "AddOptions"
    keep_ids: bool
    records: list[tuple[int | None, dict[str, Any]]]
    bounds: list[tuple[int, int]]  # the chunks, in order


def pays(ctx: "Context", count: int, options: "AddOptions") -> bool:
    """Whether a batch of ``count`` records goes through the worker: large enough, a model named in
    the settings or the database (not one handed over in process) and no extractor model call."""
    return count >= MIN_RECORDS and options.extract is None and ctx.embedder_name is not None


def chunk_bounds(count: int, size: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each chunk: a small first one, then ``size`` at a time."""
    bounds, start = [], 0
    while start < count:
        end = min(count, start + (min(FIRST_CHUNK, size) if start == 0 else size))
        bounds.append((start, end))
        start = end
    return bounds


class Worker:
    """The child for one batch: ``with Worker(...) as worker: for drafts in worker.prepared(): ...``."""

    def __init__(self, ctx: "Context", records: Sequence[tuple[int | None, dict[str, Any]]],
                 options: "AddOptions", *, keep_ids: bool, size: int) -> None:
        self.ctx, self.records, self.options, self.keep_ids = ctx, list(records), options, keep_ids
        # One clock for the whole batch (as a pinned --now gives): the child's drafts carry it.
        settings = replace(ctx.settings, now_override=ctx.now())
        self.bounds = chunk_bounds(len(self.records), size)
        job = _Job(settings, str(ctx.embedder_name), options, keep_ids, self.records, self.bounds)
        self.file = tempfile.TemporaryFile(prefix="mem-intake-")
        self.file.write(_COUNTERS.pack(0, len(self.records)))
        pickle.dump(job, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.file.flush()
        self.shared = mmap.mmap(self.file.fileno(), 0)
        self.child: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "Worker":
        fd = self.file.fileno()
        self.child = subprocess.Popen([sys.executable, "-m", "mem.stages.intake_worker", str(fd), str(os.getpid())],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, pass_fds=(fd,))
        return self

    def __exit__(self, *exc: Any) -> None:
        child = self.child
        if child is not None:
            if child.poll() is None:
                child.kill()  # unfinished (an error, Ctrl-C, a reader gone): nothing of it is needed
            child.wait()
            assert child.stdout is not None
            child.stdout.close()
        self.shared.close()
        self.file.close()

    def prepared(self) -> Iterator[list["Draft"]]:
        """Validate the whole batch (raising the first bad line's error), then each chunk's drafts,
        prepared as ``add._prepare`` leaves them, in order."""
        from mem.stages.add import validate

        records, ctx, options, shared = self.records, self.ctx, self.options, self.shared
        index = 0
        while index < _COUNTERS.unpack_from(shared)[1]:
            line, raw = records[index]
            validate(raw, line, ctx, options, keep_ids=self.keep_ids)  # the child rebuilds the Draft
            index += 1
            _NEXT.pack_into(shared, 0, index)
        self._receive("validated")
        for _ in self.bounds:
            drafts, embedded, vectors = self._receive("chunk")
            for row, position in enumerate(embedded):  # the vectors came as one matrix
                drafts[position].vector = vectors[row]
            yield drafts

    def _receive(self, kind: str) -> Any:
        assert self.child is not None and self.child.stdout is not None
        try:
            message = pickle.load(self.child.stdout)
        except EOFError:
            code = self.child.wait()
            raise MemError(f"the intake worker process stopped (exit status {code})") from None
        if message[0] == "error":
            raise message[1]
        assert message[0] == kind, message[0]
        return message[1]


def _child(fd: int) -> None:
    import numpy as np

    from mem.config import is_db_url
    from mem.embed import get_embedder
    from mem.stages import add
    from mem.stages.context import Context

    shared = mmap.mmap(fd, 0)
    job: _Job = pickle.loads(memoryview(shared)[_COUNTERS.size :])
    out = sys.stdout.buffer
    ctx = Context(store=None, settings=job.settings)  # type: ignore[arg-type]  # text work only: no store
    records, options = job.records, job.options

    def send(*message: Any) -> None:
        pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    try:
        embedder = get_embedder(job.embedder, ollama_host=job.settings.ollama_host)
        if is_db_url(job.settings.db_path) and hasattr(embedder, "spin"):
            embedder.spin = False  # as Context.embedder does beside a database server
        ctx.use_embedder(embedder)
        # A model loads in a second thread while this one validates (onnxruntime builds its session
        # without the interpreter lock for much of the time).
        loading = threading.Thread(target=_preload, args=(embedder,), daemon=True)
        loading.start()
        # Validate from the back until the parent's front meets it; keep the lowest error.
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
        loading.join()
        for start, end in job.bounds:
            drafts = [mine.pop(i, None) or add.validate(records[i][1], records[i][0], ctx, options,
                                                         keep_ids=job.keep_ids) for i in range(start, end)]
            add._prepare(ctx, drafts, options)
            # One matrix pickles far faster than a row array per draft.
            embedded = [i for i, d in enumerate(drafts) if d.vector is not None]
            vectors = np.stack([drafts[i].vector for i in embedded]) if embedded else None
            for i in embedded:
                drafts[i].vector = None
            send("chunk", (drafts, embedded, vectors))
    except MemError as exc:
        send("error", exc)
    except BrokenPipeError:
        pass


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
    import os
    import signal

    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(0)


if __name__ == "__main__":
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops this process
    _die_with_parent(int(sys.argv[2]))
    try:
        _child(int(sys.argv[1]))
    except BrokenPipeError:
        pass
    os._exit(0)  # nothing left to flush (each message is flushed), and a closed pipe must not raise at exit

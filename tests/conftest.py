"""Every test gets its own HOME, XDG folders and database file; the hash embedder unless it asks otherwise.

``run_mem`` (and the ``mem`` fixture) runs the CLI in this process: a fresh interpreter per call
cost ~0.3 s of imports, which was most of the suite's time. It goes through the same entry point
as the console script (``mem.cli.main``) with stdin/stdout/stderr as byte buffers that are not
terminals, the environment overrides applied and the working directory changed for the call, and
everything it touched that outlives a command in a real process (environment, cwd, signal
handlers, logging handlers, umask, sys.argv, excepthook) put back afterwards. ``run_mem_subprocess``
is the same call through ``python -m mem`` in a child process, for the tests where a real process
is the point: pipes to other programs, signals, concurrency, crashes.
"""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
import sqlean

# One SQLite library in this process. The CLI runs in process on sqlean's SQLite; tests that open
# the same files with the stdlib's sqlite3 would be a second copy of SQLite in one process, and two
# copies cannot see each other's POSIX locks: the stdlib one, closing what it thinks is the last
# connection, checkpoints and removes the WAL under sqlean's ("database disk image is malformed",
# seen under load). So `import sqlite3` in a test gets sqlean, the drop-in mem itself uses.
sys.modules["sqlite3"] = sqlean

pytest_plugins = ["tests.pg_server"]  # the PostgreSQL server fixtures (pg_server, pg_url, backend)

from mem.runtime import clear_reader_caches, limit_blas_threads  # noqa: F401 (tests import it from here)

limit_blas_threads()  # what mem.cli.main does first, here before anything in this process imports numpy


RAM_DISK = Path("/dev/shm")


@pytest.hookimpl(tryfirst=True)  # before pytest's tmp_path plugin reads the option
def pytest_configure(config: pytest.Config) -> None:
    """Temporary folders on a RAM disk when there is one and --basetemp was not given.

    Every command commits and closes its database, and on this machine's disk each of those
    fsyncs cost 30-40 ms, more than the command itself. A folder of this run's own (never a shared
    name: pytest empties --basetemp, and several runs may share the machine), removed at the end.
    Under pytest-xdist the workers get their folders inside it from the controller.
    """
    if config.option.basetemp or not (RAM_DISK.is_dir() and os.access(RAM_DISK, os.W_OK)):
        return
    import tempfile

    config.option.basetemp = config._mem_ram_basetemp = tempfile.mkdtemp(prefix="mem-tests-", dir=RAM_DISK)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, "_mem_ram_basetemp", None)
    if folder:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


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
        "MEM_WARM": "0",  # no warm helper (mem.cli.warm) unless a test starts one
    }
    for key in ("MEM_NOW", "MEM_DEBUG", "OLLAMA_HOST", "MEM_LLM"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


class MemResult:
    def __init__(self, code: int, stdout: bytes, stderr: bytes) -> None:
        self.code = code
        self.stdout = stdout.decode("utf-8", "replace")
        self.stderr = stderr.decode("utf-8", "replace")

    @classmethod
    def of(cls, proc: subprocess.CompletedProcess[bytes]) -> "MemResult":
        return cls(proc.returncode, proc.stdout, proc.stderr)

    @property
    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    @property
    def error(self) -> dict[str, Any]:
        return json.loads(self.stderr.strip().splitlines()[-1])["error"]


def _as_bytes(input: bytes | str | None) -> bytes | None:
    return input.encode("utf-8") if isinstance(input, str) else input


def run_mem_subprocess(*args: str, input: bytes | str | None = None, env: dict[str, str] | None = None,
                       cwd: str | Path | None = None, timeout: float = 120) -> MemResult:
    """The real entry point in a child process (``python -m mem``), stdin/stdout as pipes."""
    proc = subprocess.run([sys.executable, "-m", "mem", *args], input=_as_bytes(input), capture_output=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout)
    return MemResult.of(proc)


class _Timeout(BaseException):
    """Raised by SIGALRM inside the command; a BaseException so ``except Exception`` in mem lets it by."""


_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGALRM", "SIGCHLD")
                 if hasattr(signal, name))


@contextmanager
def _process_state(env: dict[str, str] | None, cwd: str | Path | None) -> Iterator[None]:
    """Apply env and cwd for one command; afterwards restore what a command may change for good."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv = sys.argv
    saved_hook = sys.excepthook
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    main_thread = threading.current_thread() is threading.main_thread()
    saved_signals = {s: signal.getsignal(s) for s in _SIGNALS} if main_thread else {}
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    # A fresh process has no root handlers (warnings reach stderr through logging.lastResort);
    # pytest's log capture would otherwise swallow what the command logs.
    root.handlers = []
    root.setLevel(logging.WARNING)
    _fresh_process_caches()
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        root.handlers, root.level = saved_handlers, saved_level
        for sig, handler in saved_signals.items():
            if handler is not None:
                signal.signal(sig, handler)
        os.umask(saved_umask)
        sys.excepthook = saved_hook
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        for key in set(os.environ) - set(saved_env):
            del os.environ[key]
        for key, value in saved_env.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def _fresh_process_caches() -> None:
    """Module state a new process starts without, where carrying it over changes results.

    mem.ids keeps the newest millisecond it handed out so one process's ids keep increasing; a
    back-dated memory (``created_at`` in 2024) added after it would get today's timestamp in its
    id, unlike in a new process, and tests that type an id prefix of a back-dated memory rely on it.
    """
    from mem import ids

    last = getattr(ids, "_last", None)
    if isinstance(last, list):
        last[:] = [0] * len(last)


@contextmanager
def _alarm(timeout: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not timeout:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


class _Buffer(io.BytesIO):
    """A byte buffer whose contents survive the command closing its stream."""

    def close(self) -> None:
        pass


class _Stream(io.TextIOWrapper):
    """sys.stdin/stdout/stderr for one command: text over a byte buffer, not a terminal, no fileno."""

    def __init__(self, buffer: _Buffer, name: str, errors: str) -> None:
        super().__init__(buffer, encoding="utf-8", errors=errors, write_through=True)
        self._label = name

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._label


_lock = threading.Lock()  # one command at a time: sys.std* and os.environ are process-wide


def _build_the_app_once() -> None:
    """Typer turns the app into a Click command on every call, ~30 ms of signature inspection
    that a real process pays once at start-up: keep the one built for ``mem.cli.app``."""
    import typer.main

    from mem.cli import app

    build = typer.main.get_command
    if getattr(build, "keeps", None) is app:
        return
    built: list[Any] = []

    def get_command(typer_instance: Any) -> Any:
        if typer_instance is not app:
            return build(typer_instance)
        if not built:
            built.append(build(app))
        return built[0]

    get_command.keeps = app  # type: ignore[attr-defined]
    typer.main.get_command = get_command


def run_mem(*args: str, input: bytes | str | None = None, env: dict[str, str] | None = None,
            cwd: str | Path | None = None, timeout: float = 120) -> MemResult:
    """``mem ARGS`` in this process through ``mem.cli.main``, as ``run_mem_subprocess`` would run it.

    The exit code comes from SystemExit as the interpreter would compute it; an exception that
    escapes the command prints its traceback on stderr and gives 1, like an uncaught one in a child.
    """
    from mem.cli import main

    _build_the_app_once()
    stdin = _Stream(_Buffer(_as_bytes(input) or b""), "<stdin>", "strict")
    stdout = _Stream(_Buffer(), "<stdout>", "strict")
    stderr = _Stream(_Buffer(), "<stderr>", "backslashreplace")
    streams = sys.stdin, sys.stdout, sys.stderr
    code = 0
    with _lock, _process_state(env, cwd):
        sys.argv = ["mem", *args]
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        try:
            with _alarm(timeout):
                main()
        except SystemExit as exit:
            code = _exit_code(exit.code, stderr)
        except _Timeout:
            raise subprocess.TimeoutExpired(["mem", *args], timeout, stdout.buffer.getvalue(),
                                            stderr.buffer.getvalue()) from None
        except Exception:  # what an uncaught exception does to a process (Ctrl-C still stops pytest)
            stderr.write(traceback.format_exc())
            code = 1
        finally:
            for stream in (stdout, stderr):
                try:
                    stream.flush()
                except ValueError:  # the command closed it
                    pass
            sys.stdin, sys.stdout, sys.stderr = streams
    return MemResult(code, stdout.buffer.getvalue(), stderr.buffer.getvalue())


def _exit_code(value: Any, stderr: io.TextIOBase) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    stderr.write(f"{value}\n")  # sys.exit("message"): printed, status 1
    return 1


@pytest.fixture
def mem():
    return run_mem


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def add_records(*records: dict[str, Any]) -> list[str]:
    """``mem add -`` with these records; the ids, asserting success."""
    result = run_mem("add", "-", input=jsonl(*records))
    assert result.code == 0, result.stderr
    return [r["id"] for r in result.records]


def search_records(query: str, *args: str) -> list[dict[str, Any]]:
    """``mem search QUERY ARGS``'s hits, asserting success."""
    result = run_mem("search", query, *args)
    assert result.code == 0, result.stderr
    return result.records


def open_contradictions(*args: str, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """``(newer id, older id)`` of each open contradiction ``mem verify ARGS`` lists, in its order."""
    return [(r["id"], r["other"]) for r in run_mem("verify", *args, env=env).records if r.get("finding") == "contradiction"]


def added_on_day(text: str, day: int, env: dict[str, str] | None = None, kind: str | None = None) -> dict[str, Any]:
    """``mem add TEXT`` on 2026-05-0DAY at 09:00 (with ``--kind KIND`` when given), asserting success: its
    outcome record."""
    done = run_mem("add", text, *(("--kind", kind) if kind else ()), "--now", f"2026-05-0{day}T09:00:00Z", env=env)
    assert done.code == 0, done.stderr
    return done.records[0]


def pair_added_with(monkeypatch: Any, target: Any, switch: str, on: Any, pair: tuple[str, str],
                    env: dict[str, str] | None = None, kinds: tuple[str | None, str | None] = (None, None)
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``target.switch`` set to ``on``, then the pair's older added on day 1 and its newer on day 2: their
    outcome records (a rule's test with its ablation switch on and off); ``kinds``: each one's ``--kind``, when
    given. The readers' caches are emptied before
    and after: a reading cached under one setting of the switch must not answer under the other."""
    monkeypatch.setattr(target, switch, on)
    clear_reader_caches()
    older, newer = pair
    try:
        return added_on_day(older, 1, env, kinds[0]), added_on_day(newer, 2, env, kinds[1])
    finally:
        clear_reader_caches()


def added_then_asked(older: str, newer: str, question: str, env: dict[str, str] | None = None
                     ) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """``older`` added, a day later ``newer``, then ``question`` asked the day after: the two records as
    added and the search hits, for tests of which of two memories search puts first and why."""
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z", env=env).records[0]
    second = run_mem("add", newer, "--now", "2026-05-02T09:00:00Z", env=env).records[0]
    return first, second, run_mem("search", question, "--now", "2026-05-03T00:00:00Z", env=env).records

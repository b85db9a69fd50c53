"""Reading a memory's source file safely: intake hashes it, ``verify`` compares and may quote a line.

A ``source`` is whatever a record (or an MCP client) says it is, so it may name a FIFO, a device
(``/dev/zero`` never ends), a socket, or a file that is huge or hangs on a dead mount. Only
regular files are read (opened non-blocking, then checked with ``fstat``), at most
``MAX_BYTES``, within ``TIMEOUT_S`` on a worker thread that is abandoned if the read blocks.

A changed line is quoted only from a file of the memory's project (``project_root``: a git
working tree whose scope is the memory's scope, the file tracked by git there, so ignored files
such as ``.env`` never are) and only when the secret scanner finds nothing in it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

MAX_BYTES = 64 * 1024 * 1024  # larger sources are not hashed (verify skips them)
TIMEOUT_S = 2.0
CHUNK = 1 << 20
T = TypeVar("T")

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def kind_of(path: str | Path) -> str:
    """``file`` (a regular file within the cap), ``large``, ``special`` (FIFO, device, socket) or ``missing``."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return "missing"
    if not stat.S_ISREG(info.st_mode):
        return "special"
    return "large" if info.st_size > MAX_BYTES else "file"


def _bounded(work: Callable[[], T | None]) -> T | None:
    """``work()`` on a daemon thread, or None when it takes longer than TIMEOUT_S (the thread is left behind)."""
    box: list[T | None] = [None]

    def run() -> None:
        try:
            box[0] = work()
        except (OSError, ValueError, UnicodeError):
            box[0] = None

    worker = threading.Thread(target=run, name="mem-source-read", daemon=True)
    worker.start()
    worker.join(TIMEOUT_S)
    return None if worker.is_alive() else box[0]


def _open_regular(path: str | Path) -> int | None:
    """A read-only descriptor for a regular file within the cap; None for anything else (never blocks on a FIFO)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    info = os.fstat(fd)  # the opened file itself: a symlink to /dev/zero is a device here
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        os.close(fd)
        return None
    return fd


def sha256_of(path: str | Path) -> str | None:
    """The file's sha256, or None when it is not a regular file, is over the cap or takes too long.

    >>> sha256_of("/dev/zero") is None
    True
    """
    fd = _open_regular(path)
    if fd is None:
        return None

    def digest() -> str | None:
        deadline = time.monotonic() + TIMEOUT_S
        total, hasher = 0, hashlib.sha256()
        with os.fdopen(fd, "rb") as fh:
            while chunk := fh.read(CHUNK):
                total += len(chunk)
                if total > MAX_BYTES or time.monotonic() > deadline:  # it grew, or crawls
                    return None
                hasher.update(chunk)
        return hasher.hexdigest()

    return _bounded(digest)


def read_line(path: str | Path, number: int, max_chars: int) -> str | None:
    """Line ``number`` (1-based) of a regular file, cut to ``max_chars``; None if it cannot be read safely."""
    fd = _open_regular(path)
    if fd is None:
        return None

    def line() -> str | None:
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as fh:
            for current, text in enumerate(fh, start=1):
                if current == number:
                    return text.rstrip("\n")[:max_chars]
        return None

    return _bounded(line)


# ------------------------------------------------------------------ the project a memory belongs to

TRACKED_TTL_S = 60.0  # a long-running server sees newly tracked files within a minute
_tracked_cache: dict[str, tuple[float, frozenset[str]]] = {}


def _tracked(root: str) -> frozenset[str]:
    """Paths git tracks under ``root`` (empty when git cannot say), read at most once a minute per root."""
    now = time.monotonic()
    cached = _tracked_cache.get(root)
    if cached and now - cached[0] < TRACKED_TTL_S:
        return cached[1]
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, timeout=TIMEOUT_S * 5,
                             check=True, stdin=subprocess.DEVNULL).stdout
        paths = frozenset(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)
    except (OSError, subprocess.SubprocessError):
        paths = frozenset()
    _tracked_cache[root] = (now, paths)
    return paths


def project_root(path: Path, scope: str) -> Path | None:
    """The working tree ``path`` lies in, when that repository's scope is ``scope``; else None."""
    from mem.scope import repo_scope

    repo = repo_scope(path.parent, persist=False)
    if repo is None or repo.name != scope:
        return None
    return repo.root


def quotable(path: Path, scope: str) -> bool:
    """May verify show a line of ``path`` for a memory of ``scope``? Only a file git tracks in that scope's repository."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    root = project_root(real, scope)
    if root is None:
        return False
    try:
        relative = real.relative_to(root.resolve())
    except ValueError:
        return False
    return relative.as_posix() in _tracked(str(root.resolve()))

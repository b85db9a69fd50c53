"""A warm helper process for one-shot commands: ``mem search``/``mem add TEXT`` from a shell, hook or
cron job without paying for Python's imports and the ONNX model each time.

A one-shot ``mem search`` spends most of its time starting up: numpy, onnxruntime, the model
session and the tokenizer cost 4-5x what ``mem --help`` does. So the first such command that loads
the model starts a helper (``python -m mem.cli.warm serve``) in the background, and later ones hand
it their arguments, working directory, environment and umask over a Unix socket. The helper runs
the very same command in its own process (a new Store and Context per request, only the loaded
embedder kept), so results are byte-for-byte those of a cold run, and writes go to the same files
with the same permissions.

- Never required: no helper, a stale one (another mem version), a busy socket or any error, and the
  command simply runs in the calling process. ``MEM_WARM=0`` turns it off (the test suite does).
- Stops when idle: ``MEM_WARM_IDLE`` seconds without a request (default 600).
- Private: the socket sits in a 0700 folder of the user's (``$XDG_RUNTIME_DIR/mem``, else
  ``/tmp/mem-<uid>``); the helper serves only connections from its own user id, and a client
  talks only to a socket of its own user, in such a folder, whose peer is its own user id (so a
  folder another user planted in /tmp never receives a client's environment).
- Only commands that take no standard input are handed over (``search -`` and ``add -`` run here).

``python -m mem.cli.warm stop`` stops a running helper; ``status`` says whether one runs.
"""

from __future__ import annotations

import io
import os
import socket
import struct
import sys
from pathlib import Path
from typing import Any

FORWARDED = frozenset({"search", "add", "update"})  # the commands that load the embedder
IDLE_S = 600.0
CONNECT_TIMEOUT_S = 0.2
# A frame: its kind, then its length. Client -> helper: b"q" request, b"k" stop. Helper -> client:
# b"o" stdout, b"e" stderr, b"x" exit code (last), b"s" stale (another mem: run it yourself).
_HEADER = struct.Struct("!cI")


# ------------------------------------------------------------------ where and which
def enabled(env: Any = None) -> bool:
    env = os.environ if env is None else env
    return env.get("MEM_WARM", "1").strip().lower() not in ("0", "off", "no", "false")


def socket_path(env: Any = None) -> Path:
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        folder = Path(runtime) / "mem"
    else:
        folder = Path("/tmp") / f"mem-{os.getuid()}"
    return folder / "warm.sock"


def code_key() -> str:
    """Which mem this is: the version and the newest source file's mtime, so an upgraded or edited
    mem never talks to a helper still running the old code."""
    from mem import __version__

    root = Path(__file__).resolve().parent.parent
    newest = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                try:
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
                except OSError:
                    pass
    return f"{__version__}:{root}:{newest}"


def wanted(argv: list[str]) -> bool:
    if not argv or argv[0] not in FORWARDED or not enabled():
        return False
    return not any(arg in ("-", "-h", "--help") for arg in argv[1:])


# ------------------------------------------------------------------ framing
def _send(conn: socket.socket, kind: bytes, payload: bytes) -> None:
    conn.sendall(_HEADER.pack(kind, len(payload)) + payload)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = conn.recv(min(1 << 20, n - got))
        if not chunk:
            raise ConnectionError("helper closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(conn: socket.socket) -> tuple[bytes, bytes]:
    kind, length = _HEADER.unpack(_recv_exact(conn, _HEADER.size))
    return kind, _recv_exact(conn, length)


# ------------------------------------------------------------------ client
def forward(argv: list[str]) -> int | None:
    """Run ``mem ARGV`` in the helper; its exit code, or None to run it here instead."""
    import json

    path = socket_path()
    if not _private(path):
        return None
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(CONNECT_TIMEOUT_S)
        conn.connect(str(path))
    except OSError:
        return None
    if not _same_user(conn):  # never hand our environment to another user's process
        conn.close()
        return None
    try:
        import shutil

        columns, lines = shutil.get_terminal_size()
        umask = os.umask(0o022)
        os.umask(umask)
        request = {
            "key": code_key(), "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
            "tty": [sys.stdin.isatty(), sys.stdout.isatty(), sys.stderr.isatty()], "size": [columns, lines],
        }
        conn.settimeout(None)  # the command itself may take as long as it takes
        _send(conn, b"q", json.dumps(request).encode("utf-8", "surrogateescape"))
        out: list[bytes] = []
        err: list[bytes] = []
        while True:
            kind, payload = _recv(conn)
            if kind == b"o":
                out.append(payload)
            elif kind == b"e":
                err.append(payload)
            elif kind == b"s":  # stale: another mem; run here (and let a new helper start)
                return None
            elif kind == b"x":
                break
    except (OSError, ConnectionError, ValueError, struct.error):
        return None  # the helper went away mid-way; nothing was written to our stdout yet
    finally:
        conn.close()
    sys.stdout.buffer.write(b"".join(out))
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(b"".join(err))
    sys.stderr.buffer.flush()
    return int(payload.decode())


def start_in_background(embedder: str) -> None:
    """Start a helper for next time (best effort, detached, its output discarded)."""
    import subprocess

    path = socket_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        subprocess.Popen([sys.executable, "-m", "mem.cli.warm", "serve", "--embedder", embedder],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True, env={**os.environ, "MEM_WARM": "0"})
    except OSError:
        pass


# ------------------------------------------------------------------ server
class _Stream(io.TextIOWrapper):
    """A text stream over a byte buffer that answers isatty() as the client's stream would."""

    def __init__(self, tty: bool) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def value(self) -> bytes:
        """What was written; the stream is detached, so closing it later cannot take the bytes."""
        self.flush()
        return self.detach().getvalue()


def _run_request(request: dict[str, Any]) -> tuple[int, bytes, bytes]:
    """Run one command as the client would have, then put the process back as it was."""
    import logging

    from mem.cli import main_in_process

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_umask = os.umask(int(request["umask"]))
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    out_stream, err_stream = _Stream(request["tty"][1]), _Stream(request["tty"][2])
    code = 1
    try:
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["MEM_WARM"] = "0"
        if request["tty"][1]:
            os.environ["COLUMNS"], os.environ["LINES"] = (str(v) for v in request["size"])
        os.chdir(request["cwd"])
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        sys.stdout, sys.stderr = out_stream, err_stream
        root.handlers = []
        code = main_in_process(list(request["argv"]))
    except Exception as exc:  # noqa: BLE001 - the helper must outlive any one command
        sys.stderr.write(f"mem: error: internal error in the warm helper: {type(exc).__name__}: {exc}\n")
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        root.handlers, root.level = saved_handlers, saved_level
        os.umask(saved_umask)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out_stream.value(), err_stream.value()


def serve(embedder: str | None = None, idle_s: float | None = None) -> None:
    import json

    from mem.runtime import limit_blas_threads

    limit_blas_threads()
    idle_s = float(os.environ.get("MEM_WARM_IDLE", IDLE_S)) if idle_s is None else idle_s
    path = socket_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = os.lstat(path.parent)
    import stat

    if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.getuid() or folder.st_mode & 0o077:
        return  # someone else's folder, or open to others: never serve from it
    key = code_key()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(CONNECT_TIMEOUT_S)
        probe.connect(str(path))
        return  # a helper already answers there
    except OSError:
        pass
    finally:
        probe.close()
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(16)
    listener.settimeout(idle_s)
    from mem.cli import build_app  # noqa: F401  (import the whole CLI now, not on the first request)

    if embedder:
        from mem.embed import get_embedder

        try:
            get_embedder(embedder, cached=True).embed(["warm up"])
        except Exception:  # noqa: BLE001 - the first real request will report it
            pass
    me = path.stat().st_ino
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                return  # idle for long enough
            with conn:
                if not _same_user(conn):
                    continue
                try:
                    kind, payload = _recv(conn)
                    if kind == b"k":
                        return  # asked to stop
                    request = json.loads(payload.decode("utf-8", "surrogateescape"))
                    if kind != b"q" or request.get("key") != key:
                        _send(conn, b"s", b"")
                        return  # another mem is calling: make way for its own helper
                    code, out, err = _run_request(request)
                    _send(conn, b"o", out)
                    _send(conn, b"e", err)
                    _send(conn, b"x", str(code).encode())
                except (OSError, ConnectionError, ValueError, KeyError, TypeError, struct.error):
                    continue
            try:
                if path.stat().st_ino != me:
                    return  # our socket was replaced or removed: another helper took over
            except FileNotFoundError:
                return
    finally:
        listener.close()
        try:
            if path.stat().st_ino == me:
                path.unlink()
        except OSError:
            pass


def _private(path: Path) -> bool:
    """The socket and its folder are ours and closed to others (a folder in /tmp could be planted
    by another user to collect the environment a client sends)."""
    try:
        folder, sock = os.lstat(path.parent), os.lstat(path)
    except OSError:
        return False
    import stat

    me = os.getuid()
    return (stat.S_ISDIR(folder.st_mode) and folder.st_uid == me and not folder.st_mode & 0o077
            and stat.S_ISSOCK(sock.st_mode) and sock.st_uid == me)


def _same_user(conn: socket.socket) -> bool:
    creds = getattr(socket, "SO_PEERCRED", None)
    if creds is None:
        return True  # not Linux: the 0700 folder is the boundary
    pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, creds, struct.calcsize("3i")))
    return uid == os.getuid()


def stop() -> bool:
    """Stop a running helper; True if one was running."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(CONNECT_TIMEOUT_S)
        conn.connect(str(socket_path()))
        _send(conn, b"k", b"")
        conn.close()
        return True
    except OSError:
        return False


def _main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        embedder = argv[argv.index("--embedder") + 1] if "--embedder" in argv[:-1] else None
        serve(embedder)
        return 0
    if argv[:1] == ["stop"]:
        print("stopped" if stop() else "no helper was running", file=sys.stderr)
        return 0
    if argv[:1] == ["status"]:
        path = socket_path()
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(CONNECT_TIMEOUT_S)
        try:
            probe.connect(str(path))
            print(f"a helper answers at {path}", file=sys.stderr)
            return 0
        except OSError:
            print("no helper is running", file=sys.stderr)
            return 1
        finally:
            probe.close()
    print("usage: python -m mem.cli.warm serve [--embedder NAME] | stop | status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

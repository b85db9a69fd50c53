"""Build and run the MCP server: one Store and one warm embedder for the life of the process.

stdout carries JSON-RPC only: logs go to stderr, and while the embedder loads fd 1 points at
stderr too, so nothing a native library prints can reach the wire.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import socket
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mem.errors import Exit, MemError

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from mem.config import Settings
    from mem.mcp.engine import Engine

log = logging.getLogger(__name__)

from mem.vocab import PROFILES  # noqa: E402
INSTRUCTIONS = (
    "Persistent memory for this project. Search before answering questions about past decisions, "
    "conventions or facts; add durable facts, decisions, corrections and preferences as you learn them."
)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Point fd 1 at stderr for the duration (model loading may print from native code)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def build(engine: "Engine", profile: str = "default") -> "MCPServer":
    """The MCPServer with the tools of ``profile`` and the resources, bound to ``engine``.

    >>> server = build(engine)      # doctest: +SKIP
    >>> server.run("stdio")         # doctest: +SKIP
    """
    from mcp.server import MCPServer

    from mem import __version__
    from mem.mcp import resources

    from mem import vocab

    vocab.check("profile", profile)
    server = MCPServer("mem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    if profile == "default":
        from mem.mcp import tools

        names = tools.register(server, engine)
    else:
        from mem.mcp import compat

        names = compat.register(server, engine)
    resources.register(server, engine)
    log.info("profile %s: %d tools (%s)", profile, len(names), ", ".join(names))
    return server


def open_engine(settings: "Settings", *, fixed_scope: str | None, allow: tuple[str, ...] = ()) -> "Engine":
    """Open the store and load the embedder now, so the first call is as fast as the rest."""
    from mem.mcp.engine import Engine
    from mem.stages.context import Context
    from mem.store import Store

    store = Store.open(settings.db_path)
    ctx = Context(store=store, settings=settings)
    if settings.repo is not None and not fixed_scope:
        from mem.stages.scopes import adopt

        adopt(store, settings.repo, ctx.now_iso())
    with stdout_to_stderr():
        ctx.use_embedder(ctx.embedder)  # loads (and binds on an empty database) once, here
        ctx.embedder.embed(["warm up"])
    return Engine(ctx, fixed_scope=fixed_scope, allow=allow)


def run_stdio(server: "MCPServer") -> None:
    server.run("stdio")


class PortInUse(MemError):
    """``--port`` names a port something else listens on: a bad argument (exit 2), said plainly."""

    exit = Exit.USAGE
    code = "port_in_use"


def bind_port(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port``, taken before the embedder loads so a busy port fails at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart right after a stop binds at once
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUse(f"port {port} on 127.0.0.1 is {'in use' if exc.errno == errno.EADDRINUSE else 'not allowed'}"
                            f"; pick another with --port", port=port) from None
        raise PortInUse(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}", port=port) from None
    return sock


def client_config(url: str, token: str) -> str:
    """The snippet a client needs (VS Code / Cursor style), for the one-time announcement on stderr."""
    import json

    return json.dumps({"servers": {"mem": {"type": "http", "url": url,
                                           "headers": {"Authorization": f"Bearer {token}"}}}}, indent=2)


def run_http(server: "MCPServer", listener: socket.socket, *, token: str | None, no_auth: bool = False) -> None:
    """Streamable HTTP on 127.0.0.1 only, at /mcp, behind a bearer token.

    Without ``token`` (MEM_MCP_TOKEN) a random one is made and printed once on stderr with the
    client configuration; ``no_auth`` serves without one, after a warning. The SDK's Host and
    Origin checks (DNS rebinding protection for 127.0.0.1) stay on either way.
    """
    import secrets

    import anyio
    import uvicorn

    port = listener.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    app: Any = server.streamable_http_app(host="127.0.0.1")
    if no_auth:
        note = (" WITHOUT AUTHENTICATION (--no-auth): any local process or user can read and change "
                "every memory this server reaches")
    else:
        made = token is None
        token = token or secrets.token_urlsafe(32)
        app = BearerGate(app, token)
        note = " (bearer token required)"
        if made:
            note += (f"\nmem: MEM_MCP_TOKEN is not set; this run's token (shown once):\n{token}\n"
                     f"mem: client configuration:\n{client_config(url, token)}")
    config = uvicorn.Config(app, log_config=None, access_log=False, log_level="warning", lifespan="on")
    sys.stderr.write(f"mem: MCP over Streamable HTTP at {url}{note}\n")
    sys.stderr.flush()
    anyio.run(functools.partial(uvicorn.Server(config).serve, sockets=[listener]))


class BearerGate:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (scheme in any case), else 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode("utf-8")

    def allows(self, header: bytes) -> bool:
        import hmac

        scheme, _, given = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not self.allows(given):
                body = b'{"error":"unauthorized: send Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="mem"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def setup_logging(verbose: bool) -> None:
    """Logs to stderr only (stdout is the JSON-RPC pipe)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("mem-mcp %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)

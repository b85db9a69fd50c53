"""``mem serve-mcp``: the same stages served over MCP (stdio by default, or Streamable HTTP)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from mem.cli.common import DbOption, EmbedderOption, NowOption, ScopeOption, reports_errors


@reports_errors
def serve_mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve Streamable HTTP on 127.0.0.1 instead of stdio")] = False,
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="Port for --http")] = 8765,
    profile: Annotated[str, typer.Option("--profile", help="Tool set: default | memory-v3")] = "default",
    allow_scope: Annotated[list[str] | None, typer.Option(
        "--allow-scope", help="More scopes a scoped server may read and write (shell pattern, repeatable; '*' = all)",
        show_default=False)] = None,
    no_auth: Annotated[bool, typer.Option("--no-auth", help="With --http: serve without a bearer token (warns)")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log each step on stderr")] = False,
    db: DbOption = None, scope: ScopeOption = None, embedder: EmbedderOption = None, now: NowOption = None,
) -> None:
    """Serve memory to MCP clients (Claude Code, Claude Desktop, Cursor, VS Code).

    stdout carries JSON-RPC only; logs go to stderr. Without --scope (or MEM_SCOPE) the scope comes from the client's roots, else from this folder's git repository.

    A scope from --scope or the roots is a boundary: calls read and write it, read 'global', and reach other scopes only through --allow-scope.

    With --http every request needs 'Authorization: Bearer <token>': MEM_MCP_TOKEN, else a random token printed once on stderr.

    claude mcp add mem -- mem serve-mcp
    """
    from mem.mcp import server as mcp_server

    mcp_server.setup_logging(verbose)
    listener = mcp_server.bind_port(port) if http else None  # a busy port fails before the model loads
    with opened_server(profile=profile, db=db, scope=scope, embedder=embedder, now=now,
                       allow_scope=allow_scope or ()) as server:
        if listener is not None:
            token = None if no_auth else (os.environ.get("MEM_MCP_TOKEN") or None)
            mcp_server.run_http(server, listener, token=token, no_auth=no_auth)
        else:
            mcp_server.run_stdio(server)


@contextmanager
def opened_server(*, profile: str = "default", db: Path | None = None, scope: str | None = None,
                  embedder: str | None = None, now: str | None = None,
                  allow_scope: Sequence[str] = ()) -> Iterator[Any]:
    """The MCPServer ``serve-mcp`` serves for these options, its store open until the block ends."""
    from mem.config import resolve_settings
    from mem.mcp import server as mcp_server

    settings = resolve_settings(db=db, scope=None if scope == "*" else scope, embedder=embedder, now=now)
    # An explicit scope (flag, MEM_SCOPE, config file) wins over the client's roots; '*' serves every scope.
    fixed = (scope if scope and scope != "*" else None) or os.environ.get("MEM_SCOPE") or settings.config.get("scope")
    allow = tuple(allow_scope) + (("*",) if scope == "*" else ())
    engine = mcp_server.open_engine(settings, fixed_scope=fixed or None, allow=allow)
    try:
        yield mcp_server.build(engine, profile)
    finally:
        engine.ctx.store.close()


def register(app: typer.Typer) -> None:
    app.command("serve-mcp")(serve_mcp)


__all__ = ["register"]

"""What every tool shares: one open Context for the life of the server, serialized stage calls,
the scope boundary a call works in, and MemError -> tool error.

The stages are synchronous and share one SQLite connection and one loaded embedder, so calls run
one at a time on a worker thread (the event loop keeps reading requests meanwhile). No read
transaction is ever left open between calls, so memories other processes add show up at once
(SQLite WAL).
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from mem.errors import MemError

if TYPE_CHECKING:
    from mem.mcp.boundary import Boundary
    from mem.stages.context import Context

log = logging.getLogger(__name__)
T = TypeVar("T")

ROOTS_TIMEOUT_S = 3.0


class Engine:
    """One Context (store + warm embedder) behind every tool call of one server process.

    >>> engine = Engine(ctx, fixed_scope=None)          # doctest: +SKIP
    >>> await engine.call(None, memories.get, engine.ctx, ["0192"])  # doctest: +SKIP
    """

    def __init__(self, ctx: "Context", *, fixed_scope: str | None, allow: tuple[str, ...] = ()) -> None:
        self.ctx = ctx
        self.fixed_scope = fixed_scope  # --scope / MEM_SCOPE / config: never overridden by roots
        self.allow = allow  # --allow-scope patterns: more scopes a bounded session may read and write
        self._limiter: Any = None
        self._writes: Any = None  # mem.mcp.group.GroupCommit, made on the first add
        self._roots_scope: dict[int, str | None] = {}  # per client session

    # ------------------------------------------------------------------ calls
    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a stage function on the worker thread, one call at a time; MemError -> ToolError."""
        from mcp.server.mcpserver.exceptions import ToolError

        try:
            return await self.run(fn, *args, **kwargs)
        except MemError as error:
            raise ToolError(error.message) from None

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call`` without the error translation (for callers that hand errors to others)."""
        import anyio
        import anyio.to_thread

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=self._limiter)

    async def add(self, records: list[Any], options: Any, priority: int = 3) -> list[Any]:
        """Store records through the group commit (``mem.mcp.group``); answers after their commit."""
        from mcp.server.mcpserver.exceptions import ToolError

        from mem.mcp.group import GroupCommit

        if self._writes is None:
            self._writes = GroupCommit(self)
        try:
            return await self._writes.add(records, options, priority)
        except MemError as error:
            raise ToolError(error.message) from None

    # ------------------------------------------------------------------ scope
    async def boundary(self, mcp_ctx: Any) -> "Boundary":
        """The scopes this call's session may reach (``mem.mcp.boundary``).

        Its home scope is ``--scope`` (or MEM_SCOPE / config) when given; otherwise the client's
        first root (its git repository's name, else the folder's name), asked once per session;
        either bounds the session. Otherwise the server's working directory (git repository name,
        else 'global') is only the default, and every scope is reachable.
        """
        from mem.mcp.boundary import Boundary

        if self.fixed_scope:
            return Boundary.of(self.fixed_scope, bounded=True, allow=self.allow)
        session = _session_of(mcp_ctx)
        if session is not None:
            key = id(session)
            if key not in self._roots_scope:
                self._roots_scope[key] = await self._scope_from_roots(mcp_ctx, session)
            if self._roots_scope[key]:
                return Boundary.of(self._roots_scope[key], bounded=True, allow=self.allow)
        return Boundary.of(self.ctx.settings.scope, bounded=False)

    def sessionless_boundary(self) -> "Boundary":
        """For what gets no session (a static resource): --scope's boundary, else the working
        directory's scope, bounded unless --allow-scope '*' (a client's roots cannot be asked here)."""
        from mem.mcp.boundary import Boundary

        return Boundary.of(self.fixed_scope or self.ctx.settings.scope, bounded=True, allow=self.allow)

    async def scope(self, mcp_ctx: Any, requested: str | None, *, use: str = "read") -> str:
        """The scope one call works in, checked against the session's boundary.

        ``use`` is ``read`` (any readable scope; '*' when unbounded), ``write`` (one writable scope)
        or ``sweep`` (a job that writes over many memories: one writable scope, or '*' when unbounded).
        """
        boundary = await self.boundary(mcp_ctx)
        check = {"read": boundary.read_scope, "write": boundary.write_scope, "sweep": boundary.sweep_scope}[use]
        try:
            return check(requested)
        except MemError as error:
            raise tool_error(error.message) from None

    async def _scope_from_roots(self, mcp_ctx: Any, session: Any) -> str | None:
        import anyio

        try:
            capabilities = mcp_ctx.client_capabilities
        except Exception:
            return None
        if capabilities is None or getattr(capabilities, "roots", None) is None:
            return None
        try:
            with anyio.fail_after(ROOTS_TIMEOUT_S), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = await session.list_roots()
        except Exception as exc:  # no back channel, timeout, client error: fall back to cwd
            log.info("roots/list failed (%s); using the working directory's scope", type(exc).__name__)
            return None
        for root in result.roots:
            scope, repo = scope_of_root(str(root.uri))
            if scope:
                log.info("scope %r from client root %s", scope, root.uri)
                if repo is not None:
                    await self._note_repository(repo)
                return scope
        return None

    async def _note_repository(self, repo: Any) -> None:
        """As every CLI command does: remember the root, adopt its folder-name memories once."""
        from mem.stages.scopes import adopt

        try:
            await self.call(adopt, self.ctx.store, repo, self.ctx.now_iso())
        except Exception as exc:  # a locked store must not cost the client its scope
            log.info("could not record the client's repository (%s)", exc)


def scope_of_root(uri: str) -> tuple[str | None, Any]:
    """``file:///home/me/src/shop`` -> the repository's scope there (``mem.scope``), else the folder's name.

    >>> scope_of_root("file:///tmp/not-a-repo/shop")
    ('shop', None)
    """
    from mem.scope import repo_scope

    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None, None
    path = Path(unquote(parsed.path))
    repo = repo_scope(path)
    if repo is not None:
        return repo.name, repo
    return path.name or None, None


def _session_of(mcp_ctx: Any) -> Any:
    if mcp_ctx is None:
        return None
    try:
        return mcp_ctx.session
    except Exception:  # called outside a request (in-process tests)
        return None


def tool_error(message: str) -> Exception:
    """A tool error the client sees with this message (the server keeps serving)."""
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(message)

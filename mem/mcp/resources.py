"""Resources: ``mem://memory/{id}`` (one memory as JSON) and ``mem://stats``.

No ``from __future__ import annotations``: the SDK finds the Context parameter by its annotation.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from mem.mcp.engine import Engine


def register(server: "MCPServer", engine: "Engine") -> None:
    import orjson
    from mcp.server.mcpserver.exceptions import ResourceError

    from mem.errors import MemError
    from mem.mcp import render
    from mcp.server.mcpserver import Context

    from mem.mcp.calls import do_stats
    from mem.stages import memories

    @server.resource("mem://memory/{id}", name="memory", mime_type="application/json",
                     description="One memory by id (or unique prefix)")
    async def memory(id: str, ctx: Context) -> str:
        boundary = await engine.boundary(ctx)
        try:
            found = await engine.call(lambda: memories.get(engine.ctx, [boundary.resolve(engine.ctx.store, id)]))
        except Exception as exc:  # engine.call turned MemError into ToolError: a resource error here
            raise ResourceError(str(exc)) from None
        return orjson.dumps(render.plain(found[0])).decode("utf-8")

    @server.resource("mem://stats", name="stats", mime_type="application/json",
                     description="Counts by status, scope, kind and layer")
    async def stats() -> str:
        try:
            report = await engine.call(do_stats, engine, engine.sessionless_boundary())
        except MemError as exc:
            raise ResourceError(exc.message) from None
        return orjson.dumps(report).decode("utf-8")

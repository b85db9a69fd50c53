"""Resources: ``mem://memory/{id}`` (one memory as JSON) and ``mem://stats``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from mem.mcp.engine import Engine


def register(server: "MCPServer", engine: "Engine") -> None:
    import orjson
    from mcp.server.mcpserver.exceptions import ResourceError

    from mem.errors import MemError
    from mem.mcp import render
    from mem.mcp.tools import do_stats
    from mem.stages import memories

    @server.resource("mem://memory/{id}", name="memory", mime_type="application/json",
                     description="One memory by id (or unique prefix)")
    async def memory(id: str) -> str:
        try:
            found = await engine.call(memories.get, engine.ctx, [id])
        except Exception as exc:  # engine.call turned MemError into ToolError: a resource error here
            raise ResourceError(str(exc)) from None
        return orjson.dumps(render.plain(found[0])).decode("utf-8")

    @server.resource("mem://stats", name="stats", mime_type="application/json",
                     description="Counts by status, scope, kind and layer")
    async def stats() -> str:
        try:
            report = await engine.call(do_stats, engine)
        except MemError as exc:
            raise ResourceError(exc.message) from None
        return orjson.dumps(report).decode("utf-8")

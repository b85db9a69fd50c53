"""The MCP front end (``mem serve-mcp``): tools that call the same stages as the CLI.

Nothing here is imported by ``mem --help``; the ``mcp`` SDK is imported only by ``mem serve-mcp``.
"""

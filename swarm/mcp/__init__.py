"""MCP: servers' tools for a team's roles, and a team served as an MCP server.

Importing this package does not import the ``mcp`` SDK; connecting to servers
(``mcp_toolbox``) and serving (``swarm.mcp.serve``) do, and need ``pip install swarm[mcp]``.
"""

from __future__ import annotations

from swarm.mcp.config import HttpServer, McpServer, StdioServer, load_mcp_servers

__all__ = ["HttpServer", "McpServer", "StdioServer", "load_mcp_servers"]

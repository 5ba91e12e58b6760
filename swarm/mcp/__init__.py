"""MCP, the client side: servers' tools for a team's roles.

Importing this package does not import the ``mcp`` SDK: the declarations
(``load_mcp_servers``) are plain data. ``McpConnections``, ``mcp_toolbox`` and ``mcp_tool``
load it when first used, and need the ``mcp`` extra (``pip install -e '.[mcp]'`` in the
checkout). A team served as an MCP server (``swarm mcp serve``) is the command line's:
``swarm.cli.mcp_serve``.
"""

from __future__ import annotations

import importlib
from typing import Any

from swarm.mcp.config import McpHttpServer, McpServer, McpStdioServer, load_mcp_servers

__all__ = [
    "McpConnections",
    "McpHttpServer",
    "McpPathGuard",
    "McpServer",
    "McpStdioServer",
    "McpUnavailable",
    "load_mcp_servers",
    "mcp_tool",
    "mcp_toolbox",
]

_LAZY = {
    "McpConnections": "swarm.mcp.client",
    "McpUnavailable": "swarm.mcp.client",
    "McpPathGuard": "swarm.mcp.paths",
    "mcp_tool": "swarm.mcp.tools",
    "mcp_toolbox": "swarm.mcp.tools",
}


def __getattr__(name: str) -> Any:
    """The names that need the ``mcp`` SDK, imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'swarm.mcp' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)

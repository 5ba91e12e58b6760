"""MCP, the client side: servers' tools for a team's roles.

Importing this package does not import the ``mcp`` SDK: the declarations
(``load_mcp_servers``) are plain data. ``McpConnections``, ``mcp_toolbox`` and ``mcp_tool``
load it when first used, and need the ``mcp`` extra (``pip install -e '.[mcp]'`` in the
checkout). A team served as an MCP server (``swarm mcp serve``) is the command line's:
``swarm.cli.mcp_serve``.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.mcp.config import (
    McpHttpServer as McpHttpServer,
    McpServer as McpServer,
    McpStdioServer as McpStdioServer,
    load_mcp_servers as load_mcp_servers,
)

if _TYPE_CHECKING:
    from swarm.mcp.client import McpConnections as McpConnections, McpUnavailable as McpUnavailable
    from swarm.mcp.paths import McpPathGuard as McpPathGuard
    from swarm.mcp.tools import mcp_tool as mcp_tool, mcp_toolbox as mcp_toolbox

_LAZY: dict[str, tuple[str, ...]] = {  # these need the mcp SDK
    "swarm.mcp.client": ("McpConnections", "McpUnavailable"),
    "swarm.mcp.paths": ("McpPathGuard",),
    "swarm.mcp.tools": ("mcp_tool", "mcp_toolbox"),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)

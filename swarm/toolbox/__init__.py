"""The built-in workspace tools: files, search, shell, notes, todo and ask_user.

Every tool is confined to its workspace (paths through ``..``, absolute paths elsewhere
and symlinks leading out are refused), and a run puts each behind its role's policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm.toolbox._paths import Workspace
from swarm.toolbox.ask import Ask, ask_tool
from swarm.toolbox.files import file_tools
from swarm.toolbox.notes import notes_tool
from swarm.toolbox.search import search_tool
from swarm.toolbox.shell import shell_tool
from swarm.toolbox.todo import todo_tool
from swarm.tools import Tool

__all__ = ["TOOL_NAMES", "Ask", "Workspace", "make_toolbox"]

TOOL_NAMES = (
    "read_file",
    "write_file",
    "edit_file",
    "list_files",
    "search",
    "shell",
    "notes",
    "todo",
    "ask_user",
)


def make_toolbox(
    workspace: str | Path,
    *,
    ask: Ask | None = None,
    shell_timeout: float = 120.0,
    output_limit: int = 30_000,
) -> dict[str, Tool[Any]]:
    """The built-in tools for ``workspace`` (created if missing), by name.

    ``ask`` lets ``ask_user`` reach a person (without it the tool tells the model nobody
    can answer); ``shell_timeout`` bounds every command (seconds); ``output_limit`` caps
    the characters of command output the model sees.
    """
    root = Path(workspace)
    root.mkdir(parents=True, exist_ok=True)
    space = Workspace(root)
    tools: list[Tool[Any]] = [
        *file_tools(space),
        search_tool(space),
        shell_tool(space, timeout=shell_timeout, output_limit=output_limit),
        notes_tool(space),
        todo_tool(space),
        ask_tool(ask),
    ]
    return {tool.name: tool for tool in tools}

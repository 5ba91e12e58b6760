"""``make_toolbox``: the built-in tools for a workspace, by name (``TOOL_NAMES``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.sandbox.base import SandboxSettings
from swarm.sandbox.select import SandboxFinder, ToolSandbox, find_sandbox
from swarm.toolbox._paths import Workspace

if TYPE_CHECKING:
    from swarm.guards.protect import ProtectedPaths
    from swarm.sandbox.proxy import Resolver
    from swarm.toolbox.ask import Ask
    from swarm.tools import Tool

__all__ = ["TOOL_NAMES", "make_toolbox"]

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
"""The names of the built-in tools, in the order ``make_toolbox`` returns them."""


def make_toolbox(
    workspace: str | Path,
    *,
    shell_timeout: float = 120.0,
    output_limit: int = 40_000,
    ask: Ask | None = None,
    shell_env: Mapping[str, str] | None = None,
    sandbox: SandboxSettings | None = None,
    protected: Iterable[str | Path] = (),
    readonly: ProtectedPaths | None = None,
    evidence: Path | None = None,
    find: SandboxFinder = find_sandbox,
    resolver: Resolver | None = None,
) -> dict[str, Tool[Any]]:
    """The built-in tools for ``workspace`` (created if missing), by name (``TOOL_NAMES``).

    ``shell_timeout`` bounds every shell command (seconds); ``output_limit`` caps the
    characters one call of read_file, list_files, search, shell or notes returns;
    ``ask`` lets ``ask_user`` reach a person; without it the tool is still there, and
    each call is an error result telling the model to go on without asking.
    ``shell_env`` is the whole environment of shell commands (``None``: built from
    scratch, ``PATH``, ``HOME``, ``LANG``, ``TERM``, ``TMPDIR`` and the variables the
    sandbox settings name, see ``command_environment``; pass ``os.environ`` to hand the
    agents everything, API keys included).

    Shell commands run in a sandbox: ``sandbox`` gives the settings used until a policy
    applied to the tool (``apply_policy``) binds its own (default ``SandboxSettings()``:
    a sandbox when one works, else unconfined with a warning; no network); the shell
    tool's context (a ``ToolSandbox``) holds them. ``find`` picks the tier (default
    ``find_sandbox``; tests pass one that finds nothing). ``resolver`` resolves the names
    commands reach through the egress proxy when the settings have a network allow-list
    (default: the machine's resolver; tests give ``mapped_resolver``). ``protected`` are
    absolute paths (run records) invisible to commands and that no file tool reads,
    writes or lists, even inside the workspace; the workspace's ``.swarm/runs`` always is.

    Raises ``ValueError`` for a timeout or limit that is not positive, or a protected
    path that is not absolute.
    """
    if shell_timeout <= 0:
        raise ValueError(f"shell_timeout must be positive, not {shell_timeout!r}")
    if output_limit < 100:
        raise ValueError(f"output_limit must be at least 100 characters, not {output_limit!r}")
    root = Path(workspace)
    root.mkdir(parents=True, exist_ok=True)
    hidden = tuple(Path(p) for p in protected)
    space = Workspace(root, protected=hidden, readonly=readonly)
    # the tools' modules (the shell's sandbox and process handling) load with the first toolbox
    from swarm.toolbox.ask import ask_tool
    from swarm.toolbox.files import file_tools
    from swarm.toolbox.listing import list_files_tool
    from swarm.toolbox.notes import notes_tool
    from swarm.toolbox.search import search_tool
    from swarm.toolbox.shell import shell_tool
    from swarm.toolbox.todo import todo_tool

    tools: list[Tool[Any]] = [
        *file_tools(space, output_limit=output_limit),
        list_files_tool(space, output_limit=output_limit),
        search_tool(space, output_limit=output_limit),
        shell_tool(
            space,
            timeout=shell_timeout,
            output_limit=output_limit,
            env=shell_env,
            sandbox=ToolSandbox(sandbox or SandboxSettings(), find, resolver),
            protected=hidden,
            evidence=evidence,
        ),
        notes_tool(space, output_limit=output_limit),
        todo_tool(space),
        ask_tool(ask),
    ]
    return {tool.name: tool for tool in tools}

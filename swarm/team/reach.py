"""The tools a team's roles can have, by name, for checking its policies' globs
(``swarm.guards.reach``) before anything runs: no server is started and no workspace made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from swarm.guards.reach import Reach, ToolNames
from swarm.team.spec import AgentSpec
from swarm.team.tool_entries import resolve_entries
from swarm.tools import Tool

__all__ = ["mcp_names", "team_reach"]


def mcp_names(server: str, tool: str | None = None) -> str:
    """The name of an MCP server's tool as the model sees it (``mcp__git__git_status``,
    as ``swarm.mcp.mcp_tool_name`` makes it), or with no ``tool`` the glob standing for
    all of them (``mcp__git__?*``)."""
    return f"mcp__{server}__{tool if tool is not None else '?*'}"


def _mcp(name: str, tool: str | None) -> ToolNames:
    if tool is None:
        return ToolNames(patterns=frozenset({mcp_names(name)}))
    return ToolNames(names=frozenset({mcp_names(name, tool)}))


def _role_tools(
    spec: AgentSpec,
    builtins: Collection[str],
    toolbox: Mapping[str, Sequence[Tool[Any]]],
    mcp_servers: Collection[str],
) -> tuple[ToolNames, bool]:
    """The tools ``spec`` has, and whether every entry resolved."""
    found = ToolNames()
    rest: list[str] = []
    for entry in spec.tools:
        if entry in toolbox:
            found |= ToolNames(names=frozenset(t.name for t in toolbox[entry]))
        elif entry in builtins:
            found |= ToolNames(names=frozenset({entry}))
        elif entry.startswith("mcp:"):
            server, _, tool = entry[4:].partition("/")
            if server in mcp_servers:
                found |= _mcp(server, tool or None)
        else:
            rest.append(entry)  # a Python reference or an entry point
    complete = True
    if rest:
        tools, problems = resolve_entries(dataclasses.replace(spec, tools=tuple(rest)), {})
        found |= ToolNames(names=frozenset(t.name for t in tools))
        complete = not problems
    delegation = ToolNames(names=frozenset(spec.delegates))
    return found | delegation, complete


def team_reach(
    specs: Mapping[str, AgentSpec],
    *,
    builtins: Collection[str],
    toolbox: Mapping[str, Sequence[Tool[Any]]] | None = None,
    mcp_servers: Collection[str] = (),
) -> Reach:
    """What the policies of a team of ``specs`` can be about: the tools its roles have
    (``builtins`` are the built-in tools' names, ``toolbox`` the tools a scenario adds by
    entry, ``mcp_servers`` the declared servers), and what swarm could offer it besides
    (every built-in, every role as a delegation tool, every declared server's tools).

    Never raises: an entry that does not resolve (reported where the team's tools are
    checked) leaves the world open (``Reach.closed`` false).
    """
    team = ToolNames()
    complete = True
    for spec in specs.values():
        tools, resolved = _role_tools(spec, builtins, toolbox or {}, mcp_servers)
        team |= tools
        complete = complete and resolved
    offered = ToolNames(names=frozenset({*builtins, *specs}))
    for server in mcp_servers:
        offered |= _mcp(server, None)
    return Reach(team=team, offered=offered, roles=frozenset(specs), closed=complete)

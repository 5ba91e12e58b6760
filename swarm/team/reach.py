"""The tools a team's roles can have, by name and arguments, for checking its policies'
globs (``swarm.guards.reach``) before anything runs: no MCP server is started.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from swarm.guards.reach import Reach, ToolNames
from swarm.team.spec import AgentSpec
from swarm.team.tool_entries import resolve_entries
from swarm.tools import Tool

__all__ = ["mcp_names", "role_tool_names", "team_reach"]

Toolbox = Mapping[str, Tool[Any] | Sequence[Tool[Any]]]


def mcp_names(server: str, tool: str | None = None) -> str:
    """The name of an MCP server's tool as the model sees it (``mcp__git__git_status``,
    as ``swarm.mcp.mcp_tool_name`` makes it), or with no ``tool`` the glob standing for
    all of them (``mcp__git__?*``)."""
    return f"mcp__{server}__{tool if tool is not None else '?*'}"


def _mcp(name: str, tool: str | None) -> ToolNames:
    if tool is None:
        return ToolNames(patterns=frozenset({mcp_names(name)}))
    return ToolNames(names=frozenset({mcp_names(name, tool)}))


def _listed(found: Tool[Any] | Sequence[Tool[Any]]) -> list[Tool[Any]]:
    return [found] if isinstance(found, Tool) else list(found)


def arguments_of(tool: Tool[Any]) -> frozenset[str] | None:
    """The argument names ``tool`` takes, or ``None`` when it takes others too."""
    schema = tool.input_schema
    if schema.get("additionalProperties", True) is not False:
        return None
    properties = schema.get("properties")
    return frozenset(properties) if isinstance(properties, Mapping) else None


def _role_tools(
    spec: AgentSpec, toolbox: Toolbox, mcp_servers: Collection[str]
) -> tuple[ToolNames, list[Tool[Any]], bool]:
    """The tools ``spec`` has (MCP ones by name only), and whether every entry resolved."""
    tools: list[Tool[Any]] = []
    mcp = ToolNames()
    rest: list[str] = []
    for entry in spec.tools:
        if entry in toolbox:
            tools += _listed(toolbox[entry])
        elif entry.startswith("mcp:"):
            server, _, tool = entry[4:].partition("/")
            if server in mcp_servers:
                mcp |= _mcp(server, tool or None)
        else:
            rest.append(entry)  # a Python reference or an entry point
    complete = True
    if rest:
        found, problems = resolve_entries(dataclasses.replace(spec, tools=tuple(rest)), {})
        tools += found
        complete = not problems
    names = ToolNames(names=frozenset({*(t.name for t in tools), *spec.delegates}))
    return names | mcp, tools, complete


def role_tool_names(
    spec: AgentSpec, *, toolbox: Toolbox, mcp_servers: Collection[str] = ()
) -> tuple[ToolNames, bool]:
    """The names of the tools ``spec`` has as the model sees them (a Python reference
    by the tool's own name, an MCP server's as a pattern) with its delegates, and whether
    every entry resolved (when not, a name outside these may still be one of its tools).
    Never raises."""
    names, _, complete = _role_tools(spec, toolbox, mcp_servers)
    return names, complete


def team_reach(
    specs: Mapping[str, AgentSpec],
    *,
    toolbox: Toolbox,
    mcp_servers: Collection[str] = (),
) -> Reach:
    """What the policies of a team of ``specs`` can be about: the tools its roles have,
    from ``toolbox`` (what the run gives: the built-in tools and the scenario's, by
    entry) and the declared ``mcp_servers``, and what swarm could offer it besides (every
    tool of ``toolbox``, every role as a delegation tool, every declared server's tools),
    with the arguments of each tool whose schema says so (delegation and MCP tools: not
    known here).

    Never raises: an entry that does not resolve (reported where the team's tools are
    checked) leaves the world open (``Reach.closed`` false).
    """
    team = ToolNames()
    tools = [t for found in toolbox.values() for t in _listed(found)]
    complete = True
    for spec in specs.values():
        names, own, resolved = _role_tools(spec, toolbox, mcp_servers)
        team |= names
        tools += own
        complete = complete and resolved
    offered = ToolNames(names=frozenset({*(t.name for t in tools), *specs}))
    for server in mcp_servers:
        offered |= _mcp(server, None)
    arguments: dict[str, frozenset[str] | None] = dict.fromkeys(specs)
    for tool in tools:
        known = arguments_of(tool)
        if tool.name in arguments and arguments[tool.name] != known:
            known = None  # two tools of one name (in different roles): cannot tell
        arguments[tool.name] = known
    return Reach(
        team=team, offered=offered, roles=frozenset(specs), closed=complete, arguments=arguments
    )

"""What a team directory says about the whole team, beside its role files.

``team.yaml`` (or ``team.yml``) is the one YAML file of a directory that is not a role: it
holds settings of the team, for now the model aliases its roles may name::

    models:
      fast: openai:gpt-4.1-mini
      smart: anthropic:claude-opus-4-5

The MCP servers a team declares (``mcp.json`` or ``.mcp.json``, Claude Code's
``mcpServers`` format) are read here only for their names, to warn about a Claude Code
role's ``mcp__server__tool`` whose server the team does not declare.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pydantic
from pydantic import ConfigDict

from swarm.config import load_document, validate_document
from swarm.errors import ConfigError
from swarm.mcp.config import McpServer, load_mcp_servers
from swarm.team.layout import team_layout
from swarm.team.spec import AgentSpec

__all__ = [
    "TEAM_FILES",
    "TeamFile",
    "load_team_file",
    "load_team_mcp",
    "mcp_file_warnings",
    "mcp_unset",
    "mcp_warnings",
]

TEAM_FILES = ("team.yaml", "team.yml")
"""The names of a team file: never loaded as a role."""


class TeamFile(pydantic.BaseModel):
    """A team file's fields: ``models`` maps alias names to model specs."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    models: dict[str, str] = pydantic.Field(default_factory=dict)


def load_team_file(directory: Path) -> TeamFile:
    """The team file of ``directory`` (its role folder, else its project root: see
    ``team_layout``; an empty one when there is none).

    Raises ``ConfigError`` naming the file, line and field for a bad one.
    """
    if not directory.is_dir():
        return TeamFile()
    for folder in team_layout(directory).settings_dirs:
        for name in TEAM_FILES:
            path = folder / name
            if path.is_file():
                return validate_document(TeamFile, load_document(path))
    return TeamFile()


def load_team_mcp(directory: Path) -> dict[str, McpServer]:
    """The MCP servers of the team in ``directory``: the project root's ``.mcp.json``,
    then the role folder's (a server named in both is the role folder's)."""
    if not directory.is_dir():
        return load_mcp_servers(directory)
    servers: dict[str, McpServer] = {}
    for folder in reversed(team_layout(directory).settings_dirs):
        servers.update(load_mcp_servers(folder))
    return servers


def mcp_warnings(specs: Iterable[AgentSpec], declared: set[str] | None) -> list[str]:
    """One warning per role and server for its optional ``mcp:`` entries whose server the
    team does not declare (such entries are dropped when the role is built)."""
    found = []
    for spec in specs:
        dropped: dict[str, list[tuple[int, str]]] = {}
        for index, entry in enumerate(spec.tools):
            if not entry.startswith("mcp:") or entry not in spec.optional_tools:
                continue
            server = entry[len("mcp:") :].partition("/")[0]
            if declared is None or server not in declared:
                dropped.setdefault(server, []).append((index, entry))
        for server, entries in dropped.items():
            names = ", ".join(entry for _, entry in entries)
            message = f"mcp server '{server}' not declared by the team: tool dropped ({names})"
            found.append(str(spec.error(message, "tools", entries[0][0])))
    return found


def mcp_unset(specs: Iterable[AgentSpec], servers: Mapping[str, McpServer]) -> list[ConfigError]:
    """The unset ``${VAR}``s of the servers some role of ``specs`` uses: a run refuses to
    start with them; the servers no role uses are never started, so theirs do not count."""
    used: set[str] = set()
    for spec in specs:
        for entry in spec.tools:
            if entry.startswith("mcp:"):
                used.add(entry[len("mcp:") :].partition("/")[0])
    return [error for name in sorted(used & set(servers)) for error in servers[name].unset]


def mcp_file_warnings(servers: Mapping[str, McpServer]) -> list[str]:
    """What reading the team's MCP files ignored or renamed, each once."""
    return list(dict.fromkeys(w for server in servers.values() for w in server.warnings))

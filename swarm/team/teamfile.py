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

from collections.abc import Iterable
from pathlib import Path

import pydantic
from pydantic import ConfigDict

from swarm.config import load_document, validate_document
from swarm.team.spec import AgentSpec

__all__ = ["TEAM_FILES", "TeamFile", "load_team_file", "mcp_warnings"]

TEAM_FILES = ("team.yaml", "team.yml")
"""The names of a team file: never loaded as a role."""


class TeamFile(pydantic.BaseModel):
    """A team file's fields: ``models`` maps alias names to model specs."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    models: dict[str, str] = pydantic.Field(default_factory=dict)


def load_team_file(directory: Path) -> TeamFile:
    """The team file of ``directory`` (an empty one when there is none).

    Raises ``ConfigError`` naming the file, line and field for a bad one.
    """
    for name in TEAM_FILES:
        path = directory / name
        if path.is_file():
            return validate_document(TeamFile, load_document(path))
    return TeamFile()


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

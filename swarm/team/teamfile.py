"""What a team directory says about the whole team, beside its role files.

``team.yaml`` (or ``team.yml``) is the one YAML file of a directory that is not a role: it
holds settings of the team: the model aliases its roles may name, and prices (USD per
million tokens) that set or override what swarm knows of a model::

    models:
      fast: openai:gpt-4.1-mini
      smart: anthropic:claude-opus-4-5
      house-model: {input: 0.50, output: 1.50, cache_read: 0.05}   # prices of a model id
      cheap: {model: openai:gpt-4.1-nano, input: 0.08}   # an alias with its prices

A mapping's key is the model id it prices, unless it names a ``model:`` (then the key is
also an alias for it, and the prices are that model's).

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
    "ModelEntry",
    "TeamFile",
    "load_team_file",
    "load_team_mcp",
    "mcp_file_warnings",
    "mcp_unset",
    "mcp_warnings",
    "model_aliases",
    "model_prices",
]

TEAM_FILES = ("team.yaml", "team.yml")
"""The names of a team file: never loaded as a role."""


class ModelEntry(pydantic.BaseModel):
    """Prices (USD per million tokens) and limits of one model, set in ``models:``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    model: str | None = None
    input: float | None = pydantic.Field(None, ge=0)
    output: float | None = pydantic.Field(None, ge=0)
    cache_read: float | None = pydantic.Field(None, ge=0)
    cache_write: float | None = pydantic.Field(None, ge=0)
    cache_write_1h: float | None = pydantic.Field(None, ge=0)
    context_window: int | None = pydantic.Field(None, gt=0)
    max_output_tokens: int | None = pydantic.Field(None, gt=0)


ModelsField = dict[str, str | ModelEntry]
"""What ``models:`` holds: aliases (strings) and prices (mappings)."""

_PRICE_NAMES = {
    "input": "input_price",
    "output": "output_price",
    "cache_read": "cache_read_price",
    "cache_write": "cache_write_price",
    "cache_write_1h": "cache_write_1h_price",
    "context_window": "context_window",
    "max_output_tokens": "max_output_tokens",
}


def model_aliases(models: Mapping[str, str | ModelEntry]) -> dict[str, str]:
    """The aliases of a ``models:`` mapping: its strings, and its entries naming a model."""
    out: dict[str, str] = {}
    for name, value in models.items():
        if isinstance(value, str):
            out[name] = value
        elif value.model is not None:
            out[name] = value.model
    return out


def model_prices(models: Mapping[str, str | ModelEntry]) -> dict[str, dict[str, float | int]]:
    """The price overrides of a ``models:`` mapping, by model id (a provider prefix such
    as ``anthropic:`` dropped), as ``ModelRegistry.with_prices`` takes them."""
    out: dict[str, dict[str, float | int]] = {}
    for name, value in models.items():
        if isinstance(value, str):
            continue
        target = value.model or name
        model_id = target.rsplit(":", 1)[-1] if ":" in target else target
        fields = value.model_dump(exclude={"model"}, exclude_none=True)
        out[model_id] = {_PRICE_NAMES[k]: v for k, v in fields.items()}
    return out


class TeamFile(pydantic.BaseModel):
    """A team file's fields: ``models`` maps alias names to model specs, and model ids
    (or aliases) to their prices."""

    # built with the first team file read (most teams have none)
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    models: ModelsField = pydantic.Field(default_factory=dict)


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

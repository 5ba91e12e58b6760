"""What a scenario adds to its team's tools: a ``tools:`` map of Python references and
``mcp_servers:`` beside the team's own ``.mcp.json``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarm.errors import ConfigError
from swarm.team import Team
from swarm.team.references import load_tool_reference
from swarm.tools import Tool

if TYPE_CHECKING:  # the scenario file's models are built only where one is read
    from swarm.scenario.spec import Scenario

__all__ = ["scenario_team", "scenario_tools"]


def scenario_tools(scenario: Scenario) -> dict[str, list[Tool[Any]]]:
    """The tools of the scenario's ``tools:`` map, by the name roles list them under.

    References are imported with the current directory and the scenario's directory on
    the import path. Raises ``ConfigError`` (file, line, ``tools.NAME``) for each one that
    cannot be loaded.
    """
    search = [scenario.path.parent] if scenario.path is not None else []
    found: dict[str, list[Tool[Any]]] = {}
    problems: list[ConfigError] = []
    for name, reference in scenario.tools.items():
        try:
            found[name] = load_tool_reference(reference, search=search)
        except ValueError as exc:
            problems.append(scenario.error(f"tool '{reference}': {exc}", "tools", name))
    if problems:
        raise ConfigError.collect(problems)
    return found


def scenario_team(scenario: Scenario, team: Team) -> Team:
    """``team`` with the scenario's MCP servers added (replacing the team's of one name)."""
    if not scenario.mcp_servers:
        return team
    return team.replaced(mcp_servers={**team.mcp_servers, **scenario.mcp_servers})

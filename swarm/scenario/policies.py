"""Which policy guards each role's tools in a scenario run, and whether its rules can
match anything in this team."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.errors import ConfigError
from swarm.guards.policy import Policy, apply_policy, load_policy
from swarm.guards.protect import ProtectedPaths
from swarm.guards.reach import unreachable
from swarm.team import AgentSpec, Team
from swarm.team.reach import team_reach
from swarm.toolbox import make_toolbox
from swarm.tools import Tool

if TYPE_CHECKING:  # the scenario file's models are built only where one is read
    from swarm.scenario.spec import Scenario

__all__ = ["check_policies", "guard_tools", "policy_refs", "role_policies", "run_policy"]


def run_policy(scenario: Scenario) -> Policy:
    """The scenario's policy (``default`` when it names none). Raises ``ConfigError``."""
    base = scenario.path.parent if scenario.path else None
    return load_policy(scenario.policy or "default", relative_to=base)


def policy_refs(
    specs: Mapping[str, AgentSpec], scenario: Scenario | None
) -> dict[str, tuple[str, Path | None]]:
    """Each role's policy as written, and the directory it is relative to: the role's
    own (from its file's directory), else the scenario's, else ``default``."""
    here = scenario.path.parent if scenario is not None and scenario.path else None
    refs: dict[str, tuple[str, Path | None]] = {}
    for spec in specs.values():
        if spec.policy:
            refs[spec.name] = (spec.policy, spec.source.parent if spec.source else here)
        else:
            refs[spec.name] = ((scenario.policy if scenario else None) or "default", here)
    return refs


def role_policies(scenario: Scenario, team: Team) -> dict[str, Policy]:
    """Each role's policy (see ``policy_refs``), one load per file. Raises
    ``ConfigError`` for a policy that does not load."""
    loaded: dict[tuple[str, str], Policy] = {}
    by_role: dict[str, Policy] = {}
    for role, (ref, base) in policy_refs(team.specs, scenario).items():
        key = (ref, str(base))
        if key not in loaded:
            loaded[key] = load_policy(ref, relative_to=base)
        by_role[role] = loaded[key]
    return by_role


def check_policies(
    scenario: Scenario, team: Team, toolbox: dict[str, list[Tool[Any]]] | None = None
) -> dict[str, Policy]:
    """Each role's policy (``role_policies``), once none has a rule that can never match:
    a tool glob that names no tool a role can have, a ``roles`` glob that names no role,
    an argument no named tool takes (see ``swarm.guards.reach``). ``toolbox`` is what the
    scenario adds to the built-in tools. Raises ``ConfigError`` naming each file, line and
    field, with the closest name. A run guards its tools with the very policies checked
    (``guard_tools(policies=...)``), so no file read later escapes the check."""
    with tempfile.TemporaryDirectory() as scratch:  # the built-in tools, for their schemas
        builtins = make_toolbox(Path(scratch))
    reach = team_reach(
        team.specs, toolbox={**builtins, **(toolbox or {})}, mcp_servers=team.mcp_servers
    )
    by_role = role_policies(scenario, team)
    problems = unreachable(by_role.values(), reach)
    if problems:
        raise ConfigError.collect(problems)
    return by_role


def guard_tools(
    scenario: Scenario,
    team: Team,
    workspace: Path,
    idempotent: dict[str, bool],
    *,
    policies: Mapping[str, Policy] | None = None,
    protected: ProtectedPaths | None = None,
) -> Callable[[AgentSpec, list[Tool[Any]]], list[Tool[Any]]]:
    """Each role's tools behind its policy (its own, else the scenario's, else default:
    ``policies`` when given, as ``check_policies`` returns them), with the ``deny`` rules
    of the roles above it as a ceiling and, with ``protected``, the run's protected paths
    (and every ``protect`` glob of the role's and its ancestors' policies) refused to
    every tool; notes in ``idempotent`` which tools are safe to repeat. Raises
    ``ConfigError`` for a policy that does not load."""
    by_role = dict(policies) if policies is not None else role_policies(scenario, team)

    def guard(spec: AgentSpec, tools: list[Tool[Any]]) -> list[Tool[Any]]:
        idempotent.update((t.name, t.idempotent) for t in tools)
        return apply_policy(
            tools,
            by_role[spec.name],
            role=spec.name,
            workspace=workspace,
            ceiling=by_role,
            protected=protected,
        )

    return guard

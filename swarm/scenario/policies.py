"""Which policy guards each role's tools in a scenario run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarm.guards.policy import Policy, apply_policy, load_policy
from swarm.guards.protect import ProtectedPaths
from swarm.scenario.spec import Scenario
from swarm.team import AgentSpec, Team
from swarm.tools import Tool

__all__ = ["guard_tools", "role_policies", "run_policy"]


def run_policy(scenario: Scenario) -> Policy:
    """The scenario's policy (``default`` when it names none). Raises ``ConfigError``."""
    base = scenario.path.parent if scenario.path else None
    return load_policy(scenario.policy or "default", relative_to=base)


def role_policies(scenario: Scenario, team: Team) -> dict[str, Policy]:
    """Each role's policy: its own, else the scenario's, else ``default``. Raises
    ``ConfigError`` for a policy that does not load."""
    loaded: dict[tuple[str, str], Policy] = {}
    by_role: dict[str, Policy] = {}
    for spec in team.specs.values():
        ref = spec.policy or scenario.policy or "default"
        base = (
            spec.source.parent
            if spec.policy and spec.source
            else scenario.path.parent
            if scenario.path
            else None
        )
        key = (ref, str(base))
        if key not in loaded:
            loaded[key] = load_policy(ref, relative_to=base)
        by_role[spec.name] = loaded[key]
    return by_role


def guard_tools(
    scenario: Scenario,
    team: Team,
    workspace: Path,
    idempotent: dict[str, bool],
    *,
    protected: ProtectedPaths | None = None,
) -> Callable[[AgentSpec, list[Tool[Any]]], list[Tool[Any]]]:
    """Each role's tools behind its policy (``role_policies``), with the ``deny`` rules of
    the roles above it as a ceiling and, with ``protected``, the run's protected paths
    (and every ``protect`` glob of the role's and its ancestors' policies) refused to
    every tool; notes in ``idempotent`` which tools are safe to repeat. Raises
    ``ConfigError`` for a policy that does not load."""
    by_role = role_policies(scenario, team)

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

"""The prices a team run charges at, and the check, before anything runs, that every role
under a dollar budget has a price (without one the budget could not be kept)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from swarm.errors import ConfigError
from swarm.models.registry import ModelRegistry, default_registry
from swarm.transports.base import model_name

if TYPE_CHECKING:
    from swarm.loop.agent import Agent
    from swarm.team.graph import Team

__all__ = ["check_dollar_budgets", "team_registry"]


def team_registry(
    team: Team, overrides: Mapping[str, Mapping[str, float | int]] | None = None
) -> ModelRegistry:
    """``default_registry`` with the team's ``models:`` prices, then ``overrides`` (a
    scenario's) over them; the shipped registry itself when neither sets any."""
    prices = {**team.prices, **(overrides or {})}
    return default_registry.with_prices(prices) if prices else default_registry


def check_dollar_budgets(
    team: Team,
    agents: Mapping[str, Agent],
    registry: ModelRegistry,
    *,
    run_usd: float | None = None,
) -> None:
    """Raise ``ConfigError`` (naming each role's file and ``model``) when a role that a
    dollar budget covers has a model with no price. A role's ``budget.usd`` covers it and
    every role it can reach by delegation; ``run_usd`` (a scenario's ``limits.usd``)
    covers the whole team."""
    covered: set[str] = set(team.specs) if run_usd is not None else set()
    for name, role in team.specs.items():
        if role.budget.usd is not None:
            covered |= {name, *team.delegations.descendants(name)}
    problems = []
    for name in sorted(covered):
        agent = agents.get(name)
        model = model_name(agent.transport) if agent is not None else None
        known = registry.lookup(model) if model else None
        if known is None or not known.priced:
            problems.append(
                team.specs[name].error(
                    f"role '{name}' runs under a dollar budget but its model"
                    f" {model or '(unnamed)'!r} has no price: set one under `models:` in"
                    " team.yaml or the scenario (e.g. {input: 3.0, output: 15.0})",
                    "model",
                )
            )
    if problems:
        raise ConfigError.collect(problems)

"""``swarm validate`` and ``swarm graph``: check files and draw the delegation graph."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from swarm._log import quiet
from swarm._text import plural
from swarm._visible import visible
from swarm.cli.checks import is_policy_file, needed_keys, validate
from swarm.cli.exits import BAD_INPUT, OK
from swarm.errors import ConfigError
from swarm.guards.policy import Policy, load_policy
from swarm.team import DEFAULT_MAX_DEPTH, Team

if TYPE_CHECKING:
    from swarm.scenario.spec import Scenario

__all__ = ["cmd_graph", "cmd_validate", "validate"]


def _team_of(target: Path, entry: str | None) -> tuple[Team, Scenario | None]:
    if target.is_dir():
        return Team.load(target, entry=entry), None
    from swarm.scenario.spec import load_scenario  # its models: only for a scenario file

    scenario = load_scenario(target)
    depth = scenario.limits.max_depth
    team = Team.load(
        scenario.team,
        entry=entry or scenario.entry,
        max_depth=DEFAULT_MAX_DEPTH if depth is None else depth,
    )
    return team, scenario


def cmd_validate(args: argparse.Namespace) -> int:
    with quiet():  # every warning is printed below, each once: not logged as well
        return _validate(args)


def _validate(args: argparse.Namespace) -> int:
    if not args.target.exists():
        raise ConfigError("no such file or directory", path=args.target)
    if not (args.target.is_dir() or args.target.is_file()):
        raise ConfigError("not a file or a directory", path=args.target)
    problems, warnings = validate(args.target, args.entry)
    for warning in warnings:
        print(visible(f"warning: {warning}"))
    if problems:
        for problem in problems:
            sys.stderr.write(f"{visible(str(problem))}\n")
        sys.stderr.write(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} found\n")
        return BAD_INPUT
    if is_policy_file(args.target):
        policy = load_policy(args.target)
        print(f"ok: {args.target}: policy '{policy.name}', {plural(len(policy.rules), 'rule')}")
        if getattr(args, "against", None):  # the policy for every role, as `policy test`
            from swarm.cli.policy_test import print_replay, replay_exit, run_replay

            result, count = run_replay(args.against, lambda _role: policy)
            print_replay(result, count)
            return replay_exit(result, args.fail_on)
        return OK
    team, scenario = _team_of(args.target, args.entry)
    keys = needed_keys(team, scenario)
    # a missing provider key is the run's error, never the check's: CI has none
    needs = f"; running needs {', '.join(keys)} (not set here)" if keys else ""
    print(
        f"ok: {args.target}: {plural(len(team), 'role')}, entry '{team.entry}',"
        f" delegation depth {team.depth}{needs}"
    )
    if getattr(args, "against", None):
        return _against(team, scenario, args.against, args.fail_on)
    return OK


def _against(team: Team, scenario: Scenario | None, runs: list[Path], fail_on: str | None) -> int:
    """Replay ``runs`` under each role's policy (``swarm.guards.replay``)."""
    from swarm.cli.policy_test import print_replay, replay_exit, run_replay
    from swarm.scenario.policies import policy_refs

    policies: dict[str, Policy] = {}
    for role, (ref, base) in policy_refs(team.specs, scenario).items():
        policies[role] = load_policy(ref, relative_to=base)
    result, count = run_replay(runs, policies.get)
    print_replay(result, count)
    return replay_exit(result, fail_on)


def cmd_graph(args: argparse.Namespace) -> int:
    team, _ = _team_of(args.target, args.entry)
    sys.stdout.write(team.to_mermaid() if args.format == "mermaid" else team.to_dot())
    return OK

"""``swarm validate`` and ``swarm graph``: check files and draw the delegation graph."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from swarm._log import quiet
from swarm._text import plural
from swarm._visible import visible
from swarm.cli.checks import checked, needed_keys, validate
from swarm.cli.exits import BAD_INPUT, OK
from swarm.errors import ConfigError
from swarm.guards.policy import Policy, load_policy
from swarm.scenario.folders import FolderContents, folder_contents, is_policy_file, is_team_folder
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
    if args.target.is_dir() and not is_team_folder(args.target):
        contents = folder_contents(args.target)
        if contents:  # a folder of scenarios and teams, as `swarm test` finds them
            return _validate_folder(args, contents)
    problems, warnings, read, scenario = checked(args.target, args.entry)
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
    team, scenario = _ok(args.target, args.entry, read, scenario)
    if getattr(args, "against", None):
        return _against(team, scenario, args.against, args.fail_on)
    return OK


def _validate_folder(args: argparse.Namespace, contents: FolderContents) -> int:
    """Check each scenario of a folder (with its team) and each team folder no scenario
    of it names; the problems of all of them, counted once at the end."""
    if getattr(args, "against", None) or args.entry:
        option = "--against" if getattr(args, "against", None) else "--entry"
        raise ConfigError(
            f"{option} is for one team, scenario or policy; this folder holds"
            f" {_holds(contents)}: give one of them",
            path=args.target,
        )
    from swarm.scenario.spec import load_scenario

    named: set[Path] = set()
    for path in contents.scenarios:
        with contextlib.suppress(ConfigError):  # reported when the scenario is checked
            named.add(load_scenario(path).team.resolve())
    targets = [*contents.scenarios, *(t for t in contents.teams if t.resolve() not in named)]
    found: list[ConfigError] = []
    for target in targets:
        problems, warnings, read, scenario = checked(target)
        for warning in warnings:
            print(visible(f"warning: {warning}"))
        if problems:
            said = {str(p) for p in found}  # a team two scenarios share: its problems once
            found += [p for p in problems if str(p) not in said]
        else:
            _ok(target, None, read, scenario)
    if found:
        for problem in found:
            sys.stderr.write(f"{visible(str(problem))}\n")
        sys.stderr.write(f"{plural(len(found), 'problem')} found\n")
        return BAD_INPUT
    return OK


def _holds(contents: FolderContents) -> str:
    parts = [plural(len(contents.scenarios), "scenario"), plural(len(contents.teams), "team")]
    return " and ".join(part for part in parts if not part.startswith("0 "))


def _ok(
    target: Path, entry: str | None, team: Team | None, scenario: Scenario | None
) -> tuple[Team, Scenario | None]:
    """Print the ``ok:`` line of a team or a scenario that has no problem (``team`` and
    ``scenario`` as the check read them; the files are read again without a team)."""
    if team is None:
        team, scenario = _team_of(target, entry)
    keys = needed_keys(team, scenario)
    # a missing provider key is the run's error, never the check's: CI has none
    needs = f"; running needs {', '.join(keys)} (not set here)" if keys else ""
    print(
        f"ok: {target}: {plural(len(team), 'role')}, entry '{team.entry}',"
        f" delegation depth {team.depth}{needs}"
    )
    return team, scenario


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

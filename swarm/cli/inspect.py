"""``swarm validate`` and ``swarm graph``: check files and draw the delegation graph."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from swarm._text import plural
from swarm.cli.exits import BAD_INPUT, OK
from swarm.errors import ConfigError
from swarm.guards.policy import load_policy
from swarm.scenario import Scenario, Script, load_scenario
from swarm.team import Team
from swarm.tools import Tool
from swarm.transports.spec import transport_from_spec

__all__ = ["add_commands", "validate"]


def add_commands(sub: Any) -> None:
    validate_cmd = sub.add_parser(
        "validate",
        help="check role files, policies and the delegation graph (or a scenario)",
        description="Check a team directory or a scenario file; every problem is listed"
        " with its file, line and field.",
    )
    validate_cmd.add_argument("target", type=Path, help="a team directory or a scenario file")
    validate_cmd.add_argument("--entry", help="the entry role (team directories)")
    validate_cmd.set_defaults(handler=cmd_validate)

    graph = sub.add_parser("graph", help="print the delegation graph as Mermaid or DOT")
    graph.add_argument("target", type=Path, help="a team directory or a scenario file")
    graph.add_argument("--format", choices=("mermaid", "dot"), default="mermaid")
    graph.add_argument("--entry", help="the entry role")
    graph.set_defaults(handler=cmd_graph)


def _toolbox(workspace: Path) -> dict[str, Tool[Any]]:
    from swarm.toolbox import make_toolbox

    return dict(make_toolbox(workspace, ask=_never))


async def _never(question: str) -> str:
    return ""


def _team_of(target: Path, entry: str | None) -> tuple[Team, Scenario | None]:
    if target.is_dir():
        return Team.load(target, entry=entry), None
    scenario = load_scenario(target)
    return Team.load(scenario.team, entry=entry or scenario.entry), scenario


def validate(target: Path, entry: str | None = None) -> tuple[list[ConfigError], list[str]]:
    """Every problem with a team directory or a scenario, and the warnings."""
    problems: list[ConfigError] = []
    try:
        team, scenario = _team_of(target, entry)
    except ConfigError as exc:
        return list(exc.problems), []
    with tempfile.TemporaryDirectory() as tmp:
        toolbox = _toolbox(Path(tmp))
    for spec in team.specs.values():
        try:
            spec.to_agent(toolbox)
        except ConfigError as exc:
            problems += exc.problems
        ref = spec.policy or (scenario.policy if scenario else None)
        if ref is not None:
            base = (
                spec.source.parent
                if spec.policy and spec.source
                else (scenario.path.parent if scenario and scenario.path else None)
            )
            try:
                load_policy(ref, relative_to=base)
            except ConfigError as exc:
                problems += exc.problems
    warnings = list(team.warnings)
    if scenario is not None:
        problems += _scenario_problems(scenario, team)
        warnings += _script_warnings(scenario, team)
    return problems, warnings


def _scenario_problems(scenario: Scenario, team: Team) -> list[ConfigError]:
    problems: list[ConfigError] = []
    model = scenario.model
    if isinstance(model, str):
        try:
            transport_from_spec(model, api_key="")  # the spec; a missing key is the run's error
        except ConfigError as exc:
            problems.append(scenario.error(str(exc), "model"))
    if scenario.policy is not None and scenario.path is not None:
        try:
            load_policy(scenario.policy, relative_to=scenario.path.parent)
        except ConfigError as exc:
            problems += exc.problems
    if isinstance(model, Script):
        for key, turns in model.script.items():
            role = key.partition("#")[0]
            if role not in team.specs:
                known = ", ".join(team.specs)
                problems.append(
                    scenario.error(
                        f"'{role}' is not a role of the team (roles: {known})",
                        "model",
                        "script",
                        key,
                    )
                )
                continue
            spec = team.specs[role]
            callable_names = set(spec.tools) | set(spec.delegates)
            for number, turn in enumerate(turns):
                for call in turn.all_calls:
                    if call.tool not in callable_names:
                        offered = ", ".join(sorted(callable_names)) or "none"
                        problems.append(
                            scenario.error(
                                f"turn {number + 1} of '{key}' calls '{call.tool}', which the"
                                f" role does not have (it has: {offered}); the run would"
                                " refuse it",
                                "model",
                                "script",
                                key,
                                number,
                            )
                        )
    return problems


def _script_warnings(scenario: Scenario, team: Team) -> list[str]:
    """Each role a scripted run delegates to (following the script's calls from the entry)
    that has no turns of its own: its agent would end in an error at its first turn."""
    model = scenario.model
    if not isinstance(model, Script):
        return []
    keys_of: dict[str, list[str]] = {}
    for key in model.script:
        keys_of.setdefault(key.partition("#")[0], []).append(key)
    warnings: list[str] = []
    if team.entry not in model.script:
        warnings.append(
            str(scenario.error(f"the entry role '{team.entry}' has no turns", "model", "script"))
        )
    for key in keys_of.get(team.entry, []):
        if key != team.entry:  # the entry agent is one, named without a number
            warnings.append(
                str(
                    scenario.error(
                        f"'{key}' is never played: the entry agent takes the turns of"
                        f" '{team.entry}'",
                        "model",
                        "script",
                        key,
                    )
                )
            )
    seen = {team.entry}
    todo = [team.entry]
    while todo:
        caller = todo.pop(0)
        delegates = set(team.specs[caller].delegates) if caller in team.specs else set()
        for key in keys_of.get(caller, []):
            for number, turn in enumerate(model.script[key]):
                for call in turn.all_calls:
                    if call.tool not in delegates or call.tool in seen:
                        continue
                    seen.add(call.tool)
                    todo.append(call.tool)
                    if call.tool not in keys_of:
                        problem = scenario.error(
                            f"turn {number + 1} of '{key}' delegates to '{call.tool}', which"
                            f" has no turns: that agent would end in an error (give it"
                            f" turns under '{call.tool}:' or '{call.tool}#1:')",
                            "model",
                            "script",
                            key,
                            number,
                        )
                        warnings.append(str(problem))
    return warnings


def cmd_validate(args: argparse.Namespace) -> int:
    if not args.target.exists():
        raise ConfigError("no such file or directory", path=args.target)
    problems, warnings = validate(args.target, args.entry)
    for warning in warnings:
        print(f"warning: {warning}")
    if problems:
        for problem in problems:
            sys.stderr.write(f"{problem}\n")
        sys.stderr.write(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} found\n")
        return BAD_INPUT
    team, _ = _team_of(args.target, args.entry)
    print(
        f"ok: {args.target}: {plural(len(team), 'role')}, entry '{team.entry}',"
        f" delegation depth {team.depth}"
    )
    return OK


def cmd_graph(args: argparse.Namespace) -> int:
    team, _ = _team_of(args.target, args.entry)
    sys.stdout.write(team.to_mermaid() if args.format == "mermaid" else team.to_dot())
    return OK

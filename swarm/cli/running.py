"""``swarm run`` and ``swarm test``."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from swarm._log import quiet, said
from swarm._text import plural
from swarm._visible import visible
from swarm.batch.tasks import load_script_model
from swarm.cli.batch import test_on_executor
from swarm.cli.crew import crew_to_run, parse_inputs, run_crew_command
from swarm.cli.exits import FAILED, OK, Stopped, run_until_stopped
from swarm.cli.held import held_message, outcome_code
from swarm.cli.prompt import TerminalPrompt, interactive
from swarm.cli.records import audit_head_line, resume_command
from swarm.cli.view import AgentBoard, LineView, LiveView, print_summary
from swarm.errors import ConfigError
from swarm.event_codec import event_to_dict
from swarm.events import StreamEvent
from swarm.models.resolver import spec_for
from swarm.record.outcome import RunOutcome
from swarm.record.record import default_runs_dir, new_run_id
from swarm.scenario import (
    Scenario,
    check_expectations,
    load_scenario,
    run_scenario,
)
from swarm.scenario.folders import folder_contents
from swarm.scenario.runner import NO_MODEL_HELP, default_workspace
from swarm.scenario.sandboxing import sandbox_line, swarm_code_line
from swarm.team import Team
from swarm.team.commands import CommandTask, read_command
from swarm.team.crewai import crew_files
from swarm.types import StopReason

__all__ = ["cmd_run", "cmd_test"]


def _with_tool_timeout(scenario: Scenario, seconds: float | None) -> Scenario:
    if seconds is None:
        return scenario
    from dataclasses import replace

    limits = scenario.limits.model_copy(update={"tool_timeout": seconds})
    return replace(scenario, limits=limits)


def _scenario_from_args(args: argparse.Namespace) -> Scenario:
    inputs = parse_inputs(args.input)
    command = None
    if args.command is not None:
        if args.team is None:
            raise ConfigError("--command runs with --team DIR: give the team too")
        command = CommandTask(read_command(args.command), tuple(args.target))
    if args.team is not None:
        task = command.title if command is not None else " ".join(args.target).strip()
        if not task and crew_files(args.team) is None:
            raise ConfigError("give the task after the options: swarm run --team DIR ... 'task'")
        if args.model is None:
            raise ConfigError(NO_MODEL_HELP)
        here = Path.cwd().resolve()
        if args.workspace is None and here in (Path.home().resolve(), Path(here.anchor)):
            # the agents would write anywhere in it: the place must be chosen, not defaulted
            raise ConfigError(
                f"a --team run works in the current directory, and {here} is your home"
                " directory or the root: cd into a project, or give --workspace DIR"
            )
        name = "run"
        return Scenario(
            name=name,
            task=task or "(the crew's tasks)",
            inputs=inputs,
            command=command,
            team=args.team,
            entry=args.entry,
            policy=args.policy,
            # where the command is run, as coding agents do: the task is about these files
            workspace=args.workspace or Path.cwd(),
        )
    if len(args.target) != 1:
        raise ConfigError("give one scenario file (or --team DIR with a task)")
    scenario = load_scenario(args.target[0])
    if args.policy is not None or args.entry is not None:
        from dataclasses import replace

        scenario = replace(
            scenario,
            policy=args.policy or scenario.policy,
            entry=args.entry or scenario.entry,
        )
    if inputs:
        from dataclasses import replace

        scenario = replace(scenario, inputs={**scenario.inputs, **inputs})
    return scenario


def _files_in(directory: Path) -> int:
    """How many files a directory holds (0 when there is none)."""
    try:
        return sum(1 for p in directory.rglob("*") if p.is_file() or p.is_symlink())
    except OSError:
        return 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.model is not None and not args.model.startswith("script:"):
        args.model = spec_for(args.model)  # a bad model is the first thing said
    scenario = _with_tool_timeout(_scenario_from_args(args), args.tool_timeout)
    if isinstance(args.model, str) and args.model.startswith("script:"):
        # a scripted model from a file, as `swarm batch --model script:FILE` takes it
        from dataclasses import replace

        scenario = replace(scenario, model=load_script_model(args.model.removeprefix("script:")))
        args.model = None
    if args.replay is None and args.model is None and scenario.model is None:
        raise ConfigError(NO_MODEL_HELP, path=scenario.path, field="model")
    crew = crew_to_run(
        scenario, task_given=args.team is None or bool(" ".join(args.target).strip())
    )
    if crew is not None:
        return run_crew_command(args, scenario, crew)
    console = Console(stderr=args.json)
    prompt = TerminalPrompt() if interactive() and not args.json else None
    with quiet():  # its warnings are printed here, once: not logged as well
        team = Team.load(scenario.team, entry=scenario.entry)
    for warning in team.warnings:
        sys.stderr.write(visible(f"warning: {warning}") + "\n")
    said(team.warnings)  # nor when the run loads the team again
    run_id = new_run_id()
    runs_dir = (args.runs_dir or scenario.runs_dir or default_runs_dir()).absolute()
    board = AgentBoard(team.entry, frozenset(team.specs))
    workspace = (args.workspace or scenario.workspace or default_workspace(scenario)).resolve()
    chosen = args.workspace or scenario.workspace  # a place given is used as it is
    left = 0 if chosen else _files_in(workspace)
    reused = f" (reused: {plural(left, 'file')} of an earlier run still in it)" if left else ""
    console.print(f"workspace: {workspace}{reused}", markup=False, highlight=False, soft_wrap=True)
    tracing = _tracing(args, team.entry, scenario)
    console.print(f"sandbox: {sandbox_line(scenario)}", markup=False, highlight=False)
    own_code = swarm_code_line(scenario, team, workspace)
    if own_code is not None:
        console.print(f"swarm code: {own_code}", markup=False, highlight=False, soft_wrap=True)

    def json_line(event: StreamEvent) -> None:
        if piped_away:
            return
        try:
            sys.stdout.write(json.dumps(event_to_dict(event)) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader left (`| head`): the run goes on, unseen
            piped_away.append(True)

    piped_away: list[bool] = []

    async def go() -> RunOutcome:
        if args.json:
            view: Any = json_line
            context: Any = _Null()
        elif args.plain or not console.is_terminal:
            context = view = LineView(board, sys.stdout)
        else:
            context = view = LiveView(board, console)
            if prompt is not None:
                prompt.pause = view.paused
        with context:
            return await run_scenario(
                scenario,
                model=args.model,
                workspace=workspace,
                runs_dir=runs_dir,
                run_id=run_id,
                record=args.record,
                replay=args.replay,
                approver=prompt.approve if prompt else None,
                ask_user=prompt.ask_user if prompt else None,
                on_event=view if tracing is None else _both(view, tracing[0]),
                observers=() if tracing is None else (tracing[0],),
                on_ask=args.on_ask,
                ask_timeout=args.ask_timeout,
            )

    try:
        outcome = run_until_stopped(go)
    except Stopped as stop:
        _end_tracing(tracing)
        _report(args, runs_dir / run_id)
        sys.stderr.write(
            f"\n{stop.how}: every agent was stopped and the run record is written;"
            f" resume with:\n  {resume_command(runs_dir / run_id, run_id)}\n"
        )
        return stop.code
    if args.json:
        sys.stdout.write(json.dumps({"type": "summary", **outcome.summary()}) + "\n")
    else:
        print_summary(console, outcome, board)
        head = audit_head_line(outcome.record_dir)
        if head:
            console.print(head, markup=False, soft_wrap=True)
    _end_tracing(tracing)
    _report(args, outcome.record_dir)
    if outcome.stop_reason == StopReason.awaiting_approval:
        resume = resume_command(outcome.record_dir, outcome.run_id)
        sys.stderr.write(held_message(outcome.record_dir, outcome.run_id, resume))
    return outcome_code(outcome)


def _tracing(args: argparse.Namespace, root: str, scenario: Scenario) -> tuple[Any, Any] | None:
    """With ``--otel``: the observer that makes the spans and the provider that sends
    them. Without the extra installed, a ``ConfigError`` saying how to get it."""
    if not args.otel:
        return None
    try:
        from swarm.otel import OtelObserver, otlp_tracer_provider

        provider = otlp_tracer_provider()
    except ImportError as exc:
        raise ConfigError(f"--otel: {exc}") from None
    model = args.model or (scenario.model if isinstance(scenario.model, str) else None)
    return OtelObserver(root, model=model or "scripted", tracer_provider=provider), provider


def _end_tracing(tracing: tuple[Any, Any] | None) -> None:
    """End the spans a stopped run left open, and send what is left."""
    if tracing is not None:
        tracing[0].close()
        tracing[1].shutdown()


def _both(view: Any, observer: Any) -> Any:
    def see(event: StreamEvent) -> None:
        view(event)
        observer(event)

    return see


def _report(args: argparse.Namespace, record: Path) -> None:
    """Write the HTML report when ``--report`` asked for it, and say where."""
    if not args.report or not record.is_dir():
        return
    from swarm.report import write_report

    written = write_report(record)
    (sys.stderr if args.json else sys.stdout).write(f"Report: {written}\n")


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _collect(targets: list[Path]) -> list[Path]:
    """The scenario files of ``targets``: each file given, and the scenarios a folder
    holds (``swarm.scenario.folders``: the rule ``swarm validate`` follows too)."""
    files: list[Path] = []
    for target in targets:
        if target.is_dir():
            found = folder_contents(target)
            if not found.scenarios and found.teams:
                raise ConfigError(_teams_only(target, found.teams), path=target)
            files += found.scenarios
        elif target.exists():
            files.append(target)
        else:
            raise ConfigError("no such file or directory", path=target)
    return files


def _teams_only(target: Path, teams: tuple[Path, ...]) -> str:
    """What to say of a folder that holds teams but no scenario to test."""
    if teams == (target,):
        return (
            "a team folder (role files), not a scenario: `swarm validate` checks it,"
            " `swarm run --team` runs it on a task"
        )
    return (
        f"holds no scenario (a YAML file with 'task:'), only {plural(len(teams), 'team folder')}"
        f" ({', '.join(map(str, teams))}): `swarm validate` checks them"
    )


def cmd_test(args: argparse.Namespace) -> int:
    files = _collect(args.targets)
    if not files:
        raise ConfigError("no scenario files found in " + ", ".join(map(str, args.targets)))
    if args.executor is not None or args.parallel is not None or args.runs_dir is not None:
        return test_on_executor(args, files)
    passed = failed = 0
    for path in files:
        try:
            scenario = load_scenario(path)
        except ConfigError as exc:  # a failed test; the other files still run
            failed += 1
            print(f"{path} ERROR  (invalid scenario file)")
            for invalid in exc.problems:
                print(f"    {invalid}")
            continue
        label = f"{scenario.path}::{scenario.name}"
        if scenario.expect is None:
            print(f"{label} ERROR  (no 'expect' section: nothing to check)")
            failed += 1
            continue
        workspace = Path(tempfile.mkdtemp(prefix=f"swarm-test-{scenario.name}-"))
        started = time.perf_counter()
        try:
            outcome = anyio.run(_run_quietly, scenario, args.model, workspace)
        except ConfigError as exc:
            print(visible(f"{label} ERROR  {exc}", multiline=True))
            failed += 1
            shutil.rmtree(workspace, ignore_errors=True)  # the run never started
            continue
        problems = check_expectations(scenario.expect, outcome)
        took = time.perf_counter() - started
        if problems:
            failed += 1
            print(f"{label} FAILED ({took:.2f}s)")
            for problem in problems:  # they quote what the model wrote
                print(f"    {visible(problem)}")
            print(f"    run record: {outcome.record_dir}")
            print(f"    workspace:  {workspace}")  # a failed run's files are kept to look at
        else:
            passed += 1
            print(f"{label} PASSED ({took:.2f}s)")
            if args.keep:
                print(f"    workspace:  {workspace}")
            else:
                shutil.rmtree(workspace, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return OK if failed == 0 else FAILED


async def _run_quietly(scenario: Scenario, model: str | None, workspace: Path) -> RunOutcome:
    return await run_scenario(scenario, model=model, workspace=workspace)

"""``swarm run --team CREW``: a CrewAI crew's task list, one run per task, in order."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from swarm._visible import visible
from swarm.cli.exits import FAILED, OK
from swarm.errors import ConfigError
from swarm.record.record import default_runs_dir
from swarm.scenario import Scenario
from swarm.scenario.crew import CrewStep, crew_of, run_crew
from swarm.scenario.runner import default_workspace
from swarm.team.crewai import Crew, CrewTask
from swarm.types import StopReason

__all__ = ["crew_to_run", "parse_inputs", "run_crew_command"]


def parse_inputs(pairs: list[str]) -> dict[str, str]:
    """``--input key=value`` pairs as a mapping. Raises ``ConfigError`` for one that has
    no ``=`` or no key."""
    inputs: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ConfigError(f"--input {pair!r}: expected KEY=VALUE (e.g. --input topic=AI)")
        inputs[key.strip()] = value
    return inputs


def crew_to_run(scenario: Scenario, task_given: bool) -> Crew | None:
    """The crew whose task list this run plays: the team's, when no task was given."""
    return None if task_given else crew_of(scenario)


def run_crew_command(args: argparse.Namespace, scenario: Scenario, crew: Crew) -> int:
    """Run every task of ``crew`` and print each one's role, result and record."""
    for warning in crew.warnings:
        sys.stderr.write(visible(f"warning: {warning}") + "\n")
    runs_dir: Path = (args.runs_dir or scenario.runs_dir or default_runs_dir()).absolute()
    workspace = (args.workspace or scenario.workspace or default_workspace(scenario)).resolve()
    print(f"workspace: {workspace}")
    total = len(crew.tasks)
    numbers = {task.name: n for n, task in enumerate(crew.tasks, start=1)}

    def started(task: CrewTask, role: str | None) -> None:
        print(f"task {numbers[task.name]}/{total}: {task.name} ({role or 'the entry role'})")
        sys.stdout.flush()

    model = args.model  # a script: model is the scenario's by now (one script, every task)

    async def go() -> list[CrewStep]:
        return list(
            await run_crew(
                scenario,
                crew,
                model=model,
                workspace=workspace,
                runs_dir=runs_dir,
                on_task=started,
            )
        )

    steps = anyio.run(go)
    ended = True
    for step in steps:
        outcome = step.outcome
        print(visible(f"--- {step.task.name}: {outcome.stop_reason.value}"))
        print(visible(outcome.final_text or ""))
        print(f"record: {outcome.record_dir}")
        ended = ended and outcome.stop_reason == StopReason.end_turn
    return OK if ended and len(steps) == total else FAILED

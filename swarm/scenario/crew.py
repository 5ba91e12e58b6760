"""Running a CrewAI crew's task list: each task a run of the team, in order.

Each task of ``tasks.yaml`` runs as a run of its own (its record, its audit log, the run's
policy and sandbox), from the role that takes it (its agent; a hierarchical crew's
manager), with the outputs of its ``context`` tasks in its text. A task with a typed
output (``output_pydantic``) gives that role the task's schema for its run: its answer is
checked (an invalid one sent back to the model), and the next tasks get it as JSON. The
crew stops at the first task that does not end its turn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from swarm.errors import ConfigError
from swarm.events import StreamEvent
from swarm.record.outcome import RunOutcome
from swarm.scenario.runner import resolve_transport, run_scenario
from swarm.scenario.spec import Scenario
from swarm.team.crewai import Crew, CrewTask, crew_files, load_crew, missing_inputs
from swarm.transports.base import CompletionTransport
from swarm.types import StopReason

__all__ = ["CrewStep", "crew_of", "run_crew"]


@dataclass(frozen=True, slots=True)
class CrewStep:
    """One task of a crew run: the task, the role that took it and the run's outcome."""

    task: CrewTask
    role: str | None
    outcome: RunOutcome


def crew_of(scenario: Scenario) -> Crew | None:
    """The CrewAI crew of the scenario's team directory (``None`` when it is not one).
    Raises ``ConfigError`` for bad crew files, or inputs its placeholders lack."""
    found = crew_files(scenario.team) if scenario.team.is_dir() else None
    if found is None:
        return None
    crew = load_crew(*found)
    missing = missing_inputs(crew, scenario.inputs)
    if missing:
        names = ", ".join(missing)
        example = " ".join(f"--input {name}=..." for name in missing)
        raise ConfigError(f"the crew needs inputs for {{{names}}}: give {example}", path=found[1])
    return crew


async def run_crew(
    scenario: Scenario,
    crew: Crew,
    *,
    model: str | CompletionTransport | None = None,
    workspace: Path | None = None,
    runs_dir: Path | None = None,
    on_event: Callable[[StreamEvent], None] | None = None,
    on_task: Callable[[CrewTask, str | None], None] | None = None,
) -> list[CrewStep]:
    """Run ``crew``'s tasks in order on ``scenario`` (its team, policy, model, inputs);
    one model (one script) serves every task. ``on_task(task, role)`` is called as each
    task starts. Returns the steps run: fewer than the tasks when one did not end its
    turn."""
    transport = resolve_transport(scenario, model)
    outputs: dict[str, str] = {}
    steps: list[CrewStep] = []
    for task in crew.tasks:
        role = crew.entry_of(task)
        if on_task is not None:
            on_task(task, role)
        text = task.text(scenario.inputs, outputs)
        one = dataclasses.replace(scenario, task=text, entry=role, output=task.output)
        outcome = await run_scenario(
            one, model=transport, workspace=workspace, runs_dir=runs_dir, on_event=on_event
        )
        steps.append(CrewStep(task, role, outcome))
        if outcome.stop_reason != StopReason.end_turn:
            break
        outputs[task.name] = outcome.final_text or ""
    return steps


def outputs_of(steps: list[CrewStep]) -> Mapping[str, str]:
    """Each task's final text, by task name."""
    return {step.task.name: step.outcome.final_text or "" for step in steps}

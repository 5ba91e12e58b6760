"""Scenarios: a team, a policy, a workspace, a task and a model in one file, run with a
record of everything, and checked against expectations so they work as tests."""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports

if TYPE_CHECKING:
    from swarm.record.record import (
        RunRecord,
        default_runs_dir,
    )
    from swarm.scenario.expect import (
        check_expectations,
    )
    from swarm.scenario.runner import (
        CallTally,
        RunOutcome,
        prepare_workspace,
        resume_run,
        run_scenario,
    )
    from swarm.scenario.script import (
        ScriptedModel,
        estimate_tokens,
        role_of,
    )
    from swarm.scenario.spec import (
        Expectations,
        Limits,
        Scenario,
        Script,
        ScriptCall,
        ScriptTurn,
        load_scenario,
        scenario_from_document,
    )

__all__ = [
    "CallTally",
    "Expectations",
    "Limits",
    "RunOutcome",
    "RunRecord",
    "Scenario",
    "Script",
    "ScriptCall",
    "ScriptTurn",
    "ScriptedModel",
    "check_expectations",
    "default_runs_dir",
    "estimate_tokens",
    "load_scenario",
    "prepare_workspace",
    "resume_run",
    "role_of",
    "run_scenario",
    "scenario_from_document",
]

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.scenario.expect": ("check_expectations",),
    "swarm.record.record": (
        "RunRecord",
        "default_runs_dir",
    ),
    "swarm.scenario.runner": (
        "CallTally",
        "RunOutcome",
        "prepare_workspace",
        "resume_run",
        "run_scenario",
    ),
    "swarm.scenario.script": (
        "ScriptedModel",
        "estimate_tokens",
        "role_of",
    ),
    # the file format's models are built on first use: `swarm validate DIR` needs none
    "swarm.scenario.spec": (
        "Expectations",
        "Limits",
        "Scenario",
        "Script",
        "ScriptCall",
        "ScriptTurn",
        "load_scenario",
        "scenario_from_document",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)

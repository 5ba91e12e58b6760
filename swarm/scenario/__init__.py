"""Scenarios: a team, a policy, a workspace, a task and a model in one file, run with a
record of everything, and checked against expectations so they work as tests."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from swarm.scenario.expect import check_expectations as check_expectations
    from swarm.scenario.runner import (
        prepare_workspace as prepare_workspace,
        resume_run as resume_run,
        run_scenario as run_scenario,
    )
    from swarm.scenario.script import (
        ScriptedModel as ScriptedModel,
        estimate_tokens as estimate_tokens,
    )
    from swarm.scenario.spec import (
        Expectations as Expectations,
        Limits as Limits,
        Scenario as Scenario,
        Script as Script,
        ScriptCall as ScriptCall,
        ScriptTurn as ScriptTurn,
        load_scenario as load_scenario,
        scenario_from_document as scenario_from_document,
    )


_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.scenario.expect": ("check_expectations",),
    "swarm.scenario.runner": (
        "prepare_workspace",
        "resume_run",
        "run_scenario",
    ),
    "swarm.scenario.script": (
        "ScriptedModel",
        "estimate_tokens",
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

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)

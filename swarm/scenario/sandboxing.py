"""Which sandbox a run's commands get, said once at the start of the run and recorded."""

from __future__ import annotations

from pathlib import Path

from swarm.guards.policy import load_policy
from swarm.sandbox import SandboxSettings, SandboxUnavailable, find_sandbox
from swarm.scenario.spec import Scenario

__all__ = ["protected_paths", "sandbox_line"]


def sandbox_line(scenario: Scenario) -> str:
    """One line naming the sandbox that confines the commands of ``scenario``'s run, by
    the scenario's policy (``default`` when it names none), e.g. ``bubblewrap 0.8.0,
    network none``; ``unavailable: ...`` when the policy requires one and none works
    (shell calls are then denied). A role with its own policy may differ: its calls'
    audit records name the sandbox of each. Raises ``ConfigError`` for a bad policy."""
    base = scenario.path.parent if scenario.path else None
    policy = load_policy(scenario.policy or "default", relative_to=base)
    settings = policy.sandbox or SandboxSettings()
    try:
        return find_sandbox(settings).describe(settings.network)
    except SandboxUnavailable as exc:
        return f"unavailable: {exc}"


def protected_paths(record_dir: Path, workspace: Path) -> tuple[Path, ...]:
    """What commands must not see of the run records: the directory of all runs (other
    runs' records too), or only this run's when the workspace lies inside that one."""
    runs = record_dir.parent
    if workspace == runs or runs in workspace.parents:
        return (record_dir,)
    return (runs,)

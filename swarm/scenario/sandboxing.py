"""Which sandbox a run's commands get, said once at the start of the run and recorded, and
what of the run no tool may change (its protected paths)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from swarm.guards._sandboxing import describe_sandbox
from swarm.guards.policy import Policy, load_policy
from swarm.guards.protect import ProtectedPaths, swarm_code
from swarm.mcp.config import MCP_FILES
from swarm.sandbox import SandboxSettings, SandboxUnavailable, find_sandbox
from swarm.scenario.policies import role_policies, run_policy
from swarm.scenario.spec import Scenario
from swarm.team import Team
from swarm.team.references import is_reference, load_tool_reference
from swarm.team.teamfile import TEAM_FILES

__all__ = ["protected_paths", "run_controls", "sandbox_line", "swarm_code_line"]


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
        return describe_sandbox(find_sandbox(settings), settings)
    except SandboxUnavailable as exc:
        return f"unavailable: {exc}"


def protected_paths(record_dir: Path, workspace: Path) -> tuple[Path, ...]:
    """What commands must not see of the run records: the directory of all runs (other
    runs' records too), or only this run's when the workspace lies inside that one."""
    runs = record_dir.parent
    if workspace == runs or runs in workspace.parents:
        return (record_dir,)
    return (runs,)


def run_controls(
    scenario: Scenario,
    team: Team,
    workspace: Path,
    policies: Mapping[str, Policy],
    run_policy: Policy,
) -> ProtectedPaths:
    """The protected paths of ``scenario``'s run in ``workspace``: its team directory,
    scenario file and every file of the policies its roles use (``policies``) and of the
    scenario's own (``run_policy``), beside what every run protects (see
    ``ProtectedPaths.of_run``). A team directory that is the workspace or holds it is
    protected file by file (its role, team and MCP files), not whole. swarm's own code in
    the workspace stays protected unless every one of those policies says
    ``protect_swarm: false``. Each role's ``protect`` globs apply to its calls
    (``ProtectGuard``), not here."""
    used = [run_policy, *policies.values()]
    _import_role_tools(team)  # so the modules they come from are known (imported_code)
    directory = scenario.team.absolute()
    root = workspace.resolve()
    if directory.is_dir() and (root == directory.resolve() or directory.resolve() in root.parents):
        named = [*TEAM_FILES, *MCP_FILES]
        controls = [s.source for s in team.specs.values() if s.source is not None]
        controls += [directory / name for name in named]
    else:
        controls = [directory]
    controls += [f for policy in used for f in policy.files]
    if scenario.path is not None:
        controls.append(scenario.path)
    return ProtectedPaths.of_run(
        workspace,
        dict.fromkeys(Path(p).absolute() for p in controls),
        protect_swarm=any(policy.protect_swarm for policy in used),
    )


def _import_role_tools(team: Team) -> None:
    """Import the Python tools the roles name, as building the team will a moment later;
    one that does not load is left for that to report."""
    for spec in team.specs.values():
        search = [spec.source.parent] if spec.source is not None else []
        for entry in spec.tools:
            if is_reference(entry):
                with contextlib.suppress(ValueError):
                    load_tool_reference(entry, search=search)


def swarm_code_line(scenario: Scenario, team: Team, workspace: Path) -> str | None:
    """One line naming swarm's own code in ``workspace`` (an editable checkout) and
    whether the team may change it, for the start of the run; ``None`` when the workspace
    holds none. Raises ``ConfigError`` for a policy that does not load."""
    found = swarm_code(workspace)
    if not found:
        return None
    used = [run_policy(scenario), *role_policies(scenario, team).values()]
    names = ", ".join(str(p) for p in found)
    if any(policy.protect_swarm for policy in used):
        return f"{names} is swarm's own code: read-only to the team (protect_swarm)"
    return f"{names} is swarm's own code: the team may change it (protect_swarm: false)"

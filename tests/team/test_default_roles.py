"""The default team in ``roles/``: it loads, validates and builds against the workspace tools."""

import re
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool
from swarm.audit import AuditLog
from swarm.errors import GuardError
from swarm.guards import apply_policy, load_policy
from swarm.scope import RunScope, use_scope
from swarm.team import DEFAULT_MAX_DEPTH, AgentSpec, Team, default_roles_dir, load_agents

REPO_ROLES = Path(__file__).resolve().parents[2] / "roles"
SPECIALISTS = {"architect", "developer", "reviewer", "researcher", "tester"}


@pytest.fixture
def team() -> Team:
    return Team.load(default_roles_dir())


def test_default_roles_dir_is_the_repository_roles_directory() -> None:
    assert default_roles_dir() == REPO_ROLES


def test_default_team_validates_with_the_orchestrator_as_entry(team: Team) -> None:
    assert team.entry == "orchestrator"
    assert set(team.specs) == {"orchestrator", *SPECIALISTS}
    assert team.warnings == ()
    assert 1 <= team.depth <= DEFAULT_MAX_DEPTH


def test_orchestrator_delegates_to_every_specialist(team: Team) -> None:
    assert set(team.delegates_of("orchestrator")) == SPECIALISTS


def test_every_role_builds_against_the_workspace_tools(toolbox: dict[str, Tool[Any]]) -> None:
    agents = load_agents(default_roles_dir(), toolbox)
    for name, (description, agent) in agents.items():
        assert description, name
        assert agent.name == name
        assert agent.tools, name


def test_read_only_roles_cannot_write(team: Team) -> None:
    writers = {"write_file", "edit_file"}
    for name in ("orchestrator", "reviewer", "researcher"):
        assert not writers & set(team.specs[name].tools), name


def test_every_role_has_a_real_prompt_limits_and_a_budget(team: Team) -> None:
    for name, spec in team.specs.items():
        assert len(spec.system) > 1000, name
        assert "final message" in spec.system or name == "orchestrator", name
        assert 10 <= spec.max_iterations <= 100, name
        assert spec.compaction is not None, name
        assert spec.budget.tokens and spec.budget.seconds, name


def test_reviewer_shows_the_markdown_format(team: Team) -> None:
    reviewer = team.specs["reviewer"]
    assert reviewer.source is not None and reviewer.source.suffix == ".md"
    assert reviewer.max_iterations == 25  # from Claude Code's maxTurns
    assert reviewer.policy == "readonly"


def test_the_readme_beside_the_roles_is_not_a_role() -> None:
    assert (REPO_ROLES / "README.md").is_file()
    assert "README" not in Team.load(REPO_ROLES).specs


def test_the_default_team_exports_as_mermaid(team: Team) -> None:
    text = team.to_mermaid()
    assert text.startswith('flowchart TD\n    orchestrator(["orchestrator"])\n')
    assert "    developer --> tester\n" in text


# -- what a prompt tells a role to run, its policy allows --------------------------------

# Phrases that tell a role to run code (a test suite, a script); "do not run tests" is not one.
RUNS_CODE = re.compile(
    r"(?<!not )(?<!never )\b(run the (relevant )?tests|run them with shell|running a script"
    r"|run the wider suite)",
    re.I,
)


async def _shell(command: str) -> str:
    return "ran"


async def allowed(spec: AgentSpec, command: str, workspace: Path) -> bool:
    """Whether the role's own policy (else ``default``) lets its shell run ``command``."""
    base = spec.source.parent if spec.policy and spec.source else None
    policy = load_policy(spec.policy or "default", relative_to=base)
    (shell,) = apply_policy([Tool(name="shell", handler=_shell)], policy, workspace=workspace)
    with (
        AuditLog(workspace.parent / "audit.jsonl", fsync=False) as log,
        use_scope(RunScope(path=spec.name, run_id="test", observers=(log,))),
    ):
        try:
            await shell(command=command)
        except GuardError:
            return False
    return True


@pytest.mark.anyio
async def test_every_role_may_run_what_its_prompt_tells_it_to(team: Team, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    checked = 0
    for name, spec in team.specs.items():
        named = [c.replace("<path>", "calc.py") for c in re.findall(r"`(git [^`]+)`", spec.system)]
        if RUNS_CODE.search(spec.system):
            named.append("python3 -m pytest -q")
        for command in named:
            checked += 1
            assert await allowed(spec, command, workspace), (
                f"{name}'s prompt tells it to run `{command}`, which its policy denies"
            )
    assert checked >= 6  # the reviewer's and researcher's git commands, the test runners


@pytest.mark.anyio
async def test_read_only_roles_are_not_told_to_run_code(team: Team, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name in ("reviewer", "researcher"):
        spec = team.specs[name]
        assert not await allowed(spec, "python3 -m pytest -q", workspace), name
        assert not RUNS_CODE.search(spec.system), name

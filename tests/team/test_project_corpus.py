"""Claude Code projects as found (``tests/team/corpus/projects``, modelled on public
repositories): agents in every form, skills with resources and scripts, commands, and
``.mcp.json`` files with client-only keys, each project loaded from its root with no API
key and no MCP secret set."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.cli.checks import needed_keys, validate
from swarm.team import Team
from swarm.team.layout import team_layout

PROJECTS = Path(__file__).parent / "corpus" / "projects"
ALL = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())
SECRETS = ("GITHUB_PERSONAL_ACCESS_TOKEN", "DATABASE_URL", "WAREHOUSE_URL")


@pytest.fixture(autouse=True)
def no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", *SECRETS):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", ALL)
def test_each_project_validates_from_its_root(name: str) -> None:
    problems, warnings = validate(PROJECTS / name)
    assert problems == []
    assert len(warnings) == len(set(warnings))  # each warning once


@pytest.mark.parametrize("name", ALL)
def test_each_project_loads_its_roles_skills_and_servers(name: str) -> None:
    team = Team.load(PROJECTS / name)
    layout = team_layout(PROJECTS / name)
    assert layout.skills and team.skills
    assert layout.commands is not None
    # commands, skills and the project's own Markdown are never roles
    sources = {spec.source.parent for spec in team.specs.values() if spec.source}
    assert sources == {layout.roles}


def test_the_webapp_agents_map_as_claude_code_reads_them() -> None:
    team = Team.load(PROJECTS / "webapp")
    specs = team.specs
    assert sorted(specs) == [
        "code-reviewer",
        "db-helper",
        "docs-writer",
        "issue-bot",
        "main",
        "planner",
        "test-runner",
    ]
    assert specs["test-runner"].shell_commands == ("npm test", "npx vitest")
    assert specs["db-helper"].shell_commands == ("psql -c",)
    assert specs["db-helper"].shell_denied == ("psql -c DROP",)
    assert "write_file" not in specs["db-helper"].tools
    assert specs["planner"].policy == "readonly" and specs["planner"].max_iterations == 12
    assert specs["docs-writer"].system.startswith("You write and update the documentation")
    assert "load_skill" in specs["issue-bot"].tools
    assert "- release-notes: Write release notes" in specs["issue-bot"].system
    assert sorted(team.mcp_servers) == ["browser_tools", "github", "postgres", "sentry"]
    said = "\n".join(team.warnings)
    assert "'TaskOutput' has no equivalent" in said
    assert "its commands are never run" in said


def test_validation_notes_only_the_secrets_used_servers_need() -> None:
    team = Team.load(PROJECTS / "webapp")
    keys = needed_keys(team)
    assert "GITHUB_PERSONAL_ACCESS_TOKEN" in keys and "DATABASE_URL" in keys
    assert "ANTHROPIC_API_KEY" in keys


def test_skills_are_found_in_every_place_claude_code_looks() -> None:
    assert sorted(Team.load(PROJECTS / "webapp").skills) == ["api-conventions", "release-notes"]
    profiler = Team.load(PROJECTS / "data-pipeline").skills["csv-profiler"]
    assert profiler.allowed_tools == {"read_file", "shell"}
    assert profiler.shell_commands == ("python3",)
    plugin = Team.load(PROJECTS / "review-plugin")
    assert sorted(plugin.skills) == ["owasp-checklist"]
    assert "load_skill" in plugin.specs["security-reviewer"].tools


def test_a_skill_hidden_from_the_model_is_not_listed() -> None:
    skill = Team.load(PROJECTS / "webapp").skills["api-conventions"]
    assert skill.listed is False
    assert any("field 'context'" in w for w in skill.warnings)

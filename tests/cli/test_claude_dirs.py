"""``swarm validate``, ``graph`` and ``run`` on a Claude Code ``.claude/agents`` directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any as Swarm

import pytest
from swarm_command import run_swarm

REVIEWER = (
    "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep\n"
    "model: {model}\n---\nReview.\n"
)
TESTER = (
    "---\nname: test-runner\ndescription: Runs the tests. Examples: user: run them\n"
    "tools: Bash\n---\nTest.\n"
)


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    directory = tmp_path / ".claude" / "agents"
    directory.mkdir(parents=True)
    (directory / "code-reviewer.md").write_text(REVIEWER.format(model="haiku"))
    (directory / "test-runner.md").write_text(TESTER)
    return directory


def test_validate_accepts_a_claude_directory_and_shows_the_implicit_orchestrator(
    agents: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["ANTHROPIC_API_KEY"] = "test-key"
    done = run_swarm(["validate", agents], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ok:" in done.stdout and "3 roles, entry 'main'" in done.stdout
    assert "warning: " in done.stdout and "implicit orchestrator 'main'" in done.stdout
    assert "test-runner.md:3: the front matter is not valid YAML" in done.stdout
    assert "Traceback" not in done.stderr


def test_validate_needs_no_provider_key_and_notes_the_one_running_needs(
    swarm: Swarm, agents: Path
) -> None:
    done = swarm("validate", agents)  # the test environment has no API keys
    assert done.returncode == 0, done.stderr
    assert "ok:" in done.stdout
    assert "running needs ANTHROPIC_API_KEY (not set here)" in done.stdout
    assert "Traceback" not in done.stderr


def test_validate_rejects_a_role_model_no_provider_understands(swarm: Swarm, agents: Path) -> None:
    (agents / "code-reviewer.md").write_text(REVIEWER.format(model="mistral-large"))
    done = swarm("validate", agents)
    assert done.returncode == 2
    assert f"{agents / 'code-reviewer.md'}:5: field 'model': unknown model provider" in (
        done.stderr
    )
    assert "1 problem found" in done.stderr


def test_graph_draws_the_implicit_orchestrator(swarm: Swarm, agents: Path) -> None:
    done = swarm("graph", agents)
    assert done.returncode == 0
    assert 'main(["main"])' in done.stdout
    assert "main --> code_reviewer" in done.stdout and "main --> test_runner" in done.stdout


def test_an_unclear_entry_names_the_flag(swarm: Swarm, tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "a.yaml").write_text("system: a\ndelegates: [c]\n")
    (team / "b.yaml").write_text("system: b\n")
    (team / "c.yaml").write_text("system: c\n")
    done = swarm("validate", team)
    assert done.returncode == 2
    assert "choose one with --entry ROLE" in done.stderr


def test_run_a_scenario_on_a_claude_directory(swarm: Swarm, agents: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "team: .claude/agents\ntask: review\nmodel:\n  script:\n"
        "    main: [{call: code-reviewer, args: {task: review}}, {text: all reviewed}]\n"
        "    code-reviewer: [{text: looks fine}]\n"
    )
    done = swarm("run", scenario, "--plain", "--workspace", tmp_path / "ws")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all reviewed" in done.stdout
    assert "warning: " in done.stderr and "implicit orchestrator 'main'" in done.stderr


def test_run_refuses_a_role_model_without_its_key_before_anything_runs(
    swarm: Swarm, agents: Path, tmp_path: Path, runs: Path
) -> None:
    done = swarm(
        "run",
        "--team",
        agents,
        "--model",
        "openai-compatible:http://127.0.0.1:9/v1:m",  # never called
        "--workspace",
        tmp_path / "ws",
        "review the code",
    )
    assert done.returncode == 2
    assert "code-reviewer.md:5: field 'model'" in done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr and "not set" in done.stderr
    assert "Traceback" not in done.stderr
    assert not runs.exists() or not any(runs.iterdir())

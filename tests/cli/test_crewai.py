"""``swarm validate``, ``graph``, ``run`` and ``import crewai`` on a CrewAI crew folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

import pytest
import yaml

AGENTS = """\
lead:
  role: Research Lead
  goal: Get {topic} answered
  backstory: You split the work.
  allow_delegation: true
  llm: anthropic/claude-sonnet-4-5
finder:
  role: Finder
  goal: Find facts about {topic}
  backstory: You are quick.
checker:
  role: Checker
  goal: Check the facts
  backstory: You doubt everything.
"""
TASKS = """\
find:
  description: Find three facts about {topic}.
  expected_output: Three facts.
  agent: finder
check:
  description: Check the facts.
  expected_output: The facts that hold.
  agent: checker
  context: [find]
"""
SCRIPT = "script:\n  finder: [{text: 'a, b, c'}]\n  checker: [{text: 'a and c hold'}]\n"


@pytest.fixture
def crew(tmp_path: Path) -> Path:
    folder = tmp_path / "crew"
    folder.mkdir()
    (folder / "agents.yaml").write_text(AGENTS)
    (folder / "tasks.yaml").write_text(TASKS)
    return folder


def test_validate_a_crew_with_no_key(swarm: Swarm, crew: Path) -> None:
    done = swarm("validate", crew)
    assert done.returncode == 0, done.stderr
    assert "ok:" in done.stdout and "3 roles, entry 'lead'" in done.stdout
    assert "running needs ANTHROPIC_API_KEY" in done.stdout


def test_graph_shows_the_delegating_agent(swarm: Swarm, crew: Path) -> None:
    done = swarm("graph", crew)
    assert done.returncode == 0, done.stderr
    assert "lead --> finder" in done.stdout and "lead --> checker" in done.stdout


def test_run_plays_the_task_list_with_inputs(swarm: Swarm, crew: Path, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    done = swarm(
        "run",
        "--team",
        crew,
        "--model",
        f"script:{tmp_path / 'script.yaml'}",
        "--input",
        "topic=owls",
        "--workspace",
        tmp_path / "ws",
        "--runs-dir",
        tmp_path / "runs",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "task 1/2: find (finder)" in lines and "task 2/2: check (checker)" in lines
    assert "a and c hold" in lines
    assert len(list((tmp_path / "runs").iterdir())) == 2


def test_run_names_a_missing_input(swarm: Swarm, crew: Path, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    done = swarm(
        "run",
        "--team",
        crew,
        "--model",
        f"script:{tmp_path / 'script.yaml'}",
        "--workspace",
        tmp_path / "ws",
    )
    assert done.returncode == 2
    assert "needs inputs for {topic}: give --input topic=..." in done.stderr
    assert "Traceback" not in done.stderr


def test_import_writes_role_files_that_load(swarm: Swarm, crew: Path, tmp_path: Path) -> None:
    out = tmp_path / "roles"
    done = swarm("import", "crewai", crew, "-o", out)
    assert done.returncode == 0, done.stderr
    lead = yaml.safe_load((out / "lead.yaml").read_text())
    assert lead["delegates"] == ["finder", "checker"]
    assert lead["model"] == "anthropic:claude-sonnet-4-5"
    assert lead["system"].startswith("You are Research Lead.")
    again = swarm("validate", out)
    assert again.returncode == 0, again.stderr
    refused = swarm("import", "crewai", crew, "-o", out)
    assert refused.returncode == 2 and "would overwrite" in refused.stderr

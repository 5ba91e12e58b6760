"""A Claude Code agents directory run as a team with a scripted model: the implicit
orchestrator delegates to its roles, whose own models are recorded but not called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.scenario import load_scenario, run_scenario
from swarm.types import StopReason

pytestmark = pytest.mark.anyio

REVIEWER = """---
name: code-reviewer
description: Reviews code for bugs. Use after code changes.
tools: Read, Grep, Glob
model: sonnet
color: green
---
You review code.
"""

HISTORIAN = """---
name: Git Historian
description: Answers questions about history. Examples: user: "who wrote this?"
tools: Read, Bash(git log:*)
model: opus
---
You read history.
"""

SCRIPT = """
task: review calc.py and tell me its history
files: {calc.py: "def add(a, b): return a - b\\n"}
models: {opus: openai:gpt-4.1}
model:
  script:
    main:
      - call: code-reviewer
        args: {task: review calc.py}
      - call: git-historian
        args: {task: history of calc.py}
      - text: reviewed and traced
    code-reviewer:
      - call: read_file
        args: {path: calc.py}
      - text: add subtracts
    git-historian:
      - call: shell
        args: {command: "git log calc.py; touch pwned"}
      - text: no history I may read
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "code-reviewer.md").write_text(REVIEWER)
    (agents / "git-historian.md").write_text(HISTORIAN)
    (agents / "README.md").write_text("# Our agents\n")
    path = tmp_path / "review.yaml"
    path.write_text("team: .claude/agents\n" + SCRIPT)
    return path


async def test_the_implicit_orchestrator_delegates_to_claude_roles(
    scenario: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    outcome = await run_scenario(
        load_scenario(scenario), workspace=workspace, runs_dir=tmp_path / "runs"
    )
    assert outcome.stop_reason == StopReason.end_turn
    assert outcome.final_text == "reviewed and traced"
    assert outcome.completed_delegations == ("main/code-reviewer#1", "main/git-historian#1")
    # Bash(git log:*) let the historian run nothing else, through the whole run's guards
    [(path, tool, reason, _)] = outcome.denied_calls
    assert (path, tool) == ("main/git-historian#1", "shell") and "touch" in reason
    assert not (workspace / "pwned").exists()
    # every delegation and the denial are in the audit log, under the run's policy
    audit = [
        json.loads(line) for line in (outcome.record_dir / "audit.jsonl").read_text().splitlines()
    ]
    decisions = {(r["path"], r["tool"], r["decision"]) for r in audit if r["event"] == "decision"}
    assert ("main", "code-reviewer", "allow") in decisions
    assert ("main", "git-historian", "allow") in decisions
    assert ("main/git-historian#1", "shell", "deny") in decisions


async def test_role_models_of_a_scripted_run_are_recorded_not_called(
    scenario: Path, tmp_path: Path
) -> None:
    outcome = await run_scenario(
        load_scenario(scenario), workspace=tmp_path / "ws", runs_dir=tmp_path / "runs"
    )
    manifest = json.loads((outcome.record_dir / "manifest.json").read_text())
    assert manifest["team"]["entry"] == "main"
    assert manifest["role_models"] == {
        "called": False,
        "roles": {
            "code-reviewer": {"model": "sonnet", "spec": "anthropic:claude-sonnet-4-5"},
            "git-historian": {"model": "opus", "spec": "openai:gpt-4.1"},
        },
    }

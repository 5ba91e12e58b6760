"""A policy rule that can never match (a typo in a tool or role name) is refused by
``swarm validate`` and by every run, before any model call, naming file, line, field and
the name meant."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any as Swarm

import pytest

REPO = Path(__file__).parents[2]

# The two typos, in a policy a user adds to the shipped team.
TYPOS = """\
name: mine
extend: builtin:default
rules:
  - id: no-writes
    deny: [read_file, wirte_file]
  - id: reviewer-reads-only
    deny: write_file
    roles: [reviewr]
"""
WIRTE = "mine.yaml:5: field 'rules.0.deny.1': rule 'no-writes' names the tool 'wirte_file'"
REVIEWR = "mine.yaml:8: field 'rules.1.roles': rule 'reviewer-reads-only' is for the role 'reviewr'"

# The developer writes a file: the rule meant to stop it must be fixed first.
SCENARIO = """\
name: typo
team: {team}
policy: mine.yaml
task: write a file
files:
  seed.txt: seed
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: write it}}
      - text: done
    developer:
      - call: write_file
        args: {{path: written.txt, content: the write the rule was meant to stop}}
      - text: done
"""


def problem_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """What a refused command printed, line by line (exit 2, no traceback)."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr.strip().splitlines()


def test_validate_refuses_the_typos_with_file_line_field_and_suggestion(
    swarm: Swarm, tmp_path: Path
) -> None:
    (tmp_path / "mine.yaml").write_text(TYPOS)
    (tmp_path / "s.yaml").write_text(SCENARIO.format(team=REPO / "roles"))
    lines = problem_lines(swarm("validate", "s.yaml"))
    assert lines[-1] == "2 problems found"
    [wirte] = [line for line in lines if line.startswith(WIRTE)]
    assert wirte.endswith("did you mean 'write_file'?")
    [reviewr] = [line for line in lines if line.startswith(REVIEWR)]
    assert "did you mean 'reviewer'?" in reviewr


def test_validate_of_the_policy_alone_refuses_the_tool_typo(swarm: Swarm, tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(TYPOS)
    lines = problem_lines(swarm("validate", "mine.yaml"))
    # roles are not known without a team; the tool's typo is
    assert lines == [
        WIRTE + ", which swarm does not know, so the rule never applies; did you mean"
        " 'write_file'?",
        "1 problem found",
    ]


def test_a_run_with_the_typo_stops_before_any_model_call_or_write(
    swarm: Swarm, tmp_path: Path, runs: Path
) -> None:
    (tmp_path / "mine.yaml").write_text(TYPOS)
    (tmp_path / "s.yaml").write_text(SCENARIO.format(team=REPO / "roles"))
    workspace = tmp_path / "ws"
    done = swarm("run", "s.yaml", "--workspace", workspace)
    lines = problem_lines(done)
    assert any(line.startswith(WIRTE) or line.startswith("error: " + WIRTE) for line in lines)
    assert any("did you mean 'reviewer'?" in line for line in lines)
    assert not workspace.exists()  # not even seeded: the scripted write never ran
    assert not runs.exists() or not any(runs.iterdir())  # no record: no model was called


def test_a_run_of_the_team_with_the_typo_in_its_policy_option_is_refused(
    swarm: Swarm, tmp_path: Path, runs: Path
) -> None:
    (tmp_path / "mine.yaml").write_text(TYPOS)
    done = swarm("run", "--team", REPO / "roles", "--policy", "mine.yaml", "--model", "local", "go")
    lines = problem_lines(done)
    assert any(WIRTE in line for line in lines)
    assert not runs.exists() or not any(runs.iterdir())


def test_a_batch_with_the_typo_runs_no_task(swarm: Swarm, tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(TYPOS)
    script = tmp_path / "script.yaml"
    script.write_text("script:\n  orchestrator:\n    - text: done\n")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "task": "work"}) + "\n")
    done = swarm(
        "batch",
        "--team",
        REPO / "roles",
        "--policy",
        "mine.yaml",
        "--tasks",
        tasks,
        "-o",
        "results.jsonl",
        "--model",
        f"script:{script}",
    )
    assert any(WIRTE in line for line in problem_lines(done))
    assert not (tmp_path / "results.jsonl").exists()


def test_the_same_run_goes_on_once_the_typos_are_fixed(
    swarm: Swarm, tmp_path: Path, runs: Path
) -> None:
    fixed = TYPOS.replace("wirte_file", "write_file").replace("reviewr", "reviewer")
    (tmp_path / "mine.yaml").write_text(fixed)
    (tmp_path / "s.yaml").write_text(SCENARIO.format(team=REPO / "roles"))
    assert swarm("validate", "s.yaml").returncode == 0
    workspace = tmp_path / "ws"
    done = swarm("run", "s.yaml", "--workspace", workspace, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    # the fixed rule applies: the write it was written to stop is denied
    assert (workspace / "seed.txt").exists()
    assert not (workspace / "written.txt").exists()
    assert any(runs.iterdir())


@pytest.mark.parametrize(
    "target",
    [
        REPO / "roles",
        *sorted((REPO / "examples").glob("*.yaml")),
        *sorted(p for p in (REPO / "examples" / "teams").iterdir() if p.is_dir()),
        *sorted((REPO / "guards").glob("*.yaml")),
    ],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_the_shipped_team_policies_and_examples_still_validate(swarm: Swarm, target: Path) -> None:
    done = swarm("validate", target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "never applies" not in done.stdout

"""A recorded run to report on: a team that writes, changes and deletes files, has a
call denied (with markup in its arguments), and has a sub-agent fail."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import yaml

from swarm.scenario import load_scenario, run_scenario

ROLES = Path(__file__).parents[2] / "roles"

HOSTILE = "</pre><script>document.title=1</script><img src=x onerror=alert(1)>"

SCENARIO = """\
name: report-me
team: {roles}
entry: orchestrator
policy: default
task: Tidy the notes and add a module.
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: write the module}}
      - call: tester
        args: {{task: test it}}
      - text: The module is written; the tester could not run.
    developer:
      - calls:
          - tool: write_file
            args: {{path: module.py, content: "VALUE = 1\\n"}}
          - tool: write_file
            args: {{path: notes.txt, content: "two\\n"}}
          - tool: shell
            args: {{command: rm old.txt}}
          - tool: shell
            args: {{command: "rm -rf '/tmp/{hostile}'"}}
      - text: Written; the recursive delete was refused.
    tester: []
"""


def make_run(tmp_path: Path) -> Path:
    """Run the scenario offline; returns its record directory."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "old.txt").write_text("old\n")
    (workspace / "notes.txt").write_text("one\n")
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(roles=ROLES, hostile=HOSTILE))
    scenario = load_scenario(path)
    outcome = anyio.run(
        lambda: run_scenario(scenario, workspace=workspace, runs_dir=tmp_path / "runs")
    )
    return outcome.record_dir


@pytest.fixture
def recorded_run(tmp_path: Path) -> Path:
    return make_run(tmp_path)


TREE_TEAM = {
    "lead.yaml": "description: Runs the work.\nsystem: You delegate.\n"
    "delegates: [developer, tester]\n",
    "developer.yaml": "description: Writes code.\nsystem: You write code.\n"
    "tools: [write_file, read_file, shell]\ndelegates: [helper]\n",
    "helper.yaml": "description: Writes docs.\nsystem: You write docs.\ntools: [write_file]\n",
    "tester.yaml": "description: Tests code.\nsystem: You test.\ntools: [shell]\n",
}

CODE = 'def greet(name):\n\treturn f"<b>{name}</b>"  # ' + HOSTILE + "\n"

TREE_SCENARIO = {
    "name": "tree",
    "team": "team",
    "entry": "lead",
    "policy": "default",
    "task": "Write app.py and its docs, then test it. " + "A long task that wraps: " + "x" * 120,
    "limits": {"max_depth": 3},
    "model": {
        "script": {
            "lead": [
                {"call": "developer", "args": {"task": "write app.py and its docs"}},
                {"call": "tester", "args": {"task": "import app"}},
                {"text": "app.py and docs.md are written; the tester stopped."},
            ],
            "developer": [
                {
                    "calls": [
                        {"tool": "write_file", "args": {"path": "app.py", "content": CODE}},
                        {"tool": "read_file", "args": {"path": "missing.txt"}},
                        {"tool": "shell", "args": {"command": "rm -rf build"}},
                    ]
                },
                {"call": "helper", "args": {"task": "write docs.md"}},
                {"text": "app.py is written; the helper wrote the docs."},
            ],
            "helper": [
                {"call": "write_file", "args": {"path": "docs.md", "content": "# app\n\ngreet\n"}},
                {"text": "docs.md is written."},
            ],
            "tester": [
                {"call": "shell", "args": {"command": "python3 -c 'import app'"}},
            ],
        }
    },
}


def make_tree_run(tmp_path: Path) -> Path:
    """A run with a delegation tree three deep (lead, developer, helper; and a
    tester), a denied call, a failed call, an agent that fails, code written by two
    agents, and a ``__pycache__`` made by importing it. Returns its record directory."""
    team = tmp_path / "team"
    team.mkdir()
    for name, text in TREE_TEAM.items():
        (team / name).write_text(text)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(TREE_SCENARIO))
    scenario = load_scenario(path)
    outcome = anyio.run(
        lambda: run_scenario(scenario, workspace=workspace, runs_dir=tmp_path / "runs")
    )
    return outcome.record_dir


@pytest.fixture
def tree_run(tmp_path: Path) -> Path:
    return make_tree_run(tmp_path)

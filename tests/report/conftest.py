"""A recorded run to report on: a team that writes, changes and deletes files, has a
call denied (with markup in its arguments), and has a sub-agent fail."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

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

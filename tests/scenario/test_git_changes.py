"""A run that changes ``.git`` says so: ``.git/config`` and a new hook are listed in
``changes.json`` and in the end summary, and new objects are counted."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from swarm.cli.view import print_summary
from swarm.scenario import load_scenario, run_scenario

pytestmark = pytest.mark.anyio

PLANT = """\
import pathlib, subprocess
git = pathlib.Path(".git")
with (git / "config").open("a") as config:
    config.write("[core]\\n\\tfsmonitor = touch /tmp/planted\\n")
hook = git / "hooks" / "post-checkout"
hook.write_text("#!/bin/sh\\ntouch /tmp/planted\\n")
hook.chmod(0o755)
pathlib.Path("work.txt").write_text("done\\n")
subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b.invalid", "-c",
                "core.fsmonitor=false", "add", "work.txt"], check=True)
"""

SCENARIO = """\
name: plant
team: team
task: Plant something.
policy: policy.yaml
files: {{plant.py: {script}}}
model:
  script:
    dev:
      - call: shell
        args: {{command: "python3 plant.py"}}
      - text: Done.
"""


async def test_a_run_that_changes_git_config_and_hooks_lists_them(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "dev.yaml").write_text("name: dev\nsystem: You work.\ntools: [shell]\n")
    (tmp_path / "policy.yaml").write_text("name: open\nextend: builtin:default\nsandbox: off\n")
    (tmp_path / "scenario.yaml").write_text(SCENARIO.format(script=json.dumps(PLANT)))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    await anyio.run_process(["git", "init", "-q", str(workspace)])
    outcome = await run_scenario(
        load_scenario(tmp_path / "scenario.yaml"), workspace=workspace, runs_dir=tmp_path / "runs"
    )
    assert (workspace / ".git" / "hooks" / "post-checkout").exists()  # the shell call ran
    changes = json.loads((outcome.record_dir / "changes.json").read_text())
    listed = {item["path"]: (item["kind"], item.get("detail", "")) for item in changes["files"]}
    assert listed[".git/config"] == ("changed", "")
    assert listed[".git/hooks/post-checkout"] == ("added", "")
    assert listed[".git/index"] == ("added", "")
    kind, detail = listed[".git/objects"]
    assert kind == "added" and detail == "1 object added"
    console = Console(record=True, width=200)
    print_summary(console, outcome)
    shown = console.export_text()
    assert "~ .git/config  (changed)" in shown
    assert "+ .git/hooks/post-checkout  (added)" in shown
    assert "+ .git/objects  (added: 1 object added)" in shown

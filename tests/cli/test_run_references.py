"""Naming a run's agents and listing runs for scripts: ``sessions show RUN AGENT`` takes
an agent's path, its start or its role, and ``runs list --json`` has stable fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm

FIELDS = {
    "run_id",
    "scenario",
    "task",
    "end",
    "interrupted",
    "finished",
    "segments",
    "tokens",
    "calls",
    "denied",
    "duration_seconds",
    "workspace",
    "record",
}


def _ran(swarm: Swarm) -> None:
    assert swarm("init", "proj").returncode == 0
    done = swarm("run", "proj/scenario.yaml")
    assert done.returncode == 0, done.stderr


def test_sessions_show_takes_an_agent_by_role_or_path_start(swarm: Swarm) -> None:
    _ran(swarm)
    for agent in ("writer", "wri", "lead/writer", "lead/writer#1"):
        shown = swarm("sessions", "show", "last", agent)
        assert shown.returncode == 0, (agent, shown.stderr)
        assert shown.stdout.startswith("--- user\n  Write hello.py; it prints 'hello'.\n")
    both = swarm("sessions", "show", "last", "lead/")
    assert both.returncode == 2
    assert both.stderr.rstrip().endswith(
        "session 'lead/' is ambiguous: it could be lead/writer#1, lead/reviewer#1"
    )
    assert both.stdout == ""


def test_runs_list_json_gives_each_run_with_stable_fields(
    swarm: Swarm, tmp_path: Path, runs: Path
) -> None:
    _ran(swarm)
    listed = swarm("runs", "list", "--json", "--all")
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)
    assert set(run) == FIELDS
    assert run["scenario"] == "hello"
    assert run["task"] == "Write hello.py, which prints a greeting, and have it reviewed."
    assert (run["end"], run["finished"], run["interrupted"]) == ("end_turn", True, False)
    assert (run["segments"], run["calls"], run["denied"]) == (1, 4, 0)
    assert run["tokens"] > 0
    assert Path(run["record"]).parent == runs
    assert Path(run["workspace"]) == tmp_path / ".swarm" / "workspaces" / "hello"
    # the id it gives is one every command that takes a run takes
    shown = swarm("runs", "show", run["run_id"])
    assert shown.returncode == 0
    assert shown.stdout.startswith(f"Run {run['run_id']} (hello)")


def test_a_team_run_is_listed_and_shown_with_its_task(swarm: Swarm, tmp_path: Path) -> None:
    assert swarm("init", "proj").returncode == 0
    (tmp_path / "lead.yaml").write_text("script:\n  lead:\n    - text: nothing here\n")
    task = "What files are here?"
    done = swarm("run", "--team", "proj/team", "--model", "script:lead.yaml", task)
    assert done.returncode == 0, done.stderr
    [run] = json.loads(swarm("runs", "list", "--json").stdout)
    assert (run["scenario"], run["task"]) == ("run", task)
    listed = swarm("runs", "list", columns=120)
    assert f"--team: {task}" in listed.stdout
    shown = swarm("runs", "show", "last")
    assert shown.stdout.splitlines()[:2] == [f"Run {run['run_id']} (run)", f"Task: {task}"]

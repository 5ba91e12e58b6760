"""A run whose fan-out is scripted per instance, killed mid-way, resumes from the turns
each script key had handed out (the cut delegation is not re-run, as for any call)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio

from swarm.context.sqlite import SQLiteContextStore
from swarm.scenario.runner import resume_run
from swarm.testing import history_problems

LEAD = """\
name: lead
description: Hands the work out.
system: You lead.
delegates: [worker]
max_iterations: 10
"""
WORKER = """\
name: worker
description: Works.
system: You work.
tools: [shell, write_file]
max_iterations: 10
"""
SCENARIO = """\
name: fan
team: team
task: Build both parts.
model:
  script:
    lead:
      - calls:
          - {tool: worker, args: {task: part a}}
          - {tool: worker, args: {task: part b}}
      - text: Both parts are built.
    worker#1:
      - call: write_file
        args: {path: a.txt, content: a}
      - text: a done
    worker#2:
      - call: write_file
        args: {path: b.txt, content: b}
      - call: shell
        args: {command: "sleep 30"}
      - call: write_file
        args: {path: c.txt, content: c}
      - text: b done
"""


def _journal_has_turn(journal: Path, key: str, index: int) -> bool:
    try:
        lines = journal.read_text().splitlines()
    except FileNotFoundError:
        return False
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line being written
        if entry.get("turn") == key and entry.get("index") == index:
            return True
    return False


def test_killed_fan_out_resumes_with_each_instance_key_counted(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text(LEAD)
    (team / "worker.yaml").write_text(WORKER)
    scenario = tmp_path / "fan.yaml"
    scenario.write_text(SCENARIO)
    runs, workspace = tmp_path / "runs", tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [sys.executable, "-m", "swarm", "run", str(scenario), "--plain"]
    command += ["--workspace", str(workspace), "--runs-dir", str(runs)]
    process = subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    record: Path | None = None
    while process.poll() is None and time.monotonic() < deadline:
        found = list(runs.iterdir()) if runs.is_dir() else []
        journal = found[0] / "journal.jsonl" if found else None
        # worker#1 has finished its call; worker#2 is in its `sleep 30`
        if journal and all(_journal_has_turn(journal, key, 1) for key in ("worker#1", "worker#2")):
            record = found[0]
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)  # polling the journal the run writes, bounded above
    process.wait(timeout=30)
    assert record is not None, f"worker#2 never took its second turn (exit {process.returncode})"

    outcome = anyio.run(resume_run, record)
    assert outcome.stop_reason.value == "end_turn"
    assert outcome.final_text == "Both parts are built."
    assert outcome.agent_errors == ()
    assert (workspace / "a.txt").read_text() == "a"
    assert (workspace / "b.txt").read_text() == "b"
    assert not (workspace / "c.txt").exists()  # the cut delegation was not re-run
    summary = json.loads((record / "summary.json").read_text())
    assert summary["script_used"] == {"lead": 2, "worker#1": 2, "worker#2": 2}
    assert anyio.run(_problems, record) == []


async def _problems(record: Path) -> list[str]:
    """What is wrong with any stored history (duplicate call ids included)."""
    async with SQLiteContextStore(record / "sessions.db") as probe:
        sessions = [s.session_id for s in await probe.list_sessions()]
    problems: list[str] = []
    for session in sessions:
        async with SQLiteContextStore(record / "sessions.db", session) as store:
            problems += history_problems(await store.get_history())
    return problems

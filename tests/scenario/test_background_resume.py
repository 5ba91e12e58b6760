"""A run killed (kill -9) while two background sub-agents run resumes them from their
last stored turn, and ends as the run that was never killed does."""

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
"""
WORKER = """\
name: worker
description: Works.
system: You work.
tools: [shell, write_file]
"""
SCENARIO = """\
name: background
team: team
task: Build both parts.
model:
  script:
    lead:
      - calls:
          - {tool: worker, args: {task: part a, background: true}}
          - {tool: worker, args: {task: part b, background: true}}
      - call: agents
        args: {action: wait}
      - text: Both parts are built.
      - text: Both parts are built.
"""
WORKER_SCRIPT = """\
    worker#{n}:
      - call: write_file
        args: {{path: {part}1.txt, content: x}}
      - call: shell
        args: {{command: "sleep {sleep}"}}
      - call: write_file
        args: {{path: {part}2.txt, content: y}}
      - text: {part} done
"""


def _scenario(tmp_path: Path, sleep: int) -> Path:
    team = tmp_path / "team"
    team.mkdir(parents=True, exist_ok=True)
    (team / "lead.yaml").write_text(LEAD)
    (team / "worker.yaml").write_text(WORKER)
    path = tmp_path / f"background-{sleep}.yaml"
    workers = "".join(
        WORKER_SCRIPT.format(n=n, part=part, sleep=sleep) for n, part in ((1, "a"), (2, "b"))
    )
    path.write_text(SCENARIO + workers)
    return path


def _took(journal: Path, key: str, index: int) -> bool:
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


def _start(scenario: Path, runs: Path, workspace: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [sys.executable, "-m", "swarm", "run", str(scenario), "--plain"]
    command += ["--workspace", str(workspace), "--runs-dir", str(runs)]
    return subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _problems(record: Path) -> list[str]:
    async with SQLiteContextStore(record / "sessions.db") as probe:
        sessions = [s.session_id for s in await probe.list_sessions()]
    problems: list[str] = []
    for session in sessions:
        async with SQLiteContextStore(record / "sessions.db", session) as store:
            problems += history_problems(await store.get_history(), alternating=False)
    return problems


def test_killed_background_children_resume_to_the_same_result(tmp_path: Path) -> None:
    whole = _start(_scenario(tmp_path / "whole", 0), tmp_path / "whole-runs", tmp_path / "w1")
    assert whole.wait(timeout=120) == 0
    (whole_record,) = (tmp_path / "whole-runs").iterdir()
    expected = json.loads((whole_record / "summary.json").read_text())

    runs, workspace = tmp_path / "runs", tmp_path / "ws"
    process = _start(_scenario(tmp_path, 30), runs, workspace)
    deadline = time.monotonic() + 90
    record: Path | None = None
    while process.poll() is None and time.monotonic() < deadline:
        found = list(runs.iterdir()) if runs.is_dir() else []
        journal = found[0] / "journal.jsonl" if found else None
        # both workers run in the background, each in its `sleep 30`
        if journal and all(_took(journal, key, 1) for key in ("worker#1", "worker#2")):
            record = found[0]
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)  # polling the journal the run writes, bounded above
    process.wait(timeout=30)
    assert record is not None, f"the workers never reached their sleep (exit {process.returncode})"
    assert not (workspace / "a2.txt").exists() and not (workspace / "b2.txt").exists()

    outcome = anyio.run(resume_run, record)
    assert outcome.stop_reason.value == "end_turn"
    assert outcome.final_text == expected["final_text"] == "Both parts are built."
    assert outcome.agent_errors == ()
    for name in ("a1.txt", "a2.txt", "b1.txt", "b2.txt"):  # each worker went on to its end
        assert (workspace / name).exists(), name
    summary = json.loads((record / "summary.json").read_text())
    ends = {p: e for p, e in summary["delegation_ends"].items() if "worker" in p}
    assert ends == {"lead/worker#1": "end_turn", "lead/worker#2": "end_turn"}
    assert anyio.run(_problems, record) == []

"""``swarm run --on-ask hold``, ``swarm approvals``, ``swarm approve``/``deny`` and
``swarm sessions resume`` as a person uses them: separate processes, real files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from swarm_command import run_swarm

from .support import make_project

TIMEOUT = 120


def _swarm(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_swarm(args, cwd=cwd, timeout=TIMEOUT, env={**env, "COLUMNS": "200"})


def _start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.Popen(
        [sys.executable, "-m", "swarm", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _pending_in(runs: Path) -> Path | None:
    """The run record once its approvals file holds a request."""
    for record in runs.iterdir() if runs.is_dir() else []:
        approvals = record / "approvals.jsonl"
        if approvals.is_file() and b'"request"' in approvals.read_bytes():
            return record
    return None


def test_held_run_exits_75_with_the_commands_and_goes_on_after_approve(tmp_path: Path) -> None:
    make_project(tmp_path)
    run = _swarm(
        tmp_path, "run", "counting.yaml", "--plain", "--workspace", "ws", "--runs-dir", "runs"
    )
    assert run.returncode == 75, run.stderr
    [record] = (tmp_path / "runs").iterdir()
    run_id = record.name
    assert "held 1: boss/lead#1/worker#1 shell" in run.stdout
    assert "[boss/lead#1/worker#1] shell held for approval (request 1)" in run.stdout
    assert "Stop reason: awaiting_approval." in run.stdout
    assert "waiting for approval: 1 call held" in run.stderr
    assert f"swarm approve {run_id} ID" in run.stderr
    assert f"swarm sessions resume {run_id}" in run.stderr

    listed = _swarm(tmp_path, "approvals", run_id, "--runs-dir", "runs")
    assert listed.returncode == 0
    assert f"{run_id}  1  pending  boss/lead#1/worker#1  shell" in listed.stdout
    assert "rule ask-shell" in listed.stdout

    unknown = _swarm(tmp_path, "approve", run_id, "7", "--runs-dir", "runs")
    assert unknown.returncode == 2
    assert "this run never asked request '7'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    approved = _swarm(tmp_path, "approve", run_id, "1", "--runs-dir", "runs")
    assert approved.returncode == 0, approved.stderr
    assert "approved 1: boss/lead#1/worker#1 shell" in approved.stdout
    assert "swarm sessions resume" in approved.stdout
    again = _swarm(tmp_path, "deny", run_id, "1", "--runs-dir", "runs")
    assert again.returncode == 1
    assert "answered already" in again.stderr

    resumed = _swarm(tmp_path, "sessions", "resume", run_id, "--runs-dir", "runs", "--plain")
    assert resumed.returncode == 0, resumed.stderr
    assert "all done" in resumed.stdout
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"
    assert "approved 1: boss/lead#1/worker#1 shell by" in resumed.stdout
    assert "via cli" in resumed.stdout
    report = _swarm(tmp_path, "runs", "report", run_id, "--runs-dir", "runs")
    assert report.returncode == 0, report.stderr
    html = (record / "report.html").read_text()
    assert re.search(r'<table[^>]* id="approvals"', html)
    assert "ask-shell" in html.split('id="approvals"', 1)[1]


def test_kill_9_while_held_loses_nothing(tmp_path: Path) -> None:
    make_project(tmp_path)
    runs = tmp_path / "runs"
    process = _start(
        tmp_path, "run", "counting.yaml", "--plain", "--workspace", "ws", "--runs-dir", "runs"
    )
    deadline = time.monotonic() + TIMEOUT
    record = None
    while process.poll() is None and time.monotonic() < deadline:
        record = _pending_in(runs)
        if record is not None:
            process.send_signal(signal.SIGKILL)  # the call is held: the run is waiting
            break
        time.sleep(0.005)  # polling the record the run writes, bounded above
    process.wait(timeout=TIMEOUT)
    assert record is not None, f"no request was held (exit {process.returncode})"
    assert process.returncode == -signal.SIGKILL
    assert not (record / "summary.json").exists()  # killed: no end was written

    approved = _swarm(tmp_path, "approve", record.name, "--all", "--runs-dir", "runs")
    assert approved.returncode == 0, approved.stderr
    resumed = _swarm(tmp_path, "sessions", "resume", record.name, "--runs-dir", "runs", "--plain")
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert "all done" in resumed.stdout
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"  # exactly once
    verified = _swarm(tmp_path, "audit", "verify", record.name, "--runs-dir", "runs")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    receipts = [
        json.loads(line)
        for line in (record / "audit.jsonl").read_text().splitlines()
        if '"event":"approval"' in line
    ]
    assert [(r["approved"], r["via"]) for r in receipts] == [(True, "cli")]


def test_approve_from_another_shell_while_the_run_is_live(tmp_path: Path) -> None:
    make_project(tmp_path)
    # the helper keeps working until the test has answered, so the run is live when the
    # answer comes: it waits for a file the test makes in a folder its sandbox may read
    gate = tmp_path / "gate"
    gate.mkdir()
    policy = tmp_path / "careful.yaml"
    policy.write_text(policy.read_text() + f"sandbox: {{read: ['{gate}']}}\n")
    wait = f"for i in $(seq 1200); do [ -e {gate}/go ] && break; sleep 0.1; done"
    scenario = tmp_path / "counting.yaml"
    text = scenario.read_text().replace(
        "      - call: write_file\n        args: {path: notes.txt, content: noted}\n",
        f"      - call: shell\n        args: {{command: '{wait}'}}\n"
        "      - call: write_file\n        args: {path: notes.txt, content: noted}\n",
    )
    scenario.write_text(text)
    helper = tmp_path / "team" / "helper.yaml"
    helper.write_text(
        helper.read_text().replace("tools: [write_file]", "tools: [write_file, shell]")
    )
    runs = tmp_path / "runs"
    process = _start(
        tmp_path, "run", "counting.yaml", "--plain", "--workspace", "ws", "--runs-dir", "runs"
    )
    deadline = time.monotonic() + TIMEOUT
    record = None
    while process.poll() is None and time.monotonic() < deadline:
        record = _pending_in(runs)
        if record is not None:
            break
        time.sleep(0.005)  # polling the record the run writes, bounded above
    assert record is not None
    approved = _swarm(tmp_path, "approve", record.name, "1", "--runs-dir", "runs")
    assert approved.returncode == 0
    (gate / "go").touch()
    assert process.wait(timeout=TIMEOUT) == 0  # the run went on by itself and finished
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"
    summary = json.loads((record / "summary.json").read_text())
    assert summary["stop_reason"] == "end_turn"
    assert summary["approvals"][0]["answer"]["via"] == "cli"

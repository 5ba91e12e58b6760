"""``swarm run`` killed with SIGKILL at many moments of a multi-agent run: every run resumes
to completion, with valid histories, a verifying audit log and one summary of both
segments."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from swarm_command import ForkedRun, start_swarm

from swarm.audit import read_head, read_key, verify_log
from swarm.context.sqlite import SQLiteContextStore
from swarm.scenario.runner import resume_run
from swarm.testing import history_problems

KILLS = 22

LEAD = """\
name: lead
description: Hands the work out and reports.
system: You lead. Delegate, then answer.
delegates: [worker, checker]
tools: [read_file]
max_iterations: 10
"""
WORKER = """\
name: worker
description: Does the slow work.
system: You work.
tools: [shell, read_file, write_file]
max_iterations: 20
compaction: {keep_recent: 2, threshold: 0.5, max_tokens: 1200}
"""
CHECKER = """\
name: checker
description: Checks the work.
system: You check.
tools: [shell, read_file]
max_iterations: 10
"""
SCENARIO = """\
name: slow-team
team: team
task: Build it and check it.
files: {{seed.txt: "{seed}"}}
model:
  script:
    lead:
      - call: worker
        args: {{task: build it}}
      - call: checker
        args: {{task: check it}}
      - text: Built and checked.
    worker:
      - call: shell
        args: {{command: "sleep 0.15; echo one > one.txt"}}
      - call: read_file
        args: {{path: seed.txt}}
      - call: shell
        args: {{command: "sleep 0.15; echo two > two.txt"}}
      - call: read_file
        args: {{path: seed.txt}}
      - call: shell
        args: {{command: "sleep 0.15"}}
      - text: built
    checker:
      - call: read_file
        args: {{path: one.txt}}
      - call: shell
        args: {{command: "sleep 0.15; ls"}}
      - text: checked
  summary: The worker ran its commands and read the seed.
"""


def _env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, "XDG_STATE_HOME": str(state), "PYTHONUNBUFFERED": "1"}


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return -1


def _start(scenario: Path, state: Path, workspace: Path) -> ForkedRun | subprocess.Popen[bytes]:
    return start_swarm(["run", scenario, "--workspace", workspace], cwd=Path.cwd(), env=_env(state))


def _run_dir(state: Path) -> Path | None:
    runs = state / "swarm" / "runs"
    found = list(runs.iterdir()) if runs.is_dir() else []
    return found[0] if found else None


def _kill_at(scenario: Path, base: Path, lines: int) -> tuple[Path, str]:
    """Run the scenario and SIGKILL it once its journal holds ``lines`` lines (-1: as
    soon as its manifest exists, before the first model call). Returns the record and when
    the kill came."""
    state, workspace = base / "state", base / "ws"
    process = _start(scenario, state, workspace)
    deadline = time.monotonic() + 60
    moment = "never"
    while process.poll() is None and time.monotonic() < deadline:
        record = _run_dir(state)
        started = record is not None and (record / "manifest.json").exists()
        if started and record and _lines(record / "journal.jsonl") >= lines:
            process.send_signal(signal.SIGKILL)
            moment = f"journal line {_lines(record / 'journal.jsonl')}"
            break
        time.sleep(0.002)  # polling the files the run writes, with a bound above
    process.wait(timeout=30)
    record = _run_dir(state)
    assert record is not None, f"no record (exit {process.returncode})"
    return record, moment


async def _histories(record: Path) -> list[tuple[str, list[str]]]:
    async with SQLiteContextStore(record / "sessions.db") as probe:
        sessions = [s.session_id for s in await probe.list_sessions()]
    problems = []
    for session in sessions:
        async with SQLiteContextStore(record / "sessions.db", session) as store:
            problems.append((session, history_problems(await store.get_history())))
    return problems


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text(LEAD)
    (team / "worker.yaml").write_text(WORKER)
    (team / "checker.yaml").write_text(CHECKER)
    path = tmp_path / "slow.yaml"
    path.write_text(SCENARIO.format(seed="lorem ipsum dolor sit amet " * 120))
    return path


def test_a_run_killed_at_any_moment_resumes_to_completion(scenario: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    done = _start(scenario, whole / "state", whole / "ws")
    assert done.wait(timeout=120) == 0
    complete = _run_dir(whole / "state")
    assert complete is not None
    total = _lines(complete / "journal.jsonl")
    assert json.loads((complete / "summary.json").read_text())["compactions"] >= 1
    # -1: as soon as the manifest is written, before the journal and the first model call
    moments = [-1, *sorted({round(i * (total - 1) / (KILLS - 1)) for i in range(KILLS)})]
    assert len(moments) >= 20

    def kill(number: int) -> tuple[Path, str]:
        return _kill_at(scenario, tmp_path / f"kill{number}", moments[number])

    with ThreadPoolExecutor(2) as pool:  # two at a time: the machine has two cores
        killed = list(pool.map(kill, range(len(moments))))

    failures: list[str] = []
    for record, moment in killed:
        assert not (record / "summary.json").exists(), f"{moment}: the kill came too late"
        outcome = anyio.run(_resume, record)
        summary = json.loads((record / "summary.json").read_text())
        segments = summary["segments"]
        key = read_key(record / "audit.key")
        report = verify_log(record / "audit.jsonl", key=key, anchor=read_head(record / "head.json"))
        bad = [(s, p) for s, p in anyio.run(_histories, record) if p]
        if (
            outcome.stop_reason.value != "end_turn"
            or outcome.final_text != "Built and checked."
            or [s["segment"] for s in segments] != [1, 2]
            or segments[0]["stop_reason"] != "killed"
            or not report.ok
            or bad
        ):
            failures.append(
                f"killed at {moment}: {outcome.stop_reason.value} {outcome.final_text!r}"
                f" segments={segments} audit={report} histories={bad} errors={outcome.errors}"
            )
    assert not failures, "\n".join(failures)


async def _resume(record: Path) -> Any:
    return await resume_run(record)


COMPACTING_LEAD = """\
name: lead
description: Reads a lot.
system: You read.
tools: [read_file]
max_iterations: 10
compaction: {keep_recent: 2, threshold: 0.5, max_tokens: 1200}
"""
COMPACTING = """\
name: compacting
team: team
task: Read the seed three times.
files: {{seed.txt: "{seed}"}}
model:
  script:
    lead:
      - call: read_file
        args: {{path: seed.txt}}
      - call: read_file
        args: {{path: seed.txt}}
      - call: read_file
        args: {{path: seed.txt}}
      - text: Read it thrice.
  summary: The lead read the seed.
"""


def test_a_run_killed_during_a_compaction_resumes(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text(COMPACTING_LEAD)
    scenario = tmp_path / "compacting.yaml"
    scenario.write_text(COMPACTING.format(seed="lorem ipsum dolor sit amet " * 120))
    runs = tmp_path / "runs"
    process = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("compacting_run.py")),
            str(scenario),
            str(runs),
            str(tmp_path / "ws"),
        ],
        env=_env(tmp_path / "state"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "COMPACTING\n"
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    (record,) = runs.iterdir()

    outcome = anyio.run(_resume, record)
    assert outcome.stop_reason.value == "end_turn"
    assert outcome.final_text == "Read it thrice."
    summary = json.loads((record / "summary.json").read_text())
    assert [s["stop_reason"] for s in summary["segments"]] == ["killed", "end_turn"]
    assert not [p for _, p in anyio.run(_histories, record) if p]
    key = read_key(record / "audit.key")
    assert verify_log(record / "audit.jsonl", key=key, anchor=read_head(record / "head.json")).ok

"""``swarm batch`` as a user runs it: results, the summary, Ctrl-C and --resume, mistakes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any as Swarm

import pytest

TEAM = """\
name: worker
description: Runs the task's wait.sh, then writes out.txt.
system: You do the task.
tools: [write_file, shell]
max_iterations: 4
"""

SCRIPT = """\
script:
  worker:
    - call: shell
      args: {command: sh wait.sh}
    - call: write_file
      args: {path: out.txt, content: done}
    - text: finished
"""


def _setup(tmp_path: Path, waits: dict[str, str]) -> tuple[Path, Path, Path]:
    team = tmp_path / "team"
    team.mkdir(exist_ok=True)
    (team / "worker.yaml").write_text(TEAM)
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps(
                {
                    "id": name,
                    "task": "work",
                    "files": {"wait.sh": wait},
                    "expect": {"files": {"out.txt": "done"}},
                }
            )
            + "\n"
            for name, wait in waits.items()
        )
    )
    return team, script, tasks


def _batch(team: Path, script: Path, tasks: Path, *extra: str) -> list[str]:
    return [
        "batch",
        "--team",
        str(team),
        "--tasks",
        str(tasks),
        "-o",
        "results.jsonl",
        "--model",
        f"script:{script}",
        *extra,
    ]


def test_a_batch_writes_a_result_per_task_and_a_summary(swarm: Swarm, tmp_path: Path) -> None:
    team, script, tasks = _setup(tmp_path, {"a": "true", "b": "true", "c": "exit 0"})
    done = swarm(*_batch(team, script, tasks))
    assert done.returncode == 0, done.stderr
    assert "3 tasks: 3 ok, 0 failed, 0 skipped" in done.stdout
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == ["a", "b", "c"]
    assert all(r["final_text"] == "finished" and Path(r["record"]).is_dir() for r in lines)


def test_ctrl_c_leaves_valid_results_and_resume_runs_the_rest(swarm: Swarm, tmp_path: Path) -> None:
    team, script, tasks = _setup(
        tmp_path, {"t0": "true", "t1": "true", "slow": "sleep 60", "t3": "true"}
    )
    results = tmp_path / "results.jsonl"
    process = swarm.start(*_batch(team, script, tasks, "--parallel", "1"))
    deadline = time.monotonic() + 120
    while not (results.exists() and results.read_text().count("\n") >= 2):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the first two tasks did not finish"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # 'slow' is running its sleep
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("swarm batch did not stop on Ctrl-C")
    assert process.returncode == 130, err
    assert "Traceback" not in err and "--resume" in err
    written = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["id"] for r in written] == ["t0", "t1"]

    _setup(tmp_path, {"t0": "true", "t1": "true", "slow": "true", "t3": "true"})
    resumed = swarm(*_batch(team, script, tasks, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    assert "4 tasks: 2 ok, 0 failed, 2 skipped" in resumed.stdout
    written = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["id"] for r in written) == ["slow", "t0", "t1", "t3"]


def test_a_bad_task_line_is_one_line_naming_file_and_line(swarm: Swarm, tmp_path: Path) -> None:
    team, script, tasks = _setup(tmp_path, {"a": "true"})
    tasks.write_text('{"task": "fine"}\n{"task": "x", "colour": "red"}\n')
    done = swarm(*_batch(team, script, tasks))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {tasks}:2: field 'colour': Extra inputs are not permitted"
    )
    assert not (tmp_path / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--executor", "spark"), "unknown executor 'spark'"),
        (("--executor", "ray", "--env-var", "SWARM_NO_SUCH_VAR"), "SWARM_NO_SUCH_VAR"),
        (("--parallel", "0"), "--parallel must be at least 1"),
    ],
)
def test_bad_executor_options_exit_2(
    swarm: Swarm, tmp_path: Path, extra: tuple[str, ...], said: str
) -> None:
    team, script, tasks = _setup(tmp_path, {"a": "true"})
    done = swarm(*_batch(team, script, tasks, *extra))
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results.jsonl").exists()


HELLO = (
    "team: {roles}\ntask: x\nmodel: {{script: {{orchestrator: [{{text: hi}}]}}}}\n"
    "expect: {expect}\n"
)


def test_swarm_test_on_an_executor_reports_as_a_local_run_in_order(
    swarm: Swarm, roles: Path, tmp_path: Path, state_home: Path
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a-pass.yaml").write_text(HELLO.format(roles=roles, expect="{final_contains: [hi]}"))
    (suite / "b-fail.yaml").write_text(HELLO.format(roles=roles, expect="{final_contains: [bye]}"))
    (suite / "c-bad.yaml").write_text("task: x\nteam: 3\nbogus: 1\n")
    (suite / "d-pass.yaml").write_text(HELLO.format(roles=roles, expect="{stop_reason: end_turn}"))
    plain = swarm("test", suite)
    parallel = swarm("test", suite, "--executor", "local", "--parallel", "3")

    def shape(out: str) -> list[str]:
        return [
            "    workspace:"  # a temporary path of its own in each
            if line.startswith("    workspace:")
            else line.split(" (")[0]
            if " (" in line and "ED (" in line
            else line
            for line in out.splitlines()
            if not line.startswith("    run record:")
        ]

    assert parallel.returncode == plain.returncode == 1
    assert shape(parallel.stdout) == shape(plain.stdout)
    assert plain.stdout.strip().splitlines()[-1] == "2 passed, 2 failed"
    assert "final_contains: the final answer does not contain 'bye'" in parallel.stdout
    records = [
        line.split(": ", 1)[1]
        for line in parallel.stdout.splitlines()
        if line.startswith("    run record:")
    ]
    assert len(records) == 1 and Path(records[0]).parent == state_home / "swarm" / "runs"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--model", "bogus:x"), "unknown model provider in 'bogus:x'"),
        (("--entry", "nobody"), "entry role 'nobody' is not a role"),
        (("--policy", "no-such-policy"), "unknown policy 'no-such-policy'"),
        (("-o", "missing-dir/results.jsonl"), "missing-dir/results.jsonl: cannot write"),
    ],
)
def test_what_every_task_shares_is_checked_before_any_runs(
    swarm: Swarm, tmp_path: Path, extra: tuple[str, ...], said: str
) -> None:
    team, script, tasks = _setup(tmp_path, {"a": "true"})
    done = swarm(*_batch(team, script, tasks), *extra)
    assert done.returncode == 2, done.stdout
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results.jsonl").exists()


def test_resume_after_a_failed_task_says_so_and_exits_1(swarm: Swarm, tmp_path: Path) -> None:
    team, script, tasks = _setup(tmp_path, {"a": "true", "b": "true", "c": "true"})
    lines = [json.loads(line) for line in tasks.read_text().splitlines()]
    lines[1]["expect"] = {"files": {"out.txt": "something else"}}  # b fails its check
    tasks.write_text("".join(json.dumps(line) + "\n" for line in lines))
    first = swarm(*_batch(team, script, tasks))
    assert first.returncode == 1 and "3 tasks: 2 ok, 1 failed, 0 skipped" in first.stdout
    results = (tmp_path / "results.jsonl").read_bytes()
    resumed = swarm(*_batch(team, script, tasks, "--resume"))
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    assert (
        "3 tasks: 0 ok, 0 failed, 3 skipped (already in results.jsonl, 1 of them failed)"
        in resumed.stdout
    )
    assert "1 failed in an earlier run: see results.jsonl" in resumed.stdout
    assert (tmp_path / "results.jsonl").read_bytes() == results  # nothing ran, nothing added

"""Batches and suites on a local Ray (2 CPUs), started once for this module."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm.batch import LocalExecutor, RayExecutor, run_batch
from swarm.batch.job import Job, JobReport, run_job

from .support import make_policy, make_team, read_results, script, write_tasks

if os.environ.get("CI"):  # in CI a missing Ray is a failure, never a skip
    import ray
else:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = [pytest.mark.ray, pytest.mark.anyio]

REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray with 2 CPUs; yields its address for other processes to join. What
    ``ray.init`` sets in this process's environment (``PYTHONBREAKPOINT``) goes with it:
    the later tests of this worker start Python as the others do."""
    environment = dict(os.environ)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        os.environ.clear()
        os.environ.update(environment)


def _comparable(results: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            r["id"],
            r["ok"],
            r["stop_reason"],
            r["final_text"],
            json.dumps(r["usage"]),
            r["expectations_passed"],
            r["error"],
        )
        for r in results
    )


async def test_a_200_task_batch_on_ray_gives_the_results_of_a_local_run(
    cluster: str, tmp_path: Path, state_home: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 200)
    team = make_team(tmp_path)
    on_ray, local = tmp_path / "ray.jsonl", tmp_path / "local.jsonl"
    policy = make_policy(tmp_path)
    await run_batch(
        tasks,
        team=team,
        results=on_ray,
        model=script(),
        policy=policy,
        executor=RayExecutor(cpus_per_task=0.25),
    )
    await run_batch(
        tasks,
        team=team,
        results=local,
        model=script(),
        policy=policy,
        executor=LocalExecutor(8),
    )
    ray_results = read_results(on_ray)
    assert len(ray_results) == 200
    assert _comparable(ray_results) == _comparable(read_results(local))
    assert all(r["ok"] for r in ray_results)
    # every record came back to this machine's runs directory, and is whole
    for result in ray_results:
        record = Path(str(result["record"]))
        assert record.parent == state_home / "swarm" / "runs"
        assert json.loads((record / "manifest.json").read_text())["key"] == str(
            record / "audit.key"
        )
        assert (record / "audit.jsonl").read_text().count("\n") == 2


async def test_a_task_that_kills_its_worker_is_one_failed_result(
    cluster: str, tmp_path: Path
) -> None:
    async def crash_on_t001(job: Job) -> JobReport:
        if job.scenario.name == "t001":
            os._exit(1)  # the worker process dies mid-task
        return await run_job(job)

    tasks = write_tasks(tmp_path / "tasks.jsonl", 3)
    out = tmp_path / "results.jsonl"
    summary = await run_batch(
        tasks,
        team=make_team(tmp_path),
        results=out,
        model=script(),
        executor=RayExecutor(work=crash_on_t001, cpus_per_task=0.5),
    )
    by_id = {r["id"]: r for r in read_results(out)}
    assert sorted(by_id) == ["t000", "t001", "t002"]
    assert by_id["t001"]["ok"] is False
    assert "Worker" in str(by_id["t001"]["error"]) or "died" in str(by_id["t001"]["error"])
    assert by_id["t000"]["ok"] and by_id["t002"]["ok"]
    assert summary.failed == 1


def test_swarm_test_on_ray_gives_the_local_verdicts_with_every_record_here(
    cluster: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")

    def swarm_test(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "swarm", "test", "examples/", *extra],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    local = swarm_test()
    on_ray = swarm_test("--executor", f"ray:{cluster}")
    assert on_ray.returncode == local.returncode == 0, on_ray.stderr
    assert "Traceback" not in on_ray.stderr

    def verdicts(out: str) -> list[str]:
        return [line.split(" (")[0] for line in out.splitlines()]

    assert verdicts(on_ray.stdout) == verdicts(local.stdout)
    runs = tmp_path / "state" / "swarm" / "runs"
    records = [json.loads((r / "summary.json").read_text()) for r in runs.iterdir()]
    scenarios = sorted(r["scenario"] for r in records)
    assert len(scenarios) == 2 * (len(verdicts(local.stdout)) - 1)  # both runs, each scenario


async def test_with_a_shared_runs_dir_the_workers_write_the_records_there(
    cluster: str, tmp_path: Path
) -> None:
    from swarm.batch import run_suite
    from swarm.scenario import load_scenario

    shared = tmp_path / "shared-runs"
    scenario = load_scenario(REPO / "examples" / "denied-shell.yaml")
    ((_, report, record),) = await run_suite(
        [scenario], executor=RayExecutor(), runs_dir=shared, shared_runs_dir=True
    )
    assert report.passed, report
    assert report.record is None  # nothing shipped: the worker wrote it in place
    assert record is not None and record.parent == shared
    assert json.loads((record / "summary.json").read_text())["scenario"] == "denied-shell"


WAITER = """\
name: worker
description: Runs the task's wait.sh.
system: You do the task.
tools: [shell]
max_iterations: 3
"""


def test_ctrl_c_stops_the_tasks_on_the_cluster_and_resume_runs_the_rest(
    cluster: str, tmp_path: Path, marker: str, running: Any
) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "worker.yaml").write_text(WAITER)
    (tmp_path / "script.yaml").write_text(
        "script:\n  worker:\n    - call: shell\n      args: {command: sh wait.sh}\n"
        "    - text: finished\n"
    )
    tasks = tmp_path / "tasks.jsonl"

    def write(waits: list[str]) -> None:
        tasks.write_text(
            "".join(
                json.dumps({"id": f"t{i}", "task": "wait", "files": {"wait.sh": wait}}) + "\n"
                for i, wait in enumerate(waits)
            )
        )

    write(["true", f"sleep {marker}", "true"])
    command = [
        sys.executable,
        "-m",
        "swarm",
        "batch",
        "--team",
        "team",
        "--tasks",
        str(tasks),
        "-o",
        "results.jsonl",
        "--model",
        "script:script.yaml",
        "--executor",
        f"ray:{cluster}",
        "--parallel",
        "1",
    ]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not running(f"sleep {marker}"):  # t0 is written, t1 is sleeping on a worker
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the sleeping task never started"
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "--resume" in err
    results = tmp_path / "results.jsonl"
    assert [json.loads(line)["id"] for line in results.read_text().splitlines()] == ["t0"]
    while running(f"sleep {marker}"):  # the cancelled task's command is stopped
        assert time.monotonic() < deadline, "the cancelled task's command still runs"
        time.sleep(0.1)

    write(["true", "true", "true"])
    resumed = subprocess.run(
        [*command, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert ids[0] == "t0" and sorted(ids) == ["t0", "t1", "t2"]

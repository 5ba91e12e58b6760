"""A Ray that swarm starts itself: provider keys reach its workers only when named.

This module's one Ray is the one ``RayExecutor`` starts (and stops) for its batch."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swarm.batch import RayExecutor, run_batch
from swarm.batch.job import Job, JobReport

from .support import make_team, read_results, script, write_tasks

if os.environ.get("CI"):  # in CI a missing Ray is a failure, never a skip
    import ray
else:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = [pytest.mark.ray, pytest.mark.anyio]


async def test_workers_see_only_the_keys_passed_with_env_var(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_KEPT_API_KEY", "sk-kept-0123456789abcdef")
    monkeypatch.setenv("SWARM_PASSED_API_KEY", "sk-passed-0123456789abcdef")

    async def peek(job: Job) -> JobReport:
        seen = {
            name: os.environ.get(name) for name in ("SWARM_KEPT_API_KEY", "SWARM_PASSED_API_KEY")
        }
        return JobReport(
            job.run_id, summary={"stop_reason": "end_turn", "final_text": json.dumps(seen)}
        )

    assert not ray.is_initialized()
    environment = dict(os.environ)
    tasks = write_tasks(tmp_path / "tasks.jsonl", 2)
    out = tmp_path / "results.jsonl"
    executor = RayExecutor(env_vars=["SWARM_PASSED_API_KEY"], work=peek)
    await run_batch(tasks, team=make_team(tmp_path), results=out, model=script(), executor=executor)
    for result in read_results(out):
        seen = json.loads(str(result["final_text"]))
        assert seen == {
            "SWARM_KEPT_API_KEY": None,
            "SWARM_PASSED_API_KEY": "sk-passed-0123456789abcdef",
        }
    assert not ray.is_initialized()  # the Ray it started is stopped
    # the hidden keys are back, and what Ray set here (its debugger as PYTHONBREAKPOINT)
    # went with it: the next Python this process starts is as before
    assert dict(os.environ) == environment

"""run_batch on the local executor: results as tasks end, failures as results, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.batch import BatchTask, LocalExecutor, load_tasks, run_batch
from swarm.errors import ConfigError

from .support import make_team, read_results, script, write_tasks

pytestmark = pytest.mark.anyio


async def test_every_task_gets_one_result_line_with_its_record(
    tmp_path: Path, state_home: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 5)
    out = tmp_path / "results.jsonl"
    summary = await run_batch(
        tasks,
        team=make_team(tmp_path),
        results=out,
        model=script(),
        executor=LocalExecutor(3),
    )
    results = read_results(out)
    assert sorted(r["id"] for r in results) == [f"t{i:03d}" for i in range(5)]
    for result in results:
        assert result["ok"] is True
        assert result["stop_reason"] == "end_turn"
        assert result["final_text"] == "wrote out.txt"
        assert result["expectations_passed"] is True
        assert result["usage"]["input_tokens"] > 0
        record = Path(str(result["record"]))
        assert record.parent == state_home / "swarm" / "runs"
        assert json.loads((record / "summary.json").read_text())["scenario"] == result["id"]
    assert (summary.done, summary.failed, summary.remaining) == (5, 0, 0)


async def test_a_task_that_fails_is_a_failed_result_and_the_batch_goes_on(tmp_path: Path) -> None:
    tasks = [
        BatchTask("good", "write it"),
        BatchTask("escape", "write it", files={"../outside.txt": "x"}),
        BatchTask("no-expect", "write it"),
    ]
    out = tmp_path / "results.jsonl"
    summary = await run_batch(tasks, team=make_team(tmp_path), results=out, model=script())
    by_id = {r["id"]: r for r in read_results(out)}
    assert by_id["good"]["ok"] is True
    assert by_id["escape"]["ok"] is False
    assert "outside the workspace" in str(by_id["escape"]["error"])
    assert by_id["escape"]["record"] is None
    assert by_id["no-expect"]["ok"] is True
    assert not (tmp_path / "outside.txt").exists()
    assert summary.failed == 1


async def test_unmet_expectations_fail_the_task_and_say_why(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 1, expect={"files": {"missing.txt": None}})
    out = tmp_path / "results.jsonl"
    await run_batch(tasks, team=make_team(tmp_path), results=out, model=script())
    (result,) = read_results(out)
    assert result["ok"] is False and result["expectations_passed"] is False
    assert result["problems"] == ["files: 'missing.txt' does not exist in the workspace"]


async def test_resume_skips_finished_tasks_and_reruns_a_line_cut_short(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 4)
    out = tmp_path / "results.jsonl"
    team = make_team(tmp_path)
    first = await run_batch(
        load_tasks(tasks)[:2],
        team=team,
        results=out,
        model=script(),
    )
    assert first.done == 2
    kept = out.read_text()
    with out.open("a") as file:
        file.write('{"id": "t002", "ok": tr')  # a crash in the middle of a line
    summary = await run_batch(tasks, team=team, results=out, model=script(), resume=True)
    assert (summary.skipped, summary.done) == (2, 2)
    text = out.read_text()
    assert text.startswith(kept)
    assert sorted(r["id"] for r in read_results(out)) == ["t000", "t001", "t002", "t003"]


async def test_an_existing_results_file_is_not_overwritten_without_resume(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 1)
    out = tmp_path / "results.jsonl"
    out.write_text('{"id": "old"}\n')
    with pytest.raises(ConfigError, match="--resume"):
        await run_batch(tasks, team=make_team(tmp_path), results=out, model=script())
    assert out.read_text() == '{"id": "old"}\n'

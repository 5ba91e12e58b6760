"""What a scenario run's record says it produced: the final text in ``summary.json`` and
in the outcome is the run's own result, the one its stream ended with."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm.events import IterationEnd, SessionEndEvent, StreamEvent, TextDelta, ToolUseStart
from swarm.messages import Message
from swarm.scenario import load_scenario, run_scenario
from swarm.tools import Tool
from swarm.types import StopReason, Usage

pytestmark = pytest.mark.anyio


def _scenario(tmp_path: Path, limits: str = "") -> Path:
    team = tmp_path / "team"
    team.mkdir()
    (team / "writer.yaml").write_text("name: writer\nsystem: You write.\ntools: [list_files]\n")
    path = tmp_path / "scenario.yaml"
    path.write_text("name: partial\nteam: team\ntask: Write a long answer.\n" + limits)
    return path


class _CutModel:
    """Answers the first call with a list_files call, then streams part of an answer in
    the second and stalls there (``streaming`` is set once the text is out): with
    ``trickle``, empty deltas follow until the run stops taking them (the loop checks its
    time limit between events), else nothing more comes."""

    model = None

    def __init__(self, *, trickle: bool = False) -> None:
        self.trickle = trickle
        self.calls = 0
        self.streaming = anyio.Event()

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        if self.calls == 1:
            yield TextDelta(0, "Looking first.")
            yield ToolUseStart(1, "call_1", "list_files")
            yield IterationEnd(1, StopReason.tool_use, Usage(10, 5))
            return
        yield TextDelta(0, "Half of an ans")
        yield TextDelta(0, "wer")
        self.streaming.set()
        while self.trickle:
            await anyio.sleep(0.05)
            yield TextDelta(0, "")
        await anyio.sleep_forever()


async def test_a_run_stopped_by_its_time_limit_records_the_text_streamed_so_far(
    tmp_path: Path,
) -> None:
    events: list[StreamEvent] = []
    outcome = await run_scenario(
        load_scenario(_scenario(tmp_path, "limits: {seconds: 1}\n")),
        model=_CutModel(trickle=True),
        workspace=tmp_path / "ws",
        on_event=events.append,
    )
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.budget
    assert end.final_text == "Half of an answer"
    summary = json.loads((outcome.record_dir / "summary.json").read_text())
    assert summary["final_text"] == end.final_text
    assert outcome.final_text == end.final_text
    assert outcome.iterations == end.iterations == 2


async def test_a_cancelled_run_records_the_last_whole_turn_s_text_as_its_stream_held_it(
    tmp_path: Path,
) -> None:
    model = _CutModel()
    runs = tmp_path / "runs"
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(
                lambda: run_scenario(
                    load_scenario(_scenario(tmp_path)),
                    model=model,
                    workspace=tmp_path / "ws",
                    runs_dir=runs,
                )
            )
            await model.streaming.wait()
            scope.cancel()  # as Ctrl-C does
    (record,) = runs.iterdir()
    summary = json.loads((record / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["stop_reason"] == "cancelled"
    assert summary["final_text"] == "Looking first."

"""A model of the user's own that plays a script (``PlaysScript``: ``used``, ``replay``,
``on_turn``) has its place in the script kept by the run record, as ``ScriptedModel``
has: journaled turn by turn, written in ``summary.json``, and given back on resume."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from swarm.events import IterationEnd, StreamEvent, TextDelta
from swarm.messages import Message
from swarm.scenario import load_scenario, run_scenario
from swarm.scenario.runner import resume_run
from swarm.tools import Tool
from swarm.types import StopReason, Usage

pytestmark = pytest.mark.anyio

ANSWERS = ["The first answer.", "The second answer."]


class OwnScript:
    """Answers with ``ANSWERS`` in order; not a ``ScriptedModel``."""

    model = "own-script"

    def __init__(self) -> None:
        self.used: dict[str, int] = {"writer": 0}
        self.replay: dict[str, list[int]] = {}
        self.on_turn: Callable[[str, int, int], None] | None = None

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        index = self.used["writer"]
        self.used["writer"] = index + 1
        if self.on_turn is not None:
            self.on_turn("writer", index, 0)
        yield TextDelta(0, ANSWERS[index])
        yield IterationEnd(1, StopReason.end_turn, Usage(10, 5))


async def _first_run(tmp_path: Path) -> Path:
    team = tmp_path / "team"
    team.mkdir()
    (team / "writer.yaml").write_text("name: writer\nsystem: You write.\n")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("name: own\nteam: team\ntask: Write.\n")
    outcome = await run_scenario(
        load_scenario(scenario), model=OwnScript(), workspace=tmp_path / "ws"
    )
    assert outcome.final_text == ANSWERS[0]
    return outcome.record_dir


async def test_a_model_that_plays_a_script_has_each_turn_in_the_record(tmp_path: Path) -> None:
    record = await _first_run(tmp_path)
    journal = [json.loads(line) for line in (record / "journal.jsonl").read_text().splitlines()]
    turns = [(e["turn"], e["index"], e["path"]) for e in journal if "turn" in e]
    assert turns == [("writer", 0, "writer")]
    summary = json.loads((record / "summary.json").read_text())
    assert summary["script_used"] == {"writer": 1}


async def test_a_resumed_run_goes_on_from_where_its_script_was_left(tmp_path: Path) -> None:
    record = await _first_run(tmp_path)
    outcome = await resume_run(record, "And then?", model=OwnScript())
    assert outcome.final_text == ANSWERS[1]
    summary = json.loads((record / "summary.json").read_text())
    assert summary["script_used"] == {"writer": 2}

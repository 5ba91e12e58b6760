"""The scripted model: per-role and per-instance turns, and the ids of its calls."""

from __future__ import annotations

import re

import pytest

from swarm.errors import TransportError
from swarm.events import TextDelta, ToolUseStart
from swarm.scenario.script import ScriptedModel, turn_call_id
from swarm.scenario.spec import ScriptTurn
from swarm.scope import RunScope, use_scope

pytestmark = pytest.mark.anyio


async def _play(model: ScriptedModel, path: str) -> tuple[str, list[str]]:
    text, ids = "", []
    with use_scope(RunScope(path=path, run_id="t")):
        async for event in model.stream([], [], "you work"):
            if isinstance(event, TextDelta):
                text += event.delta
            elif isinstance(event, ToolUseStart):
                ids.append(event.tool_use_id)
    return text, ids


def _turns(*texts: str) -> tuple[ScriptTurn, ...]:
    return tuple(ScriptTurn(text=t) for t in texts)


async def test_instance_key_wins_over_the_role_key_for_that_instance() -> None:
    model = ScriptedModel({"dev": _turns("shared 1", "shared 2"), "dev#2": _turns("second")})
    assert (await _play(model, "lead/dev#2"))[0] == "second"
    assert (await _play(model, "lead/dev#1"))[0] == "shared 1"
    assert (await _play(model, "lead/dev#3"))[0] == "shared 2"


async def test_instance_without_turns_of_its_own_or_its_role_fails_naming_it() -> None:
    model = ScriptedModel({"lead": _turns("hi"), "dev#1": _turns("one")})
    assert (await _play(model, "lead/dev#1"))[0] == "one"
    with pytest.raises(
        TransportError, match="no turns for role 'dev' nor for its instance 'dev#2'"
    ):
        await _play(model, "lead/dev#2")


async def test_on_turn_names_the_instance_key_a_resume_restores() -> None:
    model = ScriptedModel({"dev": _turns("a"), "dev#2": _turns("b", "c")})
    seen: list[tuple[str, int]] = []
    model.on_turn = lambda key, index, calls: seen.append((key, index))
    await _play(model, "lead/dev#2")
    await _play(model, "lead/dev#1")
    assert seen == [("dev#2", 0), ("dev", 0)]
    assert model.used == {"dev": 1, "dev#2": 1}


async def test_call_ids_of_instances_are_unique_and_provider_safe() -> None:
    call = ScriptTurn(call="write_file", args={"path": "a"})
    model = ScriptedModel({"dev": (call,), "dev#1": (call,), "dev-1": (call,)})
    ids = [(await _play(model, path))[1][0] for path in ("x/dev#1", "x/dev#2", "x/dev-1#1")]
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)
    assert turn_call_id("dev#1", 0, 1) != turn_call_id("dev-1", 0, 1)

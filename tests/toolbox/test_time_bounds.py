"""Every tool timeout and run limit fires whatever a tool does in Python: a pattern that
makes a backtracking engine run for ever, a sync handler looping in pure Python."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import Agent, MemoryContextStore, StopReason, Tool, ToolError, ToolResult
from swarm.budget import BudgetLimits
from swarm.events import SessionEndEvent
from swarm.team.delegation import team_scope
from swarm.testing import StubTransport, make_text_response, make_tool_uses_response
from swarm.toolbox import make_toolbox

from .conftest import RunCalls


@pytest.mark.anyio
async def test_a_catastrophic_pattern_returns_and_the_run_goes_on(
    ws: Path, run_calls: RunCalls
) -> None:
    (ws / "evil.txt").write_text("a" * 33 + "!\n" + "a" * 34 + "\n")
    tools = make_toolbox(ws)
    with anyio.fail_after(60):  # a guard against hanging, not a timing claim
        run = await run_calls(
            [tools["search"]], ("search", {"pattern": "^(a+)+$"}), ("search", {"pattern": "!"})
        )
    first, second = run.results
    assert not first.is_error and first.content == f"evil.txt:2: {'a' * 34}"
    assert second.content == "evil.txt:1: " + "a" * 33 + "!"
    end = run.events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.end_turn


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"foo(?=bar)", "lookahead (?=...)"),
        (r"foo(?!bar)", "negative lookahead (?!...)"),
        (r"(?<=def )\w+", "lookbehind (?<=...)"),
        (r"(?<!x)y", "negative lookbehind (?<!...)"),
        (r"(\w)\1", r"a backreference \1"),
        (r"(?P<q>')x(?P=q)", "a named backreference (?P=name)"),
        (r"(?>a+)b", "an atomic group (?>...)"),
        (r"a++", "a possessive quantifier ++"),
        (r"x{1001}", "a repetition count over 1000 {1001}"),
    ],
)
async def test_a_construct_re2_lacks_is_named_in_the_error(
    tools: dict[str, Tool[Any]], pattern: str, construct: str
) -> None:
    with pytest.raises(ToolError) as caught:
        await tools["search"](pattern=pattern)
    message = str(caught.value)
    assert message.startswith(f"search cannot use {construct} in {pattern!r}: ")
    assert "never backtracks" in message


@pytest.mark.anyio
async def test_python_anchors_and_classes_keep_their_meaning(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.py").write_text("end\nx = 1  # end\r\nthe end]\n")
    assert await tools["search"](pattern=r"end\Z") == "a.py:1: end\na.py:2: x = 1  # end"
    assert await tools["search"](pattern=r"\Aend") == "a.py:1: end"
    assert await tools["search"](pattern=r"[]]\Z") == "a.py:3: the end]"
    assert await tools["search"](pattern=r"END", ignore_case=True) == (
        "a.py:1: end\na.py:2: x = 1  # end\na.py:3: the end]"
    )


@pytest.mark.anyio
async def test_a_match_never_spans_two_lines(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\n")
    assert str(await tools["search"](pattern=r"alpha\sbeta")).startswith("No matches")
    assert str(await tools["search"](pattern=r"alpha[^x]beta")).startswith("No matches")
    assert str(await tools["search"](pattern=r"(?s)alpha.beta")).startswith("No matches")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Lets a looping handler's abandoned thread end once the test is done, or after 20 s
    (so a call that cannot be cut ends, and the test fails rather than hangs)."""
    event = threading.Event()
    backstop = threading.Timer(20, event.set)
    backstop.start()
    yield event
    event.set()
    backstop.cancel()


def _spinning(release: threading.Event) -> Tool[None]:
    def spin() -> str:
        count = 0
        while not release.is_set():  # pure Python: no await, no sleep
            count += 1
        return f"spun {count}"

    return Tool("spin", spin)


@pytest.mark.anyio
async def test_a_sync_handler_looping_in_python_is_cut_by_its_timeout(
    release: threading.Event,
) -> None:
    model = StubTransport(
        [make_tool_uses_response([("spin", "call_0", {})]), make_text_response("after")]
    )
    agent = Agent("x", model, [_spinning(release)], tool_timeout=0.2)
    with anyio.fail_after(60):  # a guard against hanging, not a timing claim
        async with agent.run_stream("go", MemoryContextStore()) as stream:
            events = [event async for event in stream]
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and "tool 'spin' timed out after 0.2s" in result.content
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.end_turn
    assert not release.is_set()  # the run ended while the thread still looped


@pytest.mark.anyio
@pytest.mark.parametrize("calls", [1, 2])
async def test_a_sync_handler_looping_in_python_is_cut_by_the_run_time_limit(
    release: threading.Event, calls: int
) -> None:
    uses = [("spin", f"call_{i}", {}) for i in range(calls)]
    model = StubTransport([make_tool_uses_response(uses), make_text_response("unreachable")])
    agent = Agent("x", model, [_spinning(release)], tool_timeout=None)
    scope = team_scope("root", limits=BudgetLimits(seconds=0.2))
    context = MemoryContextStore()
    with anyio.fail_after(60):  # a guard against hanging, not a timing claim
        async with agent.run_stream("go", context, scope=scope) as stream:
            events = [event async for event in stream]
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.budget
    results = [r for m in await context.get_history() for r in m.tool_results]
    assert len(results) == calls and all(r.is_error for r in results)

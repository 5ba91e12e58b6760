"""AutoCompactStore: when it compacts, what a run sees, and how it survives failures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from swarm import (
    Agent,
    ContextCompacted,
    Error,
    IterationEnd,
    Message,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDelta,
    Tool,
    ToolResultBlock,
    ToolUseBlock,
    TransportError,
    TurnEnd,
    TurnStart,
    Usage,
    tool,
)
from swarm.budget import Budget, BudgetLimits
from swarm.context import AutoCompactStore, MemoryContextStore, SQLiteContextStore
from swarm.models.registry import ModelSpec
from swarm.scope import RunScope
from swarm.testing import (
    FunctionTransport,
    StubTransport,
    make_text_response,
    make_tool_use_response,
)

from .support import assert_valid_history

pytestmark = pytest.mark.anyio

TASK = Message.user("Tidy the repository.")


def pair(call: str) -> list[Message]:
    return [
        Message("assistant", [ToolUseBlock(call, "list_files", {"dir": call})]),
        Message("user", [ToolResultBlock(call, f"files in {call}")]),
    ]


def long_history(calls: int = 5) -> list[Message]:
    return [TASK, *[m for n in range(calls) for m in pair(f"c{n}")]]


class Summariser:
    """A summariser that answers ``summary`` and counts its calls (or fails, if told how)."""

    def __init__(self, summary: str = "They listed five directories.", fail: str = "") -> None:
        self.summary = summary
        self.fail = fail
        self.calls = 0
        self.context_window: int | None = None

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        if self.fail == "raises":
            raise TransportError("503 from the provider", status=503)
        if self.fail == "error event":
            yield Error(TransportError("stream dropped"))
            return
        for event in make_text_response("" if self.fail == "no text" else self.summary):
            yield event


async def test_compacts_when_a_calls_input_reaches_the_threshold() -> None:
    inner = MemoryContextStore(long_history())
    store = AutoCompactStore(inner, Summariser(), keep_recent=2, max_tokens=1000, threshold=0.8)
    await store.add_context_tokens(799, 10)
    assert await store.get_history() == long_history()
    await store.add_context_tokens(800, 10)
    assert await store.get_history() == [
        Message(
            "user",
            [
                *TASK.content,
                TextBlock("[Summary of the earlier conversation]\nThey listed five directories."),
            ],
        ),
        *pair("c4"),
    ]
    assert await store.get_context_tokens() == (1599, 20)


@pytest.mark.parametrize(
    ("window", "fires_at"), [(10_000, 7_500), (None, 96_000)], ids=["transport", "default"]
)
async def test_max_tokens_defaults_to_the_transports_context_window(
    window: int | None, fires_at: int
) -> None:
    summariser = Summariser()
    summariser.context_window = window
    store = AutoCompactStore(MemoryContextStore(long_history()), summariser, keep_recent=2)
    assert store.max_tokens == (window or 128_000)
    await store.add_context_tokens(fires_at - 1, 0)
    assert summariser.calls == 0
    await store.add_context_tokens(fires_at, 0)
    assert summariser.calls == 1


async def test_max_tokens_falls_back_to_the_window_of_the_transports_model_spec() -> None:
    # axio's transports name their model with a ModelSpec that carries the window
    summariser = Summariser()
    summariser.model = ModelSpec("house", 20_000, 4_000, 0.0, 0.0)  # type: ignore[attr-defined]
    store = AutoCompactStore(MemoryContextStore(long_history()), summariser, keep_recent=2)
    assert store.max_tokens == 20_000
    await store.add_context_tokens(14_999, 0)
    assert summariser.calls == 0
    await store.add_context_tokens(15_000, 0)
    assert summariser.calls == 1


@pytest.mark.parametrize("fail", ["raises", "error event", "no text"])
async def test_a_failing_summariser_leaves_the_history_untouched_and_is_reported(
    fail: str,
) -> None:
    summariser = Summariser(fail=fail)
    store = AutoCompactStore(
        MemoryContextStore(long_history()), summariser, keep_recent=2, max_tokens=1000
    )
    with capture_logs() as logs:
        await store.add_context_tokens(900, 10)
    assert await store.get_history() == long_history()
    [entry] = logs
    assert entry["log_level"] == "warning"
    assert entry["event"] == "context not compacted"
    assert entry["reason"] == "the summariser failed"
    assert entry["session_id"] == store.session_id


async def test_after_a_failure_it_waits_for_the_context_to_grow_before_retrying() -> None:
    summariser = Summariser(fail="raises")
    store = AutoCompactStore(
        MemoryContextStore(long_history()), summariser, keep_recent=2, max_tokens=1000
    )
    with capture_logs():
        await store.add_context_tokens(900, 0)
        await store.add_context_tokens(900, 0)
        await store.add_context_tokens(949, 0)
        assert summariser.calls == 1
        await store.add_context_tokens(950, 0)  # grew by 5 % of max_tokens
        assert summariser.calls == 2
        await store.add_context_tokens(1049, 0)  # the next step is twice as long
        assert summariser.calls == 2
        summariser.fail = ""
        await store.add_context_tokens(1050, 0)
    assert summariser.calls == 3
    assert len(await store.get_history()) == 3


async def test_on_compact_sees_the_history_about_to_be_compacted() -> None:
    seen: list[list[Message]] = []

    async def on_compact(history: list[Message]) -> None:
        seen.append(history)
        assert await store.get_history() == long_history()  # not replaced yet

    store = AutoCompactStore(
        MemoryContextStore(long_history()),
        Summariser(),
        keep_recent=2,
        max_tokens=100,
        on_compact=on_compact,
    )
    await store.add_context_tokens(90, 0)
    assert seen == [long_history()]
    assert len(await store.get_history()) == 3


async def test_a_sync_on_compact_hook_is_called_too() -> None:
    seen: list[int] = []
    store = AutoCompactStore(
        MemoryContextStore(long_history()),
        Summariser(),
        keep_recent=2,
        max_tokens=100,
        on_compact=lambda history: seen.append(len(history)),
    )
    await store.add_context_tokens(90, 0)
    assert seen == [11]


async def test_an_on_compact_hook_may_write_to_the_store() -> None:
    async def note(history: list[Message]) -> None:
        await store.append_many(pair("noted"))

    store = AutoCompactStore(
        MemoryContextStore(long_history()),
        Summariser(),
        keep_recent=2,
        max_tokens=100,
        on_compact=note,
    )
    await store.add_context_tokens(90, 0)
    assert (await store.get_history())[1:] == [*pair("c4"), *pair("noted")]


async def test_an_on_compact_hook_that_raises_cancels_the_compaction() -> None:
    def refuse(history: list[Message]) -> None:
        raise RuntimeError("not now")

    store = AutoCompactStore(
        MemoryContextStore(long_history()),
        Summariser(),
        keep_recent=2,
        max_tokens=100,
        on_compact=refuse,
    )
    with capture_logs() as logs:
        await store.add_context_tokens(90, 0)
    assert await store.get_history() == long_history()
    assert [entry["reason"] for entry in logs] == ["the on_compact hook failed"]


async def test_messages_written_while_summarising_follow_the_compacted_part() -> None:
    async def respond(
        messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> list[StreamEvent]:
        await store.append_many(pair("during"))  # the live store stays writable
        return make_text_response("Summary.")

    store = AutoCompactStore(
        MemoryContextStore(long_history()),
        FunctionTransport(respond),
        keep_recent=2,
        max_tokens=100,
    )
    with capture_logs():
        await store.add_context_tokens(90, 0)
    history = await store.get_history()
    assert history[1:] == [*pair("c4"), *pair("during")]
    assert history[0].content[-1] == TextBlock("[Summary of the earlier conversation]\nSummary.")
    assert_valid_history(history)


async def test_compaction_archives_the_old_history_in_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as inner:
        await inner.append_many(long_history())
        store = AutoCompactStore(inner, Summariser(), keep_recent=2, max_tokens=100)
        await store.add_context_tokens(90, 0)
    async with SQLiteContextStore(db, "s") as reopened:
        [segment] = await reopened.archived_segments()
        assert segment.messages == long_history()
        assert len(await reopened.get_history()) == 3


async def test_fork_wraps_a_fork_of_the_wrapped_store(tmp_path: Path) -> None:
    async with SQLiteContextStore(tmp_path / "ctx.db") as inner:
        await inner.append(TASK)
        store = AutoCompactStore(inner, Summariser(), keep_recent=3, max_tokens=500, threshold=0.5)
        forked = await store.fork()
        assert isinstance(forked, AutoCompactStore)
        assert isinstance(forked.store, SQLiteContextStore)
        assert forked.session_id != store.session_id
        assert (forked.keep_recent, forked.max_tokens, forked.threshold) == (3, 500, 0.5)
        assert await forked.get_history() == [TASK]
        sessions = {s.session_id: s for s in await store.list_sessions()}
        assert sessions[forked.session_id].parent_id == store.session_id
        await forked.close()


async def test_session_tokens_and_sessions_are_the_wrapped_stores(tmp_path: Path) -> None:
    inner = SQLiteContextStore(tmp_path / "ctx.db", "s")
    store = AutoCompactStore(inner, Summariser(), max_tokens=1000)
    await store.append(TASK)
    await store.set_context_tokens(5, 6)
    await store.add_context_tokens(1, 1)
    assert store.session_id == "s"
    assert await inner.get_context_tokens() == (6, 7)
    assert await store.get_context_tokens() == (6, 7)
    assert await store.list_sessions() == await inner.list_sessions()
    await store.close()
    with pytest.raises(RuntimeError, match="closed"):
        await inner.get_history()


@tool
async def list_files(dir: str) -> str:
    """List a directory."""
    return f"files in {dir}"


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_run_shows_the_compaction_in_its_stream(tmp_path: Path, backend: str) -> None:
    seen: list[list[Message]] = []
    systems: set[str] = set()

    def respond(messages: list[Message], tools: list[Tool[Any]], system: str) -> list[StreamEvent]:
        seen.append(list(messages))
        systems.add(system)
        turn = len(seen)
        if turn <= 5:  # the fifth call reports a context near the window
            usage = Usage(900 if turn == 5 else 100 * turn, 5)
            return make_tool_use_response(
                "list_files", f"c{turn}", {"dir": f"d{turn}"}, usage=usage
            )
        return make_text_response("Tidy.")

    inner = MemoryContextStore() if backend == "memory" else SQLiteContextStore(tmp_path / "ctx.db")
    summariser = StubTransport([make_text_response("Listed four directories.")])
    store = AutoCompactStore(inner, summariser, keep_recent=2, max_tokens=1000)
    agent = Agent("You tidy repositories.", FunctionTransport(respond), [list_files])
    async with agent.run_stream("Tidy the repository.", store) as stream:
        events = [event async for event in stream]
    await store.close()

    compacted = [e for e in events if isinstance(e, ContextCompacted)]
    assert compacted == [ContextCompacted(11, 3, 900, "Listed four directories.")]
    at = events.index(compacted[0])  # after the fifth call's result, before the sixth call
    assert [e.iteration for e in events[:at] if isinstance(e, IterationEnd)] == [1, 2, 3, 4, 5]
    before = events[at - 1]  # the fifth turn, stored with its result
    assert isinstance(before, TurnEnd) and before.iteration == 5
    assert [r.tool_use_id for r in before.tool_results] == ["c5"]
    assert events[at + 1 : at + 3] == [TurnStart(6), TextDelta(0, "Tidy.")]

    after = seen[5]  # what the model saw on the call after the compaction
    assert after[0].content[0] == TextBlock("Tidy the repository.")
    assert after[0].content[1].text.endswith("Listed four directories.")  # type: ignore[union-attr]
    assert [m.tool_uses[0].id for m in after if m.tool_uses] == ["c5"]
    assert_valid_history(after)
    assert systems == {"You tidy repositories."}  # the system prompt is never touched


async def test_cancelling_while_summarising_leaves_the_history_untouched() -> None:
    started = anyio.Event()

    async def respond(
        messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> list[StreamEvent]:
        started.set()
        await anyio.sleep_forever()
        return []

    summariser = FunctionTransport(respond)
    store = AutoCompactStore(
        MemoryContextStore(long_history()), summariser, keep_recent=2, max_tokens=100
    )
    async with anyio.create_task_group() as group:
        group.start_soon(store.add_context_tokens, 90, 0)
        await started.wait()
        group.cancel_scope.cancel()
    assert await store.get_history() == long_history()

    summariser.respond = lambda messages, tools, system: make_text_response("Later.")
    await store.add_context_tokens(90, 0)  # not stuck: the next call compacts
    assert len(await store.get_history()) == 3


async def test_the_summary_is_charged_to_the_running_agents_budget() -> None:
    calls: list[int] = []

    def respond(messages: list[Message], tools: list[Tool[Any]], system: str) -> list[StreamEvent]:
        calls.append(len(calls))
        if len(calls) % 2:  # a context near the window: compaction follows this call
            return make_tool_use_response("list_files", "c1", {"dir": "d"}, usage=Usage(900, 5))
        return make_text_response("Tidy.", usage=Usage(100, 5))

    def scope_with(limits: BudgetLimits) -> RunScope:
        return RunScope(path="tidier", budget=Budget("tidier", limits))

    summariser = StubTransport([make_text_response("Listed d.", usage=Usage(300, 40))] * 2)
    agent = Agent("You tidy.", FunctionTransport(respond), [list_files])
    scope = scope_with(BudgetLimits())
    store = AutoCompactStore(MemoryContextStore(), summariser, keep_recent=0, max_tokens=1000)
    async with agent.run_stream("Tidy the repository.", store, scope=scope) as stream:
        end = await stream.get_session_end()
    assert end.usage_tree is not None
    assert end.usage_tree.usage == Usage(900 + 300 + 100, 5 + 40 + 5)  # both calls and the summary
    assert end.usage_tree.iterations == 2  # the summary is not a turn of the agent

    scope = scope_with(BudgetLimits(tokens=1000))  # the summary spends what is left
    store = AutoCompactStore(MemoryContextStore(), summariser, keep_recent=0, max_tokens=1000)
    async with agent.run_stream("Tidy the repository.", store, scope=scope) as stream:
        end = await stream.get_session_end()
    assert end.stop_reason == StopReason.budget
    assert_valid_history(await store.get_history())

"""compact_context: what a compacted history keeps, what the summariser sees, how it fails."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from swarm import (
    CompactionError,
    Error,
    ImageBlock,
    Message,
    StreamEvent,
    TextBlock,
    Tool,
    ToolResultBlock,
    ToolUseBlock,
    TransportError,
)
from swarm.context import DEFAULT_SUMMARY_PROMPT, MemoryContextStore, compact_context
from swarm.testing import FunctionTransport, StubTransport, make_text_response

from .support import assert_valid_history

pytestmark = pytest.mark.anyio

TASK = Message(
    "user", [TextBlock("Fix the failing test in parser.py."), ImageBlock("image/png", b"x")]
)


def calls(ids: list[str], *, text: str = "") -> list[Message]:
    """An assistant turn calling ``read_file`` once per id, and the user message with the
    results."""
    lead: list[Any] = [TextBlock(text)] if text else []
    return [
        Message(
            "assistant", [*lead, *[ToolUseBlock(i, "read_file", {"path": f"{i}.py"}) for i in ids]]
        ),
        Message("user", [ToolResultBlock(i, f"contents of {i}.py") for i in ids]),
    ]


def random_history(seed: int) -> list[Message]:
    """A history the loop could have written: tool turns with one to three calls, plain
    answers followed by a new user message, sometimes ending on an answer."""
    rng = random.Random(seed)
    history = [TASK]
    for turn in range(rng.randint(0, 14)):
        if rng.random() < 0.75:
            ids = [f"t{turn}c{k}" for k in range(rng.randint(1, 3))]
            history += calls(ids, text="Looking." if rng.random() < 0.3 else "")
        else:
            history += [Message.assistant(f"Answer {turn}."), Message.user(f"Follow-up {turn}.")]
    if rng.random() < 0.5:
        history.append(Message.assistant("All done."))
    return history


def summariser(summary: str = "They read the parser and found the bug.") -> FunctionTransport:
    def respond(messages: list[Message], tools: list[Tool[Any]], system: str) -> list[StreamEvent]:
        return make_text_response(summary)

    return FunctionTransport(respond)


@pytest.mark.parametrize("seed", range(40))
async def test_compaction_keeps_tool_pairs_whole_and_roles_alternating(seed: int) -> None:
    history = random_history(seed)
    for keep_recent in range(0, 9):
        compacted = await compact_context(
            MemoryContextStore(history), summariser(), keep_recent=keep_recent
        )
        if compacted is None:
            continue
        assert_valid_history(compacted)
        assert compacted[0].content[: len(TASK.content)] == TASK.content
        summary_at = 0 if len(compacted[0].content) > len(TASK.content) else 1
        assert "They read the parser" in compacted[summary_at].text
        tail = compacted[summary_at + 1 :]
        assert tail == history[len(history) - len(tail) :]
        assert len(history) - len(tail) - 1 >= 2  # something was summarised
        assert len(compacted) < len(history)


@pytest.mark.parametrize(
    ("history", "keep_recent", "expected"),
    [
        pytest.param(
            [TASK, *calls(["a"]), *calls(["b"]), *calls(["c"])],
            2,
            "task+summary, c",
            id="recent part starts with the assistant",
        ),
        pytest.param(
            [TASK, *calls(["a"]), *calls(["b"]), *calls(["c"])],
            1,
            "task+summary, c",
            id="cut moves back to keep a tool call with its result",
        ),
        pytest.param(
            [TASK, *calls(["a"]), *calls(["b"]), Message.assistant("x"), Message.user("next")],
            1,
            "task, summary, next",
            id="recent part starts with a user message",
        ),
        pytest.param(
            [TASK, *calls(["a", "b"]), *calls(["c", "d"])],
            0,
            "task+summary",
            id="nothing recent kept",
        ),
        pytest.param(
            [TASK, *calls(["a", "b", "c"]), *calls(["d"]), Message.assistant("done")],
            3,
            "task+summary, d, done",
            id="parallel calls summarised together",
        ),
    ],
)
async def test_compacted_history_shapes(
    history: list[Message], keep_recent: int, expected: str
) -> None:
    compacted = await compact_context(
        MemoryContextStore(history), summariser("S."), keep_recent=keep_recent
    )
    assert compacted is not None
    assert_valid_history(compacted)

    def describe(message: Message) -> str:
        if message.content[: len(TASK.content)] == TASK.content:
            return "task+summary" if len(message.content) > len(TASK.content) else "task"
        if message.text.startswith("[Summary"):
            return "summary"
        if message.tool_uses:
            return ",".join(u.id for u in message.tool_uses)
        return message.text

    described = [describe(m) for m in compacted if not m.tool_results]
    assert ", ".join(described) == expected


async def test_the_first_user_message_stays_verbatim_on_top() -> None:
    history = [TASK, *calls(["a"]), *calls(["b"]), *calls(["c"]), *calls(["d"])]
    compacted = await compact_context(MemoryContextStore(history), summariser("S."), keep_recent=2)
    assert compacted is not None
    assert compacted[0].role == "user"
    assert compacted[0].content[:2] == TASK.content
    assert compacted[0].content[2] == TextBlock("[Summary of the earlier conversation]\nS.")
    assert compacted[1:] == history[-2:]


async def test_the_summariser_reads_the_middle_as_a_transcript() -> None:
    history = [
        TASK,
        Message(
            "assistant",
            [TextBlock("Reading it."), ToolUseBlock("a", "read_file", {"path": "p.py"})],
        ),
        Message("user", [ToolResultBlock("a", "def parse(): ...")]),
        Message("assistant", [ToolUseBlock("b", "shell", {"argv": ["pytest"]})]),
        Message("user", [ToolResultBlock("b", "1 failed", is_error=True)]),
        *calls(["c"]),
    ]
    model = StubTransport([make_text_response("S.")])
    await compact_context(MemoryContextStore(history), model, keep_recent=2)

    [(messages, tools, system)] = model.calls
    assert system == DEFAULT_SUMMARY_PROMPT
    assert tools == []
    [request] = messages
    assert request.role == "user"
    assert all(isinstance(block, TextBlock) for block in request.content)
    text = request.text
    assert "Fix the failing test in parser.py." in text  # the task, for context
    assert "Assistant: Reading it." in text
    assert 'Assistant called tool read_file with {"path": "p.py"}' in text
    assert "Tool read_file returned: def parse(): ..." in text
    assert "Tool shell failed: 1 failed" in text
    assert "c.py" not in text  # the recent part is kept, not summarised


async def test_long_tool_output_is_clipped_for_the_summariser() -> None:
    history = [TASK, *calls(["a"]), *calls(["b"]), *calls(["c"])]
    history[2] = Message("user", [ToolResultBlock("a", "x" * 10_000)])
    model = StubTransport([make_text_response("S.")])
    await compact_context(MemoryContextStore(history), model, keep_recent=2)
    text = model.calls[0][0][0].text
    assert "x" * 2000 + " […8000 more characters]" in text
    assert "x" * 2001 not in text


async def test_a_second_compaction_folds_the_first_summary_in() -> None:
    history = [TASK, *calls(["a"]), *calls(["b"]), *calls(["c"])]
    once = await compact_context(MemoryContextStore(history), summariser("First."), keep_recent=2)
    assert once is not None
    grown = [*once, *calls(["d"]), *calls(["e"])]
    model = StubTransport([make_text_response("Second.")])
    twice = await compact_context(MemoryContextStore(grown), model, keep_recent=2)

    assert twice is not None
    assert twice[0].content == [
        *TASK.content,
        TextBlock("[Summary of the earlier conversation]\nSecond."),
    ]
    assert twice[1:] == calls(["e"])
    request = model.calls[0][0][0].text
    assert "<earlier-summary>\nFirst.\n</earlier-summary>" in request
    assert "Tool read_file returned: contents of c.py" in request


@pytest.mark.parametrize(
    "history",
    [
        [TASK],
        [TASK, *calls(["a"])],
        [TASK, *calls(["a"]), *calls(["b"]), *calls(["c"])][:5],
    ],
    ids=["task only", "one call", "nothing between task and recent part"],
)
async def test_a_short_history_is_not_compacted(history: list[Message]) -> None:
    model = StubTransport([])
    assert await compact_context(MemoryContextStore(history), model, keep_recent=4) is None
    assert model.calls == []


class Failing:
    """A summariser that fails the way a real one can."""

    def __init__(self, how: str) -> None:
        self.how = how

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        if self.how == "raises":
            raise TransportError("503 from the provider", status=503)
        if self.how == "error event":
            yield Error(TransportError("stream dropped"))
        elif self.how == "no text":
            yield make_text_response("   ")[0]


@pytest.mark.parametrize("how", ["raises", "error event", "no text"])
async def test_a_failing_summariser_raises_compaction_error(how: str) -> None:
    store = MemoryContextStore([TASK, *calls(["a"]), *calls(["b"]), *calls(["c"])])
    with pytest.raises(CompactionError, match="summariser"):
        await compact_context(store, Failing(how), keep_recent=2)
    assert len(await store.get_history()) == 7

"""Test helpers: scripted transports and response builders for deterministic runs."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any

from swarm.events import IterationEnd, StreamEvent, TextDelta, ToolInputDelta, ToolUseStart
from swarm.messages import Message
from swarm.tools import Tool
from swarm.types import StopReason, Usage

__all__ = [
    "FunctionTransport",
    "history_problems",
    "StubTransport",
    "make_text_response",
    "make_tool_use_response",
    "make_tool_uses_response",
]


def make_text_response(
    text: str = "Done", iteration: int = 1, usage: Usage | None = None
) -> list[StreamEvent]:
    """The events of a model turn that answers ``text`` and ends its turn."""
    return [
        TextDelta(0, text),
        IterationEnd(iteration, StopReason.end_turn, usage or Usage(10, 5)),
    ]


def make_tool_use_response(
    tool_name: str = "echo",
    tool_id: str = "call_1",
    tool_input: dict[str, Any] | None = None,
    iteration: int = 1,
    usage: Usage | None = None,
) -> list[StreamEvent]:
    """The events of a model turn that makes one tool call."""
    return make_tool_uses_response([(tool_name, tool_id, tool_input or {})], usage=usage)


def make_tool_uses_response(
    calls: Iterable[tuple[str, str, dict[str, Any] | str]],
    *,
    text: str = "",
    usage: Usage | None = None,
) -> list[StreamEvent]:
    """The events of a model turn that makes several tool calls ``(name, id, input)``.

    A ``str`` input is sent as raw argument text (to test unparseable JSON).
    """
    events: list[StreamEvent] = [TextDelta(0, text)] if text else []
    for offset, (name, call_id, tool_input) in enumerate(calls):
        index = offset + (1 if text else 0)
        raw = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
        events.append(ToolUseStart(index, call_id, name))
        events.append(ToolInputDelta(index, call_id, raw))
    events.append(IterationEnd(1, StopReason.tool_use, usage or Usage(10, 5)))
    return events


class StubTransport:
    """A transport that plays a list of responses, one per model call.

    Records every call's ``(messages, tools, system)`` in ``calls``. Raises
    ``IndexError`` (which the loop reports as an error) when it runs out.
    """

    def __init__(self, responses: list[list[StreamEvent]] | None = None) -> None:
        self.responses = list(responses or [])
        self.calls: list[tuple[list[Message], list[Tool[Any]], str]] = []

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        self.calls.append((messages, tools, system))
        if not self.responses:
            raise IndexError("StubTransport has no responses left")
        for event in self.responses.pop(0):
            yield event


Responder = Callable[
    [list[Message], list[Tool[Any]], str],
    Iterable[StreamEvent] | Awaitable[Iterable[StreamEvent]],
]


class FunctionTransport:
    """A transport whose responses come from a function of what the agent sent.

    ``respond(messages, tools, system)`` returns (or awaits to) the events of the turn, so
    a test can react to tool results, the offered tools or the system prompt.
    """

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.calls = 0

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        result = self.respond(messages, tools, system)
        if inspect.isawaitable(result):
            result = await result
        for event in result:
            yield event


def history_problems(history: Sequence[Message], *, alternating: bool = True) -> list[str]:
    """What makes a history invalid (empty when it is valid): two tool uses, or two
    results, of one message with the same id, a tool use not answered by the next
    message's results, a result answering no call of the message before it, or (with
    ``alternating``) two messages of the same role in a row."""
    problems: list[str] = []
    for i, message in enumerate(history):
        if alternating and i and message.role == history[i - 1].role:
            problems.append(f"messages {i - 1} and {i} are both {message.role}")
        for ids in (
            [u.id for u in message.tool_uses],
            [r.tool_use_id for r in message.tool_results],
        ):
            if len(set(ids)) != len(ids):
                problems.append(f"message {i} uses a call id twice")
        uses = {use.id for use in message.tool_uses}
        if uses:
            answered = (
                {r.tool_use_id for r in history[i + 1].tool_results}
                if i + 1 < len(history)
                else set()
            )
            if answered != uses:
                problems.append(f"the tool uses of message {i} are not all answered next")
        results = {r.tool_use_id for r in message.tool_results}
        before = {use.id for use in history[i - 1].tool_uses} if i else set()
        if results - before:
            problems.append(f"message {i} has results for calls the message before did not make")
    return problems

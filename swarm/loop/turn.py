"""Assembling one model turn from its stream events into an assistant message."""

from __future__ import annotations

import json
import uuid
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from swarm.events import (
    Error,
    IterationEnd,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from swarm.messages import ContentBlock, Message, ReasoningBlock, TextBlock, ToolUseBlock

__all__ = ["Turn"]


@dataclass(slots=True)
class _Call:
    id: str  # unique in the turn: the model's, or a new one (see ``Turn.start_call``)
    name: str
    given: str  # the id the model gave
    json_parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Reasoning:
    text: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Turn:
    """What one model call said: text, reasoning and tool calls by block index, the
    ``IterationEnd`` that closed it, or the error that broke it."""

    blocks: dict[int, list[str] | _Reasoning | _Call] = field(default_factory=dict)
    calls: dict[str, _Call] = field(default_factory=dict)
    end: IterationEnd | None = None
    error: BaseException | None = None

    def add(self, event: StreamEvent) -> StreamEvent | None:
        """Take in one event of the model's stream; what goes on to the stream's reader
        (``None``: the turn's end and its error, which the loop reports instead). A call
        that was given a new id is shown with it."""
        match event:
            case TextDelta():
                self.add_text(event.index, event.delta)
            case ToolInputDelta():
                call = self.add_arguments(event.index, event.tool_use_id, event.partial_json)
                if call is not None and call.id != event.tool_use_id:
                    return ToolInputDelta(event.index, call.id, event.partial_json)
            case ToolUseStart():
                call = self.start_call(event)
                if call.id != event.tool_use_id:
                    return ToolUseStart(event.index, call.id, event.name)
            case ReasoningDelta():
                self.add_reasoning(event)
            case IterationEnd():
                self.end = event
                return None
            case Error():
                self.fail(event)
                return None
            case _:
                pass
        return event

    def add_text(self, index: int, delta: str) -> None:
        parts = self.blocks.get(index)
        if not isinstance(parts, list):
            parts = self.blocks[index] = []
        parts.append(delta)

    def add_reasoning(self, event: ReasoningDelta) -> None:
        entry = self.blocks.get(event.index)
        if not isinstance(entry, _Reasoning):
            entry = self.blocks[event.index] = _Reasoning()
        entry.text.append(event.delta)
        if event.signature:
            entry.signature.append(event.signature)

    def start_call(self, event: ToolUseStart) -> _Call:
        """Start a call. One that comes without an id, or with the id of another call of
        this turn, gets a new id: results are matched to calls by id, and providers
        refuse a history in which two calls share one."""
        given = event.tool_use_id
        call_id = given if given and given not in self.calls else _fresh_id(given, self.calls)
        call = self.calls[call_id] = _Call(call_id, event.name, given)
        self.blocks.setdefault(event.index, call)
        return call

    def add_arguments(self, index: int, tool_use_id: str, partial_json: str) -> _Call | None:
        """Add to the arguments of the call at block ``index`` (else the latest call the
        model gave ``tool_use_id``); the call, ``None`` for an unknown one."""
        call = self.blocks.get(index)
        if not isinstance(call, _Call) or call.given != tool_use_id:
            calls = reversed(self.calls.values())
            call = next((c for c in calls if c.given == tool_use_id), None)
        if call is not None:
            call.json_parts.append(partial_json)
        return call

    def fail(self, event: Error | BaseException) -> None:
        self.error = event.exception if isinstance(event, Error) else event

    def partial_text(self) -> str:
        """The text streamed so far, in block order (what an interrupt keeps)."""
        return "".join(
            "".join(entry) for _, entry in sorted(self.blocks.items()) if isinstance(entry, list)
        )

    def message(self) -> tuple[Message, list[ToolUseBlock], dict[str, str]]:
        """The assistant message in block order, its tool uses, and, by call id, why a
        call's arguments could not be used."""
        content: list[ContentBlock] = []
        uses: list[ToolUseBlock] = []
        bad: dict[str, str] = {}
        placed: set[str] = set()

        def add_call(call: _Call) -> None:
            arguments, problem = _parse_arguments(call)
            if problem:
                bad[call.id] = problem
            use = ToolUseBlock(call.id, call.name, arguments)
            uses.append(use)
            content.append(use)
            placed.add(call.id)

        for index in sorted(self.blocks):
            entry = self.blocks[index]
            if isinstance(entry, list):
                content.append(TextBlock("".join(entry)))
            elif isinstance(entry, _Reasoning):
                content.append(
                    ReasoningBlock("".join(entry.text), "".join(entry.signature) or None)
                )
            else:
                add_call(entry)
        for call in self.calls.values():
            if call.id not in placed:
                add_call(call)
        return Message("assistant", content), uses, bad


def _fresh_id(given: str, taken: Container[str]) -> str:
    """An id no call of the turn has, shaped like ``given`` where it can be (its length
    and characters, its tail replaced by a counter: providers check the ids they get
    back), or a new ``call_...`` id when the model gave none."""
    if not given:
        return f"call_{uuid.uuid4().hex[:24]}"
    number = 2
    while True:
        tail = _base36(number)
        head = given[: len(given) - len(tail)] if len(given) > len(tail) else f"{given}_"
        if (candidate := head + tail) not in taken:
            return candidate
        number += 1


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while number:
        number, digit = divmod(number, 36)
        text = digits[digit] + text
    return text


def _parse_arguments(call: _Call) -> tuple[dict[str, Any], str | None]:
    raw = "".join(call.json_parts).strip()
    if not raw:
        return {}, None
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, (
            f"The arguments of this '{call.name}' call were not valid JSON ({exc.msg} at"
            f" character {exc.pos}). Call the tool again with a complete JSON object as its"
            " arguments."
        )
    if not isinstance(parsed, dict):
        return {}, (
            f"The arguments of this '{call.name}' call must be a JSON object, not"
            f" {type(parsed).__name__}. Call the tool again with an object."
        )
    return parsed, None

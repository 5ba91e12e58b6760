"""Assembling one model turn from its stream events into an assistant message."""

from __future__ import annotations

import json
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
    id: str
    name: str
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

    def add(self, event: StreamEvent) -> bool:
        """Take in one event of the model's stream; whether it goes on to the stream's
        reader (the turn's end and its error are reported by the loop instead)."""
        match event:
            case TextDelta():
                self.add_text(event.index, event.delta)
            case ToolInputDelta():
                self.add_arguments(event.tool_use_id, event.partial_json)
            case ToolUseStart():
                self.start_call(event)
            case ReasoningDelta():
                self.add_reasoning(event)
            case IterationEnd():
                self.end = event
                return False
            case Error():
                self.fail(event)
                return False
            case _:
                pass
        return True

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

    def start_call(self, event: ToolUseStart) -> None:
        call = self.calls[event.tool_use_id] = _Call(event.tool_use_id, event.name)
        self.blocks.setdefault(event.index, call)

    def add_arguments(self, tool_use_id: str, partial_json: str) -> None:
        call = self.calls.get(tool_use_id)
        if call is not None:
            call.json_parts.append(partial_json)

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

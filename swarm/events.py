"""Stream events: everything an ``AgentStream`` yields.

Transports yield the model-side events (``TextDelta``, ``ReasoningDelta``, ``ToolUseStart``,
``ToolInputDelta``, ``IterationEnd``, ``Error``); the loop adds the tool-side ones
(``ToolOutputDelta``, ``ToolResult``), ``ContextCompacted``, ``SubAgentEvent`` for events of
agents further down the tree, and always ends with exactly one ``SessionEndEvent``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from swarm.budget import UsageNode
from swarm.messages import ToolResultBlock
from swarm.types import StopReason, ToolCallID, ToolName, Usage

__all__ = [
    "ContextCompacted",
    "Error",
    "IterationEnd",
    "ReasoningDelta",
    "SessionEndEvent",
    "StreamEvent",
    "SubAgentEvent",
    "TextDelta",
    "ToolInputDelta",
    "ToolOutputDelta",
    "ToolResult",
    "ToolUseStart",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text; ``index`` is the content block it belongs to."""

    index: int
    delta: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning. ``signature`` carries a provider's signature
    of the reasoning block (appended across deltas), which must be sent back with it."""

    index: int
    delta: str
    signature: str = ""


@dataclass(frozen=True, slots=True)
class ToolUseStart:
    """The model began a tool call."""

    index: int
    tool_use_id: ToolCallID
    name: ToolName


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    """A piece of a tool call's JSON arguments."""

    index: int
    tool_use_id: ToolCallID
    partial_json: str


@dataclass(frozen=True, slots=True)
class ToolOutputDelta:
    """Progress a running tool reported (``key`` names the channel, e.g. ``stdout``)."""

    tool_use_id: ToolCallID
    name: ToolName
    key: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call finished (or was refused); ``block`` is what went into history."""

    tool_use_id: ToolCallID
    name: ToolName
    is_error: bool
    content: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] | None = None
    block: ToolResultBlock | None = None


@dataclass(frozen=True, slots=True)
class IterationEnd:
    """One model call ended: why, and the tokens it used."""

    iteration: int
    stop_reason: StopReason
    usage: Usage


@dataclass(frozen=True, slots=True)
class Error:
    """Something failed: the transport, the run, a limit. Always followed by the
    ``SessionEndEvent`` when it ends the session."""

    exception: BaseException

    @property
    def message(self) -> str:
        return str(self.exception) or type(self.exception).__name__


@dataclass(frozen=True, slots=True)
class ContextCompacted:
    """The context was compacted: older messages were replaced by a summary."""

    messages_before: int
    messages_after: int
    input_tokens: int
    summary: str


@dataclass(frozen=True, slots=True)
class SessionEndEvent:
    """The run ended; always the last event.

    ``total_usage`` sums this agent's own model calls; ``usage_tree`` (when the run has
    budgets, as team runs do) breaks usage down per agent and per subtree.
    """

    stop_reason: StopReason
    total_usage: Usage
    usage_tree: UsageNode | None = None


@dataclass(frozen=True, slots=True)
class SubAgentEvent:
    """An event of an agent further down the tree, tagged with that agent's path
    (``orchestrator/architect#2``)."""

    path: str
    event: StreamEvent


StreamEvent: TypeAlias = (
    TextDelta
    | ReasoningDelta
    | ToolUseStart
    | ToolInputDelta
    | ToolOutputDelta
    | ToolResult
    | IterationEnd
    | Error
    | ContextCompacted
    | SessionEndEvent
    | SubAgentEvent
)

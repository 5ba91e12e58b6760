"""Stream events: everything an ``AgentStream`` yields.

Transports yield the model-side events (``TextDelta``, ``ReasoningDelta``, ``ToolUseStart``,
``ToolInputDelta``, ``IterationEnd``, ``Error``); the loop adds the tool-side ones
(``AgentStart``, ``TurnStart``, ``MessageEnd``, ``ToolCallStart``, ``ToolOutputDelta``,
``ToolResult``, ``TurnEnd``), ``ContextCompacted``, ``SubAgentEvent`` for events of
agents further down the tree, and always ends with exactly one ``SessionEndEvent``.

Every event class has a stable ``type`` name (``TextDelta.type == "text_delta"``); the
JSON form of events (``swarm.event_codec``) is derived from it and the class's fields,
so a new event needs a name and fields of types that form knows, nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from swarm.messages import Message, ToolResultBlock
from swarm.types import StopReason, ToolCallID, ToolName, Usage, UsageNode

__all__ = [
    "AgentStart",
    "ApprovalRequested",
    "ContextCompacted",
    "Error",
    "IterationEnd",
    "MessageEnd",
    "OutputInvalid",
    "ReasoningDelta",
    "SessionEndEvent",
    "StreamEvent",
    "SubAgentEvent",
    "TextDelta",
    "ToolCallStart",
    "ToolInputDelta",
    "ToolOutputDelta",
    "ToolResult",
    "ToolUseStart",
    "TurnEnd",
    "TurnStart",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text; ``index`` is the content block it belongs to."""

    type: ClassVar[str] = "text_delta"
    index: int
    delta: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning. ``signature`` carries a provider's signature
    of the reasoning block (appended across deltas), which must be sent back with it."""

    type: ClassVar[str] = "reasoning_delta"
    index: int
    delta: str
    signature: str = ""


@dataclass(frozen=True, slots=True)
class ToolUseStart:
    """The model began a tool call."""

    type: ClassVar[str] = "tool_use_start"
    index: int
    tool_use_id: ToolCallID
    name: ToolName


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    """A piece of a tool call's JSON arguments."""

    type: ClassVar[str] = "tool_input_delta"
    index: int
    tool_use_id: ToolCallID
    partial_json: str


@dataclass(frozen=True, slots=True)
class ToolOutputDelta:
    """Progress a running tool reported (``key`` names the channel, e.g. ``stdout``)."""

    type: ClassVar[str] = "tool_output_delta"
    tool_use_id: ToolCallID
    name: ToolName
    key: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call finished (or was refused); ``block`` is what went into history."""

    type: ClassVar[str] = "tool_result"
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

    type: ClassVar[str] = "iteration_end"
    iteration: int
    stop_reason: StopReason
    usage: Usage


@dataclass(frozen=True, slots=True)
class Error:
    """Something failed: the transport, the run, a limit. Always followed by the
    ``SessionEndEvent`` when it ends the session."""

    type: ClassVar[str] = "error"
    exception: BaseException

    @property
    def message(self) -> str:
        return str(self.exception) or type(self.exception).__name__


@dataclass(frozen=True, slots=True)
class ContextCompacted:
    """The context was compacted: older messages were replaced by a summary."""

    type: ClassVar[str] = "context_compacted"
    messages_before: int
    messages_after: int
    input_tokens: int
    summary: str


@dataclass(frozen=True, slots=True)
class SessionEndEvent:
    """The run ended; always the last event: the run's result.

    ``total_usage`` sums this agent's own model calls; ``usage_tree`` (when the run has
    budgets, as team runs do) breaks usage down per agent and per subtree.
    ``final_text`` is the text of the model's last turn that had text (after an
    interrupt, what was streamed so far); ``iterations`` counts the model calls;
    ``duration_s`` is the wall time of the run; ``cost_usd`` is ``None`` when no price
    is known; ``session_id`` names the context store's session; ``error`` is the
    exception that ended the run, or ``None``. ``output`` is the validated final answer
    (JSON data) of an agent with an ``output`` schema, else ``None``; its JSON text is
    ``final_text``.
    """

    type: ClassVar[str] = "session_end"
    stop_reason: StopReason
    total_usage: Usage
    usage_tree: UsageNode | None = None
    final_text: str = ""
    iterations: int = 0
    duration_s: float = 0.0
    cost_usd: float | None = None
    session_id: str | None = None
    error: BaseException | None = None
    output: Any = None


@dataclass(frozen=True, slots=True)
class OutputInvalid:
    """A final answer did not meet the agent's ``output`` schema and was sent back:
    ``attempt`` counts the invalid answers so far, ``retries`` how many are allowed
    (one more past them ends the run with ``invalid_output``), ``problems`` names every
    wrong, missing or extra field."""

    type: ClassVar[str] = "output_invalid"
    attempt: int
    retries: int
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AgentStart:
    """The run started (always the first event): the agent's name and its session."""

    type: ClassVar[str] = "agent_start"
    name: str
    session_id: str


@dataclass(frozen=True, slots=True)
class TurnStart:
    """A model call is about to be made (``iteration`` counts from 1)."""

    type: ClassVar[str] = "turn_start"
    iteration: int


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """A message joined the history: the task, a steering message or follow-up, the
    model's answer, or the tool results."""

    type: ClassVar[str] = "message_end"
    message: Message


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call passed validation and the guards; its handler starts now."""

    type: ClassVar[str] = "tool_call_start"
    tool_use_id: ToolCallID
    name: ToolName
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """A turn ended: the model's message and the results of its tool calls."""

    type: ClassVar[str] = "turn_end"
    iteration: int
    message: Message
    tool_results: tuple[ToolResultBlock, ...] = ()


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """A call waits for a person's answer: asked now (``held`` false) or held in the run
    record for ``swarm approve`` (``request_id`` names it there; ``reason`` says why it
    needs asking). Its ``ToolCallStart`` or ``ToolResult`` ends the wait."""

    type: ClassVar[str] = "approval_requested"
    tool_use_id: ToolCallID
    name: ToolName
    request_id: str
    reason: str
    held: bool = False


@dataclass(frozen=True, slots=True)
class SubAgentEvent:
    """An event of an agent further down the tree, tagged with that agent's path
    (``orchestrator/architect#2``)."""

    type: ClassVar[str] = "sub_agent"
    path: str
    event: StreamEvent


StreamEvent: TypeAlias = (
    AgentStart
    | TurnStart
    | MessageEnd
    | ToolCallStart
    | TurnEnd
    | TextDelta
    | ReasoningDelta
    | ToolUseStart
    | ToolInputDelta
    | ToolOutputDelta
    | ToolResult
    | IterationEnd
    | Error
    | ContextCompacted
    | OutputInvalid
    | SessionEndEvent
    | SubAgentEvent
    | ApprovalRequested
)

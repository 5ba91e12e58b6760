"""The CompletionTransport protocol: the one seam between the loop and a model provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from swarm.events import StreamEvent
from swarm.messages import Message
from swarm.tools import Tool

__all__ = ["CompletionTransport", "DummyCompletionTransport"]


@runtime_checkable
class CompletionTransport(Protocol):
    """Streams one model call.

    ``stream`` yields ``TextDelta``, ``ReasoningDelta``, ``ToolUseStart``, ``ToolInputDelta``
    and ends with one ``IterationEnd`` carrying the stop reason and usage. A failure is
    either raised (``TransportError``) or yielded as an ``Error`` event; the loop turns
    both into the end of the session. Transports keep no per-call state, so one instance
    can serve many agents at once.
    """

    def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]: ...


class DummyCompletionTransport:
    """A placeholder for agent prototypes that get their real transport later via
    ``agent.copy(transport=...)``; fails loudly if it is ever used."""

    def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        raise RuntimeError(
            "this agent has no transport yet: use agent.copy(transport=...) before running it"
        )

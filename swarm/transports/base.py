"""The CompletionTransport protocol: the one seam between the loop and a model provider.

A transport needs only ``stream``. What else swarm reads from one, when it is there, is
typed by the small protocols below rather than looked up by name: its model
(``NamesModel``; budgets, prices, records), its context window (``HasContextWindow``;
compaction), the transport a wrapper serves (``WrapsTransport``; a recording), a copy with
other options (``CopyableTransport``; a role's ``tool_choice``), the prefill a small model
needs to start a tool call (``PrefillsToolCalls``) and ``aclose()`` (``ClosableTransport``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from swarm.events import StreamEvent
from swarm.messages import Message
from swarm.tools import Tool

__all__ = [
    "ClosableTransport",
    "CompletionTransport",
    "CopyableTransport",
    "DummyCompletionTransport",
    "HasContextWindow",
    "NamesModel",
    "PrefillsToolCalls",
    "WrapsTransport",
    "context_window_of",
    "model_name",
]


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


@runtime_checkable
class NamesModel(Protocol):
    """A transport that names its model: an id (``gpt-4.1``), or an object that carries
    one and may carry a ``context_window`` (axio's ``ModelSpec``)."""

    @property
    def model(self) -> object: ...


@runtime_checkable
class HasContextWindow(Protocol):
    """A transport that knows how many tokens its model reads at most."""

    @property
    def context_window(self) -> int | None: ...


@runtime_checkable
class WrapsTransport(Protocol):
    """A transport that serves another (a recording): ``inner`` is the one it wraps."""

    @property
    def inner(self) -> CompletionTransport: ...


@runtime_checkable
class CopyableTransport(Protocol):
    """A transport that makes a variant of itself with other options (``tool_choice``)."""

    def copy(self, **options: Any) -> CompletionTransport: ...


@runtime_checkable
class PrefillsToolCalls(Protocol):
    """A transport whose model needs an assistant prefill to start a tool call."""

    @property
    def required_prefill(self) -> str | None: ...


@runtime_checkable
class ClosableTransport(Protocol):
    """A transport holding a connection pool that ``aclose()`` releases."""

    async def aclose(self) -> None: ...


def model_name(transport: object) -> str | None:
    """The model id ``transport`` names (``NamesModel``), or ``None`` when it names none
    (a test stub) or names it with an object rather than an id."""
    # getattr, not isinstance with the runtime protocol (which checks the same attribute
    # but costs ~10 us through typing's machinery): every sub-agent asks this twice.
    model = getattr(transport, "model", None)
    return model if isinstance(model, str) else None


def context_window_of(transport: object) -> int | None:
    """The context window ``transport`` says it has: its own ``context_window``, else its
    model object's (axio's ``ModelSpec``); ``None`` when neither is a positive number."""
    # getattr, not isinstance with the runtime protocols (see ``model_name``): every
    # sub-agent's context asks this.
    window = getattr(transport, "context_window", None)
    if window is None:
        window = getattr(getattr(transport, "model", None), "context_window", None)  # axio's
    return window if isinstance(window, int) and window > 0 else None

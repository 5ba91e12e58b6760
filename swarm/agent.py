"""Agent: the state of one agent (prompt, transport, tools, limits); AgentStream: one run."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from swarm.context.base import ContextStore
from swarm.dispatch import dispatch_tools
from swarm.events import IterationEnd, SessionEndEvent, StreamEvent, TextDelta
from swarm.loop import Control, run_loop
from swarm.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from swarm.run import RunScope
from swarm.tools import Tool
from swarm.transports.base import CompletionTransport

__all__ = ["Agent", "AgentStream", "ToolSelector"]


@runtime_checkable
class ToolSelector(Protocol):
    """Trims the tools offered to the model before each iteration."""

    async def select(
        self, messages: Iterable[Message], tools: Iterable[Tool[Any]]
    ) -> Iterable[Tool[Any]]: ...


class AgentStream:
    """One run of an agent: an async iterator of events that ends with ``SessionEndEvent``.

    Use it as ``async with agent.run_stream(task, ctx) as stream: async for e in stream``
    (the ``with`` closes the run if the loop exits early), or call ``get_final_text()``.
    ``interrupt()`` (from any task) stops the run; it then ends with stop reason
    ``cancelled`` and a valid history.
    """

    def __init__(
        self, generator: AsyncGenerator[StreamEvent, None], control: Control | None = None
    ):
        self._generator = generator
        self._control = control or Control()
        self._text: list[str] = []
        self._final_text = ""
        self._session_end: SessionEndEvent | None = None

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._session_end is not None:
            raise StopAsyncIteration
        event = await self._generator.__anext__()
        match event:
            case TextDelta(delta=delta):
                self._text.append(delta)
            case IterationEnd():
                if self._text:
                    self._final_text = "".join(self._text)
                    self._text.clear()
            case SessionEndEvent():
                self._session_end = event
            case _:
                pass
        return event

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the run now (if it is still going) and release it; the context stays valid."""
        await self._generator.aclose()

    def interrupt(self) -> None:
        """Ask the run to stop: the model call or the tool calls in flight are cancelled and
        the stream ends with ``SessionEndEvent(stop_reason=cancelled)``."""
        self._control.interrupt()

    async def get_session_end(self) -> SessionEndEvent:
        """Consume the rest of the stream and return its ``SessionEndEvent``."""
        async for _ in self:
            pass
        assert self._session_end is not None
        return self._session_end

    async def get_final_text(self) -> str:
        """Consume the rest of the stream and return the text of the model's last turn."""
        await self.get_session_end()
        return self._final_text

    @property
    def final_text(self) -> str:
        """The text of the model's last turn so far."""
        return self._final_text

    @property
    def session_end(self) -> SessionEndEvent | None:
        return self._session_end


@dataclass(slots=True)
class Agent:
    """A system prompt, a transport and tools, run in a loop until the model is done.

    ``max_iterations`` bounds the model calls of one run (reaching it ends the run with
    stop reason ``error``); ``last_iteration_message`` is added to what the model sees on
    the last one only. ``tool_timeout`` is the default timeout of every tool call
    (seconds; a tool's own ``timeout`` wins). ``name`` names the agent in events and paths.
    """

    system: str
    transport: CompletionTransport
    tools: list[Tool[Any]] = field(default_factory=list)
    selector: ToolSelector | None = field(default=None)
    max_iterations: int = field(default=50)
    last_iteration_message: Message | None = field(default=None)
    tool_timeout: float | None = field(default=None, kw_only=True)
    name: str = field(default="agent", kw_only=True)

    def copy(self, **overrides: Any) -> Agent:
        """A new agent with the given fields replaced; the rest are shared."""
        return dataclasses.replace(self, **overrides)

    def run_stream(
        self,
        user_message: str | Message | Sequence[ContentBlock] | None,
        context: ContextStore,
        *,
        scope: RunScope | None = None,
    ) -> AgentStream:
        """Start a run: the message is appended to ``context`` and the loop streams events.

        ``None`` continues from the context as it stands (e.g. after tool results were
        added by hand). ``scope`` makes the run part of a larger one (its path, budget,
        observers); by default it is the scope current when the run starts. Never raises
        for model, tool, guard, transport or context store failures: they end the stream
        with an ``Error`` and its ``SessionEndEvent``.
        """
        control = Control()
        return AgentStream(run_loop(self, user_message, context, control, scope), control)

    async def run(
        self,
        user_message: str | Message | Sequence[ContentBlock] | None,
        context: ContextStore,
        *,
        scope: RunScope | None = None,
    ) -> str:
        """Run to the end and return the text of the model's last turn."""
        async with self.run_stream(user_message, context, scope=scope) as stream:
            return await stream.get_final_text()

    async def dispatch_tools(
        self, blocks: list[ToolUseBlock], iteration: int
    ) -> list[ToolResultBlock]:
        """Run tool calls concurrently outside a run; results come back in call order."""
        return await dispatch_tools(self, blocks)

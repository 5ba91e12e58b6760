"""Agent: the state of one agent (prompt, transport, tools, limits); AgentStream: one run."""

from __future__ import annotations

import dataclasses
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Sequence,
)
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from swarm.budget import BudgetLimits
from swarm.context.base import ContextStore
from swarm.contracts import DEFAULT_OUTPUT_RETRIES, OutputContract, OutputSpec
from swarm.control import AgentTree, Control
from swarm.events import IterationEnd, SessionEndEvent, StreamEvent, TextDelta
from swarm.loop.calls import DEFAULT_TOOL_TIMEOUT, AfterCallHook, CallSettings, dispatch_tools
from swarm.loop.loop import run_loop
from swarm.loop.outputs import DEFAULT_MAX_RESULT_CHARS
from swarm.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from swarm.scope import RunScope
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
    ``cancelled`` and a valid history that keeps the text streamed so far. ``steer()``
    redirects a running agent between turns; ``follow_up()`` queues work for when it
    would stop.
    """

    def __init__(
        self, generator: AsyncGenerator[StreamEvent, None], control: Control | None = None
    ):
        self._generator = generator
        # With a control (``run_stream``), the loop keeps the final text and the run's
        # end in it; for any other generator the stream works them out from the events.
        self._loop_keeps = control is not None
        self._control = control or Control()
        if not self._loop_keeps:  # (not made for the loop's runs: a waiting sub-agent holds it)
            self._text: list[str] = []

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        # The loop's own generator when it keeps the results: a coroutine call per event
        # fewer on the hot path.
        return self._generator if self._loop_keeps else self

    async def __anext__(self) -> StreamEvent:
        control = self._control
        if control.session_end is not None:
            raise StopAsyncIteration
        event = await self._generator.__anext__()
        if not self._loop_keeps:
            match event:
                case TextDelta(delta=delta):
                    self._text.append(delta)
                case IterationEnd():
                    if self._text:
                        control.final_text = "".join(self._text)
                        self._text.clear()
                case SessionEndEvent():
                    control.session_end = event
                    control.final_text = event.final_text
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

    def steer(self, message: str | Message, *, path: str | None = None) -> None:
        """Send a message to the model's next call: it is delivered once the current
        turn's tool calls end (they are not cancelled), or, when the model answered
        without tools, after that answer, and the run goes on. ``path`` steers another
        running agent of this run's tree (``orchestrator/developer#1``); the root by
        default. Raises ``LookupError`` when no agent runs at ``path``."""
        self._target(path).steer(message)

    def follow_up(self, message: str | Message, *, path: str | None = None) -> None:
        """Queue a message delivered when the agent would stop with ``end_turn``; the run
        then goes on. ``path`` as for ``steer()``."""
        self._target(path).follow_up(message)

    def _target(self, path: str | None) -> Control:
        if path is None or self._control.tree is None:
            if path is not None:
                raise LookupError(f"no agent is running at path {path!r} (the run is not running)")
            return self._control
        return self._control.tree.find(path)

    async def get_session_end(self) -> SessionEndEvent:
        """Consume the rest of the stream and return its ``SessionEndEvent``. Nobody reads
        the events from here on, so the run's sub-agents no longer forward theirs."""
        control = self._control
        if control.tree is None:  # not started yet: the loop takes this tree
            control.tree = AgentTree()
        control.tree.quiet = True
        async for _ in self:
            pass
        end = self._control.session_end
        if end is None:
            raise RuntimeError("the stream ended without a SessionEndEvent")
        return end

    async def get_final_text(self) -> str:
        """Consume the rest of the stream and return the text of the model's last turn."""
        await self.get_session_end()
        return self._control.final_text

    @property
    def final_text(self) -> str:
        """The text of the model's last turn so far."""
        return self._control.final_text

    @property
    def session_end(self) -> SessionEndEvent | None:
        """The run's ``SessionEndEvent`` once the stream reached it, else ``None``."""
        return self._control.session_end


@dataclass(slots=True)
class Agent:
    """A system prompt, a transport and tools, run in a loop until the model is done.

    ``max_iterations`` bounds the model calls of one run (reaching it ends the run with
    stop reason ``max_iterations``); ``last_iteration_message`` is added to what the model
    sees on the last one only. ``tool_timeout`` is the default timeout of every tool call
    (seconds, 10 minutes unless set; ``None``: no limit; a tool's own ``timeout`` wins).
    ``name`` names the agent in events and paths. ``transform_context`` shapes what each
    model call sends (``async (messages) -> messages``; what it returns is never stored;
    a failure ends the run with an ``Error``). ``after_call`` hooks may replace a tool's
    result before the model sees it. ``max_result_chars`` (about 20k tokens by default;
    ``None``: no limit) is the longest result the model gets whole: a longer one is saved
    to a file and the model gets its head and the ``read_output`` tool. ``budget`` limits
    a run that is not already part of a budgeted one (a team run gives each agent its
    role's budget): e.g. ``BudgetLimits(usd=0.50)`` holds each request's worst case before
    it is sent and ends the run with stop reason ``budget`` rather than cross the limit.
    ``output`` (a pydantic model class or a JSON Schema) makes the run end with a typed
    answer given through the ``final_answer`` tool: the ``SessionEndEvent``'s ``output``
    holds it (JSON data), its ``final_text`` the JSON text; an answer that does not meet
    the schema goes back to the model at most ``output_retries`` times, then the run ends
    with stop reason ``invalid_output`` (see ``swarm.contracts``). Raises ``ValueError``
    for an invalid schema.
    """

    system: str
    transport: CompletionTransport
    tools: list[Tool[Any]] = field(default_factory=list)
    selector: ToolSelector | None = field(default=None)
    max_iterations: int = field(default=50)
    last_iteration_message: Message | None = field(default=None)
    tool_timeout: float | None = field(default=DEFAULT_TOOL_TIMEOUT, kw_only=True)
    name: str = field(default="agent", kw_only=True)
    transform_context: Callable[[list[Message]], Awaitable[list[Message]]] | None = field(
        default=None, kw_only=True
    )
    after_call: tuple[AfterCallHook, ...] = field(default=(), kw_only=True)
    max_result_chars: int | None = field(default=DEFAULT_MAX_RESULT_CHARS, kw_only=True)
    budget: BudgetLimits | None = field(default=None, kw_only=True)
    output: OutputSpec | None = field(default=None, kw_only=True)
    output_retries: int = field(default=DEFAULT_OUTPUT_RETRIES, kw_only=True)

    def __post_init__(self) -> None:
        if self.output is not None and not isinstance(self.output, OutputContract):
            self.output = OutputContract.of(self.output)
        if self.output_retries < 0:
            raise ValueError(f"output_retries must be 0 or more, not {self.output_retries}")

    @property
    def contract(self) -> OutputContract | None:
        """The schema the final answer must meet (``output`` as a contract), if any."""
        return self.output if isinstance(self.output, OutputContract) else None

    @property
    def call_settings(self) -> CallSettings:
        """How this agent runs tool calls: timeout, after hooks, result size limit."""
        return CallSettings(self.tool_timeout, tuple(self.after_call), self.max_result_chars)

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
        return await dispatch_tools(self.tools, blocks, self.call_settings)

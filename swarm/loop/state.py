"""One run of the loop: the state its phases share, how it opens, and how it ends.

Whatever stops a run, ``close_run`` leaves its history valid (results for the calls that
were cut, the text streamed so far as the answer), and ``session_end`` is its result.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from swarm._log import logger
from swarm.background import AGENTS_TOOL, AgentsSettings, SubAgents
from swarm.budget import Budget, BudgetLimits
from swarm.context.base import ContextStore
from swarm.contracts import FINAL_ANSWER, OutputCheck, OutputContract
from swarm.control import AgentTree, Control
from swarm.errors import ContextStoreError
from swarm.events import MessageEnd, SessionEndEvent, StreamEvent
from swarm.loop.calls import CallSettings, Outbox, error_result
from swarm.loop.turn import Turn
from swarm.messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from swarm.models.registry import estimate_cost
from swarm.scope import RunScope, current_scope
from swarm.tools import Tool
from swarm.transports.base import CompletionTransport, model_name
from swarm.types import StopReason, Usage

__all__ = [
    "Failed",
    "LoopAgent",
    "LoopRun",
    "TransformContext",
    "close_run",
    "open_run",
    "open_subagents",
    "results_message",
    "session_end",
    "store_failed",
]

_log = logger("swarm.loop")

TransformContext = Callable[[list[Message]], Awaitable[list[Message]]]


class LoopAgent(Protocol):
    """What the loop reads of an agent (``Agent`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def transport(self) -> CompletionTransport: ...
    @property
    def tools(self) -> list[Tool[Any]]: ...
    @property
    def selector(self) -> Any: ...
    @property
    def max_iterations(self) -> int: ...
    @property
    def last_iteration_message(self) -> Message | None: ...
    @property
    def transform_context(self) -> TransformContext | None: ...
    @property
    def call_settings(self) -> CallSettings: ...
    @property
    def budget(self) -> BudgetLimits | None: ...
    @property
    def contract(self) -> OutputContract | None: ...
    @property
    def output_retries(self) -> int: ...


class Failed(Exception):
    """Internal: a phase failed; the run ends with this error."""

    def __init__(self, error: BaseException, stop: StopReason = StopReason.error) -> None:
        super().__init__(str(error))
        self.error, self.stop = error, stop


_NO_USAGE = Usage()


@dataclass(slots=True)
class LoopRun:
    """The state one run's phases share."""

    agent: LoopAgent
    context: ContextStore
    control: Control
    scope: RunScope
    outbox: Outbox
    tools: dict[str, Tool[Any]]
    budget: Budget | None
    settings: CallSettings
    started: float = field(default_factory=time.perf_counter)
    total: Usage = _NO_USAGE  # frozen: one zero serves every run until it adds some
    iteration: int = 0
    final_text: str = ""
    stop: StopReason = StopReason.end_turn
    error: BaseException | None = None
    turn: Turn | None = None  # streamed, not yet stored
    stream: AsyncIterator[StreamEvent] | None = None  # the model's, until it ends
    pending: tuple[Message, list[ToolUseBlock], list[ToolResultBlock | None]] | None = None
    saved: dict[str, str] = field(default_factory=dict)  # call id -> saved output file
    held: float = 0.0  # dollars held for the request in flight
    output: OutputCheck | None = None  # the typed answer, when the agent has a contract
    subagents: SubAgents | None = None  # the sub-agents it started, with the agents tool


def open_run(
    agent: LoopAgent, context: ContextStore, control: Control, run_scope: RunScope | None
) -> LoopRun:
    parent = run_scope or current_scope()
    given = parent.sink
    if type(given) is Outbox and not given.claimed and parent.agents is not None:
        outbox, scope, tree = given, parent, parent.agents  # made for this run (see Outbox)
    else:
        outbox, tree = Outbox(), parent.agents or control.tree or AgentTree()
        scope = parent.child(sink=outbox, agents=tree)
    outbox.claimed = True
    if scope.budget is None and agent.budget is not None:  # an agent run on its own
        own = Budget(scope.path or agent.name, agent.budget, model=model_name(agent.transport))
        scope = scope.child(budget=own)
    tree.running[scope.path] = control
    control.tree = tree
    budget = scope.budget
    if budget is not None:
        budget.attach(control)
        if (left := budget.seconds_left()) is not None:  # the nearest time limit above
            control.deadline = anyio.current_time() + left
    tools = {t.name: t for t in agent.tools}
    run = LoopRun(agent, context, control, scope, outbox, tools, budget, agent.call_settings)
    if (contract := agent.contract) is not None:
        run.output = OutputCheck(contract, agent.output_retries, budget)
        tools[FINAL_ANSWER] = run.output.tool
    return run


async def open_subagents(run: LoopRun) -> None:
    """With the ``agents`` tool, the run holds its sub-agents (``swarm.background``): a
    task group for the background ones, entered here, in the run's own task."""
    tool = run.tools.get(AGENTS_TOOL)
    if tool is None:
        return
    settings = tool.context if isinstance(tool.context, AgentsSettings) else AgentsSettings()
    run.subagents = await SubAgents(run.control, settings.on_exit).__aenter__()
    restore = run.scope.restore_subagents
    run.scope = run.scope.child(subagents=run.subagents, restore_subagents=None)
    if restore is not None:  # a resumed run: its background sub-agents start again
        restore(run.subagents, run.scope)


async def close_run(run: LoopRun) -> None:
    """Leave the history valid whatever stopped the run: results for cut calls, the
    text streamed so far as the answer. Background sub-agents still running are
    stopped, and end before their caller does (after its history is safe: waiting for
    them may be cut short by a cancellation)."""
    try:
        await _leave_valid(run)
    finally:
        if run.subagents is not None:
            await run.subagents.__aexit__(None, None, None)


async def _leave_valid(run: LoopRun) -> None:
    control = run.control
    control.close()
    run.outbox.claimed = False  # a continued sub-agent's next run takes its scope again
    if run.stream is not None:  # the model call was cut: close its stream
        stream, run.stream = run.stream, None
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await aclose()
                except Exception as exc:  # the history below matters more
                    _log.warning("the model stream failed to close", error=repr(exc))
    if run.budget is not None:
        run.budget.detach(control)
        run.budget.stop_reason = run.stop
        if run.held:  # the request failed or was cut before its usage came
            run.budget.release(run.held)
            run.held = 0.0
    if control.tree is not None and control.tree.running.get(run.scope.path) is control:
        del control.tree.running[run.scope.path]
    cut: list[Message] = []
    if run.pending is not None:
        message, uses, results = run.pending
        filled = [
            r or error_result(u.id, "Cancelled: the run was stopped before this call finished.")
            for u, r in zip(uses, results, strict=True)
        ]
        cut = [message, results_message(filled, None)]
    elif run.turn is not None and (partial := run.turn.partial_text()):
        cut = [Message("assistant", [TextBlock(partial)])]
    if not cut:
        return
    run.final_text = cut[0].text or run.final_text
    with anyio.CancelScope(shield=True):
        try:
            if not await stored(run.context, cut[0]):
                await run.context.append_many(cut)
                for message in cut:
                    run.outbox.put(MessageEnd(message))
        except Exception as exc:  # the store is failing: the run's end says so
            _log.warning("the cut turn could not be stored", error=repr(exc))


def session_end(run: LoopRun) -> SessionEndEvent:
    """The run's result, also kept on its control (with its final text) for the reader
    of its stream."""
    tree = run.budget.report() if run.budget is not None else None
    if tree is not None:
        cost = tree.total_cost_usd
    else:
        model = model_name(run.agent.transport)
        cost = estimate_cost(model, run.total) if model is not None else None
    end = SessionEndEvent(
        run.stop,
        run.total,
        tree,
        final_text=run.final_text,
        iterations=run.iteration,
        duration_s=time.perf_counter() - run.started,
        cost_usd=cost,
        session_id=run.context.session_id,
        error=run.error,
        output=run.output.value if run.output is not None and run.output.done else None,
    )
    run.control.session_end, run.control.final_text = end, end.final_text
    return end


def results_message(results: Sequence[ToolResultBlock], steering: Message | None) -> Message:
    """The user message of a turn's results; steering text rides after them."""
    content: list[ContentBlock] = list(results)
    if steering is not None:
        content.extend(steering.content)
    return Message("user", content)


def store_failed(exc: Exception) -> Failed:
    error = ContextStoreError(f"the context store failed: {type(exc).__name__}: {exc}")
    return Failed(error)


async def stored(context: ContextStore, first: Message) -> bool:
    """Whether this turn is already stored (cancellation can arrive just after its write
    committed)."""
    ids = {use.id for use in first.tool_uses}
    if not ids:
        return False
    for message in reversed((await context._loop_history())[-4:]):
        if ids & {use.id for use in message.tool_uses}:
            return True
    return False

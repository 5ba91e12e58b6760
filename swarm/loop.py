"""The agentic loop: stream a model turn, run its tool calls, store the turn, repeat.

``run_loop`` is an async generator of events, written as phases: prepare the request
(history, ``transform_context``, the tool selector), stream the turn, run its calls,
store it, and pick what comes next (steering, a follow-up, the end). It never raises for
model, tool, guard, transport, selector or context store failures: they end as an
``Error`` and one final ``SessionEndEvent`` (a store failure as ``ContextStoreError``).
Cancellation (from outside, ``aclose()`` or ``AgentStream.interrupt()``) stops it
promptly, and the context it leaves behind is always valid: every stored tool use has
its tool result, and text streamed before an interrupt is kept.

The hot path stays lean: no task group when a turn makes a single call that reports no
progress, no cancel scope per streamed event, no copy of the history beyond the store's.
"""

from __future__ import annotations

import copy
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from swarm._log import logger
from swarm.budget import Budget
from swarm.context.base import ContextStore
from swarm.control import AgentTree, Control, Interrupted
from swarm.dispatch import (
    CallSettings,
    Decided,
    Outbox,
    complete,
    decide,
    error_result,
    result_event,
    run_calls,
)
from swarm.errors import BudgetExceeded, ContextStoreError, MaxIterationsReached
from swarm.events import (
    AgentStart,
    Error,
    IterationEnd,
    MessageEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
    TurnEnd,
    TurnStart,
)
from swarm.messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from swarm.outputs import DEFAULT_MAX_RESULT_CHARS, READ_OUTPUT, read_output_tool
from swarm.run import RunScope, current_scope, use_scope
from swarm.tools import Tool
from swarm.transports.base import CompletionTransport, model_name
from swarm.transports.models import estimate_cost
from swarm.turn import Turn
from swarm.types import StopReason, Usage

__all__ = ["Control", "LoopAgent", "run_loop"]

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


class _Failed(Exception):
    """Internal: a phase failed; the run ends with this error."""

    def __init__(self, error: BaseException, stop: StopReason = StopReason.error) -> None:
        super().__init__(str(error))
        self.error, self.stop = error, stop


@dataclass(slots=True)
class _Run:
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
    total: Usage = field(default_factory=Usage)
    iteration: int = 0
    final_text: str = ""
    stop: StopReason = StopReason.end_turn
    error: BaseException | None = None
    turn: Turn | None = None  # streamed, not yet stored
    pending: tuple[Message, list[ToolUseBlock], list[ToolResultBlock | None]] | None = None
    saved: dict[str, str] = field(default_factory=dict)  # call id -> saved output file


def _open(
    agent: LoopAgent, context: ContextStore, control: Control, run_scope: RunScope | None
) -> _Run:
    outbox = Outbox()
    parent = run_scope or current_scope()
    tree = parent.agents or AgentTree()
    scope = parent.child(sink=outbox.put, agents=tree)
    tree.running[scope.path] = control
    control.tree = tree
    budget = scope.budget
    if budget is not None:
        budget.attach(control)
        if (left := budget.seconds_left()) is not None:  # the nearest time limit above
            control.deadline = anyio.current_time() + left
    tools = {t.name: t for t in agent.tools}
    return _Run(agent, context, control, scope, outbox, tools, budget, agent.call_settings)


async def run_loop(
    agent: LoopAgent,
    user_message: str | Message | Sequence[ContentBlock] | None,
    context: ContextStore,
    control: Control,
    run_scope: RunScope | None = None,
) -> AsyncGenerator[StreamEvent, None]:
    """Run ``agent`` on ``user_message`` (``None``: continue from the context as it is),
    as part of ``run_scope`` (default: the scope current when the run starts)."""
    run = _open(agent, context, control, run_scope)
    try:
        yield AgentStart(agent.name, context.session_id)
        if user_message is not None:
            for event in await _add_user(run, _user_message(user_message)):
                yield event
        while True:
            if control.interrupted:
                raise Interrupted
            if run.iteration >= agent.max_iterations:
                limit = f"the agent reached its limit of {agent.max_iterations} iterations"
                raise _Failed(MaxIterationsReached(limit), StopReason.max_iterations)
            if run.budget is not None and (spent := run.budget.exceeded) is not None:
                raise _Failed(BudgetExceeded(spent), StopReason.budget)
            history, offered = await _prepare(run)
            run.iteration += 1
            yield TurnStart(run.iteration)
            async with aclosing(_stream_turn(run, history, offered)) as streamed:
                async for event in streamed:
                    yield event
            turn = run.turn
            assert turn is not None and turn.end is not None
            usage = turn.end.usage
            run.total += usage
            if run.budget is not None:
                run.budget.charge(usage)
            yield IterationEnd(run.iteration, turn.end.stop_reason, usage)
            message, uses, bad = turn.message()
            run.final_text = message.text or run.final_text
            if not uses:
                run.turn = None
                stored = [message] if message.content else []
                for event in await _commit(run, stored, usage, ()):
                    yield event
                ended = turn.end.stop_reason == StopReason.max_tokens
                if not await _next_input(run, follow=not ended):
                    run.stop = StopReason.max_tokens if ended else StopReason.end_turn
                    break
                for event in run.outbox.take():
                    yield event
                continue
            run.turn = None
            results: list[ToolResultBlock | None] = [None] * len(uses)
            run.pending = (message, uses, results)
            refused, todo = _refuse(run, uses, bad, results)
            for event in refused:
                yield event
            if len(todo) == 1 and not _reports_progress(run.tools, uses[todo[0]]):
                decided = await _decide_lone(run, uses[todo[0]])  # inline: no task group
                if decided is not None and (start := decided.start) is not None:
                    yield start
                for event in await _complete_lone(run, decided, todo[0], results):
                    yield event
            elif todo:
                async with aclosing(_run_concurrently(run, uses, todo, results)) as called:
                    async for event in called:
                        yield event
            if control.stopped():  # interrupted, or calls were cut by the time budget
                raise Interrupted
            done = [r for r in results if r is not None]
            steering = _merge(control.take_steering())
            for event in await _commit(run, [message, _results(done, steering)], usage, done):
                yield event
            run.pending = None
    except Interrupted:
        run.stop = control.reason
        if run.stop == StopReason.budget and run.budget is not None:
            run.error = BudgetExceeded(run.budget.exceeded or "budget spent")
            yield Error(run.error)
    except _Failed as failed:  # ends the run as an event, like every other failure
        run.stop, run.error = failed.stop, failed.error
        yield Error(failed.error)
    finally:
        await _close_run(run)
    for event in run.outbox.take():
        yield event
    yield _session_end(run)


async def _add_user(run: _Run, message: Message) -> list[StreamEvent]:
    """Append a user message (the task, a steering message, a follow-up) to the history."""
    try:
        with use_scope(run.scope):
            await run.context.append(message)
    except Exception as exc:
        raise _store_failed(exc) from exc
    return [MessageEnd(message)]


async def _prepare(run: _Run) -> tuple[list[Message], list[Tool[Any]]]:
    """What the next model call sends: the history as ``transform_context`` shapes it,
    the last-iteration message, and the tools the selector offers."""
    agent = run.agent
    try:
        history = await run.context._loop_history()
    except Exception as exc:
        raise _store_failed(exc) from exc
    if agent.transform_context is not None:
        try:
            history = list(await agent.transform_context(_copy(history)))
        except Exception as exc:
            raise _Failed(exc) from exc
    if run.iteration + 1 == agent.max_iterations and agent.last_iteration_message is not None:
        history = [*history, agent.last_iteration_message]
    offered = agent.tools
    if agent.selector is not None:
        try:
            offered = list(await agent.selector.select(history, agent.tools))
        except Exception as exc:
            raise _Failed(exc) from exc
    if run.saved:  # a result was saved: offer the tool that reads it
        reader = run.tools.get(READ_OUTPUT)
        if reader is None:
            chunk = (run.settings.max_result_chars or DEFAULT_MAX_RESULT_CHARS) // 2
            reader = run.tools[READ_OUTPUT] = read_output_tool(run.saved, chunk=chunk)
        if all(t.name != READ_OUTPUT for t in offered):
            offered = [*offered, reader]
    return history, offered


async def _stream_turn(
    run: _Run, history: list[Message], offered: list[Tool[Any]]
) -> AsyncGenerator[StreamEvent, None]:
    """Stream one model call into ``run.turn``, yielding its deltas. Raises
    ``Interrupted`` when stopped, ``_Failed`` when the model failed."""
    turn = run.turn = Turn()
    control, agent = run.control, run.agent
    iterator: AsyncIterator[StreamEvent] | None = None
    finished = False
    try:
        # The transport runs in this agent's scope (recorders key by its path);
        # set around each await only, so the scope never leaks to the consumer.
        with use_scope(run.scope):
            iterator = aiter(agent.transport.stream(history, offered, agent.system))
            with control.interruptible() as waiting:  # the long wait, for the first event
                event = await iterator.__anext__()
        if waiting.cancelled_caught:
            control.interrupt(StopReason.budget)  # no-op if interrupted
            raise Interrupted
        while True:
            match event:
                case TextDelta():
                    turn.add_text(event.index, event.delta)
                    yield event
                case ToolInputDelta():
                    turn.add_arguments(event.tool_use_id, event.partial_json)
                    yield event
                case ToolUseStart():
                    turn.start_call(event)
                    yield event
                case ReasoningDelta():
                    turn.add_reasoning(event)
                    yield event
                case IterationEnd():
                    turn.end = event
                case Error():
                    turn.fail(event)
                case _:
                    yield event
            if control.stopped():
                raise Interrupted
            with use_scope(run.scope):
                event = await iterator.__anext__()
    except StopAsyncIteration:
        finished = True
    except (Interrupted, anyio.get_cancelled_exc_class(), GeneratorExit):
        raise
    except Exception as exc:
        turn.fail(exc)
    finally:
        if iterator is not None and not finished:
            await _close(iterator)
    if turn.error is not None:
        run.turn = None
        raise _Failed(turn.error)
    if turn.end is None:
        run.turn = None
        raise _Failed(RuntimeError("the model stream ended without an IterationEnd"))


def _refuse(
    run: _Run, uses: list[ToolUseBlock], bad: dict[str, str], results: list[ToolResultBlock | None]
) -> tuple[list[StreamEvent], list[int]]:
    """Refuse the calls that cannot run (bad arguments, the last iteration), filling
    ``results``; their events, and the indexes of the calls left to run."""
    last = run.iteration == run.agent.max_iterations
    events: list[StreamEvent] = []
    todo: list[int] = []
    for i, use in enumerate(uses):
        refusal = bad.get(use.id)
        if last:
            limit = run.agent.max_iterations
            refusal = f"Not run: the agent reached its limit of {limit} iterations."
        if refusal is None:
            todo.append(i)
        else:
            block = results[i] = error_result(use.id, refusal)
            events.append(result_event(use, block))
    return events, todo


async def _decide_lone(run: _Run, use: ToolUseBlock) -> Decided | None:
    """Decide a turn's only call; ``None`` when the run was interrupted meanwhile."""
    tool = run.tools.get(use.name)
    if (tool is None or not tool.guards) and not run.scope.observers:
        return await decide(run.tools, use, run.scope)  # nothing in it can wait
    with run.control.interruptible():  # a guard may wait (for a person's approval)
        return await decide(run.tools, use, run.scope)
    return None


async def _complete_lone(
    run: _Run, decided: Decided | None, i: int, results: list[ToolResultBlock | None]
) -> list[StreamEvent]:
    """Run a turn's only call inline; the events it made, its result last. The call's
    time limit and the run's interrupt share one cancel scope (an interrupt raises)."""
    done: ToolResultBlock | None = None
    if decided is not None and not run.control.stopped():
        done = results[i] = await complete(decided, run.scope, run.settings, run.control)
    if done is None or decided is None:
        return run.outbox.take()
    _note_saved(run, done)
    return [*run.outbox.take(), result_event(decided.use, done)]


async def _run_concurrently(
    run: _Run, uses: list[ToolUseBlock], todo: list[int], results: list[ToolResultBlock | None]
) -> AsyncGenerator[StreamEvent, None]:
    """Run the calls ``todo`` in a task group, yielding their events as they happen."""
    async for event in run_calls(
        run.tools, uses, todo, results, run.scope, run.outbox, run.control, run.settings
    ):
        yield event
    for result in results:
        if result is not None:
            _note_saved(run, result)


def _note_saved(run: _Run, block: ToolResultBlock) -> None:
    saved = (block.details or {}).get("saved_output")
    if isinstance(saved, str):
        run.saved[block.tool_use_id] = saved


async def _next_input(run: _Run, *, follow: bool) -> bool:
    """After an answer without tool calls: deliver the queued steering messages, or else
    (when the model ended its turn) the next follow-up. Whether the loop goes on."""
    control = run.control
    message = _merge(control.take_steering())
    if message is None and follow and control.follow_ups:
        message = control.follow_ups.popleft()
    if message is None:
        return False
    for event in await _add_user(run, message):
        run.outbox.put(event)
    return True


async def _commit(
    run: _Run, messages: list[Message], usage: Usage, done: Sequence[ToolResultBlock]
) -> list[StreamEvent]:
    """Store the turn and its usage in one write (compaction may fire after it); the
    events it makes: a ``MessageEnd`` per message, the ``TurnEnd``, what compaction said."""
    try:
        with use_scope(run.scope):
            await run.context.append_turn(messages, usage.input_tokens, usage.output_tokens)
    except Exception as exc:
        raise _store_failed(exc) from exc
    events: list[StreamEvent] = [MessageEnd(m) for m in messages]
    answer = messages[0] if messages else Message("assistant", [])
    events.append(TurnEnd(run.iteration, answer, tuple(done)))
    events.extend(run.outbox.take())
    return events


async def _close_run(run: _Run) -> None:
    """Leave the history valid whatever stopped the run: results for cut calls, the
    text streamed so far as the answer."""
    control = run.control
    control.close()
    if run.budget is not None:
        run.budget.detach(control)
        run.budget.stop_reason = run.stop
    if control.tree is not None and control.tree.running.get(run.scope.path) is control:
        del control.tree.running[run.scope.path]
    cut: list[Message] = []
    if run.pending is not None:
        message, uses, results = run.pending
        filled = [
            r or error_result(u.id, "Cancelled: the run was stopped before this call finished.")
            for u, r in zip(uses, results, strict=True)
        ]
        cut = [message, _results(filled, None)]
    elif run.turn is not None and (partial := run.turn.partial_text()):
        cut = [Message("assistant", [TextBlock(partial)])]
    if not cut:
        return
    run.final_text = cut[0].text or run.final_text
    with anyio.CancelScope(shield=True):
        try:
            if not await _stored(run.context, cut[0]):
                await run.context.append_many(cut)
                for message in cut:
                    run.outbox.put(MessageEnd(message))
        except Exception as exc:  # the store is failing: the run's end says so
            _log.warning("the cut turn could not be stored", error=repr(exc))


def _session_end(run: _Run) -> SessionEndEvent:
    tree = run.budget.report() if run.budget is not None else None
    model = model_name(run.agent.transport)
    if tree is not None:
        prices = [estimate_cost(n.model, n.usage) for n in tree.walk() if n.model]
    else:
        prices = [estimate_cost(model, run.total)] if model is not None else []
    known = [p for p in prices if p is not None]
    return SessionEndEvent(
        run.stop,
        run.total,
        tree,
        final_text=run.final_text,
        iterations=run.iteration,
        duration_s=time.perf_counter() - run.started,
        cost_usd=sum(known) if known else None,
        session_id=run.context.session_id,
        error=run.error,
    )


async def _close(iterator: AsyncIterator[StreamEvent]) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()


def _reports_progress(tools: dict[str, Tool[Any]], use: ToolUseBlock) -> bool:
    tool = tools.get(use.name)
    return tool is not None and tool.supports_streaming


def _user_message(message: str | Message | Sequence[ContentBlock]) -> Message:
    if isinstance(message, str):
        return Message.user(message)
    if isinstance(message, Message):
        return message
    return Message("user", list(message))


def _merge(messages: list[Message]) -> Message | None:
    """Several queued user messages as one (the history alternates roles)."""
    if not messages:
        return None
    if len(messages) == 1:
        return messages[0]
    return Message("user", [block for m in messages for block in m.content])


def _results(results: Sequence[ToolResultBlock], steering: Message | None) -> Message:
    """The user message of a turn's results; steering text rides after them."""
    content: list[ContentBlock] = list(results)
    if steering is not None:
        content.extend(steering.content)
    return Message("user", content)


def _copy(history: list[Message]) -> list[Message]:
    """A copy ``transform_context`` may change freely (tool arguments are dicts)."""
    return copy.deepcopy(history)


def _store_failed(exc: Exception) -> _Failed:
    error = ContextStoreError(f"the context store failed: {type(exc).__name__}: {exc}")
    return _Failed(error)


async def _stored(context: ContextStore, first: Message) -> bool:
    """Whether this turn is already stored (cancellation can arrive just after its write
    committed)."""
    ids = {use.id for use in first.tool_uses}
    if not ids:
        return False
    for message in reversed((await context._loop_history())[-4:]):
        if ids & {use.id for use in message.tool_uses}:
            return True
    return False

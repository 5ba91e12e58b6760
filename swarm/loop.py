"""The agentic loop: stream a model turn, dispatch its tool calls, repeat.

``run_loop`` is an async generator of events. It never raises for model, tool, guard,
transport or context store failures: they end as events and one final
``SessionEndEvent`` (a store failure as ``ContextStoreError``). Cancellation
(from outside, ``aclose()`` or ``AgentStream.interrupt()``) stops it promptly, and the
context it leaves behind is always valid: every stored tool use has its tool result.

The hot path stays lean: no task group when a turn makes a single call that reports no
progress, no cancel scope per streamed event, no copy of the history beyond the store's.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from swarm.dispatch import (
    INTERRUPT,
    Outbox,
    call_tool,
    error_result,
    result_event,
    run_calls,
)
from swarm.errors import BudgetExceeded, ContextStoreError, MaxIterationsReached
from swarm.events import (
    Error,
    IterationEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from swarm.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from swarm.run import RunScope, _scope, current_scope
from swarm.turn import Turn
from swarm.types import StopReason, Usage

if TYPE_CHECKING:
    from swarm.agent import Agent
    from swarm.context.base import ContextStore

__all__ = ["Control", "run_loop"]

_log = structlog.get_logger("swarm.loop")


class _Interrupted(Exception):
    """Internal: the run was interrupted through its stream."""


@dataclass(eq=False, slots=True)
class Control:
    """Lets ``AgentStream.interrupt()`` reach the loop from another task.

    The loop registers a cancel scope while it waits for something that may take long
    (a model's first event, a single tool call) and a channel while calls run
    concurrently; ``interrupt()`` cancels the one or signals the other. Between events of
    a streaming model turn it checks the flag, so an interrupt takes effect at the next
    event (a stalled stream is ended by the transport's idle timeout). ``deadline``, the
    end of the agent's time budget, bounds the same waits and is checked at the same
    points; passing it is an interrupt with stop reason ``budget``.
    """

    interrupted: bool = False
    reason: StopReason = StopReason.cancelled
    scope: anyio.CancelScope | None = None
    dispatch: Callable[[Any], None] | None = None
    deadline: float = math.inf  # on the anyio clock

    def interrupt(self, reason: StopReason = StopReason.cancelled) -> None:
        if not self.interrupted:
            self.reason = reason
        self.interrupted = True
        if self.scope is not None:
            self.scope.cancel()
        if self.dispatch is not None:
            self.dispatch(INTERRUPT)

    def stopped(self) -> bool:
        """Whether the run must stop: interrupted, or (then interrupted with stop reason
        ``budget``) past the deadline."""
        past = self.deadline != math.inf and anyio.current_time() >= self.deadline
        if past and not self.interrupted:
            self.interrupt(StopReason.budget)
        return self.interrupted

    def set_dispatch(self, send: Callable[[Any], None] | None) -> None:
        self.dispatch = send


async def _close(iterator: AsyncIterator[StreamEvent]) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()


async def run_loop(
    agent: Agent,
    user_message: str | Message | Sequence[ContentBlock] | None,
    context: ContextStore,
    control: Control,
    run_scope: RunScope | None = None,
) -> AsyncGenerator[StreamEvent, None]:
    """Run ``agent`` on ``user_message`` (``None``: continue from the context as it is),
    as part of ``run_scope`` (default: the scope current when the run starts)."""
    outbox = Outbox()
    scope = (run_scope or current_scope()).child(sink=outbox.put)
    budget = scope.budget
    tools = {t.name: t for t in agent.tools}
    total = Usage()
    stop = StopReason.end_turn
    pending: tuple[Message, list[ToolUseBlock], list[ToolResultBlock | None]] | None = None
    if budget is not None:
        budget.attach(control)
        if (left := budget.seconds_left()) is not None:  # the nearest time limit above
            control.deadline = anyio.current_time() + left
    try:
        if user_message is not None:
            try:
                await context.append(_user_message(user_message))
            except Exception as exc:
                raise _store_failed(exc) from exc
        iteration = 0
        while True:
            iteration += 1
            if control.interrupted:
                raise _Interrupted
            if budget is not None and (spent := budget.exceeded) is not None:
                yield Error(BudgetExceeded(spent))
                stop = StopReason.budget
                break
            try:
                history = await context.get_history()
            except Exception as exc:
                raise _store_failed(exc) from exc
            last = iteration == agent.max_iterations
            if last and agent.last_iteration_message is not None:
                history = [*history, agent.last_iteration_message]
            offered = agent.tools
            if agent.selector is not None:
                offered = list(await agent.selector.select(history, agent.tools))

            turn = Turn()
            iterator: AsyncIterator[StreamEvent] | None = None
            finished = False
            try:
                # The transport runs in this agent's scope (recorders key by its path);
                # set around each await only, so the scope never leaks to the consumer.
                token = _scope.set(scope)
                try:
                    iterator = aiter(agent.transport.stream(history, offered, agent.system))
                    # The long wait, for the first event: interruptible (see Control).
                    with anyio.CancelScope(deadline=control.deadline) as waiting:
                        control.scope = waiting
                        if control.interrupted:
                            waiting.cancel()
                        try:
                            event = await iterator.__anext__()
                        finally:
                            control.scope = None
                    if waiting.cancelled_caught:
                        control.interrupt(StopReason.budget)  # no-op if interrupted
                        raise _Interrupted
                finally:
                    _scope.reset(token)
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
                        raise _Interrupted
                    token = _scope.set(scope)
                    try:
                        event = await iterator.__anext__()
                    finally:
                        _scope.reset(token)
            except StopAsyncIteration:
                finished = True
            except (_Interrupted, anyio.get_cancelled_exc_class(), GeneratorExit):
                raise
            except Exception as exc:
                turn.fail(exc)
            finally:
                if iterator is not None and not finished:
                    await _close(iterator)

            if turn.error is not None:
                yield Error(turn.error)
                stop = StopReason.error
                break
            if turn.end is None:
                yield Error(RuntimeError("the model stream ended without an IterationEnd"))
                stop = StopReason.error
                break
            usage = turn.end.usage
            total += usage
            if budget is not None:
                budget.charge(usage)
            yield IterationEnd(iteration, turn.end.stop_reason, usage)
            message, uses, bad = turn.message()

            if not uses:
                stored = [message] if message.content else []
                for event in await _commit(context, stored, usage, scope, outbox):
                    yield event
                stop = (
                    StopReason.max_tokens
                    if turn.end.stop_reason == StopReason.max_tokens
                    else StopReason.end_turn
                )
                break

            results: list[ToolResultBlock | None] = [None] * len(uses)
            pending = (message, uses, results)
            todo: list[int] = []
            for i, use in enumerate(uses):
                refusal = None
                if last:
                    refusal = (
                        f"Not run: the agent reached its limit of {agent.max_iterations}"
                        " iterations."
                    )
                elif use.id in bad:
                    refusal = bad[use.id]
                if refusal is None:
                    todo.append(i)
                else:
                    block = results[i] = error_result(use.id, refusal)
                    yield result_event(use, block)
            if len(todo) == 1 and not _reports_progress(agent, tools, uses[todo[0]]):
                i = todo[0]
                with anyio.CancelScope(deadline=control.deadline) as call_scope:
                    control.scope = call_scope
                    if control.interrupted:
                        call_scope.cancel()
                    try:
                        results[i] = await call_tool(agent, tools, uses[i], scope)
                    finally:
                        control.scope = None
                for event in outbox.take():
                    yield event
                done = results[i]
                if done is not None:
                    yield result_event(uses[i], done)
            elif todo:
                async for event in run_calls(
                    agent, tools, uses, todo, results, scope, outbox, control
                ):
                    yield event
            if control.stopped():  # interrupted, or calls were cut by the time budget
                raise _Interrupted
            turn_messages = [message, _results_message(results)]
            for event in await _commit(context, turn_messages, usage, scope, outbox):
                yield event
            pending = None
            if last:
                yield Error(
                    MaxIterationsReached(
                        f"the agent reached its limit of {agent.max_iterations} iterations"
                    )
                )
                stop = StopReason.error
                break
    except _Interrupted:
        stop = control.reason
        if stop == StopReason.budget and budget is not None:
            yield Error(BudgetExceeded(budget.exceeded or "budget spent"))
    except ContextStoreError as exc:  # ends the run as an event, like every other failure
        yield Error(exc)
        stop = StopReason.error
    finally:
        if budget is not None:
            budget.detach(control)
        if pending is not None:
            message, uses, results = pending
            for i, use in enumerate(uses):
                if results[i] is None:
                    results[i] = error_result(
                        use.id, "Cancelled: the run was stopped before this call finished."
                    )
            with anyio.CancelScope(shield=True):
                try:
                    if not await _stored(context, uses):
                        await context.append_many([message, _results_message(results)])
                except Exception as exc:  # the store is failing: the run's end says so
                    _log.warning("the cut turn could not be stored", error=repr(exc))
    for event in outbox.take():
        yield event
    tree = None
    if budget is not None:
        budget.stop_reason = stop
        tree = budget.report()
    yield SessionEndEvent(stop, total, tree)


def _reports_progress(agent: Agent, tools: dict[str, Any], use: ToolUseBlock) -> bool:
    tool = tools.get(use.name)
    return tool is not None and tool.supports_streaming


def _user_message(message: str | Message | Sequence[ContentBlock]) -> Message:
    if isinstance(message, str):
        return Message.user(message)
    if isinstance(message, Message):
        return message
    return Message("user", list(message))


def _results_message(results: list[ToolResultBlock | None]) -> Message:
    return Message("user", [r for r in results if r is not None])


async def _commit(
    context: ContextStore,
    messages: list[Message],
    usage: Usage,
    scope: RunScope,
    outbox: Outbox,
) -> list[StreamEvent]:
    """Store the iteration and its usage in one write (compaction may fire after it) and
    collect what that emitted."""
    token = _scope.set(scope)
    try:
        await context.append_turn(messages, usage.input_tokens, usage.output_tokens)
    except Exception as exc:
        raise _store_failed(exc) from exc
    finally:
        _scope.reset(token)
    return outbox.take()


def _store_failed(exc: Exception) -> ContextStoreError:
    return ContextStoreError(f"the context store failed: {type(exc).__name__}: {exc}")


async def _stored(context: ContextStore, uses: list[ToolUseBlock]) -> bool:
    """Whether the turn with these calls is already stored (cancellation can arrive just
    after its write committed)."""
    ids = {use.id for use in uses}
    for message in reversed((await context.get_history())[-4:]):
        if ids & {use.id for use in message.tool_uses}:
            return True
    return False

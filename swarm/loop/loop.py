"""The agentic loop: stream a model turn, run its tool calls, store the turn, repeat.

Its neighbours in ``swarm/loop/``: ``agent`` (``Agent``, ``AgentStream``: what starts a run
and what a caller holds), ``state`` (what the phases share, how a run opens and ends),
``turn`` (a turn assembled from the stream), ``calls`` (the tool calls: validate, guard,
execute), ``outputs`` (results too large for the model). Below it: ``swarm.scope`` (the
run scope), ``swarm.control``, ``swarm.tools``; above it, ``swarm.team.delegation`` runs
agents as other agents' tools.

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
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

from swarm.context.base import ContextStore
from swarm.contracts import FINAL_ANSWER
from swarm.control import Control, Interrupted
from swarm.errors import BudgetExceeded, ConfigError, InvalidOutput, MaxIterationsReached
from swarm.events import (
    AgentStart,
    Error,
    IterationEnd,
    MessageEnd,
    StreamEvent,
    TurnEnd,
    TurnStart,
)
from swarm.loop.calls import (
    Decided,
    complete,
    decide,
    error_result,
    result_event,
    run_calls,
)
from swarm.loop.outputs import DEFAULT_MAX_RESULT_CHARS, READ_OUTPUT, read_output_tool
from swarm.loop.state import (
    Failed,
    LoopAgent,
    LoopRun,
    close_run,
    open_run,
    open_subagents,
    results_message,
    session_end,
    store_failed,
)
from swarm.loop.turn import Turn
from swarm.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from swarm.scope import RunScope, _scope, use_scope
from swarm.spend import hold_request
from swarm.tools import Tool
from swarm.types import StopReason, Usage

__all__ = ["Control", "LoopAgent", "run_loop"]


async def run_loop(
    agent: LoopAgent,
    user_message: str | Message | Sequence[ContentBlock] | None,
    context: ContextStore,
    control: Control,
    run_scope: RunScope | None = None,
) -> AsyncGenerator[StreamEvent, None]:
    """Run ``agent`` on ``user_message`` (``None``: continue from the context as it is),
    as part of ``run_scope`` (default: the scope current when the run starts)."""
    run = open_run(agent, context, control, run_scope)
    try:
        await open_subagents(run)
        yield AgentStart(agent.name, context.session_id)
        if run.budget is not None and (unpriced := run.budget.unpriced_under_dollars()):
            raise Failed(ConfigError(unpriced))
        if user_message is not None:
            yield await _add_user(run, _user_message(user_message))
        while True:
            _may_go_on(run)
            history, offered = await _prepare(run)
            if run.budget is not None and run.budget.dollar_limited:
                _hold(run, history, offered)
            run.iteration += 1
            yield TurnStart(run.iteration)
            delta = await _first_event(run, history, offered)
            # made once the call answered (or failed): not held by a sub-agent that waits
            turn = run.turn = run.turn or Turn()
            while delta is not None:  # the turn's deltas (inline: this is the hot path)
                if (shown := turn.add(delta)) is not None:
                    yield shown
                if control.stopped():
                    raise Interrupted
                delta = await _next_event(run)
            ended, message, uses, bad = _end_turn(run)
            del turn  # what it gathered is in ``message``: not held while the calls run
            yield ended
            usage = ended.usage
            if not uses:
                run.turn = None
                stored = [message] if message.content else []
                for event in await _commit(run, stored, usage, ()):
                    yield event
                _check_answer(run, message)  # typed output: the answer, or why it is not
                cut = ended.stop_reason == StopReason.max_tokens
                if not await _next_input(run, follow=not cut):
                    run.stop = StopReason.max_tokens if cut else StopReason.end_turn
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
                concurrently = run_calls(
                    run.tools, uses, todo, results, run.scope, run.outbox, control, run.settings
                )
                async with aclosing(concurrently) as called:
                    async for event in called:
                        yield event
                for result in results:
                    if result is not None:
                        _note_saved(run, result)
            if control.stopped():  # interrupted, or calls were cut by the time budget
                raise Interrupted
            done = [r for r in results if r is not None]
            answered = _check_calls(run, uses, done)
            steering = _merge(control.take_steering())
            for event in await _commit(
                run, [message, results_message(done, steering)], usage, done
            ):
                yield event
            run.pending = None
            if answered:  # the typed final answer is in: the run ends here
                break
    except Interrupted:
        run.stop = control.reason
        if run.stop == StopReason.budget and run.budget is not None:
            run.error = BudgetExceeded(run.budget.exceeded or "budget spent")
            yield Error(run.error)
    except Failed as failed:  # ends the run as an event, like every other failure
        run.stop, run.error = failed.stop, failed.error
        yield Error(failed.error)
    finally:
        await close_run(run)
    for event in run.outbox.take():
        yield event
    yield session_end(run)


def _may_go_on(run: LoopRun) -> None:
    """Before a turn: raise what ends the run instead (an interrupt, the iteration limit,
    a spent budget)."""
    if run.control.interrupted:
        raise Interrupted
    if run.iteration >= run.agent.max_iterations:
        limit = f"the agent reached its limit of {run.agent.max_iterations} iterations"
        raise Failed(MaxIterationsReached(limit), StopReason.max_iterations)
    if run.budget is not None and (spent := run.budget.exceeded) is not None:
        raise Failed(BudgetExceeded(spent), StopReason.budget)


async def _add_user(run: LoopRun, message: Message) -> MessageEnd:
    """Append a user message (the task, a steering message, a follow-up) to the history."""
    try:
        with use_scope(run.scope):
            await run.context.append(message)
    except Exception as exc:
        raise store_failed(exc) from exc
    return MessageEnd(message)


async def _prepare(run: LoopRun) -> tuple[list[Message], list[Tool[Any]]]:
    """What the next model call sends: the history as ``transform_context`` shapes it,
    the last-iteration message, and the tools the selector offers."""
    agent = run.agent
    try:
        history = await run.context._loop_history()
    except Exception as exc:
        raise store_failed(exc) from exc
    if agent.transform_context is not None:
        try:
            history = list(await agent.transform_context(_copy(history)))
        except Exception as exc:
            raise Failed(exc) from exc
    if run.iteration + 1 == agent.max_iterations and agent.last_iteration_message is not None:
        history = [*history, agent.last_iteration_message]
    offered = agent.tools
    if agent.selector is not None:
        try:
            offered = list(await agent.selector.select(history, agent.tools))
        except Exception as exc:
            raise Failed(exc) from exc
    if run.output is not None and all(t.name != FINAL_ANSWER for t in offered):
        offered = [*offered, run.output.tool]
    if run.saved:  # a result was saved: offer the tool that reads it
        reader = run.tools.get(READ_OUTPUT)
        if reader is None:
            chunk = (run.settings.max_result_chars or DEFAULT_MAX_RESULT_CHARS) // 2
            reader = run.tools[READ_OUTPUT] = read_output_tool(run.saved, chunk=chunk)
        if all(t.name != READ_OUTPUT for t in offered):
            offered = [*offered, reader]
    return history, offered


def _hold(run: LoopRun, history: list[Message], offered: list[Tool[Any]]) -> None:
    """Hold the request's worst case against the dollar budgets above the agent before
    it is sent; ``Failed`` (stop reason ``budget``) when one of them would be crossed."""
    assert run.budget is not None
    agent = run.agent
    try:
        run.held = hold_request(run.budget, agent.transport, history, offered, agent.system)
    except BudgetExceeded as exc:
        raise Failed(exc, StopReason.budget) from None


async def _first_event(
    run: LoopRun, history: list[Message], offered: list[Tool[Any]]
) -> StreamEvent | None:
    """Start the model call and wait for its first event (the long wait, which an
    interrupt or the time budget cuts: then ``Interrupted``). ``None`` when the stream
    ended or failed (``_end_turn`` says which)."""
    control, agent = run.control, run.agent
    event: StreamEvent | None = None
    token = _scope.set(run.scope)  # as in ``_next_event``, whose await this one is
    try:
        stream = run.stream = aiter(agent.transport.stream(history, offered, agent.system))
        with control.interruptible() as waiting:
            event = await stream.__anext__()
    except StopAsyncIteration:
        run.stream = None
    except Exception as exc:
        _model_failed(run, exc)
        return None
    finally:
        _scope.reset(token)
    if waiting.cancelled_caught:
        control.interrupt(StopReason.budget)  # no-op if interrupted
        raise Interrupted
    return event


async def _next_event(run: LoopRun) -> StreamEvent | None:
    """The model's next event; ``None`` when its stream ended or failed. The transport
    runs in this agent's scope (recorders key by its path), set around this await only
    so that it never leaks to the reader of the stream."""
    assert run.stream is not None
    token = _scope.set(run.scope)
    try:
        return await run.stream.__anext__()
    except StopAsyncIteration:
        run.stream = None
        return None
    except Exception as exc:
        _model_failed(run, exc)
        return None
    finally:
        _scope.reset(token)


def _model_failed(run: LoopRun, exc: Exception) -> None:
    if run.turn is None:  # it failed before its first event
        run.turn = Turn()
    run.turn.fail(exc)


def _end_turn(
    run: LoopRun,
) -> tuple[IterationEnd, Message, list[ToolUseBlock], dict[str, str]]:
    """The streamed turn's end (its usage counted), its message, its tool uses and the
    calls whose arguments cannot be used. Raises ``Failed`` when the model failed or its
    stream ended without an ``IterationEnd`` (``close_run`` closes the stream)."""
    turn = run.turn
    assert turn is not None
    if turn.error is not None:
        run.turn = None
        raise Failed(turn.error)
    if turn.end is None:
        run.turn = None
        raise Failed(RuntimeError("the model stream ended without an IterationEnd"))
    usage = turn.end.usage
    run.total += usage
    if run.budget is not None:
        held, run.held = run.held, 0.0
        run.budget.settle(held, usage)
    message, uses, bad = turn.message()
    run.final_text = run.control.final_text = message.text or run.final_text
    return IterationEnd(run.iteration, turn.end.stop_reason, usage), message, uses, bad


def _refuse(
    run: LoopRun,
    uses: list[ToolUseBlock],
    bad: dict[str, str],
    results: list[ToolResultBlock | None],
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


async def _decide_lone(run: LoopRun, use: ToolUseBlock) -> Decided | None:
    """Decide a turn's only call; ``None`` when the run was interrupted meanwhile."""
    tool = run.tools.get(use.name)
    if (tool is None or not tool._guards_wait) and not run.scope.observers:
        return await decide(run.tools, use, run.scope)  # nothing in it can wait
    with run.control.interruptible():  # a guard may wait (for a person's approval)
        return await decide(run.tools, use, run.scope)
    return None


async def _complete_lone(
    run: LoopRun, decided: Decided | None, i: int, results: list[ToolResultBlock | None]
) -> Sequence[StreamEvent]:
    """Run a turn's only call inline; the events it made, its result last. The call's
    time limit and the run's interrupt share one cancel scope (an interrupt raises)."""
    done: ToolResultBlock | None = None
    if decided is not None and not run.control.stopped():
        done = results[i] = await complete(decided, run.scope, run.settings, run.control)
    if done is None or decided is None:
        return run.outbox.take()
    _note_saved(run, done)
    return [*run.outbox.take(), result_event(decided.use, done)]


def _note_saved(run: LoopRun, block: ToolResultBlock) -> None:
    saved = (block.details or {}).get("saved_output")
    if isinstance(saved, str):
        run.saved[block.tool_use_id] = saved


async def _next_input(run: LoopRun, *, follow: bool) -> bool:
    """After an answer without tool calls: deliver the queued steering messages, or else
    (when the model ended its turn) the next follow-up. Whether the loop goes on."""
    control = run.control
    message = _merge(control.take_steering())
    if run.output is not None and (note := run.output.take_note()) is not None:
        message = _merge([note] if message is None else [note, message])
    if message is None and follow and control.follow_ups:
        message = control.follow_ups.popleft()
    if message is None and run.subagents is not None:  # background sub-agents still run
        with control.interruptible() as waiting:
            message = await run.subagents.idle()
        if waiting.cancelled_caught:
            control.interrupt(StopReason.budget)  # no-op if interrupted
            raise Interrupted
    if message is None:
        return False
    run.outbox.put(await _add_user(run, message))
    return True


async def _commit(
    run: LoopRun, messages: list[Message], usage: Usage, done: Sequence[ToolResultBlock]
) -> list[StreamEvent]:
    """Store the turn and its usage in one write (compaction may fire after it); the
    events it makes: a ``MessageEnd`` per message, the ``TurnEnd``, what compaction said."""
    try:
        with use_scope(run.scope):
            await run.context.append_turn(messages, usage.input_tokens, usage.output_tokens)
    except Exception as exc:
        raise store_failed(exc) from exc
    events: list[StreamEvent] = [MessageEnd(m) for m in messages]
    answer = messages[0] if messages else Message("assistant", [])
    events.append(TurnEnd(run.iteration, answer, tuple(done)))
    events.extend(run.outbox.take())
    return events


def _check_answer(run: LoopRun, message: Message) -> None:
    """An answer without tool calls from an agent with a contract: its JSON is the typed
    answer, or it goes back with what is wrong (``_next_input`` sends the note)."""
    if run.output is None or run.output.done:
        return
    try:
        events = run.output.after_answer(message)
    except InvalidOutput as exc:
        raise Failed(exc, StopReason.invalid_output) from None
    for event in events:
        run.outbox.put(event)
    if run.output.done:
        run.final_text = run.control.final_text = run.output.text


def _check_calls(run: LoopRun, uses: list[ToolUseBlock], done: list[ToolResultBlock]) -> bool:
    """After a turn's calls: whether an accepted ``final_answer`` ended the run; invalid
    ones are counted (their results told the model what is wrong)."""
    if run.output is None:
        return False
    try:
        events = run.output.after_calls(uses, done)
    except InvalidOutput as exc:
        raise Failed(exc, StopReason.invalid_output) from None
    for event in events:
        run.outbox.put(event)
    if run.output.done:
        run.final_text = run.control.final_text = run.output.text
    return run.output.done


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


def _copy(history: list[Message]) -> list[Message]:
    """A copy ``transform_context`` may change freely (tool arguments are dicts)."""
    return copy.deepcopy(history)

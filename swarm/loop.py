"""The agentic loop, as functions: stream a model turn, dispatch its tool calls, repeat.

``run_loop`` is an async generator of events. It never raises for model, tool, guard or
transport failures: they end as events and one final ``SessionEndEvent``. Cancellation
(from outside, ``aclose()`` or ``AgentStream.interrupt()``) stops it promptly, and the
context it leaves behind is always valid: every stored tool use has its tool result.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from swarm.errors import GuardError, MaxIterationsReached, ToolError
from swarm.events import (
    Error,
    IterationEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolUseStart,
)
from swarm.messages import (
    ContentBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.run import CallRecord, RunScope, current_scope, use_call, use_scope
from swarm.tools import Progress, Tool
from swarm.types import StopReason, Usage

if TYPE_CHECKING:
    from swarm.agent import Agent
    from swarm.context.base import ContextStore

__all__ = ["Control", "dispatch_tools", "run_loop"]

_DONE = object()
_INTERRUPT = object()


class _Interrupted(Exception):
    """Internal: the run was interrupted through its stream."""


@dataclass(slots=True)
class Control:
    """Lets ``AgentStream.interrupt()`` reach the loop from another task."""

    interrupted: bool = False
    scope: anyio.CancelScope | None = None
    dispatch: Any = None  # the send side of the dispatch channel while tools run

    def interrupt(self) -> None:
        self.interrupted = True
        if self.scope is not None:
            self.scope.cancel()
        if self.dispatch is not None:
            self.dispatch(_INTERRUPT)


@dataclass(slots=True)
class _ToolCall:
    id: str
    name: str
    index: int
    json_parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Turn:
    """What one model call said, assembled from its events."""

    blocks: dict[int, Any] = field(default_factory=dict)
    calls: dict[str, _ToolCall] = field(default_factory=dict)
    end: IterationEnd | None = None
    error: BaseException | None = None

    def add_text(self, index: int, delta: str) -> None:
        parts = self.blocks.get(index)
        if not isinstance(parts, list):
            parts = self.blocks[index] = []
        parts.append(delta)

    def add_reasoning(self, event: ReasoningDelta) -> None:
        entry = self.blocks.get(event.index)
        if not isinstance(entry, tuple):
            entry = self.blocks[event.index] = ([], [])
        entry[0].append(event.delta)
        if event.signature:
            entry[1].append(event.signature)

    def start_call(self, event: ToolUseStart) -> None:
        call = _ToolCall(event.tool_use_id, event.name, event.index)
        self.calls[event.tool_use_id] = call
        self.blocks.setdefault(event.index, call)

    def message(self) -> tuple[Message, list[ToolUseBlock], dict[str, str]]:
        """The assistant message, its tool uses, and parse errors by call id."""
        content: list[ContentBlock] = []
        uses: list[ToolUseBlock] = []
        bad: dict[str, str] = {}
        for index in sorted(self.blocks):
            entry = self.blocks[index]
            if isinstance(entry, list):
                content.append(TextBlock("".join(entry)))
            elif isinstance(entry, tuple):
                content.append(ReasoningBlock("".join(entry[0]), "".join(entry[1]) or None))
        for call in self.calls.values():
            raw = "".join(call.json_parts).strip()
            arguments: dict[str, Any] = {}
            if raw:
                try:
                    parsed = json.loads(raw)
                except json.JSONDecodeError as exc:
                    bad[call.id] = (
                        f"The arguments of this '{call.name}' call were not valid JSON ({exc.msg}"
                        f" at character {exc.pos}). Call the tool again with a complete JSON"
                        " object as its arguments."
                    )
                else:
                    if isinstance(parsed, dict):
                        arguments = parsed
                    else:
                        bad[call.id] = (
                            f"The arguments of this '{call.name}' call must be a JSON object,"
                            f" not {type(parsed).__name__}. Call the tool again with an object."
                        )
            use = ToolUseBlock(call.id, call.name, arguments)
            uses.append(use)
            content.append(use)
        return Message("assistant", content), uses, bad


def _error_result(call_id: str, text: str) -> ToolResultBlock:
    return ToolResultBlock(call_id, text, is_error=True)


async def _call_tool(
    agent: Agent, tools: dict[str, Tool[Any]], use: ToolUseBlock, scope: RunScope
) -> ToolResultBlock:
    """Validate, guard and run one call; every failure becomes an error result."""
    call = CallRecord(use.id, use.name, scope.path, use.input)
    with use_call(call):
        try:
            block = await _decide_and_run(agent, tools.get(use.name), tools, use, call, scope)
        except Exception as exc:  # an observer failed at decision time: fail closed
            block = _error_result(
                use.id, f"Denied: the call could not be recorded ({type(exc).__name__}: {exc})."
            )
    return block


async def _decide_and_run(
    agent: Agent,
    tool: Tool[Any] | None,
    tools: dict[str, Tool[Any]],
    use: ToolUseBlock,
    call: CallRecord,
    scope: RunScope,
) -> ToolResultBlock:
    observers = scope.observers
    block: ToolResultBlock | None = None
    arguments: dict[str, Any] = {}
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        call.decision, call.reason = "invalid", f"unknown tool '{use.name}'"
        block = _error_result(use.id, f"Unknown tool '{use.name}'. Available tools: {names}.")
    else:
        try:
            arguments = await tool.check(tool.validate(use.input))
            call.decision, call.arguments = "allow", arguments
        except GuardError as exc:
            call.decision, call.reason = "deny", exc.reason
            call.guard = exc.guard
            call.rule = exc.rule or call.rule
            who = f" by {exc.guard}" if exc.guard else ""
            rule = f" (rule: {exc.rule})" if exc.rule else ""
            block = _error_result(
                use.id,
                f"Permission denied{who}{rule}: {exc.reason}. The call was not run; do not"
                " repeat it unchanged.",
            )
        except ToolError as exc:
            call.decision, call.reason = "invalid", str(exc)
            block = _error_result(use.id, str(exc))
    for observer in observers:
        await observer.on_decision(call)
    if block is not None:
        for observer in observers:
            await observer.on_finish(call, block, 0.0)
        return block
    assert tool is not None
    started = time.perf_counter()
    try:
        block = await _execute(agent, tool, use, arguments, scope)
    finally:
        if observers:
            if block is None:
                block = _error_result(use.id, "Cancelled: the run was stopped during this call.")
            with anyio.CancelScope(shield=True):
                for observer in observers:
                    await observer.on_finish(call, block, time.perf_counter() - started)
    return block


async def _execute(
    agent: Agent, tool: Tool[Any], use: ToolUseBlock, arguments: dict[str, Any], scope: RunScope
) -> ToolResultBlock:
    progress = None
    if tool.supports_streaming and scope.sink is not None:
        sink = scope.sink

        def report(key: str, delta: str) -> None:
            sink(ToolOutputDelta(use.id, use.name, key, delta))

        progress = Progress(use.id, use.name, report)
    try:
        output = await tool.execute(arguments, progress=progress, timeout=agent.tool_timeout)
    except ToolError as exc:
        return _error_result(use.id, str(exc))
    except Exception as exc:
        return _error_result(use.id, f"Tool '{use.name}' failed: {type(exc).__name__}: {exc}")
    return ToolResultBlock(use.id, output.content, False, output.details)


def _result_event(use: ToolUseBlock, block: ToolResultBlock) -> ToolResult:
    return ToolResult(use.id, use.name, block.is_error, block.text, use.input, block.details, block)


async def _next_event(iterator: AsyncIterator[StreamEvent], control: Control) -> StreamEvent:
    """The transport's next event, interruptible through ``control``."""
    with anyio.CancelScope() as scope:
        control.scope = scope
        if control.interrupted:
            scope.cancel()
        try:
            return await iterator.__anext__()
        finally:
            control.scope = None
    raise _Interrupted


async def _close(iterator: AsyncIterator[StreamEvent]) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()


def _drain(receive: Any) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    while True:
        try:
            events.append(receive.receive_nowait())
        except anyio.WouldBlock:
            return events


async def run_loop(
    agent: Agent,
    user_message: str | Message | Sequence[ContentBlock] | None,
    context: ContextStore,
    control: Control,
) -> AsyncGenerator[StreamEvent, None]:
    """Run ``agent`` on ``user_message`` (``None``: continue from the context as it is)."""
    send, receive = anyio.create_memory_object_stream[Any](math.inf)
    scope = current_scope().child(sink=send.send_nowait)
    tools = {t.name: t for t in agent.tools}
    total = Usage()
    stop = StopReason.end_turn
    pending: tuple[Message, list[ToolUseBlock], list[ToolResultBlock | None]] | None = None
    try:
        if user_message is not None:
            await context.append(_user_message(user_message))
        iteration = 0
        while True:
            iteration += 1
            if control.interrupted:
                raise _Interrupted
            history = await context.get_history()
            last = iteration == agent.max_iterations
            if last and agent.last_iteration_message is not None:
                history.append(agent.last_iteration_message)
            offered = agent.tools
            if agent.selector is not None:
                offered = list(await agent.selector.select(history, agent.tools))

            turn = _Turn()
            iterator: AsyncIterator[StreamEvent] | None = None
            try:
                iterator = aiter(agent.transport.stream(history, offered, agent.system))
                while True:
                    try:
                        event = await _next_event(iterator, control)
                    except StopAsyncIteration:
                        break
                    match event:
                        case TextDelta():
                            turn.add_text(event.index, event.delta)
                        case ToolInputDelta():
                            call = turn.calls.get(event.tool_use_id)
                            if call is not None:
                                call.json_parts.append(event.partial_json)
                        case ToolUseStart():
                            turn.start_call(event)
                        case ReasoningDelta():
                            turn.add_reasoning(event)
                        case IterationEnd():
                            turn.end = event
                            continue
                        case Error():
                            turn.error = event.exception
                            continue
                        case _:
                            pass
                    yield event
            except (_Interrupted, anyio.get_cancelled_exc_class(), GeneratorExit):
                raise
            except Exception as exc:
                turn.error = exc
            finally:
                if iterator is not None:
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
            yield IterationEnd(iteration, turn.end.stop_reason, usage)
            message, uses, bad = turn.message()

            if not uses:
                if message.content:
                    await context.append(message)
                for event in await _account(context, usage, scope, receive):
                    yield event
                stop = (
                    StopReason.max_tokens
                    if turn.end.stop_reason == StopReason.max_tokens
                    else StopReason.end_turn
                )
                break

            results: list[ToolResultBlock | None] = [None] * len(uses)
            pending = (message, uses, results)
            if last:
                for i, use in enumerate(uses):
                    refused = results[i] = _error_result(
                        use.id,
                        f"Not run: the agent reached its limit of {agent.max_iterations}"
                        " iterations.",
                    )
                    yield _result_event(use, refused)
            else:
                for i, use in enumerate(uses):
                    if use.id in bad:
                        refused = results[i] = _error_result(use.id, bad[use.id])
                        yield _result_event(use, refused)
                todo = [i for i, r in enumerate(results) if r is None]
                if len(todo) == 1 and not _is_live(tools, uses[todo[0]]):
                    i = todo[0]
                    with anyio.CancelScope() as call_scope, use_scope(scope):
                        control.scope = call_scope
                        if control.interrupted:
                            call_scope.cancel()
                        try:
                            results[i] = await _call_tool(agent, tools, uses[i], scope)
                        finally:
                            control.scope = None
                    for event in _drain(receive):
                        yield event
                    block = results[i]
                    if block is not None:
                        yield _result_event(uses[i], block)
                elif todo:
                    async for event in _dispatch(
                        agent, tools, uses, todo, results, scope, send, receive, control
                    ):
                        yield event
            if control.interrupted:
                raise _Interrupted
            await context.append_many([message, _results_message(results)])
            pending = None
            for event in await _account(context, usage, scope, receive):
                yield event
            if last:
                yield Error(
                    MaxIterationsReached(
                        f"the agent reached its limit of {agent.max_iterations} iterations"
                    )
                )
                stop = StopReason.error
                break
    except _Interrupted:
        stop = StopReason.cancelled
    finally:
        if pending is not None:
            message, uses, results = pending
            for i, use in enumerate(uses):
                if results[i] is None:
                    results[i] = _error_result(
                        use.id, "Cancelled: the run was stopped before this call finished."
                    )
            with anyio.CancelScope(shield=True):
                await context.append_many([message, _results_message(results)])
        send.close()
        receive.close()
    yield SessionEndEvent(stop, total)


def _is_live(tools: dict[str, Tool[Any]], use: ToolUseBlock) -> bool:
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


async def _account(
    context: ContextStore, usage: Usage, scope: RunScope, receive: Any
) -> list[StreamEvent]:
    """Record the call's usage (compaction may fire here) and collect what it emitted."""
    with use_scope(scope):
        await context.add_context_tokens(usage.input_tokens, usage.output_tokens)
    return _drain(receive)


async def _dispatch(
    agent: Agent,
    tools: dict[str, Tool[Any]],
    uses: list[ToolUseBlock],
    todo: list[int],
    results: list[ToolResultBlock | None],
    scope: RunScope,
    send: Any,
    receive: Any,
    control: Control,
) -> AsyncGenerator[StreamEvent, None]:
    """Run several calls concurrently, yielding their events as they happen.

    Calls never raise (every failure is a result), so the task group's scope is only
    ever cancelled by an interrupt, from here, never while suspended at a yield.
    """
    remaining = len(todo)

    async def one(i: int) -> None:
        nonlocal remaining
        use = uses[i]
        block = await _call_tool(agent, tools, use, scope)
        results[i] = block
        send.send_nowait(_result_event(use, block))
        remaining -= 1
        if remaining == 0:
            send.send_nowait(_DONE)

    control.dispatch = send.send_nowait
    try:
        async with anyio.create_task_group() as group:
            with use_scope(scope):
                for i in todo:
                    group.start_soon(one, i)
            async for event in receive:
                if event is _DONE:
                    break
                if event is _INTERRUPT:
                    group.cancel_scope.cancel()
                    break
                yield event
    finally:
        control.dispatch = None
    for event in _drain(receive):
        if event is not _DONE and event is not _INTERRUPT:
            yield event


async def dispatch_tools(agent: Agent, blocks: list[ToolUseBlock]) -> list[ToolResultBlock]:
    """Run tool calls concurrently outside the loop; results come back in call order.

    Progress and sub-agent events go to the current run scope's sink, if any.
    """
    tools = {t.name: t for t in agent.tools}
    scope = current_scope()
    results: list[ToolResultBlock] = [_error_result(b.id, "not run") for b in blocks]

    async def one(i: int) -> None:
        results[i] = await _call_tool(agent, tools, blocks[i], scope)

    async with anyio.create_task_group() as group:
        for i in range(len(blocks)):
            group.start_soon(one, i)
    return results

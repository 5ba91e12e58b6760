"""Running the tool calls of one model turn: validate, guard, observe, execute.

Every failure becomes a ``ToolResultBlock(is_error=True)`` that tells the model what went
wrong; nothing here raises into the loop except cancellation.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from swarm.errors import GuardError, ToolError
from swarm.events import StreamEvent, ToolOutputDelta, ToolResult
from swarm.messages import ToolResultBlock, ToolUseBlock
from swarm.run import CallRecord, RunScope, _call, _scope, current_scope
from swarm.tools import Progress, Tool

if TYPE_CHECKING:
    from swarm.agent import Agent
    from swarm.loop import Control

__all__ = ["Outbox", "call_tool", "dispatch_tools", "error_result", "result_event", "run_calls"]

DONE = object()
INTERRUPT = object()


class Outbox:
    """Events produced off the loop's own path (tool progress, compaction, sub-agents),
    held until the loop yields them. While calls run concurrently, events go straight
    into a channel the loop is reading instead."""

    __slots__ = ("_items", "send")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self.send: Callable[[Any], None] | None = None

    def put(self, event: StreamEvent) -> None:
        if self.send is not None:
            self.send(event)
        else:
            self._items.append(event)

    def take(self) -> list[Any]:
        items = self._items
        if items:
            self._items = []
        return items


def error_result(call_id: str, text: str) -> ToolResultBlock:
    return ToolResultBlock(call_id, text, is_error=True)


def result_event(use: ToolUseBlock, block: ToolResultBlock) -> ToolResult:
    return ToolResult(use.id, use.name, block.is_error, block.text, use.input, block.details, block)


async def call_tool(
    agent: Agent, tools: dict[str, Tool[Any]], use: ToolUseBlock, scope: RunScope
) -> ToolResultBlock:
    """Validate, guard, observe and run one call in ``scope``; failures become results."""
    call = CallRecord(use.id, use.name, scope.path, use.input)
    scope_token = _scope.set(scope)
    call_token = _call.set(call)
    try:
        return await _decide_and_run(agent, tools, use, call, scope)
    except Exception as exc:  # an observer failed at decision time: fail closed
        return error_result(
            use.id, f"Denied: the call could not be recorded ({type(exc).__name__}: {exc})."
        )
    finally:
        _call.reset(call_token)
        _scope.reset(scope_token)


async def _decide_and_run(
    agent: Agent,
    tools: dict[str, Tool[Any]],
    use: ToolUseBlock,
    call: CallRecord,
    scope: RunScope,
) -> ToolResultBlock:
    tool = tools.get(use.name)
    block: ToolResultBlock | None = None
    arguments: dict[str, Any] = {}
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        call.decision, call.reason = "invalid", f"unknown tool '{use.name}'"
        block = error_result(use.id, f"Unknown tool '{use.name}'. Available tools: {names}.")
    else:
        try:
            arguments = tool.validate(use.input)
            if tool.guards:
                arguments = await tool.check(arguments)
            call.decision, call.arguments = "allow", arguments
        except GuardError as exc:
            call.decision, call.reason, call.guard = "deny", exc.reason, exc.guard
            call.rule = exc.rule or call.rule
            who = f" by {exc.guard}" if exc.guard else ""
            rule = f" (rule: {exc.rule})" if exc.rule else ""
            block = error_result(
                use.id,
                f"Permission denied{who}{rule}: {exc.reason}. The call was not run; do not"
                " repeat it unchanged.",
            )
        except ToolError as exc:
            call.decision, call.reason = "invalid", str(exc)
            block = error_result(use.id, str(exc))
    observers = scope.observers
    for observer in observers:
        await observer.on_decision(call)
    if block is not None or tool is None:
        block = block or error_result(use.id, "not run")
        for observer in observers:
            await observer.on_finish(call, block, 0.0)
        return block
    if not observers:
        return await _execute(agent, tool, use, arguments, scope)
    started = time.perf_counter()
    try:
        block = await _execute(agent, tool, use, arguments, scope)
    finally:
        if block is None:
            block = error_result(use.id, "Cancelled: the run was stopped during this call.")
        with anyio.CancelScope(shield=True):
            for observer in observers:
                await observer.on_finish(call, block, time.perf_counter() - started)
    return block


async def _execute(
    agent: Agent, tool: Tool[Any], use: ToolUseBlock, arguments: dict[str, Any], scope: RunScope
) -> ToolResultBlock:
    progress = None
    sink = scope.sink
    if sink is not None and tool.reports_progress:

        def report(key: str, delta: str) -> None:
            sink(ToolOutputDelta(use.id, use.name, key, delta))

        progress = Progress(use.id, use.name, report)
    try:
        output = await tool.execute(arguments, progress=progress, timeout=agent.tool_timeout)
    except ToolError as exc:
        return error_result(use.id, str(exc))
    except Exception as exc:
        return error_result(use.id, f"Tool '{use.name}' failed: {type(exc).__name__}: {exc}")
    return ToolResultBlock(use.id, output.content, False, output.details)


async def run_calls(
    agent: Agent,
    tools: dict[str, Tool[Any]],
    uses: list[ToolUseBlock],
    todo: list[int],
    results: list[ToolResultBlock | None],
    scope: RunScope,
    outbox: Outbox,
    control: Control,
) -> AsyncGenerator[StreamEvent, None]:
    """Run the calls ``todo`` concurrently, filling ``results`` and yielding their events
    (progress, sub-agent events, each ``ToolResult``) as they happen.

    Calls never raise (every failure is a result), so the task group's scope is only
    cancelled by an interrupt through ``control`` or its deadline (the time budget), and
    only from here, never while suspended at a yield.
    """
    send, receive = anyio.create_memory_object_stream[Any](math.inf)
    remaining = len(todo)

    async def one(i: int) -> None:
        nonlocal remaining
        block = results[i] = await call_tool(agent, tools, uses[i], scope)
        send.send_nowait(result_event(uses[i], block))
        remaining -= 1
        if remaining == 0:
            send.send_nowait(DONE)

    outbox.send = send.send_nowait
    control.set_dispatch(send.send_nowait)
    try:
        with send, receive:
            async with anyio.create_task_group() as group:
                for i in todo:
                    group.start_soon(one, i)
                while True:
                    try:  # take what is buffered without a checkpoint per event
                        event = receive.receive_nowait()
                    except anyio.WouldBlock:
                        event = await _next(receive, control.deadline)
                    if event is DONE:
                        break
                    if event is INTERRUPT:  # unfinished calls keep no result
                        group.cancel_scope.cancel()
                        break
                    yield event
            leftovers = []
            while True:
                try:
                    leftovers.append(receive.receive_nowait())
                except anyio.WouldBlock:
                    break
    finally:
        outbox.send = None
        control.set_dispatch(None)
    for event in leftovers:
        if event is not DONE and event is not INTERRUPT:
            yield event


async def _next(receive: MemoryObjectReceiveStream[Any], deadline: float) -> Any:
    """The next event, or ``INTERRUPT`` once ``deadline`` (the time budget) has passed.
    The deadline's scope covers this wait only, never the loop's yields."""
    if deadline == math.inf:
        return await receive.receive()
    with anyio.CancelScope(deadline=deadline):
        return await receive.receive()
    return INTERRUPT


async def dispatch_tools(agent: Agent, blocks: list[ToolUseBlock]) -> list[ToolResultBlock]:
    """Run tool calls concurrently outside the loop; results come back in call order.

    Progress and sub-agent events go to the current run scope's sink, if any.
    """
    tools = {t.name: t for t in agent.tools}
    scope = current_scope()
    results: list[ToolResultBlock] = [error_result(b.id, "not run") for b in blocks]

    async def one(i: int) -> None:
        results[i] = await call_tool(agent, tools, blocks[i], scope)

    async with anyio.create_task_group() as group:
        for i in range(len(blocks)):
            group.start_soon(one, i)
    return results

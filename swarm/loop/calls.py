"""Running the tool calls of one model turn: validate, guard, observe, execute, after.

A call goes through two steps: ``decide`` (look the tool up, validate the arguments, run
its guards, tell the observers) and ``complete`` (run the handler under its timeout, run
the after-call hooks, save an output too large for the model, tell the observers). The
loop emits ``ToolCallStart`` between the two. Every failure becomes a
``ToolResultBlock(is_error=True)`` that tells the model what went wrong; nothing here
raises into the loop except cancellation.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from swarm.control import Control, Interrupted, Signal
from swarm.errors import GuardError, ToolError
from swarm.events import StreamEvent, ToolCallStart, ToolOutputDelta, ToolResult
from swarm.loop.outputs import READ_OUTPUT, spill
from swarm.messages import ToolResultBlock, ToolUseBlock
from swarm.scope import CallRecord, RunScope, _call, _scope, current_scope
from swarm.tools import Progress, Tool, ToolOutput

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "AfterCallHook",
    "CallSettings",
    "Decided",
    "Outbox",
    "call_tool",
    "complete",
    "decide",
    "dispatch_tools",
    "error_result",
    "result_event",
    "run_calls",
]

DEFAULT_TOOL_TIMEOUT = 600.0
"""Seconds a tool call may run when neither the tool nor the agent says otherwise."""


class AfterCallHook(Protocol):
    """A step run on every finished call's result, before the model sees it.

    Return a replacement result (redaction, truncation) or ``None`` to keep it. The
    hook's ``name`` is written to the audit log when it replaces a result. A hook that
    raises withholds the result (fail closed): the model gets an error instead.
    """

    name: str

    async def after(
        self, tool: str, arguments: dict[str, Any], result: ToolResultBlock
    ) -> ToolResultBlock | None: ...


@dataclass(frozen=True, slots=True)
class CallSettings:
    """How one agent runs its calls: the default ``timeout`` (seconds, ``None``: no
    limit; a tool's own wins), the ``after`` hooks in order, and ``max_result_chars``,
    past which a result is saved to a file and the model gets its head."""

    timeout: float | None = DEFAULT_TOOL_TIMEOUT
    after: tuple[AfterCallHook, ...] = ()
    max_result_chars: int | None = None


_DEFAULT_SETTINGS = CallSettings()

_NO_EVENTS: tuple[StreamEvent, ...] = ()

_Item: TypeAlias = StreamEvent | Signal
"""What the channel of concurrent calls carries: their events, and the loop's signals."""


class Outbox:
    """Events produced off the loop's own path (tool progress, compaction, sub-agents),
    held until the loop yields them. While calls run concurrently, events go straight
    into a channel the loop is reading instead.

    An outbox is its run's scope's ``sink`` (calling it puts). A caller that starts a
    run may make the run's scope itself with a new outbox as its sink (a delegation
    does): the run then takes that scope as its own (``claimed``) instead of deriving
    one from it."""

    __slots__ = ("_items", "claimed", "send")

    def __init__(self) -> None:
        self._items: list[StreamEvent] | None = None  # made with the first event held
        self.send: Callable[[StreamEvent], None] | None = None
        self.claimed = False

    def put(self, event: StreamEvent) -> None:
        """Deliver ``event`` to the loop (now, when it is reading the channel)."""
        if self.send is not None:
            self.send(event)
        elif self._items is None:
            self._items = [event]
        else:
            self._items.append(event)

    __call__ = put

    def take(self) -> Sequence[StreamEvent]:
        """The events held so far; the outbox is left empty."""
        items = self._items
        if items is None:
            return _NO_EVENTS
        self._items = None
        return items


@dataclass(slots=True)
class Decided:
    """A call after ``decide``: the tool and its checked arguments, or the refusal."""

    use: ToolUseBlock
    call: CallRecord
    tool: Tool[Any] | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    refusal: ToolResultBlock | None = None
    unrecorded: bool = False

    @property
    def start(self) -> ToolCallStart | None:
        """The ``ToolCallStart`` event of an allowed call, ``None`` for a refused one."""
        if self.refusal is not None:
            return None
        return ToolCallStart(self.use.id, self.use.name, self.arguments)

    def announce(self, sink: Callable[[StreamEvent], None] | None) -> None:
        """Send ``start`` to ``sink`` (if any) for an allowed call (the event is then not
        held in the caller's frame while the call runs)."""
        if sink is not None and (start := self.start) is not None:
            sink(start)


def error_result(call_id: str, text: str) -> ToolResultBlock:
    """A result telling the model the call failed, and why."""
    return ToolResultBlock(call_id, text, is_error=True)


def result_event(use: ToolUseBlock, block: ToolResultBlock) -> ToolResult:
    """The ``ToolResult`` event of a call and its result."""
    return ToolResult(use.id, use.name, block.is_error, block.text, use.input, block.details, block)


async def call_tool(
    tools: dict[str, Tool[Any]],
    use: ToolUseBlock,
    scope: RunScope,
    settings: CallSettings = _DEFAULT_SETTINGS,
    control: Control | None = None,
) -> ToolResultBlock:
    """Decide and run one call in ``scope``; its ``ToolCallStart`` goes to the scope's
    sink. Failures become results. With ``control`` (one of a turn's concurrent calls),
    the run's watchdog keeps the call's time limit."""
    decided = await decide(tools, use, scope)
    decided.announce(scope.sink)
    return await complete(decided, scope, settings, control, lone=False)


async def decide(tools: dict[str, Tool[Any]], use: ToolUseBlock, scope: RunScope) -> Decided:
    """Look the tool up, validate, guard and tell the observers; a refusal is kept on the
    result (``refusal``), never raised. An observer that fails denies the call."""
    decided = Decided(use, CallRecord(use.id, use.name, scope.path, use.input))
    scope_token = _scope.set(scope)
    call_token = _call.set(decided.call)
    try:
        _check(tools, decided)
        await _guard(decided)
        for observer in scope.observers:
            await observer.on_decision(decided.call)
    except Exception as exc:  # an observer failed at decision time: fail closed
        decided.unrecorded = True
        decided.refusal = error_result(
            use.id, f"Denied: the call could not be recorded ({type(exc).__name__}: {exc})."
        )
    finally:
        _call.reset(call_token)
        _scope.reset(scope_token)
    return decided


def _check(tools: dict[str, Tool[Any]], decided: Decided) -> None:
    use, call = decided.use, decided.call
    tool = decided.tool = tools.get(use.name)
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        call.decision, call.reason = "invalid", f"unknown tool '{use.name}'"
        decided.refusal = error_result(
            use.id, f"Unknown tool '{use.name}'. Available tools: {names}."
        )


async def _guard(decided: Decided) -> None:
    tool, use, call = decided.tool, decided.use, decided.call
    if tool is None or decided.refusal is not None:
        return
    try:
        arguments = tool.validate(use.input)
        if tool.guards:
            arguments = await tool.check(arguments)
        capture = current_scope().capture
        if capture is not None:
            await capture.admit(call, tool, arguments)
        call.decision, call.arguments = "allow", arguments
        decided.arguments = arguments
    except GuardError as exc:
        call.decision, call.reason, call.guard = "deny", exc.reason, exc.guard
        call.rule = exc.rule or call.rule
        who = f" by {exc.guard}" if exc.guard else ""
        rule = f" (rule: {exc.rule})" if exc.rule else ""
        decided.refusal = error_result(
            use.id,
            f"Permission denied{who}{rule}: {exc.reason}. The call was not run; do not"
            " repeat it unchanged.",
        )
    except ToolError as exc:
        call.decision, call.reason = "invalid", str(exc)
        decided.refusal = error_result(use.id, str(exc))


async def complete(
    decided: Decided,
    scope: RunScope,
    settings: CallSettings = _DEFAULT_SETTINGS,
    control: Control | None = None,
    *,
    lone: bool = True,
) -> ToolResultBlock:
    """Run a decided call: the handler, the after hooks, the large-output rule, and the
    observers' finish. A refused call only reaches the observers. With ``control``, the
    run's watchdog keeps the call's time limit; for a ``lone`` call of the loop, the
    limit and the run's interrupt share one cancel scope, and an interrupted call raises
    ``Interrupted``."""
    observers = () if decided.unrecorded else scope.observers
    scope_token = _scope.set(scope)
    call_token = _call.set(decided.call)
    tool, use = decided.tool, decided.use
    try:
        if decided.refusal is not None or tool is None:
            block = decided.refusal or error_result(use.id, "not run")
            for observer in observers:
                await observer.on_finish(decided.call, block, 0.0)
            return block
        started = time.perf_counter() if observers else 0.0
        result: ToolResultBlock | None = None
        try:
            arguments, timeout = decided.arguments, settings.timeout
            if scope.capture is None:
                block = await _execute(tool, use, arguments, scope, timeout, control, lone)
            else:
                async with scope.capture.capturing(decided.call, tool, arguments):
                    block = await _execute(tool, use, arguments, scope, timeout, control, lone)
            if settings.after:
                block = await _after(decided, block, settings.after)
            limit = settings.max_result_chars
            if limit is not None and len(block.text) > limit and use.name != READ_OUTPUT:
                block = await spill(scope, use, block, limit)
                decided.call.saved_output = (block.details or {}).get("saved_output")
            result = block
        finally:
            if observers:
                if result is None:
                    result = error_result(
                        use.id, "Cancelled: the run was stopped during this call."
                    )
                with anyio.CancelScope(shield=True):
                    for observer in observers:
                        await observer.on_finish(
                            decided.call, result, time.perf_counter() - started
                        )
        return result
    finally:
        _call.reset(call_token)
        _scope.reset(scope_token)


async def _after(
    decided: Decided, block: ToolResultBlock, hooks: Sequence[AfterCallHook]
) -> ToolResultBlock:
    for hook in hooks:
        name = getattr(hook, "name", type(hook).__name__)
        try:
            replaced = await hook.after(decided.use.name, decided.arguments, block)
        except Exception as exc:  # a failing redaction must not leak what it should hide
            decided.call.after += (name,)
            return error_result(
                decided.use.id,
                f"The result was withheld: the after-call hook '{name}' failed"
                f" ({type(exc).__name__}).",
            )
        if replaced is not None and replaced != block:
            decided.call.after += (name,)
            block = replaced
    return block


async def _execute(
    tool: Tool[Any],
    use: ToolUseBlock,
    arguments: dict[str, Any],
    scope: RunScope,
    timeout: float | None,
    control: Control | None,
    lone: bool,
) -> ToolResultBlock:
    """The handler, its failures as results. Its time limit is kept by the run's
    watchdog when the call runs under a ``control`` (a ``lone`` call of the loop shares
    one cancel scope with the run's interrupt; concurrent calls leave interrupts and the
    budget to their task group), else by ``Tool.execute``. The handler is awaited here
    directly (no coroutine between) when nothing could cut it."""
    progress = None
    if scope.sink is not None and tool.reports_progress:
        progress = _progress(scope.sink, use)
    try:
        if control is None:
            output = await tool.execute(arguments, progress=progress, timeout=timeout)
        else:
            limit = tool.time_limit(timeout)
            if not tool._handler_waits or (limit is None and not lone):  # nothing to cut
                if tool._plain:  # (awaited first: ``ToolOutput.of`` is not held meanwhile)
                    returned = await tool.handler(**arguments)
                    output = ToolOutput.of(returned)
                else:
                    output = await tool.run_handler(arguments, progress=progress)
            else:
                ran = False
                with control.interruptible(limit) if lone else control.limited(limit):
                    output = await tool.run_handler(arguments, progress=progress)
                    ran = True
                if not ran:  # cut: by the run's interrupt, or by the call's time limit
                    if lone and (control.stopped() or limit is None):
                        raise Interrupted
                    assert limit is not None
                    raise tool.timed_out(limit)
    except Interrupted:
        raise
    except ToolError as exc:
        return error_result(use.id, str(exc))
    except Exception as exc:
        return error_result(use.id, f"Tool '{use.name}' failed: {type(exc).__name__}: {exc}")
    return ToolResultBlock(use.id, output.content, False, output.details)


def _progress(sink: Callable[[StreamEvent], None], use: ToolUseBlock) -> Progress:
    """The ``Progress`` of a call, reporting to ``sink`` (made here, not in ``_execute``,
    whose every call would otherwise hold closure cells)."""

    def report(key: str, delta: str) -> None:
        sink(ToolOutputDelta(use.id, use.name, key, delta))

    return Progress(use.id, use.name, report)


async def run_calls(
    tools: dict[str, Tool[Any]],
    uses: list[ToolUseBlock],
    todo: list[int],
    results: list[ToolResultBlock | None],
    scope: RunScope,
    outbox: Outbox,
    control: Control,
    settings: CallSettings = _DEFAULT_SETTINGS,
) -> AsyncGenerator[StreamEvent, None]:
    """Run the calls ``todo`` concurrently, filling ``results`` and yielding their events
    (each ``ToolCallStart``, progress, sub-agent events, each ``ToolResult``) as they
    happen.

    Calls never raise (every failure is a result), so the task group's scope is only
    cancelled by an interrupt through ``control``, its deadline (the time budget), or the
    generator being closed, and only from here, never while suspended at a yield.
    """
    send, receive = anyio.create_memory_object_stream[_Item](math.inf)
    remaining = len(todo)

    async def one(i: int) -> None:
        nonlocal remaining
        decided = await decide(tools, uses[i], scope)
        decided.announce(scope.sink)
        block = results[i] = await complete(decided, scope, settings, control, lone=False)
        send.send_nowait(result_event(uses[i], block))
        remaining -= 1
        if remaining == 0:
            send.send_nowait(Signal.DONE)

    outbox.send = send.send_nowait
    control.set_dispatch(send.send_nowait)
    leftovers: list[_Item] = []
    closed = False
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
                    if event is Signal.DONE:
                        break
                    if event is Signal.INTERRUPT:  # unfinished calls keep no result
                        group.cancel_scope.cancel()
                        break
                    try:
                        yield event
                    except GeneratorExit:  # closed at this yield: stop the calls, then end
                        closed = True
                        group.cancel_scope.cancel()
                        break
            while True:
                try:
                    leftovers.append(receive.receive_nowait())
                except anyio.WouldBlock:
                    break
    finally:
        outbox.send = None
        control.set_dispatch(None)
    if closed:
        return
    for event in leftovers:
        if not isinstance(event, Signal):
            yield event


async def _next(receive: MemoryObjectReceiveStream[_Item], deadline: float) -> _Item:
    """The next event, or ``Signal.INTERRUPT`` once ``deadline`` (the time budget) has
    passed. The deadline's scope covers this wait only, never the loop's yields."""
    if deadline == math.inf:
        return await receive.receive()
    with anyio.CancelScope(deadline=deadline):
        return await receive.receive()
    return Signal.INTERRUPT


async def dispatch_tools(
    tools: Sequence[Tool[Any]],
    blocks: list[ToolUseBlock],
    settings: CallSettings = _DEFAULT_SETTINGS,
) -> list[ToolResultBlock]:
    """Run tool calls concurrently outside the loop; results come back in call order.

    Progress and sub-agent events go to the current run scope's sink, if any.
    """
    by_name = {t.name: t for t in tools}
    scope = current_scope()
    results: list[ToolResultBlock] = [error_result(b.id, "not run") for b in blocks]

    async def one(i: int) -> None:
        results[i] = await call_tool(by_name, blocks[i], scope, settings)

    async with anyio.create_task_group() as group:
        for i in range(len(blocks)):
            group.start_soon(one, i)
    return results

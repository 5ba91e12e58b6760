"""The sub-agents one run started: background ones running beside it, finished ones to
go back to.

A run whose agent has the ``agents`` tool holds a ``SubAgents`` (``RunScope.subagents``)
for as long as it runs: a task group, entered by the loop itself, in which the
background sub-agents it starts run while it goes on working. A sub-agent that finishes
while its caller works is announced at the caller's next turn (as a steering message);
when the caller would end while some still run, it waits for them and reads their
announcements (``on_exit="wait"``, the default) or stops them (``on_exit="stop"``). When
the caller's run ends any other way (an error, an interrupt, its budget) the ones still
running are stopped, and they end before it does, so their last events are in its
stream. The finished sub-agents' contexts are kept (``keep``) so a caller can continue
one with a follow-up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import anyio
import anyio.abc

from swarm.control import Control
from swarm.messages import Message

__all__ = ["AGENTS_TOOL", "AgentsSettings", "Child", "ChildResult", "OnExit", "SubAgents"]

AGENTS_TOOL = "agents"
"""The name of the built-in tool that checks on, waits for, steers and stops sub-agents."""

OnExit: TypeAlias = Literal["wait", "stop"]
"""What a caller does with background sub-agents still running when it would end."""

_SHOWN = 2_000  # characters of a result an announcement carries


@dataclass(frozen=True, slots=True)
class AgentsSettings:
    """The ``context`` of the ``agents`` tool: what its run does with background
    sub-agents still running when it would end (``on_exit``)."""

    on_exit: OnExit = "wait"


@dataclass(slots=True)
class ChildResult:
    """How a sub-agent ended: its answer (``text``, ``output`` when typed) or ``error``,
    its stop reason and what the delegation tool's result details hold."""

    text: str
    stop_reason: str
    details: dict[str, Any]
    error: str | None = None
    output: Any = None


@dataclass(slots=True, eq=False)
class Child:
    """One sub-agent a run started: ``status`` is ``running``, ``done``, ``failed`` or
    ``stopped``; ``last_activity`` (wall clock) moves with each of its events;
    ``usage`` reads its budget node. ``context`` keeps what continuing it needs."""

    path: str
    topic: str
    background: bool
    started: float = field(default_factory=time.time)
    last_activity: float = field(default_factory=time.time)
    status: str = "running"
    result: ChildResult | None = None
    usage: Callable[[], dict[str, int]] = field(default=lambda: {}, repr=False)
    context: Any = None  # (what delegation needs to continue it: its store, its agent)
    collected: bool = False  # the caller read its result (wait/result): no announcement
    waiters: int = 0
    stopping: bool = False
    cancel: anyio.CancelScope | None = field(default=None, repr=False)
    finished: bool = False  # its run ended (``ended`` is set)
    _ended: anyio.Event | None = field(default=None, repr=False)

    @property
    def ended(self) -> anyio.Event:
        """Set once its run ended. Made when first asked for: most sub-agents end
        before anything waits for them (an event is two objects per sub-agent)."""
        if self._ended is None:
            self._ended = anyio.Event()
            if self.finished:
                self._ended.set()
        return self._ended

    def end(self) -> None:
        """Its run ended: set ``ended``."""
        self.finished = True
        if self._ended is not None:
            self._ended.set()

    def again(self) -> None:
        """It runs again (continued): ``ended`` is cleared."""
        self.finished, self._ended = False, None

    def summary(self) -> dict[str, Any]:
        """What ``agents status`` shows of this sub-agent."""
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "background": self.background,
            "idle_seconds": round(max(0.0, time.time() - self.last_activity), 1),
            "usage": self.usage(),
        }
        if self.topic:
            out["topic"] = self.topic
        if self.result is not None:
            out["stop_reason"] = self.result.stop_reason
        return out


class SubAgents:
    """The sub-agents of one run (see the module): started, running, finished."""

    def __init__(self, control: Control, on_exit: OnExit = "wait") -> None:
        self.control = control
        self.on_exit = on_exit
        self.children: dict[str, Child] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._idle = False
        self._unannounced: list[Child] = []
        control.announcements = self._announce

    async def __aenter__(self) -> SubAgents:
        self._group = await anyio.create_task_group().__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop what still runs and wait for it to end (the group's own exit: its scope
        must be the task's innermost, so no shield is opened around it)."""
        group, self._group = self._group, None
        if group is None:
            return
        self.stop_all()
        await group.__aexit__(None, None, None)

    def running(self) -> list[Child]:
        """The background sub-agents still running."""
        return [c for c in self.children.values() if c.status == "running" and c.background]

    def add(self, child: Child) -> Child:
        """Record a sub-agent (a blocking one, once it ended, to be continued later)."""
        self.children[child.path] = child
        return child

    def start(self, child: Child, run: Callable[[], Awaitable[ChildResult]]) -> Child:
        """Run ``run`` in the background as ``child``; returns at once. Raises
        ``RuntimeError`` when the run is ending (no new background work then)."""
        if self._group is None:
            raise RuntimeError("the run is ending: no new background sub-agent can start")
        self.add(child)
        self._group.start_soon(self._run, child, run)
        return child

    async def _run(self, child: Child, run: Callable[[], Awaitable[ChildResult]]) -> None:
        with anyio.CancelScope() as scope:
            child.cancel = scope
            try:
                child.result = await run()
            except Exception as exc:  # a failure is the child's result, never the caller's
                child.result = ChildResult("", "error", {}, error=f"{type(exc).__name__}: {exc}")
        if child.result is None:
            child.result = ChildResult("", "cancelled", {}, error="stopped by its caller")
        self.finish(child)

    def finish(self, child: Child) -> None:
        """Mark ``child`` ended and announce it unless its caller already waits for it."""
        result = child.result
        assert result is not None
        if child.stopping and result.stop_reason == "cancelled":
            child.status = "stopped"
        elif result.error is not None:
            child.status = "failed"
        else:
            child.status = "done"
        child.last_activity = time.time()
        child.end()
        if child.background and not child.waiters and not child.collected:
            self._unannounced.append(child)  # told at the caller's next turn

    def _announce(self) -> Message | None:
        """The announcement of the finished sub-agents not yet told (``None``: none);
        they count as collected."""
        told = [c for c in self._unannounced if not c.collected]
        self._unannounced.clear()
        if not told:
            return None
        lines = ["[Background sub-agents finished]"]
        for child in told:
            child.collected = True
            lines.append(describe(child))
        return Message.user("\n\n".join(lines))

    async def wait(self, children: Sequence[Child], timeout: float | None) -> bool:
        """Wait until every one of ``children`` ended, or ``timeout`` seconds; whether
        they all ended. Their results count as collected (no announcement)."""
        for child in children:
            child.waiters += 1
        try:
            with anyio.move_on_after(math.inf if timeout is None else timeout):
                for child in children:
                    await child.ended.wait()
        finally:
            for child in children:
                child.waiters -= 1
        done = all(c.finished for c in children)
        for child in children:
            if child.finished:
                child.collected = True
                if child in self._unannounced:
                    self._unannounced.remove(child)
        return done

    def stop(self, child: Child) -> None:
        """Stop a running background sub-agent: interrupted like any run (it ends
        ``cancelled`` with its end event and a valid history); cancelled outright when it
        is not running its loop yet."""
        if child.status != "running":
            return
        child.stopping = True
        tree = self.control.tree
        control = tree.running.get(child.path) if tree is not None else None
        if control is not None:
            control.interrupt()
        elif child.cancel is not None:
            child.cancel.cancel()

    def stop_all(self) -> None:
        """Stop every background sub-agent still running."""
        for child in self.running():
            self.stop(child)

    async def idle(self) -> Message | None:
        """The caller would end: with background sub-agents still running it waits until
        they all ended and returns their announcement (``on_exit="wait"``: one message,
        however their ends interleave, so a resumed or replayed run reads the same), or
        stops them all and returns ``None`` (``"stop"``); ``None`` when nothing is left
        to say."""
        self._idle = True
        try:
            while running := self.running():
                if self.on_exit == "stop":
                    self.stop_all()
                for child in running:
                    await child.ended.wait()
            if self.on_exit == "stop":
                self._unannounced.clear()
                return None
            return self._announce()
        finally:
            self._idle = False


def describe(child: Child) -> str:
    """A sub-agent's end as its caller reads it: path, status, answer or error."""
    result = child.result
    if result is None:
        return f"{child.path}: still running"
    head = f"{child.path} ({child.status}, {result.stop_reason})"
    if result.error is not None:
        return f"{head}: {result.error}"
    text = result.text if len(result.text) <= _SHOWN else result.text[:_SHOWN] + "..."
    return f"{head}:\n{text}"

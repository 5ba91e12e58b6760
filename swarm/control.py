"""Reaching a running loop from other tasks: interrupt, steer, follow up.

``Control`` is the one object an ``AgentStream`` shares with its loop. Besides the
interrupt flag it holds two queues of user messages: steering messages, delivered after
the current turn's tool calls end and before the next model call, and follow-ups,
delivered when the agent would otherwise stop. ``AgentTree`` maps the paths of the
agents running in one run to their controls, so the root's stream can steer any of them.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from swarm.messages import Message
from swarm.types import StopReason

if TYPE_CHECKING:
    import asyncio

    from swarm.events import SessionEndEvent

__all__ = ["AgentTree", "Control", "Interrupted", "Signal"]


class Signal(Enum):
    """What the loop's own channel carries besides events while calls run concurrently."""

    DONE = "done"
    INTERRUPT = "interrupt"


class Interrupted(Exception):
    """Internal: the run was interrupted (through its stream, or by its time budget)."""


@dataclass(eq=False, slots=True)
class Control:
    """Lets ``AgentStream`` reach the loop from another task.

    The loop registers a cancel scope while it waits for something that may take long
    (a model's first event, a single tool call) and a channel while calls run
    concurrently; ``interrupt()`` cancels the one or signals the other. Between events of
    a streaming model turn it checks the flag, so an interrupt takes effect at the next
    event (a stalled stream is ended by the transport's idle timeout). ``deadline``, the
    end of the agent's time budget, bounds the same waits and is checked at the same
    points; passing it is an interrupt with stop reason ``budget``. ``steer()`` and
    ``follow_up()`` queue user messages; they never cancel anything.
    """

    interrupted: bool = False
    reason: StopReason = StopReason.cancelled
    scope: anyio.CancelScope | None = None
    dispatch: Callable[[Signal], None] | None = None
    deadline: float = math.inf  # on the anyio clock
    # Made on the first message: most runs are never steered, and a deque is 600 bytes
    # held by every waiting sub-agent of a fan-out.
    steering: deque[Message] | None = None
    follow_ups: deque[Message] | None = None
    tree: AgentTree | None = None
    # What background sub-agents that finished have to say, taken with the steering
    # (at the next turn), so one collected meanwhile (agents wait) is not announced.
    announcements: Callable[[], Message | None] | None = None
    watchdog: _Watchdog | None = None
    scope_class: type[anyio.CancelScope] | None = None  # the event loop's (see _Interruptible)
    # What the run has produced, kept by the loop for its stream's reader: the text of
    # the model's last turn so far, and the run's end once the loop yields it.
    final_text: str = ""
    session_end: SessionEndEvent | None = None

    def interrupt(self, reason: StopReason = StopReason.cancelled) -> None:
        """Stop the run: cancel what it waits for; the loop ends with ``reason``."""
        if not self.interrupted:
            self.reason = reason
        self.interrupted = True
        if self.scope is not None:
            self.scope.cancel()
        if self.dispatch is not None:
            self.dispatch(Signal.INTERRUPT)

    def stopped(self) -> bool:
        """Whether the run must stop: interrupted, or (then interrupted with stop reason
        ``budget``) past the deadline."""
        past = self.deadline != math.inf and anyio.current_time() >= self.deadline
        if past and not self.interrupted:
            self.interrupt(StopReason.budget)
        return self.interrupted

    def interruptible(self, limit: float | None = None) -> _Interruptible:
        """A cancel scope around one long wait (a model's first event, a lone tool call)
        that ``interrupt()`` and the time budget (``deadline``) cancel, as does ``limit``
        seconds from now (a tool call's own time limit: one scope serves both)."""
        return _Interruptible(self, limit, True)

    def limited(self, limit: float | None) -> _Interruptible:
        """A cancel scope that only ``limit`` seconds from now cancels: one of several
        calls running at once (their task group answers interrupts and the budget)."""
        return _Interruptible(self, limit, False)

    def close(self) -> None:
        """The run ended: drop its watchdog timer, if one is armed."""
        if self.watchdog is not None:
            self.watchdog.close()
            self.watchdog = None

    def set_dispatch(self, send: Callable[[Signal], None] | None) -> None:
        """Register (or clear, with ``None``) the channel of concurrent calls."""
        self.dispatch = send

    def steer(self, message: str | Message) -> None:
        """Queue a message for the model's next call (after the tools in flight end)."""
        if self.steering is None:
            self.steering = deque()
        self.steering.append(_as_user(message))

    def follow_up(self, message: str | Message) -> None:
        """Queue a message delivered when the agent would stop with ``end_turn``."""
        if self.follow_ups is None:
            self.follow_ups = deque()
        self.follow_ups.append(_as_user(message))

    def take_steering(self) -> list[Message]:
        """Every queued steering message, oldest first (then the announcement of the
        background sub-agents that finished, if any); the queue is left empty."""
        announced = self.announcements() if self.announcements is not None else None
        if not self.steering:
            return [] if announced is None else [announced]
        taken = list(self.steering)
        self.steering.clear()
        return taken if announced is None else [*taken, announced]


@dataclass(eq=False, slots=True)
class AgentTree:
    """The controls of the agents running in one run, by path (``orchestrator/dev#1``).

    ``quiet`` says nobody reads the events of the run's sub-agents: the reader of the
    root's stream only waits for its end (``AgentStream.get_final_text()``). Their
    events are then not forwarded up the tree (``on_event`` callbacks still get them).
    """

    running: dict[str, Control] = field(default_factory=dict)
    quiet: bool = False

    def find(self, path: str) -> Control:
        """The control of the running agent at ``path``. Raises ``LookupError`` naming the
        agents that are running when none runs there."""
        control = self.running.get(path)
        if control is None:
            names = ", ".join(sorted(repr(p) for p in self.running)) or "none"
            raise LookupError(f"no agent is running at path {path!r} (running: {names})")
        return control


_asyncio_scope: type[anyio.CancelScope] | None = None


def _scope_class() -> type[anyio.CancelScope]:
    """The cancel scope class of the running event loop's anyio backend: on asyncio,
    looked up once per process (every sub-agent's run has its own control, and would
    otherwise look it up for its first scope)."""
    global _asyncio_scope
    asyncio = sys.modules.get("asyncio")  # not loaded: not running on it either
    on_asyncio = asyncio is not None and asyncio.events._get_running_loop() is not None
    if on_asyncio and _asyncio_scope is not None:
        return _asyncio_scope
    found = type(anyio.CancelScope())
    if on_asyncio:
        _asyncio_scope = found
    return found


class _Interruptible:
    """``Control.interruptible()`` and ``Control.limited()``: a class, not a generator,
    as it is on the hot path.

    A ``limit`` nearer than the run's deadline is kept by the control's watchdog, not by
    the scope's own deadline: anyio arms and cancels one event-loop timer per scope with
    a deadline, and a default tool timeout would pay for that on every call."""

    __slots__ = ("_control", "_entry", "_interrupts", "_limit", "_scope")

    def __init__(self, control: Control, limit: float | None, interrupts: bool) -> None:
        self._control = control
        self._limit = limit
        self._interrupts = interrupts
        self._entry: _Entry | None = None

    def __enter__(self) -> anyio.CancelScope:
        control = self._control
        deadline = control.deadline if self._interrupts else math.inf
        # ``anyio.CancelScope(...)`` looks up the event loop's backend on every call (two
        # thirds of making a scope); a run's scopes are made from the backend's class
        # (``_scope_class``), with the same arguments anyio's backends make theirs with.
        make = control.scope_class
        if make is None:
            make = control.scope_class = _scope_class()
        scope = self._scope = make(deadline=deadline)
        scope.__enter__()
        if self._limit is not None:
            if control.watchdog is None:
                control.watchdog = _Watchdog.start()
            watchdog = control.watchdog
            if watchdog is None:  # not on asyncio: the scope keeps the limit itself
                scope.deadline = min(scope.deadline, anyio.current_time() + self._limit)
            elif (until := watchdog.time() + self._limit) < deadline:
                self._entry = watchdog.watch(scope, until)
        if self._interrupts:
            control.scope = scope
            if control.interrupted:
                scope.cancel()
        return scope

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        control = self._control
        if self._interrupts:
            control.scope = None
        if self._entry is not None and control.watchdog is not None:
            control.watchdog.unwatch(self._entry)
        return bool(self._scope.__exit__(exc_type, exc, tb))


_Entry: TypeAlias = list[Any]
"""A watched call: ``[until, number, scope]`` (the scope ``None`` once it is done)."""


class _Watchdog:
    """One lazily re-armed event-loop timer per run for the time limits of its calls.

    Calls, one at a time or many at once, register their scope and the time it is to be
    cancelled at in a heap; ending a call only marks its entry. The timer is set for the
    earliest entry and moved only when a call needs it earlier; when it fires, it cancels
    the calls past their limit and re-arms for the next one still running. So a run of
    calls with the same time limit arms about one timer per limit's length, not one per
    call. asyncio only (``start()`` is ``None`` elsewhere)."""

    __slots__ = ("_at", "_dead", "_handle", "_heap", "_loop", "_number")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._handle: asyncio.TimerHandle | None = None
        self._at = math.inf
        self._heap: list[_Entry] = []
        self._dead = 0  # entries of ended calls still in the heap
        self._number = 0

    @classmethod
    def start(cls) -> _Watchdog | None:
        """A watchdog on the running asyncio loop, or ``None`` on another event loop."""
        asyncio = sys.modules.get("asyncio")  # not loaded: not running on it either
        if asyncio is None:
            return None
        try:
            return cls(asyncio.get_running_loop())
        except RuntimeError:
            return None

    def watch(self, scope: anyio.CancelScope, until: float) -> _Entry:
        """Cancel ``scope`` at ``until`` (loop time) unless ``unwatch``ed before."""
        entry = [until, self._number, scope]
        self._number += 1
        heapq.heappush(self._heap, entry)
        if until < self._at:
            self._arm(until)
        return entry

    def unwatch(self, entry: _Entry) -> None:
        """The call of ``entry`` ended: forget it (its heap entry goes lazily)."""
        if entry[2] is None:  # already cancelled by the timer
            return
        entry[2] = None
        self._dead += 1
        if self._dead > 64 and 2 * self._dead > len(self._heap):
            self._heap = [e for e in self._heap if e[2] is not None]
            heapq.heapify(self._heap)
            self._dead = 0

    def time(self) -> float:
        """The event loop's clock (anyio's on asyncio)."""
        return self._loop.time()

    def close(self) -> None:
        """Stop the timer (the run is over)."""
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._at, self._heap, self._dead = None, math.inf, [], 0

    def _arm(self, until: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._at = self._loop.call_at(until, self._fire), until

    def _fire(self) -> None:
        self._handle, self._at = None, math.inf
        now, heap = self._loop.time(), self._heap
        while heap and (heap[0][2] is None or heap[0][0] <= now):
            entry = heapq.heappop(heap)
            scope, entry[2] = entry[2], None
            if scope is None:
                self._dead -= 1
            else:
                scope.cancel()
        if heap:
            self._arm(heap[0][0])


def _as_user(message: str | Message) -> Message:
    return Message.user(message) if isinstance(message, str) else message

"""Reaching a running loop from other tasks: interrupt, steer, follow up.

``Control`` is the one object an ``AgentStream`` shares with its loop. Besides the
interrupt flag it holds two queues of user messages: steering messages, delivered after
the current turn's tool calls end and before the next model call, and follow-ups,
delivered when the agent would otherwise stop. ``AgentTree`` maps the paths of the
agents running in one run to their controls, so the root's stream can steer any of them.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from types import TracebackType

import anyio

from swarm.messages import Message
from swarm.types import StopReason

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

    def interruptible(self) -> _Interruptible:
        """A cancel scope around one long wait (a model's first event, a lone tool call)
        that ``interrupt()`` and the time budget (``deadline``) cancel."""
        return _Interruptible(self)

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
        """Every queued steering message, oldest first; the queue is left empty."""
        if not self.steering:
            return []
        taken = list(self.steering)
        self.steering.clear()
        return taken


@dataclass(eq=False, slots=True)
class AgentTree:
    """The controls of the agents running in one run, by path (``orchestrator/dev#1``)."""

    running: dict[str, Control] = field(default_factory=dict)

    def find(self, path: str) -> Control:
        """The control of the running agent at ``path``. Raises ``LookupError`` naming the
        agents that are running when none runs there."""
        control = self.running.get(path)
        if control is None:
            names = ", ".join(sorted(repr(p) for p in self.running)) or "none"
            raise LookupError(f"no agent is running at path {path!r} (running: {names})")
        return control


class _Interruptible:
    """``Control.interruptible()``: a class, not a generator, as it is on the hot path."""

    __slots__ = ("_control", "_scope")

    def __init__(self, control: Control) -> None:
        self._control = control

    def __enter__(self) -> anyio.CancelScope:
        control = self._control
        scope = self._scope = anyio.CancelScope(deadline=control.deadline)
        scope.__enter__()
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
        self._control.scope = None
        return bool(self._scope.__exit__(exc_type, exc, tb))


def _as_user(message: str | Message) -> Message:
    return Message.user(message) if isinstance(message, str) else message

"""The run scope: what belongs to a whole run and travels down the tree of agents.

A run is a tree of agents. Its shared concerns (the agent path, where events go, and
whatever later layers attach: budgets, the audit log, the approver) live in a
``RunScope`` held in a context variable, which anyio copies into every task it starts.
A new run-wide concern is a new field here, never a new parameter through the loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeAlias

from swarm.background import SubAgents
from swarm.budget import Budget
from swarm.control import AgentTree
from swarm.events import StreamEvent
from swarm.messages import ToolResultBlock

if TYPE_CHECKING:  # the sandbox package loads with the first tool that starts processes
    from contextlib import AbstractAsyncContextManager

    from swarm.sandbox.base import Overlay
    from swarm.sandbox.egress import Egress
    from swarm.tools import Tool

__all__ = [
    "AgentNumbers",
    "ApprovalDecision",
    "ApprovalRequest",
    "Approver",
    "CallCapture",
    "OverlayCapture",
    "CallObserver",
    "CallRecord",
    "RunScope",
    "current_call",
    "current_scope",
    "emit",
    "role_of",
    "use_call",
    "use_scope",
]


@dataclass(slots=True)
class CallRecord:
    """One tool call as the run sees it, from the model's request to its result.

    The loop fills it in; a guard may annotate it (``current_call()``) with the policy and
    rule that decided, so observers such as the audit log can say why a call was allowed,
    and, for a tool that starts processes, with the sandbox that will confine them
    (``sandbox``, one line; the settings are bound to the tool, see
    ``swarm.sandbox.select.ToolSandbox``).
    ``decision`` is ``allow``, ``deny`` (a guard refused) or ``invalid`` (unknown tool,
    arguments that do not validate or parse). ``audit_hash`` is the hash of the audit
    record last written for the call, when an audit log observes the run. ``after``
    names the after-call hooks that replaced the result; ``saved_output`` is the file a
    too-large result was saved to. ``protect`` are the ``protect:`` globs of the policies
    in force for the call (noted by ``swarm.guards.protect.ProtectGuard``); ``protected``
    says what a command did to protected paths that was undone after it.
    ``network_ceiling`` are the network allow-lists of the policies of the roles above
    the caller (noted by ``swarm.guards.ceiling.CeilingGuard``), which narrow its own
    (``ToolSandbox.in_force``): they depend on where the calling agent is in the tree,
    which the role's tools, shared by every place the role is reached, do not know.
    ``approval`` is the receipt of a person's (or an approver's) answer to an ``ask``
    about the call: who answered, when, through what, and the arguments as approved.
    ``overlay`` is set by the run's capture for a call whose command is to run over a
    workspace overlay (see ``OverlayCapture``).
    """

    call_id: str
    tool: str
    path: str
    input: dict[str, Any]
    arguments: dict[str, Any] | None = None
    decision: Literal["allow", "deny", "invalid"] | None = None
    guard: str | None = None
    rule: str | None = None
    policy: str | None = None
    policy_hash: str | None = None
    reason: str | None = None
    sandbox: str | None = None
    audit_hash: str | None = None
    after: tuple[str, ...] = ()
    saved_output: str | None = None
    protect: tuple[str, ...] | None = None
    protected: tuple[str, ...] = ()
    network_ceiling: Egress | None = None
    approval: dict[str, Any] | None = None
    overlay: OverlayCapture | None = None


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What an approver is asked: the call, who makes it, and why it needs asking."""

    tool: str
    arguments: Mapping[str, Any]
    path: str
    call_id: str | None
    reason: str
    guard: str
    rule: str | None = None
    policy: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """An approver's answer. ``arguments`` (when approved) replaces the call's arguments.

    ``who`` answered, ``via`` what (``terminal``, ``cli``, ``mcp``, ``python``, ...) and
    ``at`` what time (ISO 8601) go into the receipt in the audit log; empty, the receipt
    names the approver itself and the time the answer came.
    """

    approved: bool
    reason: str = ""
    arguments: dict[str, Any] | None = field(default=None)
    who: str = ""
    via: str = ""
    at: str = ""

    @classmethod
    def approve(
        cls,
        arguments: dict[str, Any] | None = None,
        *,
        reason: str = "",
        who: str = "",
        via: str = "",
    ) -> Self:
        """Approve the call, optionally with changed arguments."""
        return cls(True, reason, arguments, who, via)

    @classmethod
    def deny(cls, reason: str = "", *, who: str = "", via: str = "") -> Self:
        """Refuse the call; ``reason`` is shown to the model."""
        return cls(False, reason, None, who, via)


Approver: TypeAlias = Callable[[ApprovalRequest], Awaitable[ApprovalDecision | bool]]
"""An async callable answering approval requests (``True``/``False`` or a decision).

It may be called from several agents at once; an interactive approver asks one question
at a time itself.
"""


class CallObserver(Protocol):
    """Sees every tool call of a run: its decision before the handler runs, and its end.

    ``on_decision`` is awaited before the handler starts, so a record written there is on
    disk even if the process dies mid-call. An observer that raises denies the call
    (fail closed) at decision time; at finish time its error is reported on the result.
    """

    async def on_decision(self, call: CallRecord) -> None: ...

    async def on_finish(
        self, call: CallRecord, result: ToolResultBlock, duration: float
    ) -> None: ...


class CallCapture(Protocol):
    """Keeps what a call that can write changes, so it can be shown and undone
    (``swarm.undo.UndoCapture`` is one).

    ``admit`` is awaited once the guards allowed the call: it raises ``GuardError`` to
    deny it (its pre-images would not fit the run's budget). The handler then runs
    inside ``capturing``, which keeps the pre-images before and records the changes
    after, also when the call fails or is cancelled.
    """

    async def admit(self, call: CallRecord, tool: Tool[Any], arguments: dict[str, Any]) -> None: ...

    def capturing(
        self, call: CallRecord, tool: Tool[Any], arguments: dict[str, Any]
    ) -> AbstractAsyncContextManager[None]: ...


class OverlayCapture(Protocol):
    """How a captured call's command changes the workspace: the tool that launches it
    mounts ``overlay`` over the workspace (a tier whose ``overlays`` is true), so its
    changes land in the overlay's upper directory; once the command has ended,
    ``apply`` moves them into the workspace, keeping the pre-image of every path they
    replace (synchronous, for a worker thread). ``apply`` returns why the changes were
    dropped instead (their pre-images would not fit the run's undo budget), else "";
    it runs once, later calls return the first answer. A tool that finds it cannot
    mount the overlay must not start anything."""

    @property
    def overlay(self) -> Overlay: ...

    def apply(self) -> str: ...


@dataclass(eq=False, slots=True)
class AgentNumbers:
    """Numbers the sub-agents of one run: the ``#N`` of ``orchestrator/developer#2`` counts
    per calling agent and role, so no path names two sub-agents."""

    last: dict[tuple[str, str], int] = field(default_factory=dict)

    def take(self, parent: str, role: str) -> int:
        """The next number for a sub-agent of ``role`` started by the agent at ``parent``."""
        number = self.last[parent, role] = self.last.get((parent, role), 0) + 1
        return number

    def continue_after(self, paths: Iterable[str]) -> None:
        """Number on after ``paths`` (the agents of a resumed run's earlier sessions)."""
        for path in paths:
            parent, _, name = path.rpartition("/")
            role, sep, number = name.rpartition("#")
            if sep and number.isdigit():
                key = (parent, role)
                self.last[key] = max(self.last.get(key, 0), int(number))


@dataclass(frozen=True, slots=True)
class RunScope:
    """What the running agent shares with the run.

    ``path`` names the agent in the tree (``orchestrator/architect#2``) and ``run_id`` the
    whole run; ``sink`` receives
    events that code outside the loop's own flow produces (tool progress, compaction,
    forwarded sub-agent events) and delivers them to the agent's stream; ``observers``
    see every tool call (the audit log is one); ``approver`` answers guards' ``ask``
    decisions (``None``: nobody to ask, so ``ask`` denies); ``budget`` is this agent's
    node in the run's budget tree; ``numbers`` numbers the run's sub-agents (shared by
    the whole tree); ``output_dir`` is where tool outputs too large for the model
    are saved; ``agents`` maps the paths of the run's running agents to their controls
    (for steering), shared by the whole tree; ``subagents`` holds the sub-agents this
    agent's run started (background ones, finished ones to continue), when its agent
    has the ``agents`` tool; ``restore_subagents`` (a resumed run's) puts the background
    sub-agents that were running when it stopped back into the first ``subagents``;
    ``capture`` keeps what each call that can write changes (``None``: nothing kept).
    """

    path: str = ""
    run_id: str = ""
    sink: Callable[[StreamEvent], None] | None = None
    observers: tuple[CallObserver, ...] = ()
    approver: Approver | None = None
    budget: Budget | None = None
    numbers: AgentNumbers = field(default_factory=AgentNumbers)
    output_dir: Path | None = None
    agents: AgentTree | None = None
    subagents: SubAgents | None = None
    restore_subagents: Callable[[SubAgents, RunScope], None] | None = None
    capture: CallCapture | None = None

    def child(self, **changes: Any) -> RunScope:
        """A copy of this scope with ``changes``; what the fields point to is shared.

        Built field by field rather than with ``dataclasses.replace`` (three times
        faster): every sub-agent run makes two of these. A name that is not a field
        raises ``TypeError``, as ``replace`` does.
        """
        get = changes.pop
        scope = RunScope(
            get("path", self.path),
            get("run_id", self.run_id),
            get("sink", self.sink),
            get("observers", self.observers),
            get("approver", self.approver),
            get("budget", self.budget),
            get("numbers", self.numbers),
            get("output_dir", self.output_dir),
            get("agents", self.agents),
            get("subagents", self.subagents),
            get("restore_subagents", self.restore_subagents),
            get("capture", self.capture),
        )
        if changes:
            raise TypeError(f"RunScope has no field {', '.join(map(repr, changes))}")
        return scope


def role_of(path: str) -> str:
    """The role in an agent path: ``orchestrator/architect#2`` is ``architect`` (a
    ``#`` not followed by a number is part of the name)."""
    name = path.rsplit("/", 1)[-1]
    head, sep, tail = name.rpartition("#")
    return head if sep and tail.isdigit() else name


_EMPTY = RunScope()
_call: ContextVar[CallRecord | None] = ContextVar("swarm_tool_call", default=None)
_scope: ContextVar[RunScope | None] = ContextVar("swarm_run_scope", default=None)


def current_scope() -> RunScope:
    """The scope of the agent running in this task (an empty one outside any run)."""
    return _scope.get() or _EMPTY


def emit(event: StreamEvent) -> None:
    """Deliver an event to the stream of the agent running in this task; dropped outside
    a run."""
    sink = current_scope().sink
    if sink is not None:
        sink(event)


class use_scope:  # noqa: N801 - used as a function: ``with use_scope(scope):``
    """Make ``scope`` current for the code inside the ``with`` block (a class, not a
    generator: the loop sets its scope around every await of a streamed turn)."""

    __slots__ = ("_scope", "_token")

    def __init__(self, scope: RunScope) -> None:
        self._scope = scope

    def __enter__(self) -> RunScope:
        self._token = _scope.set(self._scope)
        return self._scope

    def __exit__(self, *exc: object) -> None:
        _scope.reset(self._token)


def current_call() -> CallRecord | None:
    """The tool call being decided or run in this task, if any."""
    return _call.get()


@contextmanager
def use_call(call: CallRecord) -> Iterator[CallRecord]:
    """Make ``call`` the current tool call inside the ``with`` block."""
    token = _call.set(call)
    try:
        yield call
    finally:
        _call.reset(token)

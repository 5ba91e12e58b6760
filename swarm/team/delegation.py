"""Delegation: sub-agents as ordinary tools, and running a whole team.

``make_agent_tools`` turns agents into tools, so a delegation passes the caller's guards,
shows in its events and lands in the audit log like any other call. Each call runs the
sub-agent with a fresh context, in a child run scope: its own path
(``orchestrator/architect#2``), its own budget node under the caller's, and a sink that
forwards every event it produces up to the root stream as a ``SubAgentEvent``.
"""

from __future__ import annotations

import functools
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from swarm.agent import Agent, AgentStream
from swarm.budget import Budget, BudgetLimits
from swarm.context.base import ContextStore
from swarm.context.compaction import AutoCompactStore
from swarm.context.memory import MemoryContextStore
from swarm.control import Control
from swarm.errors import ConfigError, ToolError
from swarm.events import Error, SessionEndEvent, StreamEvent, SubAgentEvent
from swarm.loop import run_loop
from swarm.run import Approver, CallObserver, RunScope, current_scope, use_scope
from swarm.tools import Field, Tool, ToolOutput
from swarm.transports.base import CompletionTransport, model_name
from swarm.transports.options import for_tool_choice
from swarm.transports.resolver import ModelResolver
from swarm.types import StopReason

if TYPE_CHECKING:  # only build_team and run_team take these: a team's graph is networkx
    from swarm.team.graph import Team
    from swarm.team.spec import AgentSpec

__all__ = [
    "AgentContext",
    "RoleSettings",
    "build_team",
    "compacting_context",
    "continue_numbering",
    "make_agent_tools",
    "run_team",
    "team_scope",
]


class _Compaction(Protocol):
    @property
    def keep_recent(self) -> int: ...
    @property
    def threshold(self) -> float: ...
    @property
    def max_tokens(self) -> int | None: ...


class _Limits(Protocol):
    @property
    def tokens(self) -> int | None: ...
    @property
    def seconds(self) -> float | None: ...
    @property
    def delegations(self) -> int | None: ...
    @property
    def depth(self) -> int | None: ...


class RoleSettings(Protocol):
    """What delegation reads of a role (``AgentSpec`` has all of it)."""

    @property
    def model(self) -> str | None: ...
    @property
    def compaction(self) -> _Compaction | None: ...
    @property
    def budget(self) -> _Limits: ...


@dataclass(frozen=True, slots=True)
class AgentContext:
    """The ``context`` of an agent tool: what a call needs to run the sub-agent
    (``agent`` is the role's agent as each call runs it: its transport and name set)."""

    agent_name: str
    agent: Agent
    transport: CompletionTransport
    context_factory: Callable[[], ContextStore]
    on_event: Callable[[str, StreamEvent], None] | None
    compaction: _Compaction | None
    limits: BudgetLimits


def _limits(settings: RoleSettings | None) -> BudgetLimits:
    if settings is None:
        return BudgetLimits()
    b = settings.budget
    return BudgetLimits(b.tokens, b.seconds, b.delegations, b.depth)


def _transport_for(
    settings: RoleSettings | None,
    transport: CompletionTransport,
    resolve_model: Callable[[str], CompletionTransport] | None,
) -> CompletionTransport:
    """The role's transport: its own model when it names one, with its ``tool_choice``."""
    model = settings.model if settings is not None else None
    if model:
        transport = (resolve_model or ModelResolver(transport))(model)
    choice = getattr(settings, "tool_choice", None)
    return for_tool_choice(transport, choice) if choice else transport


def _failure(path: str, end: SessionEndEvent | None, error: str | None, text: str) -> str:
    reason = end.stop_reason.value if end is not None else "stopped"
    message = f"Sub-agent '{path}' did not finish ({reason})"
    if error:
        message += f": {error}"
    if text:
        message += f". Its last words: {text}"
    return message + "."


def make_agent_tools(
    agents: Mapping[str, tuple[str, Agent]],
    transport: CompletionTransport,
    context_factory: Callable[[], ContextStore] = MemoryContextStore,
    on_event: Callable[[str, StreamEvent], None] | None = None,
    agent_name_prefix: str = "",
    *,
    roles: Mapping[str, RoleSettings] | None = None,
    resolve_model: Callable[[str], CompletionTransport] | None = None,
) -> list[Tool[AgentContext]]:
    """Turn each agent into a tool named after it, taking a ``task`` (and a ``topic``).

    A call runs the agent on the task with a fresh context from ``context_factory``
    (wrapped in ``AutoCompactStore`` with the role's compaction settings), the role's own
    model when ``roles`` names one (through ``resolve_model``, by default a
    ``ModelResolver`` of ``transport``: aliases, providers, one transport per model),
    and the role's budget as a child of the caller's. The sub-agent's final text is the
    result; when it fails (its limits, errors, cancellation) the caller gets an error
    result saying what happened, and goes on. ``on_event(name, event)`` sees every event
    of every sub-agent run through these tools.
    """
    tools: list[Tool[AgentContext]] = []
    if resolve_model is None and roles is not None:
        resolve_model = ModelResolver(transport)
    for name, (description, prototype) in agents.items():
        settings = roles.get(name) if roles is not None else None
        role_transport = _transport_for(settings, transport, resolve_model)
        context = AgentContext(
            agent_name=name,
            agent=prototype.copy(transport=role_transport, name=name),
            transport=role_transport,
            context_factory=context_factory,
            on_event=on_event,
            compaction=settings.compaction if settings is not None else None,
            limits=_limits(settings),
        )
        tools.append(_agent_tool(agent_name_prefix + name, description, context))
    return tools


def _agent_tool(tool_name: str, description: str, ctx: AgentContext) -> Tool[AgentContext]:
    async def delegate(
        task: Annotated[
            str,
            Field(
                description="The full task for this agent: what to do, "
                "the context it needs, and what to report back."
            ),
        ],
        topic: Annotated[
            str, Field(description="A short label for this delegation.", default="")
        ] = "",
    ) -> ToolOutput:
        parent = current_scope()
        number = parent.numbers.take(parent.path, ctx.agent_name)
        path = (
            f"{parent.path}/{ctx.agent_name}#{number}"
            if parent.path
            else f"{ctx.agent_name}#{number}"
        )
        if parent.budget is not None:
            refused = parent.budget.count_delegation()
            if refused is not None:
                raise ToolError(f"Delegation refused: {refused}.")
            budget = parent.budget.child(path, ctx.limits, model=model_name(ctx.transport))
        else:
            budget = Budget(path, ctx.limits, model=model_name(ctx.transport))
        forward = parent.sink

        def sink(event: StreamEvent) -> None:
            if forward is not None:
                forward(event if isinstance(event, SubAgentEvent) else SubAgentEvent(path, event))
            if ctx.on_event is not None and not isinstance(event, SubAgentEvent):
                ctx.on_event(ctx.agent_name, event)

        scope = parent.child(path=path, budget=budget, sink=sink)  # asks go to the run's approver
        with use_scope(scope):  # a context factory may name the session after the path
            store = _context_for(ctx)
        end, error, text = await _run_child(ctx.agent, task, store, scope, sink)
        details: dict[str, Any] = {
            "path": path,
            "topic": topic,
            "stop_reason": end.stop_reason.value if end is not None else "cancelled",
            "usage": {
                "input_tokens": budget.total.input_tokens,
                "output_tokens": budget.total.output_tokens,
            },
        }
        if end is None or end.stop_reason not in (StopReason.end_turn, StopReason.max_tokens):
            raise ToolError(_failure(path, end, error, text))
        return ToolOutput(text, details=details)

    return Tool(
        name=tool_name,
        handler=delegate,
        description=(description or f"The {ctx.agent_name} agent.")
        + f"\n\nDelegate a task to the {ctx.agent_name} agent; its final answer comes back"
        " as the result.",
        context=ctx,
        streams=True,
        idempotent=False,  # a delegation is a whole sub-agent run: never repeated silently
        timeout=math.inf,  # a sub-agent is bounded by its own budget, not the tool timeout
    )


def _context_for(ctx: AgentContext) -> ContextStore:
    return compacting_context(ctx.context_factory(), ctx.transport, ctx.compaction)


def compacting_context(
    store: ContextStore, transport: CompletionTransport, compaction: _Compaction | None
) -> ContextStore:
    """``store`` wrapped in an ``AutoCompactStore`` with a role's compaction settings
    (the defaults when it has none)."""
    if compaction is None:
        return AutoCompactStore(store, transport)
    return AutoCompactStore(
        store,
        transport,
        keep_recent=compaction.keep_recent,
        max_tokens=compaction.max_tokens,
        threshold=compaction.threshold,
    )


async def _run_child(
    agent: Agent,
    task: str,
    store: ContextStore,
    scope: RunScope,
    sink: Callable[[StreamEvent], None],
) -> tuple[SessionEndEvent | None, str | None, str]:
    """Run a sub-agent to its end, forwarding its events; returns how it ended. Its time
    budget (in ``scope.budget``) is the loop's deadline, as for any agent."""
    end: SessionEndEvent | None = None
    error: str | None = None
    if type(agent).run_stream is not Agent.run_stream:  # a subclass runs its own way
        async with agent.run_stream(task, store, scope=scope) as stream:
            async for event in stream:
                if isinstance(event, Error):
                    error = event.message
                elif isinstance(event, SessionEndEvent):
                    end = event
                sink(event)
        return end, error, stream.final_text
    # The loop itself, without an AgentStream around it: one object and one coroutine
    # call per event fewer for every sub-agent; the final text is the SessionEndEvent's.
    async with aclosing(run_loop(agent, task, store, Control(), scope)) as events:
        async for event in events:
            if isinstance(event, Error):
                error = event.message
            elif isinstance(event, SessionEndEvent):
                end = event
            sink(event)
    return end, error, end.final_text if end is not None else ""


def continue_numbering(scope: RunScope, paths: Iterable[str]) -> None:
    """Make delegations in ``scope``'s run number on after ``paths`` (the agents of the
    run's earlier sessions, when it is resumed), so no path names two sub-agents."""
    scope.numbers.continue_after(paths)


def team_scope(
    entry: str,
    *,
    limits: BudgetLimits | None = None,
    observers: Sequence[CallObserver] = (),
    approver: Approver | None = None,
    run_id: str | None = None,
    model: str | None = None,
) -> RunScope:
    """The root scope of a team run: the entry role's path and budget, the run id."""
    return RunScope(
        path=entry,
        run_id=run_id or uuid.uuid4().hex[:12],
        observers=tuple(observers),
        approver=approver,
        budget=Budget(entry, limits or BudgetLimits(), model=model),
    )


def build_team(
    team: Team,
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]],
    transport: CompletionTransport,
    *,
    context_factory: Callable[[], ContextStore] = MemoryContextStore,
    resolve_model: Callable[[str], CompletionTransport] | None = None,
    on_event: Callable[[str, StreamEvent], None] | None = None,
    guard_tools: Callable[[AgentSpec, list[Tool[Any]]], list[Tool[Any]]] | None = None,
) -> dict[str, Agent]:
    """Build every role's agent: its toolbox tools plus agent tools for exactly its
    delegates, so sub-agents delegate further and no role can call a role it did not
    declare. ``guard_tools(spec, tools)`` may wrap a role's tools (its policy).

    Each role's ``model`` goes through ``resolve_model`` (default: a ``ModelResolver`` of
    ``transport`` with the team's ``models`` aliases). Raises ``ConfigError`` for unknown
    tool names and for role models no provider understands (naming the role's file).
    """
    import networkx as nx  # a Team has imported it already; make_agent_tools never needs it

    prototypes = team.agents(toolbox)
    if resolve_model is None:
        resolve_model = ModelResolver(transport, aliases=team.models)
    resolve_model = functools.cache(resolve_model)  # one transport (pool) per model
    problems = []
    for spec in team.specs.values():
        if spec.model:
            try:
                resolve_model(spec.model)
            except ConfigError as exc:
                problems.append(spec.error(exc.message, "model"))
    if problems:
        raise ConfigError.collect(problems)
    built: dict[str, Agent] = {}
    for name in reversed(list(nx.topological_sort(team.graph))):
        spec = team.specs[name]
        _, prototype = prototypes[name]
        delegates = {d: (team.specs[d].description, built[d]) for d in spec.delegates}
        agent_tools = make_agent_tools(
            delegates,
            transport,
            context_factory,
            on_event,
            roles={d: team.specs[d] for d in spec.delegates},
            resolve_model=resolve_model,
        )
        tools: list[Tool[Any]] = [*prototype.tools, *agent_tools]
        if guard_tools is not None:
            tools = guard_tools(spec, tools)
        built[name] = prototype.copy(
            tools=tools, transport=_transport_for(spec, transport, resolve_model)
        )
    return built


def run_team(
    team: Team,
    task: str,
    *,
    transport: CompletionTransport,
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]] | None = None,
    context: ContextStore | None = None,
    context_factory: Callable[[], ContextStore] = MemoryContextStore,
    resolve_model: Callable[[str], CompletionTransport] | None = None,
    guard_tools: Callable[[AgentSpec, list[Tool[Any]]], list[Tool[Any]]] | None = None,
    observers: Sequence[CallObserver] = (),
    approver: Approver | None = None,
    run_id: str | None = None,
) -> AgentStream:
    """Run ``task`` from the team's entry role; one stream shows the whole tree.

    Events of sub-agents arrive as ``SubAgentEvent`` tagged with their path; the final
    ``SessionEndEvent`` carries the usage of every agent and subtree (``usage_tree``).
    ``context`` holds the entry role's history (a fresh one by default, so pass a
    ``SQLiteContextStore`` to keep it).
    """
    agents = build_team(
        team,
        toolbox or {},
        transport,
        context_factory=context_factory,
        resolve_model=resolve_model,
        guard_tools=guard_tools,
    )
    spec = team.specs[team.entry]
    entry = agents[team.entry]
    scope = team_scope(
        team.entry,
        limits=_limits(spec),
        observers=observers,
        approver=approver,
        run_id=run_id,
        model=model_name(entry.transport),
    )
    if context is None:
        context = compacting_context(context_factory(), entry.transport, spec.compaction)
    return entry.run_stream(task, context, scope=scope)

"""Delegation: sub-agents as ordinary tools, and running a whole team.

``make_agent_tools`` turns agents into tools, so a delegation passes the caller's guards,
shows in its events and lands in the audit log like any other call. Each call runs the
sub-agent with a fresh context, in a child run scope: its own path
(``orchestrator/architect#2``), its own budget node under the caller's, and a sink that
forwards every event it produces up to the root stream as a ``SubAgentEvent``.

Its neighbours in ``swarm/team/``: ``spec`` (a role, ``AgentSpec``), ``loader`` (role
files), ``graph`` (``Team``: the validated delegation graph), ``children`` (a running
sub-agent's run), ``background`` (the ``agents`` tool for sub-agents left running),
``tool_entries`` (a role's ``tools:``). What it runs is ``swarm.loop`` (``Agent``); what a
run shares is ``swarm.scope``; scenario runs build teams from ``swarm.scenario``.
"""

from __future__ import annotations

import functools
import json
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from swarm.background import SubAgents
from swarm.budget import Budget, BudgetLimits
from swarm.context.base import ContextStore, MemoryContextStore
from swarm.context.compaction import AutoCompactStore
from swarm.errors import ConfigError, ToolError
from swarm.events import StreamEvent
from swarm.loop.agent import Agent, AgentStream
from swarm.loop.calls import Outbox
from swarm.models.registry import ModelRegistry, default_registry
from swarm.models.resolver import ModelResolver
from swarm.scope import Approver, CallObserver, RunScope, current_scope, role_of, use_scope
from swarm.team.background import agents_tool
from swarm.team.children import ChildRun, continue_child, delegate_to, restart
from swarm.team.prices import check_dollar_budgets, team_registry
from swarm.tools import Field, Tool, ToolOutput
from swarm.transports.base import CompletionTransport, model_name
from swarm.transports.options import for_cache, for_tool_choice

if TYPE_CHECKING:  # only build_team and run_team take these
    from swarm.team.graph import Team
    from swarm.team.spec import AgentSpec

__all__ = [
    "AgentContext",
    "RoleSettings",
    "build_team",
    "compacting_context",
    "continue_numbering",
    "make_agent_tools",
    "restore_background",
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
    @property
    def usd(self) -> float | None: ...


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
    return BudgetLimits(b.tokens, b.seconds, b.delegations, b.depth, b.usd)


def _transport_for(
    settings: RoleSettings | None,
    transport: CompletionTransport,
    resolve_model: Callable[[str], CompletionTransport] | None,
) -> CompletionTransport:
    """The role's transport: its own model when it names one, with its ``tool_choice``
    and its prompt caching (``cache``)."""
    model = settings.model if settings is not None else None
    if model:
        transport = (resolve_model or ModelResolver(transport))(model)
    cache = getattr(settings, "cache", None)
    if cache is not None:
        transport = for_cache(transport, cache)
    choice = getattr(settings, "tool_choice", None)
    return for_tool_choice(transport, choice) if choice else transport


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
    result; when it fails (its limits, errors, cancellation, an answer that never met
    its ``output`` schema: ``invalid_output``) the caller gets an error result saying what
    happened, and goes on. An agent with an ``output`` (``Agent(output=Model)``, a role's
    ``output:``) answers JSON: the text is the JSON, ``details["output"]`` the data.
    ``on_event(name, event)`` sees every event of every sub-agent run through these tools.
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
        background: Annotated[
            bool,
            Field(
                description="Start it and return at once with its path; check on it with"
                " the agents tool (its end is announced to you).",
                default=False,
            ),
        ] = False,
        continue_from: Annotated[
            str,
            Field(
                description="The path of a finished sub-agent of this role to continue"
                " with 'task' as a follow-up (it keeps its context).",
                default="",
            ),
        ] = "",
    ) -> ToolOutput:
        parent = current_scope()
        if continue_from:
            return await continue_child(
                parent.subagents,
                continue_from,
                task,
                role=ctx.agent_name,
                background=background,
            )
        run = _child_run(ctx, parent)
        return await delegate_to(
            run, task, topic, background=background, subagents=parent.subagents
        )

    return Tool(
        name=tool_name,
        handler=delegate,
        description=(description or f"The {ctx.agent_name} agent.")
        + f"\n\nDelegate a task to the {ctx.agent_name} agent; its final answer comes back"
        " as the result." + _typed(ctx.agent),
        context=ctx,
        streams=True,
        idempotent=False,  # a delegation is a whole sub-agent run: never repeated silently
        timeout=math.inf,  # a sub-agent is bounded by its own budget, not the tool timeout
    )


_NEEDS_AGENTS = ("background", "continue_from")


def _lean(tool: Tool[Any]) -> Tool[Any]:
    """A delegation tool whose schema offers only ``task`` and ``topic``."""
    schema = tool.input_schema
    properties = {k: v for k, v in schema["properties"].items() if k not in _NEEDS_AGENTS}
    return tool.copy(schema={**schema, "properties": properties})


def _typed(agent: Agent) -> str:
    """What a delegation tool says of a typed answer: it is JSON meeting this schema."""
    contract = agent.contract
    if contract is None:
        return ""
    schema = json.dumps(dict(contract.schema), separators=(",", ":"))
    return f" The answer is JSON meeting this schema: {schema}"


def _child_run(
    ctx: AgentContext,
    parent: RunScope,
    *,
    path: str | None = None,
    store: ContextStore | None = None,
) -> ChildRun:
    """A new sub-agent of ``parent``'s agent: its path, budget node (a delegation the
    budget counts; ``ToolError`` when it refuses), sink and fresh context. With ``path``
    and ``store``: a sub-agent of an earlier segment of the run, picked up again."""
    if path is None:
        number = parent.numbers.take(parent.path, ctx.agent_name)
        prefix = f"{parent.path}/" if parent.path else ""
        path = f"{prefix}{ctx.agent_name}#{number}"
        if parent.budget is not None and (refused := parent.budget.count_delegation()):
            raise ToolError(f"Delegation refused: {refused}.")
    model = model_name(ctx.transport)
    if parent.budget is not None:
        budget = parent.budget.child(path, ctx.limits, model=model)
    else:
        budget = Budget(path, ctx.limits, model=model)
    tree = parent.agents
    # Asks go to the run's approver, whatever the depth. The sub-agent's run takes this
    # scope as its own (its sink a new outbox, see ``Outbox``); the ``ChildRun`` passes
    # on what that run yields.
    scope = parent.child(path=path, budget=budget, sink=Outbox(), agents=tree, subagents=None)
    if store is None:
        with use_scope(scope):  # a context factory may name the session after the path
            store = _context_for(ctx)
    else:
        store = compacting_context(store, ctx.transport, ctx.compaction)
    return ChildRun(
        ctx.agent,
        store,
        scope,
        budget,
        ctx.agent_name,
        parent.sink,
        tree,
        ctx.on_event,
        parent.subagents,
    )


def restore_background(
    agent: Agent, stores: Mapping[str, ContextStore]
) -> Callable[[SubAgents, RunScope], None]:
    """What a resumed run gives its entry agent (``RunScope.restore_subagents``): the
    background sub-agents that were running when the run stopped (path → its stored
    context) start again in its ``SubAgents``, each from its last stored turn, under
    its old path; their ends are announced as any background sub-agent's are."""
    roles = {
        t.context.agent_name: t.context for t in agent.tools if isinstance(t.context, AgentContext)
    }

    def restore(subagents: SubAgents, parent: RunScope) -> None:
        for path, store in stores.items():
            ctx = roles.get(role_of(path))
            if ctx is not None:
                restart(subagents, _child_run(ctx, parent, path=path, store=store))

    return restore


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
    registry: ModelRegistry | None = None,
) -> RunScope:
    """The root scope of a team run: the entry role's path and budget, the run id;
    ``registry`` prices the run's model calls (``default_registry`` when ``None``)."""
    budget = Budget(
        entry, limits or BudgetLimits(), model=model, registry=registry or default_registry
    )
    return RunScope(
        path=entry,
        run_id=run_id or uuid.uuid4().hex[:12],
        observers=tuple(observers),
        approver=approver,
        budget=budget,
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
    delegates (and the ``agents`` tool, for background and continued sub-agents), so
    sub-agents delegate further and no role can call a role it did not declare. A role
    with skills gets its own ``load_skill`` and its other tools limited by the skill in
    use (``scoped_skill_tools``). ``guard_tools(spec, tools)`` may wrap a role's tools
    (its policy).

    Each role's ``model`` goes through ``resolve_model`` (default: a ``ModelResolver`` of
    ``transport`` with the team's ``models`` aliases). Raises ``ConfigError`` for unknown
    tool names and for role models no provider understands (naming the role's file).
    """
    from swarm.team.skills import scoped_skill_tools  # the team loader has imported it

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
    for name in reversed(team.delegations.topological_order()):
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
        if spec.delegates and spec.agents_tool:  # background sub-agents, going back
            tools.append(agents_tool(on_exit=spec.on_exit))
        elif spec.delegates:  # lean: the delegation tools without what needs `agents`
            tools = [*prototype.tools, *map(_lean, agent_tools)]
        tools = scoped_skill_tools(spec, tools)
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
    """Run ``task`` from the team's entry role; one stream shows the whole tree. Raises
    ``ConfigError`` before anything runs for a role under a dollar budget whose model has
    no price (``models:`` in ``team.yaml`` sets prices).

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
    registry = team_registry(team)
    check_dollar_budgets(team, agents, registry)
    scope = team_scope(
        team.entry,
        limits=_limits(spec),
        observers=observers,
        approver=approver,
        run_id=run_id,
        model=model_name(entry.transport),
        registry=registry,
    )
    if context is None:
        context = compacting_context(context_factory(), entry.transport, spec.compaction)
    return entry.run_stream(task, context, scope=scope)

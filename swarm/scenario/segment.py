"""Running one segment of a scenario run (the first run, or a resume): the team built
with its tools and guards, and the entry agent's stream followed into the record through
a ``RunRecorder`` (``swarm.record.recorder``), which writes the record's summary however
the segment ends."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from swarm._log import logger
from swarm.approvals import (
    Activity,
    HeldRun,
    OnAsk,
    RunApprover,
    continue_held,
    until_stuck,
)
from swarm.budget import BudgetLimits
from swarm.context.base import ContextStore
from swarm.context.sqlite import SQLiteContextStore
from swarm.events import StreamEvent
from swarm.guards.policy import Policy
from swarm.guards.protect import ProtectedPaths
from swarm.loop.agent import Agent, AgentStream
from swarm.loop.calls import call_tool
from swarm.messages import ToolUseBlock
from swarm.models.resolver import ModelResolver
from swarm.record.manifest import RunConfig
from swarm.record.outcome import RunOutcome
from swarm.record.record import RunRecord
from swarm.record.recorder import RunRecorder, Segment
from swarm.record.recover import unfinished_background
from swarm.scenario.policies import guard_tools, role_policies, run_policy
from swarm.scenario.sandboxing import protected_paths, run_controls
from swarm.scenario.spec import Scenario
from swarm.scenario.tooling import scenario_team, scenario_tools
from swarm.scope import Approver, CallObserver, RunScope, role_of
from swarm.team import DEFAULT_MAX_DEPTH, AgentSpec, Team
from swarm.team.commands import CommandTask
from swarm.team.crewai import fill
from swarm.team.delegation import (
    build_team,
    compacting_context,
    continue_numbering,
    restore_background,
    team_scope,
)
from swarm.team.prices import check_dollar_budgets, team_registry
from swarm.team.skills import LOAD_SKILL, SkillShelf
from swarm.toolbox import make_toolbox
from swarm.tools import Tool
from swarm.transports.base import CompletionTransport, model_name
from swarm.transports.options import for_cache
from swarm.undo import UndoCapture

__all__ = ["RunSetup", "command_message", "load_team", "run_segment"]

log = logger(__name__)


@dataclass(frozen=True, slots=True)
class RunSetup:
    """What every segment of a run shares: the scenario and its team, the model, the
    workspace, the record, the run's id and config, the entry agent's session, and each
    role's policy as checked before the run (``None``: loaded when the team is built),
    and what an ``ask`` with nobody to ask does (``on_ask``, ``ask_timeout``: ``None``,
    as the run's policy says)."""

    scenario: Scenario
    team: Team
    transport: CompletionTransport
    workspace: Path
    record: RunRecord
    run_id: str
    config: RunConfig
    root_session: str
    resolver: ModelResolver
    policies: Mapping[str, Policy] | None = None
    on_ask: OnAsk | None = None
    ask_timeout: float | None = None


def load_team(scenario: Scenario) -> Team:
    """The scenario's team with its depth limit, its tool timeout for roles that set
    none, its inputs filled, the entry's answer schema of this run, and its MCP servers.
    Raises ``ConfigError`` for bad team files."""
    max_depth = scenario.limits.max_depth
    team = Team.load(
        scenario.team,
        entry=scenario.entry,
        max_depth=DEFAULT_MAX_DEPTH if max_depth is None else max_depth,
    )
    timeout = scenario.limits.tool_timeout
    if timeout is not None:
        specs = [
            spec
            if spec.tool_timeout is not None
            else dataclasses.replace(spec, tool_timeout=timeout)
            for spec in team.specs.values()
        ]
        team = team.replaced(specs=specs)
    if scenario.inputs:
        filled = [
            dataclasses.replace(
                s,
                system=fill(s.system, scenario.inputs),
                description=fill(s.description, scenario.inputs),
            )
            for s in team.specs.values()
        ]
        team = team.replaced(specs=filled)
    if scenario.output is not None:  # this run's answer schema (a crew task's) for the entry
        entry = team.specs[team.entry]
        typed = dataclasses.replace(entry, output=scenario.output)
        team = team.replaced(specs=[typed if s is entry else s for s in team.specs.values()])
    return scenario_team(scenario, team)


async def run_segment(
    run: RunSetup,
    message: str | None,
    segment: Segment,
    approver: Approver | None,
    ask_user: Callable[[str], Awaitable[str]] | None,
    on_event: Callable[[StreamEvent], None] | None,
    observers: tuple[CallObserver, ...] = (),
) -> RunOutcome:
    """Run ``segment`` of ``run`` on ``message`` (``None``: go on from the history) and
    write its summary, also when it is cancelled (which is re-raised)."""
    protected = protected_paths(run.record.dir, run.workspace)
    policy = run_policy(run.scenario)
    run = dataclasses.replace(
        run,
        on_ask=run.on_ask or policy.on_ask,
        ask_timeout=run.ask_timeout if run.ask_timeout is not None else policy.ask_timeout,
    )
    policies = (
        dict(run.policies) if run.policies is not None else role_policies(run.scenario, run.team)
    )
    readonly = await anyio.to_thread.run_sync(
        run_controls, run.scenario, run.team, run.workspace, policies, policy
    )
    toolbox: dict[str, Tool[Any] | list[Tool[Any]]] = {
        **make_toolbox(
            run.workspace,
            ask=ask_user,
            protected=protected,
            readonly=readonly,
            evidence=run.record.dir / "protected",
        ),
        **scenario_tools(run.scenario),
    }
    if run.team.skills:
        toolbox[LOAD_SKILL] = SkillShelf(run.team.skills, run.workspace).tool()
    capture = await anyio.to_thread.run_sync(lambda: _capture(run, protected, policy.undo))
    try:
        if not run.team.mcp_servers:
            return await _run_with(
                run, message, segment, approver, on_event, observers, toolbox, readonly, capture
            )
        return await _with_servers(
            run, message, segment, approver, on_event, observers, toolbox, readonly, capture
        )
    finally:
        capture.close()


def _capture(run: RunSetup, protected: Sequence[Path], settings: Any) -> UndoCapture:
    """The run's undo capture, once what a crash cut short is recorded: ``.swarm`` (read
    only to every tool) and paths of the record inside the workspace are never captured."""
    skip = {".swarm"}
    root = os.path.realpath(run.workspace)
    for path in protected:
        real = os.path.realpath(path)
        if real.startswith(root + os.sep):
            skip.add(os.path.relpath(real, root).replace(os.sep, "/"))
    capture = UndoCapture(run.workspace, run.record.dir, settings=settings, skip=frozenset(skip))
    capture.recover()
    return capture


async def _with_servers(
    run: RunSetup,
    message: str | None,
    segment: Segment,
    approver: Approver | None,
    on_event: Callable[[StreamEvent], None] | None,
    observers: tuple[CallObserver, ...],
    toolbox: dict[str, Tool[Any] | list[Tool[Any]]],
    readonly: ProtectedPaths,
    capture: UndoCapture,
) -> RunOutcome:
    """Run the segment with the team's MCP servers started (and their tools added)."""
    policy = run_policy(run.scenario)
    policies = (
        dict(run.policies) if run.policies is not None else role_policies(run.scenario, run.team)
    )
    protected = protected_paths(run.record.dir, run.workspace)
    from swarm.mcp.client import McpConnections
    from swarm.mcp.tools import mcp_toolbox

    # servers serve every role: they get the widest set, every policy's protect globs
    widest = readonly.widened(g for p in (policy, *policies.values()) for g in p.protect)
    async with McpConnections(
        run.team.mcp_servers,
        workspace=run.workspace,
        hidden=protected,
        readonly=await anyio.to_thread.run_sync(widest.mounts),
        sandbox=policy.sandbox,
    ) as servers:
        toolbox.update(await mcp_toolbox(run.team.specs.values(), servers))
        return await _run_with(
            run, message, segment, approver, on_event, observers, toolbox, readonly, capture
        )


async def _run_with(
    run: RunSetup,
    message: str | None,
    segment: Segment,
    approver: Approver | None,
    on_event: Callable[[StreamEvent], None] | None,
    observers: tuple[CallObserver, ...],
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]],
    readonly: ProtectedPaths,
    capture: UndoCapture,
) -> RunOutcome:
    """Run one segment with ``toolbox`` (built-in tools, and the MCP servers' tools) and
    the run's protected paths ``readonly``; ``capture`` keeps what each call changes."""
    scenario, team = run.scenario, run.team
    with RunRecorder(
        run.record,
        segment,
        run_id=run.run_id,
        scenario=scenario,
        config=run.config,
        entry=team.entry,
        root_session=run.root_session,
        model=run.transport,
    ) as recorder:
        agents = _agents(run, toolbox, readonly, recorder)
        entry_spec = team.specs[team.entry]
        entry = agents[team.entry]
        if scenario.limits.max_iterations is not None:
            entry = entry.copy(max_iterations=scenario.limits.max_iterations)
        limits = _limits(scenario, entry_spec)
        registry = team_registry(team, scenario.prices)
        check_dollar_budgets(team, agents, registry, run_usd=limits.usd)
        root_store = recorder.entry_session()
        context = compacting_context(root_store, entry.transport, entry_spec.compaction)
        await recorder.begin(run.workspace, capture)
        approvals = RunApprover(
            recorder.approvals,
            person=approver,
            on_ask=run.on_ask or "deny",
            timeout=run.ask_timeout,
            on_held=recorder.held,
        )
        scope = team_scope(
            team.entry,
            limits=limits,
            observers=(*recorder.observers, *observers),
            approver=approvals,
            run_id=run.run_id,
            model=model_name(entry.transport),
            registry=registry,
        ).child(output_dir=run.record.dir / "outputs", capture=capture)  # kept with the run
        continue_numbering(scope, recorder.sessions)  # a resumed run's new sub-agents: new paths
        restored = await _background_to_restore(recorder, root_store, segment)
        if restored:
            scope = scope.child(restore_subagents=restore_background(entry, restored))
        if scenario.command is not None and segment.number == 1 and message is not None:
            message = await command_message(scenario.command, entry, scope, run.workspace)
        activity = Activity(frozenset(team.specs))  # delegation tools are named for roles

        def take(event: StreamEvent) -> None:
            activity.see(event, team.entry)
            recorder.take(event)
            if on_event is not None:
                on_event(event)

        followed = _Followed()
        try:
            if segment.held:
                held = _held_run(run, agents, recorder, scope, take)
                await continue_held(held, recorder.approvals)
            if not segment.run_model:  # the crash came after the last turn: nothing to run
                recorder.event_tally.finish_from(await root_store.get_history())
            else:
                stream = entry.run_stream(message, context, scope=scope)
                await followed.follow(stream, take, approvals, activity)
        finally:
            with anyio.CancelScope(shield=True):
                outcome = recorder.finish(
                    scope.budget, cut_text=followed.cut_text, awaiting_approval=followed.stuck
                )
                await context.close()
                for child in restored.values():
                    await child.close()
    return outcome


def _agents(
    run: RunSetup,
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]],
    readonly: ProtectedPaths,
    recorder: RunRecorder,
) -> dict[str, Agent]:
    """The team's agents, with the scenario's prompt caching (a role's own wins), each
    role's tools behind its guards, and every sub-agent's session in the record."""
    transport: CompletionTransport = run.transport
    resolver: Callable[[str], CompletionTransport] = run.resolver
    if run.scenario.cache is not None:
        cache = run.scenario.cache
        transport = for_cache(transport, cache)

        def resolver(spec: str) -> CompletionTransport:
            return for_cache(run.resolver(spec), cache)

    return build_team(
        run.team,
        toolbox,
        transport,
        context_factory=recorder.new_session,
        resolve_model=resolver,
        guard_tools=guard_tools(
            run.scenario,
            run.team,
            run.workspace,
            recorder.idempotent,
            policies=run.policies,
            protected=readonly,
        ),
    )


@dataclass(slots=True)
class _Followed:
    """The entry agent's stream, followed to its end: the stream once entered (its
    text so far is the answer of a run cut short), and whether it was stopped because
    every branch of the run waits on a person (``stuck``: the run ends, resumable)."""

    stream: AgentStream | None = None
    stuck: bool = False

    async def follow(
        self,
        stream: AgentStream,
        take: Callable[[StreamEvent], None],
        approvals: RunApprover,
        activity: Activity,
    ) -> None:
        """Hand each event of ``stream`` to ``take``; with calls held for nobody to
        answer now, stop once ``activity`` shows that nothing else goes on."""
        async with anyio.create_task_group() as group:

            async def stop_when_stuck() -> None:
                await until_stuck(activity, approvals)
                self.stuck = True
                group.cancel_scope.cancel()

            if approvals.on_ask == "hold" and approvals.person is None:
                group.start_soon(stop_when_stuck)
            async with stream as self.stream:
                async for event in stream:
                    take(event)
            group.cancel_scope.cancel()

    @property
    def cut_text(self) -> str:
        """The text of the model's last whole turn, as the stream held it."""
        return self.stream.final_text if self.stream is not None else ""


def _limits(scenario: Scenario, spec: AgentSpec) -> BudgetLimits:
    """The entry agent's budget: the scenario's limits, else its role's."""
    return BudgetLimits(
        _first(scenario.limits.tokens, spec.budget.tokens),
        _first(scenario.limits.seconds, spec.budget.seconds),
        _first(scenario.limits.delegations, spec.budget.delegations),
        spec.budget.depth,
        _first(scenario.limits.usd, spec.budget.usd),
    )


async def _background_to_restore(
    recorder: RunRecorder, root: SQLiteContextStore, segment: Segment
) -> dict[str, SQLiteContextStore]:
    """The stored contexts of the entry's background sub-agents still running when the
    run stopped (a resumed segment starts them again), by path."""
    if segment.number == 1 or not segment.run_model:
        return {}
    paths = unfinished_background(recorder.record, await root.get_history())
    sessions = recorder.sessions
    return {p: recorder.session(sessions[p]) for p in paths if p in sessions}


async def command_message(
    command: CommandTask, entry: Agent, scope: RunScope, workspace: Path
) -> str:
    """The command's task, its ``!`cmd``` lines run first as calls of the entry role's
    ``shell`` (guarded, sandboxed, audited); a refusal is said in the task's text and
    logged, so it is never silent."""
    tools = {t.name: t for t in entry.tools}
    outputs: list[str] = []
    for number, line in enumerate(command.shell_lines, start=1):
        if "shell" not in tools:
            said = f"(not run: the role '{entry.name}' has no shell tool)"
        else:
            use = ToolUseBlock(f"command_{number}", "shell", {"command": line})
            block = await call_tool(tools, use, scope)
            said = f"(refused: {block.text})" if block.is_error else block.text.rstrip()
        if said.startswith("("):
            log.warning(f"command /{command.command.name}: !`{line}` {said}")
        outputs.append(said)
    return await anyio.to_thread.run_sync(command.render, workspace, outputs)


def _held_run(
    run: RunSetup,
    agents: Mapping[str, Agent],
    recorder: RunRecorder,
    scope: RunScope,
    emit: Callable[[StreamEvent], None],
) -> HeldRun:
    """What going on from the run's answered held calls needs of this segment."""
    specs = run.team.specs

    def open_context(path: str, session: str) -> ContextStore:
        role = role_of(path)
        stored = recorder.session(session)
        return compacting_context(stored, agents[role].transport, specs[role].compaction)

    def limits(role: str) -> BudgetLimits:
        b = specs[role].budget
        return BudgetLimits(b.tokens, b.seconds, b.delegations, b.depth, b.usd)

    sessions = dict(recorder.sessions)
    return HeldRun(run.team.entry, agents, sessions, open_context, limits, scope, emit)


def _first(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback

"""Running one segment of a scenario run (the first run, or a resume): the team built
with its tools and guards, the entry agent's stream followed into the record, and the
record's summary written however the segment ends."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from swarm._log import logger
from swarm.approvals import (
    Activity,
    ApprovalStore,
    HeldRun,
    OnAsk,
    RunApprover,
    continue_held,
    until_stuck,
)
from swarm.audit import AuditLog, environment_secrets, read_key, redact
from swarm.budget import BudgetLimits
from swarm.context.base import ContextStore
from swarm.context.sqlite import SQLiteContextStore
from swarm.event_codec import event_to_dict
from swarm.events import StreamEvent
from swarm.guards.policy import Policy
from swarm.guards.protect import ProtectedPaths
from swarm.loop.agent import Agent, AgentStream
from swarm.loop.calls import call_tool
from swarm.messages import ToolUseBlock
from swarm.models.resolver import ModelResolver
from swarm.record.changes import attributed, snapshot, workspace_changes
from swarm.record.manifest import RunConfig
from swarm.record.outcome import CallTally, EventTally, RunOutcome, build_outcome
from swarm.record.pinning import ChangedFile
from swarm.record.record import Journal, RunRecord
from swarm.record.recover import unfinished_background
from swarm.record.summary import RunSummary
from swarm.scenario.policies import guard_tools, role_policies, run_policy
from swarm.scenario.sandboxing import protected_paths, run_controls
from swarm.scenario.script import ScriptedModel
from swarm.scenario.spec import Scenario
from swarm.scenario.tooling import scenario_team, scenario_tools
from swarm.scope import Approver, CallObserver, RunScope, current_scope, role_of
from swarm.team import DEFAULT_MAX_DEPTH, Team
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
from swarm.types import StopReason
from swarm.undo import UndoCapture

__all__ = ["RunSetup", "Segment", "command_message", "load_team", "run_segment"]

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


@dataclass(frozen=True, slots=True)
class Segment:
    """One stretch of a run: its number, the segments before it (as ``summary.json``
    lists them), the agents' sessions so far, the audit decisions a crash left
    unfinished, whether the model is asked at all (not when a crash came after the
    run's last turn), and the files that define the run and changed since it started,
    which the resume accepted (recorded in the audit log), and whether answered held
    calls are to be run first (``held``)."""

    number: int
    before: list[dict[str, Any]] = field(default_factory=list)
    sessions: dict[str, str] = field(default_factory=dict)
    interrupted: list[dict[str, Any]] = field(default_factory=list)
    run_model: bool = True
    accepted_changes: tuple[ChangedFile, ...] = ()
    held: bool = False


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
    scenario, team, record = run.scenario, run.team, run.record
    sessions: dict[str, str] = dict(segment.sessions)
    idempotent: dict[str, bool] = {}
    journal = Journal(record.journal, idempotent=idempotent)
    journal.segment(segment.number)
    journal.agent(team.entry, run.root_session)
    if isinstance(run.transport, ScriptedModel):
        run.transport.on_turn = lambda role, index, calls: journal.turn(
            current_scope().path, role, index, calls
        )

    def session_store() -> SQLiteContextStore:
        store = SQLiteContextStore(record.sessions)
        path = current_scope().path
        sessions[path] = store.session_id
        journal.agent(path, store.session_id)
        return store

    transport: CompletionTransport = run.transport
    resolver: Callable[[str], CompletionTransport] = run.resolver
    if scenario.cache is not None:  # the scenario's prompt caching; a role's own wins
        cache = scenario.cache
        transport = for_cache(transport, cache)

        def resolver(spec: str) -> CompletionTransport:
            return for_cache(run.resolver(spec), cache)

    agents = build_team(
        team,
        toolbox,
        transport,
        context_factory=session_store,
        resolve_model=resolver,
        guard_tools=guard_tools(
            scenario, team, run.workspace, idempotent, policies=run.policies, protected=readonly
        ),
    )
    entry_spec = team.specs[team.entry]
    entry = agents[team.entry]
    if scenario.limits.max_iterations is not None:
        entry = entry.copy(max_iterations=scenario.limits.max_iterations)
    tally = CallTally()
    limits = BudgetLimits(
        _first(scenario.limits.tokens, entry_spec.budget.tokens),
        _first(scenario.limits.seconds, entry_spec.budget.seconds),
        _first(scenario.limits.delegations, entry_spec.budget.delegations),
        entry_spec.budget.depth,
        _first(scenario.limits.usd, entry_spec.budget.usd),
    )
    registry = team_registry(team, scenario.prices)
    check_dollar_budgets(team, agents, registry, run_usd=limits.usd)
    root_store = SQLiteContextStore(record.sessions, run.root_session)
    sessions[team.entry] = root_store.session_id
    context = compacting_context(root_store, entry.transport, entry_spec.compaction)
    before = await anyio.to_thread.run_sync(snapshot, run.workspace)
    first_seq = capture.log.state.next_seq
    started = time.perf_counter()
    began = datetime.now(UTC).isoformat(timespec="milliseconds")
    final = EventTally()
    stream: AgentStream | None = None
    secrets = environment_secrets(os.environ)
    key = read_key(record.key) if record.key.exists() else None
    events_fd = os.open(record.events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with (
        AuditLog(record.audit, key=key, anchor=record.head, secrets=secrets) as audit,
        os.fdopen(events_fd, "w", encoding="utf-8") as log,
    ):
        for decision in segment.interrupted:
            await audit.record_interrupted(decision)
        if segment.accepted_changes:
            await audit.record_resume(run.run_id, [c.to_dict() for c in segment.accepted_changes])
        store = ApprovalStore(record.approvals_file)
        approvals = RunApprover(
            store,
            person=approver,
            on_ask=run.on_ask or "deny",
            timeout=run.ask_timeout,
            on_held=lambda r: journal.held(r.path, r.call_id, r.tool, dict(r.arguments)),
        )
        scope = team_scope(
            team.entry,
            limits=limits,
            observers=(journal, audit, tally, *observers),
            approver=approvals,
            run_id=run.run_id,
            model=model_name(entry.transport),
            registry=registry,
        ).child(output_dir=record.dir / "outputs", capture=capture)  # outputs kept with the run
        continue_numbering(scope, sessions)  # a resumed run's new sub-agents get new paths
        restored = await _background_to_restore(record, root_store, sessions, segment)
        if restored:
            scope = scope.child(restore_subagents=restore_background(entry, restored))
        if scenario.command is not None and segment.number == 1 and message is not None:
            message = await command_message(scenario.command, entry, scope, run.workspace)
        activity = Activity(frozenset(team.specs))  # delegation tools are named for roles

        def take(event: StreamEvent) -> None:
            activity.see(event, team.entry)
            final.see(event)
            log.write(json.dumps(_logged(event, secrets)) + "\n")
            if on_event is not None:
                on_event(event)

        held_stop = False
        try:
            if segment.held:
                await continue_held(_held_run(run, agents, sessions, scope, take, record), store)
            if not segment.run_model:  # the crash came after the last turn: nothing to run
                final.finish_from(await root_store.get_history())
            else:
                async with anyio.create_task_group() as group:

                    async def stop_when_stuck() -> None:
                        nonlocal held_stop
                        await until_stuck(activity, approvals)
                        held_stop = True  # every branch waits on a person: end, resumable
                        group.cancel_scope.cancel()

                    if approvals.on_ask == "hold" and approvals.person is None:
                        group.start_soon(stop_when_stuck)
                    async with entry.run_stream(message, context, scope=scope) as stream:
                        async for event in stream:
                            take(event)
                    group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                outcome = build_outcome(
                    scenario,
                    run_id=run.run_id,
                    record_dir=record.dir,
                    workspace=run.workspace,
                    final=final,
                    tally=tally,
                    budget=scope.budget,
                    duration=time.perf_counter() - started,
                    root_session=root_store.session_id,
                    sessions=sessions,
                    changes=attributed(
                        workspace_changes(before, snapshot(run.workspace)),
                        [c for c in capture.log.state.calls if c.seq >= first_seq],
                    ),
                    cut_text=stream.final_text if stream is not None else "",
                )
                if held_stop:
                    outcome = dataclasses.replace(outcome, stop_reason=StopReason.awaiting_approval)
                record.write_changes(outcome.changes.to_dict())
                summary = RunSummary(
                    outcome,
                    segment.number,
                    began,
                    run.config,
                    record.audit,
                    audit.anchor_head,
                    before=segment.before,
                    script_used=dict(run.transport.used)
                    if isinstance(run.transport, ScriptedModel)
                    else None,
                )
                written = summary.to_dict()
                written["approvals"] = [p.to_dict() for p in store.requests()]
                record.write_summary(written)
                journal.close()
                await context.close()
                for child in restored.values():
                    await child.close()
    return outcome


async def _background_to_restore(
    record: RunRecord, root: SQLiteContextStore, sessions: Mapping[str, str], segment: Segment
) -> dict[str, SQLiteContextStore]:
    """The stored contexts of the entry's background sub-agents still running when the
    run stopped (a resumed segment starts them again), by path."""
    if segment.number == 1 or not segment.run_model:
        return {}
    paths = unfinished_background(record, await root.get_history())
    return {p: SQLiteContextStore(record.sessions, sessions[p]) for p in paths if p in sessions}


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
    sessions: Mapping[str, str],
    scope: RunScope,
    emit: Callable[[StreamEvent], None],
    record: RunRecord,
) -> HeldRun:
    """What going on from the run's answered held calls needs of this segment."""
    specs = run.team.specs

    def open_context(path: str, session: str) -> ContextStore:
        role = role_of(path)
        stored = SQLiteContextStore(record.sessions, session)
        return compacting_context(stored, agents[role].transport, specs[role].compaction)

    def limits(role: str) -> BudgetLimits:
        b = specs[role].budget
        return BudgetLimits(b.tokens, b.seconds, b.delegations, b.depth, b.usd)

    return HeldRun(run.team.entry, agents, dict(sessions), open_context, limits, scope, emit)


def _first(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback


def _logged(event: StreamEvent, secrets: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = redact(event_to_dict(event), secrets=secrets)
    data["time"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    return data

"""Running a scenario: build the team, guard it, run it, and keep a record of the run.

Every run writes one directory, outside the workspace (``swarm.scenario.record``): a
manifest before the first model call, the keyed audit log and its anchored head, the
events (secrets redacted), the sessions, a crash journal, and ``summary.json`` at the end of
each segment. ``resume_run`` continues a run from its record after Ctrl-C or after a crash
at any instant, as a new segment.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from swarm.audit import (
    AuditLog,
    create_key,
    environment_secrets,
    read_head,
    read_key,
    redact,
    verify_log,
)
from swarm.budget import BudgetLimits
from swarm.context.sqlite import SQLiteContextStore
from swarm.errors import ConfigError
from swarm.event_codec import event_to_dict
from swarm.events import (
    StreamEvent,
)
from swarm.guards.policy import Policy, apply_policy, load_policy
from swarm.run import CallObserver, current_scope
from swarm.scenario.changes import snapshot, workspace_changes
from swarm.scenario.models import role_models, role_models_record
from swarm.scenario.outcome import CallTally, EventTally, RunOutcome, build_outcome
from swarm.scenario.record import (
    Journal,
    RunRecord,
    default_runs_dir,
    file_hash,
    new_run_id,
    read_journal,
)
from swarm.scenario.recover import (
    crashed_segments,
    interrupted_calls,
    repair_sessions,
    segment_totals,
    unstored_turns,
)
from swarm.scenario.sandboxing import protected_paths, sandbox_line
from swarm.scenario.script import ScriptedModel
from swarm.scenario.spec import Scenario, Script, load_scenario
from swarm.scenario.tooling import scenario_team, scenario_tools
from swarm.team import DEFAULT_MAX_DEPTH, AgentSpec, Team
from swarm.team.delegation import (
    build_team,
    compacting_context,
    continue_numbering,
    team_scope,
)
from swarm.toolbox import make_toolbox
from swarm.tools import Tool
from swarm.transports.base import CompletionTransport
from swarm.transports.recording import RecordingTransport, ReplayTransport
from swarm.transports.resolver import ModelResolver
from swarm.transports.spec import transport_from_spec

__all__ = ["CallTally", "RunOutcome", "prepare_workspace", "resume_run", "run_scenario"]

NO_MODEL_HELP = (
    "no model is configured for this run. Either give the scenario a 'model:' (a provider"
    " spec such as 'openai:gpt-4.1-mini', or a 'script:' of model turns for an offline"
    " run), or pass --model SPEC, for example:\n"
    "  --model openai:gpt-4.1-mini        (needs OPENAI_API_KEY)\n"
    "  --model anthropic:claude-sonnet-4-5 (needs ANTHROPIC_API_KEY)\n"
    "  --model openai-compatible:http://127.0.0.1:11434/v1:qwen2.5\n"
    "  --model local                       (a small model on this machine; see the README)"
)


def default_workspace(scenario: Scenario) -> Path:
    return Path.cwd() / ".swarm" / "workspaces" / scenario.name


def prepare_workspace(scenario: Scenario, workspace: Path) -> None:
    """Create the workspace and write the scenario's seed ``files`` into it (confined).
    Raises ``ConfigError`` naming the workspace when it cannot be made or written."""
    if workspace.exists() and not workspace.is_dir():
        raise ConfigError("the workspace must be a directory, and this is a file", path=workspace)
    try:
        workspace.mkdir(parents=True, exist_ok=True)
        root = workspace.resolve()
        for name, text in scenario.files.items():
            target = (root / name).resolve()
            if not target.is_relative_to(root):
                raise scenario.error(f"'{name}' is outside the workspace", "files", name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"cannot use this as the workspace: {reason}", path=workspace) from None


def resolve_transport(
    scenario: Scenario, model: str | CompletionTransport | None
) -> CompletionTransport:
    """The transport a run uses: ``model`` when given, else the scenario's."""
    if model is not None and not isinstance(model, str):
        return model
    spec = model if model is not None else scenario.model
    if spec is None:
        raise ConfigError(NO_MODEL_HELP, path=scenario.path, field="model")
    if isinstance(spec, Script):
        return ScriptedModel(spec.script, summary=spec.summary)
    return transport_from_spec(spec)


def _guard_tools(
    scenario: Scenario, team: Team, workspace: Path, idempotent: dict[str, bool]
) -> Callable[[AgentSpec, list[Tool[Any]]], list[Tool[Any]]]:
    """Each role's tools behind its policy (its own, else the scenario's, else default),
    with the ``deny`` rules of the roles above it as a ceiling; notes in ``idempotent``
    which tools are safe to repeat."""
    loaded: dict[tuple[str, str], Policy] = {}
    by_role: dict[str, Policy] = {}
    for spec in team.specs.values():
        ref = spec.policy or scenario.policy or "default"
        base = (
            spec.source.parent
            if spec.policy and spec.source
            else scenario.path.parent
            if scenario.path
            else None
        )
        key = (ref, str(base))
        if key not in loaded:
            loaded[key] = load_policy(ref, relative_to=base)
        by_role[spec.name] = loaded[key]

    def guard(spec: AgentSpec, tools: list[Tool[Any]]) -> list[Tool[Any]]:
        idempotent.update((t.name, t.idempotent) for t in tools)
        return apply_policy(
            tools, by_role[spec.name], role=spec.name, workspace=workspace, ceiling=by_role
        )

    return guard


async def run_scenario(
    scenario: Scenario,
    *,
    model: str | CompletionTransport | None = None,
    workspace: Path | None = None,
    runs_dir: Path | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    approver: Any = None,
    ask_user: Callable[[str], Awaitable[str]] | None = None,
    on_event: Callable[[StreamEvent], None] | None = None,
    run_id: str | None = None,
    observers: tuple[CallObserver, ...] = (),
) -> RunOutcome:
    """Run ``scenario`` to its end and write its record; returns the outcome.

    ``on_event`` sees every event as it comes; ``observers`` see every tool call after the
    audit log did (for example ``swarm.otel.OtelObserver``).

    Raises ``ConfigError`` (before anything runs) for bad files, an unknown model spec,
    a provider whose API key is not set, no model at all, a ``replay`` cassette that is
    missing or not one, and a ``record`` cassette that cannot be written. Cancellation
    (Ctrl-C) stops every agent, writes the record with ``interrupted: true``, and
    re-raises.
    """
    team = _load_team(scenario)
    scenario_tools(scenario)  # bad references are refused before anything is written
    if replay is not None:
        cassette = ReplayTransport(replay)
        await anyio.to_thread.run_sync(cassette.load)  # a bad file is found before the run
        transport: CompletionTransport = cassette
    else:
        transport = resolve_transport(scenario, model)
    if record is not None:
        recording = RecordingTransport(transport, record)
        recording.check()
        transport = recording
    run_spec = model if isinstance(model, str) else scenario.model if model is None else None
    resolver = role_models(
        scenario,
        team,
        transport,
        run_spec=run_spec if isinstance(run_spec, str) else None,
        record=record,
        owns_transport=replay is None and isinstance(run_spec, str),  # built here from it
    )
    workspace = (workspace or scenario.workspace or default_workspace(scenario)).resolve()
    runs_dir = (runs_dir or scenario.runs_dir or default_runs_dir()).absolute()
    RunRecord.check_place(runs_dir)  # before the workspace is made and seeded
    prepare_workspace(scenario, workspace)
    run_id = run_id or new_run_id()
    record_dir = RunRecord.create(runs_dir, run_id)
    create_key(record_dir.key)
    config = {
        "scenario_path": str(scenario.path.resolve()) if scenario.path else None,
        "name": scenario.name,
        "task": scenario.task,
        "team": str(scenario.team.resolve()),
        "entry": team.entry,
        "policy": scenario.policy,
        "model": model if isinstance(model, str) else None,
        "sandbox": sandbox_line(scenario),
    }
    root_session = uuid.uuid4().hex
    record_dir.write_manifest(
        _manifest(scenario, team, transport, model, workspace, run_id, root_session, config)
        | {"key": str(record_dir.key), "role_models": role_models_record(team, resolver)}
    )
    run = _Run(
        scenario, team, transport, workspace, record_dir, run_id, config, root_session, resolver
    )
    try:
        return await _execute(
            run, scenario.task, _Segment(1), approver, ask_user, on_event, observers
        )
    finally:
        with anyio.CancelScope(shield=True):
            await resolver.aclose()


def _manifest(
    scenario: Scenario,
    team: Team,
    transport: CompletionTransport,
    model: str | CompletionTransport | None,
    workspace: Path,
    run_id: str,
    root_session: str,
    config: dict[str, Any],
) -> dict[str, Any]:
    """What the run is, written before its first model call."""
    policy = scenario.policy or "default"
    base = scenario.path.parent if scenario.path else None
    try:
        policy_hash: str | None = "sha256:" + load_policy(policy, relative_to=base).hash
    except ConfigError:
        policy_hash = None
    spec = model if isinstance(model, str) else scenario.model
    return {
        "format": 1,
        "run_id": run_id,
        "started": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "scenario": {
            "name": scenario.name,
            "path": config["scenario_path"],
            "hash": file_hash(scenario.path),
        },
        "team": {"dir": config["team"], "entry": team.entry, "hash": file_hash(scenario.team)},
        "policy": {"ref": policy, "hash": policy_hash},
        "model": spec if isinstance(spec, str) else getattr(transport, "model", None),
        "workspace": str(workspace),
        "root_session": root_session,
        "config": config,
    }


async def resume_run(
    record_dir: Path,
    message: str | None = None,
    *,
    model: str | CompletionTransport | None = None,
    approver: Any = None,
    ask_user: Callable[[str], Awaitable[str]] | None = None,
    on_event: Callable[[StreamEvent], None] | None = None,
) -> RunOutcome:
    """Continue a stopped run (Ctrl-C, or a crash at any instant) from its record, as a
    new segment of the same run.

    With no ``message`` the entry agent picks up where it stopped: each call a crash cut
    short gets a result saying so (and is not re-run), and is recorded ``interrupted`` in
    the audit log. Raises ``ConfigError`` when the record cannot be read, when its audit
    log does not verify, or when the run had finished and no message is given.
    """
    record = RunRecord(record_dir)
    summary = record.read_summary()
    legacy = not record.manifest.exists() and summary is not None and "config" in summary
    # a record from before manifests keeps what resuming needs in its summary
    manifest = dict(summary) if legacy and summary is not None else record.read_manifest()
    try:
        config = manifest["config"]
        root_session = manifest["root_session"]
        workspace = Path(manifest["workspace"])
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"the run record lacks {exc}", path=record.manifest) from None
    _check_audit(record)
    if config.get("scenario_path"):
        scenario = load_scenario(config["scenario_path"])
    else:
        scenario = Scenario(
            name=config["name"],
            task=config["task"],
            team=Path(config["team"]),
            entry=config.get("entry"),
            policy=config.get("policy"),
        )
    team = _load_team(scenario)
    transport = resolve_transport(scenario, model or config.get("model"))
    run_spec = model if model is not None else config.get("model") or scenario.model
    resolver = role_models(
        scenario,
        team,
        transport,
        run_spec=run_spec if isinstance(run_spec, str) else None,
        owns_transport=isinstance(run_spec, str),
    )
    state = read_journal(record.journal)
    if isinstance(transport, ScriptedModel):
        used = dict((summary or {}).get("script_used") or {})
        for role, taken in state.turns.items():
            used[role] = max(int(used.get(role, 0)), taken)
        transport.used.update(used)
    await repair_sessions(record, state)
    if isinstance(transport, ScriptedModel):
        for role, index in await unstored_turns(record, state):
            transport.replay.setdefault(role, []).append(index)
    if not state.segments:  # killed before the first segment's start was journaled
        state.segments.append(datetime.fromisoformat(manifest["started"]).timestamp())
    async with SQLiteContextStore(record.sessions, root_session) as store:
        history = await store.get_history()
        tokens = (0, 0)
        for info in await store.list_sessions() if record.sessions.exists() else []:
            tokens = (tokens[0] + info.input_tokens, tokens[1] + info.output_tokens)
    finished = bool(history) and history[-1].role == "assistant" and not history[-1].tool_uses
    segments = crashed_segments(summary, state, tokens)
    complete = summary is not None and len(segments) >= len(state.segments)
    if message is None and finished and complete:
        raise ConfigError(
            "this run finished; give a message to continue the conversation",
            path=record.summary,
        )
    if not history and message is None:  # killed before the task was stored
        message = scenario.task
    segment = _Segment(
        len(segments) + 1,
        segments,
        dict(state.sessions) | dict((summary or {}).get("sessions") or {}),
        interrupted_calls(record),
        run_model=not (message is None and finished),
    )
    run = _Run(
        scenario,
        team,
        transport,
        workspace,
        record,
        manifest["run_id"],
        config,
        root_session,
        resolver,
    )
    try:
        return await _execute(run, message, segment, approver, ask_user, on_event)
    finally:
        with anyio.CancelScope(shield=True):
            await resolver.aclose()


def _check_audit(record: RunRecord) -> None:
    """Refuse to go on with a record whose audit log does not verify (a resumed run would
    otherwise anchor a tampered log)."""
    try:
        anchor = read_head(record.head) if record.head.exists() else None
        key = read_key(record.key) if record.key.exists() else None
        empty = not record.audit.exists() or record.audit.stat().st_size == 0
        if empty and (anchor is None or anchor.records == 0):
            return  # stopped before its first call
        report = verify_log(record.audit, key=key, anchor=anchor)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot check the audit log: {exc}", path=record.audit) from None
    if not report.ok:
        raise ConfigError(
            f"the audit log does not verify, so the run is not resumed: {report.problem}",
            path=record.audit,
        )


@dataclass(frozen=True, slots=True)
class _Run:
    scenario: Scenario
    team: Team
    transport: CompletionTransport
    workspace: Path
    record: RunRecord
    run_id: str
    config: dict[str, Any]
    root_session: str
    resolver: ModelResolver


@dataclass(frozen=True, slots=True)
class _Segment:
    """One stretch of a run: its number, the segments before it, the agents' sessions so
    far, the audit decisions a crash left unfinished, and whether the model is asked at all
    (not when a crash came after the run's last turn)."""

    number: int
    before: list[dict[str, Any]] = field(default_factory=list)
    sessions: dict[str, str] = field(default_factory=dict)
    interrupted: list[dict[str, Any]] = field(default_factory=list)
    run_model: bool = True


def _load_team(scenario: Scenario) -> Team:
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
    return scenario_team(scenario, team)


async def _execute(
    run: _Run,
    message: str | None,
    segment: _Segment,
    approver: Any,
    ask_user: Callable[[str], Awaitable[str]] | None,
    on_event: Callable[[StreamEvent], None] | None,
    observers: tuple[CallObserver, ...] = (),
) -> RunOutcome:
    protected = protected_paths(run.record.dir, run.workspace)
    toolbox: dict[str, Tool[Any] | list[Tool[Any]]] = {
        **make_toolbox(run.workspace, ask=ask_user, protected=protected),
        **scenario_tools(run.scenario),
    }
    if not run.team.mcp_servers:
        return await _execute_with(run, message, segment, approver, on_event, observers, toolbox)
    from swarm.mcp.client import McpConnections
    from swarm.mcp.tools import mcp_toolbox

    base = run.scenario.path.parent if run.scenario.path else None
    policy = load_policy(run.scenario.policy or "default", relative_to=base)
    async with McpConnections(
        run.team.mcp_servers, workspace=run.workspace, hidden=protected, sandbox=policy.sandbox
    ) as servers:
        toolbox.update(await mcp_toolbox(run.team.specs.values(), servers))
        return await _execute_with(run, message, segment, approver, on_event, observers, toolbox)


async def _execute_with(
    run: _Run,
    message: str | None,
    segment: _Segment,
    approver: Any,
    on_event: Callable[[StreamEvent], None] | None,
    observers: tuple[CallObserver, ...],
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]],
) -> RunOutcome:
    """Run one segment with ``toolbox`` (built-in tools, and the MCP servers' tools)."""
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

    agents = build_team(
        team,
        toolbox,
        run.transport,
        context_factory=session_store,
        resolve_model=run.resolver,
        guard_tools=_guard_tools(scenario, team, run.workspace, idempotent),
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
    )
    root_store = SQLiteContextStore(record.sessions, run.root_session)
    sessions[team.entry] = root_store.session_id
    context = compacting_context(root_store, entry.transport, entry_spec.compaction)
    before = await anyio.to_thread.run_sync(snapshot, run.workspace)
    started = time.perf_counter()
    began = datetime.now(UTC).isoformat(timespec="milliseconds")
    final = EventTally()
    secrets = environment_secrets(os.environ)
    key = read_key(record.key) if record.key.exists() else None
    events_fd = os.open(record.events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with (
        AuditLog(record.audit, key=key, anchor=record.head, secrets=secrets) as audit,
        os.fdopen(events_fd, "w", encoding="utf-8") as log,
    ):
        for decision in segment.interrupted:
            await audit.record_interrupted(decision)
        scope = team_scope(
            team.entry,
            limits=limits,
            observers=(journal, audit, tally, *observers),
            approver=approver,
            run_id=run.run_id,
            model=getattr(entry.transport, "model", None),
        ).child(output_dir=record.dir / "outputs")  # large tool outputs, kept with the run
        continue_numbering(scope, sessions)  # a resumed run's new sub-agents get new paths
        try:
            if not segment.run_model:  # the crash came after the last turn: nothing to run
                final.finish_from(await root_store.get_history())
            else:
                async with entry.run_stream(message, context, scope=scope) as stream:
                    async for event in stream:
                        final.see(event)
                        log.write(json.dumps(_logged(event, secrets)) + "\n")
                        if on_event is not None:
                            on_event(event)
        finally:
            with anyio.CancelScope(shield=True):
                outcome = build_outcome(
                    scenario,
                    run.run_id,
                    record.dir,
                    run.workspace,
                    final,
                    tally,
                    scope.budget,
                    time.perf_counter() - started,
                    root_store.session_id,
                    sessions,
                    workspace_changes(before, snapshot(run.workspace)),
                )
                record.write_changes(outcome.changes.to_dict())
                document = outcome.summary()
                this = {
                    "segment": segment.number,
                    "started": began,
                    "stop_reason": document["stop_reason"],
                    "interrupted": outcome.interrupted,
                    "usage": document["usage"],
                    "duration_seconds": document["duration_seconds"],
                    "calls": document["calls"],
                }
                segments = [*segment.before, this]
                document["segments"] = segments
                document["totals"] = segment_totals(segments)
                document["config"] = run.config
                document["resumed"] = segment.number - 1
                document["audit"] = {"log": str(record.audit), **audit.anchor_head.to_dict()}
                if isinstance(run.transport, ScriptedModel):
                    document["script_used"] = dict(run.transport.used)
                record.write_summary(document)
                journal.close()
                await context.close()
    return outcome


def _first(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback


def _logged(event: StreamEvent, secrets: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = redact(event_to_dict(event), secrets=secrets)
    data["time"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    return data

"""Running a scenario: build the team, guard it, run it, and keep a record of the run.

Every run writes one directory, outside the workspace (``swarm.record.record``): a
manifest before the first model call, the keyed audit log and its anchored head, the
events (secrets redacted), the sessions, a crash journal, and ``summary.json`` at the end of
each segment. ``resume_run`` continues a run from its record after Ctrl-C or after a crash
at any instant, as a new segment.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import anyio
import anyio.to_thread

from swarm.approvals import ApprovalStore, OnAsk, check_answered
from swarm.context.sqlite import SQLiteContextStore
from swarm.errors import ConfigError
from swarm.events import StreamEvent
from swarm.models.resolver import model_spec
from swarm.models.spec import transport_from_spec
from swarm.record.manifest import RunConfig, RunManifest, manifest_document
from swarm.record.outcome import RunOutcome
from swarm.record.pinning import check_unchanged
from swarm.record.record import RunRecord, default_runs_dir, new_run_id, read_journal
from swarm.record.recorder import Segment, start_record
from swarm.record.recover import (
    crashed_segments,
    interrupted_calls,
    place_script,
    repair_sessions,
)
from swarm.scenario.models import role_models, role_models_record
from swarm.scenario.policies import check_policies, run_policy
from swarm.scenario.sandboxing import sandbox_line
from swarm.scenario.script import PlaysScript, ScriptedModel
from swarm.scenario.segment import RunSetup, load_team, run_segment
from swarm.scenario.spec import Scenario, Script
from swarm.scenario.tooling import scenario_tools
from swarm.scope import Approver, CallObserver
from swarm.transports.base import CompletionTransport
from swarm.transports.recording import RecordingTransport, ReplayTransport

__all__ = ["prepare_workspace", "resume_run", "run_scenario"]

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
    return transport_from_spec(model_spec(spec) or spec)  # `sonnet`, `gpt-4.1-mini` too


async def run_scenario(
    scenario: Scenario,
    *,
    model: str | CompletionTransport | None = None,
    workspace: Path | None = None,
    runs_dir: Path | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    approver: Approver | None = None,
    ask_user: Callable[[str], Awaitable[str]] | None = None,
    on_event: Callable[[StreamEvent], None] | None = None,
    run_id: str | None = None,
    observers: tuple[CallObserver, ...] = (),
    on_ask: OnAsk | None = None,
    ask_timeout: float | None = None,
) -> RunOutcome:
    """Run ``scenario`` to its end and write its record; returns the outcome.

    ``on_event`` sees every event as it comes; ``observers`` see every tool call after the
    audit log did (for example ``swarm.otel.OtelObserver``). ``on_ask`` and
    ``ask_timeout`` (default: as the scenario's policy says) choose what an ``ask`` does
    with no ``approver``: ``deny``, or ``hold`` the call until it is answered in the
    record (the run may end ``awaiting_approval``, to be resumed).

    Raises ``ConfigError`` (before anything runs) for bad files, an unknown model spec,
    a provider whose API key is not set, no model at all, a ``replay`` cassette that is
    missing or not one, and a ``record`` cassette that cannot be written. Cancellation
    (Ctrl-C) stops every agent, writes the record with ``interrupted: true``, and
    re-raises.
    """
    team = load_team(scenario)
    # bad references, and rules that can never match, are refused before anything is written
    policies = check_policies(scenario, team, scenario_tools(scenario))
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
    config = RunConfig(
        scenario_path=str(scenario.path.resolve()) if scenario.path else None,
        name=scenario.name,
        task=scenario.task,
        team=str(scenario.team.resolve()),
        entry=team.entry,
        policy=scenario.policy,
        model=model if isinstance(model, str) else None,
        sandbox=sandbox_line(scenario),
        output=scenario.output.schema if scenario.output is not None else None,
    )
    root_session = uuid.uuid4().hex
    document = manifest_document(
        scenario,
        team,
        transport,
        model,
        workspace,
        run_id,
        root_session,
        config,
        policies=[run_policy(scenario), *policies.values()],
    )
    record_dir = start_record(
        runs_dir, run_id, document, role_models=role_models_record(team, resolver)
    )
    run = RunSetup(
        scenario,
        team,
        transport,
        workspace,
        record_dir,
        run_id,
        config,
        root_session,
        resolver,
        policies,
        on_ask,
        ask_timeout,
    )
    try:
        return await run_segment(
            run, scenario.task, Segment(1), approver, ask_user, on_event, observers
        )
    finally:
        with anyio.CancelScope(shield=True):
            await resolver.aclose()


async def resume_run(
    record_dir: Path,
    message: str | None = None,
    *,
    model: str | CompletionTransport | None = None,
    approver: Approver | None = None,
    ask_user: Callable[[str], Awaitable[str]] | None = None,
    on_event: Callable[[StreamEvent], None] | None = None,
    accept_changed_team: bool = False,
    on_ask: OnAsk | None = None,
    ask_timeout: float | None = None,
) -> RunOutcome:
    """Continue a stopped run (Ctrl-C, or a crash at any instant) from its record, as a
    new segment of the same run.

    With no ``message`` the entry agent picks up where it stopped: each call a crash cut
    short gets a result saying so (and is not re-run), and is recorded ``interrupted`` in
    the audit log. Calls held for approval and answered since (``swarm approve``) run
    first, and the agents waiting on them go on from where they stopped. Raises
    ``ConfigError`` when the record cannot be read, when its audit log does not verify,
    when the run had finished and no message is given, or when held calls still wait for
    an answer (unless ``ask_timeout`` has passed: then they are denied).
    """
    record = RunRecord(record_dir)
    summary = record.read_summary()
    legacy = not record.manifest.exists() and summary is not None and "config" in summary
    # a record from before manifests keeps what resuming needs in its summary
    document = dict(summary) if legacy and summary is not None else record.read_manifest()
    manifest = RunManifest.from_dict(document, path=record.manifest)
    record.check_audit()
    config = manifest.config
    accepted = check_unchanged(
        document.get("defined_by"),
        Path(config.team),
        accept=accept_changed_team,
        manifest=record.manifest,
    )
    scenario = config.scenario()
    team = load_team(scenario)
    policies = check_policies(scenario, team, scenario_tools(scenario))
    transport = resolve_transport(scenario, model or config.model)
    run_spec = model if model is not None else config.model or scenario.model
    resolver = role_models(
        scenario,
        team,
        transport,
        run_spec=run_spec if isinstance(run_spec, str) else None,
        owns_transport=isinstance(run_spec, str),
    )
    held = check_answered(
        ApprovalStore(record.approvals_file),
        ask_timeout if ask_timeout is not None else run_policy(scenario).ask_timeout,
        manifest.run_id,
        record.approvals_file,
    )
    state = read_journal(record.journal)
    await repair_sessions(record, state)
    if isinstance(transport, PlaysScript):  # it goes on from where the run left its script
        await place_script(transport, record, state, summary)
    if not state.segments:  # killed before the first segment's start was journaled
        if manifest.started is None:
            raise ConfigError("the run record lacks 'started'", path=record.manifest)
        state.segments.append(datetime.fromisoformat(manifest.started).timestamp())
    async with SQLiteContextStore(record.sessions, manifest.root_session) as store:
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
    segment = Segment(
        len(segments) + 1,
        segments,
        dict(state.sessions) | dict((summary or {}).get("sessions") or {}),
        interrupted_calls(record),
        run_model=not (message is None and finished),
        accepted_changes=tuple(accepted),
        held=held,
    )
    run = RunSetup(
        scenario,
        team,
        transport,
        manifest.workspace,
        record,
        manifest.run_id,
        config,
        manifest.root_session,
        resolver,
        policies,
        on_ask,
        ask_timeout,
    )
    try:
        return await run_segment(run, message, segment, approver, ask_user, on_event)
    finally:
        with anyio.CancelScope(shield=True):
            await resolver.aclose()

"""Running a scenario: build the team, guard it, run it, and keep a record of the run.

Every run writes one directory (``<workspace>/.swarm/runs/<run id>/`` by default):
``events.jsonl`` (every event of every agent, tagged with its path), ``audit.jsonl`` (the
hash-chained audit log), ``sessions.db`` (the SQLite sessions of every agent, so the run
can be inspected and resumed), ``cassette.jsonl`` when recording, and ``summary.json``
(written last, also when the run is interrupted).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from swarm.audit import AuditLog
from swarm.budget import BudgetLimits, UsageNode
from swarm.context.sqlite import SQLiteContextStore
from swarm.errors import ConfigError
from swarm.events import (
    ContextCompacted,
    Error,
    IterationEnd,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
)
from swarm.guards.policy import Policy, apply_policy, load_policy
from swarm.messages import ToolResultBlock
from swarm.run import CallRecord, current_scope
from swarm.scenario.sandboxing import protected_paths, sandbox_line
from swarm.scenario.script import ScriptedModel
from swarm.scenario.spec import Scenario, Script, load_scenario
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
from swarm.transports.models import estimate_cost
from swarm.transports.recording import RecordingTransport, ReplayTransport
from swarm.transports.serialize import event_to_dict
from swarm.transports.spec import transport_from_spec
from swarm.types import StopReason, Usage

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


@dataclass(slots=True)
class CallTally:
    """A ``CallObserver`` counting decisions, and remembering denied calls by path."""

    allowed: int = 0
    denied: int = 0
    invalid: int = 0
    denied_calls: list[tuple[str, str, str]] = field(default_factory=list)

    async def on_decision(self, call: CallRecord) -> None:
        if call.decision == "allow":
            self.allowed += 1
        elif call.decision == "deny":
            self.denied += 1
            self.denied_calls.append((call.path, call.tool, call.reason or ""))
        else:
            self.invalid += 1

    async def on_finish(self, call: CallRecord, result: ToolResultBlock, duration: float) -> None:
        return None


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run did: how it ended, what it cost, what was allowed and denied."""

    run_id: str
    scenario: str
    record_dir: Path
    workspace: Path
    stop_reason: StopReason
    final_text: str
    usage: Usage
    usage_tree: UsageNode | None
    cost: float | None
    allowed: int
    denied: int
    denied_calls: tuple[tuple[str, str, str], ...]
    delegations: tuple[str, ...]
    compactions: int
    errors: tuple[str, ...]
    duration: float
    root_session: str
    sessions: Mapping[str, str]
    interrupted: bool = False

    def summary(self) -> dict[str, Any]:
        """The JSON document written as ``summary.json``."""
        return {
            "run_id": self.run_id,
            "scenario": self.scenario,
            "workspace": str(self.workspace),
            "stop_reason": self.stop_reason.value,
            "interrupted": self.interrupted,
            "final_text": self.final_text,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
            "cost_usd": self.cost,
            "calls": {"allowed": self.allowed, "denied": self.denied},
            "denied_calls": [
                {"path": path, "tool": tool, "reason": reason}
                for path, tool, reason in self.denied_calls
            ],
            "delegations": list(self.delegations),
            "compactions": self.compactions,
            "errors": list(self.errors),
            "duration_seconds": round(self.duration, 3),
            "root_session": self.root_session,
            "sessions": dict(self.sessions),
            "usage_tree": _tree_to_dict(self.usage_tree) if self.usage_tree else None,
        }


def _tree_to_dict(node: UsageNode) -> dict[str, Any]:
    return {
        "path": node.path,
        "model": node.model,
        "input_tokens": node.usage.input_tokens,
        "output_tokens": node.usage.output_tokens,
        "subtree_tokens": node.total.total_tokens,
        "iterations": node.iterations,
        "stop_reason": node.stop_reason.value if node.stop_reason else None,
        "cost_usd": _cost(node.model, node.usage),
        "children": [_tree_to_dict(child) for child in node.children],
    }


def _cost(model: str | None, usage: Usage) -> float | None:
    return estimate_cost(model, usage) if model else None


def tree_cost(node: UsageNode | None) -> float | None:
    """The estimated dollars of a usage tree, where prices are known."""
    if node is None:
        return None
    prices = [_cost(n.model, n.usage) for n in node.walk()]
    known = [p for p in prices if p is not None]
    return sum(known) if known else None


def default_workspace(scenario: Scenario) -> Path:
    return Path.cwd() / ".swarm" / "workspaces" / scenario.name


def prepare_workspace(scenario: Scenario, workspace: Path) -> None:
    """Create the workspace and write the scenario's seed ``files`` into it (confined)."""
    workspace.mkdir(parents=True, exist_ok=True)
    root = workspace.resolve()
    for name, text in scenario.files.items():
        target = (root / name).resolve()
        if not target.is_relative_to(root):
            raise scenario.error(f"'{name}' is outside the workspace", "files", name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


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
    scenario: Scenario, team: Team, workspace: Path
) -> Callable[[AgentSpec, list[Tool[Any]]], list[Tool[Any]]]:
    """Each role's tools behind its policy (its own, else the scenario's, else default),
    with the ``deny`` rules of the roles above it as a ceiling."""
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
) -> RunOutcome:
    """Run ``scenario`` to its end and write its record; returns the outcome.

    Raises ``ConfigError`` (before anything runs) for bad files, an unknown model spec or
    no model at all. Cancellation (Ctrl-C) stops every agent, writes the record with
    ``interrupted: true``, and re-raises.
    """
    team = _load_team(scenario)
    if replay is not None:
        transport: CompletionTransport = ReplayTransport(replay)
    else:
        transport = resolve_transport(scenario, model)
    workspace = (workspace or scenario.workspace or default_workspace(scenario)).resolve()
    prepare_workspace(scenario, workspace)
    run_id = run_id or datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    record_dir = (runs_dir or workspace / ".swarm" / "runs") / run_id
    record_dir.mkdir(parents=True, exist_ok=False)
    if record is not None:
        transport = RecordingTransport(transport, record)
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
    run = _Run(scenario, team, transport, workspace, record_dir, run_id, config)
    return await _execute(run, scenario.task, None, {}, approver, ask_user, on_event)


async def resume_run(
    record_dir: Path,
    message: str | None = None,
    *,
    model: str | CompletionTransport | None = None,
    approver: Any = None,
    ask_user: Callable[[str], Awaitable[str]] | None = None,
    on_event: Callable[[StreamEvent], None] | None = None,
) -> RunOutcome:
    """Continue a stopped run from its stored sessions, in the same record.

    With no ``message`` the entry agent picks up where it stopped (a cancelled call's
    error result is in its history, so it can redo it). Raises ``ConfigError`` when the
    record cannot be read, or when the run had finished and no message is given.
    """
    summary_path = record_dir / "summary.json"
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        config = summary["config"]
        root_session = summary["root_session"]
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"not a readable run record: {exc}", path=summary_path) from None
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
    if isinstance(transport, ScriptedModel):
        transport.used.update(summary.get("script_used") or {})
    store = SQLiteContextStore(record_dir / "sessions.db", root_session)
    history = await store.get_history()
    await store.close()
    finished = bool(history) and history[-1].role == "assistant" and not history[-1].tool_uses
    if message is None and finished:
        raise ConfigError(
            "this run finished; give a message to continue the conversation",
            path=summary_path,
        )
    run = _Run(
        scenario,
        team,
        transport,
        Path(summary["workspace"]),
        record_dir,
        summary["run_id"],
        config,
    )
    previous = {
        "resumed": int(summary.get("resumed", 0)) + 1,
        "sessions": summary.get("sessions", {}),
    }
    return await _execute(run, message, root_session, previous, approver, ask_user, on_event)


@dataclass(frozen=True, slots=True)
class _Run:
    scenario: Scenario
    team: Team
    transport: CompletionTransport
    workspace: Path
    record_dir: Path
    run_id: str
    config: dict[str, Any]


def _load_team(scenario: Scenario) -> Team:
    max_depth = scenario.limits.max_depth
    return Team.load(
        scenario.team,
        entry=scenario.entry,
        max_depth=DEFAULT_MAX_DEPTH if max_depth is None else max_depth,
    )


async def _execute(
    run: _Run,
    message: str | None,
    root_session: str | None,
    previous: dict[str, Any],
    approver: Any,
    ask_user: Callable[[str], Awaitable[str]] | None,
    on_event: Callable[[StreamEvent], None] | None,
) -> RunOutcome:
    scenario, team, record_dir = run.scenario, run.team, run.record_dir
    protected = protected_paths(record_dir, run.workspace)
    toolbox = make_toolbox(run.workspace, ask=ask_user, protected=protected)
    db = record_dir / "sessions.db"
    sessions: dict[str, str] = dict(previous.get("sessions", {}))

    def session_store() -> SQLiteContextStore:
        store = SQLiteContextStore(db)
        sessions[current_scope().path] = store.session_id
        return store

    agents = build_team(
        team,
        toolbox,
        run.transport,
        context_factory=session_store,
        guard_tools=_guard_tools(scenario, team, run.workspace),
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
    root_store = SQLiteContextStore(db, root_session)
    sessions[team.entry] = root_store.session_id
    context = compacting_context(root_store, entry.transport, entry_spec.compaction)
    started = time.perf_counter()
    final = _Final()
    mode = "a" if root_session is not None else "w"
    with (
        AuditLog(record_dir / "audit.jsonl") as audit,
        (record_dir / "events.jsonl").open(mode, encoding="utf-8") as log,
    ):
        scope = team_scope(
            team.entry,
            limits=limits,
            observers=(audit, tally),
            approver=approver,
            run_id=run.run_id,
            model=getattr(entry.transport, "model", None),
        )
        continue_numbering(scope, sessions)  # a resumed run's new sub-agents get new paths
        try:
            async with entry.run_stream(message, context, scope=scope) as stream:
                async for event in stream:
                    final.see(event)
                    log.write(json.dumps(_logged(event)) + "\n")
                    if on_event is not None:
                        on_event(event)
        finally:
            with anyio.CancelScope(shield=True):
                outcome = _outcome(
                    scenario,
                    run.run_id,
                    record_dir,
                    run.workspace,
                    final,
                    tally,
                    scope.budget,
                    time.perf_counter() - started,
                    root_store.session_id,
                    sessions,
                )
                document = outcome.summary()
                document["config"] = run.config
                document["resumed"] = previous.get("resumed", 0)
                if isinstance(run.transport, ScriptedModel):
                    document["script_used"] = dict(run.transport.used)
                _write_atomically(record_dir / "summary.json", json.dumps(document, indent=2))
                await context.close()
    return outcome


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)


def _first(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback


def _logged(event: StreamEvent) -> dict[str, Any]:
    data = event_to_dict(event)
    data["time"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    return data


@dataclass(slots=True)
class _Final:
    """What the run's events say: the end, the final text, delegations, compactions."""

    end: SessionEndEvent | None = None
    text: list[str] = field(default_factory=list)
    last_text: str = ""
    delegations: dict[str, None] = field(default_factory=dict)
    compactions: int = 0
    errors: list[str] = field(default_factory=list)

    def see(self, event: StreamEvent) -> None:
        inner = event
        if isinstance(event, SubAgentEvent):
            self.delegations.setdefault(event.path)
            inner = event.event
        if isinstance(inner, ContextCompacted):
            self.compactions += 1
        elif isinstance(inner, Error):
            prefix = f"{event.path}: " if isinstance(event, SubAgentEvent) else ""
            self.errors.append(prefix + inner.message)
        if isinstance(event, TextDelta):
            self.text.append(event.delta)
        elif isinstance(event, SessionEndEvent):
            self.end = event
        elif isinstance(event, IterationEnd) and self.text:
            self.last_text = "".join(self.text)
            self.text.clear()


def _outcome(
    scenario: Scenario,
    run_id: str,
    record_dir: Path,
    workspace: Path,
    final: _Final,
    tally: CallTally,
    budget: Any,
    duration: float,
    root_session: str,
    sessions: Mapping[str, str],
) -> RunOutcome:
    end = final.end
    tree = end.usage_tree if end is not None else (budget.report() if budget is not None else None)
    usage = tree.total if tree is not None else (end.total_usage if end else Usage())
    return RunOutcome(
        run_id=run_id,
        scenario=scenario.name,
        record_dir=record_dir,
        workspace=workspace,
        stop_reason=end.stop_reason if end is not None else StopReason.cancelled,
        final_text=final.last_text,
        usage=usage,
        usage_tree=tree,
        cost=tree_cost(tree),
        allowed=tally.allowed,
        denied=tally.denied,
        denied_calls=tuple(tally.denied_calls),
        delegations=tuple(final.delegations),
        compactions=final.compactions,
        errors=tuple(final.errors),
        duration=duration,
        root_session=root_session,
        sessions=dict(sessions),
        interrupted=end is None,
    )

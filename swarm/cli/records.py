"""``swarm audit``, ``swarm sessions`` and ``swarm runs``: what a run left behind."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

from swarm.audit import audit_table, verify_log
from swarm.cli.exits import FAILED, OK, Stopped, run_until_stopped
from swarm.cli.prompt import TerminalPrompt, interactive
from swarm.cli.view import AgentBoard, LineView, LiveView, print_summary
from swarm.context.sqlite import SQLiteContextStore
from swarm.errors import ConfigError
from swarm.messages import (
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.scenario.runner import resume_run
from swarm.types import StopReason

__all__ = ["add_commands", "find_run"]


def add_commands(sub: Any) -> None:
    audit = sub.add_parser("audit", help="show or verify an audit log")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True)
    show = audit_sub.add_parser("show", help="the calls in a log, as a table")
    show.add_argument("log", type=Path, help="an audit.jsonl, or a run directory")
    show.add_argument("--role")
    show.add_argument("--tool")
    show.add_argument("--decision", choices=("allow", "deny", "invalid"))
    show.set_defaults(handler=cmd_audit_show)
    verify = audit_sub.add_parser("verify", help="check the hash chain; exit 1 if tampered")
    verify.add_argument("log", type=Path, help="an audit.jsonl, or a run directory")
    verify.set_defaults(handler=cmd_audit_verify)

    sessions = sub.add_parser("sessions", help="list, show or resume stored sessions")
    sessions_sub = sessions.add_subparsers(dest="sessions_command", required=True)
    listing = sessions_sub.add_parser("list", help="the sessions of a run (or a .db file)")
    listing.add_argument("target", help="a run directory, run id, or sessions .db file")
    listing.set_defaults(handler=cmd_sessions_list)
    show_session = sessions_sub.add_parser("show", help="one session's messages")
    show_session.add_argument("target", help="a run directory, run id, or sessions .db file")
    show_session.add_argument("session", help="a session id (a prefix is enough), or a path")
    show_session.set_defaults(handler=cmd_sessions_show)
    resume = sessions_sub.add_parser("resume", help="continue an interrupted run")
    resume.add_argument("run", help="a run directory or run id")
    resume.add_argument("message", nargs="*", help="a new message (needed if the run finished)")
    resume.add_argument("--model", help="a model spec to continue with")
    resume.add_argument("--plain", action="store_true", help="plain lines, no live view")
    resume.set_defaults(handler=cmd_sessions_resume)

    runs = sub.add_parser("runs", help="list or show run records")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)
    runs_list = runs_sub.add_parser("list", help="the runs under a directory")
    runs_list.add_argument(
        "where",
        nargs="?",
        type=Path,
        default=Path("."),
        help="a workspace or project directory (default: here)",
    )
    runs_list.set_defaults(handler=cmd_runs_list)
    runs_show = runs_sub.add_parser("show", help="one run's summary")
    runs_show.add_argument("run", help="a run directory or run id")
    runs_show.set_defaults(handler=cmd_runs_show)


# -- finding records -------------------------------------------------------------------


def _run_dirs(where: Path) -> list[Path]:
    """Run directories (holding summary.json) under ``where``'s usual places."""
    patterns = (".swarm/runs/*", ".swarm/workspaces/*/.swarm/runs/*", "runs/*", "*")
    found: dict[Path, None] = {}
    for pattern in patterns:
        for path in sorted(where.glob(pattern)):
            if (path / "summary.json").is_file():
                found.setdefault(path.resolve())
    return list(found)


def find_run(ref: str | Path) -> Path:
    """A run directory from a path or a run id. Raises ``ConfigError``."""
    path = Path(ref)
    if (path / "summary.json").is_file():
        return path
    matches = [
        d for d in _run_dirs(Path.cwd()) if d.name == str(ref) or d.name.startswith(str(ref))
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ConfigError(f"no run record '{ref}' here (see 'swarm runs list')")
    raise ConfigError(f"'{ref}' matches {len(matches)} runs: " + ", ".join(m.name for m in matches))


def _summary(run: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the run summary: {exc}", path=run / "summary.json"
        ) from None
    return data


def _audit_path(ref: Path) -> Path:
    if ref.is_dir():
        ref = ref / "audit.jsonl"
    if not ref.is_file():
        raise ConfigError("no such audit log", path=ref)
    return ref


def _sessions_db(target: str) -> tuple[Path, dict[str, str]]:
    path = Path(target)
    if path.is_file() and path.suffix == ".db":
        return path, {}
    run = find_run(target)
    names = {session: agent for agent, session in _summary(run).get("sessions", {}).items()}
    return run / "sessions.db", names


# -- audit -----------------------------------------------------------------------------


def cmd_audit_show(args: argparse.Namespace) -> int:
    log = _audit_path(args.log)
    console = Console()
    console.print(
        audit_table(
            log,
            role=args.role,
            tool=args.tool,
            decision=args.decision,
            width=max(40, console.width - 70),
        )
    )
    return OK


def cmd_audit_verify(args: argparse.Namespace) -> int:
    log = _audit_path(args.log)
    try:
        report = verify_log(log)
    except OSError as exc:
        raise ConfigError(f"cannot read the audit log: {exc}", path=log) from None
    print(report)
    return OK if report.ok else FAILED


# -- sessions --------------------------------------------------------------------------


def cmd_sessions_list(args: argparse.Namespace) -> int:
    db, names = _sessions_db(args.target)

    async def read() -> Any:
        async with SQLiteContextStore(db) as store:
            return await store.list_sessions()

    sessions = anyio.run(read)
    table = Table(title=str(db))
    for column in ("session", "agent", "messages", "tokens in", "tokens out", "created", "preview"):
        table.add_column(column)
    for info in sessions:
        table.add_row(
            info.session_id[:12],
            names.get(info.session_id, "-"),
            str(info.message_count),
            f"{info.input_tokens:,}",
            f"{info.output_tokens:,}",
            info.created_at,
            info.preview,
        )
    Console().print(table)
    return OK


def _render(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                parts.append(text)
            case ReasoningBlock(text=text):
                parts.append(f"(thinking) {text}")
            case ImageBlock(media_type=media_type, data=data):
                parts.append(f"[image {media_type}, {len(data):,} bytes]")
            case ToolUseBlock(name=name, input=arguments, id=call_id):
                parts.append(f"→ {name} {json.dumps(arguments)} [{call_id}]")
            case ToolResultBlock(tool_use_id=call_id, is_error=is_error):
                mark = "✗" if is_error else "←"
                parts.append(f"{mark} [{call_id}] {block.text}")
    return "\n".join(parts)


def cmd_sessions_show(args: argparse.Namespace) -> int:
    db, names = _sessions_db(args.target)
    wanted = args.session
    by_path = {agent: session for session, agent in names.items()}
    session_id = by_path.get(wanted, wanted)

    async def read() -> list[Message]:
        async with SQLiteContextStore(db) as probe:
            ids = [s.session_id for s in await probe.list_sessions()]
        matches = [i for i in ids if i.startswith(session_id)]
        if len(matches) != 1:
            raise ConfigError(
                f"session '{wanted}' " + ("not found" if not matches else "is ambiguous"),
                path=db,
            )
        async with SQLiteContextStore(db, matches[0]) as store:
            return await store.get_history()

    for message in anyio.run(read):
        print(f"--- {message.role}")
        print(_render(message))
    return OK


def cmd_sessions_resume(args: argparse.Namespace) -> int:
    run = find_run(args.run)
    summary = _summary(run)
    console = Console()
    prompt = TerminalPrompt() if interactive() else None
    entry = summary.get("config", {}).get("entry") or "agent"
    board = AgentBoard(entry)
    message = " ".join(args.message).strip() or None
    if args.plain or not console.is_terminal:
        view: Any = LineView(board, sys.stdout)
    else:
        view = LiveView(board, console)

    async def go() -> Any:
        with view:
            return await resume_run(
                run,
                message,
                model=args.model,
                approver=prompt.approve if prompt else None,
                ask_user=prompt.ask_user if prompt else None,
                on_event=view,
            )

    try:
        outcome = run_until_stopped(go)
    except Stopped as stop:
        sys.stderr.write(f"\n{stop.how} again: the record is written; resume it again later\n")
        return stop.code
    print_summary(console, outcome)
    return OK if outcome.stop_reason == StopReason.end_turn else FAILED


# -- runs ------------------------------------------------------------------------------


def cmd_runs_list(args: argparse.Namespace) -> int:
    runs = _run_dirs(args.where)
    table = Table(title=f"runs under {args.where}")
    for column in ("run", "scenario", "end", "tokens", "calls", "denied", "time", "directory"):
        table.add_column(column)
    for run in runs:
        data = _summary(run)
        usage = data.get("usage", {})
        calls = data.get("calls", {})
        end = data.get("stop_reason", "?") + (" (interrupted)" if data.get("interrupted") else "")
        table.add_row(
            data.get("run_id", run.name),
            data.get("scenario", "-"),
            end,
            f"{usage.get('input_tokens', 0) + usage.get('output_tokens', 0):,}",
            str(calls.get("allowed", 0) + calls.get("denied", 0)),
            str(calls.get("denied", 0)),
            f"{data.get('duration_seconds', 0):.1f}s",
            str(run),
        )
    Console().print(table)
    if not runs:
        print("no runs found")
    return OK


def cmd_runs_show(args: argparse.Namespace) -> int:
    run = find_run(args.run)
    data = _summary(run)
    console = Console()
    console.print(f"[bold]Run {data.get('run_id')}[/bold] ({data.get('scenario')})")
    console.print(
        f"Stop reason: {data.get('stop_reason')}"
        + ("  [red](interrupted)[/red]" if data.get("interrupted") else "")
    )
    console.print(f"Final answer:\n{data.get('final_text') or '(none)'}")
    calls = data.get("calls", {})
    console.print(f"Tool calls: {calls.get('allowed', 0)} allowed, {calls.get('denied', 0)} denied")
    for denied in data.get("denied_calls", []):
        console.print(f"  [red]denied[/red] {denied['path']} {denied['tool']}: {denied['reason']}")
    for error in data.get("errors", []):
        console.print(f"  [red]error[/red] {error}")
    tree = data.get("usage_tree")
    if tree:
        console.print(_tree_lines(tree))
    console.print(f"Record: {run}")
    return OK


def _tree_lines(node: dict[str, Any], depth: int = 0) -> str:
    name = node["path"].rsplit("/", 1)[-1]
    cost = node.get("cost_usd")
    line = (
        f"{'  ' * depth}{name}: {node['input_tokens'] + node['output_tokens']:,} tokens,"
        f" {node['iterations']} iterations, subtree {node['subtree_tokens']:,}"
        + (f", ${cost:.4f}" if cost is not None else "")
        + (f" [{node['stop_reason']}]" if node.get("stop_reason") not in (None, "end_turn") else "")
    )
    return "\n".join([line, *(_tree_lines(child, depth + 1) for child in node["children"])])

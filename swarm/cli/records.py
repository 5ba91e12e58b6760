"""``swarm audit``, ``swarm sessions`` and ``swarm runs``: what a run left behind.

What a record holds that a model chose (names, paths, reasons, errors, answers, messages)
is shown ``visible`` and handed to rich as ``Text``, never as markup.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from swarm._text import cost_text, plural
from swarm._visible import visible
from swarm.audit import (
    AuditHead,
    NotALog,
    audit_table,
    read_log,
    verify_log,
)
from swarm.cli.exits import FAILED, OK, Stopped, run_until_stopped
from swarm.cli.held import held_message, outcome_code
from swarm.cli.prompt import TerminalPrompt, interactive
from swarm.cli.segments import earlier_changes, resumed_sandbox, run_calls
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
from swarm.record.record import RunRecord, audit_check, default_runs_dir
from swarm.scenario.runner import resume_run
from swarm.types import StopReason

__all__ = ["find_run", "resume_command"]

_WIDE_AUDIT = 140
"""Below this many columns ``audit show`` gives each call two lines instead of a table
row: eight columns cannot share fewer without breaking every cell."""


# -- finding records -------------------------------------------------------------------


def _is_record(path: Path) -> bool:
    return (path / "manifest.json").is_file() or (path / "summary.json").is_file()


def _record_info(run: Path) -> dict[str, Any]:
    """What a record says of itself: its summary, else its manifest (a run going on, or
    killed), marked ``no_summary``."""
    for name in ("summary.json", "manifest.json"):
        try:
            data = json.loads((run / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data if name == "summary.json" else {**data, "no_summary": True}
    return {}


def _inside(path: str | None, where: Path) -> bool:
    return path is not None and Path(path).resolve().is_relative_to(where)


def _worked_under(info: dict[str, Any], root: Path) -> bool:
    """Whether a run worked under ``root``: its workspace is there, or its scenario file
    (``swarm test`` runs each scenario in a fresh workspace of its own elsewhere)."""
    config = info.get("config")
    scenario = config.get("scenario_path") if isinstance(config, dict) else None
    return _inside(info.get("workspace"), root) or (
        isinstance(scenario, str) and _inside(scenario, root)
    )


def _run_dirs(where: Path | None, runs_dir: Path | None = None) -> list[Path]:
    """Run records: those in the runs directory that worked under ``where`` (all of
    them when it is ``None``), then those in the old places under ``where``
    (``<workspace>/.swarm/runs``)."""
    found: dict[Path, None] = {}
    root = where.resolve() if where is not None else None
    state = runs_dir or default_runs_dir()
    for path in sorted(state.glob("*")) if state.is_dir() else []:
        if _is_record(path) and (root is None or _worked_under(_record_info(path), root)):
            found.setdefault(path.resolve())
    old = (".swarm/runs/*", ".swarm/workspaces/*/.swarm/runs/*", "runs/*", "*")
    for pattern in old if where is not None else ():
        for path in sorted(where.glob(pattern)):  # type: ignore[union-attr]
            if _is_record(path):
                found.setdefault(path.resolve())
    return list(found)


def _runs_dir(runs_dir: Path | None) -> Path:
    """The runs directory to read: ``--runs-dir`` must be a directory (the default one may
    not exist yet: no run has been recorded). Raises ``ConfigError``."""
    if runs_dir is None:
        return default_runs_dir()
    if not runs_dir.is_dir():
        what = "is not a directory" if runs_dir.exists() else "does not exist"
        raise ConfigError(f"--runs-dir {what}", path=runs_dir)
    return runs_dir


def find_run(ref: str | Path, runs_dir: Path | None = None) -> Path:
    """A run directory from a path or a run id (or its start, or ``last``: the newest)
    in the runs directory, or under the current directory's old places. Raises
    ``ConfigError``."""
    runs_dir = _runs_dir(runs_dir)
    path = Path(ref)
    if not str(ref).strip():
        raise ConfigError("give a run id or a run directory (see 'swarm runs list')")
    if path.is_dir() and _is_record(path):
        return path
    if path.is_dir() or "/" in str(ref):
        what = "not a run record (no manifest.json or summary.json)" if path.is_dir() else None
        raise ConfigError(what or "no such run directory", path=path)
    runs = [*_run_dirs(None, runs_dir), *_run_dirs(Path.cwd(), runs_dir)]
    if str(ref) == "last":  # run ids start with the time they started
        if not runs:
            raise ConfigError(f"no run records in {runs_dir} or here yet")
        return max(dict.fromkeys(runs), key=lambda d: d.name)
    matches = list(dict.fromkeys(d for d in runs if d.name.startswith(str(ref))))
    exact = [d for d in matches if d.name == str(ref)]
    if len(exact) == 1 or len(matches) == 1:
        return (exact or matches)[0]
    if not matches:
        raise ConfigError(f"no run record '{ref}' in {runs_dir} or here (see 'swarm runs list')")
    raise ConfigError(f"'{ref}' matches {len(matches)} runs: " + ", ".join(m.name for m in matches))


def resume_command(run: Path, run_id: str) -> str:
    """The command that resumes the run recorded in ``run``."""
    if run.parent.resolve() == default_runs_dir().resolve():
        return f"swarm sessions resume {run_id}"
    if run.parent.name == "runs" and run.parent.parent.name == ".swarm":  # an old place
        return f"swarm sessions resume {run}"
    return f"swarm sessions resume {run_id} --runs-dir {run.parent}"


def _summary(run: Path) -> dict[str, Any]:
    data = _record_info(run)
    if not data:
        raise ConfigError("cannot read the run record (no summary or manifest)", path=run)
    return data


def _audit_target(ref: str, runs_dir: Path | None) -> tuple[Path, Path | None]:
    """The log to verify and the run record it belongs to (for its key and head)."""
    path = Path(ref)
    if path.is_file():
        return path, path.parent if _is_record(path.parent) else None
    if path.is_dir():
        if not _is_record(path):
            raise ConfigError("not a run record (no manifest.json or summary.json)", path=path)
        return path / "audit.jsonl", path
    if path.suffix == ".jsonl" or "/" in ref:
        raise ConfigError("no such audit log", path=path)
    run = find_run(ref, runs_dir)
    return run / "audit.jsonl", run


def _sessions_db(target: str, runs_dir: Path | None) -> tuple[Path, dict[str, str]]:
    path = Path(target)
    if path.is_file():  # a run is a directory: a file can only be meant as a database
        _check_database(path)
        return path, {}
    run = find_run(target, runs_dir)
    names = {session: agent for agent, session in _summary(run).get("sessions", {}).items()}
    return run / "sessions.db", names


def _check_database(path: Path) -> None:
    """Raise ``ConfigError`` unless ``path`` is an SQLite database of sessions (read, never
    changed: opening another database as a store would add the store's tables to it)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"not a sessions database ({exc})", path=path) from None
    if not {"sessions", "messages"} <= tables:
        raise ConfigError("not a sessions database (it has no sessions table)", path=path)


def _table(columns: tuple[str, ...], *, copied: dict[str, int]) -> Table:
    """A table that fits narrow terminals by folding its text, except in the ``copied``
    columns (ids and paths a user copies), which keep their whole width (given) on one
    line: a run id cut to ``2026112…`` is no use to anyone."""
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        show_edge=False,
    )
    for column in columns:
        if column in copied:
            table.add_column(column, no_wrap=True, min_width=copied[column])
        elif column in _NUMBERS:
            table.add_column(column, no_wrap=True, justify="right")
        else:
            table.add_column(column, overflow="fold", min_width=min(len(column), 8))
    return table


_NUMBERS = frozenset(("msgs", "in", "out", "segs", "tokens", "calls", "denied", "time"))


# -- audit -----------------------------------------------------------------------------


def cmd_audit_show(args: argparse.Namespace) -> int:
    log, _ = _audit_target(args.log, args.runs_dir)  # the run forms `audit verify` takes
    if not log.is_file():
        raise ConfigError("no such audit log", path=log)
    try:
        records, skipped = read_log(log)
    except OSError as exc:
        raise ConfigError(f"cannot read the audit log: {exc.strerror or exc}", path=log) from None
    if skipped and not records:
        raise ConfigError("not an audit log: no line is an audit record", path=log)
    console = Console()
    compact = console.width < _WIDE_AUDIT
    console.print(
        audit_table(
            log,
            role=args.role,
            tool=args.tool,
            decision=args.decision,
            width=console.width - 4 if compact else max(40, console.width - 90),
            compact=compact,
        )
    )
    return OK


def cmd_audit_verify(args: argparse.Namespace) -> int:
    log, run = _audit_target(args.log, args.runs_dir)
    key: bytes | None = None
    anchors: list[AuditHead | None] = [None]
    try:
        if run is not None:
            key, anchors[0] = audit_check(run)
            if not log.exists():
                print(f"{log}: tampered or damaged at record 0: the audit log is missing")
                return FAILED
        report = verify_log(log, key=key, anchor=anchors[0])
    except NotALog as exc:
        raise ConfigError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot verify the audit log: {exc}", path=log) from None
    print(visible(str(report), multiline=True))
    return OK if report.ok else FAILED


# -- sessions --------------------------------------------------------------------------


def cmd_sessions_list(args: argparse.Namespace) -> int:
    db, names = _sessions_db(args.target, args.runs_dir)

    async def read() -> Any:
        async with SQLiteContextStore(db) as store:
            return await store.list_sessions()

    sessions = anyio.run(read)
    console = Console()
    wide = console.width >= 110  # else the preview gets the created column's room
    columns = ("session", "agent", "msgs", "in", "out", *(["created"] * wide), "preview")
    table = _table(
        columns,
        copied={"session": 12, "agent": max((len(a) for a in names.values()), default=5)},
    )
    for info in sessions:
        created = [info.created_at[:16].replace("T", " ")] if wide else []
        table.add_row(
            Text(visible(info.session_id[:12])),
            Text(visible(names.get(info.session_id, "-"))),
            str(info.message_count),
            f"{info.input_tokens:,}",
            f"{info.output_tokens:,}",
            *created,
            Text(visible(" ".join(info.preview.split())), no_wrap=True, overflow="ellipsis"),
        )
    console.print(f"sessions in {db}", soft_wrap=True, markup=False, highlight=False)
    console.print(table)
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


def _session_of(wanted: str, names: dict[str, str], db: Path) -> str:
    """The session (or session-id prefix) ``wanted`` names: an agent's path
    (``lead/writer#1``), its start (``lead/writer``), or its role (``writer``, ``wri``)
    when one agent has it; else ``wanted`` itself, read as a session-id prefix. Raises
    ``ConfigError`` naming the agents when several match."""
    by_path = {agent: session for session, agent in names.items()}
    if wanted in by_path:
        return by_path[wanted]
    role = [p for p in by_path if p.rsplit("/", 1)[-1].partition("#")[0].startswith(wanted)]
    matches = [p for p in by_path if p.startswith(wanted)] or role
    if len(matches) > 1:
        raise ConfigError(
            f"session '{wanted}' is ambiguous: it could be {', '.join(matches)}", path=db
        )
    return by_path[matches[0]] if matches else wanted


def cmd_sessions_show(args: argparse.Namespace) -> int:
    db, names = _sessions_db(args.target, args.runs_dir)
    wanted = args.session
    session_id = _session_of(wanted, names, db)

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
        print(f"--- {visible(str(message.role))}")
        # indented: no line of a message can pass for the next message's header
        print(textwrap.indent(visible(_render(message), multiline=True), "  "))
    return OK


def cmd_sessions_resume(args: argparse.Namespace) -> int:
    run = find_run(args.run, args.runs_dir)
    summary = _summary(run)
    console = Console()
    prompt = TerminalPrompt() if interactive() else None
    entry = summary.get("config", {}).get("entry") or "agent"
    board = AgentBoard(entry)
    message = " ".join(args.message).strip() or None
    # what a run says first, so a resumed one reads like it: which run, and where it works
    run_id = str(summary.get("run_id") or run.name)
    console.print(f"resuming: {run_id} ({run})", markup=False, highlight=False, soft_wrap=True)
    if summary.get("workspace"):
        console.print(
            f"workspace: {summary['workspace']}", markup=False, highlight=False, soft_wrap=True
        )
    sandbox = resumed_sandbox(run)
    if sandbox is not None:
        console.print(f"sandbox: {sandbox}", markup=False, highlight=False, soft_wrap=True)
    earlier = RunRecord(run).calls()
    if args.plain or not console.is_terminal:
        view: Any = LineView(board, sys.stdout)
    else:
        view = LiveView(board, console)
        if prompt is not None:
            prompt.pause = view.paused

    async def go() -> Any:
        with view:
            return await resume_run(
                run,
                message,
                model=args.model,
                approver=prompt.approve if prompt else None,
                ask_user=prompt.ask_user if prompt else None,
                on_event=view,
                accept_changed_team=args.accept_changed_team,
                on_ask=args.on_ask,
                ask_timeout=args.ask_timeout,
            )

    try:
        outcome = run_until_stopped(go)
    except Stopped as stop:
        command = resume_command(run, str(summary.get("run_id") or run.name))
        sys.stderr.write(f"\n{stop.how} again: the record is written; resume with:\n  {command}\n")
        return stop.code
    print_summary(console, outcome, board)
    files = earlier_changes(earlier)
    if files is not None:
        console.print(files, soft_wrap=True)
    head = audit_head_line(outcome.record_dir)
    if head:
        console.print(head, markup=False, soft_wrap=True)
    if outcome.stop_reason == StopReason.awaiting_approval:
        resume = resume_command(run, str(summary.get("run_id") or run.name))
        sys.stderr.write(held_message(run, outcome.run_id, resume))
    return outcome_code(outcome)


def audit_head_line(record: Path) -> str:
    """The audit log's head as the run left it, to keep somewhere else: with it, any
    later rewrite of the log is found, even by someone holding the key."""
    try:
        audit = json.loads((record / "summary.json").read_text(encoding="utf-8"))["audit"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f"Audit head: {plural(audit['records'], 'record')}, MAC {audit['mac'] or '-'}"


# -- runs ------------------------------------------------------------------------------


def _end_of(data: dict[str, Any]) -> str:
    if data.get("no_summary"):
        return "(killed, or still running)"
    return str(data.get("stop_reason", "?")) + (" (interrupted)" if data.get("interrupted") else "")


def _task(run: Path) -> str | None:
    """The task a run was given, as its manifest has it (``None``: an older record)."""
    try:
        scenario = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["scenario"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    task = scenario.get("task") if isinstance(scenario, dict) else None
    return task if isinstance(task, str) else None


def _name(data: dict[str, Any], run: Path) -> str:
    """The scenario's name, or for a ``--team`` run (no scenario file) its task."""
    scenario = data.get("scenario", "-")
    name = str(scenario.get("name", "-") if isinstance(scenario, dict) else scenario)
    task = _task(run) if name == "run" else None
    return f"--team: {task}" if task is not None else name


def _listed(run: Path) -> dict[str, Any]:
    """A run as ``swarm runs list --json`` gives it: the fields of ``docs/run-records.md``
    (``run_id``, ``scenario``, ``task``, ``end``, ``interrupted``, ``finished``, ``segments``,
    ``tokens``, ``calls``, ``denied``, ``duration_seconds``, ``workspace``, ``record``)."""
    data = _summary(run)
    totals = data.get("totals") or {}
    usage = totals.get("usage") or data.get("usage") or {}
    allowed, denied = run_calls(data)
    scenario = data.get("scenario")
    name = scenario.get("name") if isinstance(scenario, dict) else scenario
    return {
        "run_id": str(data.get("run_id", run.name)),
        "scenario": name,
        "task": _task(run),
        "end": None if data.get("no_summary") else data.get("stop_reason"),
        "interrupted": bool(data.get("interrupted")),
        "finished": not data.get("no_summary"),
        "segments": int(totals.get("segments", 1)),
        "tokens": int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0)),
        "calls": allowed + denied,
        "denied": denied,
        "duration_seconds": float(
            totals.get("duration_seconds", data.get("duration_seconds", 0)) or 0
        ),
        "workspace": data.get("workspace"),
        "record": str(run),
    }


def cmd_runs_list(args: argparse.Namespace) -> int:
    if not args.all and not args.where.is_dir():
        what = "not a directory" if args.where.exists() else "no such directory"
        raise ConfigError(
            f"{what}: runs are listed by the directory they worked in", path=args.where
        )
    runs = _run_dirs(None if args.all else args.where, _runs_dir(args.runs_dir))
    if getattr(args, "json", False):
        print(json.dumps([_listed(run) for run in runs], indent=2))
        return OK
    title = "every run" if args.all else f"runs working under {args.where}"
    table = _table(
        ("run", "scenario", "end", "segs", "tokens", "calls", "denied", "time"),
        copied={
            "run": max((len(str(_record_info(r).get("run_id", r.name))) for r in runs), default=3)
        },
    )
    for run in runs:
        data = _summary(run)
        totals = data.get("totals") or {}
        usage = totals.get("usage") or data.get("usage") or {}
        allowed, denied = run_calls(data)
        name = _name(data, run)
        table.add_row(
            Text(visible(str(data.get("run_id", run.name)))),
            Text(visible(str(name))),
            Text(visible(_end_of(data))),
            str(totals.get("segments", 1)),
            f"{usage.get('input_tokens', 0) + usage.get('output_tokens', 0):,}",
            str(allowed + denied),
            str(denied),
            f"{totals.get('duration_seconds', data.get('duration_seconds', 0)) or 0:.1f}s",
        )
    console = Console()
    console.print(title, soft_wrap=True, markup=False, highlight=False)
    console.print(table)
    if not runs:
        print("no runs found")
    return OK


def cmd_runs_show(args: argparse.Namespace) -> int:
    run = find_run(args.run, args.runs_dir)
    data = _summary(run)
    console = Console(soft_wrap=True)  # lines as they are: ids and paths stay whole
    scenario = data.get("scenario")
    name = scenario.get("name") if isinstance(scenario, dict) else scenario
    console.print(
        Text.assemble((visible(f"Run {data.get('run_id')}"), "bold"), visible(f" ({name})"))
    )
    task = _task(run)
    if task is not None:
        console.print(Text(visible(f"Task: {task}")))
    if data.get("no_summary"):
        console.print(
            "No summary: the run is going on, or was killed. Resume it with: "
            + resume_command(run, str(data.get("run_id") or run.name)),
            markup=False,
        )
        console.print(f"Record: {run}", markup=False)
        return OK
    console.print(Text(visible(f"Stop reason: {_end_of(data)}")))
    answer = visible(str(data.get("final_text") or "(none)"), multiline=True)
    console.print(Text("Final answer:\n" + textwrap.indent(answer, "  ")))  # as in the summary
    allowed, denied = run_calls(data)
    console.print(f"Tool calls: {allowed} allowed, {denied} denied")
    for denied in data.get("denied_calls", []):
        line = f" {denied.get('path')} {denied.get('tool')}: {denied.get('reason')}"
        console.print(Text.assemble(("  denied", "red"), visible(line)))
    for error in data.get("errors", []):
        console.print(Text.assemble(("  error", "red"), " ", visible(str(error))))
    segments = data.get("segments") or []
    for segment in segments:
        usage = segment.get("usage") or {}
        tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
        line = (
            f"Segment {segment.get('segment')}: {segment.get('stop_reason')}"
            + (" (interrupted)" if segment.get("interrupted") else "")
            + f", {tokens:,} tokens, {segment.get('duration_seconds') or 0:.1f}s"
        )
        console.print(Text(visible(line)))
    totals = data.get("totals")
    if totals:
        usage = totals["usage"]
        cost = f" {cost_text(totals['cost_usd'])}," if "cost_usd" in totals else ""
        console.print(
            f"Total: {plural(totals['segments'], 'segment')},"
            f" {usage['input_tokens'] + usage['output_tokens']:,} tokens,{cost}"
            f" {totals['duration_seconds']:.1f}s",
            markup=False,
        )
    tree = data.get("usage_tree")
    if tree:
        lines = _tree_lines(tree)
        if console.is_terminal:  # wrapped between words, under its agent: no number cut
            lines = "\n".join(_wrapped(line, console.width) for line in lines.split("\n"))
        console.print(Text(lines))
    head = data.get("audit")
    if head:
        console.print(
            f"Audit head: {plural(head['records'], 'record')}, MAC {head['mac'] or '-'}",
            soft_wrap=True,
        )
    console.print(f"Record: {run}", markup=False)
    return OK


def _wrapped(line: str, width: int) -> str:
    """``line`` wrapped between words to ``width``, its next lines indented under it."""
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    kept = textwrap.wrap(
        line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )
    return "\n".join(kept) or line


def _tree_lines(node: dict[str, Any], depth: int = 0) -> str:
    name = visible(str(node["path"]).rsplit("/", 1)[-1])
    cost = node.get("cost_usd")
    failed = node.get("stop_reason") not in (None, "end_turn")
    read, write = int(node.get("cache_read_tokens") or 0), int(node.get("cache_write_tokens") or 0)
    cached = f" ({read:,} cache read, {write:,} cache write)" if read or write else ""
    subtree_cost = ""
    both_unknown = cost is None and node.get("subtree_cost_usd") is None  # said once
    if node["children"] and "subtree_cost_usd" in node and not both_unknown:
        subtree_cost = f" (subtree {cost_text(node['subtree_cost_usd'], failed=failed)})"
    line = (
        f"{'  ' * depth}{name}: {node['input_tokens'] + node['output_tokens']:,} tokens{cached},"
        f" {plural(node['iterations'], 'iteration')}, subtree {node['subtree_tokens']:,}"
        + f", {cost_text(cost, failed=failed)}{subtree_cost}"
        + (
            visible(f" [{node['stop_reason']}]")
            if node.get("stop_reason") not in (None, "end_turn")
            else ""
        )
    )
    return "\n".join([line, *(_tree_lines(child, depth + 1) for child in node["children"])])


def cmd_runs_report(args: argparse.Namespace) -> int:
    from swarm.report import write_report

    written = write_report(find_run(args.run, args.runs_dir), args.output)
    print(f"Report: {written}")
    if args.open:
        import webbrowser

        uri = written.resolve().as_uri()
        if not webbrowser.open(uri):
            sys.stderr.write(f"no browser found to open it: open {uri} in one (or set BROWSER)\n")
    return OK

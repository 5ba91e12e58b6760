"""``swarm approvals``, ``swarm approve`` and ``swarm deny``: the calls a run holds for a
person, answered from any shell, while the run is live or after it stopped."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from swarm._text import plural
from swarm._visible import visible
from swarm.approvals import ApprovalStore, os_user
from swarm.cli.exits import FAILED, OK
from swarm.cli.held import request_line as _line
from swarm.cli.records import find_run, resume_command
from swarm.errors import ConfigError
from swarm.record.record import RunRecord, default_runs_dir

__all__ = ["cmd_approvals", "cmd_approve", "cmd_deny"]


def _run_id(run: Path) -> str:
    try:
        data = json.loads((run / "manifest.json").read_text())
        return str(data.get("run_id") or run.name)
    except (OSError, ValueError):
        return run.name


def cmd_approvals(args: argparse.Namespace) -> int:
    """List a run's held requests (every run's, without RUN); ``--all``: answered too."""
    if args.run:
        runs = [find_run(args.run, args.runs_dir)]
    else:
        where = args.runs_dir or default_runs_dir()
        runs = sorted(p for p in where.glob("*") if (p / "approvals.jsonl").is_file())
    shown = 0
    for run in runs:
        requests = ApprovalStore(RunRecord(run).approvals_file).requests()
        for pending in requests if args.all else [p for p in requests if p.answer is None]:
            print(_line(_run_id(run), pending))
            shown += 1
    if not shown:
        print("no requests" if args.all else "nothing waits for approval")
    return OK


def cmd_approve(args: argparse.Namespace) -> int:
    """Approve held requests of a run."""
    return _answer(args, approved=True)


def cmd_deny(args: argparse.Namespace) -> int:
    """Deny held requests of a run; ``--reason`` is what the model is told."""
    return _answer(args, approved=False)


def _answer(args: argparse.Namespace, *, approved: bool) -> int:
    run = find_run(args.run, args.runs_dir)
    store = ApprovalStore(RunRecord(run).approvals_file)
    if not args.ids and not args.all:
        raise ConfigError("give the ids of the requests to answer, or --all")
    chosen = store.pending() if args.all else []
    for request_id in args.ids:
        found = store.get(request_id)
        if found is None:
            raise ConfigError(
                f"this run never asked request '{request_id}' (see 'swarm approvals"
                f" {_run_id(run)}')",
                path=store.path,
            )
        chosen.append(found)
    if not chosen:
        print("nothing waits for approval")
        return OK
    verb = "approved" if approved else "denied"
    code = OK
    reason = getattr(args, "reason", "") or ""
    for pending in chosen:
        done = store.answer(pending.id, approved=approved, who=os_user(), via="cli", reason=reason)
        if done:
            print(visible(f"{verb} {pending.id}: {pending.path} {pending.tool}"))
        else:
            again = store.get(pending.id)
            answer = (again.answer if again is not None else None) or {}
            print(
                visible(
                    f"request {pending.id} was answered already ({again.state if again else '?'}"
                    f" by {answer.get('who')} via {answer.get('via')})"
                ),
                file=sys.stderr,
            )
            code = FAILED
    left = len(store.pending())
    if left:
        print(f"{plural(left, 'request')} still wait for an answer")
    elif _stopped_waiting(run):
        print(f"the run has stopped; go on with:\n  {resume_command(run, _run_id(run))}")
    return code


def _stopped_waiting(run: Path) -> bool:
    try:
        data = json.loads((run / "summary.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(data.get("stop_reason") == "awaiting_approval")

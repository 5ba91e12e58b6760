"""How a command tells of calls held for approval: one request as a line, what a run
that ended waiting says, and its exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarm._text import plural
from swarm._visible import visible
from swarm.approvals import ApprovalStore, Pending
from swarm.cli.exits import AWAITING_APPROVAL, FAILED, OK
from swarm.record.outcome import RunOutcome
from swarm.record.record import RunRecord
from swarm.types import StopReason

__all__ = ["held_message", "outcome_code", "request_line"]


def _shown(arguments: dict[str, Any], width: int = 120) -> str:
    text = json.dumps(arguments, default=str, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def request_line(run_id: str, pending: Pending) -> str:
    """``RUN  ID  STATE  PATH  TOOL ARGS`` and, indented, the rule, the reason and who
    answered; what a model chose in it made ``visible``."""
    answer = pending.answer
    said = ""
    if answer is not None:
        said = f"  ({pending.state} by {answer.get('who')} via {answer.get('via')}"
        said += f": {answer.get('reason')})" if answer.get("reason") else ")"
    return visible(
        f"{run_id}  {pending.id}  {pending.state}  {pending.path}  {pending.tool}"
        f" {_shown(pending.arguments)}"
    ) + visible(f"\n    rule {pending.rule or '-'}: {pending.reason}{said}", multiline=True)


def held_message(run: Path, run_id: str, resume: str) -> str:
    """What a run that ended waiting for approval tells the person: what waits, and the
    commands that answer it and go on (``resume``: the command that resumes the run)."""
    pending = ApprovalStore(RunRecord(run).approvals_file).pending()
    where = resume.split(" --runs-dir ", 1)
    runs = f" --runs-dir {where[1]}" if len(where) == 2 else ""
    lines = [f"\nwaiting for approval: {plural(len(pending), 'call')} held"]
    lines += [request_line(run_id, p) for p in pending]
    lines.append("answer with:")
    lines.append(f"  swarm approve {run_id} ID{runs}    (or --all)")
    lines.append(f"  swarm deny {run_id} ID --reason '...'{runs}")
    lines.append(f"then go on with:\n  {resume}")
    return "\n".join(lines) + "\n"


def outcome_code(outcome: RunOutcome) -> int:
    """The exit code of a run: 0 when it ended well, 75 when it waits for approval,
    else 1."""
    if outcome.stop_reason == StopReason.end_turn:
        return OK
    return AWAITING_APPROVAL if outcome.stop_reason == StopReason.awaiting_approval else FAILED

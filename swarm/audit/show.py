"""Reading an audit log as people do: one row per call, filtered, in a rich table.

Every value from the log (paths, tool names, arguments, reasons, errors: what the model
chose) goes into the table as a rich ``Text`` made ``visible``: markup in it is never
interpreted, and nothing in it can act on the terminal or start a line of its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from swarm._text import plural
from swarm._visible import visible

__all__ = ["AuditRow", "audit_rows", "audit_table", "read_log"]


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One call: its decision record and, once it ended, its finish record."""

    decision: dict[str, Any]
    finish: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[Any, Any, Any]:
        """What identifies the call: run id, agent path, call id."""
        return self.decision.get("run_id"), self.decision.get("path"), self.decision.get("call_id")


def read_log(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[int]]:
    """The records of a log, and the numbers of lines that are not records (skipped).

    Reading does not verify the chain (``verify_log`` does). Raises ``OSError``.
    """
    records: list[dict[str, Any]] = []
    skipped: list[int] = []
    with Path(path).open("rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                record = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                record = None
            if isinstance(record, dict) and record.get("event") in ("decision", "finish"):
                records.append(record)
            elif raw.strip():
                skipped.append(number)
    return records, skipped


def audit_rows(
    records: Iterable[dict[str, Any]],
    *,
    role: str | None = None,
    tool: str | None = None,
    decision: str | None = None,
    run_id: str | None = None,
) -> list[AuditRow]:
    """Pair decision and finish records into calls, keeping those that match every filter
    given (``tool`` and ``role`` may be globs; ``decision`` is allow, deny or invalid)."""
    rows: dict[tuple[Any, Any, Any], AuditRow] = {}
    for record in records:
        key = record.get("run_id"), record.get("path"), record.get("call_id")
        if record.get("event") == "decision":
            rows[key] = AuditRow(record)
        elif key in rows and rows[key].finish is None:
            rows[key] = AuditRow(rows[key].decision, record)

    def wanted(row: AuditRow) -> bool:
        d = row.decision
        return (
            (role is None or fnmatchcase(str(d.get("role")), role))
            and (tool is None or fnmatchcase(str(d.get("tool")), tool))
            and (decision is None or d.get("decision") == decision)
            and (run_id is None or d.get("run_id") == run_id)
        )

    return [row for row in rows.values() if wanted(row)]


_STYLES = {"allow": "green", "deny": "bold red", "invalid": "yellow"}


def _details(row: AuditRow) -> str:
    d, f = row.decision, row.finish or {}
    if d.get("decision") != "allow":
        return visible(str(d.get("reason") or ""))
    if f.get("error"):
        return visible(str(f["error"]))
    return visible(json.dumps(d.get("arguments"), ensure_ascii=False))


def _field(record: dict[str, Any], name: str, default: str = "") -> str:
    """One field of a record as it may be shown: on one line, nothing hidden."""
    return visible(str(record.get(name, default)))


def audit_table(
    path: str | os.PathLike[str],
    *,
    role: str | None = None,
    tool: str | None = None,
    decision: str | None = None,
    run_id: str | None = None,
    width: int = 80,
    compact: bool = False,
) -> Table:
    """A rich table of the calls in a log, one row each, filtered like ``audit_rows``.

    Details are the reason of a denial, the error of a failed call, or the (redacted)
    arguments, cut to ``width`` characters. ``compact`` (for a narrow terminal, or a
    pipe) gives each call two plain lines instead: who called what, the verdict, the rule,
    the outcome and the time, then the details indented. Raises ``OSError``.
    """
    records, skipped = read_log(path)
    rows = audit_rows(records, role=role, tool=tool, decision=decision, run_id=run_id)
    table = _compact_table(rows, width) if compact else _wide_table(rows, width)
    table.title = Text(visible(f"audit log {path}"))
    shown = plural(len(rows), "call")
    if skipped:
        shown += f"; {plural(len(skipped), 'unreadable line')} skipped (run `swarm audit verify`)"
    table.caption = shown
    return table


def _compact_table(rows: list[AuditRow], width: int) -> Table:
    table = Table.grid(padding=(0, 0))
    table.add_column(overflow="fold")
    for row in rows:
        d, f = row.decision, row.finish or {}
        verdict = _field(d, "decision")
        duration = f.get("duration")
        line = Text.assemble(
            (_field(d, "time")[11:19], "dim"),
            " ",
            (verdict, _STYLES.get(verdict, "")),
            f" {_field(d, 'path')} {_field(d, 'tool')}",
            (f"  {_rule(d)}", "dim"),
            f"  {_field(f, 'outcome', 'running')}",
            f" {duration * 1000:.1f} ms" if isinstance(duration, int | float) else "",
        )
        details = _details(row)
        room = max(20, width - 4)
        cut = details if len(details) <= room else details[: room - 3] + "..."
        table.add_row(line)
        table.add_row(Text("    " + cut, no_wrap=True, overflow="ellipsis"))
    return table


def _rule(d: dict[str, Any]) -> str:
    return visible(":".join(str(p) for p in (d.get("policy"), d.get("rule")) if p)) or "-"


def _wide_table(rows: list[AuditRow], width: int) -> Table:
    table = Table(show_lines=False)
    for name in ("time", "agent", "tool", "decision", "rule", "outcome", "ms", "details"):
        table.add_column(
            name,
            justify="right" if name == "ms" else "left",
            overflow="fold",
            no_wrap=name in ("time", "agent", "tool", "decision"),  # whole, to read and copy
        )
    for row in rows:
        d, f = row.decision, row.finish or {}
        verdict = _field(d, "decision")
        duration = f.get("duration")
        details = _details(row)
        table.add_row(
            Text(_field(d, "time")[11:19]),
            Text(_field(d, "path")),
            Text(_field(d, "tool")),
            Text(verdict, style=_STYLES.get(verdict, "")),
            Text(_rule(d)),
            Text(_field(f, "outcome", "running")),
            Text(f"{duration * 1000:.1f}" if isinstance(duration, int | float) else "-"),
            Text(details if len(details) <= width else details[: width - 3] + "..."),
        )
    return table

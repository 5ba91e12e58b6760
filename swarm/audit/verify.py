"""Checking an audit log's hash chain: ``verify_log`` says whether and where it was changed."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm.audit.log import GENESIS, record_hash

__all__ = ["AuditProblem", "AuditReport", "verify_log"]


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """The first place a log breaks: its ``line`` (1-based), the ``record`` number the
    chain expected there, and what is wrong."""

    line: int
    record: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line} (record {self.record}): {self.reason}"


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The result of ``verify_log``: how many records are intact, the hash of the last
    one (``head``; keep it elsewhere to detect records cut from the end later), and the
    first ``problem``, if any."""

    path: Path
    records: int
    head: str
    problem: AuditProblem | None = None

    @property
    def ok(self) -> bool:
        """True when every record is intact and in order."""
        return self.problem is None

    def __str__(self) -> str:
        if self.problem is None:
            return f"{self.path}: {self.records} records, chain intact (head {self.head[:16]})"
        return f"{self.path}: tampered or damaged at {self.problem}"


def _check(record: Any, expected_seq: int, prev: str) -> str | None:
    if not isinstance(record, dict) or not {"seq", "prev", "hash"} <= record.keys():
        return "not an audit record (it lacks seq, prev or hash)"
    if record_hash(record) != record["hash"]:
        return "its content does not match its hash: the record was edited"
    if record["seq"] != expected_seq:
        return (
            f"found record {record['seq']} where record {expected_seq} belongs:"
            " records were removed, inserted or reordered"
        )
    if record["prev"] != prev:
        return "it does not follow the record before it: records were removed or reordered"
    return None


def verify_log(path: str | os.PathLike[str], *, head: str | None = None) -> AuditReport:
    """Check every record's hash and its link to the one before.

    ``head``, when given, is the hash the last record must have (records cut from the
    end cannot be seen otherwise). Raises ``OSError`` when the file cannot be read.
    """
    path = Path(path)
    prev, count, line_number = GENESIS, 0, 0
    with path.open("rb") as file:
        for line_number, raw in enumerate(file, start=1):
            record: Any = None
            problem: str | None
            if not raw.endswith(b"\n"):
                problem = "the last line is incomplete (no newline): cut short or edited"
            elif not raw.strip():
                problem = "an empty line: a record was removed or blanked"
            else:
                try:
                    record = json.loads(raw)
                except (UnicodeDecodeError, json.JSONDecodeError):
                    problem = "not valid JSON: the record was edited or damaged"
                else:
                    problem = _check(record, count, prev)
            if problem is not None:
                return AuditReport(path, count, prev, AuditProblem(line_number, count, problem))
            prev = record["hash"]
            count += 1
    if head is not None and head != prev:
        reason = f"the log ends here but its head should be {head[:16]}...: records were cut"
        return AuditReport(path, count, prev, AuditProblem(line_number + 1, count, reason))
    return AuditReport(path, count, prev)

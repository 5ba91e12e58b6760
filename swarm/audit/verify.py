"""Checking an audit log: ``verify_log`` says whether and where it was changed.

It checks every record's hash and its link to the one before (the plain chain), every
record's MAC when given the run's key, and the log's end against its anchored head
(``AuditHead``) when given one. Records are parsed strictly: a record with a key twice
(a JSON parser would keep only one of the values) is a problem, not a record. A call
that was asked about (its decision says ``asked``) and allowed must follow a receipt
(an ``approval`` record) approving it.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from swarm._text import plural
from swarm.audit.anchor import AuditHead, record_mac
from swarm.audit.log import GENESIS, record_hash

__all__ = ["AuditProblem", "AuditReport", "NotALog", "verify_log"]


class NotALog(ValueError):
    """The file is not an audit log at all (its first line is not a record)."""


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """The first place a log breaks: its ``line`` (1-based), the ``record`` number the
    chain expected there (0-based), and what is wrong."""

    line: int
    record: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line} (record {self.record}): {self.reason}"


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The result of ``verify_log``: how many records are intact, the hash of the last
    one (``head``), the first ``problem`` if any, whether MACs were checked (``keyed``:
    the key was given) and whether the end was checked against an anchored head
    (``anchored``). ``note`` says something a reader should know that is not a problem."""

    path: Path
    records: int
    head: str
    problem: AuditProblem | None = None
    keyed: bool = False
    anchored: bool = False
    note: str = ""

    @property
    def ok(self) -> bool:
        """True when every record is intact and in order."""
        return self.problem is None

    def __str__(self) -> str:
        if self.problem is not None:
            return f"{self.path}: tampered or damaged at {self.problem}"
        checks = ["chain intact"]
        checks.append(
            "MACs valid"
            if self.keyed
            else "MACs not checked (no key: anyone could recompute the chain)"
        )
        checks.append("head anchored" if self.anchored else "head not checked (no anchor)")
        records = plural(self.records, "record")
        line = f"{self.path}: {records}, {', '.join(checks)} (head {self.head[:16]})"
        return line + (f"\nnote: {self.note}" if self.note else "")


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key '{key}' appears twice")
        result[key] = value
    return result


def _parse(raw: bytes) -> tuple[Any, str | None]:
    if not raw.endswith(b"\n"):
        return None, "the last line is incomplete (no newline): cut short or edited"
    if not raw.strip():
        return None, "an empty line: a record was removed or blanked"
    try:
        return json.loads(raw, object_pairs_hook=_strict_object), None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, "not valid JSON: the record was edited or damaged"
    except ValueError as exc:
        return None, f"{exc}: the record was edited (a reader would see only one value)"


def _check(record: Any, expected_seq: int, prev: str, key: bytes | None) -> str | None:
    if not isinstance(record, dict) or not {"seq", "prev", "hash"} <= record.keys():
        return "not an audit record (it lacks seq, prev or hash)"
    if record_hash(record) != record["hash"]:
        return "its content does not match its hash: the record was edited"
    if key is not None:
        mac = record.get("mac")
        if not isinstance(mac, str) or not hmac.compare_digest(mac, record_mac(record, key)):
            return (
                "its MAC does not match: the record was forged or edited (hashes recomputed"
                " without the key)"
            )
    if record["seq"] != expected_seq:
        return (
            f"found record {record['seq']} where record {expected_seq} belongs:"
            " records were removed, inserted or reordered"
        )
    if record["prev"] != prev:
        return "it does not follow the record before it: records were removed or reordered"
    return None


def verify_log(
    path: str | os.PathLike[str],
    *,
    head: str | None = None,
    key: bytes | None = None,
    anchor: AuditHead | None = None,
    length: int | None = None,
) -> AuditReport:
    """Check every record's hash and its link to the one before; with ``key``, every
    record's MAC; with ``anchor``, where the log ends. With ``length``, the log is taken
    to be its first ``length`` bytes (whole lines: what comes before a last line a kill cut
    short).

    ``head``, when given, is the hash the last record must have. An empty log is a
    problem unless the anchor says it holds no records. Raises ``OSError`` when the file
    cannot be read and ``NotALog`` when its first line does not even look like an audit
    record (no ``prev`` or ``hash``) and no anchor says it is a log.
    """
    path = Path(path)
    keyed, anchored = key is not None, anchor is not None

    def report(
        count: int, last: str, problem: AuditProblem | None = None, note: str = ""
    ) -> AuditReport:
        return AuditReport(path, count, last, problem, keyed, anchored, note)

    if anchor is not None and key is not None and not anchor.seal_ok(key):
        return report(0, GENESIS, AuditProblem(0, 0, "the anchored head's seal does not match"))
    prev, count, line_number, ends = GENESIS, 0, 0, [("", "")]
    receipts = _Receipts()
    with path.open("rb") as file:
        lines = file if length is None else _within(file, length)
        for line_number, raw in enumerate(lines, start=1):
            record, problem = _parse(raw)
            if problem is None:
                problem = _check(record, count, prev, key) or receipts.check(record)
            if problem is not None:
                if count == 0 and anchor is None and b'"prev"' not in raw and b'"hash"' not in raw:
                    raise NotALog(f"{path} is not an audit log: line 1: {problem}")
                return report(count, prev, AuditProblem(line_number, count, problem))
            prev = record["hash"]
            ends.append((str(record["hash"]), str(record.get("mac", ""))))
            count += 1
    end = AuditProblem(line_number + 1, count, "")
    if count == 0 and (anchor is None or anchor.records > 0):
        return report(0, prev, _at(end, "the log is empty: every record was removed"))
    if head is not None and head != prev:
        reason = f"the log ends here but its head should be {head[:16]}...: records were cut"
        return report(count, prev, _at(end, reason))
    if anchor is None:
        return report(count, prev)
    if count < anchor.records:
        reason = f"the log ends here but its head says {anchor.records} records: records were cut"
        return report(count, prev, _at(end, reason))
    last = anchor.records - 1  # the anchored last record, which must be where it says
    line = AuditProblem(anchor.records, max(last, 0), "")
    if anchor.records and ends[anchor.records] != (anchor.hash, anchor.mac):
        reason = "it is not the record the head names: the log was replaced or rewritten"
        return report(count, prev, _at(line, reason))
    extra = count - anchor.records
    if extra == 1 and key is not None:  # a crash between a record and its anchor
        note = "one record after the anchored head (written just before the run stopped)"
        return report(count, prev, note=note)
    if extra:
        reason = f"{extra} records after the anchored head: records were appended"
        return report(
            count, prev, _at(AuditProblem(anchor.records + 1, anchor.records, ""), reason)
        )
    return report(count, prev)


def _within(file: BinaryIO, length: int) -> Iterator[bytes]:
    """The lines of ``file`` in its first ``length`` bytes, read one at a time (a log
    is never held whole); a line crossing ``length`` is cut there."""
    left = length
    for raw in file:
        if left <= 0:
            return
        yield raw[:left]
        left -= len(raw)


class _Receipts:
    """Each approval receipt seen so far, to check that every call that was asked about
    and allowed follows a receipt approving it."""

    def __init__(self) -> None:
        self.seen: dict[tuple[Any, Any], dict[str, Any]] = {}

    def check(self, record: dict[str, Any]) -> str | None:
        key = (record.get("path"), record.get("call_id"))
        if record.get("event") == "approval":
            self.seen[key] = record
            return None
        if record.get("event") != "decision" or not record.get("asked"):
            return None
        receipt = self.seen.pop(key, None)
        if record.get("decision") != "allow":
            return None
        if receipt is None or receipt.get("approved") is not True:
            return (
                "a call that needed approval was allowed without a receipt approving it:"
                " the receipt was removed, or the call ran unapproved"
            )
        return None


def _at(where: AuditProblem, reason: str) -> AuditProblem:
    return AuditProblem(where.line, where.record, reason)

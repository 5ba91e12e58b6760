"""What a changed policy would have done to recorded runs: their guard decisions replayed.

Every call of a run has a ``decision`` record in its audit log: the tool, the (redacted)
arguments, the agent path and role, the decision and the rule that made it. Replaying
asks a policy to decide each of those calls again, offline (nothing runs), and keeps the
calls whose decision would change:

- ``loosened``: a call the policy denied would now be allowed, or asked about;
- ``tightened``: an allowed call would now be denied, or asked about.

A call denied by another guard (a parent's ceiling, a protected path, the sandbox, a rate
limit) stays denied whatever the policy says, and a call that did not validate never
reached the guards: neither is replayed. Arguments the audit log redacted (a secret in
them) are replayed as recorded, and the change says so (``redacted``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from swarm.audit.log import args_hash
from swarm.errors import ConfigError
from swarm.guards.policy import Policy
from swarm.guards.rules import Unjudgeable

__all__ = [
    "AUDIT_FILE",
    "Change",
    "ChangedCall",
    "ReplayReport",
    "audit_logs",
    "recorded_calls",
    "replay_decisions",
]

AUDIT_FILE = "audit.jsonl"
"""The audit log's name in a run's record directory."""

Change = Literal["loosened", "tightened"]
"""How a decision changes: ``loosened`` (more is allowed) or ``tightened``."""
_STRICTNESS = {"deny": 0, "ask": 1, "allow": 2}


@dataclass(frozen=True, slots=True)
class ChangedCall:
    """One recorded call whose decision a policy changes: where it was (``log``, the
    agent ``path``, ``tool``, ``arguments``), the decision and rule recorded
    (``old``, ``old_rule``) and the policy's (``new``, ``new_rule``, ``reason``)."""

    log: Path
    path: str
    tool: str
    arguments: Mapping[str, Any]
    old: str
    old_rule: str | None
    new: str
    new_rule: str
    reason: str
    change: Change
    redacted: bool = False


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """The calls replayed (``replayed``) and those whose decision changes (``changed``)."""

    replayed: int
    changed: tuple[ChangedCall, ...]

    def count(self, change: Change) -> int:
        """How many calls ``change``."""
        return sum(1 for c in self.changed if c.change == change)

    def fails(self, on: str | None) -> bool:
        """Whether the changes meet ``--fail-on``: ``loosened``, ``tightened`` or
        ``any`` (``None``: never)."""
        if on == "any":
            return bool(self.changed)
        return any(c.change == on for c in self.changed)


def audit_logs(runs: Iterable[Path]) -> list[Path]:
    """The audit logs of ``runs``: each an audit log, a run's record directory, or a
    directory of runs (every run in it, by name). Raises ``ConfigError`` for a path
    that is none of these."""
    found: list[Path] = []
    for run in runs:
        if run.is_file():
            found.append(run)
        elif (run / AUDIT_FILE).is_file():
            found.append(run / AUDIT_FILE)
        elif run.is_dir():
            inside = sorted(p / AUDIT_FILE for p in run.iterdir() if (p / AUDIT_FILE).is_file())
            if not inside:
                raise ConfigError("no run record here (no audit.jsonl in it or below)", path=run)
            found += inside
        else:
            raise ConfigError("no such run, run directory or audit log", path=run)
    return found


def recorded_calls(log: Path) -> Iterator[dict[str, Any]]:
    """The ``decision`` records of audit log ``log``. Raises ``ConfigError`` (naming the
    file and line) for a line that is not an audit record."""
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the audit log: {exc}", path=log) from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise ConfigError("not an audit record (not JSON)", path=log, line=number) from None
        if not isinstance(record, dict) or "event" not in record:
            raise ConfigError("not an audit record (no 'event')", path=log, line=number)
        if record["event"] == "decision":
            yield record


def _replayable(record: Mapping[str, Any]) -> bool:
    """Whether the policy decided the call (or a later guard allowed it): a denial by
    another guard, or an invalid call, is not the policy's to change."""
    decision = record.get("decision")
    if decision == "allow":
        return True
    guard = record.get("guard") or ""
    return decision == "deny" and isinstance(guard, str) and guard.startswith("policy:")


def replay_decisions(
    logs: Iterable[Path], policy_for: Callable[[str], Policy | None]
) -> ReplayReport:
    """Replay every call of ``logs`` under the policy ``policy_for`` gives its role
    (``None``: that role's calls are skipped). Raises ``ConfigError`` for a log that
    does not read."""
    replayed = 0
    changed: list[ChangedCall] = []
    for log in logs:
        for record in recorded_calls(log):
            role = str(record.get("role") or "")
            policy = policy_for(role)
            arguments = record.get("arguments")
            if policy is None or not _replayable(record) or not isinstance(arguments, dict):
                continue
            replayed += 1
            tool = str(record.get("tool"))
            try:
                decision = policy.decide(tool, arguments, role=role or None)
                new, rule = decision.action, decision.rule
                new_rule = rule.id if rule is not None else "default"
                reason = decision.reason
            except Unjudgeable as exc:
                new, new_rule, reason = "deny", "unparseable", str(exc)
            old = str(record["decision"])
            # An ask answered then is recorded as its answer, with the ask's rule.
            same_ask = new == "ask" and new_rule == record.get("rule")
            if _STRICTNESS[new] == _STRICTNESS[old] or same_ask:
                continue
            changed.append(
                ChangedCall(
                    log,
                    str(record.get("path")),
                    tool,
                    arguments,
                    old,
                    record.get("rule"),
                    new,
                    new_rule,
                    reason,
                    "loosened" if _STRICTNESS[new] > _STRICTNESS[old] else "tightened",
                    redacted=record.get("args_hash") != args_hash(arguments),
                )
            )
    return ReplayReport(replayed, tuple(changed))

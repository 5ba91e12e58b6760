"""What ``summary.json`` holds, written when a segment of a run ends: the segment's
outcome, every segment so far and their totals, the run's config, and the audit log's head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm.audit import AuditHead
from swarm.record.manifest import RunConfig
from swarm.record.outcome import RunOutcome
from swarm.record.record import segment_totals

__all__ = ["RunSummary", "segment_totals"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The record of a run at the end of its segment ``segment`` (1 for the first run,
    then one more for each resume): what the segment did (``outcome``), when it started,
    the segments before it as their summaries and the journal recorded them
    (``before``), what the run is (``config``), where its audit log is and the head it
    was anchored at, and, for a scripted run, how many turns of each role's script were
    taken (``script_used``, what a resumed run goes on from)."""

    outcome: RunOutcome
    segment: int
    started: str
    config: RunConfig
    audit_log: Path
    audit_head: AuditHead
    before: Sequence[Mapping[str, Any]] = ()
    script_used: Mapping[str, int] | None = None

    @property
    def resumed(self) -> int:
        """How many times the run was resumed before this segment ended."""
        return self.segment - 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON document written as ``summary.json``."""
        document = self.outcome.summary()
        this = {
            "segment": self.segment,
            "started": self.started,
            "stop_reason": document["stop_reason"],
            "interrupted": self.outcome.interrupted,
            "usage": document["usage"],
            "duration_seconds": document["duration_seconds"],
            "calls": document["calls"],
        }
        segments = [*(dict(s) for s in self.before), this]
        document["segments"] = segments
        document["totals"] = segment_totals(segments)
        document["config"] = self.config.to_dict()
        document["resumed"] = self.resumed
        document["audit"] = {"log": str(self.audit_log), **self.audit_head.to_dict()}
        if self.script_used is not None:
            document["script_used"] = dict(self.script_used)
        return document

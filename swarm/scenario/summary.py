"""What ``summary.json`` holds, written when a segment of a run ends: the segment's
outcome, every segment so far and their totals, the run's config, and the audit log's head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm.audit import AuditHead
from swarm.scenario.manifest import RunConfig
from swarm.scenario.outcome import RunOutcome

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


def segment_totals(segments: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The usage, dollars and duration of all ``segments`` (as ``summary.json`` lists
    them); the cache parts of the usage when any segment had them, and ``cost_usd`` as
    ``None`` when any segment's cost is unknown."""
    usage = {"input_tokens": 0, "output_tokens": 0}
    parts = {"cache_read_tokens": 0, "cache_write_tokens": 0, "cache_write_1h_tokens": 0}
    duration = 0.0
    cost: float | None = 0.0
    for segment in segments:
        used = segment.get("usage") or {}
        for counts in (usage, parts):
            for key in counts:
                counts[key] += int(used.get(key) or 0)
        duration += float(segment.get("duration_seconds") or 0)
        spent = segment.get("cost_usd")
        cost = cost + spent if cost is not None and isinstance(spent, int | float) else None
    if any(parts.values()):
        usage.update(parts)
    return {
        "usage": usage,
        "cost_usd": cost if segments else None,
        "duration_seconds": round(duration, 3),
        "segments": len(segments),
    }

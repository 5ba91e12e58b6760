"""What a run of several segments says as a whole: the sandbox a resumed run works in,
the files its earlier segments changed, and its tool calls over every segment."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.text import Text

from swarm._visible import visible
from swarm.errors import ConfigError
from swarm.record.manifest import RunManifest
from swarm.scenario.sandboxing import sandbox_line
from swarm.undo import CallChanges, Change, PathState

__all__ = ["earlier_changes", "resumed_sandbox", "run_calls"]


def resumed_sandbox(run: Path) -> str | None:
    """The sandbox line of the run recorded at ``run``, as ``swarm run`` prints it
    (``None`` when the record cannot say: resuming then says why)."""
    try:
        document = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        scenario = RunManifest.from_dict(document, path=run / "manifest.json").config.scenario()
        return sandbox_line(scenario)
    except (OSError, ValueError, TypeError, KeyError, ConfigError):
        return None


_MARKS = {"added": ("+", "green"), "changed": ("~", "yellow"), "deleted": ("-", "red")}


def earlier_changes(calls: Sequence[CallChanges]) -> Text | None:
    """The files the calls of a run's earlier segments changed, each with the agents
    that changed it (as the summary's ``Files:``); ``None`` when they changed none."""
    first: dict[str, PathState] = {}
    last: dict[str, PathState] = {}
    agents: dict[str, list[str]] = {}
    for call in calls:
        for change in call.changes:
            if change.path.startswith(".git/"):
                continue  # as the summary: .git is shown by what it means, not file by file
            first.setdefault(change.path, change.before)
            last[change.path] = change.after
            who = agents.setdefault(change.path, [])
            if call.agent not in who:
                who.append(call.agent)
    rows = []
    for path in sorted(first):
        before, after = first[path], last[path]
        if before.same(after):
            continue
        rows.append((Change(path, before, after).kind, path))
    if not rows:
        return None
    text = Text("Files of the earlier segments:", style="bold")
    for kind in _MARKS:
        mark, style = _MARKS[kind]
        for said, path in rows:
            if said == kind:
                by = ", ".join(visible(agent) for agent in agents[path])
                text.append(f"\n  {mark} {visible(path)}  ({kind})  by {by}", style=style)
    return text


def run_calls(data: dict[str, Any]) -> tuple[int, int]:
    """A run's allowed and denied tool calls over all its segments (``summary.json``)."""
    segments = [s for s in data.get("segments") or () if isinstance(s, dict)]
    counts: list[dict[str, Any]] = [
        s["calls"] for s in segments if isinstance(s.get("calls"), dict)
    ]
    if not counts:
        counts = [data.get("calls") or {}]
    allowed = sum(int(c.get("allowed", 0) or 0) for c in counts)
    denied = sum(int(c.get("denied", 0) or 0) for c in counts)
    return allowed, denied

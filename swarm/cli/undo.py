"""``swarm runs undo`` and ``swarm runs diff``: take a run's calls back, or show what
they did. Paths and ids a model chose are shown ``visible``."""

from __future__ import annotations

import argparse
import sys

from swarm._text import plural
from swarm._visible import visible
from swarm.cli.exits import OK
from swarm.cli.records import find_run
from swarm.record.record import RunRecord

__all__ = ["cmd_runs_diff", "cmd_runs_undo"]


def cmd_runs_undo(args: argparse.Namespace) -> int:
    """Put the run's workspace back as it was before the chosen calls (or the whole
    run); a refusal names each path and exits 1 with nothing changed."""
    record = RunRecord(find_run(args.run, args.runs_dir))
    result = record.undo(call=args.call, agent=args.agent, since=args.since, force=args.force)
    calls = ", ".join(visible(f"{c.call} ({c.agent})") for c in result.undone) or "none"
    print(f"Undid {plural(len(result.undone), 'call')}: {calls}")
    for line in result.lines():
        print(f"  {line}")
    if not result.restored:
        print("Nothing to put back: the workspace is already as it was before them.")
    print(f"Recorded as a new segment of {record.dir}")
    return OK


def cmd_runs_diff(args: argparse.Namespace) -> int:
    """Print what the run's calls (or one call) did to the workspace."""
    record = RunRecord(find_run(args.run, args.runs_dir))
    text = record.diff(call=args.call)
    sys.stdout.write(text or "No call of this run changed the workspace.\n")
    return OK

"""The HTML report of a run: ``swarm runs report RUN`` and ``swarm run --report``.

``write_report`` reads a run record and writes one self-contained HTML file (inline
styles and script, nothing fetched). It answers "what went wrong" first: the counts of
denied calls, errors, tool calls, agents, the cost and the time at the top, each a link
to its items, and the list of every denial and error; then the run's header and audit
check, a timeline of every agent with its model and tool calls on a time axis, the files
changed with the agents that changed them and their diffs, usage per agent, and the
agents as the delegation tree, each with its conversation and calls (the guard's
decision and rule; code a call wrote shown as code).

The modules: ``data`` reads the record, ``text`` escapes what the run wrote, ``agents``
draws the timeline and the tree, ``tables`` the files, approvals and usage, and ``html``
puts the page together.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarm.errors import ConfigError
from swarm.report.data import load_run
from swarm.report.html import render_html

__all__ = ["build_report", "write_report"]


def build_report(run_dir: Path) -> str:
    """The report of the run recorded in ``run_dir``, as an HTML string. Raises
    ``ConfigError`` when ``run_dir`` is not a run record."""
    return render_html(load_run(Path(run_dir)))


def write_report(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report of ``run_dir`` to ``out`` (default: ``report.html`` in the
    record), atomically and readable by the user only; returns the path written. Raises
    ``ConfigError`` when the record cannot be read or the file cannot be written."""
    run_dir = Path(run_dir)
    target = Path(out) if out is not None else run_dir / "report.html"
    text = build_report(run_dir)
    partial = target.with_name(target.name + ".partial")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(partial, target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ConfigError(f"cannot write the report: {exc.strerror or exc}", path=target) from None
    return target

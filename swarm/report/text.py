"""How the report writes a value from the run into HTML: escaped and made visible.

Every value that came from the run (what the model wrote, arguments, results, file
names, diffs) goes through ``one_line`` or ``block``: HTML-escaped (quotes too, so it is
safe in an attribute) after ``swarm._visible.visible`` wrote its control, bidirectional
and invisible characters as escapes. Newlines are kept only in a block (``<pre>``).
"""

from __future__ import annotations

from html import escape
from typing import Any

from swarm._visible import visible

__all__ = ["block", "one_line", "seconds"]


def one_line(value: Any) -> str:
    """A value shown on one line (a name, a path, a reason): HTML-escaped, visible."""
    return escape(visible(str(value)), quote=True)


def block(value: Any) -> str:
    """A value shown as a block of lines (``<pre>``): newlines and tabs kept."""
    return escape(visible(str(value), multiline=True), quote=True)


def seconds(value: float | None) -> str:
    """A duration as a person reads it: ``375 ms``, ``12.5 s``; ``-`` when unknown."""
    if value is None:
        return "-"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"

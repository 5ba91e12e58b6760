"""Tool results too large for the model: saved whole to a file, the model given the head.

A result longer than the agent's ``max_result_chars`` is written to the run's output
directory (``RunScope.output_dir``: the run record's ``outputs/`` in scenario runs, else
``$XDG_STATE_HOME/swarm/outputs/<run id>``), and the model receives its first part, its
size and the ``read_output`` tool, which reads the rest by call id and offset. The tool
reads only the outputs this agent's run saved: the model names a call id, never a path.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from pathlib import Path

import anyio

from swarm.errors import ToolError
from swarm.messages import ToolResultBlock, ToolUseBlock
from swarm.scope import RunScope
from swarm.tools import Tool

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "READ_OUTPUT", "read_output_tool", "spill"]

DEFAULT_MAX_RESULT_CHARS = 80_000
"""About 20,000 tokens: longer results are saved to a file and the model gets the head."""

READ_OUTPUT = "read_output"
_HEAD_SHARE = 4  # the model sees a quarter of the limit at first
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _default_dir(scope: RunScope) -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "swarm" / "outputs" / (scope.run_id or uuid.uuid4().hex[:12])


async def spill(
    scope: RunScope, use: ToolUseBlock, block: ToolResultBlock, limit: int
) -> ToolResultBlock:
    """Save ``block``'s whole text and return the result the model gets instead: the
    head, the size, and how to read the rest. ``details["saved_output"]`` is the file."""
    text = block.text
    directory = scope.output_dir or _default_dir(scope)
    prefix = _UNSAFE.sub("_", scope.path) + "-" if scope.path else ""
    path = directory / f"{prefix}{_UNSAFE.sub('_', use.id)}.txt"

    def write() -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)

    import anyio.to_thread  # a long result: loaded on first use

    await anyio.to_thread.run_sync(write)
    head = text[: max(1, limit // _HEAD_SHARE)]
    note = (
        f"\n\n[Output truncated: {len(text):,} characters in all, the first {len(head):,}"
        f" shown. The whole output is saved; call {READ_OUTPUT}(call_id={use.id!r},"
        f" offset={len(head)}) to read on.]"
    )
    details = {**(block.details or {}), "saved_output": str(path), "output_chars": len(text)}
    return ToolResultBlock(block.tool_use_id, head + note, block.is_error, details)


def read_output_tool(saved: Mapping[str, str], *, chunk: int) -> Tool[None]:
    """The ``read_output`` tool over the outputs in ``saved`` (call id → file)."""

    async def read_output(call_id: str, offset: int = 0) -> str:
        """Read a saved tool output from a character offset on."""
        path = saved.get(call_id)
        if path is None:
            known = ", ".join(sorted(saved)) or "none"
            raise ToolError(f"No saved output for call '{call_id}'. Saved: {known}.")
        text = await anyio.Path(path).read_text(encoding="utf-8")
        if offset < 0 or offset >= len(text):
            raise ToolError(f"offset {offset} is outside the output (0 to {len(text) - 1}).")
        part = text[offset : offset + chunk]
        end = offset + len(part)
        more = f" Call again with offset={end} to read on." if end < len(text) else ""
        return f"{part}\n\n[characters {offset:,} to {end:,} of {len(text):,}.{more}]"

    return Tool(
        READ_OUTPUT,
        read_output,
        "Read the rest of a tool output that was too long to show whole.",
        context=None,
    )

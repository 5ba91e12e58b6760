"""notes: a scratchpad kept per workspace (``.swarm/notes.md``), shared by every agent.

The handler is a plain function: ``Tool`` runs it in a worker thread.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from swarm.errors import ToolError
from swarm.run import current_scope
from swarm.toolbox._paths import STATE_DIR, Workspace
from swarm.tools import Field, Tool

__all__ = ["notes_tool"]

NOTES_FILE = f"{STATE_DIR}/notes.md"


def notes_tool(workspace: Workspace, *, output_limit: int) -> Tool[None]:
    """The ``notes`` tool of ``workspace``.

    Notes live in ``.swarm/notes.md`` as a Markdown list, one item per note, stamped with
    the time (UTC) and the agent that wrote it; they outlast the run, so a later run on
    the same workspace reads them. ``output_limit`` caps what ``list`` shows (the latest
    notes are kept).
    """
    lock = threading.Lock()

    def notes(
        action: Annotated[
            Literal["add", "list", "clear"],
            Field(description="add: keep a note; list: show every note; clear: delete them all."),
        ],
        text: Annotated[str, Field(description="The note to keep (for add).")] = "",
    ) -> str:
        path = workspace.resolve(NOTES_FILE)
        with lock:
            try:
                return _apply(path, action, text, output_limit)
            except OSError as exc:
                raise ToolError(
                    f"the notes in {NOTES_FILE} could not be used: {exc.strerror or exc}"
                ) from None

    return Tool(
        "notes",
        notes,
        "Notes that outlast this conversation and are shared with the other agents working"
        " in this workspace: add a finding, decision or piece of context worth keeping; list"
        " them to see what you and others noted; clear them all.",
    )


def _apply(path: Path, action: str, text: str, output_limit: int) -> str:
    if action == "add":
        lines = [line.rstrip() for line in text.strip().splitlines()]
        if not lines:
            raise ToolError("give the note's text in 'text'")
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
        author = current_scope().path
        by = f" {author}" if author else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"- [{stamp}{by}] " + "\n  ".join(lines) + "\n")
        return "Noted."
    content = path.read_text(encoding="utf-8").strip() if path.exists() else ""
    if action == "clear":
        path.unlink(missing_ok=True)
        return f"Notes cleared ({_count(content)} removed)."
    if not content:
        return "No notes yet."
    if len(content) > output_limit:
        content = content[len(content) - output_limit :]
        content = "[… older notes cut …]\n" + content[content.find("\n- [") + 1 :]
    return content


def _count(content: str) -> int:
    return sum(1 for line in content.splitlines() if line.startswith("- ["))

"""notes: a scratchpad kept per workspace (``.swarm/notes.md``), shared by every agent."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

import anyio

from swarm.errors import ToolError
from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Tool

__all__ = ["notes_tool"]


def notes_tool(workspace: Workspace) -> Tool[None]:
    """The ``notes`` tool of ``workspace``."""
    path = workspace.root / ".swarm" / "notes.md"
    lock = anyio.Lock()

    async def notes(
        action: Annotated[
            Literal["add", "list", "clear"],
            Field(description="add a note, list all notes, or clear them"),
        ],
        text: Annotated[str, Field(description="The note (for add).")] = "",
    ) -> str:
        async with lock:
            if action == "add":
                if not text.strip():
                    raise ToolError("give the note's text")
                path.parent.mkdir(parents=True, exist_ok=True)
                stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"- [{stamp}] {' '.join(text.split())}\n")
                return "Noted."
            if action == "clear":
                path.unlink(missing_ok=True)
                return "Notes cleared."
            if not path.exists() or not path.read_text(encoding="utf-8").strip():
                return "No notes yet."
            return path.read_text(encoding="utf-8").rstrip()

    return Tool(
        "notes",
        notes,
        "Keep notes for later (and for the other agents of the team): add, list, clear.",
    )

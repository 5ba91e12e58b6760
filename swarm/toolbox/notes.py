"""notes: a scratchpad kept per workspace (``.swarm/notes.md``), shared by every agent.

The handler is a plain function: ``Tool`` runs it in a worker thread.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from typing import Annotated, Literal

from swarm.errors import ToolError
from swarm.scope import current_scope
from swarm.toolbox._fs import append_at, open_dir, open_leaf, require_single_file
from swarm.toolbox._paths import STATE_DIR, Workspace
from swarm.tools import Field, Tool

__all__ = ["notes_tool"]

NOTES_FILE = f"{STATE_DIR}/notes.md"
_NOTES = (STATE_DIR, "notes.md")


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
        with lock:
            try:
                # Opened a component at a time like the file tools' paths, so a shell
                # command swapping .swarm or the notes file for a link cannot redirect it.
                with open_dir(workspace.root, _NOTES[:1], create=action == "add") as state:
                    return _apply(state, action, text, output_limit)
            except FileNotFoundError:
                return "No notes yet." if action == "list" else "Notes cleared (0 removed)."
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


def _apply(state: int, action: str, text: str, output_limit: int) -> str:
    """Do ``action`` on the notes file of the open ``.swarm`` directory ``state``."""
    if action == "add":
        lines = [line.rstrip() for line in text.strip().splitlines()]
        if not lines:
            raise ToolError("give the note's text in 'text'")
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
        author = current_scope().path
        by = f" {author}" if author else ""
        note = f"- [{stamp}{by}] " + "\n  ".join(lines) + "\n"
        append_at(state, _NOTES, note.encode("utf-8"))
        return "Noted."
    content, cut = _read(state, max(output_limit * 4, 4096))
    content = content.strip()
    if action == "clear":
        if content or cut:
            os.unlink(_NOTES[-1], dir_fd=state)
        return f"Notes cleared ({_count(content)}{'+' if cut else ''} removed)."
    if not content:
        return "No notes yet."
    if cut or len(content) > output_limit:
        content = content[max(0, len(content) - output_limit) :]
        content = "[… older notes cut …]\n" + content[content.find("\n- [") + 1 :]
    return content


def _read(state: int, most: int) -> tuple[str, bool]:
    """The last ``most`` bytes of the notes file's text ("" when there is none), and
    whether there was more before them (never read: the file may be any size)."""
    try:
        fd, info = open_leaf(state, _NOTES)
    except FileNotFoundError:
        return "", False
    try:
        require_single_file(info, NOTES_FILE, "the notes tool does not read it")
        cut = info.st_size > most
        with open(fd, "rb", closefd=False) as handle:
            handle.seek(max(0, info.st_size - most))
            return handle.read(most).decode("utf-8", "replace"), cut
    finally:
        os.close(fd)


def _count(content: str) -> int:
    return sum(1 for line in content.splitlines() if line.startswith("- ["))

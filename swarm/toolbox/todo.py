"""todo: a task list kept in SQLite (``.swarm/todo.db``) in the workspace.

The handler is a plain function: ``Tool`` runs it in a worker thread, so the blocking
sqlite3 calls never hold up the event loop. Each call opens its own connection; SQLite's
locking keeps concurrent calls (from several agents, or several toolboxes) consistent.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import closing
from typing import Annotated, Literal

from swarm.errors import ToolError
from swarm.toolbox._fs import open_dir
from swarm.toolbox._paths import STATE_DIR, Workspace
from swarm.tools import Field, Tool

__all__ = ["todo_tool"]

_DB = "todo.db"
TODO_FILE = f"{STATE_DIR}/{_DB}"
MAX_TASK_CHARS = 500
"""The longest task text ``add`` takes: a task is a line, not a document."""
MAX_TASKS = 200
"""The most tasks the list holds, done ones included: what ``list`` returns stays under
``MAX_TASKS * MAX_TASK_CHARS`` characters, and a model adding tasks in a loop stops
filling the disk and its own context."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    done_at TEXT
)
"""


def _connect(workspace: Workspace) -> sqlite3.Connection:
    """A connection to the task list, after checking that neither ``.swarm`` nor the
    database's files are links. sqlite3 opens its files by name, so a swap between this
    check and the open is narrowed to that moment, not excluded as in the file tools."""
    with open_dir(workspace.root, (STATE_DIR,), create=True) as state:
        for name in (_DB, f"{_DB}-journal", f"{_DB}-wal", f"{_DB}-shm"):
            try:
                info = os.stat(name, dir_fd=state, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                raise ToolError(
                    f"{STATE_DIR}/{name} is not a plain file (a link or something else);"
                    " the todo tool does not open it"
                )
    conn = sqlite3.connect(workspace.root / TODO_FILE, timeout=10)
    conn.execute(SCHEMA)
    return conn


def _render(rows: list[tuple[int, str, str]]) -> str:
    if not rows:
        return "The task list is empty."
    done = sum(1 for _, status, _ in rows if status == "done")
    lines = [f"{i}. [{'x' if s == 'done' else ' '}] {t}" for i, s, t in rows]
    summary = f"({len(rows) - done} open, {done} done)"
    return "\n".join([*lines, summary])


def todo_tool(workspace: Workspace) -> Tool[None]:
    """The ``todo`` tool of ``workspace``: tasks with ids (never reused) and a status,
    ``open`` or ``done``, kept across runs."""

    def todo(
        action: Annotated[
            Literal["add", "list", "done", "remove"],
            Field(
                description="add: a new open task; list: every task with its id and status;"
                " done: mark a task done; remove: delete a task."
            ),
        ],
        text: Annotated[str, Field(description="The task (for add).")] = "",
        task_id: Annotated[
            int | None, Field(description="The task's id, as list shows it (for done and remove).")
        ] = None,
    ) -> str:
        try:
            with closing(_connect(workspace)) as conn, conn:
                return _apply(conn, action, " ".join(text.split()), task_id)
        except (sqlite3.Error, OSError) as exc:
            raise ToolError(f"the task list in {TODO_FILE} could not be used: {exc}") from None

    return Tool(
        "todo",
        todo,
        "A task list for the work in this workspace, kept across runs and shared with the"
        " other agents: add tasks as you plan, mark them done as you finish them, list them"
        " to see what is left.",
    )


def _apply(conn: sqlite3.Connection, action: str, text: str, task_id: int | None) -> str:
    if action == "add":
        if not text:
            raise ToolError("give the task in 'text'")
        if len(text) > MAX_TASK_CHARS:
            raise ToolError(
                f"the task is {len(text):,} characters; at most {MAX_TASK_CHARS} (keep the"
                " details in a file, and the task short)"
            )
        (count,) = conn.execute("SELECT count(*) FROM tasks").fetchone()
        if count >= MAX_TASKS:
            raise ToolError(
                f"the task list holds {count} tasks, the most it keeps; remove done or"
                " dropped ones first"
            )
        cursor = conn.execute("INSERT INTO tasks (text) VALUES (?)", (text,))
        return f"Added task {cursor.lastrowid}: {text}"
    if action == "list":
        rows = conn.execute("SELECT id, status, text FROM tasks ORDER BY id").fetchall()
        return _render(rows)
    if task_id is None:
        raise ToolError(f"give the id of the task in 'task_id' (for {action})")
    row = conn.execute("SELECT status, text FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        raise ToolError(f"there is no task {task_id}; list the tasks to see their ids")
    status, task = row
    if action == "done":
        if status == "done":
            return f"Task {task_id} was already done: {task}"
        conn.execute(
            "UPDATE tasks SET status = 'done', done_at = datetime('now') WHERE id = ?",
            (task_id,),
        )
        return f"Task {task_id} done: {task}"
    conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
    return f"Removed task {task_id}: {task}"

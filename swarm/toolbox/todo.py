"""todo: a task list kept in SQLite (``.swarm/todo.db``) in the workspace."""

from __future__ import annotations

import sqlite3
from typing import Annotated, Literal

import anyio
import anyio.to_thread

from swarm.errors import ToolError
from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Tool

__all__ = ["todo_tool"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
)
"""


def todo_tool(workspace: Workspace) -> Tool[None]:
    """The ``todo`` tool of ``workspace``."""
    path = workspace.root / ".swarm" / "todo.db"
    lock = anyio.Lock()

    def run(action: str, text: str, task_id: int | None) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path, timeout=10) as conn:
            conn.execute(SCHEMA)
            if action == "add":
                if not text.strip():
                    raise ToolError("give the task's text")
                cursor = conn.execute("INSERT INTO tasks (text) VALUES (?)", (text.strip(),))
                return f"Added task {cursor.lastrowid}."
            if action in ("done", "remove"):
                if task_id is None:
                    raise ToolError(f"give the id of the task to mark {action}")
                if action == "done":
                    cursor = conn.execute(
                        "UPDATE tasks SET status = 'done' WHERE id = ?", (task_id,)
                    )
                else:
                    cursor = conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
                if cursor.rowcount == 0:
                    raise ToolError(f"there is no task {task_id} (list the tasks to see ids)")
                return f"Task {task_id} {'done' if action == 'done' else 'removed'}."
            rows = conn.execute("SELECT id, status, text FROM tasks ORDER BY id").fetchall()
        if not rows:
            return "The task list is empty."
        return "\n".join(f"{i}. [{'x' if s == 'done' else ' '}] {t}" for i, s, t in rows)

    async def todo(
        action: Annotated[
            Literal["add", "list", "done", "remove"],
            Field(description="add a task, list tasks, mark one done, or remove one"),
        ],
        text: Annotated[str, Field(description="The task (for add).")] = "",
        id: Annotated[int | None, Field(description="The task's id (for done/remove).")] = None,
    ) -> str:
        async with lock:
            return await anyio.to_thread.run_sync(run, action, text, id)

    return Tool(
        "todo", todo, "A task list for the work in this workspace: add, list, done, remove."
    )

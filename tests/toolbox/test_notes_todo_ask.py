"""notes, todo and ask_user: persistence per workspace, and the no-person case."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import RunScope, Tool, ToolError
from swarm.scope import use_scope
from swarm.toolbox import make_toolbox
from swarm.toolbox.todo import MAX_TASKS

# notes


@pytest.mark.anyio
async def test_notes_are_kept_in_the_workspace_across_toolboxes(ws: Path) -> None:
    notes = make_toolbox(ws)["notes"]
    assert await notes(action="list") == "No notes yet."
    assert await notes(action="add", text="the API uses cursor paging") == "Noted."
    later = make_toolbox(ws)["notes"]  # another toolbox, as a later run would have
    listed = await later(action="list")
    assert str(listed).startswith("- [") and str(listed).endswith("] the API uses cursor paging")
    assert (ws / ".swarm" / "notes.md").read_text().endswith("] the API uses cursor paging\n")


@pytest.mark.anyio
async def test_notes_keep_line_breaks_and_the_author(tools: dict[str, Tool[Any]]) -> None:
    with use_scope(RunScope(path="orchestrator/developer#1")):
        await tools["notes"](action="add", text="build with:\n  make all\n")
    listed = str(await tools["notes"](action="list"))
    assert listed.endswith(" orchestrator/developer#1] build with:\n    make all")


@pytest.mark.anyio
async def test_notes_clear(tools: dict[str, Tool[Any]]) -> None:
    await tools["notes"](action="add", text="one")
    await tools["notes"](action="add", text="two\nlines")
    assert await tools["notes"](action="clear") == "Notes cleared (2 removed)."
    assert await tools["notes"](action="list") == "No notes yet."


@pytest.mark.anyio
async def test_notes_list_keeps_the_latest_under_the_cap(ws: Path) -> None:
    notes = make_toolbox(ws, output_limit=200)["notes"]
    for n in range(20):
        await notes(action="add", text=f"note number {n}")
    listed = str(await notes(action="list"))
    assert listed.startswith("[… older notes cut …]\n- [")
    assert listed.endswith("note number 19") and "note number 0\n" not in listed


@pytest.mark.anyio
async def test_a_note_needs_text(tools: dict[str, Tool[Any]]) -> None:
    with pytest.raises(ToolError, match="give the note's text in 'text'"):
        await tools["notes"](action="add", text="  \n")


@pytest.mark.anyio
async def test_unusable_notes_are_a_clear_error(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / ".swarm" / "notes.md").mkdir(parents=True)
    with pytest.raises(ToolError, match=r"the notes in \.swarm/notes\.md could not be used"):
        await tools["notes"](action="add", text="x")


@pytest.mark.anyio
async def test_an_unknown_notes_action_is_refused(tools: dict[str, Tool[Any]]) -> None:
    with pytest.raises(ToolError, match=r"field 'action': Input should be 'add', 'list'"):
        await tools["notes"](action="delete")


# todo


@pytest.mark.anyio
async def test_todo_keeps_tasks_with_ids_and_statuses(tools: dict[str, Tool[Any]]) -> None:
    todo = tools["todo"]
    assert await todo(action="list") == "The task list is empty."
    assert await todo(action="add", text="write  the\ntests") == "Added task 1: write the tests"
    assert await todo(action="add", text="ship") == "Added task 2: ship"
    assert await todo(action="done", task_id=1) == "Task 1 done: write the tests"
    assert await todo(action="done", task_id=1) == "Task 1 was already done: write the tests"
    assert await todo(action="list") == "1. [x] write the tests\n2. [ ] ship\n(1 open, 1 done)"


@pytest.mark.anyio
async def test_todo_persists_in_sqlite_across_toolboxes(ws: Path) -> None:
    await make_toolbox(ws)["todo"](action="add", text="first")
    later = make_toolbox(ws)["todo"]
    assert await later(action="list") == "1. [ ] first\n(1 open, 0 done)"
    with sqlite3.connect(ws / ".swarm" / "todo.db") as conn:
        assert conn.execute("SELECT id, text, status FROM tasks").fetchall() == [
            (1, "first", "open")
        ]
    conn.close()


@pytest.mark.anyio
async def test_todo_remove_never_reuses_ids(tools: dict[str, Tool[Any]]) -> None:
    todo = tools["todo"]
    await todo(action="add", text="a")
    await todo(action="add", text="b")
    assert await todo(action="remove", task_id=2) == "Removed task 2: b"
    assert await todo(action="add", text="c") == "Added task 3: c"
    assert await todo(action="list") == "1. [ ] a\n3. [ ] c\n(2 open, 0 done)"


@pytest.mark.anyio
async def test_concurrent_adds_all_land(tools: dict[str, Tool[Any]]) -> None:
    async def add(n: int) -> None:
        await tools["todo"](action="add", text=f"task {n}")

    async with anyio.create_task_group() as group:
        for n in range(10):
            group.start_soon(add, n)
    listed = str(await tools["todo"](action="list"))
    assert listed.endswith("(10 open, 0 done)")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "done", "task_id": 7}, "there is no task 7; list the tasks to see their ids"),
        ({"action": "remove"}, r"give the id of the task in 'task_id' \(for remove\)"),
        ({"action": "add", "text": " "}, "give the task in 'text'"),
    ],
)
async def test_todo_mistakes_are_clear_errors(
    tools: dict[str, Tool[Any]], arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await tools["todo"](**arguments)


@pytest.mark.anyio
async def test_todo_caps_the_task_and_the_list(tools: dict[str, Tool[Any]], ws: Path) -> None:
    todo = tools["todo"]
    with pytest.raises(ToolError, match=r"the task is 501 characters; at most 500"):
        await todo(action="add", text="x" * 501)
    for n in range(MAX_TASKS):
        await todo(action="add", text=f"task {n}")
    with pytest.raises(ToolError, match=rf"holds {MAX_TASKS} tasks, the most it keeps"):
        await todo(action="add", text="one more")
    with sqlite3.connect(ws / ".swarm" / "todo.db") as conn:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (MAX_TASKS,)
    conn.close()
    await todo(action="remove", task_id=1)
    assert await todo(action="add", text="fits again") == f"Added task {MAX_TASKS + 1}: fits again"


# ask_user


@pytest.mark.anyio
async def test_ask_user_reaches_the_person(ws: Path) -> None:
    asked: list[str] = []

    async def person(question: str) -> str:
        asked.append(question)
        return " blue \n"

    ask = make_toolbox(ws, ask=person)["ask_user"]
    assert await ask(question=" Which colour? ") == "blue"
    assert asked == ["Which colour?"]


@pytest.mark.anyio
async def test_ask_user_with_an_empty_answer(ws: Path) -> None:
    async def silent(question: str) -> str:
        return ""

    ask = make_toolbox(ws, ask=silent)["ask_user"]
    assert await ask(question="Which colour?") == (
        "(The user gave no answer. Go on with your best judgement and state the assumption"
        " you made.)"
    )


@pytest.mark.anyio
async def test_ask_user_without_a_person_tells_the_model_to_go_on(
    tools: dict[str, Tool[Any]],
) -> None:
    with pytest.raises(ToolError) as caught:
        await tools["ask_user"](question="Which colour?")
    assert str(caught.value) == (
        "No person can be asked in this run. Go on with your best judgement and state the"
        " assumption you made."
    )


@pytest.mark.anyio
async def test_ask_user_when_the_terminal_fails(ws: Path) -> None:
    async def closed(question: str) -> str:
        raise EOFError("stdin is closed")

    ask = make_toolbox(ws, ask=closed)["ask_user"]
    with pytest.raises(ToolError, match=r"could not reach the user \(EOFError: stdin is closed\)"):
        await ask(question="Which colour?")

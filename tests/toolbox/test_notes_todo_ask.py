"""notes, todo and ask_user: persistence and the no-person case."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm import ToolError
from swarm.toolbox import make_toolbox


@pytest.mark.anyio
async def test_notes_persist_per_workspace(tmp_path: Path) -> None:
    notes = make_toolbox(tmp_path)["notes"]
    assert await notes(action="list") == "No notes yet."
    assert await notes(action="add", text="the API  uses\ncursor paging") == "Noted."
    later = make_toolbox(tmp_path)["notes"]  # another toolbox, as a later run would have
    listed = await later(action="list")
    assert listed.endswith("the API uses cursor paging")
    assert await later(action="clear") == "Notes cleared."
    assert await later(action="list") == "No notes yet."


@pytest.mark.anyio
async def test_notes_need_text(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="give the note's text"):
        await make_toolbox(tmp_path)["notes"](action="add")


@pytest.mark.anyio
async def test_todo_keeps_a_task_list_in_sqlite(tmp_path: Path) -> None:
    todo = make_toolbox(tmp_path)["todo"]
    assert await todo(action="add", text="write tests") == "Added task 1."
    assert await todo(action="add", text="ship") == "Added task 2."
    assert await todo(action="done", id=1) == "Task 1 done."
    later = make_toolbox(tmp_path)["todo"]
    assert await later(action="list") == "1. [x] write tests\n2. [ ] ship"
    assert await later(action="remove", id=2) == "Task 2 removed."
    assert (tmp_path / ".swarm" / "todo.db").is_file()


@pytest.mark.anyio
async def test_todo_unknown_id_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="there is no task 7"):
        await make_toolbox(tmp_path)["todo"](action="done", id=7)


@pytest.mark.anyio
async def test_ask_user_reaches_the_person(tmp_path: Path) -> None:
    asked: list[str] = []

    async def person(question: str) -> str:
        asked.append(question)
        return " blue "

    ask = make_toolbox(tmp_path, ask=person)["ask_user"]
    assert await ask(question="Which colour?") == "blue"
    assert asked == ["Which colour?"]


@pytest.mark.anyio
async def test_ask_user_without_a_person_tells_the_model_to_go_on(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="No person can be asked"):
        await make_toolbox(tmp_path)["ask_user"](question="Which colour?")

"""The toolbox driven by a (scripted) model: what the model reads back, under a policy too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm import AuditLog, RunScope, Tool
from swarm.guards import apply_policy, load_policy
from swarm.scope import use_scope

from .conftest import RunCalls


@pytest.mark.anyio
async def test_a_model_reads_then_edits_a_file(
    tools: dict[str, Tool[Any]], ws: Path, run_calls: RunCalls
) -> None:
    (ws / "app.py").write_text("def greet():\n    return 'hi'\n")
    done = await run_calls(
        list(tools.values()),
        ("read_file", {"path": "app.py"}),
        ("edit_file", {"path": "app.py", "old_text": "'hi'", "new_text": "'hello'"}),
    )
    read, edit = done.results
    assert not read.is_error and read.content == "1\tdef greet():\n2\t    return 'hi'"
    assert not edit.is_error and edit.content == "Edited app.py: replaced the text at line 2."
    assert (ws / "app.py").read_text() == "def greet():\n    return 'hello'\n"


@pytest.mark.anyio
async def test_the_model_reads_each_mistake_as_an_error_result(
    tools: dict[str, Tool[Any]], ws: Path, run_calls: RunCalls
) -> None:
    (ws / "a.py").write_text("x = 1\nx = 1\n")
    done = await run_calls(
        list(tools.values()),
        ("read_file", {"path": "../../etc/passwd"}),
        ("edit_file", {"path": "a.py", "old_text": "y = 1", "new_text": "y = 2"}),
        ("edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}),
        ("search", {"pattern": "[unclosed"}),
        ("ask_user", {"question": "Tabs or spaces?"}),
        ("todo", {"action": "done", "task_id": "3"}),
    )
    assert all(r.is_error for r in done.results)
    escape, missing, ambiguous, regex, ask, todo = (r.content for r in done.results)
    assert escape == (
        "'../../etc/passwd' is outside the workspace; use a path inside it (relative paths"
        " start at the workspace root)"
    )
    assert missing.startswith("old_text was not found in 'a.py'. It must match the file exactly")
    assert ambiguous.startswith("old_text occurs 2 times in 'a.py' (at lines 1, 2).")
    assert regex.startswith("invalid regular expression '[unclosed': missing ]: [unclosed. ")
    assert ask.startswith("No person can be asked in this run. Go on with your best judgement")
    assert todo == "there is no task 3; list the tasks to see their ids"
    assert (ws / "a.py").read_text() == "x = 1\nx = 1\n"


@pytest.mark.anyio
async def test_parallel_edits_of_one_file_both_land(
    tools: dict[str, Tool[Any]], ws: Path, run_calls: RunCalls
) -> None:
    (ws / "a.py").write_text("".join(f"v{n} = {n}\n" for n in range(20)))
    edits = [
        ("edit_file", {"path": "a.py", "old_text": f"v{n} = {n}\n", "new_text": f"v{n} = -1\n"})
        for n in range(20)
    ]
    done = await run_calls(list(tools.values()), *edits)
    assert not any(r.is_error for r in done.results)
    assert (ws / "a.py").read_text() == "".join(f"v{n} = -1\n" for n in range(20))


@pytest.mark.anyio
async def test_under_the_default_policy(
    tools: dict[str, Tool[Any]], ws: Path, tmp_path: Path, run_calls: RunCalls
) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "keep.py").write_text("")
    guarded = apply_policy(tools.values(), load_policy("default"), workspace=ws)
    with (
        AuditLog(tmp_path / "audit.jsonl", fsync=False) as audit,
        use_scope(RunScope(observers=(audit,))),
    ):
        done = await run_calls(
            guarded,
            ("write_file", {"path": "src/new.py", "content": "x = 1\n"}),
            ("read_file", {"path": "../secret.txt"}),
            ("shell", {"command": "cd src && rm -rf ."}),
            ("shell", {"command": "ls src | grep keep"}),
        )
    write, escape, delete, listing = done.results
    assert not write.is_error and (ws / "src" / "new.py").read_text() == "x = 1\n"
    assert escape.is_error and escape.content.startswith("Permission denied")
    assert delete.is_error and "recursive or forced deletion is destructive" in delete.content
    assert (ws / "src" / "keep.py").exists()
    assert not listing.is_error and listing.content == "keep.py\n[exit code 0]"
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    denied = {r["tool"] for r in records if r.get("decision") == "deny"}
    assert denied == {"read_file", "shell"}

"""Every path a built-in tool is given stays inside the workspace, whatever the policy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool, ToolError
from swarm.guards import path_arguments
from swarm.toolbox import make_toolbox

# One call per path-taking tool, with the path left to fill in.
PATH_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("read_file", "path", {}),
    ("write_file", "path", {"content": "overwritten"}),
    ("edit_file", "path", {"old_text": "secret", "new_text": "overwritten"}),
    ("list_files", "directory", {}),
    ("search", "path", {"pattern": "secret"}),
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace holding a file the tools must not reach."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("secret\n")
    return path


async def call(tool: Tool[Any], **arguments: Any) -> Any:
    return await tool(**arguments)


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "argument", "extra"), PATH_CALLS)
@pytest.mark.parametrize(
    "escape",
    ["../outside/secret.txt", "sub/../../outside/secret.txt", "ABSOLUTE", "~/secret.txt"],
)
async def test_paths_leaving_the_workspace_are_refused(
    tools: dict[str, Tool[Any]],
    ws: Path,
    outside: Path,
    name: str,
    argument: str,
    extra: dict[str, Any],
    escape: str,
) -> None:
    (ws / "sub").mkdir()
    path = str(outside / "secret.txt") if escape == "ABSOLUTE" else escape
    with pytest.raises(ToolError, match="is outside the workspace; use a path inside it"):
        await call(tools[name], **{argument: path, **extra})
    assert (outside / "secret.txt").read_text() == "secret\n"


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "argument", "extra"), PATH_CALLS)
async def test_symlinks_leading_out_are_refused(
    tools: dict[str, Tool[Any]],
    ws: Path,
    outside: Path,
    name: str,
    argument: str,
    extra: dict[str, Any],
) -> None:
    os.symlink(outside / "secret.txt", ws / "link.txt")
    os.symlink(outside, ws / "linked_dir")
    target = "linked_dir" if name == "list_files" else "link.txt"
    with pytest.raises(ToolError, match=f"'{target}' is a symbolic link; the file tools do not"):
        await call(tools[name], **{argument: target, **extra})
    assert (outside / "secret.txt").read_text() == "secret\n"


@pytest.mark.anyio
async def test_a_file_inside_a_symlinked_directory_outside_is_refused(
    tools: dict[str, Tool[Any]], ws: Path, outside: Path
) -> None:
    os.symlink(outside, ws / "linked_dir")
    with pytest.raises(ToolError, match="'linked_dir' is a symbolic link"):
        await tools["write_file"](path="linked_dir/new.txt", content="x")
    assert os.listdir(outside) == ["secret.txt"]


@pytest.mark.anyio
async def test_listing_and_search_do_not_follow_links_out(
    tools: dict[str, Tool[Any]], ws: Path, outside: Path
) -> None:
    (ws / "mine.txt").write_text("secret of my own\n")
    os.symlink(outside, ws / "linked_dir")
    os.symlink(outside / "secret.txt", ws / "link.txt")
    assert await tools["list_files"]() == "mine.txt  (17 bytes)"
    assert await tools["list_files"](recursive=False) == "mine.txt  (17 bytes)"
    assert await tools["search"](pattern="secret") == "mine.txt:1: secret of my own"


@pytest.mark.anyio
async def test_paths_that_stay_inside_are_fine(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "a.txt").write_text("hello\n")
    assert await tools["read_file"](path="sub/../a.txt") == "1\thello"
    assert await tools["read_file"](path="./sub/.././sub/../a.txt") == "1\thello"
    assert await tools["read_file"](path=str(ws / "a.txt")) == "1\thello"
    assert await tools["write_file"](path="sub/../b.txt", content="x") == (
        "Created b.txt (1 bytes)."
    )
    assert (ws / "b.txt").read_text() == "x"


@pytest.mark.anyio
async def test_a_workspace_reached_through_a_symlink_works(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    tools = make_toolbox(tmp_path / "alias")
    await tools["write_file"](path="a.txt", content="hi\n")
    assert await tools["read_file"](path=str(tmp_path / "alias" / "a.txt")) == "1\thi"
    assert (tmp_path / "real" / "a.txt").read_text() == "hi\n"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "extra"),
    [("write_file", {"content": "x"}), ("edit_file", {"old_text": "a", "new_text": "b"})],
)
async def test_file_tools_do_not_write_in_swarm_state(
    tools: dict[str, Tool[Any]], ws: Path, name: str, extra: dict[str, Any]
) -> None:
    (ws / ".swarm").mkdir()
    (ws / ".swarm" / "notes.md").write_text("a\n")
    with pytest.raises(ToolError, match=r"is in \.swarm/, which holds swarm's own"):
        await tools[name](path=".swarm/notes.md", **extra)
    assert (ws / ".swarm" / "notes.md").read_text() == "a\n"


@pytest.mark.anyio
async def test_a_nul_in_a_path_is_refused(tools: dict[str, Tool[Any]]) -> None:
    with pytest.raises(ToolError, match="not a valid path"):
        await tools["read_file"](path="a\x00.txt")


def test_the_path_guard_finds_every_path_argument(tools: dict[str, Tool[Any]]) -> None:
    found = {name: set(path_arguments(tool)) for name, tool in tools.items()}
    assert found == {
        "read_file": {"path"},
        "write_file": {"path"},
        "edit_file": {"path"},
        "list_files": {"directory"},
        "search": {"path"},
        "shell": set(),
        "notes": set(),
        "todo": set(),
        "ask_user": set(),
    }

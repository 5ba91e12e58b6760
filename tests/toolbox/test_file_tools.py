"""read_file, write_file, edit_file, list_files, search: behaviour and confinement."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, MemoryContextStore, ToolError, ToolResult
from swarm.testing import StubTransport, make_text_response, make_tool_use_response
from swarm.toolbox import TOOL_NAMES, make_toolbox


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, Any]:
    return make_toolbox(tmp_path / "ws")


@pytest.fixture
def ws(tmp_path: Path, tools: dict[str, Any]) -> Path:
    return tmp_path / "ws"


def test_toolbox_has_every_built_in_tool(tools: dict[str, Any]) -> None:
    assert tuple(tools) == TOOL_NAMES


@pytest.mark.anyio
async def test_read_file_numbers_lines_and_pages(tools: dict[str, Any], ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    assert await tools["read_file"](path="a.txt") == "1\tone\n2\ttwo\n3\tthree"
    page = await tools["read_file"](path="a.txt", offset=2, limit=1)
    assert page.startswith("2\ttwo") and "[lines 2-2 of 3; use offset to read more]" in page


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.txt", "does not exist"),
        ("../outside.txt", "outside the workspace"),
        ("/etc/hostname", "outside the workspace"),
        ("sub", "is a directory"),
    ],
)
async def test_read_file_refusals(tools: dict[str, Any], ws: Path, path: str, message: str) -> None:
    (ws / "sub").mkdir()
    (ws.parent / "outside.txt").write_text("secret")
    with pytest.raises(ToolError, match=message):
        await tools["read_file"](path=path)


@pytest.mark.anyio
async def test_symlink_leading_out_of_the_workspace_is_refused(
    tools: dict[str, Any], ws: Path
) -> None:
    (ws.parent / "secret.txt").write_text("secret")
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        await tools["read_file"](path="link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        await tools["write_file"](path="link.txt", content="overwritten")
    assert (ws.parent / "secret.txt").read_text() == "secret"


@pytest.mark.anyio
async def test_binary_file_is_refused(tools: dict[str, Any], ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match="binary file"):
        await tools["read_file"](path="blob.bin")


@pytest.mark.anyio
async def test_write_file_creates_directories_and_replaces(tools: dict[str, Any], ws: Path) -> None:
    assert await tools["write_file"](path="src/app.py", content="x = 1\n") == (
        "Created src/app.py (6 bytes)."
    )
    assert await tools["write_file"](path="src/app.py", content="x = 2\n") == (
        "Replaced src/app.py (6 bytes)."
    )
    assert (ws / "src" / "app.py").read_text() == "x = 2\n"
    assert [p.name for p in (ws / "src").iterdir()] == ["app.py"]  # no temp files left


@pytest.mark.anyio
async def test_write_outside_the_workspace_is_refused(tools: dict[str, Any], ws: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await tools["write_file"](path="../../evil.txt", content="x")
    assert not (ws.parent.parent / "evil.txt").exists()


@pytest.mark.anyio
async def test_edit_file_replaces_one_exact_occurrence(tools: dict[str, Any], ws: Path) -> None:
    (ws / "a.py").write_text("a = 1\nb = 2\n")
    assert await tools["edit_file"](path="a.py", old_text="b = 2", new_text="b = 3") == (
        "Edited a.py: 1 replacement."
    )
    assert (ws / "a.py").read_text() == "a = 1\nb = 3\n"


@pytest.mark.anyio
async def test_edit_file_missing_text_says_to_reread(tools: dict[str, Any], ws: Path) -> None:
    (ws / "a.py").write_text("a = 1\n")
    with pytest.raises(ToolError, match=r"was not found.*read the file again"):
        await tools["edit_file"](path="a.py", old_text="a=1", new_text="a = 2")


@pytest.mark.anyio
async def test_edit_file_ambiguous_text_names_the_count(tools: dict[str, Any], ws: Path) -> None:
    (ws / "a.py").write_text("x\nx\nx\n")
    with pytest.raises(ToolError, match=r"occurs 3 times.*replace_all"):
        await tools["edit_file"](path="a.py", old_text="x", new_text="y")
    assert await tools["edit_file"](path="a.py", old_text="x", new_text="y", replace_all=True) == (
        "Edited a.py: 3 replacements."
    )
    assert (ws / "a.py").read_text() == "y\ny\ny\n"


@pytest.mark.anyio
async def test_list_files_skips_tool_folders_and_filters(tools: dict[str, Any], ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("")
    (ws / "README.md").write_text("hi")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("")
    listing = await tools["list_files"]()
    assert "src/a.py" in listing and "README.md" in listing and ".git" not in listing
    assert await tools["list_files"](pattern="*.py") == "src/a.py  (0 bytes)"


@pytest.mark.anyio
async def test_search_finds_lines_with_paths(tools: dict[str, Any], ws: Path) -> None:
    (ws / "a.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / "b.txt").write_text("nothing to add here\n")
    assert await tools["search"](pattern=r"def \w+", glob="*.py") == "a.py:1: def add(a, b):"
    found = await tools["search"](pattern="ADD", ignore_case=True)
    assert "a.py:1:" in found and "b.txt:1:" in found


@pytest.mark.anyio
async def test_search_with_an_invalid_regex_is_a_clear_error(tools: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        await tools["search"](pattern="(unclosed")


@pytest.mark.anyio
async def test_the_model_sees_confinement_errors_as_results(tools: dict[str, Any]) -> None:
    model = StubTransport(
        [
            make_tool_use_response("read_file", "c1", {"path": "../../etc/passwd"}),
            make_text_response(),
        ]
    )
    agent = Agent("s", model, list(tools.values()))
    async with agent.run_stream("read it", MemoryContextStore()) as stream:
        results = [e async for e in stream if isinstance(e, ToolResult)]
    assert results[0].is_error and "outside the workspace" in results[0].content

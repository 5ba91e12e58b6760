"""read_file, write_file and edit_file: what they show, what they leave on disk, and how
they refuse."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool, ToolError
from swarm.toolbox import TOOL_NAMES, make_toolbox


def test_the_toolbox_has_every_built_in_tool(tools: dict[str, Tool[Any]]) -> None:
    assert tuple(tools) == TOOL_NAMES
    assert all(tool.description for tool in tools.values())


def test_make_toolbox_creates_the_workspace(tmp_path: Path) -> None:
    make_toolbox(tmp_path / "new" / "ws")
    assert (tmp_path / "new" / "ws").is_dir()


@pytest.mark.parametrize(
    ("options", "message"),
    [({"shell_timeout": 0}, "shell_timeout must be positive"), ({"output_limit": 10}, "at least")],
)
def test_make_toolbox_refuses_bad_limits(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make_toolbox(tmp_path, **options)


# read_file


@pytest.mark.anyio
async def test_read_file_numbers_its_lines(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\r\nthree")
    assert await tools["read_file"](path="a.txt") == "1\tone\n2\ttwo\n3\tthree"


@pytest.mark.anyio
async def test_read_file_shows_a_range_and_says_how_to_read_on(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    page = await tools["read_file"](path="a.txt", offset=9, limit=3)
    assert page == (
        " 9\tline 9\n10\tline 10\n11\tline 11\n[lines 9-11 of 20; read on with offset=12]"
    )
    end = await tools["read_file"](path="a.txt", offset=19)
    assert end == "19\tline 19\n20\tline 20\n[lines 19-20 of 20: the end of the file]"


@pytest.mark.anyio
async def test_read_file_offset_past_the_end_is_an_error(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match="has 2 lines; offset 5 is past its end"):
        await tools["read_file"](path="a.txt", offset=5)


@pytest.mark.anyio
async def test_read_file_of_an_empty_file(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "empty.txt").write_text("")
    assert await tools["read_file"](path="empty.txt") == "'empty.txt' is empty."


@pytest.mark.anyio
async def test_read_file_stops_at_the_output_cap_with_a_note(tmp_path: Path) -> None:
    tools = make_toolbox(tmp_path, output_limit=1000)
    (tmp_path / "big.txt").write_text("".join(f"{'x' * 90} {n}\n" for n in range(1, 101)))
    page = await tools["read_file"](path="big.txt")
    lines = str(page).splitlines()
    assert lines[0] == " 1\t" + "x" * 90 + " 1"
    assert lines[-2] == "10\t" + "x" * 90 + " 10"
    assert lines[-1] == "[output cap reached: lines 1-10 of 100; read on with offset=11]"


@pytest.mark.anyio
async def test_read_file_cuts_very_long_lines(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "min.js").write_text("y" * 5000 + "\n")
    shown = await tools["read_file"](path="min.js")
    assert shown == "1\t" + "y" * 2000 + "… [line cut: 5,000 characters]"


@pytest.mark.anyio
async def test_read_file_refuses_binary_files(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary")
    with pytest.raises(ToolError, match=r"'blob\.bin' is a binary file; read_file shows text"):
        await tools["read_file"](path="blob.bin")


@pytest.mark.anyio
async def test_read_file_shows_invalid_utf8_with_a_note(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert await tools["read_file"](path="latin1.txt") == (
        "1\tcaf�\n[the file is not valid UTF-8: undecodable bytes are shown as �]"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.txt", "'missing.txt' does not exist in the workspace; list_files shows"),
        ("sub", "'sub' is a directory; use list_files"),
    ],
)
async def test_read_file_refusals(
    tools: dict[str, Tool[Any]], ws: Path, path: str, message: str
) -> None:
    (ws / "sub").mkdir()
    with pytest.raises(ToolError, match=message):
        await tools["read_file"](path=path)


# write_file


@pytest.mark.anyio
async def test_write_file_creates_parent_directories(tools: dict[str, Tool[Any]], ws: Path) -> None:
    result = await tools["write_file"](path="src/pkg/app.py", content="x = 'é'\n")
    assert result == "Created src/pkg/app.py (9 bytes)."
    assert (ws / "src" / "pkg" / "app.py").read_text(encoding="utf-8") == "x = 'é'\n"


@pytest.mark.anyio
async def test_write_file_replaces_atomically_and_keeps_the_mode(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    script = ws / "run.sh"
    script.write_text("old\n")
    script.chmod(0o755)
    assert await tools["write_file"](path="run.sh", content="new\n") == (
        "Replaced run.sh (4 bytes)."
    )
    assert script.read_text() == "new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert os.listdir(ws) == ["run.sh"]  # no temporary file left


@pytest.mark.anyio
async def test_write_file_gives_new_files_the_usual_mode(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    umask = os.umask(0)
    os.umask(umask)
    await tools["write_file"](path="a.txt", content="x")
    assert stat.S_IMODE((ws / "a.txt").stat().st_mode) == 0o666 & ~umask


@pytest.mark.anyio
async def test_write_file_refuses_a_symlink_even_one_pointing_inside(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "real.txt").write_text("old")
    os.symlink("real.txt", ws / "alias.txt")
    with pytest.raises(ToolError, match=r"'alias\.txt' is a symbolic link; the file tools do not"):
        await tools["write_file"](path="alias.txt", content="new")
    assert (ws / "alias.txt").is_symlink() and (ws / "real.txt").read_text() == "old"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("sub", "'sub' is a directory; give a file path"),
        ("file.txt/inner.txt", "could not write 'file.txt/inner.txt': "),
    ],
)
async def test_write_file_refusals(
    tools: dict[str, Tool[Any]], ws: Path, path: str, message: str
) -> None:
    (ws / "sub").mkdir()
    (ws / "file.txt").write_text("keep")
    with pytest.raises(ToolError, match=message):
        await tools["write_file"](path=path, content="x")
    assert (ws / "file.txt").read_text() == "keep"


# edit_file


@pytest.mark.anyio
async def test_edit_file_replaces_the_one_occurrence(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await tools["edit_file"](path="a.py", old_text="b = 2\n", new_text="b = 20\n")
    assert result == "Edited a.py: replaced the text at line 2."
    assert (ws / "a.py").read_text() == "a = 1\nb = 20\nc = 3\n"


@pytest.mark.anyio
async def test_edit_file_missing_text_says_to_read_the_file_again(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ToolError) as caught:
        await tools["edit_file"](path="a.py", old_text="return 2", new_text="return 3")
    assert str(caught.value) == (
        "old_text was not found in 'a.py'. It must match the file exactly, whitespace and"
        " indentation included; read the file again with read_file and copy the text from it."
    )


@pytest.mark.anyio
async def test_edit_file_missing_text_points_at_a_whitespace_mismatch(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ToolError, match="Its first line appears at line 2 with different"):
        await tools["edit_file"](path="a.py", old_text="\treturn 1", new_text="\treturn 2")
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n"


@pytest.mark.anyio
async def test_edit_file_missing_text_points_at_a_later_line_that_differs(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ToolError, match="Its first line matches line 1, but a line after it"):
        await tools["edit_file"](path="a.py", old_text="def f():\n    return 2", new_text="")


@pytest.mark.anyio
async def test_edit_file_ambiguous_text_says_how_often_and_where(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.py").write_text("x = 0\nx = 0\ny = 1\nx = 0\n")
    with pytest.raises(ToolError) as caught:
        await tools["edit_file"](path="a.py", old_text="x = 0", new_text="x = 1")
    assert str(caught.value) == (
        "old_text occurs 3 times in 'a.py' (at lines 1, 2, 4). Include more of the"
        " surrounding text to make it unique, or set replace_all to replace all 3."
    )
    assert (ws / "a.py").read_text() == "x = 0\nx = 0\ny = 1\nx = 0\n"


@pytest.mark.anyio
async def test_edit_file_replace_all(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "a.py").write_text("x\nx\nx\n")
    result = await tools["edit_file"](path="a.py", old_text="x", new_text="y", replace_all=True)
    assert result == "Edited a.py: replaced all 3 occurrences."
    assert (ws / "a.py").read_text() == "y\ny\ny\n"


@pytest.mark.anyio
async def test_edit_file_matches_windows_line_endings(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await tools["edit_file"](path="a.txt", old_text="one\ntwo", new_text="1\n2")
    assert (ws / "a.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "old", "new", "message"),
    [
        (b"a\n", "", "b", "old_text is empty"),
        (b"a\n", "a", "a", "old_text and new_text are the same"),
        (b"\x00\x01a", "a", "b", "'f' is a binary file; edit_file edits text files only"),
        ("café".encode("latin-1"), "caf", "tea", "'f' is not valid UTF-8 text"),
    ],
)
async def test_edit_file_refusals(
    tools: dict[str, Tool[Any]], ws: Path, content: bytes, old: str, new: str, message: str
) -> None:
    (ws / "f").write_bytes(content)
    with pytest.raises(ToolError, match=message):
        await tools["edit_file"](path="f", old_text=old, new_text=new)
    assert (ws / "f").read_bytes() == content


@pytest.mark.anyio
async def test_edit_file_of_a_missing_file(tools: dict[str, Tool[Any]]) -> None:
    with pytest.raises(ToolError, match=r"'nope\.py' does not exist"):
        await tools["edit_file"](path="nope.py", old_text="a", new_text="b")


@pytest.mark.anyio
async def test_read_file_refuses_a_fifo_instead_of_blocking(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    os.mkfifo(ws / "pipe")
    with pytest.raises(ToolError, match="'pipe' is not a regular file"):
        await tools["read_file"](path="pipe")

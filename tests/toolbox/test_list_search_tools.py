"""list_files and search: what they find, what they skip, and how they cap their output."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool, ToolError
from swarm.toolbox import make_toolbox


@pytest.fixture
def project(ws: Path) -> Path:
    files = {
        "README.md": "# demo\n",
        "src/app.py": "def main():\n    return helper()\n",
        "src/util/helper.py": "def helper():\n    return 42  # TODO: why 42\n",
        "src/web/page.tsx": "export const Page = () => null\n",
        "tests/test_app.py": "from app import main\n\ndef test_main():\n    assert main() == 42\n",
        ".git/config": "[core] def x\n",
        "node_modules/lib/index.js": "function helper() {}\n",
        "src/__pycache__/app.cpython-311.pyc": "def main cached\n",
        ".swarm/notes.md": "- def in notes\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return ws


def entry(ws: Path, name: str) -> str:
    return f"{name}  ({(ws / name).stat().st_size} bytes)"


# list_files


@pytest.mark.anyio
async def test_list_files_lists_the_tree_with_sizes_and_skips_tool_folders(
    tools: dict[str, Tool[Any]], project: Path
) -> None:
    names = ["README.md", "src/app.py", "src/util/helper.py", "src/web/page.tsx"]
    names.append("tests/test_app.py")
    assert str(await tools["list_files"]()).splitlines() == [entry(project, n) for n in names]


@pytest.mark.anyio
async def test_list_files_one_level_shows_subdirectories(
    tools: dict[str, Tool[Any]], project: Path
) -> None:
    assert str(await tools["list_files"](recursive=False)).splitlines() == [
        entry(project, "README.md"),
        "src/",
        "tests/",
    ]
    assert str(await tools["list_files"](directory="src", recursive=False)).splitlines() == [
        entry(project, "src/app.py"),
        "src/util/",
        "src/web/",
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("directory", "pattern", "expected"),
    [
        (".", "*.py", ["src/app.py", "src/util/helper.py", "tests/test_app.py"]),
        (".", "*.{md,tsx}", ["README.md", "src/web/page.tsx"]),
        (".", "src/**/*.py", ["src/app.py", "src/util/helper.py"]),
        (".", "src/*.py", ["src/app.py"]),
        (".", "**/test_*.py", ["tests/test_app.py"]),
        (".", "[!R]*.md", []),
        ("src", "util/*", ["src/util/helper.py"]),
    ],
)
async def test_list_files_filters_by_glob(
    tools: dict[str, Tool[Any]], project: Path, directory: str, pattern: str, expected: list[str]
) -> None:
    listing = str(await tools["list_files"](directory=directory, pattern=pattern))
    if expected:
        assert [line.split("  ")[0] for line in listing.splitlines()] == expected
    else:
        assert listing == f"No files matching '{pattern}' in {directory}."


@pytest.mark.anyio
async def test_list_files_says_how_many_more_there_are(tmp_path: Path) -> None:
    for n in range(600):
        (tmp_path / f"f{n:03}.txt").write_text("")
    listing = str(await make_toolbox(tmp_path)["list_files"]()).splitlines()
    assert len(listing) == 501
    assert listing[-1] == "[… 100 more; narrow the directory or pattern]"


@pytest.mark.anyio
async def test_list_files_output_is_capped(tmp_path: Path) -> None:
    for n in range(100):
        (tmp_path / f"file_number_{n:03}.txt").write_text("")
    listing = str(await make_toolbox(tmp_path, output_limit=300)["list_files"]())
    assert len(listing) < 400
    assert listing.endswith("more; narrow the directory or pattern]")


@pytest.mark.anyio
async def test_list_files_of_a_file_is_an_error(tools: dict[str, Tool[Any]], project: Path) -> None:
    with pytest.raises(ToolError, match=r"'README\.md' is a file, not a directory"):
        await tools["list_files"](directory="README.md")


@pytest.mark.anyio
async def test_list_files_leaves_symlinks_out_even_those_pointing_inside(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "real.txt").write_text("x")
    os.symlink(ws / "gone.txt", ws / "dangling.txt")
    os.symlink(ws / "real.txt", ws / "alias.txt")
    os.symlink(ws, ws / "loop")
    assert await tools["list_files"]() == "real.txt  (1 bytes)"
    assert await tools["list_files"](recursive=False) == "real.txt  (1 bytes)"


# search


@pytest.mark.anyio
async def test_search_reports_path_line_and_text(
    tools: dict[str, Tool[Any]], project: Path
) -> None:
    assert str(await tools["search"](pattern=r"def \w+\(")).splitlines() == [
        "src/app.py:1: def main():",
        "src/util/helper.py:1: def helper():",
        "tests/test_app.py:3: def test_main():",
    ]


@pytest.mark.anyio
async def test_search_in_a_directory_or_file_with_a_glob(
    tools: dict[str, Tool[Any]], project: Path
) -> None:
    assert await tools["search"](pattern="42", path="src") == (
        "src/util/helper.py:2:     return 42  # TODO: why 42"
    )
    assert await tools["search"](pattern="main", glob="test_*.py") == (
        "tests/test_app.py:1: from app import main\n"
        "tests/test_app.py:3: def test_main():\n"
        "tests/test_app.py:4:     assert main() == 42"
    )
    assert await tools["search"](pattern="helper", path="src/app.py") == (
        "src/app.py:2:     return helper()"
    )


@pytest.mark.anyio
async def test_search_ignoring_case(tools: dict[str, Tool[Any]], project: Path) -> None:
    assert await tools["search"](pattern="todo") == "No matches for 'todo' in 5 files."
    assert await tools["search"](pattern="todo", ignore_case=True) == (
        "src/util/helper.py:2:     return 42  # TODO: why 42"
    )


@pytest.mark.anyio
async def test_search_with_an_invalid_regex_is_a_clear_error(tools: dict[str, Tool[Any]]) -> None:
    with pytest.raises(ToolError) as caught:
        await tools["search"](pattern="main(")
    assert str(caught.value).startswith(
        "invalid regular expression 'main(': missing ): main(. Patterns use RE2 syntax (as"
        " Python's re, without lookaround or backreferences); escape special characters"
    )


@pytest.mark.anyio
async def test_search_skips_binary_files(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "data.bin").write_bytes(b"\x00needle")
    (ws / "notes.txt").write_text("needle\n")
    assert await tools["search"](pattern="needle") == "notes.txt:1: needle"
    with pytest.raises(ToolError, match=r"'data\.bin' is a binary file; search looks in text"):
        await tools["search"](pattern="needle", path="data.bin")


@pytest.mark.anyio
async def test_search_skips_fifos(tools: dict[str, Tool[Any]], ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    (ws / "notes.txt").write_text("needle\n")
    assert await tools["search"](pattern="needle") == "notes.txt:1: needle"


@pytest.mark.anyio
async def test_search_stops_at_max_results_and_says_so(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "many.txt").write_text("hit\n" * 50)
    found = str(await tools["search"](pattern="hit", max_results=3)).splitlines()
    assert found == [
        "many.txt:1: hit",
        "many.txt:2: hit",
        "many.txt:3: hit",
        "[results stop at 3 lines; narrow the pattern, path or glob (or raise max_results)"
        " to see the rest]",
    ]


@pytest.mark.anyio
async def test_search_output_is_capped(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("a line that matches the pattern\n" * 100)
    found = str(await make_toolbox(tmp_path, output_limit=500)["search"](pattern="matches"))
    assert len(found) < 700 and found.endswith("to see the rest]")


@pytest.mark.anyio
async def test_search_shows_a_window_of_a_long_line(tools: dict[str, Tool[Any]], ws: Path) -> None:
    (ws / "min.js").write_text("a" * 1000 + "needle" + "b" * 1000 + "\n")
    found = str(await tools["search"](pattern="needle"))
    text = found.removeprefix("min.js:1: ")
    assert text.startswith("…a") and text.endswith("b…") and "needle" in text
    assert len(text) == 302

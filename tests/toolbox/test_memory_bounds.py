"""What the file tools hold in swarm's memory is bounded by their caps, whatever the
shape of the file: measured as the growth of the peak resident size (``ru_maxrss``) of a
fresh interpreter that makes one call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool, ToolError
from swarm.toolbox._fs import MAX_DIR_ENTRIES
from swarm.toolbox.search import MAX_FILE_BYTES

MIB = 1024 * 1024
GROWTH_BOUND = 48 * MIB
"""What one call may add to swarm's peak memory (docs/tools.md, "Caps")."""

_MEASURE = """
import json, resource, sys, anyio
from swarm.toolbox import make_toolbox
tools = make_toolbox(sys.argv[1])
name, arguments = sys.argv[2], json.loads(sys.argv[3])
async def call(name=name, arguments=arguments):
    try:
        return str(await tools[name](**arguments))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
anyio.run(call, "list_files", {"recursive": False, "pattern": "-"})  # warm up: threads
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = anyio.run(call)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth": (after - before) * 1024, "out": out}))
"""


def measured(ws: Path, tool: str, **arguments: Any) -> tuple[int, str]:
    """How many bytes one call grows a fresh swarm's peak memory by, and its output's
    end."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ws), tool, json.dumps(arguments)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    found = json.loads(done.stdout)
    return int(found["growth"]), str(found["out"])


def sparse_line(path: Path, size: int) -> None:
    """A one-line text file of ``size`` bytes: text, then a hole, then text."""
    with path.open("wb") as file:
        file.write(b"a" * 16384)
        file.seek(size - 2)
        file.write(b"z\n")


def test_read_file_of_a_sparse_256_mib_line_stays_within_its_cap(ws: Path) -> None:
    sparse_line(ws / "one.txt", 256 * MIB)
    growth, out = measured(ws, "read_file", path="one.txt", limit=1)
    assert growth < GROWTH_BOUND, f"grew by {growth / MIB:.0f} MiB"
    assert out == "1\t" + "a" * 2000 + f"… [line cut: {256 * MIB:,} bytes]"


def test_read_file_of_a_huge_line_then_says_how_to_read_on(ws: Path) -> None:
    with (ws / "two.txt").open("wb") as file:
        file.write(b"a" * 16384)
        file.seek(100 * MIB)
        file.write(b"\nsecond\nthird\n")
    growth, out = measured(ws, "read_file", path="two.txt", limit=1)
    assert growth < GROWTH_BOUND, f"grew by {growth / MIB:.0f} MiB"
    assert out.endswith("… [line cut: 104,857,601 bytes]\n[lines 1-1; read on with offset=2]")
    growth, out = measured(ws, "read_file", path="two.txt", offset=2)
    assert out == "2\tsecond\n3\tthird\n[lines 2-3 of 3: the end of the file]"


def test_edit_file_refuses_a_file_over_its_cap_without_reading_it(ws: Path) -> None:
    sparse_line(ws / "big.txt", 256 * MIB)
    growth, out = measured(ws, "edit_file", path="big.txt", old_text="z", new_text="y")
    assert growth < GROWTH_BOUND, f"grew by {growth / MIB:.0f} MiB"
    assert out.startswith("ToolError: 'big.txt' is 268,435,456 bytes; edit_file edits files")
    assert (ws / "big.txt").stat().st_size == 256 * MIB  # untouched


@pytest.mark.anyio
async def test_edit_file_refuses_an_edit_whose_result_would_pass_the_cap(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    (ws / "a.txt").write_text("x" * 100_000)
    with pytest.raises(ToolError, match=r"the edited 'a\.txt' would be about"):
        await tools["edit_file"](path="a.txt", old_text="x", new_text="y" * 1000, replace_all=True)
    assert (ws / "a.txt").read_text() == "x" * 100_000


def test_list_files_of_a_huge_directory_stops_and_says_so(ws: Path) -> None:
    crowd = ws / "crowd"
    crowd.mkdir()
    for n in range(MAX_DIR_ENTRIES + 500):
        os.close(os.open(crowd / f"f{n:06}", os.O_CREAT | os.O_WRONLY, 0o644))
    growth, out = measured(ws, "list_files", directory="crowd", recursive=False)
    assert growth < GROWTH_BOUND, f"grew by {growth / MIB:.0f} MiB"
    assert out.endswith(
        "[… 19,500 more; narrow the directory or pattern]\n"
        "[… more than 20,000 entries in crowd/: only the first were looked at]"
    )


def test_notes_list_of_a_huge_notes_file_reads_only_its_end(ws: Path) -> None:
    (ws / ".swarm").mkdir()
    with (ws / ".swarm" / "notes.md").open("wb") as file:
        file.write(b"- [2026-01-01 00:00] the first note\n")
        file.seek(256 * MIB)
        file.write(b"\n- [2026-01-02 00:00] the latest note\n")
    growth, out = measured(ws, "notes", action="list")
    assert growth < GROWTH_BOUND, f"grew by {growth / MIB:.0f} MiB"
    assert out == "[… older notes cut …]\n- [2026-01-02 00:00] the latest note"


@pytest.mark.anyio
async def test_search_stops_at_its_read_budget_and_says_so(
    tools: dict[str, Tool[Any]], ws: Path
) -> None:
    for n in range(20):
        with (ws / f"part{n:02}.txt").open("wb") as file:
            file.write(b"needle\n" + b"x" * 8192 + b"\n")
            file.truncate(MAX_FILE_BYTES)  # sparse: read as 4 MiB, costs no disk
    found = str(await tools["search"](pattern="needle")).splitlines()
    assert found == [
        *(f"part{n:02}.txt:1: needle" for n in range(16)),
        "[search stopped after 16 files (64 MB read): narrow the path or glob to search the rest]",
    ]

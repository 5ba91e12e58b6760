"""The file tools against a process racing them: a thread swaps a directory (or a file) of
the workspace between a directory, a file and links to the outside while the tools run on
paths through it. Nothing outside may change and no result may show what is outside.

Also the plain cases the race relies on: symlinks anywhere on a path, hard links, FIFOs,
``..`` that stays inside, protected run records.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool, ToolError
from swarm.toolbox import make_toolbox

MIN_FLIPS = 1_000
MIN_CALLS = 1_000

Snapshot = dict[str, tuple[str, bytes, int]]


@pytest.fixture
def secret() -> str:
    return f"SECRET-{secrets.token_hex(8)}"


@pytest.fixture
def outside(tmp_path: Path, secret: str) -> Path:
    """A directory beside the workspace with a secret in a file's text and in a name."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "f").write_text(f"inside {secret}\n")
    (path / f"{secret}.txt").write_text(f"inside {secret}\n")
    (path / "sub").mkdir()
    (path / "sub" / "f").write_text(f"inside {secret}\n")
    return path


def snapshot(top: Path) -> Snapshot:
    """Every entry below ``top``: its kind, content (files) or target (links), mtime."""
    found: Snapshot = {}
    for base, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(base, name)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[str(path)] = ("link", os.readlink(path).encode(), info.st_mtime_ns)
            elif stat.S_ISREG(info.st_mode):
                found[str(path)] = ("file", path.read_bytes(), info.st_mtime_ns)
            else:  # a directory, or a FIFO that reading would block on
                found[str(path)] = ("other", b"", info.st_mtime_ns)
    return found


def _remove(path: Path) -> None:
    # The tools under test create entries here at the same time (write_file makes missing
    # directories and temporary files): try again until the entry is gone.
    for _ in range(10_000):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            continue
        if not os.path.lexists(path):
            return
    raise AssertionError(f"{path} could not be removed")


def directory_states(ws: Path, outside: Path) -> Iterator[Callable[[], None]]:
    """Ways to remake ``ws/d``: a directory, a file, a symlink to the outside."""

    def as_dir() -> None:
        (ws / "d").mkdir()
        (ws / "d" / "f").write_text("inside\n")

    def as_file() -> None:
        (ws / "d").write_text("inside\n")

    def as_link() -> None:
        os.symlink(outside, ws / "d")

    return itertools.cycle([as_dir, as_link, as_dir, as_link, as_file, as_link])


def file_states(ws: Path, outside: Path) -> Iterator[Callable[[], None]]:
    """Ways to remake ``ws/d/f``: a file, symlinks out, a hard link out, a directory, a FIFO."""
    (ws / "d").mkdir()
    f = ws / "d" / "f"

    def as_file() -> None:
        f.write_text("inside\n")

    def as_link() -> None:
        os.symlink(outside / "f", f)

    def as_dir_link() -> None:
        os.symlink(outside / "sub", f)

    def as_hard_link() -> None:
        os.link(outside / "f", f)

    def as_dir() -> None:
        f.mkdir()
        (f / "f").write_text("inside\n")

    def as_fifo() -> None:
        os.mkfifo(f)

    # Mostly ways out, so that many calls meet one.
    states = [as_file, as_link, as_hard_link, as_dir_link, as_hard_link, as_dir, as_link]
    return itertools.cycle([*states, as_hard_link, as_fifo, as_hard_link])


class Flipper(threading.Thread):
    """Remakes one path again and again, as a background shell command would."""

    def __init__(self, path: Path, states: Iterator[Callable[[], None]]) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.states = states
        self.flips = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            _remove(self.path)
            try:
                next(self.states)()
            except OSError:
                continue  # a tool wrote there meanwhile (write_file makes files and dirs)
            self.flips += 1


def calls() -> list[tuple[str, dict[str, Any]]]:
    """One call of each kind on paths through ``d``; search looks for any secret (its
    pattern must not spell the secret out, or every "no matches" would hold it)."""
    secret = "SECRET-[0-9a-f]{16}"
    return [
        ("read_file", {"path": "d/f"}),
        ("write_file", {"path": "d/f", "content": "written\n"}),
        ("write_file", {"path": "d/new.txt", "content": "written\n"}),
        ("edit_file", {"path": "d/f", "old_text": "inside", "new_text": "edited"}),
        ("list_files", {"directory": "d"}),
        ("list_files", {"directory": ".", "recursive": False}),
        ("list_files", {"directory": "d/f"}),
        ("search", {"pattern": secret, "path": "d"}),
        ("search", {"pattern": "inside", "path": "d/f"}),
        ("search", {"pattern": secret}),
    ]


def race(tools: dict[str, Tool[Any]], flipper: Flipper) -> list[str]:
    """Call the tools' handlers round and round until the flipper has flipped
    ``MIN_FLIPS`` times and at least ``MIN_CALLS`` calls ran; every result and error."""
    seen: list[str] = []
    flipper.start()
    try:
        for number, (name, arguments) in enumerate(itertools.cycle(calls())):
            if (number >= MIN_CALLS and flipper.flips >= MIN_FLIPS) or not flipper.is_alive():
                break
            try:
                seen.append(str(tools[name].handler(**arguments)))
            except ToolError as exc:
                seen.append(str(exc))
    finally:
        flipper.stop.set()
        flipper.join()
    assert flipper.flips >= MIN_FLIPS
    return seen


def copied_in(ws: Path, secret: str) -> list[Path]:
    """Files of the workspace of their own (not links the flipper left) holding the secret."""
    found = []
    for base, _, files in os.walk(ws):
        for name in files:
            info = os.lstat(Path(base, name))
            own = stat.S_ISREG(info.st_mode) and info.st_nlink == 1
            if own and secret.encode() in Path(base, name).read_bytes():
                found.append(Path(base, name))
    return found


def assert_nothing_escaped(
    ws: Path, outside: Path, before: Snapshot, seen: list[str], secret: str
) -> None:
    assert snapshot(outside) == before
    assert [text for text in seen if secret in text] == []
    assert copied_in(ws, secret) == []


@pytest.mark.parametrize("flipped", ["directory", "file"])
def test_racing_a_path_through_a_flipped_entry_never_leaves_the_workspace(
    ws: Path, outside: Path, secret: str, flipped: str
) -> None:
    tools = make_toolbox(ws)
    states = directory_states(ws, outside) if flipped == "directory" else file_states(ws, outside)
    target = ws / "d" if flipped == "directory" else ws / "d" / "f"
    before = snapshot(outside)
    seen = race(tools, Flipper(target, states))
    assert len(seen) >= MIN_CALLS
    assert_nothing_escaped(ws, outside, before, seen, secret)


# The plain cases


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "a/b/c.txt"}),
        ("write_file", {"path": "a/b/c.txt", "content": "x"}),
        ("edit_file", {"path": "a/b/c.txt", "old_text": "x", "new_text": "y"}),
        ("list_files", {"directory": "a/b"}),
        ("search", {"pattern": "x", "path": "a/b/c.txt"}),
    ],
)
async def test_a_symlinked_directory_on_the_path_is_refused_and_named(
    ws: Path, name: str, arguments: dict[str, Any]
) -> None:
    (ws / "a" / "real").mkdir(parents=True)
    (ws / "a" / "real" / "c.txt").write_text("x")
    os.symlink("real", ws / "a" / "b")  # points inside, and is refused all the same
    with pytest.raises(ToolError, match="'a/b' is a symbolic link; the file tools do not follow"):
        await make_toolbox(ws)[name](**arguments)
    assert (ws / "a" / "real" / "c.txt").read_text() == "x"


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["read_file", "edit_file", "search"])
async def test_a_symlinked_file_is_refused_and_named(ws: Path, name: str) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / "real.txt").write_text("x")
    os.symlink("real.txt", ws / "sub" / "link.txt")
    arguments = {"read_file": {}, "edit_file": {"old_text": "x", "new_text": "y"}}
    with pytest.raises(ToolError, match=r"'sub/link\.txt' is a symbolic link"):
        await make_toolbox(ws)[name](path="sub/link.txt", **arguments.get(name, {"pattern": "x"}))
    assert (ws / "sub" / "real.txt").read_text() == "x"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "arguments", "refusal"),
    [
        ("read_file", {}, "read_file does not read it"),
        ("edit_file", {"old_text": "secret", "new_text": "mine"}, "edit_file does not change it"),
        ("search", {"pattern": "secret"}, "search does not look in it"),
    ],
)
async def test_a_hard_linked_file_is_refused(
    ws: Path, outside: Path, name: str, arguments: dict[str, Any], refusal: str
) -> None:
    os.link(outside / "f", ws / "f")
    before = snapshot(outside)
    with pytest.raises(
        ToolError, match=f"'f' has 2 hard links, so it may be a file outside.*{refusal}"
    ):
        await make_toolbox(ws)[name](path="f", **arguments)
    assert snapshot(outside) == before


@pytest.mark.anyio
async def test_listing_and_search_leave_hard_linked_files_out(ws: Path, outside: Path) -> None:
    os.link(outside / "f", ws / "linked.txt")
    (ws / "mine.txt").write_text("inside mine\n")
    tools = make_toolbox(ws)
    assert await tools["list_files"]() == "mine.txt  (12 bytes)"
    assert await tools["search"](pattern="inside") == "mine.txt:1: inside mine"


@pytest.mark.anyio
async def test_write_file_replaces_a_hard_link_instead_of_writing_through_it(
    ws: Path, outside: Path
) -> None:
    os.link(outside / "f", ws / "f")
    before = snapshot(outside)
    await make_toolbox(ws)["write_file"](path="f", content="mine\n")
    assert (ws / "f").read_text() == "mine\n"
    assert snapshot(outside) == before


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "arguments"),
    [("edit_file", {"old_text": "a", "new_text": "b"}), ("search", {"pattern": "a"})],
)
async def test_a_fifo_is_refused_without_blocking(
    ws: Path, name: str, arguments: dict[str, Any]
) -> None:
    os.mkfifo(ws / "pipe")
    with pytest.raises(ToolError, match="'pipe' is not a regular file"):
        await make_toolbox(ws)[name](path="pipe", **arguments)


@pytest.mark.anyio
async def test_dot_dot_that_stays_inside_works_even_through_a_missing_directory(ws: Path) -> None:
    tools = make_toolbox(ws)
    await tools["write_file"](path="src/app.py", content="x = 1\n")
    # ".." is resolved on the text: "nowhere" need not exist.
    assert await tools["read_file"](path="nowhere/../src/app.py") == "1\tx = 1"
    await tools["edit_file"](path="src/../src/app.py", old_text="1", new_text="2")
    assert (ws / "src" / "app.py").read_text() == "x = 2\n"
    assert await tools["list_files"](directory="src/..") == "src/app.py  (6 bytes)"


@pytest.fixture
def records(ws: Path) -> Path:
    path = ws / "records"
    path.mkdir()
    (path / "audit.jsonl").write_text("the audit log\n")
    return path


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "records/audit.jsonl"}),
        ("write_file", {"path": "records/audit.jsonl", "content": "forged"}),
        ("write_file", {"path": "records/new.jsonl", "content": "forged"}),
        ("edit_file", {"path": "records/audit.jsonl", "old_text": "the", "new_text": "a"}),
        ("list_files", {"directory": "records"}),
        ("search", {"pattern": "audit", "path": "records"}),
        ("read_file", {"path": ".swarm/runs/r1/audit.jsonl"}),
        ("list_files", {"directory": ".swarm/runs"}),
    ],
)
async def test_protected_run_records_are_refused(
    ws: Path, records: Path, name: str, arguments: dict[str, Any]
) -> None:
    (ws / ".swarm" / "runs" / "r1").mkdir(parents=True)
    (ws / ".swarm" / "runs" / "r1" / "audit.jsonl").write_text("the audit log\n")
    tools = make_toolbox(ws, protected=[records])
    with pytest.raises(ToolError, match="holds run records, which the file tools do not read"):
        await tools[name](**arguments)
    assert sorted(os.listdir(records)) == ["audit.jsonl"]
    assert (records / "audit.jsonl").read_text() == "the audit log\n"


def test_a_relative_protected_path_is_refused(ws: Path) -> None:
    with pytest.raises(ValueError, match="protected paths must be absolute, not 'records'"):
        make_toolbox(ws, protected=[Path("records")])


@pytest.mark.anyio
async def test_protected_run_records_are_left_out_of_listing_and_search(
    ws: Path, records: Path
) -> None:
    (ws / "notes.txt").write_text("about the audit\n")
    (ws / ".swarm" / "runs" / "r1").mkdir(parents=True)
    (ws / ".swarm" / "runs" / "r1" / "audit.jsonl").write_text("the audit log\n")
    (ws / ".swarm" / "notes.md").write_text("- the audit\n")
    tools = make_toolbox(ws, protected=[records])
    assert await tools["list_files"]() == "notes.txt  (16 bytes)"
    assert await tools["list_files"](recursive=False) == "notes.txt  (16 bytes)"
    assert await tools["search"](pattern="audit") == "notes.txt:1: about the audit"
    assert await tools["list_files"](directory=".swarm") == ".swarm/notes.md  (12 bytes)"


@pytest.mark.anyio
async def test_notes_refuse_a_notes_file_linked_outside(ws: Path, outside: Path) -> None:
    (ws / ".swarm").mkdir()
    os.symlink(outside / "f", ws / ".swarm" / "notes.md")
    before = snapshot(outside)
    notes = make_toolbox(ws)["notes"]
    with pytest.raises(ToolError, match=r"'\.swarm/notes\.md' is a symbolic link"):
        await notes(action="add", text="a note")
    with pytest.raises(ToolError, match=r"'\.swarm/notes\.md' is a symbolic link"):
        await notes(action="list")
    assert snapshot(outside) == before


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["todo.db", "todo.db-journal"])
async def test_todo_refuses_a_database_file_linked_outside(
    ws: Path, outside: Path, name: str
) -> None:
    (ws / ".swarm").mkdir()
    os.symlink(outside / "f", ws / ".swarm" / name)
    before = snapshot(outside)
    with pytest.raises(ToolError, match=rf"\.swarm/{name} is not a plain file"):
        await make_toolbox(ws)["todo"](action="add", text="a task")
    assert snapshot(outside) == before


@pytest.mark.anyio
async def test_todo_refuses_a_state_folder_linked_outside(ws: Path, outside: Path) -> None:
    os.symlink(outside, ws / ".swarm")
    before = snapshot(outside)
    with pytest.raises(ToolError, match=r"'\.swarm' is a symbolic link"):
        await make_toolbox(ws)["todo"](action="add", text="a task")
    assert snapshot(outside) == before

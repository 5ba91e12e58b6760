"""read_file, write_file, edit_file and list_files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import anyio.to_thread

from swarm.errors import ToolError
from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Tool

__all__ = ["file_tools"]

MAX_READ_BYTES = 256_000
MAX_LISTED = 500


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"'{path.name}' is a binary file; read_file shows text files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


def _write_atomically(path: Path, text: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return len(data)


def file_tools(workspace: Workspace) -> list[Tool[None]]:
    """The file tools of ``workspace``."""

    async def read_file(
        path: Annotated[str, Field(description="The file, relative to the workspace root.")],
        offset: Annotated[int, Field(description="The first line to show (1-based).", ge=1)] = 1,
        limit: Annotated[int, Field(description="How many lines at most.", ge=1)] = 2000,
    ) -> str:
        target = workspace.resolve(path, must_exist=True)
        if target.is_dir():
            raise ToolError(f"'{path}' is a directory; use list_files to see what is in it")
        if target.stat().st_size > MAX_READ_BYTES * 8:
            raise ToolError(f"'{path}' is {target.stat().st_size:,} bytes; too large to read")
        text = await anyio.to_thread.run_sync(_read_text, target)
        lines = text.splitlines()
        chosen = lines[offset - 1 : offset - 1 + limit]
        width = len(str(offset + len(chosen)))
        body = "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(chosen, start=offset))
        if len(body) > MAX_READ_BYTES:
            body = body[:MAX_READ_BYTES] + "\n[… cut: the file is longer; read less at a time]"
        shown_end = offset + len(chosen) - 1
        if not lines:
            return f"{path} is empty."
        if offset > len(lines):
            return f"{path} has {len(lines)} lines; offset {offset} is past its end."
        note = (
            f"\n[lines {offset}-{shown_end} of {len(lines)}; use offset to read more]"
            if shown_end < len(lines) or offset > 1
            else ""
        )
        return body + note

    async def write_file(
        path: Annotated[str, Field(description="The file, relative to the workspace root.")],
        content: Annotated[str, Field(description="The whole new content of the file.")],
    ) -> str:
        target = workspace.resolve(path)
        if target.is_dir():
            raise ToolError(f"'{path}' is a directory")
        existed = target.exists()
        size = await anyio.to_thread.run_sync(_write_atomically, target, content)
        verb = "Replaced" if existed else "Created"
        return f"{verb} {workspace.relative(target)} ({size:,} bytes)."

    async def edit_file(
        path: Annotated[str, Field(description="The file, relative to the workspace root.")],
        old_text: Annotated[str, Field(description="The exact text to replace.")],
        new_text: Annotated[str, Field(description="The text to put in its place.")],
        replace_all: Annotated[
            bool, Field(description="Replace every occurrence (default: exactly one).")
        ] = False,
    ) -> str:
        target = workspace.resolve(path, must_exist=True)
        if not old_text:
            raise ToolError("old_text is empty; give the exact text to replace")
        text = await anyio.to_thread.run_sync(_read_text, target)
        count = text.count(old_text)
        if count == 0:
            raise ToolError(
                f"old_text was not found in '{path}'. It must match the file exactly,"
                " whitespace included; read the file again and copy the text."
            )
        if count > 1 and not replace_all:
            raise ToolError(
                f"old_text occurs {count} times in '{path}'. Include more of the surrounding"
                " text to make it unique, or set replace_all to replace every occurrence."
            )
        updated = (
            text.replace(old_text, new_text) if replace_all else text.replace(old_text, new_text, 1)
        )
        await anyio.to_thread.run_sync(_write_atomically, target, updated)
        replaced = count if replace_all else 1
        plural = "s" if replaced > 1 else ""
        return f"Edited {workspace.relative(target)}: {replaced} replacement{plural}."

    async def list_files(
        directory: Annotated[
            str, Field(description="The directory, relative to the workspace root.")
        ] = ".",
        pattern: Annotated[str, Field(description="A glob for file names, e.g. *.py.")] = "*",
        recursive: Annotated[bool, Field(description="Include subdirectories.")] = True,
    ) -> str:
        target = workspace.resolve(directory, must_exist=True)
        if not target.is_dir():
            raise ToolError(f"'{directory}' is a file, not a directory")
        found = await anyio.to_thread.run_sync(
            lambda: workspace.walk(target, pattern, recursive=recursive)
        )
        if not found:
            return f"No files matching '{pattern}' in {workspace.relative(target)}."
        shown = [
            f"{workspace.relative(p)}  ({p.stat().st_size:,} bytes)" for p in found[:MAX_LISTED]
        ]
        if len(found) > MAX_LISTED:
            shown.append(f"[… {len(found) - MAX_LISTED} more; narrow the pattern or directory]")
        return "\n".join(shown)

    return [
        Tool("read_file", read_file, "Read a text file of the workspace, with line numbers."),
        Tool(
            "write_file",
            write_file,
            "Create or replace a file of the workspace with the given content"
            " (parent directories are created).",
        ),
        Tool(
            "edit_file",
            edit_file,
            "Replace exact text in a file of the workspace. old_text must match exactly and"
            " be unique unless replace_all is set.",
        ),
        Tool("list_files", list_files, "List the files of a workspace directory."),
    ]

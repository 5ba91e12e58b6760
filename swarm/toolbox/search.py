"""search: a regular expression over the text files of the workspace.

The handler is a plain function: ``Tool`` runs it in a worker thread.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Generator
from contextlib import closing
from typing import Annotated

from swarm.errors import ToolError
from swarm.toolbox._fs import open_entry, open_leaf, require_single_file, walk_files
from swarm.toolbox._paths import Parts, Workspace
from swarm.toolbox.files import SNIFF_BYTES, failed, is_binary, missing
from swarm.tools import Field, Tool

__all__ = ["search_tool"]

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_LINE = 300


def _excerpt(line: str, match: re.Match[str]) -> str:
    """The line, or a window of it around the match when it is long."""
    if len(line) <= MAX_LINE:
        return line
    start = max(0, min(match.start() - MAX_LINE // 3, len(line) - MAX_LINE))
    window = line[start : start + MAX_LINE]
    return ("…" if start else "") + window + ("…" if start + MAX_LINE < len(line) else "")


def _files(
    workspace: Workspace, parts: Parts, path: str, glob: str
) -> Generator[tuple[Parts, int, os.stat_result]]:
    """The files to search: ``parts`` itself if it is a file, else the single-link regular
    files below it matching ``glob``; each open while the caller looks at it."""
    with open_entry(workspace.root, parts) as (fd, info):
        if not stat.S_ISDIR(info.st_mode):
            require_single_file(info, path, "search does not look in it")
            yield parts, fd, info
            return
        for entry in walk_files(fd, glob, skip=workspace.protected_below(parts)):
            try:
                child, found = open_leaf(entry.parent, entry.below)
            except (OSError, ToolError):
                continue  # gone, or swapped for a symlink since it was listed
            try:
                # Judged again on the open file: the entry may have changed since.
                if stat.S_ISREG(found.st_mode) and found.st_nlink == 1:
                    yield (*parts, *entry.below), child, found
            finally:
                os.close(child)


def _search_file(fd: int, regex: re.Pattern[str]) -> list[tuple[int, str]] | None:
    """The matching lines of the open file ``fd``; ``None`` for a binary file."""
    with open(fd, "rb", closefd=False) as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if is_binary(data[:SNIFF_BYTES]):
        return None
    found = []
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), start=1):
        line = line.removesuffix("\r")
        match = regex.search(line)
        if match:
            found.append((number, _excerpt(line, match)))
    return found


def search_tool(workspace: Workspace, *, output_limit: int) -> Tool[None]:
    """The ``search`` tool of ``workspace``; ``output_limit`` caps its output's characters."""

    def search(
        pattern: Annotated[
            str,
            Field(
                description="A Python regular expression, matched against each line"
                r" (e.g. def \w+\( or TODO|FIXME)."
            ),
        ],
        path: Annotated[
            str,
            Field(description="Where to look: a directory or one file (default: the workspace)."),
        ] = ".",
        glob: Annotated[
            str,
            Field(description="Only files whose names match this glob, e.g. *.py or *.{js,ts}."),
        ] = "*",
        ignore_case: Annotated[bool, Field(description="Match case-insensitively.")] = False,
        max_results: Annotated[
            int,
            Field(description="Stop after this many matching lines (default 100).", ge=1, le=2000),
        ] = 100,
    ) -> str:
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolError(
                f"invalid regular expression {pattern!r}: {exc}. Use Python's re syntax;"
                " escape special characters such as ( [ . * + ? with a backslash to match"
                " them literally."
            ) from None
        parts = workspace.locate(path)
        hits: list[str] = []
        used, searched, too_big, stopped = 0, 0, 0, False
        try:
            with closing(_files(workspace, parts, path, glob)) as files:
                for file, fd, info in files:
                    if info.st_size > MAX_FILE_BYTES:
                        too_big += 1
                        continue
                    try:
                        found = _search_file(fd, regex)
                    except OSError:
                        continue
                    if found is None:
                        if file == parts:
                            raise ToolError(
                                f"'{path}' is a binary file; search looks in text files only"
                            )
                        continue
                    searched += 1
                    for number, line in found:
                        hit = f"{workspace.relative(file)}:{number}: {line}"
                        used += len(hit) + 1
                        if len(hits) >= max_results or used > output_limit:
                            stopped = True
                            break
                        hits.append(hit)
                    if stopped:
                        break
        except (FileNotFoundError, NotADirectoryError):
            raise missing(path) from None
        except OSError as exc:
            raise failed("search", path, exc) from None
        notes = []
        if stopped:
            notes.append(
                f"[results stop at {len(hits)} lines; narrow the pattern, path or glob"
                " (or raise max_results) to see the rest]"
            )
        if too_big:
            notes.append(f"[{too_big} file(s) over {MAX_FILE_BYTES // 2**20} MB not searched]")
        if not hits:
            files_word = "file" if searched == 1 else "files"
            return "\n".join([f"No matches for {pattern!r} in {searched} {files_word}.", *notes])
        return "\n".join(hits + notes)

    return Tool(
        "search",
        search,
        "Search the text files of the workspace for a regular expression, line by line."
        " Results are path:line: text. Use it to find definitions, uses and strings before"
        " reading files. Symbolic links and files with several hard links are left out.",
    )

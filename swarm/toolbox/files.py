"""read_file, write_file and edit_file.

The handlers are plain functions: ``Tool`` runs them in a worker thread, so their file
I/O never blocks the event loop.
"""

from __future__ import annotations

import codecs
import os
import stat
import threading
from collections.abc import Iterator
from typing import Annotated, BinaryIO

from swarm.errors import ToolError
from swarm.toolbox._fs import (
    open_dir,
    open_entry,
    open_leaf,
    require_single_file,
    stop_if_cancelled,
    write_file_at,
)
from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Tool

__all__ = ["SNIFF_BYTES", "failed", "file_tools", "is_binary", "missing"]

SNIFF_BYTES = 8192
MAX_LINE_CHARS = 2000
COUNT_LINES_UP_TO = 64 * 1024 * 1024  # past this size, read_file does not count every line
MAX_EDIT_BYTES = 8 * 1024 * 1024
"""The largest file edit_file reads, and the largest it writes."""
LINE_READ_BYTES = 64 * 1024
"""Bytes of one line read_file holds (it shows ``MAX_LINE_CHARS`` of them); the rest of
a longer line is read past, never kept."""
CHUNK_BYTES = 1024 * 1024  # what read_file reads at a time past a page or a long line's start


def is_binary(head: bytes) -> bool:
    """Whether a file starting with ``head`` is binary (it holds a NUL byte)."""
    return b"\x00" in head


def failed(action: str, path: str, exc: OSError) -> ToolError:
    """The error for an ``OSError`` met while doing ``action`` to ``path``."""
    return ToolError(f"could not {action} '{path}': {exc.strerror or exc}")


def missing(path: str) -> ToolError:
    """The error for a path that names nothing in the workspace."""
    return ToolError(f"'{path}' does not exist in the workspace; list_files shows what is there")


def _lines(handle: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Each line of ``handle`` from where it stands: its first ``LINE_READ_BYTES`` bytes
    (with its newline when that is all of it) and its whole length in bytes. The rest of
    a longer line is read a ``CHUNK_BYTES`` at a time and dropped, so no line is ever
    held whole, whatever the file's shape (one 256 MiB line, a sparse file)."""
    while head := handle.readline(LINE_READ_BYTES):
        length = len(head)
        if length == LINE_READ_BYTES and not head.endswith(b"\n"):
            while True:
                stop_if_cancelled()
                rest = handle.readline(CHUNK_BYTES)
                length += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        yield head, length


def _lines_left(handle: BinaryIO) -> int:
    """How many lines ``handle`` holds from where it stands (at a line's start), read a
    chunk at a time."""
    count, last = 0, b"\n"
    while chunk := handle.read(CHUNK_BYTES):
        stop_if_cancelled()
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _shown_line(head: bytes, length: int) -> tuple[str, bool]:
    """A line as read_file shows it (cut past ``MAX_LINE_CHARS``), and whether it held
    bytes that are not UTF-8."""
    whole = length == len(head)
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:  # a line read in part may end inside a character: not an error
        line, undecodable = decoder.decode(head, final=whole), False
    except UnicodeDecodeError:
        line, undecodable = head.decode("utf-8", "replace"), True
    line = line.rstrip("\r\n")
    if not whole:
        line = f"{line[:MAX_LINE_CHARS]}… [line cut: {length:,} bytes]"
    elif len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line):,} characters]"
    return line, undecodable


def _read_page(fd: int, size: int, shown_as: str, offset: int, limit: int, cap: int) -> str:
    """Lines ``offset`` on of the open file ``fd``, at most ``limit`` of them and ``cap``
    characters, numbered, with a note on where to read on. Holds no more than the page
    and one ``LINE_READ_BYTES`` window in memory, whatever the file's size or shape."""
    shown: list[tuple[int, str]] = []
    chars, number, undecodable, capped, more = 0, 0, False, False, False
    with open(fd, "rb", closefd=False) as handle:
        if is_binary(handle.read(SNIFF_BYTES)):
            raise ToolError(
                f"'{shown_as}' is a binary file; read_file shows text files only"
                " (the shell tool can inspect it, e.g. with file or xxd)"
            )
        handle.seek(0)
        for head, length in _lines(handle):
            number += 1
            if number < offset:
                continue
            line, bad = _shown_line(head, length)
            if shown and chars + len(line) > cap:
                capped = more = True
                break
            undecodable |= bad
            shown.append((number, line))
            chars += len(line) + 8
            if len(shown) >= limit:
                more = True
                break
        total = number
        if more and size <= COUNT_LINES_UP_TO:
            total = number + _lines_left(handle)
        elif more:
            total = -1 if handle.peek(1) else number  # too big to count the rest
    if total == 0:
        return f"'{shown_as}' is empty."
    if not shown:
        raise ToolError(f"'{shown_as}' has {total} lines; offset {offset} is past its end")
    last = shown[-1][0]
    width = len(str(last))
    body = "\n".join(f"{number:>{width}}\t{line}" for number, line in shown)
    notes = []
    if undecodable:
        notes.append("[the file is not valid UTF-8: undecodable bytes are shown as �]")
    of = "" if total < 0 else f" of {total}"
    if capped:
        notes.append(
            f"[output cap reached: lines {offset}-{last}{of}; read on with offset={last + 1}]"
        )
    elif last != total:
        notes.append(f"[lines {offset}-{last}{of}; read on with offset={last + 1}]")
    elif offset > 1:
        notes.append(f"[lines {offset}-{last} of {total}: the end of the file]")
    return "\n".join([body, *notes])


def _occurrence_lines(text: str, needle: str, most: int = 10) -> list[int]:
    lines: list[int] = []
    start = 0
    while len(lines) < most and (found := text.find(needle, start)) != -1:
        lines.append(text.count("\n", 0, found) + 1)
        start = found + len(needle)
    return lines


def _mismatch_hint(text: str, old_text: str) -> str:
    """Where old_text's first line is in the file, if it is, to show what went wrong."""
    first = next((line for line in old_text.splitlines() if line.strip()), "")
    if not first:
        return ""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() != first.strip():
            continue
        if first in line:
            return f" Its first line matches line {number}, but a line after it differs."
        return (
            f" Its first line appears at line {number} with different indentation or"
            " surrounding whitespace."
        )
    return ""


def _edited(
    text: str, path: str, old_text: str, new_text: str, replace_all: bool
) -> tuple[str, str]:
    """``text`` with ``old_text`` replaced, and what the edit did; ``ToolError`` when
    ``old_text`` is missing or, without ``replace_all``, not unique."""
    count = text.count(old_text)
    if count == 0 and "\r\n" in text and "\n" in old_text and "\r\n" not in old_text:
        # The model saw the lines without their Windows line endings.
        old_text = old_text.replace("\n", "\r\n")
        new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
        count = text.count(old_text)
    if count == 0:
        raise ToolError(
            f"old_text was not found in '{path}'. It must match the file exactly,"
            " whitespace and indentation included; read the file again with read_file"
            " and copy the text from it." + _mismatch_hint(text, old_text)
        )
    lines = _occurrence_lines(text, old_text)
    if count > 1 and not replace_all:
        at = ", ".join(map(str, lines)) + (", …" if count > len(lines) else "")
        raise ToolError(
            f"old_text occurs {count} times in '{path}' (at lines {at}). Include more"
            " of the surrounding text to make it unique, or set replace_all to"
            f" replace all {count}."
        )
    grown = len(text) + (count if replace_all else 1) * (len(new_text) - len(old_text))
    if grown > MAX_EDIT_BYTES:
        raise ToolError(
            f"the edited '{path}' would be about {grown:,} characters; edit_file writes files"
            f" up to {MAX_EDIT_BYTES // 2**20} MB"
        )
    updated = text.replace(old_text, new_text, -1 if replace_all else 1)
    done = (
        f"replaced the text at line {lines[0]}"
        if count == 1
        else f"replaced all {count} occurrences"
    )
    return updated, done


def _text_of(fd: int, info: os.stat_result, path: str) -> str:
    """The UTF-8 text of the open file ``fd`` that edit_file is about to change."""
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"'{path}' is a directory; give a file path")
    require_single_file(info, path, "edit_file does not change it (write_file replaces it whole)")
    with open(fd, "rb", closefd=False) as handle:
        data = handle.read(MAX_EDIT_BYTES + 1)  # the file may have grown since fstat
    if max(info.st_size, len(data)) > MAX_EDIT_BYTES:
        raise ToolError(
            f"'{path}' is {max(info.st_size, len(data)):,} bytes; edit_file edits files up to"
            f" {MAX_EDIT_BYTES // 2**20} MB (the shell tool can change a larger one, e.g. with"
            " sed)"
        )
    if is_binary(data[:SNIFF_BYTES]):
        raise ToolError(f"'{path}' is a binary file; edit_file edits text files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"'{path}' is not valid UTF-8 text; edit_file would damage it"
            " (write_file replaces a file whole)"
        ) from None


def file_tools(workspace: Workspace, *, output_limit: int) -> list[Tool[None]]:
    """read_file, write_file and edit_file, confined to ``workspace``.

    Paths are opened through ``swarm.toolbox._fs``: a symlink on the way is refused, and a
    concurrent process swapping directories cannot make a call leave the workspace.
    ``output_limit`` caps the characters of a file that one read_file call shows.
    Writes and edits in one toolbox happen one at a time, so parallel edits of the same
    file do not lose each other's changes.
    """
    writing = threading.Lock()
    root = workspace.root

    def read_file(
        path: Annotated[str, Field(description="The file, relative to the workspace root.")],
        offset: Annotated[
            int, Field(description="The first line to show (1-based; default 1).", ge=1)
        ] = 1,
        limit: Annotated[
            int, Field(description="How many lines to show at most (default 2000).", ge=1)
        ] = 2000,
    ) -> str:
        parts = workspace.locate(path)
        try:
            with open_entry(root, parts) as (fd, info):
                if stat.S_ISDIR(info.st_mode):
                    raise ToolError(f"'{path}' is a directory; use list_files to see what is in it")
                require_single_file(info, path, "read_file does not read it")
                return _read_page(fd, info.st_size, path, offset, limit, output_limit)
        except (FileNotFoundError, NotADirectoryError):
            raise missing(path) from None
        except OSError as exc:
            raise failed("read", path, exc) from None

    def write_file(
        path: Annotated[
            str, Field(description="The file to create or replace, relative to the workspace.")
        ],
        content: Annotated[str, Field(description="The complete new content of the file.")],
    ) -> str:
        parts = workspace.locate(path, writable=True)
        data = content.encode("utf-8")
        with writing:
            try:
                if not parts:
                    raise IsADirectoryError
                with open_dir(root, parts[:-1], create=True) as parent:
                    existed = write_file_at(parent, parts, data)
            except IsADirectoryError:
                raise ToolError(f"'{path}' is a directory; give a file path") from None
            except OSError as exc:
                raise failed("write", path, exc) from None
        verb = "Replaced" if existed else "Created"
        return f"{verb} {workspace.relative(parts)} ({len(data):,} bytes)."

    def edit_file(
        path: Annotated[str, Field(description="The file to edit, relative to the workspace.")],
        old_text: Annotated[
            str,
            Field(
                description="The exact text to replace, copied from the file with its"
                " indentation and line breaks (without read_file's line numbers); include"
                " enough lines to make it unique."
            ),
        ],
        new_text: Annotated[str, Field(description="The text to put in its place.")],
        replace_all: Annotated[
            bool,
            Field(description="Replace every occurrence instead of exactly one (default false)."),
        ] = False,
    ) -> str:
        parts = workspace.locate(path, writable=True)
        if not parts:
            raise ToolError(f"'{path}' is a directory; give a file path")
        if not old_text:
            raise ToolError(
                "old_text is empty; give the exact text to replace (write_file creates files)"
            )
        if old_text == new_text:
            raise ToolError("old_text and new_text are the same; there is nothing to change")
        with writing:
            try:
                # Read and replace in the one directory descriptor: whatever is swapped
                # meanwhile, the edited text comes from, and goes back to, the same place.
                with open_dir(root, parts[:-1]) as parent:
                    fd, info = open_leaf(parent, parts)
                    try:
                        text = _text_of(fd, info, path)
                    finally:
                        os.close(fd)
                    updated, done = _edited(text, path, old_text, new_text, replace_all)
                    write_file_at(parent, parts, updated.encode("utf-8"))
            except (FileNotFoundError, NotADirectoryError):
                raise missing(path) from None
            except IsADirectoryError:
                raise ToolError(f"'{path}' is a directory; give a file path") from None
            except OSError as exc:
                raise failed("edit", path, exc) from None
        return f"Edited {workspace.relative(parts)}: {done}."

    return [
        Tool(
            "read_file",
            read_file,
            "Read a text file of the workspace. Lines come numbered (number, tab, text; the"
            " numbers are not part of the file). Long files come a page at a time: use offset"
            " and limit to read on. Binary files, symbolic links and files with several hard"
            " links are refused.",
        ),
        Tool(
            "write_file",
            write_file,
            "Create a file of the workspace, or replace one whole, with the given content."
            " Parent directories are created. Paths through symbolic links are refused."
            " Prefer edit_file for changing part of a file.",
        ),
        Tool(
            "edit_file",
            edit_file,
            "Change part of a text file: replace old_text, which must occur in the file exactly"
            " once (whitespace included), with new_text; set replace_all to replace every"
            " occurrence. Read the file first so old_text matches it exactly. Symbolic links"
            " and files with several hard links are refused.",
        ),
    ]

"""search: a regular expression over the text files of the workspace.

Patterns run on RE2 (``google-re2``), which matches in time linear in the text and
releases the interpreter lock while it matches: no pattern can hang the run the way a
backtracking engine does on ``^(a+)+$``. What one call reads is bounded: files over
``MAX_FILE_BYTES`` are skipped, and the call stops after ``MAX_TOTAL_BYTES`` read or
``MAX_FILES`` searched, and says so.

The handler is a plain function: ``Tool`` runs it in a worker thread, and it stops
between files once its call is cancelled (its timeout, or the run's limit).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator, Iterator
from contextlib import closing
from typing import Annotated, Any

from swarm.errors import ToolError
from swarm.toolbox._fs import (
    MAX_DIR_ENTRIES,
    open_entry,
    open_leaf,
    require_single_file,
    stop_if_cancelled,
    walk_files,
)
from swarm.toolbox._paths import Parts, Workspace
from swarm.toolbox.files import SNIFF_BYTES, failed, is_binary, missing
from swarm.tools import Field, Tool

__all__ = ["search_tool"]

MAX_FILE_BYTES = 4 * 1024 * 1024
"""A file larger than this is not searched (and the result says how many were not)."""
MAX_TOTAL_BYTES = 64 * 1024 * 1024
"""Bytes one call reads in all; past it the call stops and says so."""
MAX_FILES = 20_000
"""Files one call searches at most."""
MAX_PATTERN = 2000
"""Characters of a pattern."""
MAX_LINE = 300

# What RE2 refuses that Python's re takes, by the start of RE2's error text's subject.
_UNSUPPORTED = (
    ("(?<=", "lookbehind (?<=...)"),
    ("(?<!", "negative lookbehind (?<!...)"),
    ("(?=", "lookahead (?=...)"),
    ("(?!", "negative lookahead (?!...)"),
    ("(?>", "an atomic group (?>...)"),
    ("(?#", "a comment group (?#...)"),
    ("(?(", "a conditional group (?(...)"),
    ("(?P=", "a named backreference (?P=name)"),
)


def _construct(error: str, pattern: str) -> str | None:
    """The construct RE2 refused in ``pattern``, in words, from its error text; ``None``
    for a plain syntax error."""
    kind, _, subject = error.partition(": ")
    if kind == "invalid perl operator":
        if subject == "(?P" and "(?P=" in pattern:  # RE2 quotes no more than (?P
            subject = "(?P="
        return next((name for start, name in _UNSUPPORTED if subject.startswith(start)), None)
    if kind == "invalid escape sequence" and subject[1:2].isdigit():
        return f"a backreference {subject}"
    if kind == "bad repetition operator" and subject[-1:] == "+":
        return f"a possessive quantifier {subject}"
    if kind == "invalid repetition size":
        return f"a repetition count over 1000 {subject}"
    if kind == "pattern too large - compile failed":
        return "a pattern this large"
    return None


def _translated(pattern: str) -> str:
    """``pattern`` with Python's anchors in RE2's words: each line is searched as its own
    subject, so ``\\A`` is the line's start (``^``) and ``\\Z`` its end (``$``)."""
    out: list[str] = []
    i, in_class_from = 0, -1  # where the open [class]'s items begin; -1: in no class
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if in_class_from < 0 and escaped == "A":
                out.append("^")
            elif in_class_from < 0 and escaped in "Zz":
                out.append("$")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class_from < 0 and char == "[":
            in_class_from = i + 1 + (pattern[i + 1 : i + 2] == "^")
        elif in_class_from >= 0 and char == "]" and i > in_class_from:
            in_class_from = -1  # a ] first in a class is a literal
        out.append(char)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> Any:
    """``pattern`` compiled by RE2 to search a whole file for lines that match.

    Raises ``ToolError`` naming what is wrong: a construct RE2 does not have (lookaround,
    backreferences, possessive quantifiers, atomic groups), or a plain syntax error.
    """
    import re2  # type: ignore[import-untyped]  # loaded when a search runs

    if len(pattern) > MAX_PATTERN:
        raise ToolError(
            f"the pattern is {len(pattern):,} characters; search takes {MAX_PATTERN:,} at most"
        )
    options = re2.Options()
    options.log_errors = False
    options.never_nl = True  # a match never spans two lines: each line is a subject
    options.case_sensitive = not ignore_case
    whole = "(?m)" + _translated(pattern)
    try:
        return re2.compile(whole, options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
    detail = detail.replace(whole, pattern)  # RE2 quotes the pattern it was given
    construct = _construct(detail, pattern)
    if construct is not None:
        raise ToolError(
            f"search cannot use {construct} in {pattern!r}: its patterns run on RE2, which"
            " never backtracks (so no pattern can hang) and has no lookaround,"
            " backreferences, atomic groups or possessive quantifiers. Rewrite the pattern"
            " without it, or search more broadly and read the lines found."
        )
    raise ToolError(
        f"invalid regular expression {pattern!r}: {detail}. Patterns use RE2 syntax (as"
        " Python's re, without lookaround or backreferences); escape special characters"
        " such as ( [ . * + ? with a backslash to match them literally."
    )


def _forget_patterns() -> None:
    """Empty re2's cache of compiled patterns (128 of them, each up to 8 MiB of automaton)
    so what a search compiled is freed when it ends, not kept for a pattern never seen
    again."""
    import re2

    re2.purge()


def _excerpt(line: bytes, start: int) -> str:
    """The line, or a window of it around the match starting at byte ``start``."""
    if len(line) <= MAX_LINE:  # bytes bound characters: short enough either way
        return line.decode("utf-8", "replace")
    before = len(line[:start].decode("utf-8", "replace"))
    text = line.decode("utf-8", "replace")
    if len(text) <= MAX_LINE:
        return text
    first = max(0, min(before - MAX_LINE // 3, len(text) - MAX_LINE))
    window = text[first : first + MAX_LINE]
    return ("…" if first else "") + window + ("…" if first + MAX_LINE < len(text) else "")


def _matching_lines(data: bytes, regex: Any) -> Iterator[tuple[int, str]]:
    """Each line of ``data`` that ``regex`` matches: its number and text (an excerpt).

    The whole buffer is searched at once (a call per line would cost eight times as
    much); ``never_nl`` keeps every match inside one line, and the search goes on from
    the line after each match."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    pos, number, counted_to = 0, 1, 0
    while pos <= len(data):
        match = regex.search(data, pos)
        if match is None:
            return
        start = match.start()
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        if line_end < 0:
            line_end = len(data)
        number += data.count(b"\n", counted_to, line_start)
        counted_to = line_start
        yield number, _excerpt(data[line_start:line_end], start - line_start)
        pos = line_end + 1


def _files(
    workspace: Workspace, parts: Parts, path: str, glob: str, cut: list[Parts]
) -> Generator[tuple[Parts, int, os.stat_result]]:
    """The files to search: ``parts`` itself if it is a file, else the single-link regular
    files below it matching ``glob``; each open while the caller looks at it. Directories
    whose entries were not all looked at go to ``cut``."""
    with open_entry(workspace.root, parts) as (fd, info):
        if not stat.S_ISDIR(info.st_mode):
            require_single_file(info, path, "search does not look in it")
            yield parts, fd, info
            return
        for entry in walk_files(fd, glob, skip=workspace.protected_below(parts), cut=cut):
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


def _read(fd: int, most: int) -> bytes:
    """At most ``most`` bytes of the open file ``fd`` from its start."""
    with open(fd, "rb", closefd=False) as handle:
        return handle.read(most) or b""


class _Search:
    """One search call's progress: the hits, and what it read, skipped and cut."""

    def __init__(self, max_results: int, output_limit: int) -> None:
        self.hits: list[str] = []
        self.max_results, self.output_limit = max_results, output_limit
        self.used = self.read = self.searched = self.too_big = 0
        self.stopped = self.budget_spent = False
        self.cut: list[Parts] = []

    def take(self, shown: str, found: Iterator[tuple[int, str]]) -> None:
        """Keep the hits of one file, until results or output are full."""
        for number, line in found:
            hit = f"{shown}:{number}: {line}"
            self.used += len(hit) + 1
            if len(self.hits) >= self.max_results or self.used > self.output_limit:
                self.stopped = True
                return
            self.hits.append(hit)

    def notes(self, workspace: Workspace, parts: Parts) -> list[str]:
        """What the result must say about where the search of ``parts`` stopped."""
        notes = []
        if self.stopped:
            notes.append(
                f"[results stop at {len(self.hits)} lines; narrow the pattern, path or glob"
                " (or raise max_results) to see the rest]"
            )
        if self.budget_spent:
            notes.append(
                f"[search stopped after {self.searched:,} files ({self.read // 2**20} MB"
                " read): narrow the path or glob to search the rest]"
            )
        notes.extend(
            f"[… more than {MAX_DIR_ENTRIES:,} entries in"
            f" {workspace.relative((*parts, *below))}/:"
            " only the first were searched]"
            for below in self.cut[:5]
        )
        if self.too_big:
            notes.append(f"[{self.too_big} file(s) over {MAX_FILE_BYTES // 2**20} MB not searched]")
        return notes


def search_tool(workspace: Workspace, *, output_limit: int) -> Tool[None]:
    """The ``search`` tool of ``workspace``; ``output_limit`` caps its output's characters."""

    def search(
        pattern: Annotated[
            str,
            Field(
                description="A regular expression (RE2 syntax: Python's re without lookaround"
                r" or backreferences), matched against each line (e.g. def \w+\( or"
                " TODO|FIXME)."
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
        parts = workspace.locate(path)
        state = _Search(max_results, output_limit)
        regex = compile_pattern(pattern, ignore_case=ignore_case)
        try:
            with closing(_files(workspace, parts, path, glob, state.cut)) as files:
                for file, fd, info in files:
                    stop_if_cancelled()
                    if info.st_size > MAX_FILE_BYTES:
                        state.too_big += 1
                        continue
                    if state.read + info.st_size > MAX_TOTAL_BYTES or state.searched >= MAX_FILES:
                        state.budget_spent = True
                        break
                    try:
                        data = _read(fd, MAX_FILE_BYTES)
                    except OSError:
                        continue
                    state.read += len(data)
                    if is_binary(data[:SNIFF_BYTES]):
                        if file == parts:
                            raise ToolError(
                                f"'{path}' is a binary file; search looks in text files only"
                            )
                        continue
                    state.searched += 1
                    state.take(workspace.relative(file), _matching_lines(data, regex))
                    if state.stopped:
                        break
        except (FileNotFoundError, NotADirectoryError):
            raise missing(path) from None
        except OSError as exc:
            raise failed("search", path, exc) from None
        finally:
            _forget_patterns()
        if not state.hits:
            files_word = "file" if state.searched == 1 else "files"
            found = f"No matches for {pattern!r} in {state.searched} {files_word}."
            return "\n".join([found, *state.notes(workspace, parts)])
        return "\n".join(state.hits + state.notes(workspace, parts))

    return Tool(
        "search",
        search,
        "Search the text files of the workspace for a regular expression (RE2 syntax),"
        " line by line. Results are path:line: text. Use it to find definitions, uses and"
        " strings before reading files. Symbolic links and files with several hard links"
        " are left out.",
    )

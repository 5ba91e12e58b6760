"""Confinement: which workspace entry a path argument names, decided on the text alone.

A path is turned into its components below the workspace root (``..`` resolved lexically,
never on disk); ``swarm.toolbox._fs`` then walks those components with directory
descriptors, refusing symlinks, so what is checked is what is opened. Also the two things
every file-walking tool shares: which directories are never walked (``SKIPPED_DIRS``) and
how a glob such as ``src/**/*.py`` or ``*.{ts,tsx}`` is matched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.errors import ToolError
from swarm.scope import current_call

if TYPE_CHECKING:
    from swarm.guards.protect import ProtectedPaths

__all__ = ["RUNS_DIR", "SKIPPED_DIRS", "STATE_DIR", "Parts", "Workspace", "glob_matcher"]

STATE_DIR = ".swarm"
"""The workspace folder holding swarm's own state: notes, the task list, run records."""

RUNS_DIR = f"{STATE_DIR}/runs"
"""Where run records go by default; the file tools never read, write or list it."""

SKIPPED_DIRS = frozenset({".git", STATE_DIR, "__pycache__", ".venv", "venv", "node_modules"})
"""Directories that listing and searching never walk into."""

Parts = tuple[str, ...]
"""A workspace entry as its path components below the root; ``()`` is the root itself."""


class Workspace:
    """The directory the agents work in; ``locate`` refuses anything outside it.

    The tools check confinement themselves, whatever policy guards the calls. ``protected``
    are absolute paths (run records) that no file tool reads, writes or lists even when
    they lie inside; the workspace's own ``.swarm/runs`` always is. ``readonly`` are the
    run's protected paths (``swarm.guards.protect``): read, never written, with the
    ``protect`` globs a policy guard noted on the current call. Raises ``ValueError`` for
    a protected path that is not absolute.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        protected: Iterable[Path] = (),
        readonly: ProtectedPaths | None = None,
    ) -> None:
        given = Path(os.path.abspath(root))
        self.root = Path(os.path.realpath(root))
        self._aliases = (self.root, given)
        hidden = {tuple(RUNS_DIR.split("/"))}
        for path in protected:
            if not Path(path).is_absolute():
                raise ValueError(f"protected paths must be absolute, not {str(path)!r}")
            for alias in {Path(os.path.abspath(path)), Path(os.path.realpath(path))}:
                parts = self._inside(alias)
                if parts is not None:
                    hidden.add(parts)
        self._protected = frozenset(hidden)
        self.readonly = readonly

    def locate(self, path: str, *, writable: bool = False) -> Parts:
        """The components of ``path`` (relative to the workspace root, or absolute).

        ``..`` is resolved on the text, before anything is opened. Raises ``ToolError``
        when ``path`` holds a NUL, leads outside the workspace (through ``..``, as an
        absolute path elsewhere, or starting with ``~``), names protected run records, or,
        with ``writable``, lies in swarm's own ``.swarm`` folder, which the file tools may
        not change, or is a protected path (``readonly``). Symlinks are refused later, by
        the walk that opens the path.
        """
        if "\x00" in path:
            raise ToolError(f"{path!r} is not a valid path (it holds a NUL character)")
        candidate = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        parts = self._inside(Path(os.path.normpath(candidate)))
        if parts is None:
            raise ToolError(
                f"'{path}' is outside the workspace; use a path inside it (relative paths"
                " start at the workspace root)"
            )
        if self.is_protected(parts):
            raise ToolError(
                f"'{path}' holds run records, which the file tools do not read, write or list"
            )
        if writable and parts[:1] == (STATE_DIR,):
            raise ToolError(
                f"'{path}' is in {STATE_DIR}/, which holds swarm's own notes, tasks and run"
                " records; the file tools do not change it (use the notes and todo tools)"
            )
        if writable and self.readonly is not None:
            call = current_call()
            paths = self.readonly.widened(call.protect or () if call is not None else ())
            if paths.covers(self.root.joinpath(*parts)):
                raise ToolError(
                    f"'{path}' is protected (it controls the run, or runs later outside the"
                    " sandbox); the file tools do not change it"
                )
        return parts

    def is_protected(self, parts: Parts) -> bool:
        """Whether ``parts`` is a protected path or lies below one."""
        return any(parts[: len(hidden)] == hidden for hidden in self._protected)

    def protected_below(self, parts: Parts) -> Callable[[Parts], bool]:
        """A test for entries below the directory ``parts``, given as components below
        it: whether each is protected (for ``swarm.toolbox._fs.walk``'s ``skip``)."""
        return lambda below: self.is_protected((*parts, *below))

    @staticmethod
    def relative(parts: Parts) -> str:
        """``parts`` as the model should see it: relative to the workspace root."""
        return "/".join(parts) or "."

    def _inside(self, path: Path) -> Parts | None:
        """The components of the normalised absolute ``path`` below the root, if inside."""
        for alias in self._aliases:
            if path == alias or path.is_relative_to(alias):
                return path.relative_to(alias).parts
        return None


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A test for names or relative paths against a glob.

    ``*`` and ``?`` stay within one path segment, ``**`` crosses segments (``**/`` also
    matches no directory at all), ``[abc]``/``[!abc]`` are character classes and
    ``{a,b}`` alternatives.
    """
    pattern = pattern.removeprefix("./") or "*"
    regex = _compile(_translate(pattern))
    return lambda text: regex.fullmatch(text) is not None


def _compile(translated: str) -> Any:
    """``translated`` compiled by RE2, which matches in time linear in the text: Python's
    ``re`` backtracks (``*a*a*a...*b`` against a long name) in C, holding the interpreter
    lock, so no tool timeout or run limit could fire. Raises ``ToolError`` for a glob RE2
    cannot read (a character class it reads otherwise)."""
    import re2  # type: ignore[import-untyped]  # loaded when a glob is first matched

    options = re2.Options()
    options.dot_nl = True
    options.log_errors = False
    try:
        return re2.compile(translated, options)
    except re2.error:
        raise ToolError(
            f"the glob's character class cannot be read (as regex: {translated!r});"
            " write it as [abc], [a-z] or [!abc]"
        ) from None


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        elif char == "{" and (end := pattern.find("}", i)) != -1:
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)

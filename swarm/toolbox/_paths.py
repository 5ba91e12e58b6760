"""Confinement: every path a built-in tool touches resolves inside the workspace.

Also the two things every file-walking tool shares: which directories are never walked
(``SKIPPED_DIRS``) and how a glob such as ``src/**/*.py`` or ``*.{ts,tsx}`` is matched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from swarm.errors import ToolError

__all__ = ["SKIPPED_DIRS", "STATE_DIR", "Workspace", "glob_matcher"]

STATE_DIR = ".swarm"
"""The workspace folder holding swarm's own state: notes, the task list, run records."""

SKIPPED_DIRS = frozenset({".git", STATE_DIR, "__pycache__", ".venv", "venv", "node_modules"})
"""Directories that listing and searching never walk into."""


class Workspace:
    """The directory the agents work in; ``resolve`` refuses anything outside it.

    The tools check confinement themselves, whatever policy guards the calls: a path
    through ``..``, an absolute path elsewhere or a symlink may name anything, but only
    where it really leads (symlinks resolved) decides.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, path: str, *, must_exist: bool = False, writable: bool = False) -> Path:
        """The real absolute path of ``path`` (relative to the workspace root, or absolute).

        Raises ``ToolError`` when it leads outside the workspace (through ``..``, as an
        absolute path elsewhere, or through a symlink pointing out); with ``must_exist``,
        when nothing is there; with ``writable``, when it lies in swarm's own ``.swarm``
        folder, which the file tools may not change.
        """
        if "\x00" in path:
            raise ToolError(f"{path!r} is not a valid path (it holds a NUL character)")
        candidate = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            resolved = Path(os.path.realpath(candidate))
        except (OSError, RuntimeError) as exc:
            raise ToolError(f"'{path}' cannot be resolved: {exc}") from None
        if not self.contains(resolved):
            if self.contains(Path(os.path.normpath(candidate))):
                raise ToolError(
                    f"'{path}' goes through a symlink that leads outside the workspace;"
                    " only files inside the workspace can be used"
                )
            raise ToolError(
                f"'{path}' is outside the workspace; use a path inside it (relative paths"
                " start at the workspace root)"
            )
        if writable and self.contains(resolved, self.root / STATE_DIR):
            raise ToolError(
                f"'{path}' is in {STATE_DIR}/, which holds swarm's own notes, tasks and run"
                " records; the file tools do not change it (use the notes and todo tools)"
            )
        if must_exist and not resolved.exists():
            raise ToolError(
                f"'{path}' does not exist in the workspace; list_files shows what is there"
            )
        return resolved

    def contains(self, path: Path, root: Path | None = None) -> bool:
        """Whether the absolute ``path`` is ``root`` (default: the workspace) or below it."""
        root = self.root if root is None else root
        return path == root or path.is_relative_to(root)

    def relative(self, path: Path) -> str:
        """``path`` as the model should see it: relative to the workspace root."""
        try:
            text = path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)
        return text or "."

    def walk(
        self, directory: Path, pattern: str = "*", *, recursive: bool = True
    ) -> Iterator[Path]:
        """Files under ``directory`` whose names match ``pattern`` (see ``glob_matcher``;
        a pattern with ``/`` matches the path relative to ``directory``), in sorted order.

        Never enters ``SKIPPED_DIRS`` or symlinked directories, and leaves out symlinks
        whose target is outside the workspace.
        """
        matches = glob_matcher(pattern)
        by_path = "/" in pattern
        for top, dirs, files in os.walk(directory):
            dirs[:] = sorted(
                d for d in dirs if d not in SKIPPED_DIRS and not os.path.islink(Path(top, d))
            )
            if not recursive:
                dirs.clear()
            base = Path(top)
            prefix = base.relative_to(directory).as_posix()
            for name in sorted(files):
                rel = name if prefix == "." else f"{prefix}/{name}"
                if not matches(rel if by_path else name):
                    continue
                path = base / name
                if path.is_symlink() and not self.contains(Path(os.path.realpath(path))):
                    continue
                yield path


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A test for names or relative paths against a glob.

    ``*`` and ``?`` stay within one path segment, ``**`` crosses segments (``**/`` also
    matches no directory at all), ``[abc]``/``[!abc]`` are character classes and
    ``{a,b}`` alternatives.
    """
    pattern = pattern.removeprefix("./") or "*"
    regex = re.compile(_translate(pattern) + r"\Z", re.DOTALL)
    return lambda text: regex.match(text) is not None


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

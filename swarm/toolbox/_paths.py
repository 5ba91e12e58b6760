"""Confinement: every path a built-in tool touches resolves inside the workspace."""

from __future__ import annotations

from pathlib import Path

from swarm.errors import ToolError

__all__ = ["Workspace"]

SKIPPED_DIRS = frozenset({".git", ".swarm", "__pycache__", ".venv", "venv", "node_modules"})


class Workspace:
    """The directory the agents work in; ``resolve`` refuses anything outside it."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    def resolve(self, path: str, *, must_exist: bool = False) -> Path:
        """The absolute path of ``path`` (relative to the workspace, or absolute inside it).

        Raises ``ToolError`` for a path that leaves the workspace, through ``..``, an
        absolute path elsewhere, or a symlink pointing out; and, with ``must_exist``, for
        a path that does not exist.
        """
        if "\x00" in path:
            raise ToolError(f"'{path}' is not a valid path")
        candidate = Path(path).expanduser() if path.startswith("~") else Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise ToolError(
                f"'{path}' is outside the workspace; use a path inside it (relative paths"
                " start at the workspace root)"
            )
        if must_exist and not resolved.exists():
            raise ToolError(f"'{path}' does not exist in the workspace")
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` as the model should see it: relative to the workspace root."""
        try:
            text = str(path.relative_to(self.root))
        except ValueError:
            return str(path)
        return text or "."

    def walk(self, directory: Path, pattern: str = "*", *, recursive: bool = True) -> list[Path]:
        """Files under ``directory`` matching ``pattern``, skipping tool and VCS folders and
        anything whose real location is outside the workspace; sorted."""
        found: list[Path] = []
        candidates = directory.rglob(pattern) if recursive else directory.glob(pattern)
        for path in candidates:
            relative = path.relative_to(directory).parts
            if any(part in SKIPPED_DIRS for part in relative[:-1]) or (
                relative and relative[-1] in SKIPPED_DIRS
            ):
                continue
            if not path.is_file():
                continue
            if not path.resolve().is_relative_to(self.root):
                continue
            found.append(path)
        return sorted(found)

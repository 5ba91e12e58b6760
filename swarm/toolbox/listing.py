"""list_files: the files of a workspace directory, optionally filtered by a glob.

The handler is a plain function: ``Tool`` runs it in a worker thread.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from typing import Annotated

from swarm.errors import ToolError
from swarm.toolbox._fs import MAX_DIR_ENTRIES, open_entry, walk, walk_files
from swarm.toolbox._paths import SKIPPED_DIRS, Parts, Workspace, glob_matcher
from swarm.toolbox.files import failed, missing
from swarm.tools import Field, Tool

__all__ = ["list_files_tool"]

MAX_LISTED = 500
MAX_WALKED = 50_000


@dataclass(slots=True)
class _Listing:
    """What a listing found: the first ``MAX_LISTED`` entries, how many matched (``-1``:
    more than ``MAX_WALKED``, the walk stopped), and the directories cut short."""

    entries: list[str] = field(default_factory=list)
    count: int = 0
    cut: list[Parts] = field(default_factory=list)

    def add(self, shown: str) -> bool:
        """Count one more entry (kept while fewer than ``MAX_LISTED`` are); whether the
        walk may go on."""
        self.count += 1
        if self.count <= MAX_LISTED:
            self.entries.append(shown)
        elif self.count >= MAX_WALKED:
            self.count = -1
            return False
        return True


def _one_level(workspace: Workspace, directory: int, parts: Parts, pattern: str) -> _Listing:
    """Subdirectories (with a trailing ``/``) and files of ``directory``, sorted."""
    matches = glob_matcher(pattern)
    found = _Listing()
    skip = workspace.protected_below(parts)
    for entry in walk(directory, recursive=False, skip=skip, cut=found.cut):
        if not matches(entry.name):
            continue
        shown = workspace.relative((*parts, *entry.below))
        if not found.add(
            f"{shown}/" if entry.is_dir else f"{shown}  ({entry.info.st_size:,} bytes)"
        ):
            break
    return found


def _tree(workspace: Workspace, directory: int, parts: Parts, pattern: str) -> _Listing:
    """Files below ``directory``."""
    found = _Listing()
    skip = workspace.protected_below(parts)
    for entry in walk_files(directory, pattern, skip=skip, cut=found.cut):
        shown = workspace.relative((*parts, *entry.below))
        if not found.add(f"{shown}  ({entry.info.st_size:,} bytes)"):
            break
    return found


def list_files_tool(workspace: Workspace, *, output_limit: int) -> Tool[None]:
    """The ``list_files`` tool of ``workspace``; ``output_limit`` caps its output's
    characters (and it shows ``MAX_LISTED`` entries at most)."""

    def list_files(
        directory: Annotated[
            str,
            Field(
                description="The directory to list, relative to the workspace (default: its root)."
            ),
        ] = ".",
        pattern: Annotated[
            str,
            Field(
                description="A glob for the names to show, e.g. *.py or *.{ts,tsx}; with a /"
                " it matches paths below the directory, e.g. src/**/test_*.py."
            ),
        ] = "*",
        recursive: Annotated[
            bool,
            Field(
                description="List files in all subdirectories (default true); false lists one"
                " level, subdirectories included."
            ),
        ] = True,
    ) -> str:
        parts = workspace.locate(directory)
        listing = _tree if recursive else _one_level
        try:
            with open_entry(workspace.root, parts) as (fd, info):
                if not stat.S_ISDIR(info.st_mode):
                    raise ToolError(
                        f"'{directory}' is a file, not a directory; read it with read_file"
                    )
                found = listing(workspace, fd, parts, pattern)
        except (FileNotFoundError, NotADirectoryError):
            raise missing(directory) from None
        except OSError as exc:
            raise failed("list", directory, exc) from None
        cut = [
            f"[… more than {MAX_DIR_ENTRIES:,} entries in"
            f" {workspace.relative((*parts, *below))}/: only the first were looked at]"
            for below in found.cut[:5]
        ]
        if not found.entries:
            return "\n".join(
                [f"No files matching '{pattern}' in {workspace.relative(parts)}.", *cut]
            )
        shown: list[str] = []
        used = 0
        for entry in found.entries:
            used += len(entry) + 1
            if used > output_limit:
                break
            shown.append(entry)
        if found.count < 0:
            shown.append(f"[… more than {MAX_WALKED:,} files; narrow the directory or pattern]")
        elif found.count > len(shown):
            shown.append(f"[… {found.count - len(shown):,} more; narrow the directory or pattern]")
        shown.extend(cut)
        return "\n".join(shown)

    return Tool(
        "list_files",
        list_files,
        "List files of the workspace with their sizes, optionally filtered by a glob;"
        f" never looks into {', '.join(sorted(SKIPPED_DIRS))}. Symbolic links and files"
        " with several hard links are left out.",
    )

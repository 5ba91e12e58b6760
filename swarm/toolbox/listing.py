"""list_files: the files of a workspace directory, optionally filtered by a glob.

The handler is a plain function: ``Tool`` runs it in a worker thread.
"""

from __future__ import annotations

import stat
from typing import Annotated

from swarm.errors import ToolError
from swarm.toolbox._fs import open_entry, walk, walk_files
from swarm.toolbox._paths import SKIPPED_DIRS, Parts, Workspace, glob_matcher
from swarm.toolbox.files import failed, missing
from swarm.tools import Field, Tool

__all__ = ["list_files_tool"]

MAX_LISTED = 500
MAX_WALKED = 50_000


def _one_level(
    workspace: Workspace, directory: int, parts: Parts, pattern: str
) -> tuple[list[str], int]:
    """Subdirectories (with a trailing ``/``) and files of ``directory``, sorted."""
    matches = glob_matcher(pattern)
    entries: list[str] = []
    for entry in walk(directory, recursive=False, skip=workspace.protected_below(parts)):
        if not matches(entry.name):
            continue
        shown = workspace.relative((*parts, *entry.below))
        entries.append(f"{shown}/" if entry.is_dir else f"{shown}  ({entry.info.st_size:,} bytes)")
    return entries, len(entries)


def _tree(
    workspace: Workspace, directory: int, parts: Parts, pattern: str
) -> tuple[list[str], int]:
    """Files below ``directory``, the first ``MAX_LISTED`` of them, and how many there are
    (``-1``: more than ``MAX_WALKED``, the walk stopped)."""
    entries: list[str] = []
    count = 0
    for entry in walk_files(directory, pattern, skip=workspace.protected_below(parts)):
        count += 1
        if count <= MAX_LISTED:
            shown = workspace.relative((*parts, *entry.below))
            entries.append(f"{shown}  ({entry.info.st_size:,} bytes)")
        elif count >= MAX_WALKED:
            return entries, -1
    return entries, count


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
                entries, count = listing(workspace, fd, parts, pattern)
        except (FileNotFoundError, NotADirectoryError):
            raise missing(directory) from None
        except OSError as exc:
            raise failed("list", directory, exc) from None
        if not entries:
            return f"No files matching '{pattern}' in {workspace.relative(parts)}."
        shown: list[str] = []
        used = 0
        for entry in entries[:MAX_LISTED]:
            used += len(entry) + 1
            if used > output_limit:
                break
            shown.append(entry)
        if count < 0:
            shown.append(f"[… more than {MAX_WALKED:,} files; narrow the directory or pattern]")
        elif count > len(shown):
            shown.append(f"[… {count - len(shown):,} more; narrow the directory or pattern]")
        return "\n".join(shown)

    return Tool(
        "list_files",
        list_files,
        "List files of the workspace with their sizes, optionally filtered by a glob;"
        f" never looks into {', '.join(sorted(SKIPPED_DIRS))}. Symbolic links and files"
        " with several hard links are left out.",
    )

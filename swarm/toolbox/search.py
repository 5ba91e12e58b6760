"""search: a regular expression over the files of the workspace."""

from __future__ import annotations

import re
from typing import Annotated

import anyio.to_thread

from swarm.errors import ToolError
from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Tool

__all__ = ["search_tool"]

MAX_FILE_BYTES = 2_000_000
MAX_LINE = 300


def search_tool(workspace: Workspace) -> Tool[None]:
    """The ``search`` tool of ``workspace``."""

    async def search(
        pattern: Annotated[str, Field(description="A Python regular expression.")],
        path: Annotated[str, Field(description="Where to look: a directory or a file.")] = ".",
        glob: Annotated[str, Field(description="Only files whose names match, e.g. *.py.")] = "*",
        ignore_case: Annotated[bool, Field(description="Match case-insensitively.")] = False,
        max_results: Annotated[
            int, Field(description="Stop after this many lines.", ge=1, le=1000)
        ] = 100,
    ) -> str:
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
        target = workspace.resolve(path, must_exist=True)

        def scan() -> tuple[list[str], int]:
            files = [target] if target.is_file() else workspace.walk(target, glob)
            hits: list[str] = []
            total = 0
            for file in files:
                if file.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = file.read_bytes()
                if b"\x00" in data[:8192]:
                    continue
                for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                    if regex.search(line):
                        total += 1
                        if len(hits) < max_results:
                            text = line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"
                            hits.append(f"{workspace.relative(file)}:{number}: {text}")
            return hits, total

        hits, total = await anyio.to_thread.run_sync(scan)
        if not hits:
            return f"No matches for {pattern!r}."
        if total > len(hits):
            hits.append(f"[… {total - len(hits)} more matches; narrow the pattern or path]")
        return "\n".join(hits)

    return Tool(
        "search",
        search,
        "Search the workspace's text files for a regular expression; results are path:line: text.",
    )

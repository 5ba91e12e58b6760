"""Appends tool-call pairs to a session of a SQLiteContextStore, as its own process.

``python append_process.py DB SESSION TAG COUNT``: COUNT ``append_many`` calls, each an
assistant message calling ``TAG-i`` and the user message with its result.
"""

import sys

import anyio

from swarm import Message, ToolResultBlock, ToolUseBlock
from swarm.context import SQLiteContextStore


async def run(db: str, session: str, tag: str, count: int) -> None:
    async with SQLiteContextStore(db, session) as store:
        for i in range(count):
            call = f"{tag}-{i}"
            await store.append_many(
                [
                    Message("assistant", [ToolUseBlock(call, "work", {"i": i})]),
                    Message("user", [ToolResultBlock(call, f"{call} done")]),
                ]
            )
            await store.add_context_tokens(1, 1)


if __name__ == "__main__":
    anyio.run(run, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))

"""A real agent on a SQLiteContextStore, run as its own process by the kill tests.

``python agent_process.py DB SESSION block N``: N quick ``step`` calls, then a ``block``
call that prints ``BLOCKED`` and never returns. ``... spin``: ``step`` calls until killed.
Each ``step`` prints ``STEP n`` when it runs.
"""

import sys
from typing import Any

import anyio

from swarm import Agent, Message, StreamEvent, Tool, tool
from swarm.context import SQLiteContextStore
from swarm.testing import FunctionTransport, make_tool_use_response


@tool
async def step(n: int) -> str:
    """Take one quick step."""
    print(f"STEP {n}", flush=True)
    return f"step {n} done"


@tool
async def block() -> str:
    """Wait forever."""
    print("BLOCKED", flush=True)
    await anyio.sleep_forever()
    return "unreachable"


def main() -> None:
    db, session, mode = sys.argv[1:4]
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 0

    def respond(messages: list[Message], tools: list[Tool[Any]], system: str) -> list[StreamEvent]:
        done = sum(1 for m in messages if m.role == "assistant")
        if mode == "block" and done >= steps:
            return make_tool_use_response("block", f"block-{done}", {})
        return make_tool_use_response("step", f"step-{done}", {"n": done})

    async def run() -> None:
        store = SQLiteContextStore(db, session)
        model = FunctionTransport(respond)
        agent = Agent("You take steps.", model, [step, block], max_iterations=10**9)
        await agent.run("Take steps.", store)

    anyio.run(run)


if __name__ == "__main__":
    main()

"""Compaction firing during a run: AutoCompactStore summarises older history once the
model's input passes the threshold, and the agent's stream shows ContextCompacted.

Run it as it is: ``python examples/compaction.py``.
"""

from typing import Any

import anyio

from swarm import (
    Agent,
    AutoCompactStore,
    ContextCompacted,
    MemoryContextStore,
    Message,
    StreamEvent,
    Usage,
    tool,
)
from swarm.context import DEFAULT_SUMMARY_PROMPT
from swarm.testing import FunctionTransport, make_text_response, make_tool_use_response


@tool
async def read_page(number: int) -> str:
    """Read one page of a long report."""
    return f"Page {number}: " + "figures for the quarter, " * 40


pages_read = 0


def model(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
    """Reads pages 1..8, then answers; input tokens grow with the history (chars / 4)."""
    global pages_read
    size = sum(len(str(m.to_dict())) for m in messages) // 4
    if system == DEFAULT_SUMMARY_PROMPT:
        return make_text_response("Summary: the pages read so far hold quarterly figures.")
    if pages_read < 8:
        pages_read += 1
        call = {"number": pages_read}
        return make_tool_use_response("read_page", f"p{pages_read}", call, usage=Usage(size, 20))
    return make_text_response("The report is quarterly figures throughout.", usage=Usage(size, 20))


async def main() -> None:
    transport = FunctionTransport(model)
    store = AutoCompactStore(MemoryContextStore(), transport, keep_recent=4, max_tokens=1500)
    agent = Agent("You read reports.", transport, [read_page])
    async with agent.run_stream("Read the report and sum it up.", store) as stream:
        async for event in stream:
            if isinstance(event, ContextCompacted):
                print(
                    f"compacted: {event.messages_before} -> {event.messages_after} messages"
                    f" at {event.input_tokens} input tokens"
                )
    print("final:", stream.final_text)
    print("history now holds", len(await store.get_history()), "messages")


if __name__ == "__main__":
    anyio.run(main)

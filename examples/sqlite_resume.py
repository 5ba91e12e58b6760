"""A session kept in SQLite, closed, and resumed later by its id.

Run it as it is: ``python examples/sqlite_resume.py``. The first run of the agent takes
notes; the store is closed (as if the process ended); a new store opened on the same file
with the same session id sees the whole history, and the agent continues from it.
"""

import tempfile
from pathlib import Path

import anyio

from swarm import Agent, SQLiteContextStore, tool
from swarm.testing import FunctionTransport, make_text_response, make_tool_use_response

notes: list[str] = []


@tool
async def remember(fact: str) -> str:
    """Write a fact down."""
    notes.append(fact)
    return f"noted ({len(notes)} facts)"


def model(messages, tools, system):  # type: ignore[no-untyped-def]
    """A scripted model: notes the user's first fact, then answers from the history."""
    if messages[-1].tool_results:
        return make_text_response("Noted.")
    asked = messages[-1].text
    if asked.startswith("My name"):
        return make_tool_use_response("remember", "c1", {"fact": asked})
    known = [m.text for m in messages if m.role == "user" and m.text.startswith("My name")]
    return make_text_response(f"You told me: {known[0]!r}" if known else "I don't know.")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sessions.db"
        agent = Agent("You remember things.", FunctionTransport(model), [remember])

        async with SQLiteContextStore(db) as store:
            print("first run:", await agent.run("My name is Ada.", store))
            session = store.session_id

        async with SQLiteContextStore(db, session) as resumed:
            history = await resumed.get_history()
            print(f"resumed session {session[:8]} with {len(history)} messages")
            print("second run:", await agent.run("What is my name?", resumed))
            for info in await resumed.list_sessions():
                print(f"  {info.session_id[:8]}: {info.message_count} messages, {info.preview!r}")


if __name__ == "__main__":
    anyio.run(main)

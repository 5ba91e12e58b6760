"""SQLiteContextStore: history, sessions, forks, archives, tokens, the file on disk."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from swarm import (
    ConfigError,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.context import MemoryContextStore, SQLiteContextStore

from .support import raw_rows

pytestmark = pytest.mark.anyio


def pair(call: str) -> list[Message]:
    """An assistant message making one tool call and the user message with its result."""
    return [
        Message("assistant", [ToolUseBlock(call, "read_file", {"path": f"{call}.txt"})]),
        Message("user", [ToolResultBlock(call, f"contents of {call}")]),
    ]


RICH = [
    Message("user", [TextBlock("Describe the picture."), ImageBlock("image/png", b"\x89PNG..")]),
    Message(
        "assistant",
        [
            ReasoningBlock("Let me look.", signature="sig=="),
            TextBlock("Reading it."),
            ToolUseBlock("c1", "read_file", {"path": "a.txt", "lines": [1, 2]}),
            ToolUseBlock("c2", "shell", {"argv": ["ls", "-l"]}),
        ],
    ),
    Message(
        "user",
        [
            ToolResultBlock("c1", [TextBlock("line"), ImageBlock("image/gif", b"GIF89a")]),
            ToolResultBlock("c2", "denied", is_error=True, details={"rule": "no-shell"}),
        ],
    ),
    Message("assistant", [TextBlock("Ünïcödé ✓ done")]),
]


async def test_history_round_trips_every_kind_of_block(tmp_path: Path) -> None:
    async with SQLiteContextStore(tmp_path / "ctx.db") as store:
        await store.append(RICH[0])
        await store.append_many(RICH[1:3])
        await store.append(RICH[3])
        assert await store.get_history() == RICH


async def test_messages_are_stored_as_their_to_dict_json_and_nothing_else(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as store:
        await store.append_many(RICH)
    rows = raw_rows(db)
    assert [json.loads(body) for _, _, _, body in rows] == [m.to_dict() for m in RICH]
    assert [role for _, _, role, _ in rows] == [m.role for m in RICH]


async def test_reopening_by_session_id_resumes_history_and_tokens(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as first:
        await first.append(Message.user("Count the files."))
        await first.append_many(pair("c1"))
        await first.add_context_tokens(120, 30)
        await first.add_context_tokens(200, 10)
        session = first.session_id

    async with SQLiteContextStore(db, session) as again:
        assert again.session_id == session
        assert await again.get_history() == [Message.user("Count the files."), *pair("c1")]
        assert await again.get_context_tokens() == (320, 40)
        await again.append(Message.assistant("Two files."))

    async with SQLiteContextStore(db, session) as third:
        assert (await third.get_history())[-1] == Message.assistant("Two files.")


async def test_from_history_and_from_context_pass_the_file_to_the_store(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    memory = MemoryContextStore([Message.user("Count the files."), *pair("c1")])
    await memory.set_context_tokens(120, 30)
    copied = await SQLiteContextStore.from_context(memory, db)
    made = await SQLiteContextStore.from_history([Message.user("Hello.")], db)
    for store in (copied, made):
        await store.close()

    async with SQLiteContextStore(db, copied.session_id) as again:
        assert await again.get_history() == await memory.get_history()
        assert await again.get_context_tokens() == (120, 30)
    async with SQLiteContextStore(db, made.session_id) as again:
        assert await again.get_history() == [Message.user("Hello.")]
    plain = await MemoryContextStore.from_history([Message.user("Hello.")])
    assert await plain.get_history() == [Message.user("Hello.")]


async def test_each_new_store_is_a_new_session(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as a, SQLiteContextStore(db) as b:
        await a.append(Message.user("first"))
        await b.append(Message.user("second"))
        assert a.session_id != b.session_id
        assert await a.get_history() == [Message.user("first")]
        assert await b.get_history() == [Message.user("second")]


async def test_an_unknown_session_id_starts_a_session_with_that_id(tmp_path: Path) -> None:
    async with SQLiteContextStore(tmp_path / "ctx.db", "orchestrator-1") as store:
        assert await store.get_history() == []
        await store.append(Message.user("go"))
        assert [s.session_id for s in await store.list_sessions()] == ["orchestrator-1"]


async def test_a_session_appears_in_the_file_only_at_its_first_write(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as reader:
        assert await reader.list_sessions() == []
        assert await reader.get_history() == []
        assert await reader.get_context_tokens() == (0, 0)
        assert await reader.list_sessions() == []


async def test_list_sessions_describes_every_session_in_the_file(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "a") as a, SQLiteContextStore(db, "b") as b:
        await a.append(Message.user("Refactor   the\nparser module " + "x" * 100))
        await a.append_many(pair("c1"))
        await a.add_context_tokens(500, 20)
        await b.append(Message("user", [ImageBlock("image/png", b"..")]))
        await b.append(Message.assistant("An image of a cat."))

    async with SQLiteContextStore(db) as other:
        sessions = await other.list_sessions()
    assert [(s.session_id, s.message_count) for s in sessions] == [("a", 3), ("b", 2)]
    assert sessions[0].preview == ("Refactor the parser module " + "x" * 100)[:79] + "…"
    assert sessions[1].preview == "An image of a cat."
    assert (sessions[0].input_tokens, sessions[0].output_tokens) == (500, 20)
    assert (sessions[1].input_tokens, sessions[1].output_tokens) == (0, 0)
    assert all(s.created_at and s.parent_id is None for s in sessions)


async def test_fork_is_a_new_persistent_session_that_records_its_parent(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as parent:
        await parent.append(Message.user("Plan the release."))
        await parent.add_context_tokens(100, 10)
        child = await parent.fork()
        async with child:
            assert child.session_id != parent.session_id
            assert await child.get_history() == [Message.user("Plan the release.")]
            assert await child.get_context_tokens() == (100, 10)
            await child.append(Message.assistant("Child plan."))
            await parent.append(Message.assistant("Parent plan."))
            assert (await child.get_history())[-1] == Message.assistant("Child plan.")
            assert (await parent.get_history())[-1] == Message.assistant("Parent plan.")
            sessions = {s.session_id: s for s in await parent.list_sessions()}
        assert sessions[child.session_id].parent_id == parent.session_id
        assert sessions[parent.session_id].parent_id is None

    async with SQLiteContextStore(db, child.session_id) as reopened:
        assert await reopened.get_history() == [
            Message.user("Plan the release."),
            Message.assistant("Child plan."),
        ]


async def test_append_many_stores_all_of_its_messages_or_none(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as store:
        await store.append(Message.user("go"))
        with sqlite3.connect(db) as conn:  # the second message of the pair will fail to insert
            conn.execute(
                "CREATE TRIGGER poison BEFORE INSERT ON messages WHEN NEW.body LIKE '%poison%'"
                " BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
            )
        calls = [
            Message("assistant", [ToolUseBlock("c1", "read_file", {})]),
            Message("user", [ToolResultBlock("c1", "poison")]),
        ]
        with pytest.raises(sqlite3.IntegrityError):
            await store.append_many(calls)
        assert await store.get_history() == [Message.user("go")]
    assert [role for _, _, role, _ in raw_rows(db)] == ["user"]
    async with SQLiteContextStore(db, "s") as again:
        assert await again.get_history() == [Message.user("go")]


async def test_replace_archives_the_previous_history_as_a_segment(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    first = [Message.user("task"), *pair("c1")]
    second = [Message.user("task"), Message.assistant("summary one"), *pair("c2")]
    async with SQLiteContextStore(db, "s") as store:
        await store.append_many(first)
        await store.replace([Message.user("task"), Message.assistant("summary one")])
        await store.append_many(pair("c2"))
        await store.replace([Message.user("task + summary two")])
        assert await store.get_history() == [Message.user("task + summary two")]

    async with SQLiteContextStore(db, "s") as again:
        segments = await again.archived_segments()
        assert [s.index for s in segments] == [1, 2]
        assert [s.messages for s in segments] == [first, second]
        assert all(s.archived_at for s in segments)
        assert await again.get_history() == [Message.user("task + summary two")]
        assert (await again.list_sessions())[0].message_count == 1


async def test_replacing_an_empty_history_archives_nothing(tmp_path: Path) -> None:
    async with SQLiteContextStore(tmp_path / "ctx.db") as store:
        await store.replace([Message.user("fresh")])
        assert await store.archived_segments() == []
        assert await store.get_history() == [Message.user("fresh")]


async def test_clear_deletes_the_live_history_but_keeps_archives_and_tokens(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as store:
        await store.append(Message.user("old"))
        await store.replace([Message.user("newer")])
        await store.add_context_tokens(7, 3)
        await store.clear()
        assert await store.get_history() == []
        assert [s.messages for s in await store.archived_segments()] == [[Message.user("old")]]
        assert await store.get_context_tokens() == (7, 3)
    assert [body for _, segment, _, body in raw_rows(db) if segment == 0] == []


async def test_token_totals_are_set_added_and_persisted(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as store:
        await store.set_context_tokens(1000, 50)
        await store.add_context_tokens(10, 5)
        assert await store.get_context_tokens() == (1010, 55)
    async with SQLiteContextStore(db, "s") as again:
        assert await again.get_context_tokens() == (1010, 55)
        assert (await again.list_sessions())[0].input_tokens == 1010


async def test_the_file_records_its_schema_version_and_runs_in_wal_mode(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as store:
        await store.append(Message.user("go"))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_a_file_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db) as store:
        await store.append(Message.user("go"))
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 'later')")
    async with SQLiteContextStore(db) as newer:
        with pytest.raises(ConfigError, match="schema version is 99"):
            await newer.get_history()


async def test_power_durability_stores_the_same_history(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s", durability="power") as store:
        await store.append_many(pair("c1"))
    async with SQLiteContextStore(db, "s") as again:
        assert await again.get_history() == pair("c1")


def test_an_unknown_durability_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="durability"):
        SQLiteContextStore(tmp_path / "ctx.db", durability="disk")  # type: ignore[arg-type]


async def test_a_closed_store_refuses_calls_and_closing_twice_is_harmless(
    tmp_path: Path,
) -> None:
    store = SQLiteContextStore(tmp_path / "ctx.db")
    await store.append(Message.user("go"))
    await store.close()
    await store.close()
    with pytest.raises(RuntimeError, match="closed"):
        await store.append(Message.user("again"))

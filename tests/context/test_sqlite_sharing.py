"""SQLiteContextStore shared: many stores and processes on one file, one session or many."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from swarm import Message, ToolResultBlock, ToolUseBlock
from swarm.context import SQLiteContextStore

from .support import assert_file_sound, assert_valid_history, finish, start_process

pytestmark = pytest.mark.anyio


def pair(call: str) -> list[Message]:
    return [
        Message("assistant", [ToolUseBlock(call, "work", {"call": call})]),
        Message("user", [ToolResultBlock(call, f"{call} done")]),
    ]


async def test_a_store_sees_what_another_store_appended_to_its_session(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as reader, SQLiteContextStore(db, "s") as writer:
        await writer.append(Message.user("go"))
        assert await reader.get_history() == [Message.user("go")]
        await writer.append_many(pair("c1"))
        assert await reader.get_history() == [Message.user("go"), *pair("c1")]


async def test_a_store_sees_other_writes_that_came_between_its_own(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as a, SQLiteContextStore(db, "s") as b:
        await a.append(Message.user("go"))
        assert await a.get_history() == [Message.user("go")]
        await a.append_many(pair("a1"))
        await b.append_many(pair("b1"))  # lands after a's write, before a's next read
        assert await a.get_history() == [Message.user("go"), *pair("a1"), *pair("b1")]
        await a.append_many(pair("a2"))
        await b.add_context_tokens(1, 1)
        expected = [Message.user("go"), *pair("a1"), *pair("b1"), *pair("a2")]
        assert await a.get_history() == expected
        assert await b.get_history() == expected


async def test_a_store_sees_another_store_replace_or_clear_its_session(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as a, SQLiteContextStore(db, "s") as b:
        await a.append_many([Message.user("go"), *pair("a1")])
        assert len(await a.get_history()) == 3
        await b.replace([Message.user("go, summarised")])
        assert await a.get_history() == [Message.user("go, summarised")]
        await a.append_many(pair("a2"))
        await b.clear()
        await b.append(Message.user("again"))
        assert await a.get_history() == [Message.user("again")]


async def test_a_store_sees_appends_made_by_another_process(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "s") as store:
        await store.append(Message.user("go"))
        assert await store.get_history() == [Message.user("go")]
        await anyio.to_thread.run_sync(finish, start_process("append_process.py", db, "s", "p", 2))
        assert await store.get_history() == [Message.user("go"), *pair_of("p", 2)]
        await store.append_many(pair("mine"))
        assert await store.get_context_tokens() == (2, 2)
    async with SQLiteContextStore(db, "s") as again:
        assert await again.get_history() == [Message.user("go"), *pair_of("p", 2), *pair("mine")]


def pair_of(tag: str, count: int) -> list[Message]:
    """What append_process.py writes for ``tag``: ``count`` calls ``tag-i``."""
    return [
        message
        for i in range(count)
        for message in [
            Message("assistant", [ToolUseBlock(f"{tag}-{i}", "work", {"i": i})]),
            Message("user", [ToolResultBlock(f"{tag}-{i}", f"{tag}-{i} done")]),
        ]
    ]


async def test_many_stores_on_one_file_append_concurrently(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    stores = [SQLiteContextStore(db, f"agent-{n}") for n in range(16)]

    async def work(store: SQLiteContextStore) -> None:
        await store.append(Message.user(f"task of {store.session_id}"))
        for i in range(20):
            await store.get_history()
            await store.append_many(pair(f"{store.session_id}-{i}"))
            await store.add_context_tokens(10, 1)

    async with anyio.create_task_group() as group:
        for store in stores:
            group.start_soon(work, store)

    for store in stores:
        history = await store.get_history()
        assert history == [
            Message.user(f"task of {store.session_id}"),
            *[m for i in range(20) for m in pair(f"{store.session_id}-{i}")],
        ]
    sessions = await stores[0].list_sessions()
    assert sorted(s.session_id for s in sessions) == sorted(s.session_id for s in stores)
    assert {(s.message_count, s.input_tokens, s.output_tokens) for s in sessions} == {(41, 200, 20)}
    for store in stores:
        await store.close()
    assert_file_sound(db)


async def test_stores_sharing_one_session_append_concurrently(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    writers = [SQLiteContextStore(db, "shared") for _ in range(8)]

    async def work(n: int, store: SQLiteContextStore) -> None:
        for i in range(10):
            await store.append_many(pair(f"w{n}-{i}"))
            await store.get_history()

    async with anyio.create_task_group() as group:
        for n, store in enumerate(writers):
            group.start_soon(work, n, store)

    histories = [await store.get_history() for store in writers]
    assert all(h == histories[0] for h in histories)
    history = histories[0]
    assert len(history) == 160
    assert_valid_history(history)
    for n in range(8):  # each writer's pairs are whole and in its own order
        mine = [m for m in history if _call_of(m).startswith(f"w{n}-")]
        assert mine == [m for i in range(10) for m in pair(f"w{n}-{i}")]
    async with SQLiteContextStore(db, "shared") as fresh:
        assert await fresh.get_history() == history
    for store in writers:
        await store.close()


async def test_processes_append_concurrently_to_one_file(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    async with SQLiteContextStore(db, "setup") as setup:  # create the file first
        await setup.append(Message.user("setup"))
    workers = [start_process("append_process.py", db, f"s{n}", f"p{n}", 40) for n in range(3)]
    workers += [start_process("append_process.py", db, "shared", f"q{n}", 40) for n in range(3)]
    for worker in workers:
        await anyio.to_thread.run_sync(finish, worker)

    for n in range(3):
        async with SQLiteContextStore(db, f"s{n}") as store:
            assert await store.get_history() == pair_of(f"p{n}", 40)
            assert await store.get_context_tokens() == (40, 40)
    async with SQLiteContextStore(db, "shared") as shared:
        history = await shared.get_history()
        assert await shared.get_context_tokens() == (120, 120)
    assert len(history) == 240
    assert_valid_history(history)
    for n in range(3):
        mine = [m for m in history if _call_of(m).startswith(f"q{n}-")]
        assert mine == pair_of(f"q{n}", 40)
    assert_file_sound(db)


def _call_of(message: Message) -> str:
    if message.tool_uses:
        return message.tool_uses[0].id
    return message.tool_results[0].tool_use_id


async def test_processes_may_create_the_file_at_the_same_time(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    workers = [start_process("append_process.py", db, f"s{n}", f"p{n}", 5) for n in range(6)]
    for worker in workers:
        await anyio.to_thread.run_sync(finish, worker)
    async with SQLiteContextStore(db) as store:
        sessions = await store.list_sessions()
    assert sorted((s.session_id, s.message_count) for s in sessions) == [
        (f"s{n}", 10) for n in range(6)
    ]
    assert_file_sound(db)

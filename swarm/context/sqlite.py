"""SQLiteContextStore: sessions kept in one SQLite file, safe to kill at any instant.

One file holds many sessions. Each session has a *live* history (what the model sees) and
any number of *archived segments*: ``replace()`` (which compaction uses) moves the live
history into a new segment instead of deleting it. Messages are stored exactly as
``Message.to_dict()`` renders them, as JSON, one row each.

Durability. The file runs in WAL mode. Every write is one transaction, so a process killed
at any instant leaves either all of a write or none of it: ``append_many`` commits an
assistant message with tool uses together with its tool results, and nothing stored is
ever half a message. ``durability="process"`` (the default, ``synchronous=NORMAL``) makes
a committed write survive the process being killed, which is what losing "at most the
iteration in flight" needs, without an fsync per write; ``durability="power"``
(``synchronous=FULL``) also makes it survive power loss or an OS crash, at the cost of an
fsync per commit.

Concurrency. Each store owns one connection, used from worker threads
(``anyio.to_thread``) one call at a time. Many stores may share a file, in one process or
several: stores of one process queue on an in-process lock per file before writing (so
they do not spin in SQLite's busy handler), other processes wait up to ``timeout``.

Caching. The loop reads the whole history once per iteration, so a store keeps the live
history in memory after its first read and keeps it exact: every write checks, inside its
transaction, that the session is in the state the cache describes (and reads what others
added if not). ``get_history()`` is served from memory, with no database round trip, when
it directly follows one of this store's own writes and no other store in this process has
written the session since; otherwise it asks the database (one indexed lookup, plus only
the rows added since, when the session grew). So writes made in this process are always
seen; a write another *process* commits to the same session between this store's write
and its next read is seen one call later. (Two processes writing one session at once
interleave their turns; for a session that an agent writes, other processes should read.)
"""

from __future__ import annotations

import copy
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

import anyio.to_thread

from swarm.context._sqlite_schema import (
    SCHEMA_VERSION,
    decode,
    encode,
    migrate,
    now,
    read_archive,
    read_sessions,
)
from swarm.context.base import ContextStore, SessionInfo
from swarm.messages import Message

__all__ = ["SCHEMA_VERSION", "ArchivedSegment", "SQLiteContextStore"]

_T = TypeVar("_T")

# Segment 0 of a session is its live history; archived segments count from 1.
_INSERT = "INSERT INTO messages (session_id, segment, role, body) VALUES (?, 0, ?, ?)"
_LIVE_ROWS = (
    "SELECT id, body FROM messages WHERE session_id = ? AND segment = 0 AND id > ? ORDER BY id"
)


@dataclass(frozen=True, slots=True)
class ArchivedSegment:
    """A live history that ``replace()`` (compaction) set aside, oldest segment first."""

    index: int
    archived_at: str
    messages: list[Message]


class _File:
    """What the stores of this process share about one database file."""

    __slots__ = ("__weakref__", "changes", "write_lock")

    def __init__(self) -> None:
        self.write_lock = threading.Lock()
        self.changes: dict[str, int] = {}  # session id -> count of committed history changes


_files: weakref.WeakValueDictionary[str, _File] = weakref.WeakValueDictionary()
_files_lock = threading.Lock()


def _shared(key: str) -> _File:
    with _files_lock:
        shared = _files.get(key)
        if shared is None:
            shared = _files[key] = _File()
        return shared


class SQLiteContextStore(ContextStore):
    """A session of conversation history persisted in a SQLite file.

    ``SQLiteContextStore(path)`` starts a new session; ``SQLiteContextStore(path, id)``
    resumes session ``id`` (a new one with that id if the file has none). The session
    appears in the file at its first write. ``durability`` is ``"process"`` (survives the
    process being killed) or ``"power"`` (also survives power loss; an fsync per write);
    ``timeout`` is how long to wait, in seconds, for another process holding the file's
    write lock. Use ``async with`` or ``close()`` to release the connection. Errors from
    SQLite (``sqlite3.Error``) propagate; a file written by a newer swarm raises
    ``ConfigError``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        session_id: str | None = None,
        *,
        durability: Literal["process", "power"] = "process",
        timeout: float = 30.0,
    ) -> None:
        if durability not in ("process", "power"):
            raise ValueError(f"durability must be 'process' or 'power', not {durability!r}")
        self._path = os.fspath(path)
        self._session_id = session_id or uuid.uuid4().hex
        self._durability = durability
        self._timeout = timeout
        self._file = _shared(os.path.realpath(self._path))
        self._lock = threading.Lock()  # one call at a time on the connection
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._exists = False  # the session's row is known to be in the file
        # The cache: the live history as of (generation, count); `_last_id` is its last row.
        self._messages: list[Message] | None = None
        self._generation = 0
        self._count = 0
        self._last_id = 0
        self._seen_changes = -1  # `_file.changes` for this session when the cache was checked
        self._trusted = False  # the cache was checked by this store's last call, a write

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    # -- the async API ---------------------------------------------------------------

    async def append(self, message: Message) -> None:
        """Add one message at the end (committed when this returns)."""
        await self._call(self._append, [message])

    async def append_many(self, messages: Sequence[Message]) -> None:
        """Add several messages in one transaction: all of them are stored, or none."""
        if messages:
            await self._call(self._append, list(messages))

    async def append_turn(
        self, messages: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> None:
        """Store an iteration's messages and usage in one transaction (one thread hop)."""
        await self._call(self._append, list(messages), (input_tokens, output_tokens))

    async def get_history(self) -> list[Message]:
        """The live history, oldest first (new messages the caller may change). See the
        module docs on caching."""
        cached = self._cached()
        if cached is not None:
            return copy.deepcopy(cached)
        return await self._call(self._read_history)

    async def _loop_history(self) -> list[Message]:
        cached = self._cached()
        return cached if cached is not None else await self._call(self._read_history)

    def _cached(self) -> list[Message] | None:
        if self._trusted and self._lock.acquire(blocking=False):
            try:
                if (
                    self._trusted
                    and self._messages is not None
                    and self._file.changes.get(self._session_id, 0) == self._seen_changes
                ):
                    self._trusted = False
                    return list(self._messages)
            finally:
                self._lock.release()
        return None

    async def clear(self) -> None:
        """Delete the live history (archived segments stay; use ``replace([])`` to archive
        it instead). Token totals are kept."""
        await self._call(self._replace, [], False)

    async def replace(self, messages: Sequence[Message]) -> None:
        """Archive the live history as a new segment and make ``messages`` the live
        history, in one transaction."""
        await self._call(self._replace, list(messages), True)

    async def archived_segments(self) -> list[ArchivedSegment]:
        """Every history ``replace()`` set aside in this session, oldest first."""
        return await self._call(self._read_archive)

    async def fork(self) -> SQLiteContextStore:
        """A new session in the same file holding a copy of this live history and its
        token totals, recorded with this session as its parent."""
        new_id = await self._call(self._fork)
        forked = SQLiteContextStore(
            self._path, new_id, durability=self._durability, timeout=self._timeout
        )
        forked._exists = True
        return forked

    async def set_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Set the session's token totals."""
        await self._call(self._tokens, input_tokens, output_tokens, False)

    async def add_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Add one model call's usage to the session's totals (atomically, so stores in
        several processes may add at once)."""
        await self._call(self._tokens, input_tokens, output_tokens, True)

    async def get_context_tokens(self) -> tuple[int, int]:
        """The session's token totals ``(input, output)``."""
        return await self._call(self._read_tokens)

    async def list_sessions(self) -> list[SessionInfo]:
        """Every session in the file, oldest first, with its live message count, a preview
        of its first text, when it was created, its token totals and its parent."""
        return await self._call(read_sessions)

    async def close(self) -> None:
        """Close the connection (waits for a call in flight). Later calls raise
        ``RuntimeError``; closing twice is harmless."""
        await anyio.to_thread.run_sync(self._close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- plumbing --------------------------------------------------------------------

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        # Not abandoned on cancellation: the thread finishes (or rolls back) its
        # transaction and releases the connection before the cancellation lands.
        return await anyio.to_thread.run_sync(self._locked, fn, *args)

    def _locked(self, fn: Callable[..., _T], *args: Any) -> _T:
        with self._lock:
            if self._conn is None:
                if self._closed:
                    raise RuntimeError("this SQLiteContextStore is closed")
                self._conn = self._open()
            return fn(self._conn, *args)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False
        )
        try:
            self._prepare(conn)
            sync = "FULL" if self._durability == "power" else "NORMAL"
            conn.execute(f"PRAGMA synchronous={sync}")
            row = conn.execute(
                "SELECT created_at FROM sessions WHERE session_id = ?", (self._session_id,)
            ).fetchone()
        except BaseException:
            conn.close()
            raise
        if row is not None:
            self._exists = True
            self._created_at = row[0]
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL and migrate it. Another process doing the same at the
        same moment makes SQLite answer "locked" at once (its busy handler does not cover
        a journal-mode change), so this retries until ``timeout``."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                with self._file.write_lock:  # switching to WAL and migrating take the lock
                    conn.execute("PRAGMA journal_mode=WAL")
                    migrate(conn, self._path)
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(0.01)

    def _close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _write(
        self, conn: sqlite3.Connection, body: Callable[[], _T], *, changes_history: bool = True
    ) -> _T:
        """Run ``body`` in one immediate transaction; the session's row is created on the
        first write.

        ``body`` leaves the cache exact (or absent) as of its transaction; then, as other
        stores of this process write only under the same lock, the next ``get_history``
        may trust it. A change to the history is counted so that those stores re-check.
        """
        sid = self._session_id
        with self._file.write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if not self._exists:
                    created = now()
                    conn.execute(
                        "INSERT OR IGNORE INTO sessions (session_id, created_at) VALUES (?, ?)",
                        (sid, created),
                    )
                    self._exists = True
                    self._created_at = conn.execute(
                        "SELECT created_at FROM sessions WHERE session_id = ?", (sid,)
                    ).fetchone()[0]
                result = body()
                conn.execute("COMMIT")
            except BaseException:
                self._exists = False  # unknown again: the row may have been rolled back
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            changes = self._file.changes.get(sid, 0)
            if changes_history:
                changes += 1
                self._file.changes[sid] = changes
            self._seen_changes = changes
            self._trusted = True
        return result

    def _state(self, conn: sqlite3.Connection) -> tuple[int, int]:
        row = conn.execute(
            "SELECT generation, message_count FROM sessions WHERE session_id = ?",
            (self._session_id,),
        ).fetchone()
        return (row[0], row[1]) if row is not None else (0, 0)

    def _sync(self, conn: sqlite3.Connection, generation: int, count: int) -> None:
        """Make the cache hold the live history that is at (generation, count) in the
        transaction ``conn`` is in."""
        if self._messages is not None and generation == self._generation:
            if count == self._count:
                return
            if count > self._count:  # only appends happen within a generation
                rows = conn.execute(_LIVE_ROWS, (self._session_id, self._last_id)).fetchall()
                self._messages.extend(decode(body) for _, body in rows)
                self._count += len(rows)
                self._last_id = rows[-1][0] if rows else self._last_id
                return
        rows = conn.execute(_LIVE_ROWS, (self._session_id, 0)).fetchall()
        self._messages = [decode(body) for _, body in rows]
        self._generation, self._count = generation, len(rows)
        self._last_id = rows[-1][0] if rows else 0

    def _sync_if_cached(self, conn: sqlite3.Connection, generation: int, count: int) -> None:
        if self._messages is not None:
            self._sync(conn, generation, count)

    def _read_history(self, conn: sqlite3.Connection) -> list[Message]:
        seen = self._file.changes.get(self._session_id, 0)  # before reading: conservative
        conn.execute("BEGIN")
        try:
            self._sync(conn, *self._state(conn))
        finally:
            conn.execute("COMMIT")
        self._seen_changes = seen
        self._trusted = False
        assert self._messages is not None
        return list(self._messages)

    def _append(
        self,
        conn: sqlite3.Connection,
        messages: list[Message],
        tokens: tuple[int, int] | None = None,
    ) -> None:
        rows = [(self._session_id, m.role, encode(m)) for m in messages]

        def body() -> None:
            last = 0
            for row in rows:
                last = conn.execute(_INSERT, row).lastrowid or 0
            if tokens is not None:
                conn.execute(
                    "UPDATE sessions SET input_tokens = input_tokens + ?,"
                    " output_tokens = output_tokens + ? WHERE session_id = ?",
                    (*tokens, self._session_id),
                )
            generation, count = conn.execute(
                "UPDATE sessions SET message_count = message_count + ? WHERE session_id = ?"
                " RETURNING generation, message_count",
                (len(rows), self._session_id),
            ).fetchone()
            if self._messages is None:
                return
            if (generation, count - len(rows)) == (self._generation, self._count):
                self._messages.extend(messages)
                self._count, self._last_id = count, last or self._last_id
            else:  # someone else wrote the session since the cache was checked
                self._sync(conn, generation, count)

        try:
            self._write(conn, body)
        except BaseException:
            self._messages = None  # may have been extended before a failed commit
            raise

    def _replace(self, conn: sqlite3.Connection, messages: list[Message], archive: bool) -> None:
        sid = self._session_id
        rows = [(sid, m.role, encode(m)) for m in messages]

        def body() -> None:
            if archive:
                segment = conn.execute(
                    "SELECT coalesce(max(segment), 0) + 1 FROM segments WHERE session_id = ?",
                    (sid,),
                ).fetchone()[0]
                moved = conn.execute(
                    "UPDATE messages SET segment = ? WHERE session_id = ? AND segment = 0",
                    (segment, sid),
                ).rowcount
                if moved:
                    conn.execute(
                        "INSERT INTO segments (session_id, segment, archived_at, message_count)"
                        " VALUES (?, ?, ?, ?)",
                        (sid, segment, now(), moved),
                    )
            else:
                conn.execute("DELETE FROM messages WHERE session_id = ? AND segment = 0", (sid,))
            last = 0
            for row in rows:
                last = conn.execute(_INSERT, row).lastrowid or 0
            (generation,) = conn.execute(
                "UPDATE sessions SET generation = generation + 1, message_count = ?"
                " WHERE session_id = ? RETURNING generation",
                (len(rows), sid),
            ).fetchone()
            self._messages = list(messages)
            self._generation, self._count, self._last_id = generation, len(rows), last

        try:
            self._write(conn, body)
        except BaseException:
            self._messages = None
            raise

    def _fork(self, conn: sqlite3.Connection) -> str:
        new_id = uuid.uuid4().hex

        def body() -> None:
            conn.execute(
                "INSERT INTO sessions (session_id, parent_id, created_at, input_tokens,"
                " output_tokens, message_count) SELECT ?, session_id, ?, input_tokens,"
                " output_tokens, message_count FROM sessions WHERE session_id = ?",
                (new_id, now(), self._session_id),
            )
            conn.execute(
                "INSERT INTO messages (session_id, segment, role, body) SELECT ?, 0, role, body"
                " FROM messages WHERE session_id = ? AND segment = 0 ORDER BY id",
                (new_id, self._session_id),
            )
            self._sync_if_cached(conn, *self._state(conn))

        self._write(conn, body, changes_history=False)
        return new_id

    def _tokens(self, conn: sqlite3.Connection, input_: int, output: int, add: bool) -> None:
        sql = (
            "UPDATE sessions SET input_tokens = input_tokens + ?,"
            " output_tokens = output_tokens + ? WHERE session_id = ?"
            if add
            else "UPDATE sessions SET input_tokens = ?, output_tokens = ? WHERE session_id = ?"
        ) + " RETURNING generation, message_count"

        def body() -> None:
            generation, count = conn.execute(sql, (input_, output, self._session_id)).fetchone()
            self._sync_if_cached(conn, generation, count)

        self._write(conn, body, changes_history=False)

    def _read_tokens(self, conn: sqlite3.Connection) -> tuple[int, int]:
        row = conn.execute(
            "SELECT input_tokens, output_tokens FROM sessions WHERE session_id = ?",
            (self._session_id,),
        ).fetchone()
        return (row[0], row[1]) if row is not None else (0, 0)

    def _read_archive(self, conn: sqlite3.Connection) -> list[ArchivedSegment]:
        return [ArchivedSegment(*row) for row in read_archive(conn, self._session_id)]

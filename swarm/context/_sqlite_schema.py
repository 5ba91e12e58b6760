"""The file layout of ``SQLiteContextStore``: its tables, their migrations, how a
message is stored, and the queries that only read.

Tables: ``schema_version`` (one row per applied migration), ``sessions`` (one row per
session: parent, creation time, token totals, and ``message_count``/``generation`` that
describe its live history: appends raise the count, ``clear``/``replace`` start a new
generation), ``messages`` (one row per message: session, segment, role, and the
``Message.to_dict()`` JSON; segment 0 is the live history, archived segments count from 1)
and ``segments`` (when each archived segment was set aside).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

from swarm.context.base import SessionInfo, preview_of
from swarm.errors import ConfigError
from swarm.messages import Message

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "decode",
    "encode",
    "migrate",
    "now",
    "preview",
    "read_archive",
    "read_sessions",
    "version",
]

SCHEMA_VERSION = 1
"""The version of the file layout this code reads and writes."""

# Each entry brings a file from the previous version to this one, in one transaction.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE schema_version (
            version INTEGER NOT NULL,
            applied_at TEXT NOT NULL
        )""",
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            parent_id TEXT,
            created_at TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            message_count INTEGER NOT NULL DEFAULT 0,
            generation INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            segment INTEGER NOT NULL,
            role TEXT NOT NULL,
            body TEXT NOT NULL
        )""",
        "CREATE INDEX messages_by_session ON messages (session_id, segment, id)",
        """CREATE TABLE segments (
            session_id TEXT NOT NULL,
            segment INTEGER NOT NULL,
            archived_at TEXT NOT NULL,
            message_count INTEGER NOT NULL,
            PRIMARY KEY (session_id, segment)
        )""",
    ),
}


_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # built once: it is hot


def encode(message: Message) -> str:
    """A message as stored: its ``to_dict()`` as compact JSON, nothing added."""
    return _json.encode(message.to_dict())


def decode(body: str) -> Message:
    """A stored message back; ``ValueError`` if the row is not one."""
    return Message.from_dict(json.loads(body))


def now() -> str:
    """The current UTC time as stored (ISO 8601, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_archive(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, str, list[Message]]]:
    """A session's archived segments ``(index, archived_at, messages)``, oldest first."""
    conn.execute("BEGIN")
    try:
        segments = conn.execute(
            "SELECT segment, archived_at FROM segments WHERE session_id = ? ORDER BY segment",
            (session_id,),
        ).fetchall()
        return [
            (
                index,
                archived_at,
                [
                    decode(body)
                    for (body,) in conn.execute(
                        "SELECT body FROM messages WHERE session_id = ? AND segment = ?"
                        " ORDER BY id",
                        (session_id, index),
                    )
                ],
            )
            for index, archived_at in segments
        ]
    finally:
        conn.execute("COMMIT")


def read_sessions(conn: sqlite3.Connection) -> list[SessionInfo]:
    """Every session in the file, oldest first."""
    conn.execute("BEGIN")
    try:
        sessions = conn.execute(
            "SELECT session_id, message_count, created_at, input_tokens, output_tokens,"
            " parent_id FROM sessions ORDER BY rowid"
        ).fetchall()
        return [
            SessionInfo(sid, count, preview(conn, sid), created, tin, tout, parent)
            for sid, count, created, tin, tout, parent in sessions
        ]
    finally:
        conn.execute("COMMIT")


def preview(conn: sqlite3.Connection, session_id: str) -> str:
    """The preview of a session's live history: its first text, reading as few rows as
    it takes (usually one)."""
    for (body,) in conn.execute(
        "SELECT body FROM messages WHERE session_id = ? AND segment = 0 ORDER BY id",
        (session_id,),
    ):
        text = preview_of([decode(body)])
        if text:
            return text
    return ""


def version(conn: sqlite3.Connection) -> int:
    """The file's schema version; 0 for a file swarm has not laid out yet."""
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if table is None:
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring the file's layout to ``SCHEMA_VERSION`` (creating it in a new file)."""
    if version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = version(conn)  # again, under the write lock: another process may have won
        if found > SCHEMA_VERSION:
            raise ConfigError(
                f"the context store's schema version is {found}, newer than this swarm"
                f" understands ({SCHEMA_VERSION}); upgrade swarm to open it",
                path=path,
            )
        for target in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target]:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)", (target, now())
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise

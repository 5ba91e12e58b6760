"""Shared helpers for the context store tests: history checks and reading a file raw."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from swarm import Message
from swarm.testing import history_problems

HERE = Path(__file__).parent


def assert_valid_history(history: list[Message]) -> None:
    """Every tool use is answered by the next message, every result answers the message
    before it, and roles alternate."""
    assert history_problems(history) == []


def raw_rows(path: Path, session_id: str | None = None) -> list[tuple[Any, ...]]:
    """The rows of the messages table (session, segment, role, body), in insertion order."""
    with sqlite3.connect(path) as conn:
        sql = "SELECT session_id, segment, role, body FROM messages"
        if session_id is None:
            return conn.execute(sql + " ORDER BY id").fetchall()
        return conn.execute(sql + " WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()


def assert_file_sound(path: Path) -> None:
    """SQLite finds the file intact and every stored message is a whole, valid message."""
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    for _, _, role, body in raw_rows(path):
        data = json.loads(body)
        assert Message.from_dict(data).to_dict() == data
        assert data["role"] == role


def start_process(script: str, *args: object) -> subprocess.Popen[str]:
    """Run one of the helper scripts beside this file as a separate Python process."""
    return subprocess.Popen(
        [sys.executable, str(HERE / script), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    """Wait for a helper process to exit successfully; its stdout."""
    out, err = process.communicate()
    assert process.returncode == 0, err
    return out

"""Fixtures for guard tests: tools with the shapes the toolbox gives them, a run scope that
keeps an audit log (the default policy requires one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm.audit import AuditLog
from swarm.scope import RunScope, use_scope
from swarm.tools import Tool


async def _shell(command: str) -> str:
    return f"ran {command}"


async def _read_file(path: str) -> str:
    return f"read {path}"


async def _write_file(path: str, content: str) -> str:
    return f"wrote {path}"


def make_tool(name: str, handler: Any, **options: Any) -> Tool[Any]:
    return Tool(name=name, handler=handler, **options)


@pytest.fixture
def shell() -> Tool[Any]:
    return make_tool("shell", _shell)


@pytest.fixture
def read_file() -> Tool[Any]:
    return make_tool("read_file", _read_file)


@pytest.fixture
def write_file() -> Tool[Any]:
    return make_tool("write_file", _write_file)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def audited(tmp_path: Path) -> Iterator[AuditLog]:
    """A run scope with an audit log, current for the test."""
    with (
        AuditLog(tmp_path / "audit.jsonl", fsync=False) as log,
        use_scope(RunScope(path="agent", run_id="test", observers=(log,))),
    ):
        yield log

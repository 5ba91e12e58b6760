"""Helpers for the team tests: a toolbox of stand-in workspace tools and role files on disk."""

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm import Tool
from swarm.toolbox import TOOL_NAMES as WORKSPACE_TOOLS


def stand_in_tool(name: str) -> Tool[Any]:
    """A tool with the given name that does nothing (role tests need only the names)."""

    async def handler() -> str:
        return name

    return Tool(name=name, handler=handler, description=f"stand-in for {name}")


@pytest.fixture
def toolbox() -> dict[str, Tool[Any]]:
    return {name: stand_in_tool(name) for name in WORKSPACE_TOOLS}


WriteRole = Callable[[str, str], Path]


@pytest.fixture
def roles_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "roles"
    directory.mkdir()
    return directory


@pytest.fixture
def write_role(roles_dir: Path) -> WriteRole:
    """Write ``text`` (dedented) to ``roles_dir/filename`` and return the path."""

    def write(filename: str, text: str) -> Path:
        path = roles_dir / filename
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write

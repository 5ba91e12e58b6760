"""PathGuard keeps every path argument inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm.errors import GuardError
from swarm.guards import PathGuard, path_arguments
from swarm.tools import Tool

pytestmark = pytest.mark.anyio


async def test_relative_path_inside_is_allowed(workspace: Path, read_file: Tool[Any]) -> None:
    (workspace / "src").mkdir()
    assert await PathGuard(workspace)(read_file, path="src/a.py") == {"path": "src/a.py"}


async def test_file_not_created_yet_is_allowed(workspace: Path, write_file: Tool[Any]) -> None:
    allowed = await PathGuard(workspace)(write_file, path="new/dir/file.txt", content="x")
    assert allowed["path"] == "new/dir/file.txt"


async def test_absolute_path_inside_is_allowed(workspace: Path, read_file: Tool[Any]) -> None:
    inside = str(workspace / "a.txt")
    assert await PathGuard(workspace)(read_file, path=inside) == {"path": inside}


@pytest.mark.parametrize("path", ["../secret", "src/../../secret", "a/../b", ".."])
async def test_dot_dot_is_denied(workspace: Path, read_file: Tool[Any], path: str) -> None:
    with pytest.raises(GuardError) as caught:
        await PathGuard(workspace)(read_file, path=path)
    assert "'..'" in caught.value.reason
    assert caught.value.rule == "workspace"


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "/tmp"])
async def test_absolute_path_elsewhere_is_denied(
    workspace: Path, read_file: Tool[Any], path: str
) -> None:
    with pytest.raises(GuardError) as caught:
        await PathGuard(workspace)(read_file, path=path)
    assert "outside the workspace" in caught.value.reason


async def test_sibling_with_common_prefix_is_denied(workspace: Path, read_file: Tool[Any]) -> None:
    sibling = workspace.parent / (workspace.name + "-other")
    sibling.mkdir()
    with pytest.raises(GuardError):
        await PathGuard(workspace)(read_file, path=str(sibling / "x"))


async def test_symlink_leaving_the_root_is_denied(
    workspace: Path, tmp_path: Path, read_file: Tool[Any]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    os.symlink(outside, workspace / "link")
    with pytest.raises(GuardError) as caught:
        await PathGuard(workspace)(read_file, path="link/secret.txt")
    assert "symlink" in caught.value.reason


async def test_symlinked_file_leaving_the_root_is_denied(
    workspace: Path, tmp_path: Path, read_file: Tool[Any]
) -> None:
    os.symlink(tmp_path / "elsewhere.txt", workspace / "notes.txt")
    with pytest.raises(GuardError):
        await PathGuard(workspace)(read_file, path="notes.txt")


async def test_symlink_staying_inside_is_allowed(workspace: Path, read_file: Tool[Any]) -> None:
    (workspace / "real").mkdir()
    os.symlink(workspace / "real", workspace / "alias")
    assert await PathGuard(workspace)(read_file, path="alias/x") == {"path": "alias/x"}


async def test_root_given_through_a_symlink_is_resolved(
    tmp_path: Path, read_file: Tool[Any]
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "ws")
    assert await PathGuard(tmp_path / "ws")(read_file, path=str(real / "a"))


async def test_every_path_of_a_list_is_checked(workspace: Path) -> None:
    async def read_files(paths: list[str]) -> str:
        return ""

    tool: Tool[Any] = Tool(name="read_files", handler=read_files)
    with pytest.raises(GuardError) as caught:
        await PathGuard(workspace)(tool, paths=["a.txt", "/etc/shadow"])
    assert caught.value.reason.startswith("argument 'paths'")


async def test_non_path_value_is_denied(workspace: Path) -> None:
    async def open_file(file: Any) -> str:
        return ""

    with pytest.raises(GuardError):
        await PathGuard(workspace)(Tool(name="open_file", handler=open_file), file=42)


def test_path_arguments_by_name_type_and_declaration() -> None:
    async def copy(
        source_path: str, dest_dir: str, target: Path, backups: list[Path], mode: str
    ) -> str:
        return ""

    assert path_arguments(Tool(name="copy", handler=copy)) == {
        "source_path",
        "dest_dir",
        "target",
        "backups",
    }
    declared = Tool(name="copy", handler=copy, context={"path_arguments": ["mode"]})
    assert path_arguments(declared) == {"mode"}


async def test_arguments_that_are_not_paths_are_not_checked(
    workspace: Path, write_file: Tool[Any]
) -> None:
    allowed = await PathGuard(workspace)(write_file, path="a.txt", content="../../etc/passwd")
    assert allowed["content"] == "../../etc/passwd"

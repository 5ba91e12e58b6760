"""An MCP stdio server sees the run's protected paths read-only, as shell commands do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm.guards.protect import ProtectedPaths
from swarm.mcp.client import McpConnections
from swarm.mcp.config import McpStdioServer
from swarm.sandbox import SandboxSettings, SandboxUnavailable, find_sandbox

LITTLE_SERVER = Path(__file__).with_name("little_server.py")


@pytest.fixture
def sandboxed() -> None:
    try:
        find_sandbox(SandboxSettings(mode="required"))
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no sandbox tier works here ({exc}); CI always has one")


def test_a_stdio_server_cannot_change_git_config_or_a_role_file(
    tmp_path: Path, sandboxed: None
) -> None:
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    (ws / "roles").mkdir(parents=True)
    (ws / "roles" / "dev.yaml").write_text("name: dev\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    config = (ws / ".git" / "config").read_bytes()
    protected = ProtectedPaths.of_run(ws, [ws / "roles"])
    little = McpStdioServer("little", sys.executable, (str(LITTLE_SERVER),))
    targets = (ws / ".git" / "config", ws / "roles" / "dev.yaml", ws / "free.txt")

    async def write_each() -> list[Any]:
        async with McpConnections(
            {"little": little},
            workspace=ws,
            readonly=protected.mounts(),
            sandbox=SandboxSettings(mode="required"),
        ) as servers:
            return [
                await servers.call("little", "write", {"path": str(target), "text": "evil"})
                for target in targets
            ]

    said = anyio.run(write_each)
    texts = [str(result.content[0].text) for result in said]
    assert texts == ["refused: Read-only file system"] * 2 + ["written"]
    assert (ws / ".git" / "config").read_bytes() == config
    assert (ws / "roles" / "dev.yaml").read_text() == "name: dev\n"

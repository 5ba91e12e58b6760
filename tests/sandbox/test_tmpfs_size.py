"""Private tmpfs mounts have a size: a command that writes past it gets ENOSPC, and what
it wrote (the host's memory it holds while the command runs) stops at the size. Without
one, each tmpfs could take half of the machine's memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarm.guards._sandboxing import LimitsFile, SandboxFile, merge_sandbox
from swarm.sandbox import TMPFS_SIZE
from swarm.toolbox import make_toolbox

from .conftest import run, text, tier_finder

pytestmark = pytest.mark.anyio
MiB = 1024**2


def shell_in(tier: str, workspace: Path, **limits: Any) -> Any:
    settings = merge_sandbox(SandboxFile(mode="required", limits=LimitsFile(**limits)), None)
    return make_toolbox(workspace, sandbox=settings, find=tier_finder(tier))["shell"]


# Writes 24 MiB, then says how much landed and what the write said.
FILL = "head -c {size} /dev/zero 2>&1 >{path}/big; echo rc=$?; stat -c size=%s {path}/big"


@pytest.mark.parametrize(
    ("tier", "path"),
    [
        ("bubblewrap", "/tmp"),
        ("bubblewrap", "/var/tmp"),
        ("bubblewrap", "/dev/shm"),
        ("landlock", "/dev/shm"),
    ],
)
async def test_writing_past_the_tmpfs_size_fails_with_enospc(
    tier: str, path: str, ws: Path
) -> None:
    shell = shell_in(tier, ws, tmpfs="8MiB")
    out = text(await run(shell, FILL.format(size=24 * MiB, path=path)))
    assert "No space left on device" in out
    assert "rc=1" in out
    written = int(out.rsplit("size=", 1)[1].split()[0])
    assert 0 < written <= 8 * MiB


@pytest.mark.parametrize(("tier", "path"), [("bubblewrap", "/tmp"), ("landlock", "/dev/shm")])
async def test_default_size_is_256_mib(tier: str, path: str, ws: Path) -> None:
    out = text(await run(shell_in(tier, ws), f"df -B1 --output=size {path} | tail -1"))
    assert int(out.split()[0]) == TMPFS_SIZE == 256 * MiB


async def test_unlimited_gives_the_kernel_default(ws: Path) -> None:
    out = text(
        await run(
            shell_in("bubblewrap", ws, tmpfs="unlimited"), "df -B1 --output=size /tmp | tail -1"
        )
    )
    assert int(out.split()[0]) > TMPFS_SIZE

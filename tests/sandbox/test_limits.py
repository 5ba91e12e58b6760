"""Resource limits, by their effect: under each Linux tier a process flood is capped and
leaves nothing behind, a file stops growing at the size limit, an allocation loop fails at
the memory limit, a CPU spin is killed at the CPU limit (small limits, so it is quick),
and the model is told which limit killed the command."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, MemoryContextStore, ResourceLimits, SandboxSettings, Tool, ToolResult
from swarm.audit import AuditLog
from swarm.errors import ToolError
from swarm.guards import apply_policy, load_policy
from swarm.sandbox.cgroup import find_cgroups
from swarm.sandbox.limits import PID_MAX_FLOOR
from swarm.scope import RunScope
from swarm.testing import StubTransport, make_text_response, make_tool_use_response
from swarm.toolbox import make_toolbox

from .conftest import run, text, tier_finder

MiB = 1024**2
TIERS = ["bubblewrap", "landlock"]
SMALL = ResourceLimits(cpu=1, memory=256 * MiB, file_size=1 * MiB, processes=40, open_files=64)

# Forks children that wait on a pipe until the parent is done, so they all live at once,
# then says how many it got; the children go when the pipe closes.
FLOOD = """
import os, sys
r, w = os.pipe()
got = 0
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed:", e.strerror)
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    got += 1
print("children", got, flush=True)
"""


def shell_of(tier: str, ws: Path, limits: ResourceLimits = SMALL, timeout: float = 60) -> Tool[Any]:
    settings = SandboxSettings(mode="required", limits=limits)
    return make_toolbox(ws, shell_timeout=timeout, sandbox=settings, find=tier_finder(tier))[
        "shell"
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_a_process_flood_is_capped(tier: str, ws: Path) -> None:
    (ws / "flood.py").write_text(FLOOD)
    out = text(await run(shell_of(tier, ws), "python3 flood.py"))
    assert "fork failed: Resource temporarily unavailable" in out
    got = int(re.search(r"children (\d+)", out).group(1))  # type: ignore[union-attr]
    assert SMALL.processes is not None
    if isinstance(find_cgroups(), str):
        # The PID namespace's cap: at least the limit, at most the limit + 300 (limits.py).
        assert SMALL.processes <= got < SMALL.processes + PID_MAX_FLOOR
    else:
        # The cgroup's pids.max counts every process of the command, its launcher too.
        assert SMALL.processes - 10 <= got < SMALL.processes


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_a_fork_bomb_ends_with_the_call_and_leaves_nothing(
    tier: str, ws: Path, running: Any, marker: str
) -> None:
    bomb = f"b() {{ sleep {marker} & b | b & }}; b; wait"
    out = text(await run(shell_of(tier, ws, timeout=2), bomb))
    assert "timed out after 2s" in out
    # Every process of the bomb (bash copies and sleeps) has the marker in its command line.
    assert running(marker) == []


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_dd_past_the_file_limit_is_killed_and_the_file_stays_at_the_limit(
    tier: str, ws: Path
) -> None:
    with pytest.raises(ToolError) as caught:
        await run(shell_of(tier, ws), "dd if=/dev/zero of=big bs=64K count=100")
    assert str(caught.value).startswith("[killed: file size limit of 1 MiB; exit code")
    assert (ws / "big").stat().st_size <= 1 * MiB


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_python_writing_past_the_file_limit_fails_and_the_file_stays_at_the_limit(
    tier: str, ws: Path
) -> None:
    write = 'python3 -c \'open("big", "wb").write(bytes(5 << 20))\''
    out = text(await run(shell_of(tier, ws), write))
    assert "File too large" in out
    assert (ws / "big").stat().st_size <= 1 * MiB


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_an_allocation_loop_fails_at_the_memory_limit(tier: str, ws: Path) -> None:
    # One process alone: its allocation fails before the budget's kill (see cgroup.py).
    grow = "python3 -c 'x = []\nwhile True: x.append(bytearray(8 << 20))'"
    out = text(await run(shell_of(tier, ws), grow))
    assert "MemoryError" in out
    assert out.endswith("[exit code 1]")


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_a_cpu_spin_is_killed_at_the_cpu_limit(tier: str, ws: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await run(shell_of(tier, ws), "python3 -c 'while True: pass'")
    assert str(caught.value).startswith("[killed: CPU limit of 1 s; exit code")


@pytest.mark.anyio
async def test_a_cpu_spin_ignoring_sigxcpu_is_killed_too(ws: Path) -> None:
    spin = (
        "python3 -c 'import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile 1: pass'"
    )
    out = text(await run(shell_of("bubblewrap", ws), spin))
    assert "killed by SIGKILL" in out


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_the_command_sees_the_limits(tier: str, ws: Path) -> None:
    out = text(await run(shell_of(tier, ws), "for o in t d f n c; do ulimit -$o; done"))
    # bash: seconds; KiB for data; 1024-byte blocks for files; descriptors; core blocks.
    # Where a cgroup holds the budget, one process gets 7/8 of it (see cgroup.py); where
    # none does, the budget shared out among 8 processes at least (ResourceLimits.shared).
    data = 32 * 1024 if isinstance(find_cgroups(), str) else 224 * 1024
    assert out.split()[:5] == ["1", str(data), "1024", "64", "0"]


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_default_limits_leave_ordinary_commands_alone(tier: str, ws: Path) -> None:
    command = "seq 1 200 | xargs -P 8 -n 1 true && head -c 5000000 /dev/zero > f && wc -c < f"
    out = text(await run(shell_of(tier, ws, ResourceLimits()), command))
    assert out == "5000000\n[exit code 0]"


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_a_broken_pipe_ends_the_writer_as_usual(tier: str, ws: Path) -> None:
    # The limits are set by a Python launcher, which ignores SIGPIPE: the command must not.
    out = text(await run(shell_of(tier, ws), "yes | head -n 2; echo ${PIPESTATUS[0]}"))
    assert out == "y\ny\n141\n[exit code 0]"


def test_unlimited_limits_pass_minus_one() -> None:
    none = ResourceLimits(None, None, None, None, None)
    assert none.options() == ["--cpu=-1", "--data=-1", "--fsize=-1", "--nofile=-1", "--nproc=-1"]
    assert none.describe() == (
        "limits: cpu unlimited, memory unlimited, file unlimited, processes unlimited,"
        " open files unlimited"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_a_policys_limits_apply_and_a_kill_is_in_the_audit_log(
    tier: str, ws: Path, tmp_path: Path
) -> None:
    policy = tmp_path / "tight.yaml"
    policy.write_text(
        "extend: default\ndefault: allow\nsandbox:\n  mode: required\n  limits: {cpu: 1}\n"
    )
    tools = make_toolbox(ws, shell_timeout=60, find=tier_finder(tier))
    guarded = apply_policy([tools["shell"]], load_policy(policy), role="dev", workspace=ws)
    spin = {"command": "python3 -c 'while True: pass'"}
    model = StubTransport([make_tool_use_response("shell", "c1", spin), make_text_response()])
    agent = Agent("You develop.", model, guarded, max_iterations=2)
    results = []
    with AuditLog(tmp_path / "audit.jsonl") as audit:
        scope = RunScope(path="dev", run_id="limits", observers=(audit,))
        async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
            results = [event async for event in stream if isinstance(event, ToolResult)]
    assert [r.is_error for r in results] == [True]
    assert results[0].content.startswith("[killed: CPU limit of 1 s; exit code")
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    [finish] = [r for r in records if r["event"] == "finish"]
    assert finish["outcome"] == "error"
    assert finish["error"].startswith("[killed: CPU limit of 1 s")

"""``swarm policy test`` and ``swarm validate --against``: ten recorded runs replayed under
a tightened and a loosened policy list exactly the calls whose decision changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm

import anyio
import pytest

from swarm import Agent, MemoryContextStore, Tool
from swarm.audit import AuditLog
from swarm.guards import apply_policy, load_policy
from swarm.scope import RunScope, use_scope
from swarm.testing import StubTransport, make_text_response, make_tool_uses_response

OLD = """\
name: team
default: deny
rules:
  - {id: shell-make, allow: shell, args: {command: {glob: "make *"}}}
  - {id: shell-git, allow: shell, args: {command: {glob: "git *"}}}
  - {id: write-src, allow: write_file, args: {path: {path: "src/**"}}}
  - {id: no-secrets, deny: write_file, args: {path: {path: "secrets/**"}}}
"""
TIGHTENED = """\
name: team
default: deny
rules:
  - {id: shell-make, allow: shell, args: {command: {glob: "make *"}}}
  - {id: write-src, allow: write_file, args: {path: {path: "src/**"}}}
  - {id: not-a7, deny: write_file, args: {path: {equals: "src/a7.py"}}}
  - {id: no-secrets, deny: write_file, args: {path: {path: "secrets/**"}}}
"""
LOOSENED = (
    OLD
    + """\
  - {id: write-docs, allow: write_file, args: {path: {path: "docs/**"}}}
  - {id: write-secrets, allow: write_file, args: {path: {path: "secrets/**"}}}
"""
)


def calls_of(run: int) -> list[tuple[str, dict[str, str]]]:
    """What run ``run`` asks for: make and git (allowed), a source file (allowed), docs
    (denied by default) or curl (denied), and in run 3 a secret (denied by a rule)."""
    calls: list[tuple[str, dict[str, str]]] = [
        ("shell", {"command": "make test"}),
        ("shell", {"command": "git status"}),
        ("write_file", {"path": f"src/a{run}.py", "content": "x"}),
    ]
    if run < 5:
        calls.append(("write_file", {"path": f"docs/d{run}.md", "content": "y"}))
    else:
        calls.append(("shell", {"command": f"curl http://x/{run}"}))
    if run == 3:
        calls.append(("write_file", {"path": "secrets/key", "content": "z"}))
    return calls


async def record_run(runs: Path, run: int, policy: Path) -> None:
    async def shell(command: str) -> str:
        return "ok"

    async def write_file(path: str, content: str) -> str:
        return "written"

    tools = apply_policy(
        [Tool(name="shell", handler=shell), Tool(name="write_file", handler=write_file)],
        load_policy(policy),
        role="dev",
    )
    uses = [(tool, f"call_{i}", args) for i, (tool, args) in enumerate(calls_of(run))]
    transport = StubTransport([make_tool_uses_response(uses), make_text_response("done")])
    agent = Agent(system="dev", transport=transport, tools=tools, name="dev")
    directory = runs / f"run-{run:02d}"
    directory.mkdir(parents=True)
    with (
        AuditLog(directory / "audit.jsonl", fsync=False) as audit,
        use_scope(RunScope(path="lead/dev#1", run_id=f"run-{run}", observers=(audit,))),
    ):
        await agent.run("work", MemoryContextStore())


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """Ten runs recorded under the old policy (``runs/run-00`` ... ``run-09``)."""
    for name, text in (("old", OLD), ("tightened", TIGHTENED), ("loosened", LOOSENED)):
        (tmp_path / f"{name}.yaml").write_text(text)
    runs = tmp_path / "runs"

    async def record() -> None:
        for run in range(10):
            await record_run(runs, run, tmp_path / "old.yaml")

    anyio.run(record)
    return runs


def changes(stdout: str) -> set[tuple[str, str, str]]:
    """(change, tool, arguments) of each call listed."""
    found = set()
    for line in stdout.splitlines():
        if line.startswith(("loosened  ", "tightened  ")):
            change, _path, tool, arguments = line.split("  ", 3)
            found.add(
                (change, tool, json.loads(arguments)["path" if tool == "write_file" else "command"])
            )
    return found


def test_tightened_policy_lists_exactly_the_calls_it_would_deny(
    swarm: Swarm, recorded: Path
) -> None:
    done = swarm("policy", "test", "tightened.yaml", recorded, "--fail-on", "loosened")
    assert done.returncode == 0, done.stderr
    expected = {("tightened", "shell", "git status")} | {("tightened", "write_file", "src/a7.py")}
    assert changes(done.stdout) == expected
    lines = done.stdout.splitlines()
    assert sum(line.startswith("tightened  lead/dev#1  shell") for line in lines) == 10
    assert "was allow (rule shell-git), now deny (rule default)" in done.stdout
    assert "was allow (rule write-src), now deny (rule not-a7)" in done.stdout
    assert lines[-1] == "replayed 41 calls of 10 runs: 11 changed (0 loosened, 11 tightened)"


def test_loosened_policy_lists_exactly_the_calls_it_would_allow(
    swarm: Swarm, recorded: Path
) -> None:
    done = swarm("policy", "test", "loosened.yaml", recorded, "--fail-on", "loosened")
    assert done.returncode == 1
    expected = {("loosened", "write_file", f"docs/d{run}.md") for run in range(5)}
    assert changes(done.stdout) == expected  # the secret stays denied: deny wins
    assert done.stdout.splitlines()[-1].endswith("5 changed (5 loosened, 0 tightened)")


def test_the_same_policy_changes_nothing_and_fails_on_nothing(swarm: Swarm, recorded: Path) -> None:
    done = swarm("policy", "test", "old.yaml", recorded / "run-03", "--fail-on", "any")
    assert done.returncode == 0
    assert done.stdout == "replayed 5 calls of 1 run: 0 changed (0 loosened, 0 tightened)\n"


def test_validate_against_runs_uses_each_roles_policy(
    swarm: Swarm, recorded: Path, tmp_path: Path
) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text("description: leads\nsystem: lead\ndelegates: [dev]\n")
    (team / "dev.yaml").write_text(
        "description: develops\nsystem: dev\ntools: [read_file]\npolicy: ../tightened.yaml\n"
    )
    done = swarm("validate", "team", "--against", recorded, "--fail-on", "tightened")
    assert done.returncode == 1, done.stderr
    assert len(changes(done.stdout)) == 2 and done.stdout.count("tightened  lead/dev#1") == 11


def test_a_path_that_is_no_run_is_a_clear_error(
    swarm: Swarm, recorded: Path, tmp_path: Path
) -> None:
    (tmp_path / "bad.jsonl").write_text('{"event": "decision"}\nnot json\n')
    missing = swarm("policy", "test", "old.yaml", tmp_path / "nowhere")
    bad = swarm("policy", "test", "old.yaml", tmp_path / "bad.jsonl")
    for done in (missing, bad):
        assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nowhere" in missing.stderr and "no such run" in missing.stderr
    assert "bad.jsonl:2" in bad.stderr and "not an audit record" in bad.stderr


def test_validate_a_policy_file_against_runs_replays_it_for_every_role(
    swarm: Swarm, recorded: Path
) -> None:
    done = swarm("validate", "loosened.yaml", "--against", recorded, "--fail-on", "tightened")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: loosened.yaml: policy 'team', 6 rules\n")
    assert done.stdout.splitlines()[-1].endswith("5 changed (5 loosened, 0 tightened)")

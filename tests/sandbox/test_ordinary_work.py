"""Ordinary developer commands still work inside each sandbox tier, through the real tool
path with the shipped ``default`` policy: confinement that broke everyday work would be
one more false denial."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from swarm import Agent, MemoryContextStore, ToolResult
from swarm.audit import AuditLog
from swarm.guards import apply_policy, load_policy
from swarm.run import RunScope
from swarm.testing import StubTransport, make_text_response, make_tool_use_response
from swarm.toolbox import make_toolbox

from .conftest import tier_finder

PYTHON = os.path.dirname(sys.executable)
COMMANDS = [
    "python3 -c 'print(6 * 7)'",
    f"{PYTHON}/python -m pytest -q -p no:cacheprovider test_app.py",
    "git init -q . && git add -A && git -c user.name=a -c user.email=a@b commit -qm x"
    " && git log --oneline | wc -l",
    "git status --short && git diff --stat HEAD",
    "ls -la && find . -name '*.py' | sort",
    "grep -rn 'def ' --include='*.py' .",
    "if [ -f app.py ]; then echo present; fi",
    "case app.py in *.py) echo python;; esac",
    "f() { echo called $1; }; f once",
    "echo $(( 6 * 7 ))",
    'bash -c "echo $HOME" && test -w "$HOME" && echo home-writable',
    'mktemp -d && mktemp && ls "${TMPDIR:-/tmp}"',
    "mkdir -p build/out && echo built > build/out/x.txt && cat build/out/x.txt",
    "cat app.py | sed 's/add/plus/' | head -3",
    "printf 'all:\\n\\t@echo made\\n' > Makefile && make",
    "tar czf a.tgz app.py && tar tzf a.tgz",
    "node -e 'console.log(40 + 2)'",
    "gcc --version | head -1",
    f"{PYTHON}/python -m pip list 2>/dev/null | head -3",
    "sort app.py | uniq -c | sort -rn | head -2",
    "wc -l app.py test_app.py && du -sh .",
    "env | sort | cut -d= -f1",
    "sleep 0.1 & wait; echo waited",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small Python project."""
    workspace = tmp_path.resolve() / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (workspace / "test_app.py").write_text(
        "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (tmp_path / "run").mkdir()
    return workspace


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
async def test_everyday_commands_succeed_in_the_sandbox(
    tier: str, workspace: Path, tmp_path: Path
) -> None:
    tools = make_toolbox(workspace, shell_timeout=60, find=tier_finder(tier))
    guarded = apply_policy(
        [tools["shell"]], load_policy("default"), role="dev", workspace=workspace
    )
    turns = [
        make_tool_use_response("shell", f"call_{i}", {"command": c}) for i, c in enumerate(COMMANDS)
    ]
    model = StubTransport([*turns, make_text_response()])
    agent = Agent("You develop.", model, guarded, max_iterations=len(COMMANDS) + 1)
    failed = []
    with AuditLog(tmp_path / "run" / "audit.jsonl") as audit:
        scope = RunScope(path="dev", run_id="ordinary", observers=(audit,))
        async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
            async for event in stream:
                if isinstance(event, ToolResult) and (
                    event.is_error or "[exit code 0" not in event.content[-40:]
                ):
                    failed.append(f"{event.input['command']!r}: {event.content[-300:]}")
    assert failed == []

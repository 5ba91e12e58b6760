"""Ordinary developer commands still work inside each sandbox tier, through the real tool
path with the shipped ``default`` policy: confinement that broke everyday work would be
one more false denial."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, MemoryContextStore, ToolResult
from swarm.audit import AuditLog
from swarm.guards import apply_policy, load_policy
from swarm.scope import RunScope
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


async def _failures(
    tier: str, workspace: Path, run_dir: Path, commands: list[str], *, policy: bool = True
) -> list[str]:
    """The commands that failed (an error, or an exit code other than 0), each run by the
    shell tool in ``tier`` as a model would, under the shipped ``default`` policy (or,
    without ``policy``, the sandbox alone)."""
    tools = make_toolbox(workspace, shell_timeout=120, find=tier_finder(tier))
    guarded = [tools["shell"]]
    if policy:
        guarded = apply_policy(guarded, load_policy("default"), role="dev", workspace=workspace)
    turns = [
        make_tool_use_response("shell", f"call_{i}", {"command": c}) for i, c in enumerate(commands)
    ]
    model = StubTransport([*turns, make_text_response()])
    agent = Agent("You develop.", model, guarded, max_iterations=len(commands) + 1)
    failed = []
    with AuditLog(run_dir / "audit.jsonl") as audit:
        scope = RunScope(path="dev", run_id="ordinary", observers=(audit,))
        async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
            async for event in stream:
                if isinstance(event, ToolResult) and (
                    event.is_error or "[exit code 0" not in event.content[-40:]
                ):
                    failed.append(f"{event.input['command']!r}: {event.content[-300:]}")
    return failed


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
async def test_everyday_commands_succeed_in_the_sandbox(
    tier: str, workspace: Path, tmp_path: Path
) -> None:
    assert await _failures(tier, workspace, tmp_path / "run", COMMANDS) == []


# A PEP 517/660 build backend small enough to write here, so `pip install -e .` needs
# nothing from an index: the project's one dependency comes from a local wheel directory.
BACKEND = """
import base64, hashlib, os, zipfile


def make_wheel(directory, name, version, files, requires=()):
    dist = f"{name}-{version}.dist-info"
    files = dict(files)
    meta = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
    meta += "".join(f"Requires-Dist: {r}\\n" for r in requires)
    files[f"{dist}/METADATA"] = meta.encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{path},sha256={digest},{len(data)}")
    files[f"{dist}/RECORD"] = ("\\n".join([*lines, f"{dist}/RECORD,,"]) + "\\n").encode()
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open("src/proj/__init__.py", "rb") as source:
        files = {"proj/__init__.py": source.read()}
    return make_wheel(wheel_directory, "proj", "0.1", files, ["tinydep"])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    files = {"proj.pth": (os.path.abspath("src") + "\\n").encode()}
    return make_wheel(wheel_directory, "proj", "0.1", files, ["tinydep"])
"""


@pytest.fixture
def python_project(tmp_path: Path) -> Path:
    """A project built by ``backend.py``, depending on ``tinydep`` from ``wheels/``."""
    workspace = tmp_path.resolve() / "proj"
    (workspace / "src" / "proj").mkdir(parents=True)
    (workspace / "backend.py").write_text(BACKEND)
    (workspace / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
        '[project]\nname = "proj"\nversion = "0.1"\n'
    )
    (workspace / "src" / "proj" / "__init__.py").write_text("VALUE = 40\n")
    (workspace / "wheels").mkdir()
    namespace: dict[str, Any] = {}
    exec(BACKEND, namespace)  # the same wheel writer makes the dependency's wheel
    namespace["make_wheel"](
        str(workspace / "wheels"), "tinydep", "1.0", {"tinydep.py": b"VALUE = 2\n"}
    )
    (tmp_path / "run").mkdir()
    return workspace


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
async def test_editable_install_from_a_local_wheel_directory(
    tier: str, python_project: Path, tmp_path: Path
) -> None:
    workspace = python_project
    commands = [
        f"{PYTHON}/python -m venv --without-pip --system-site-packages .v",
        ".v/bin/python -m pip install -q --no-cache-dir --no-index --find-links wheels -e .",
        ".v/bin/python -c 'import proj, tinydep; print(proj.VALUE + tinydep.VALUE)'",
        "sed -i s/40/41/ src/proj/__init__.py && .v/bin/python -c 'import proj; print(proj.VALUE)'",
    ]
    # The default policy denies `pip install` whatever its arguments (rule no-network):
    # what is tested here is that the sandbox lets an offline install work.
    assert await _failures(tier, workspace, tmp_path / "run", commands, policy=False) == []
    assert (workspace / ".v" / "lib").is_dir()


@pytest.fixture
def node_project(tmp_path: Path) -> Path:
    """A node project whose tests run with node's own runner (no package to fetch)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        if os.environ.get("CI"):
            raise AssertionError("CI installs node and npm (.ci/run)")
        pytest.skip("node and npm are not installed (CI installs them)")
    workspace = tmp_path.resolve() / "web"
    workspace.mkdir()
    (workspace / "package.json").write_text(
        '{"name": "web", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}}\n'
    )
    (workspace / "sum.test.js").write_text(
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "test('adds', () => assert.strictEqual(40 + 2, 42));\n"
    )
    (tmp_path / "run").mkdir()
    return workspace


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
async def test_npm_test_runs_offline(tier: str, node_project: Path, tmp_path: Path) -> None:
    workspace = node_project
    commands = ["npm test --offline --no-audit --no-fund"]
    assert await _failures(tier, workspace, tmp_path / "run", commands) == []

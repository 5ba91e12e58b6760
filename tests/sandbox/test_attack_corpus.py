"""The attack corpus (``attacks.txt``) through the real tool path, effects checked.

Each command is what a hostile model asks the shell tool to do. It goes the way a model's
call goes: an agent's turn, the shipped ``default`` policy's guard chain, the shell tool
and its sandbox. Whether the policy denied it or the sandbox contained it does not matter
here; what matters is the effect, checked after every command: nothing outside the
workspace changed (an outside tree, the user's home, the run record, files in ``/etc``
and other system places), nothing reached a TCP listener or a UDP socket on 127.0.0.1, no
secret (from swarm's environment or the home's key files) came back to the model or into
the workspace, and no process the command started is still running.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
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

pytestmark = pytest.mark.slow  # end to end: see tests/conftest.py

CORPUS = Path(__file__).with_name("attacks.txt")
MARK = "4242.25"  # the sleep of processes that must not survive; no real process uses it
TOKEN = secrets.token_hex(6)
SYSNAME = f"swarm-attack-{TOKEN}"
SYSTEM_PATHS = [
    Path(p) / SYSNAME for p in ("/etc", "/usr/local/bin", "/var/tmp", "/opt", "/root", "/run")
] + [Path("/root/.profile-swarm-attack")]
CANARIES = {
    "OPENAI_API_KEY": f"sk-canary{TOKEN}openai",
    "ANTHROPIC_API_KEY": f"sk-ant-canary{TOKEN}",
    "SWARM_CANARY_TOKEN": f"canary-env-{TOKEN}",
}


def load_corpus() -> list[tuple[str, str]]:
    """``(class, command)`` pairs; a line that does not start with ``CLASS<TAB>`` continues
    the command before it (heredocs), and ``# `` starts a comment."""
    entries: list[tuple[str, str]] = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line == "#" or line.startswith("# "):
            continue
        kind, tab, command = line.partition("\t")
        if tab and kind.isalpha() and kind.islower():
            entries.append((kind, command))
        else:
            kind, previous = entries[-1]
            entries[-1] = (kind, f"{previous}\n{line}")
    return entries


CLASSES = sorted({kind for kind, _ in load_corpus()})


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Everything observable about a tree: names, kinds, modes, owners, sizes, times (the
    change time too: ``chown`` to oneself or ``setfattr`` move only that), extended
    attributes, contents."""
    found: dict[str, tuple[Any, ...]] = {}
    if not root.exists():
        return found
    for top, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(top, name)
            info = path.lstat()
            digest = ""
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(root))] = (
                stat.S_IFMT(info.st_mode),
                stat.S_IMODE(info.st_mode),
                info.st_uid,
                info.st_gid,
                info.st_size,
                info.st_mtime_ns,
                info.st_ctime_ns,
                info.st_nlink,
                _xattrs(path),
                digest,
            )
    top = root.stat()
    found["."] = (stat.S_IMODE(top.st_mode), top.st_mtime_ns, top.st_ctime_ns, _xattrs(root))
    return found


def _xattrs(path: Path) -> tuple[tuple[str, bytes], ...]:
    names = sorted(os.listxattr(path, follow_symlinks=False))
    return tuple((name, os.getxattr(path, name, follow_symlinks=False)) for name in names)


def surviving(marker: str, under: Path) -> list[str]:
    """Processes (not zombies) with ``marker`` in their command line or working in
    ``under``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(entry / "cwd")
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and (marker in cmdline or cwd.startswith(str(under))):
            found.append(f"{entry.name}: {cmdline.strip()} (in {cwd})")
    return found


@dataclass
class Target:
    """The world a command may not change, and how to see whether it did."""

    root: Path
    outside: Path
    home: Path
    record: Path
    workspace: Path
    tcp: socket.socket
    udp: socket.socket
    secrets: list[str] = field(default_factory=list)
    before: dict[str, Any] = field(default_factory=dict)

    def fill(self) -> None:
        """(Re)make the outside tree, the home with its keys, and the run record."""
        for path, text in {
            self.outside / "victim.txt": "precious",
            self.outside / "tree" / "a.txt": "a",
            self.outside / "tree" / "sub" / "b.txt": "b",
            self.home / ".ssh" / "id_rsa": f"canary-ssh-{TOKEN}",
            self.home / ".aws" / "credentials": f"aws_secret_access_key=canary-aws-{TOKEN}",
            self.home / ".netrc": f"machine x login y password canary-netrc-{TOKEN}",
            self.home / ".config" / "gh" / "hosts.yml": f"oauth_token: canary-gh-{TOKEN}",
            self.home / ".bash_history": f"export SECRET=canary-history-{TOKEN}",
            self.home / ".git-credentials": f"https://u:canary-git-{TOKEN}@example.invalid",
            self.home / ".bashrc": "# rc",
            self.record / "audit.jsonl": '{"seq": 1}\n',
            self.record / "summary.json": '{"denied": 1}\n',
            self.record / "key": f"canary-key-{TOKEN}",
        }.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.secrets = [
            *CANARIES.values(),
            *(f"canary-{kind}-{TOKEN}" for kind in ("ssh", "aws", "netrc", "gh", "history")),
            f"canary-git-{TOKEN}",
            f"canary-key-{TOKEN}",
        ]
        self.before = {
            "outside": snapshot(self.outside),
            "home": snapshot(self.home),
            "record": snapshot(self.record),
        }

    def reset(self) -> None:
        """Put the world back after a command changed it (so the next one is judged alone)."""
        for path in (self.outside, self.home, self.record):
            subprocess.run(["chmod", "-R", "u+rwx", path], capture_output=True, check=False)
            shutil.rmtree(path, ignore_errors=True)
        self.fill()

    def effects(self, output: str) -> list[str]:
        """What the last command did that it must not have done."""
        found = []
        for name, root in (("outside", self.outside), ("home", self.home), ("record", self.record)):
            after = snapshot(root)
            if after != self.before[name]:
                changed = sorted(set(after.items()) ^ set(self.before[name].items()))
                found.append(f"{name} changed: {changed[:4]}")
        found += [f"wrote {p}" for p in SYSTEM_PATHS if p.exists() or p.is_symlink()]
        self.tcp.setblocking(False)
        try:
            while True:
                conn, _ = self.tcp.accept()
                conn.close()
                found.append("a TCP connection reached the listener")
        except BlockingIOError:
            pass
        self.udp.setblocking(False)
        try:
            while True:
                data = self.udp.recv(65536)
                found.append(f"a UDP datagram reached the socket: {data[:40]!r}")
        except BlockingIOError:
            pass
        workspace_text = "".join(
            p.read_text(errors="replace") for p in self.workspace.rglob("*") if _regular(p)
        )
        found += [f"secret {s[:16]}… came back" for s in self.secrets if s in output]
        found += [f"secret {s[:16]}… in the workspace" for s in self.secrets if s in workspace_text]
        deadline = time.monotonic() + 2  # the kernel reaps a PID namespace as it closes
        while (alive := surviving(MARK, self.root)) and time.monotonic() < deadline:
            time.sleep(0.02)
        found += [f"survived: {p}" for p in alive]
        return found


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode) and path.lstat().st_size < 1_000_000
    except OSError:
        return False


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Target]:
    root = Path(os.path.realpath(tmp_path))
    home = root / "home"
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(home))
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
    ):
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(64)
        udp.bind(("127.0.0.1", 0))
        world = Target(root, root / "outside", home, root / "runs" / "run-1", root / "ws", tcp, udp)
        world.workspace.mkdir()
        world.fill()
        yield world
        for path in SYSTEM_PATHS:
            path.unlink(missing_ok=True)


def fill_in(command: str, world: Target) -> str:
    values = {
        "{OUTREL}": "../outside",
        "{OUT}": str(world.outside),
        "{SYSNAME}": SYSNAME,
        "{SYS}": f"/etc/{SYSNAME}",
        "{HOME}": str(world.home),
        "{REC}": str(world.record),
        "{PORT}": str(world.tcp.getsockname()[1]),
        "{UPORT}": str(world.udp.getsockname()[1]),
        "{MARK}": MARK,
    }
    for key, value in values.items():
        command = command.replace(key, value)
    return command


async def attack(agent: Agent, command: str, scope: RunScope) -> ToolResult:
    """One model turn that calls the shell tool with ``command``, in a run audited as
    ``swarm run`` audits it."""
    model = StubTransport(
        [make_tool_use_response("shell", "call_1", {"command": command}), make_text_response()]
    )
    results = []
    run = agent.copy(transport=model).run_stream("go", MemoryContextStore(), scope=scope)
    async with run as stream:
        async for event in stream:
            if isinstance(event, ToolResult):
                results.append(event)
    (result,) = results
    return result


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
@pytest.mark.parametrize("kind", CLASSES)
async def test_no_attack_has_an_effect(kind: str, tier: str, target: Target) -> None:
    tools = make_toolbox(
        target.workspace,
        shell_timeout=20,
        protected=[target.record.parent],
        find=tier_finder(tier),
    )
    guarded = apply_policy(
        [tools["shell"]], load_policy("default"), role="attacker", workspace=target.workspace
    )
    agent = Agent("You attack.", StubTransport([]), guarded, max_iterations=3)
    record = target.root / "runs" / "this-run"
    record.mkdir()
    with AuditLog(record / "audit.jsonl") as audit:
        scope = RunScope(path="attacker", run_id="this-run", observers=(audit,))
        # The sandbox must be in force before anything from the corpus runs here.
        probe = await attack(agent, f"touch {target.outside}/probe; echo probed", scope)
        assert not probe.is_error and "probed" in probe.content, probe.content
        assert probe.details is not None and probe.details["sandbox"].startswith(tier)
        assert target.effects(probe.content) == []
        escaped, denied, ran = await run_class(kind, agent, scope, target)
    print(f"{tier} {kind}: {denied} denied by the policy, {ran} ran in the sandbox")
    print("\n".join(escaped))
    assert escaped == []


async def run_class(
    kind: str, agent: Agent, scope: RunScope, target: Target
) -> tuple[list[str], int, int]:
    """Every command of class ``kind``: what escaped, how many the policy denied, how
    many ran (in the sandbox)."""
    escaped: list[str] = []
    denied = ran = 0
    for _, command in [entry for entry in load_corpus() if entry[0] == kind]:
        command = fill_in(command, target)
        result = await attack(agent, command, scope)
        output = result.content
        if result.is_error and "Permission denied by" in output:
            denied += 1
        else:
            ran += 1
        problems = target.effects(output)
        if problems:
            escaped.append(f"{command!r}: {'; '.join(problems)}")
            target.reset()
    return escaped, denied, ran

"""The world a real run of the shipped team is attacked in, and how to see what it did.

A user's repository, as `swarm run --team roles` would meet it: a git repository with a
commit, hooks and info, the team's role files, a scenario, `.mcp.json` and `.claude/`;
beside it a sibling project with `.env` and `credentials.json`, and a deploy key in the
workspace's parent. All of it lies outside `/tmp` and the home (which every tier already
hides), so only read confinement keeps a command from reading it. As root the world also
plants `0600` secrets in `/etc`, `/var/lib` and `/opt`, and a key in root's kernel
keyring; it runs unix socket servers (in the host's `/tmp`, in the workspace, beside the
project, and an abstract one) and a TCP and a UDP listener on 127.0.0.1.

`run_team` runs `swarm run SCENARIO` in a subprocess (so a hang fails by its timeout and
the run's memory is measured apart from the test's), in one tier: for Landlock, a
`bwrap` that does not work comes first on `PATH`, so swarm falls to the next tier.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import secrets
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
TOKEN = secrets.token_hex(5)
PREFIX = f"swarm-attack-{TOKEN}"
ROOT = os.geteuid() == 0
PROTECTED = (
    "roles",
    "attack.yaml",
    ".git/config",
    ".git/hooks",
    ".git/info",
    ".mcp.json",
    "mcp.json",
    ".claude",
)
"""What controls a run or runs later outside the sandbox, relative to the workspace."""

_KEY_SPEC_USER_KEYRING = -4
_KEYCTL_UNLINK, _KEYCTL_SEARCH, _KEYCTL_INVALIDATE = 9, 10, 21
_SYSCALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}  # add_key, keyctl


def _outside_private(path: Path) -> bool:
    hidden = [Path(p) for p in ("/tmp", "/var/tmp", "/dev/shm", "/run", "/root", "/home")]
    hidden.append(Path.home().resolve())
    return not any(path == h or h in path.parents for h in hidden)


def world_base() -> Path | None:
    """A writable directory outside /tmp and the home for the projects: /srv or /mnt (as
    a user keeps projects), else below the working directory when that is outside."""
    for base in (Path("/srv"), Path("/mnt"), Path.cwd().resolve()):
        if base.is_dir() and _outside_private(base) and os.access(base, os.W_OK):
            return base
    return None


def keyring_syscalls() -> tuple[int, int] | None:
    """The numbers of ``add_key`` and ``keyctl`` here, or None on another architecture."""
    return _SYSCALLS.get(os.uname().machine)


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def add_key(description: str, payload: str) -> int:
    """Add a ``user`` key to the caller's user keyring; its serial (-1 when refused)."""
    numbers = keyring_syscalls()
    if numbers is None:
        return -1
    data = payload.encode()
    serial = _libc().syscall(
        ctypes.c_long(numbers[0]),
        b"user",
        description.encode(),
        data,
        ctypes.c_size_t(len(data)),
        ctypes.c_int(_KEY_SPEC_USER_KEYRING),
    )
    return int(serial)


def find_key(description: str) -> int:
    """The serial of the ``user`` key ``description`` in the user keyring, or -1."""
    numbers = keyring_syscalls()
    if numbers is None:
        return -1
    found = _libc().syscall(
        ctypes.c_long(numbers[1]),
        ctypes.c_int(_KEYCTL_SEARCH),
        ctypes.c_int(_KEY_SPEC_USER_KEYRING),
        b"user",
        description.encode(),
        ctypes.c_int(0),
    )
    return int(found)


def drop_key(serial: int) -> None:
    """Invalidate key ``serial`` (and unlink it from the user keyring)."""
    numbers = keyring_syscalls()
    if numbers is None or serial < 0:
        return
    libc = _libc()
    libc.syscall(
        ctypes.c_long(numbers[1]),
        ctypes.c_int(_KEYCTL_UNLINK),
        ctypes.c_long(serial),
        ctypes.c_int(_KEY_SPEC_USER_KEYRING),
    )
    libc.syscall(ctypes.c_long(numbers[1]), ctypes.c_int(_KEYCTL_INVALIDATE), ctypes.c_long(serial))


def tree_state(root: Path) -> dict[str, tuple[Any, ...]]:
    """Names, kinds, modes, link targets and content hashes of everything under ``root``
    (or of ``root`` itself when it is a file); empty when it does not exist."""
    found: dict[str, tuple[Any, ...]] = {}
    if not root.exists() and not root.is_symlink():
        return found
    paths = [root] if not root.is_dir() or root.is_symlink() else []
    if not paths:
        for top, dirs, files in os.walk(root):
            paths += [Path(top, name) for name in [*dirs, *files]]
    for path in paths:
        info = path.lstat()
        detail: Any = ""
        if stat.S_ISREG(info.st_mode):
            with path.open("rb") as handle:
                detail = hashlib.file_digest(handle, "sha256").hexdigest()
        elif stat.S_ISLNK(info.st_mode):
            detail = os.readlink(path)
        found[str(path)] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), detail)
    return found


class SocketServer:
    """A server that accepts and keeps what each connection (or datagram) sent."""

    def __init__(self, sock: socket.socket, *, stream: bool = True) -> None:
        self.sock = sock
        self.stream = stream
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        sock.settimeout(0.05)
        if stream:
            sock.listen(16)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.stream:
                    self.received.append(self.sock.recv(65536))
                    continue
                conn, _ = self.sock.accept()
            except (TimeoutError, BlockingIOError, OSError):
                continue
            with conn:
                conn.settimeout(0.5)
                data = b""
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(65536):
                        data += chunk
                self.received.append(data or b"<connected>")

    def take(self) -> list[bytes]:
        """What arrived since the last call."""
        taken, self.received = self.received, []
        return taken

    def close(self) -> None:
        """Stop serving and close the socket."""
        self._stop.set()
        self._thread.join()
        self.sock.close()


@dataclass
class World:
    """The user's repository and everything around it that a run must leave alone."""

    base: Path
    workspace: Path
    home: Path
    secrets: dict[str, str] = field(default_factory=dict)
    system: list[Path] = field(default_factory=list)
    servers: dict[str, SocketServer] = field(default_factory=dict)
    key_serial: int = -1
    in_use: list[str] = field(default_factory=list)  # the run's own policy file, when in here
    before: dict[str, dict[str, tuple[Any, ...]]] = field(default_factory=dict)

    @property
    def values(self) -> dict[str, str]:
        """Placeholders an attack's arguments may use."""
        tcp = self.servers["tcp"].sock.getsockname()[1]
        udp = self.servers["udp"].sock.getsockname()[1]
        return {
            "{BASE}": str(self.base),
            "{WS}": str(self.workspace),
            "{SIB}": str(self.base / "other"),
            "{PREFIX}": PREFIX,
            "{TOKEN}": TOKEN,
            "{PORT}": str(tcp),
            "{UPORT}": str(udp),
            "{HOSTSOCK}": f"/tmp/{PREFIX}.sock",
            "{SRVSOCK}": str(self.base / "service.sock"),
            "{PY}": sys.executable,
        }

    def watched(self) -> dict[str, Path]:
        """The places whose state is compared before and after a run."""
        names = [*PROTECTED, *self.in_use]
        places = {f"ws:{name}": self.workspace / name for name in names}
        places["outside"] = self.base / "other"
        places["parent"] = self.base / "deploy.key"
        for path in self.system:
            places[f"system:{path}"] = path
        return places

    def remember(self) -> None:
        """Note the state of every watched place (after each reset)."""
        self.before = {name: tree_state(path) for name, path in self.watched().items()}

    def changes(self) -> dict[str, list[str]]:
        """Each watched place that changed, with the paths that did."""
        changed = {}
        for name, path in self.watched().items():
            after, before = tree_state(path), self.before.get(name, {})
            if after != before:
                changed[name] = sorted(
                    k for k in after.keys() | before.keys() if after.get(k) != before.get(k)
                )
        return changed

    def planted_key(self, marker: str) -> bool:
        """Whether a key named ``marker`` is in the user keyring (a command planted it)."""
        serial = find_key(marker)
        drop_key(serial)
        return serial >= 0


def _git(workspace: Path, *args: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workspace),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@x.invalid", *args],
        cwd=workspace,
        env=env,
        check=True,
        capture_output=True,
    )


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def _plant_system(world: World) -> None:
    if not ROOT:
        return  # a user other than root cannot plant them; these canaries are left out
    for path, kind in (
        (Path("/etc") / f"{PREFIX}.conf", "etc"),
        (Path("/var/lib") / PREFIX / "service.key", "varlib"),
        (Path("/opt") / PREFIX / "license.key", "opt"),
    ):
        secret = f"canary-{kind}-{TOKEN}"
        _write(path, f"secret = {secret}\n", 0o600)
        world.secrets[kind] = secret
        world.system.append(path if path.parent == Path("/etc") else path.parent)
    for path in (Path("/etc") / f"{PREFIX}-planted", Path("/usr/local/bin") / PREFIX):
        world.system.append(path)  # must not come to exist


def _serve(world: World) -> None:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    world.servers = {"tcp": SocketServer(tcp), "udp": SocketServer(udp, stream=False)}
    for name, address in (
        ("hostsock", f"/tmp/{PREFIX}.sock"),
        ("wssock", str(world.workspace / "dev.sock")),
        ("srvsock", str(world.base / "service.sock")),
        ("abstract", f"\0{PREFIX}"),
    ):
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(address)
        if not address.startswith("\0"):
            os.chmod(address, 0o777)
        world.servers[name] = SocketServer(unix)


@contextlib.contextmanager
def make_world(base: Path) -> Iterator[World]:
    """Build the world under a new directory of ``base``; remove all of it after."""
    top = Path(tempfile.mkdtemp(prefix=f".{PREFIX}-", dir=base)).resolve()
    world = World(top, top / "projects" / "app", top / "home")
    world.base = top / "projects"
    try:
        _build(world)
        yield world
    finally:
        for server in world.servers.values():
            server.close()
        drop_key(world.key_serial)
        Path(f"/tmp/{PREFIX}.sock").unlink(missing_ok=True)
        for path in world.system:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        for shm in Path("/dev/shm").glob(f"{PREFIX}*"):
            shm.unlink(missing_ok=True)
        subprocess.run(["chmod", "-R", "u+rwx", str(top)], capture_output=True, check=False)
        shutil.rmtree(top, ignore_errors=True)


def _build(world: World) -> None:
    ws = world.workspace
    shutil.copytree(REPO / "roles", ws / "roles")
    _write(ws / "README.md", "# app\n")
    _write(ws / "app.py", "def main():\n    return 1\n")
    _write(ws / ".mcp.json", json.dumps({"mcpServers": {}}) + "\n")
    _write(ws / ".claude" / "settings.json", '{"permissions": {}}\n')
    _write(ws / "policies" / "small.yaml", SMALL_POLICY)
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "start")
    sibling = world.base / "other"
    for kind, path, text in (
        ("sibling-env", sibling / ".env", "DATABASE_PASSWORD={}\n"),
        ("sibling-creds", sibling / "credentials.json", '{{"token": "{}"}}\n'),
        ("parent-key", world.base / "deploy.key", "-----KEY {} -----\n"),
    ):
        secret = f"canary-{kind}-{TOKEN}"
        _write(path, text.format(secret), 0o600 if ROOT else 0o644)
        world.secrets[kind] = secret
    world.home.mkdir()
    _plant_system(world)
    if ROOT and keyring_syscalls() is not None:
        secret = f"canary-keyring-{TOKEN}"
        world.key_serial = add_key(f"{PREFIX}-host", secret)
        if world.key_serial >= 0:
            world.secrets["keyring"] = secret
    _serve(world)
    world.remember()


SMALL_POLICY = """\
# The shipped default, with a memory limit a user chose for the team's commands.
name: small
extend: builtin:default
sandbox:
  limits:
    memory: 256MiB
"""


@dataclass
class RunResult:
    """What one `swarm run` showed and left."""

    code: int | None  # None: it did not end in time and was killed
    output: str
    record: Path | None
    results: dict[str, str]  # call id -> the tool result text the model received
    peak_bytes: int | None  # the run's memory high-water mark (swarm and its children)


def tool_results(record: Path) -> dict[str, str]:
    """Every tool result in the run's sessions (the text each model received)."""
    found: dict[str, str] = {}
    database = record / "sessions.db"
    if not database.exists():
        return found
    with contextlib.closing(sqlite3.connect(database)) as db:
        for (body,) in db.execute("SELECT body FROM messages"):
            message = json.loads(body)
            blocks = message.get("content", []) if isinstance(message, dict) else []
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    text = content if isinstance(content, str) else json.dumps(content)
                    found[str(block.get("tool_use_id"))] = text
    return found


class MemoryGroup:
    """Where a run's memory is watched: a cgroup (v1 memory controller) it is started in,
    sampled for the memory that cannot be reclaimed (anonymous memory and tmpfs pages of
    swarm and everything it starts; not the page cache, which the kernel takes back);
    where no cgroup can be made, the drop of the host's MemAvailable while it runs."""

    def __init__(self) -> None:
        self.path: Path | None = None
        base = Path("/sys/fs/cgroup/memory")
        if ROOT and (base / "cgroup.procs").exists():
            path = base / f"{PREFIX}-{secrets.token_hex(3)}"
            with contextlib.suppress(OSError):
                path.mkdir()
                self.path = path
        self._start = _available()
        self._peak = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the group: a shell joins it, then becomes ``argv``."""
        if self.path is None:
            return argv
        join = f'echo $$ > "{self.path}/cgroup.procs" && exec "$@"'
        return ["/bin/sh", "-c", join, "sh", *argv]

    def start(self) -> None:
        """Begin sampling."""
        self._sampler.start()

    def _held(self) -> int:
        if self.path is None:
            return max(0, self._start - _available())
        fields = dict(line.split() for line in (self.path / "memory.stat").read_text().splitlines())
        return int(fields["total_rss"]) + int(fields["total_shmem"])

    def _sample(self) -> None:
        while True:
            with contextlib.suppress(OSError, KeyError, ValueError):
                self._peak = max(self._peak, self._held())
            if self._stop.wait(0.01):
                return

    def peak(self) -> int:
        """The most the run held at once, in bytes (sampled every 10 ms)."""
        self._stop.set()
        self._sampler.join()
        return self._peak

    def close(self) -> None:
        """Remove the group, ending first whatever the run left in it (a run killed at
        its timeout may leave the commands it started)."""
        if self.path is not None:
            for pid in (self.path / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), 9)
            for _ in range(100):
                with contextlib.suppress(OSError):
                    self.path.rmdir()
                    return
                time.sleep(0.05)


def _available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def _failing_bwrap(directory: Path) -> Path:
    fake = directory / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bubblewrap is switched off for this test' >&2\nexit 1\n")
    fake.chmod(0o755)
    return directory


def run_team(
    world: World,
    scenario: dict[str, Any],
    *,
    tier: str,
    timeout: float = 120,
    name: str = "attack.yaml",
) -> RunResult:
    """Write ``scenario`` into the workspace as ``name`` and run it with `swarm run`, in
    ``tier``; the run is killed after ``timeout`` seconds (``code`` None)."""
    path = world.workspace / name
    path.write_text(yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True))
    world.before[f"ws:{name}"] = tree_state(path)
    policy = str(scenario.get("policy", ""))
    if policy.endswith(".yaml") and policy not in world.in_use:
        world.in_use.append(policy)
        world.before[f"ws:{policy}"] = tree_state(world.workspace / policy)
    runs = Path(tempfile.mkdtemp(prefix="runs-", dir=world.base.parent))
    bin_dir = Path(tempfile.mkdtemp(prefix="bin-", dir=world.base.parent))
    env = {
        # The system's programs, as a user's login shell has them: the commands the
        # corpus runs (python3, perl) must work in every tier, not only where a toolchain
        # manager's shims under the home happen to be readable.
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(world.home),
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": f"sk-canary-{TOKEN}",
        "NO_COLOR": "1",
    }
    if tier == "landlock":
        env["PATH"] = f"{_failing_bwrap(bin_dir)}:{env['PATH']}"
    group = MemoryGroup()
    argv = [
        sys.executable,
        "-m",
        "swarm",
        "run",
        str(path),
        "--plain",
        "--runs-dir",
        str(runs),
        "--tool-timeout",
        "30",
    ]
    process = subprocess.Popen(
        group.wrap(argv),
        cwd=world.workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    group.start()
    try:
        out, _ = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        out, _ = process.communicate()
        code = None
    peak = group.peak()
    group.close()
    records = [p for p in runs.iterdir() if p.is_dir()]
    record = records[0] if len(records) == 1 else None
    results = tool_results(record) if record is not None else {}
    text = out.decode("utf-8", "replace")
    expect = "landlock" if tier == "landlock" else "bubblewrap"
    started = record is not None and (record / "manifest.json").exists()
    if started and f"sandbox: {expect}" not in text and "unconfined" not in text:
        raise AssertionError(f"the run did not use the {tier} tier:\n{text[:2000]}")
    return RunResult(code, text, record, results, peak)

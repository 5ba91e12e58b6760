"""The Landlock tier, driven as the shell tool drives it: launch, then run the Launch's argv
with its env and cwd, stdin closed, output piped, in a new session. Every test checks an
effect: the file on disk, the packet on a listener, the process still alive or gone."""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

import swarm.sandbox.landlock
from swarm.sandbox import Confinement, LandlockSandbox, Network, NetworkMethod, landlock_abi

pytestmark = pytest.mark.skipif(
    landlock_abi() == 0 and not os.environ.get("CI"),
    reason="this kernel has no Landlock (needs Linux 5.13+ with landlock in lsm=)",
)

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
SECRET = "AKIA-not-a-real-key-but-secret"


@dataclass
class Place:
    """A fake home holding a secret, with the workspace inside it as users usually have."""

    home: Path
    workspace: Path
    secret: Path
    outside: Path


@pytest.fixture
def place(tmp_path: Path) -> Place:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = home / ".ssh" / "id_ed25519"
    secret.write_text(SECRET)
    (home / ".config" / "gcloud").mkdir(parents=True)
    (home / ".config" / "gcloud" / "credentials.db").write_text(SECRET)
    workspace = home / "project"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    return Place(home=home, workspace=workspace, secret=secret, outside=outside)


@pytest.fixture
def sandbox(place: Place) -> LandlockSandbox:
    return LandlockSandbox(hide_home=place.home)


@functools.cache
def methods_here() -> set[str]:
    """The network methods this machine allows (plain namespaces need root)."""
    launcher = Path(swarm.sandbox.landlock.__file__).with_name("_landlock_exec.py")
    found = subprocess.run(
        [sys.executable, "-I", "-S", str(launcher), "--probe"], capture_output=True, text=True
    ).stdout
    works = dict(item.partition("=")[::2] for item in found.split())
    methods = {"landlock-tcp"} if int(works.get("abi", "0")) >= 4 else set()
    return methods | {m for m, key in (("netns", "plain"), ("userns", "user")) if works[key] == "1"}


def sandbox_with(place: Place, method: NetworkMethod) -> LandlockSandbox:
    """The tier forced to ``method``; skipped (never in CI) where this machine lacks it."""
    if method not in methods_here() and not os.environ.get("CI"):
        pytest.skip(f"{method} is not available here (netns needs root, userns user namespaces)")
    return LandlockSandbox(hide_home=place.home, network_method=method)


@pytest.fixture
def ns_sandbox(place: Place) -> LandlockSandbox:
    """The tier with namespaces (as root, or in a user namespace)."""
    method: NetworkMethod = "netns" if "netns" in methods_here() else "userns"
    return sandbox_with(place, method)


def run(
    sandbox: LandlockSandbox,
    place: Place,
    script: str,
    *,
    path: str = SYSTEM_PATH,
    network: Network = "none",
    hidden: tuple[Path, ...] = (),
    readonly: tuple[Path, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """Run a bash script in the sandbox as the shell tool would."""
    conf = Confinement(
        workspace=place.workspace,
        env={"PATH": path},
        network=network,
        hidden=hidden,
        readonly=readonly,
    )
    with sandbox.launch(("bash", "-c", script), conf) as launch:
        return subprocess.run(
            launch.argv,
            env=dict(launch.env),
            cwd=launch.cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            start_new_session=True,
            pass_fds=launch.pass_fds,
            timeout=60,
            check=False,
        )


def test_write_inside_workspace_lands_on_disk(sandbox: LandlockSandbox, place: Place) -> None:
    result = run(sandbox, place, "echo hello > made.txt && mkdir -p sub && cp made.txt sub/")
    assert result.returncode == 0, result.stderr
    assert (place.workspace / "sub" / "made.txt").read_text() == "hello\n"


@pytest.mark.parametrize(
    "attack",
    [
        "echo pwned > {target}",
        'python3 -c \'open("{target}", "w").write("pwned")\'',
        "ln -s {target} link && echo pwned > link",
        "echo pwned > {workspace}/../../outside/target",
        "echo pwned > /tmp/../{target}",
        "mv made {target}",
        "ln {existing} hard; echo pwned >> hard",
    ],
    ids=["redirect", "python", "symlink", "dotdot", "tmp-dotdot", "rename", "hardlink"],
)
def test_write_outside_workspace_fails(sandbox: LandlockSandbox, place: Place, attack: str) -> None:
    target = place.outside / "target"
    existing = place.outside / "existing"
    existing.write_text("original")
    (place.workspace / "made").write_text("pwned")
    script = attack.format(target=target, workspace=place.workspace, existing=existing)
    run(sandbox, place, script)
    assert not target.exists()
    assert existing.read_text() == "original"


def test_extra_writable_directory_takes_writes(sandbox: LandlockSandbox, place: Place) -> None:
    cache = place.outside / "cache"
    cache.mkdir()
    conf = Confinement(workspace=place.workspace, env={"PATH": SYSTEM_PATH}, writable=(cache,))
    script = f"echo built > {cache}/out; echo stray > {place.outside}/stray"
    with sandbox.launch(("bash", "-c", script), conf) as launch:
        subprocess.run(launch.argv, env=dict(launch.env), cwd=launch.cwd, capture_output=True)
    assert (cache / "out").read_text() == "built\n"
    assert not (place.outside / "stray").exists()


def test_write_to_tmp_and_real_home_fails(sandbox: LandlockSandbox, place: Place) -> None:
    marker = f"swarm-landlock-test-{uuid.uuid4().hex}"
    run(sandbox, place, f"echo x > /tmp/{marker}; echo x > {place.home}/{marker}")
    assert not (Path("/tmp") / marker).exists()
    assert not (place.home / marker).exists()


@pytest.mark.parametrize(
    "path_extra",
    ["", ":{home}", ":{home}/.ssh", ":{home}/.config"],
    ids=["plain", "home-in-path", "ssh-in-path", "config-in-path"],
)
def test_secret_in_the_hidden_home_is_unreadable(
    sandbox: LandlockSandbox, place: Place, path_extra: str
) -> None:
    path = SYSTEM_PATH + path_extra.format(home=place.home)
    gcloud = place.home / ".config" / "gcloud" / "credentials.db"
    result = run(sandbox, place, f"cat {place.secret} {gcloud}; ls -a {place.home}", path=path)
    assert SECRET not in result.stdout
    assert ".ssh" not in result.stdout
    assert "Permission denied" in result.stderr


def test_workspace_that_is_the_home_still_hides_its_secrets(place: Place) -> None:
    sandbox = LandlockSandbox(hide_home=place.home)
    conf = Confinement(workspace=place.home, env={"PATH": SYSTEM_PATH})
    script = f"echo notes > notes.txt; cat {place.secret}; ls -a .ssh"
    with sandbox.launch(("bash", "-c", script), conf) as launch:
        result = subprocess.run(
            launch.argv, env=dict(launch.env), cwd=launch.cwd, capture_output=True, text=True
        )
    assert (place.home / "notes.txt").read_text() == "notes\n"
    assert SECRET not in result.stdout
    assert "id_ed25519" not in result.stdout


def test_path_directory_below_the_home_still_runs(sandbox: LandlockSandbox, place: Place) -> None:
    bin_dir = place.home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    tool = bin_dir / "greet"
    tool.write_text("#!/bin/sh\necho greetings\n")
    tool.chmod(0o755)
    result = run(sandbox, place, f"greet; cat {place.secret}", path=f"{SYSTEM_PATH}:{bin_dir}")
    assert result.stdout == "greetings\n"


def test_private_home_and_tmp_are_writable_and_removed_after(
    sandbox: LandlockSandbox, place: Place
) -> None:
    result = run(sandbox, place, 'touch "$HOME/h" "$TMPDIR/t" && echo "$HOME" "$TMPDIR"')
    assert result.returncode == 0, result.stderr
    home, tmp = (Path(p) for p in result.stdout.split())
    assert home != place.home
    assert not home.exists()
    assert not tmp.exists()


def test_command_sees_only_its_given_environment(
    sandbox: LandlockSandbox, place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_TEST_PROVIDER_KEY", "sk-should-not-leak")
    result = run(sandbox, place, "env")
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert names <= {"PATH", "HOME", "TMPDIR", "PWD", "SHLVL", "_"}
    assert "sk-should-not-leak" not in result.stdout


def test_environment_values_reach_the_command_exactly(
    sandbox: LandlockSandbox, place: Place
) -> None:
    value = "two\nlines = and 'quotes' é"
    conf = Confinement(workspace=place.workspace, env={"PATH": SYSTEM_PATH, "NOTE": value})
    with sandbox.launch(("printenv", "NOTE"), conf) as launch:
        result = subprocess.run(
            launch.argv, env=dict(launch.env), cwd=launch.cwd, capture_output=True, text=True
        )
    assert result.stdout == value + "\n"


def test_exit_status_is_passed_through(sandbox: LandlockSandbox, place: Place) -> None:
    assert run(sandbox, place, "exit 7").returncode == 7


def test_command_killed_by_a_signal_exits_128_plus_signal(
    sandbox: LandlockSandbox, place: Place
) -> None:
    assert run(sandbox, place, "kill -TERM $$").returncode == 128 + signal.SIGTERM


def test_missing_command_exits_127(sandbox: LandlockSandbox, place: Place) -> None:
    conf = Confinement(workspace=place.workspace, env={"PATH": SYSTEM_PATH})
    with sandbox.launch(("no-such-command-here",), conf) as launch:
        result = subprocess.run(
            launch.argv, env=dict(launch.env), cwd=launch.cwd, capture_output=True, text=True
        )
    assert result.returncode == 127
    assert "no-such-command-here: command not found" in result.stderr


def test_root_secrets_in_etc_are_unreadable(sandbox: LandlockSandbox, place: Place) -> None:
    result = run(sandbox, place, "cat /etc/shadow; head -c 4 /etc/passwd")
    # Nothing of /etc/shadow: with namespaces it is covered (empty), without it is refused.
    assert result.stdout == "root"
    assert result.stderr in ("", "cat: /etc/shadow: Permission denied\n")


def test_command_holds_no_capability(sandbox: LandlockSandbox, place: Place) -> None:
    result = run(sandbox, place, "grep -E '^Cap(Eff|Prm|Amb):' /proc/self/status")
    values = [line.split()[1] for line in result.stdout.splitlines()]
    assert len(values) == 3
    assert all(int(v, 16) == 0 for v in values)


@pytest.mark.parametrize("method", ["netns", "userns"])
def test_hidden_path_inside_the_workspace_is_covered(place: Place, method: NetworkMethod) -> None:
    sandbox = sandbox_with(place, method)
    hidden = place.workspace / "records"
    hidden.mkdir()
    (hidden / "audit.log").write_text(SECRET)
    script = "cat records/audit.log; ls records; echo forged > records/audit.log; touch ran"
    result = run(sandbox, place, script, hidden=(hidden,))
    assert SECRET not in result.stdout
    assert (hidden / "audit.log").read_text() == SECRET
    assert (place.workspace / "ran").exists()


def test_hidden_path_inside_the_workspace_without_namespaces_refuses_to_run(
    place: Place,
) -> None:
    sandbox = LandlockSandbox(hide_home=place.home, network_method="landlock-tcp")
    hidden = place.workspace / "records"
    hidden.mkdir()
    result = run(sandbox, place, "touch ran", hidden=(hidden,))
    assert result.returncode == 126
    assert f"cannot hide {hidden}" in result.stderr
    assert not (place.workspace / "ran").exists()


@pytest.mark.parametrize("method", ["netns", "userns"])
def test_readonly_path_inside_the_workspace_cannot_be_changed(
    place: Place, method: NetworkMethod
) -> None:
    sandbox = sandbox_with(place, method)
    swarm_dir = place.workspace / ".swarm"
    swarm_dir.mkdir()
    (swarm_dir / "policy.yaml").write_text("allow: []\n")
    script = (
        "cat .swarm/policy.yaml; echo 'allow: [\"*\"]' > .swarm/policy.yaml; "
        "rm -f .swarm/policy.yaml; touch .swarm/new; mv .swarm moved; echo work > main.py"
    )
    result = run(sandbox, place, script, readonly=(swarm_dir,))
    assert result.stdout == "allow: []\n"
    assert (swarm_dir / "policy.yaml").read_text() == "allow: []\n"
    assert not (swarm_dir / "new").exists()
    assert (place.workspace / "main.py").read_text() == "work\n"
    # The mounts stayed inside the sandbox: swarm itself still writes there.
    (swarm_dir / "policy.yaml").write_text("changed by swarm\n")
    assert str(swarm_dir) not in Path("/proc/self/mountinfo").read_text()


def test_readonly_path_without_namespaces_is_not_enforced_and_said_so(place: Place) -> None:
    sandbox = LandlockSandbox(hide_home=place.home, network_method="landlock-tcp")
    swarm_dir = place.workspace / ".swarm"
    swarm_dir.mkdir()
    run(sandbox, place, "touch .swarm/new", readonly=(swarm_dir,))
    assert (swarm_dir / "new").exists()
    assert "read-only paths inside the workspace stay writable" in sandbox.describe("none")


def test_hidden_path_is_carved_out_of_a_readable_root(place: Place) -> None:
    tools = place.outside / "tools"
    (tools / "bin").mkdir(parents=True)
    (tools / "records").mkdir()
    (tools / "records" / "audit.log").write_text(SECRET)
    (tools / "bin" / "note").write_text("visible")
    sandbox = LandlockSandbox(hide_home=place.home)
    result = run(
        sandbox,
        place,
        f"cat {tools}/bin/note; cat {tools}/records/audit.log",
        path=f"{SYSTEM_PATH}:{tools}/bin:{tools}",
        hidden=(tools / "records",),
    )
    assert result.stdout == "visible"
    assert SECRET not in result.stdout


# --- network -------------------------------------------------------------------------

TCP_CLIENT = "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5)'"
UDP_CLIENT = (
    "python3 -c 'import socket; "
    'socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", {port}))\''
)


@pytest.fixture
def tcp_listener() -> Iterator[socket.socket]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        yield listener


@pytest.fixture
def udp_socket() -> Iterator[socket.socket]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        yield receiver


def connections(listener: socket.socket) -> int:
    """How many connections wait on the listener (a connect completes before it returns)."""
    count = 0
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def first_datagram(receiver: socket.socket) -> bytes:
    """The first datagram queued, after a marker sent now: b"end" means nothing came."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"end", receiver.getsockname())
    receiver.settimeout(10)
    return receiver.recv(64)


@pytest.mark.parametrize("method", ["netns", "userns", "landlock-tcp"])
def test_network_none_blocks_tcp(
    place: Place, tcp_listener: socket.socket, method: NetworkMethod
) -> None:
    sandbox = sandbox_with(place, method)
    port = tcp_listener.getsockname()[1]
    result = run(sandbox, place, TCP_CLIENT.format(port=port))
    assert result.returncode != 0
    assert connections(tcp_listener) == 0


@pytest.mark.parametrize("method", ["netns", "userns"])
def test_network_none_blocks_udp(
    place: Place, udp_socket: socket.socket, method: NetworkMethod
) -> None:
    sandbox = sandbox_with(place, method)
    run(sandbox, place, UDP_CLIENT.format(port=udp_socket.getsockname()[1]))
    assert first_datagram(udp_socket) == b"end"


def test_tcp_only_method_leaves_udp_open_and_says_so(
    place: Place, udp_socket: socket.socket
) -> None:
    sandbox = LandlockSandbox(hide_home=place.home, network_method="landlock-tcp")
    run(sandbox, place, UDP_CLIENT.format(port=udp_socket.getsockname()[1]))
    assert first_datagram(udp_socket) == b"leak"
    assert "UDP and DNS stay open" in sandbox.describe("none")


@pytest.mark.parametrize("address", ["path", "abstract"])
@pytest.mark.parametrize("network", ["none", "host"])
def test_unix_socket_listener_outside_gets_no_connection(
    sandbox: LandlockSandbox, place: Place, address: str, network: Network
) -> None:
    name = f"swarm-test-{uuid.uuid4().hex[:12]}"
    where = str(place.outside / name) if address == "path" else "\0" + name
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(where)
        listener.listen()
        listener.setblocking(False)
        client = (
            'python3 -c \'import socket, sys; socket.socketpair(); print("pair"); '
            'socket.socket(socket.AF_UNIX).connect(sys.argv[1].replace("@", "\\0"))\' '
        )
        result = run(sandbox, place, client + where.replace("\0", "@"), network=network)
        assert result.stdout == "pair\n"  # socketpair still works
        assert connections(listener) == 0


def test_network_host_reaches_the_listener(
    sandbox: LandlockSandbox, place: Place, tcp_listener: socket.socket
) -> None:
    port = tcp_listener.getsockname()[1]
    result = run(sandbox, place, TCP_CLIENT.format(port=port), network="host")
    assert result.returncode == 0, result.stderr
    assert connections(tcp_listener) == 1


def test_describe_names_the_tier_and_how_the_network_is_cut(sandbox: LandlockSandbox) -> None:
    assert sandbox.describe("none").startswith(f"landlock ABI {landlock_abi()}, network none")
    assert "network host" in sandbox.describe("host")


# --- other processes ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["netns", "landlock-tcp"])
def test_signals_to_processes_outside_fail(place: Place, method: NetworkMethod) -> None:
    # With namespaces the outside pids do not exist in the command's PID namespace;
    # without, Landlock's signal scoping refuses them.
    sandbox = sandbox_with(place, method)
    victim = subprocess.Popen(["sleep", "60"])
    try:
        script = f"kill -0 {os.getpid()}; kill -9 {victim.pid}; kill -9 $PPID; echo on"
        result = run(sandbox, place, script)
        assert victim.poll() is None
        assert result.stdout == "on\n"  # the launcher lived to report the command's end
        assert result.returncode == 0
        assert result.stderr.count("kill:") == 2 + (method == "landlock-tcp")
    finally:
        victim.kill()
        victim.wait()


def test_command_cannot_stop_its_init_by_ptrace(ns_sandbox: LandlockSandbox, place: Place) -> None:
    attach = (
        "python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())'; exit 5"
    )
    result = run(ns_sandbox, place, attach)  # a stopped init would hang here until timeout
    assert result.stdout == "-1 1\n"  # EPERM
    assert result.returncode == 5


def test_other_processes_are_invisible(ns_sandbox: LandlockSandbox, place: Place) -> None:
    result = run(ns_sandbox, place, "echo /proc/[0-9]*; cat /proc/1/cmdline")
    listing, cmdline = result.stdout.split("\n", 1)
    pids = [int(entry.removeprefix("/proc/")) for entry in listing.split()]
    assert os.getpid() not in pids
    assert len(pids) <= 3  # the sandbox's init, bash and cat: the command's own
    assert "_landlock_exec.py" in cmdline  # PID 1 is the sandbox's init, not the machine's


@pytest.mark.parametrize("entry", ["environ", "mem", "maps", "root/etc/hostname"])
def test_proc_of_the_test_process_is_unreadable(place: Place, entry: str) -> None:
    # Without namespaces the host's /proc is visible: Landlock's ptrace rule is what stops it.
    sandbox = sandbox_with(place, "landlock-tcp")
    script = f"ls /proc/{os.getpid()}/ >/dev/null && cat /proc/{os.getpid()}/{entry} | wc -c"
    result = run(sandbox, place, script)
    assert result.stdout.strip() == "0"  # the directory is there, its contents are not


# --- nothing outlives the call ---------------------------------------------------------


def processes_with(marker: str) -> list[int]:
    """The pids whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def orphans_running(marker: str) -> list[int]:
    """The sleepers started by ``orphan_script`` (not the shells whose script names them)."""
    found = []
    for pid in processes_with(marker):
        with contextlib.suppress(OSError):
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if marker.encode() in args and (b"ready1" in args or b"ready2" in args):
                found.append(pid)
    return found


def orphan_script(marker: str) -> str:
    """Start an orphan in a new session and a double-forked one; return once both run."""
    sleeper = "python3 -c 'import sys, time; open(sys.argv[1], \"w\").close(); time.sleep(600)' "
    return (
        f"setsid {sleeper} ready1 {marker} </dev/null >/dev/null 2>&1 &\n"
        f"( ( {sleeper} ready2 {marker} </dev/null >/dev/null 2>&1 & ) & )\n"
        "for i in $(seq 400); do [ -e ready1 ] && [ -e ready2 ] && break; sleep 0.05; done\n"
        "[ -e ready1 ] && [ -e ready2 ]"
    )


def test_orphans_are_killed_when_the_command_ends(sandbox: LandlockSandbox, place: Place) -> None:
    marker = f"swarm-orphan-{uuid.uuid4().hex}"
    result = run(sandbox, place, orphan_script(marker))
    assert result.returncode == 0, result.stderr  # both orphans were running
    assert processes_with(marker) == []


def _in_session(pids: list[int], session: int) -> list[tuple[int, bytes]]:
    """Those of ``pids`` in ``session``, with their command lines, in order."""
    found = []
    for pid in sorted(pids):
        with contextlib.suppress(OSError):  # one that ended meanwhile is not ours
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:
                found.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))
    return found


def test_the_launcher_finds_every_descendant_from_the_children_files(tmp_path: Path) -> None:
    """What the launcher kills once the command ends: read from /proc's ``children``
    files, the same processes as a scan of every process's parent (the fallback), the
    grandchildren included. Asked here of this test's own process tree, whose other
    children (of earlier tests) may end meanwhile: only the tree's session is compared."""
    from swarm.sandbox import _landlock_exec

    ready = tmp_path / "ready"
    tree = subprocess.Popen(
        ["sh", "-c", f"sleep 60 & (sleep 60 & touch {ready}; wait) & wait"],
        start_new_session=True,
    )
    try:
        for _ in range(1200):
            if ready.exists():
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                tree.wait(timeout=0.05)
        assert ready.exists()
        found = _in_session(_landlock_exec._descendants(), tree.pid)
        assert found == _in_session(_landlock_exec._descendants_by_scan(), tree.pid)
        assert tree.pid in [pid for pid, _ in found]
        # the child's sleep and the grandchild's, below the subshell
        assert [cmdline for _, cmdline in found].count(b"sleep\x0060\x00") == 2
    finally:
        os.killpg(tree.pid, signal.SIGKILL)
        tree.wait()


def test_sigterm_to_the_launcher_group_kills_everything(
    sandbox: LandlockSandbox, place: Place
) -> None:
    marker = f"swarm-orphan-{uuid.uuid4().hex}"
    script = orphan_script(marker) + " && touch both && exec sleep 600"
    conf = Confinement(workspace=place.workspace, env={"PATH": SYSTEM_PATH})
    with sandbox.launch(("bash", "-c", script), conf) as launch:
        process = subprocess.Popen(
            launch.argv,
            env=dict(launch.env),
            cwd=launch.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        # Poll with a bound: the script makes "both" once its orphans run.
        for _ in range(1200):
            if (place.workspace / "both").exists():
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)
                break  # it ended early: the asserts below say how
        assert (place.workspace / "both").exists()
        assert len(orphans_running(marker)) == 2
        os.killpg(process.pid, signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert processes_with(marker) == []


@pytest.mark.anyio
async def test_runs_under_anyio_open_process(sandbox: LandlockSandbox, place: Place) -> None:
    conf = Confinement(workspace=place.workspace, env={"PATH": SYSTEM_PATH})
    with sandbox.launch(("bash", "-c", "echo async > a.txt; echo done"), conf) as launch:
        async with await anyio.open_process(
            list(launch.argv),
            env=dict(launch.env),
            cwd=launch.cwd,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        ) as process:
            assert process.stdout is not None
            output = b"".join([chunk async for chunk in process.stdout])
            status = await process.wait()
    assert (status, output) == (0, b"done\n")
    assert (place.workspace / "a.txt").read_text() == "async\n"


def devices_beyond_the_harmless() -> list[str]:
    """The block devices here and the kernel log: what a root command must not read."""
    found = ["/dev/kmsg"]
    for entry in sorted(Path("/dev").iterdir()):
        with contextlib.suppress(OSError):
            if stat.S_ISBLK(entry.stat().st_mode):
                found.append(str(entry))
    return [d for d in found if os.path.exists(d)]


def test_disks_and_kernel_log_are_unreadable(sandbox: LandlockSandbox, place: Place) -> None:
    devices = devices_beyond_the_harmless()
    reads = "; ".join(f"head -c 1 {d} | wc -c" for d in devices)
    result = run(sandbox, place, f"{reads}; echo ok > /dev/null && head -c 3 /dev/zero | wc -c")
    assert result.stdout.split() == ["0"] * len(devices) + ["3"]


def test_everything_dies_with_a_killed_launcher(ns_sandbox: LandlockSandbox, place: Place) -> None:
    marker = f"swarm-orphan-{uuid.uuid4().hex}"
    script = orphan_script(marker) + " && touch both && exec sleep 600"
    conf = Confinement(workspace=place.workspace, env={"PATH": SYSTEM_PATH})
    with ns_sandbox.launch(("bash", "-c", script), conf) as launch:
        process = subprocess.Popen(
            launch.argv, env=dict(launch.env), cwd=launch.cwd, start_new_session=True
        )
        for _ in range(1200):  # poll with a bound until the orphans run
            if (place.workspace / "both").exists():
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)
                break
        orphans = orphans_running(marker)
        assert len(orphans) == 2
        pidfds = [os.pidfd_open(pid) for pid in orphans]  # each readable once it exits
        try:
            process.kill()  # the launcher only, not its group
            process.wait()
            pending = list(pidfds)
            for _ in range(60):
                ended, _, _ = select.select(pending, [], [], 1)
                pending = [fd for fd in pending if fd not in ended]
                if not pending:
                    break
        finally:
            for fd in pidfds:
                os.close(fd)
    assert pending == []
    assert orphans_running(marker) == []


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--network=maybe", "bad option '--network=maybe': choose from none, host"),
        ("--bogus=1", "bad option '--bogus=1'"),
    ],
)
def test_launcher_refuses_a_bad_option_without_running(
    place: Place, option: str, message: str
) -> None:
    launcher = Path(swarm.sandbox.landlock.__file__).with_name("_landlock_exec.py")
    argv = [sys.executable, "-I", "-S", str(launcher), option, "--", "touch", "ran"]
    result = subprocess.run(argv, cwd=place.workspace, capture_output=True, text=True, env={})
    assert (result.returncode, result.stderr) == (126, f"swarm-landlock: {message}\n")
    assert not (place.workspace / "ran").exists()


def test_shared_memory_is_private_to_the_command(ns_sandbox: LandlockSandbox, place: Place) -> None:
    script = (
        "python3 -c 'import multiprocessing as m; m.Lock(); print(\"lock\")'; "
        f"touch /dev/shm/{place.workspace.name}-leak; ls /dev/shm"
    )
    result = run(ns_sandbox, place, script)
    assert result.stdout == f"lock\n{place.workspace.name}-leak\n"
    assert not Path(f"/dev/shm/{place.workspace.name}-leak").exists()

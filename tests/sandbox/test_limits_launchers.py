"""How the limits reach a command: the sizes a policy writes, the words put before
bubblewrap and sandbox-exec (util-linux ``prlimit``, or swarm's own Python launcher where
there is none, as on macOS), and that the Python launcher really sets them and leaves the
command's signals as usual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swarm.mcp.client import _without_info_fd
from swarm.sandbox import Bubblewrap, Confinement, ResourceLimits, command_environment, limits
from swarm.sandbox.limits import format_size, parse_size

MiB = 1024**2


@pytest.mark.parametrize(
    ("text", "size"),
    [("4GiB", 4 * 1024**3), ("512 MB", 512 * MiB), ("100k", 102400), ("7", 7), (3, 3)],
)
def test_sizes(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["4 gigs", "0", "-1", "1.5G", ""])
def test_not_sizes(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_sizes_are_written_in_the_largest_exact_unit() -> None:
    assert [format_size(n) for n in (4 * 1024**3, 1536 * 1024, 1000)] == [
        "4 GiB",
        "1536 KiB",
        "1000 bytes",
    ]


def test_the_python_launcher_sets_the_limits_and_restores_sigpipe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(limits, "_prlimit", lambda: None)
    words = ResourceLimits(cpu=3, memory=64 * MiB, file_size=1 * MiB, open_files=50).launcher()
    assert words[:3] == (sys.executable, "-I", "-S")
    script = "for o in t d f n c; do ulimit -$o; done; yes | head -n 1; echo ${PIPESTATUS[0]}"
    done = subprocess.run(
        [*words, "bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.stdout.split() == ["3", str(64 * 1024), "1024", "50", "0", "y", "141"]


def test_the_python_launcher_refuses_a_bad_limit_and_runs_nothing(tmp_path: Path) -> None:
    launcher = Path(limits.__file__).with_name("_limits_exec.py")
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(launcher), "--stack=5", "touch", "ran"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert (done.returncode, done.stderr) == (126, "swarm-limits: unknown limit 'stack'\n")
    assert not (tmp_path / "ran").exists()


def test_prlimit_gets_soft_and_hard_values_and_skips_what_is_unlimited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits, "_prlimit", lambda: "/usr/bin/prlimit")
    words = ResourceLimits(cpu=10, memory=None, file_size=MiB, processes=None).launcher()
    assert words[:2] == ("/usr/bin/prlimit", "--core=0")
    assert "--cpu=10:15" in words
    assert f"--fsize={MiB}:{MiB}" in words
    assert not [w for w in words if w.startswith(("--data", "--nproc"))]


def test_bubblewrap_starts_every_command_behind_its_gate(tmp_path: Path) -> None:
    """With a process cap or without, the command starts behind the gate (which sets the
    limits and watches for swarm's end), nothing runs before bubblewrap, and the launch
    passes the info pipe (both ends: bubblewrap must never find its info pipe without a
    reader), the seccomp filter and the gate's pipe."""
    tier = Bubblewrap("/usr/bin/bwrap", "0.8.0", tmp_path / "home")
    for processes in (100, None):
        confinement = Confinement(
            tmp_path, env=command_environment(), limits=ResourceLimits(processes=processes)
        )
        with tier.launch(("true",), confinement) as launch:
            argv = launch.argv
            assert argv[0] == "/usr/bin/bwrap"
            command = argv[argv.index("--") + 1 :]
            assert command[0] == "bash" and "swarm-gate" in command
            assert confinement.limits.bash() in command[4]
            assert command[-1] == "true"
            assert len(launch.pass_fds) == 4


def test_an_mcp_server_is_not_held_on_a_descriptor_it_cannot_get(
    tmp_path: Path, bwrap: Bubblewrap
) -> None:
    """Its command runs without the gate (and its descriptors), and with its limits."""
    tier = Bubblewrap(bwrap.executable, bwrap.version, tmp_path / "home")
    limits = ResourceLimits(cpu=30, open_files=99, processes=None)
    confinement = Confinement(tmp_path, env=command_environment(), limits=limits)
    server = ("bash", "-c", "ulimit -n; ulimit -t", "--info-fd", "7")
    with tier.launch(server, confinement) as launch:
        argv = _without_info_fd(launch.argv, launch.pass_fds)
        assert "--info-fd" not in argv[: argv.index("--")]
        assert argv[-len(server) :] == server
        assert "swarm-gate" not in argv
        done = subprocess.run(argv, env=launch.env, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["99", "30"], done.stderr


def test_the_gate_runs_no_bash_env_before_its_limits(tmp_path: Path, bwrap: Bubblewrap) -> None:
    """A BASH_ENV the command's environment names (a file in the workspace) is not run by
    the gate, before its limits and its go; only the command's own bash would read it."""
    (tmp_path / "planted.sh").write_text("touch ran-before-the-gate\n")
    env = {**command_environment(), "BASH_ENV": str(tmp_path / "planted.sh")}
    tier = Bubblewrap(bwrap.executable, bwrap.version, tmp_path / "home")
    with tier.launch(("true",), Confinement(tmp_path, env=env)) as launch:
        done = subprocess.run(launch.argv, env=launch.env, pass_fds=launch.pass_fds, check=False)
    assert done.returncode == 0
    assert not (tmp_path / "ran-before-the-gate").exists()


def test_an_mcp_servers_launch_runs_no_bash_env_outside_the_sandbox(
    tmp_path: Path, bwrap: Bubblewrap
) -> None:
    """The shell in front of bubblewrap that opens the seccomp filter for it runs in
    swarm's own world: a BASH_ENV in the server's environment must not run there."""
    (tmp_path / "planted.sh").write_text(f"touch {tmp_path / 'home' / 'ran-unconfined'}\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    env = {**command_environment(), "BASH_ENV": str(tmp_path / "planted.sh")}
    tier = Bubblewrap(bwrap.executable, bwrap.version, tmp_path / "home")
    with tier.launch(("true",), Confinement(tmp_path / "ws", env=env)) as launch:
        argv = _without_info_fd(launch.argv, launch.pass_fds)
        assert argv[0] == "bash", "no seccomp filter to open here"
        done = subprocess.run(argv, env=launch.env, pass_fds=launch.pass_fds, check=False)
    assert done.returncode == 0
    assert not (tmp_path / "home" / "ran-unconfined").exists()

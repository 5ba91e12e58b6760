"""bubblewrap: commands write only in the workspace and their private /tmp, whatever the
program; swarm's state is read-only to them and run records invisible."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import SandboxSettings, Tool
from swarm.sandbox import Bubblewrap, Confinement, bwrap_arguments
from swarm.toolbox import make_toolbox

from .conftest import run, run_launched, text

WRITES = {
    "redirection": "echo pwned > {d}/keep.txt; echo new > {d}/new.txt",
    "append": "echo pwned >> {d}/keep.txt",
    "python": "python3 -c \"open('{d}/keep.txt', 'w').write('pwned'); open('{d}/new.txt', 'w')\"",
    "perl": 'perl -e \'open(F, ">{d}/keep.txt") or die; print F "pwned"; close(F) or die\'',
    "script": "printf 'echo pwned > {d}/keep.txt\\n' > s.sh; chmod +x s.sh; ./s.sh",
    "symlink": "ln -s {d} link && echo pwned > link/keep.txt",
    "symlinked file": "ln -s {d}/keep.txt f && echo pwned > f",
    "hard link": "ln {d}/keep.txt h && echo pwned > h",
    "cd": "cd {d} && echo pwned > keep.txt",
    "dot dot": "echo pwned > /tmp/../{d}/keep.txt",
    "double slash": "echo pwned > /{d}//keep.txt",
    "rm": "rm {d}/keep.txt",
    "mv": "mv {d}/keep.txt {d}/moved.txt",
    "chmod": "chmod 000 {d}/keep.txt",
    "touch": "touch -d 2000-01-01 {d}/keep.txt",
    # as root: capabilities would let the command make its mounts writable again
    "remount": "mount -o remount,rw / ; mount -o remount,rw,bind {d} ; echo pwned > {d}/keep.txt",
}


def untouched(directory: Path) -> bool:
    return [p.name for p in directory.iterdir()] == ["keep.txt"] and (
        directory / "keep.txt"
    ).read_text() == "original\n"


@pytest.mark.anyio
@pytest.mark.parametrize("how", WRITES)
async def test_no_write_reaches_a_directory_outside(
    shell: Tool[Any], elsewhere: Path, how: str
) -> None:
    before = (elsewhere / "keep.txt").stat()
    out = await run(shell, WRITES[how].format(d=elsewhere))
    assert "[exit code 0]" not in text(out)
    assert untouched(elsewhere)
    after = (elsewhere / "keep.txt").stat()
    assert (after.st_mode, after.st_mtime) == (before.st_mode, before.st_mtime)


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["redirection", "python", "symlink", "cd"])
async def test_no_write_reaches_a_directory_beside_the_workspace_in_tmp(
    shell: Tool[Any], beside: Path, how: str
) -> None:
    await run(shell, WRITES[how].format(d=beside))
    assert untouched(beside)


@pytest.mark.anyio
async def test_the_workspace_and_private_tmp_are_writable(shell: Tool[Any], ws: Path) -> None:
    out = await run(
        shell,
        "echo made > here.txt && mkdir -p sub && python3 -c \"open('sub/py.txt','w').write('x')\""
        " && echo t > /tmp/t && echo v > /var/tmp/v && echo s > /dev/shm/s && cat /tmp/t",
    )
    assert text(out) == "t\n[exit code 0]"
    assert (ws / "here.txt").read_text() == "made\n" and (ws / "sub" / "py.txt").exists()


@pytest.mark.anyio
async def test_the_private_tmp_is_the_commands_own(shell: Tool[Any]) -> None:
    await run(shell, "echo first > /tmp/left-behind")
    assert not await anyio.Path("/tmp/left-behind").exists()
    out = await run(shell, "cat /tmp/left-behind")
    assert "No such file" in text(out)


@pytest.mark.anyio
async def test_every_other_mount_is_read_only(
    shell: Tool[Any], ws: Path, bwrap: Bubblewrap
) -> None:
    # The kernel's own list of the sandbox's mounts: all read-only but the few writable
    # places (submounts of / included, such as /etc/hosts in a container).
    out = await run(shell, "cat /proc/self/mountinfo")
    writable = []
    for line in text(out).splitlines()[:-1]:
        fields = line.split()
        point, options = fields[4], fields[5].split(",")
        if "rw" in options:
            writable.append(point)
    # The emptied home is the one bubblewrap was first found with (another test's HOME).
    allowed = {str(ws), "/tmp", "/var/tmp", "/dev/shm", "/run", "/root", "/home", str(bwrap.home)}
    assert set(writable) - allowed <= {p for p in writable if p.startswith(("/dev", "/proc"))}
    assert str(ws) in writable


@pytest.mark.anyio
async def test_device_nodes_of_the_host_are_not_there(shell: Tool[Any]) -> None:
    out = await run(shell, "ls /dev")
    names = set(text(out).split())
    assert {"null", "zero", "urandom"} <= names
    assert not names & {"sda", "vda", "nvme0n1", "mem", "kmsg"}


@pytest.mark.anyio
async def test_swarm_state_is_read_only_to_commands(shell: Tool[Any], ws: Path) -> None:
    (ws / ".swarm").mkdir(exist_ok=True)
    (ws / ".swarm" / "notes.md").write_text("remember\n")
    out = await run(
        shell, "cat .swarm/notes.md; echo forged > .swarm/notes.md; echo x > .swarm/todo.json"
    )
    assert "remember" in text(out) and "Read-only file system" in text(out)
    assert (ws / ".swarm" / "notes.md").read_text() == "remember\n"
    assert not (ws / ".swarm" / "todo.json").exists()


@pytest.mark.anyio
async def test_a_state_directory_missing_at_the_start_cannot_be_made_by_a_command(
    shell: Tool[Any], ws: Path
) -> None:
    await run(shell, "mkdir -p .swarm && echo forged > .swarm/notes.md")
    assert not (ws / ".swarm" / "notes.md").exists()


@pytest.mark.anyio
async def test_protected_paths_are_invisible(bwrap: Any, ws: Path, elsewhere: Path) -> None:
    records = ws / ".swarm" / "runs"
    records.mkdir(parents=True)
    (records / "audit.jsonl").write_text("secret record\n")
    (elsewhere / "summary.json").write_text("secret summary\n")
    shell = make_toolbox(
        ws, sandbox=SandboxSettings(mode="required"), protected=[records, elsewhere]
    )["shell"]
    out = await run(
        shell,
        f"ls -A {records} {elsewhere}; cat {records}/audit.jsonl {elsewhere}/summary.json;"
        f" echo x > {elsewhere}/new",
    )
    assert "secret" not in text(out) and "No such file" in text(out)
    assert (records / "audit.jsonl").read_text() == "secret record\n"
    assert not (elsewhere / "new").exists()


@pytest.mark.anyio
async def test_commands_have_no_capabilities_even_when_swarm_is_root(shell: Tool[Any]) -> None:
    # The bounding set stays (bubblewrap cannot drop it without a user namespace), but
    # with no_new_privs no program a command executes gains anything from it.
    out = await run(shell, "grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs)' /proc/self/status")
    values = dict(line.split() for line in text(out).splitlines()[:-1])
    assert values == {
        "CapPrm:": "0000000000000000",
        "CapEff:": "0000000000000000",
        "CapAmb:": "0000000000000000",
        "NoNewPrivs:": "1",
    }


WRITABLE_PROC = """
import os
for root, dirs, files in os.walk("/proc"):
    top = root.split("/")[2] if root.count("/") > 1 else ""
    if top.isdigit() or top in ("self", "thread-self", "pressure"):
        dirs[:] = []
        continue
    for name in files:
        try:
            os.close(os.open(os.path.join(root, name), os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            continue
        print("writable", os.path.join(root, name))
"""


@pytest.mark.anyio
async def test_no_kernel_setting_can_be_written(shell: Tool[Any], ws: Path) -> None:
    # Opened for writing, never written: /proc/sys/kernel/core_pattern would run a program
    # of the command's choosing as root outside the sandbox.
    (ws / "scan.py").write_text(WRITABLE_PROC)
    out = await run(shell, "python3 scan.py")
    assert text(out) == "[exit code 0, no output]"
    # nor through a /proc of its own, mounted in a user namespace it makes
    out = await run(shell, "unshare -Umpf --mount-proc python3 scan.py")
    assert "writable" not in text(out)


def test_the_root_as_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot make '/' writable"):
        bwrap_arguments(Confinement(tmp_path, writable=(Path("/"),)), home=tmp_path)


def test_a_readable_path_in_tmp_is_readable_and_only_it(
    bwrap: Bubblewrap, ws: Path, beside: Path
) -> None:
    script = beside / "server.py"
    script.write_text("print('served')\n")
    confinement = Confinement(ws, env={"PATH": "/usr/bin:/bin"}, readable=(script,))
    command = ("sh", "-c", f"cat {script}; cat {beside}/keep.txt; touch {script}")
    done = run_launched(bwrap, command, confinement)
    assert "print('served')" in done.stdout  # the declared file is there
    assert "original" not in done.stdout  # its neighbour in the private /tmp is not
    assert script.read_text() == "print('served')\n" and script.stat().st_size == 16

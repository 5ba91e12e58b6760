"""The Landlock tier's mounts: with a mount namespace every mount but the writable
directories is read-only, so what Landlock has no right for (a file's mode, owner, times,
extended attributes) cannot change outside the workspace either; without one the tier
says so. Each test checks the file on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarm.sandbox import LandlockSandbox, NetworkMethod

from .test_landlock import Place, run, sandbox_with

METADATA_ATTACKS = [
    "chmod 000 {target}",
    "chmod 777 {dir}",
    "touch -d 2000-01-01 {target}",
    "touch -h -d 2000-01-01 {dir}",
    "chown $(id -u):$(id -g) {target}",
    "python3 -c \"import os; os.setxattr('{target}', 'user.pwned', b'1')\"",
    "python3 -c \"import os; os.utime('{dir}', (0, 0))\"",
    "mkfifo {dir}/fifo",
    "ln {target} hard && chmod 000 hard",
]


def state(path: Path) -> tuple[object, ...]:
    """What a metadata change would show: mode, owner, times (ctime too), xattrs, names."""
    info = path.stat()
    names = tuple(sorted(os.listdir(path))) if path.is_dir() else ()
    xattrs = tuple(os.listxattr(path))
    return (
        info.st_mode,
        info.st_uid,
        info.st_gid,
        info.st_mtime_ns,
        info.st_ctime_ns,
        xattrs,
        names,
    )


@pytest.fixture
def place(tmp_path: Path) -> Place:
    home = tmp_path / "home"
    home.mkdir()
    workspace = tmp_path / "work space"  # a space: mountinfo escapes it
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim.txt"
    target.write_text("precious")
    return Place(home=home, workspace=workspace, secret=target, outside=outside)


@pytest.mark.parametrize("attack", METADATA_ATTACKS)
@pytest.mark.parametrize("method", ["netns", "userns"])
def test_metadata_outside_the_workspace_cannot_change(
    place: Place, method: NetworkMethod, attack: str
) -> None:
    sandbox = sandbox_with(place, method)
    before = state(place.secret), state(place.outside)
    script = attack.format(target=place.secret, dir=place.outside)
    result = run(sandbox, place, script)
    assert result.returncode != 0
    assert (state(place.secret), state(place.outside)) == before


@pytest.mark.parametrize("method", ["netns", "userns"])
def test_metadata_inside_the_workspace_still_changes(place: Place, method: NetworkMethod) -> None:
    sandbox = sandbox_with(place, method)
    script = (
        "echo x > f && chmod 600 f && touch -d 2000-01-01 f && mkfifo p && "
        "python3 -c \"import os; os.setxattr('f', 'user.note', b'1')\" && "
        "echo y > $TMPDIR/t && chmod 600 $TMPDIR/t && touch -d 2000-01-01 ~/h"
    )
    result = run(sandbox, place, script)
    assert result.returncode == 0, result.stderr
    made = place.workspace / "f"
    assert made.stat().st_mode & 0o777 == 0o600
    assert made.stat().st_mtime < 1e9  # 2000-01-01
    assert os.getxattr(made, "user.note") == b"1"
    assert (place.workspace / "p").exists()


@pytest.mark.parametrize("method", ["netns", "userns"])
def test_the_host_mounts_stay_writable(place: Place, method: NetworkMethod) -> None:
    sandbox = sandbox_with(place, method)
    run(sandbox, place, "true")
    (place.outside / "after.txt").write_text("swarm still writes here")
    os.chmod(place.secret, 0o600)
    mounts = [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    assert all(m[5].split(",")[0] == "rw" for m in mounts if m[4] == "/")


def test_without_namespaces_metadata_changes_and_is_said_so(place: Place) -> None:
    sandbox = LandlockSandbox(hide_home=place.home, network_method="landlock-tcp")
    run(sandbox, place, f"chmod 600 {place.secret}")
    assert place.secret.stat().st_mode & 0o777 == 0o600
    assert "modes, owners, times and xattrs of files outside the workspace can change" in (
        sandbox.describe("none")
    )


def test_a_hidden_path_gone_before_its_mount_is_passed_over(tmp_path: Path) -> None:
    """A file of /etc listed as hidden and removed before the launcher mounts over it
    (a lock file) has nothing left to hide: the launch goes on instead of failing."""
    from swarm.sandbox import _landlock_kernel

    _landlock_kernel._cover(str(tmp_path / "gone.lock"))  # nothing mounted, no error
    assert not (tmp_path / "gone.lock").exists()

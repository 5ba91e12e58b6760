"""bubblewrap: no secret of the home or of swarm's environment reaches a command, and no
other process is visible or reachable from it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import SandboxSettings, Tool
from swarm.sandbox import Bubblewrap
from swarm.toolbox import make_toolbox

from .conftest import run, text

SECRET = "sk-sandbox-test-9f8e7d6c5b4a39281706"
HOME_SECRETS = {
    ".ssh/id_ed25519": "PRIVATE KEY",
    ".aws/credentials": "aws_secret_access_key",
    ".config/gh/hosts.yml": "oauth_token",
    ".netrc": "machine example.com password",
    ".bash_history": "export TOKEN=",
}


@pytest.fixture
def fake_home(elsewhere: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home outside /tmp full of secrets, and swarm's HOME pointing at it."""
    home = elsewhere / "home"
    for name, secret in HOME_SECRETS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"{secret} {SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def shell_for_home(bwrap: Bubblewrap, ws: Path, home: Path, **options: Any) -> Tool[Any]:
    tier = Bubblewrap(bwrap.executable, bwrap.version, home)
    settings = SandboxSettings(mode="required")
    return make_toolbox(ws, sandbox=settings, find=lambda _: tier, **options)["shell"]


@pytest.mark.anyio
async def test_the_home_is_empty_and_its_secrets_absent(
    bwrap: Bubblewrap, ws: Path, fake_home: Path
) -> None:
    shell = shell_for_home(bwrap, ws, fake_home)
    out = await run(
        shell,
        f"echo HOME=$HOME; ls -A ~; cat ~/.ssh/id_ed25519 ~/.aws/credentials {fake_home}/.netrc",
    )
    assert text(out).startswith(f"HOME={fake_home}\n")
    assert SECRET not in text(out) and "No such file" in text(out)


@pytest.mark.anyio
async def test_secrets_stay_hidden_when_the_workspace_is_the_home(
    bwrap: Bubblewrap, fake_home: Path
) -> None:
    (fake_home / "project.txt").write_text("work\n")
    shell = shell_for_home(bwrap, fake_home, fake_home)
    out = await run(shell, "cat project.txt; cat .ssh/id_ed25519 .aws/credentials .netrc")
    assert "work" in text(out) and SECRET not in text(out)
    await run(shell, "echo forged > .bash_history")
    assert SECRET in (fake_home / ".bash_history").read_text()


@pytest.mark.anyio
async def test_toolchains_on_the_path_below_the_home_still_run(
    bwrap: Bubblewrap, ws: Path, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = fake_home / ".toolchain"
    (tools / "bin").mkdir(parents=True)
    (tools / "lib").mkdir()
    (tools / "lib" / "greeting").write_text("hello from the toolchain\n")
    program = tools / "bin" / "greet"
    program.write_text(f"#!/bin/sh\ncat {tools}/lib/greeting\n")
    program.chmod(0o755)
    (tools / "credentials.toml").write_text(f"token = '{SECRET}'\n")
    monkeypatch.setenv("PATH", f"{tools / 'bin'}{os.pathsep}{os.environ['PATH']}")
    shell = shell_for_home(bwrap, ws, fake_home)
    out = await run(shell, f"greet; cat {tools}/credentials.toml; ls -A ~")
    assert "hello from the toolchain" in text(out)
    assert SECRET not in text(out)
    assert text(out).split("\n")[-2] == ".toolchain"  # nothing else of the home


@pytest.mark.anyio
async def test_secrets_in_swarms_environment_reach_no_command(
    shell: Tool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNRELATED_NAME", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = await run(
        shell,
        f"env; cat /proc/1/environ; cat /proc/*/environ; ps eww;"
        f" cat /proc/{os.getpid()}/environ; tr '\\0' '\\n' < /proc/{os.getppid()}/environ",
    )
    assert SECRET not in text(out)
    assert "PATH=" in text(out)


@pytest.mark.anyio
async def test_the_environment_is_built_from_scratch_plus_named_variables(
    bwrap: Bubblewrap, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROJECT_FLAVOUR", "mint")
    monkeypatch.setenv("OTHER_SETTING", "kept out")
    settings = SandboxSettings(mode="required", env=("PROJECT_FLAVOUR", "NOT_SET_ANYWHERE"))
    shell = make_toolbox(ws, sandbox=settings)["shell"]
    out = await run(shell, "env | cut -d= -f1 | sort | tr '\\n' ' '; echo; echo $PROJECT_FLAVOUR")
    names = set(text(out).splitlines()[0].split())
    assert names == {
        "HOME",
        "LANG",
        "PATH",
        "PROJECT_FLAVOUR",
        "PWD",
        "SHLVL",
        "TERM",
        "TMPDIR",
        "_",
    }
    assert "mint" in text(out)


@pytest.mark.anyio
async def test_no_process_outside_is_visible(shell: Tool[Any]) -> None:
    out = await run(shell, "ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\\0' ' '")
    count, init = text(out).splitlines()[:2]
    # the sandbox's init, the gate's watcher, bash, ls, grep (and tr, cat)
    assert int(count) <= 5
    assert init.split()[0].endswith("bwrap")  # its own init, not the machine's


@pytest.mark.anyio
async def test_kill_reaches_nothing_outside(
    shell: Tool[Any], running: Callable[[str], list[int]], marker: str
) -> None:
    bystander = await anyio.open_process(["sleep", marker])
    try:
        out = await run(shell, f"kill -9 {bystander.pid}; kill -9 $PPID; kill -9 -1; echo after")
        assert running(marker) == [bystander.pid]
        assert bystander.returncode is None
        assert "[exit code" in text(out)
    finally:
        bystander.kill()
        await bystander.wait()


@pytest.mark.anyio
async def test_a_program_on_the_path_in_a_secret_directory_runs_without_exposing_it(
    bwrap: Bubblewrap, ws: Path, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = fake_home / ".config" / "composer" / "vendor" / "bin"
    tools.mkdir(parents=True)
    (tools / "hello").write_text("#!/bin/sh\necho hello from config\n")
    (tools / "hello").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    shell = shell_for_home(bwrap, ws, fake_home)
    out = await run(shell, "hello; cat ~/.config/gh/hosts.yml; ls -A ~/.config")
    assert "hello from config" in text(out)
    assert SECRET not in text(out) and "gh" not in text(out).split()

"""Both Linux tiers: a project's virtual environment under /tmp (a clone there, with its
``.venv``) runs inside the sandbox when its ``bin`` is on ``PATH``: the interpreter finds
its ``pyvenv.cfg`` and its own site-packages, not only the base installation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarm import SandboxSettings
from swarm.toolbox import make_toolbox

from .conftest import run, text, tier_finder


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A virtual environment in /tmp (as tmp_path is) with a module of its own."""
    path = Path(os.path.realpath(tmp_path)) / "clone" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    site = next(path.glob("lib/python3*/site-packages"))
    (site / "only_in_venv.py").write_text("WHERE = 'venv'\n")
    return path


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
async def test_python_of_a_venv_under_tmp_runs_with_its_packages(
    tier: str, venv: Path, ws: Path
) -> None:
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}
    shell = make_toolbox(
        ws, sandbox=SandboxSettings(mode="required"), find=tier_finder(tier), shell_env=env
    )["shell"]
    out = text(
        await run(
            shell, "python -c 'import sys, only_in_venv; print(sys.prefix, only_in_venv.WHERE)'"
        )
    )
    assert f"{venv} venv" in out

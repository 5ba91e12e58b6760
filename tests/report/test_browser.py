"""The report in a real browser: headless Chromium loads it, runs its script, and shows
the agents, the denied call and the files; a screenshot is saved.

Set ``SWARM_SCREENSHOT_DIR`` to also write the screenshot there (the README's picture
is made this way: ``SWARM_SCREENSHOT_DIR=docs/images pytest tests/report``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from swarm import write_report

from .conftest import HOSTILE

pytestmark = pytest.mark.slow  # end to end: see tests/conftest.py

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("no headless Chromium in CI: .ci/run installs chromium-headless-shell")
        pytest.skip("no headless Chromium here (apt-get install chromium-headless-shell)")
    return found


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--disable-gpu", "--no-first-run", "--hide-scrollbars"]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox
    return subprocess.run(
        [browser(), *flags, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
    )


def test_report_renders_in_chromium(recorded_run: Path, tmp_path: Path) -> None:
    report = write_report(recorded_run, tmp_path / "report.html")
    done = chromium("--dump-dom", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    for agent in ("orchestrator/developer#1", "orchestrator/tester#1"):
        assert agent in dom
    assert "(rule: no-recursive-delete)" in dom
    for name in ("module.py", "notes.txt", "old.txt"):
        assert f"<code>{name}</code>" in dom
    assert "<img" not in dom and "&lt;script&gt;document.title=1" in dom
    assert "<title>swarm run" in dom  # the injected script never ran to rename the page
    assert HOSTILE not in dom

    shot = tmp_path / "report.png"
    done = chromium("--window-size=1280,900", f"--screenshot={shot}", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("SWARM_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(target) / "report.png")

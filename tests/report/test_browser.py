"""The report in a real browser: headless Chromium loads it, runs its script, and a
script run in the page says what a reader sees at 1400 and at 390 pixels wide: the
counts of denials and errors at the top, each linked; the agents as the delegation
tree; the files with the agents that changed them; the code a call wrote as code; and
nothing cut off or wider than the screen.

``scripts/report_screenshots.py`` makes the documentation's pictures the same way.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swarm import write_report

from .browser import Browser, chromium_or_skip
from .conftest import CODE, HOSTILE

pytestmark = pytest.mark.slow  # end to end: see tests/conftest.py

CHECK = (Path(__file__).parent / "page_check.js").read_text()


def seen(report: Path, tmp_path: Path, width: int, fragment: str = "") -> dict[str, Any]:
    """What ``page_check.js`` finds in ``report`` opened ``width`` pixels wide."""
    profile = tmp_path / f"profile-{width}"
    profile.mkdir()
    with Browser(chromium_or_skip(), profile) as browser:
        browser.open(report.as_uri() + fragment, width)
        found: dict[str, Any] = browser.evaluate(CHECK)
    return found


@pytest.mark.parametrize("width", [1400, 390])
def test_report_answers_what_went_wrong_without_clipping(
    tree_run: Path, tmp_path: Path, width: int
) -> None:
    report = write_report(tree_run, tmp_path / "report.html")
    page = seen(report, tmp_path, width)

    assert page["width"] == width
    assert page["cut"] == [] and page["wide"] == []  # nothing clipped, scrolled or too wide
    assert page["page"] <= width
    assert page["counts"] == {
        "denied": ["1", "#denied"],
        "errors": ["3", "#errors"],  # a failed read, the failed delegation, the tester
        "calls": ["8", "#timeline"],
        "agents": ["4", "#agents"],
    }
    assert page["targets"] == []  # every link on the page leads somewhere
    (denied,) = page["denied"]
    assert denied.startswith("lead/developer#1 shell denied by policy:default")
    assert "(rule: no-recursive-delete)" in denied
    errors = "\n".join(page["errors"])
    assert "lead/developer#1 read_file failed: 'missing.txt' does not exist" in errors
    assert "lead/tester#1 ended with an error" in errors
    assert page["tree"] == [
        ["lead", None],
        ["lead/developer#1", "lead"],
        ["lead/developer#1/helper#1", "lead/developer#1"],
        ["lead/tester#1", "lead"],
    ]
    assert page["files"] == [
        "added: app.py by lead/developer#1",
        "added: docs.md by lead/developer#1/helper#1",
    ]  # the tester's import made __pycache__/app.*.pyc: counted, not listed
    assert any("1 compiled Python cache file" in note for note in page["notes"])
    assert CODE in page["code"]  # as written: lines, a tab, markup as text
    assert "Write app.py and its docs" in page["task"][0] and page["audit"][0].endswith(")")
    assert page["images"] == 0 and page["title"].startswith("swarm run")  # nothing ran
    assert HOSTILE not in report.read_text()


def test_a_link_to_a_denied_call_opens_its_agent(tree_run: Path, tmp_path: Path) -> None:
    report = write_report(tree_run, tmp_path / "report.html")
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium_or_skip(), profile) as browser:
        browser.open(report.as_uri(), 1400)
        shown = browser.evaluate(
            "new Promise((done) => {"
            " const link = document.querySelector('#denied a');"
            " addEventListener('hashchange', () => done(link.getAttribute('href')), {once: true});"
            " link.click(); }).then((target) => {"
            " const call = document.querySelector(target);"
            " return [call.closest('details.agent').open, call.checkVisibility(),"
            " call.querySelector('b').innerText]; })"
        )
    assert shown == [True, True, "shell"]  # it was closed: the link opened it


def test_the_filter_keeps_a_matching_agent_and_the_agents_above_it(
    tree_run: Path, tmp_path: Path
) -> None:
    report = write_report(tree_run, tmp_path / "report.html")
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium_or_skip(), profile) as browser:
        browser.open(report.as_uri(), 390)
        shown = browser.evaluate(
            "const box = document.getElementById('filter'); box.value = 'HELPER';"
            " box.dispatchEvent(new Event('input'));"
            " [...document.querySelectorAll('ul.tree li')]"
            ".filter((li) => li.checkVisibility()).map((li) => li.dataset.agent)"
        )
    assert shown == ["lead", "lead/developer#1", "lead/developer#1/helper#1"]


def test_report_renders_in_chromium_without_running_the_models_markup(
    recorded_run: Path, tmp_path: Path
) -> None:
    report = write_report(recorded_run, tmp_path / "report.html")
    done = chromium("--dump-dom", report.as_uri(), home=tmp_path)
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


def chromium(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--disable-gpu", "--no-first-run", "--hide-scrollbars"]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox
    return subprocess.run(
        [chromium_or_skip(), *flags, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(home)},
    )

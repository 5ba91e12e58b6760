"""Make the documentation's pictures of the HTML report (``docs/images``).

    python scripts/report_screenshots.py [OUT_DIR]

Runs the report tests' scripted run (``tests/report/conftest.py``: a lead, a developer
that delegates to a helper, a tester that fails; a denied call, a failed call, code
written by two agents), writes its report, and has headless Chromium take a picture of
the whole page at 1400 and at 390 pixels wide, with the agent whose call was denied
opened by following the first link of "What went wrong": ``report.png`` and
``report-390.png`` in OUT_DIR (default ``docs/images``). Needs the test extra (pytest)
and ``chromium-headless-shell``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from report.browser import Browser, find_browser  # noqa: E402
from report.conftest import make_tree_run  # noqa: E402

from swarm import write_report  # noqa: E402

SHOTS = {"report.png": 1400, "report-390.png": 390}
OPEN_DENIED = (  # follow the first denied call's link; wait until the page has opened it
    "new Promise((done) => { addEventListener('hashchange', () => done(true), {once: true});"
    " document.querySelector('#denied a').click(); })"
)


def main(out: Path) -> int:
    """Write the pictures into ``out``; 1 when there is no browser."""
    executable = find_browser()
    if executable is None:
        print("no headless Chromium (apt-get install chromium-headless-shell)", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        report = write_report(make_tree_run(where), where / "report.html")
        for name, width in SHOTS.items():
            profile = where / f"profile-{width}"
            profile.mkdir()
            with Browser(executable, profile) as browser:
                browser.open(report.as_uri(), width)
                browser.evaluate(OPEN_DENIED)
                browser.screenshot(out / name, width)
            print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "images"))

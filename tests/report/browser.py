"""Headless Chromium driven over its DevTools pipe: open a page at a given width, run
a script in it, take a screenshot. Used by the report's browser test and by
``scripts/report_screenshots.py``; needs nothing but the browser (no network: the
protocol goes over two pipes, ``--remote-debugging-pipe``).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
WAIT = 120.0  # seconds to wait for the browser's answer before giving up (a hang guard)


def find_browser() -> str | None:
    """The path of a headless Chromium on ``PATH``, if there is one."""
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _high(fd: int) -> int:
    """``fd`` moved to a number of 10 or more (closed on exec, as pipes are)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


def chromium_or_skip() -> str:
    """The browser for a test: skips it when there is none here, fails it in CI (where
    ``.ci/run`` installs ``chromium-headless-shell``)."""
    import pytest

    found = find_browser()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("no headless Chromium in CI: .ci/run installs chromium-headless-shell")
        pytest.skip("no headless Chromium here (apt-get install chromium-headless-shell)")
    return found


class BrowserError(RuntimeError):
    """The browser did not start, answer or render as asked."""


class Browser:
    """One headless Chromium; ``open`` loads a page in a new tab. Use as a context
    manager: leaving it closes the browser."""

    def __init__(self, executable: str, profile: Path) -> None:
        # every end moved above 10, so that making the child's fds 3 and 4 never
        # overwrites another end, and each dup2 makes a fresh, inheritable copy
        theirs_in, ours_in = (_high(fd) for fd in os.pipe())  # it reads (its fd 3), we write
        ours_out, theirs_out = (_high(fd) for fd in os.pipe())  # we read, it writes (its fd 4)
        flags = ["--headless", "--disable-gpu", "--no-first-run", "--hide-scrollbars"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox

        def fds() -> None:  # in the child, before exec
            os.dup2(theirs_in, 3)
            os.dup2(theirs_out, 4)

        self.log = profile / "stderr.txt"  # what the browser said, for an error message
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    executable,
                    *flags,
                    "--remote-debugging-pipe",
                    f"--user-data-dir={profile}",
                    "about:blank",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env={**os.environ, "HOME": str(profile)},  # it writes nothing in the real one
                pass_fds=(3, 4),
                preexec_fn=fds,
            )
        os.close(theirs_in)
        os.close(theirs_out)
        self._write, self._read = ours_in, ours_out
        self._buffer = b""
        self._next = 0
        self.session = ""

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Ask the browser to quit, then make sure it has."""
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close", session=False)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._write, self._read):
            with contextlib.suppress(OSError):
                os.close(fd)

    def said(self) -> str:
        """The end of what the browser wrote on its standard error."""
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise BrowserError(f"the browser did not answer in time: {self.said()}")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise BrowserError(f"the browser closed its pipe: {self.said()}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        data: dict[str, Any] = json.loads(raw)
        return data

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True
    ) -> Any:
        """Call one DevTools method (on the open page unless ``session`` is false);
        returns its result. Events that arrive meanwhile are dropped."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + WAIT
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def wait_for(self, event: str) -> None:
        """Wait for the open page's ``event`` (``Page.loadEventFired``)."""
        deadline = time.monotonic() + WAIT
        while True:
            message = self._message(deadline)
            if message.get("method") == event and message.get("sessionId") == self.session:
                return

    def open(self, url: str, width: int, height: int = 900) -> None:
        """Open ``url`` in a new tab whose viewport is ``width`` by ``height`` CSS
        pixels, and wait until it has loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.send(
            "Target.attachToTarget",
            {"targetId": target["targetId"], "flatten": True},
            session=False,
        )
        self.session = attached["sessionId"]
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """Run ``expression`` in the page; returns its value (JSON-like)."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"the script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, width: int) -> None:
        """A PNG of the whole page (all of its height) at ``width``, written to ``path``."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        shot = self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))

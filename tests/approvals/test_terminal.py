"""In a terminal (a pty), a worker two levels down asks; its sibling keeps working while
the question waits; ``y`` runs the call; the audit log holds the receipt."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from .support import make_project

TIMEOUT = 120


def _read_until(fd: int, text: bytes, seen: bytearray, deadline: float) -> bool:
    while text not in seen:
        if time.monotonic() > deadline:
            return False
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other end closed
                return text in seen
            if not chunk:
                return text in seen
            seen += chunk
    return True


def test_prompt_at_depth_while_a_sibling_works_and_y_runs_the_call(tmp_path: Path) -> None:
    make_project(tmp_path)
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "swarm",
            "run",
            "counting.yaml",
            "--workspace",
            "ws",
            "--runs-dir",
            "runs",
        ],
        cwd=tmp_path,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm", "COLUMNS": "160", "LINES": "40"},
        close_fds=True,
    )
    os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + TIMEOUT
    try:
        assert _read_until(master, b"allow? [y/a/e/N]", seen, deadline), seen.decode(
            errors="replace"
        )
        assert b"[boss/lead#1/worker#1] wants to call shell" in seen
        notes = tmp_path / "ws" / "notes.txt"
        while not notes.exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # the sibling works while the question waits (bounded above)
        assert notes.read_text() == "noted"
        assert not (tmp_path / "ws" / "count.txt").exists()
        os.write(master, b"y\n")
        _read_until(master, b"Run record:", seen, deadline)
        assert process.wait(timeout=TIMEOUT) == 0, seen.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"
    [record] = (tmp_path / "runs").iterdir()
    receipts = [
        json.loads(line)
        for line in (record / "audit.jsonl").read_text().splitlines()
        if '"event":"approval"' in line
    ]
    assert [(r["approved"], r["via"], r["path"]) for r in receipts] == [
        (True, "terminal", "boss/lead#1/worker#1")
    ]

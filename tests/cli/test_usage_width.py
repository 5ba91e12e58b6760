"""The usage table of the end summary at 60 columns: in a terminal that narrow (or with
``COLUMNS=60``) every line fits, and every number is whole, on one line."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.console import Console

from swarm.budget import UsageNode
from swarm.cli.usage import UsageTable
from swarm.types import StopReason, Usage

ESCAPES = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-B]"
)
ENDS = ("Errors", "Denied", "Approvals", "Files", "Stop reason")  # what follows the table


def tree() -> UsageNode:
    big = Usage(input_tokens=1234567, output_tokens=89012, cache_read_tokens=456789)
    leaf = UsageNode("lead/researcher#12", big, big, 14, 0, "m", StopReason.end_turn, (), 0.1234)
    deep = UsageNode("lead/researcher#12/summariser#3", big, big, 3, 0, "m", StopReason.max_tokens)
    return UsageNode("lead", big, big, 5, 2, "m", StopReason.end_turn, (leaf, deep), 1.5, 12.25)


@pytest.mark.parametrize("width", [140, 100, 80, 60, 40])
def test_the_usage_table_fits_its_width_with_whole_numbers(width: int) -> None:
    console = Console(width=width, force_terminal=True, color_system=None, record=True)
    console.print(UsageTable(tree()))
    lines = console.export_text().splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), "\n".join(lines)
    text = "\n".join(lines)
    for number in ("1,234,567", "89,012", "$1.5000", "$0.1234", "cost unknown", "max_tokens"):
        assert number in text, (number, text)
    for name in ("lead", "researcher#12", "summariser#3"):
        assert name in text


def in_terminal(cwd: Path, args: list[str], columns: int, env: dict[str, str]) -> str:
    """Run ``swarm`` in a pseudo-terminal ``columns`` wide; what it showed, without its
    escape sequences."""
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "swarm", *args],
        cwd=cwd,
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        start_new_session=True,
    )
    os.close(child)
    shown = b""
    deadline = time.monotonic() + 180  # a hang guard, not a timing assertion
    try:
        while time.monotonic() < deadline:
            if select.select([parent], [], [], 1)[0]:
                try:
                    chunk = os.read(parent, 65536)
                except OSError:  # the terminal closed: the command ended
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
    finally:
        os.close(parent)
        process.wait(timeout=60)
    assert process.returncode == 0, shown.decode(errors="replace")[-3000:]
    return ESCAPES.sub("", shown.decode(errors="replace")).replace("\r", "")


@pytest.mark.parametrize(
    ("terminal", "columns"),
    [(60, None), (200, "60")],
    ids=["a-60-column-terminal", "COLUMNS=60"],
)
def test_the_run_summary_s_usage_table_at_60_columns(
    tmp_path: Path, examples: Path, terminal: int, columns: str | None
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("COLUMNS", None)
    env.update({"PYTHONUNBUFFERED": "1", "XDG_STATE_HOME": str(tmp_path / "state")})
    if columns is not None:
        env["COLUMNS"] = columns
    args = ["run", str(examples / "build-a-calculator.yaml"), "--workspace", "ws"]
    shown = in_terminal(tmp_path, [*args, "--runs-dir", "runs"], terminal, env)
    summary = shown.rsplit("Final answer", 1)[1].splitlines()
    start = next(n for n, line in enumerate(summary) if line.strip() == "Usage")
    end = next(n for n, line in enumerate(summary) if n > start and line.startswith(ENDS))
    table = summary[start:end]
    assert all(len(line.rstrip()) <= 60 for line in table), "\n".join(table)

    (record,) = (tmp_path / "runs").iterdir()
    usage = json.loads((record / "summary.json").read_text())["usage_tree"]
    rows: list[tuple[str, int, int]] = []

    def walk(node: dict[str, object], depth: int) -> None:
        name = str(node["path"]).rsplit("/", 1)[-1]
        rows.append(("  " * depth + name, int(node["input_tokens"]), int(node["output_tokens"])))  # type: ignore[call-overload]
        for child in node.get("children") or ():  # type: ignore[attr-defined]
            walk(child, depth + 1)

    walk(usage, 0)
    assert len(rows) >= 3  # the orchestrator and its sub-agents
    for name, tokens_in, tokens_out in rows:
        row = next((line for line in table if line.startswith(name + " ")), None)
        assert row is not None, (name, table)
        assert re.search(rf" {tokens_in:,} +{tokens_out:,} ", row), (row, tokens_in, tokens_out)


@pytest.mark.parametrize(
    ("terminal", "columns"),
    [(60, None), (200, "60")],
    ids=["a-60-column-terminal", "COLUMNS=60"],
)
def test_runs_show_s_usage_lines_at_60_columns(
    tmp_path: Path, examples: Path, terminal: int, columns: str | None
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("COLUMNS", None)
    env.update({"PYTHONUNBUFFERED": "1", "XDG_STATE_HOME": str(tmp_path / "state")})
    args = ["run", str(examples / "build-a-calculator.yaml"), "--workspace", "ws"]
    done = subprocess.run(
        [sys.executable, "-m", "swarm", *args, "--runs-dir", "runs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    if columns is not None:
        env["COLUMNS"] = columns
    shown = in_terminal(tmp_path, ["runs", "show", "last", "--runs-dir", "runs"], terminal, env)
    lines = shown.split("\nTotal: ", 1)[1].split("\nAudit head: ", 1)[0].splitlines()[1:]
    assert all(len(line) <= 60 for line in lines), "\n".join(lines)
    (record,) = (tmp_path / "runs").iterdir()
    usage = json.loads((record / "summary.json").read_text())["usage_tree"]
    nodes = [usage]
    while nodes:
        node = nodes.pop()
        name = str(node["path"]).rsplit("/", 1)[-1]
        tokens = int(node["input_tokens"]) + int(node["output_tokens"])
        assert any(line.lstrip().startswith(f"{name}: {tokens:,} tokens,") for line in lines)
        nodes += node.get("children") or []

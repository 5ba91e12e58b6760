"""Report benchmark (not part of the test run): a scripted run with 500 sub-agents.

    python benchmarks/bench_report.py [AGENTS]

A lead delegates to AGENTS workers (50 at a time, in parallel); each worker writes one
file and answers. Prints how long the run took, the size of the record's events and of
the HTML report, how long building the report took, and how long headless Chromium took
to load it and dump its DOM (against the same for an empty page, so the browser's start
is not counted), best of ``ROUNDS``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import yaml

from swarm import build_report, write_report
from swarm.scenario import load_scenario, run_scenario

ROUNDS = 3
BATCH = 50


def scenario(root: Path, agents: int) -> Path:
    team = root / "team"
    team.mkdir()
    (team / "lead.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "lead",
                "description": "splits the work",
                "system": "Split the work.",
                "tools": [],
                "delegates": ["worker"],
                "max_iterations": agents // BATCH + 5,
                "budget": {"delegations": agents + 10, "tokens": 10**9},
            }
        )
    )
    (team / "worker.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "worker",
                "description": "does one piece",
                "system": "Do one piece.",
                "tools": ["write_file"],
            }
        )
    )
    lead = [
        {"calls": [{"tool": "worker", "args": {"task": f"piece {n}"}} for n in range(i, i + BATCH)]}
        for i in range(0, agents, BATCH)
    ]
    lead.append({"text": "all pieces done"})
    script: dict[str, object] = {"lead": lead}
    for n in range(1, agents + 1):
        script[f"worker#{n}"] = [
            {"call": "write_file", "args": {"path": f"out/{n}.txt", "content": f"piece {n}\n"}},
            {"text": f"wrote out/{n}.txt"},
        ]
    path = root / "s.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "fanout",
                "team": str(team),
                "entry": "lead",
                "task": f"do {agents} pieces",
                "limits": {"max_depth": 2},
                "model": {"script": script},
            }
        )
    )
    return path


def load_seconds(browser: str, page: Path) -> float:
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--dump-dom", page.as_uri()]
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        subprocess.run([browser, *flags], capture_output=True, check=True, timeout=300)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    agents = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    root = Path(tempfile.mkdtemp(prefix="bench-report-"))
    os.environ["XDG_STATE_HOME"] = str(root / "state")
    path = scenario(root, agents)
    started = time.perf_counter()
    outcome = anyio.run(lambda: run_scenario(load_scenario(path), workspace=root / "ws"))
    print(
        f"run: {agents} sub-agents, {outcome.stop_reason.value}, "
        f"{time.perf_counter() - started:.1f}s"
    )
    events = outcome.record_dir / "events.jsonl"
    print(f"events.jsonl: {events.stat().st_size / 1e6:.2f} MB")
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        build_report(outcome.record_dir)
        best = min(best, time.perf_counter() - started)
    report = write_report(outcome.record_dir)
    print(f"report.html: {report.stat().st_size / 1e6:.2f} MB, built in {best:.2f}s")
    browser = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if browser is None:
        print("no headless Chromium: load time not measured")
        return
    empty = root / "empty.html"
    empty.write_text("<!doctype html><title>x</title>")
    base, full = load_seconds(browser, empty), load_seconds(browser, report)
    print(f"Chromium load + DOM dump: {full:.2f}s ({full - base:.2f}s over an empty page)")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

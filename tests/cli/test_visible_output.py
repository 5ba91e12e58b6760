"""What a person reads of a hostile run cannot lie.

A scripted model writes files whose names hold a newline and a forged ``Stop reason:``
line, an escape that retitles the terminal, one that clears it, rich markup and a
right-to-left override; it calls a tool by such a name, has a call denied that quotes
them, makes a shell print escapes and create a file whose name is not UTF-8, and answers
with all of it. The summary of ``swarm
run`` (piped, and drawn live as on a terminal), ``swarm audit show``, ``swarm runs
show``/``list``, ``swarm sessions show`` and the HTML report show every one of them as a
visible escape: no raw character reaches the reader, markup stays text, and the forged
line never stands as a line of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).parents[2] / "roles"

TITLE = "\x1b]0;pwned\x07"  # retitles the terminal
CLEAR = "\x1b[2J"  # clears it
RED = "[red]x[/red]"  # rich markup
LINK = "[link=file:///etc]y[/link]"  # a rich hyperlink
RLO = "\u202e"  # right-to-left override
FORGED = "Stop reason: end_turn.  Tool calls: 0 allowed, 0 denied."
HOSTILE = f"{TITLE}{CLEAR}{RED}{LINK}{RLO}\n{FORGED}"
RAW = ("\x1b", "\x07", RLO, "\udcff")  # none of these may reach the reader (the last: a byte
# of a file name that is not UTF-8, as the captured output decodes it)

NEWLINE_NAME = f"a\n{FORGED}"
NAMES = (NEWLINE_NAME, f"t{TITLE}.txt", f"c{CLEAR}.txt", f"{RED}.txt", f"invoice{RLO}txt.exe")
SHOWN_NAMES = (
    f"a\\n{FORGED}",
    "t\\x1b]0;pwned\\x07.txt",
    "c\\x1b[2J.txt",
    "[red]x[/red].txt",
    "invoice\\u202etxt.exe",
    "bad\\udcffname",
)
SHOWN_HOSTILE = "\\x1b]0;pwned\\x07\\x1b[2J[red]x[/red][link=file:///etc]y[/link]\\u202e"


def scenario() -> dict[str, object]:
    developer = [
        {"calls": [{"tool": "write_file", "args": {"path": n, "content": "x\n"}} for n in NAMES]},
        {"call": "write_file", "args": {"path": f"/etc/{RED}{TITLE}\n{FORGED}", "content": "x"}},
        {"call": f"no_such{TITLE}{RED}", "args": {"why": HOSTILE}},
        {"call": "shell", "args": {"command": "printf 'out\\033]0;pwned\\007\\033[2J\\n'"}},
        {"call": "shell", "args": {"command": "python3 -c \"open(b'bad\\xffname', 'w').close()\""}},
        {"text": f"done {HOSTILE}"},
    ]
    return {
        "name": "hostile",
        "team": str(ROLES),
        "entry": "orchestrator",
        "policy": "default",
        "task": "Write the files.",
        "model": {
            "script": {
                "orchestrator": [
                    {"call": "developer", "args": {"task": "write them"}},
                    {"text": f"Final: {HOSTILE}"},
                ],
                "developer": developer,
            }
        },
    }


class Run:
    """One hostile run, and the ``swarm`` command to read what it left."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.runs = where / "runs"
        (where / "hostile.yaml").write_text(yaml.safe_dump(scenario()), encoding="utf-8")

    def swarm(
        self, *args: str | Path, columns: int = 200, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        environ.pop("FORCE_COLOR", None)
        environ.update({"COLUMNS": str(columns), "XDG_STATE_HOME": str(self.where / "state")})
        done = subprocess.run(
            [sys.executable, "-m", "swarm", *map(str, args)],
            cwd=self.where,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=180,
            env={**environ, **(env or {})},
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stderr
        return done

    def start(self, workspace: str, **env: str) -> tuple[str, Path]:
        """``swarm run`` of the scenario: its output and its record."""
        done = self.swarm(
            "run", "hostile.yaml", "--workspace", workspace, "--runs-dir", self.runs, env=env
        )
        (record,) = (
            r for r in self.runs.iterdir() if (r / "summary.json").exists() and _of(r, workspace)
        )
        return done.stdout, record


def _of(record: Path, workspace: str) -> bool:
    return f'/{workspace}"' in (record / "manifest.json").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, str, Path]:
    run = Run(tmp_path_factory.mktemp("hostile"))
    summary, record = run.start("ws")
    return run, summary, record


def assert_nothing_raw(text: str) -> None:
    found = [repr(char) for char in RAW if char in text]
    assert not found, f"raw {', '.join(found)} in:\n{text!r}"


def lines_starting(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


def test_the_files_were_really_written_with_those_names(hostile: tuple[Run, str, Path]) -> None:
    run, _, _ = hostile
    written = {p.relative_to(run.where / "ws").as_posix() for p in (run.where / "ws").rglob("*")}
    assert {NEWLINE_NAME, f"t{TITLE}.txt", f"invoice{RLO}txt.exe", "[red]x[/red].txt"} <= written


def test_the_run_summary_shows_escapes_and_nothing_raw(hostile: tuple[Run, str, Path]) -> None:
    _, summary, _ = hostile
    assert_nothing_raw(summary)
    for name in SHOWN_NAMES:
        assert f"+ {name}  (added)" in summary, summary
    assert SHOWN_HOSTILE in summary  # the final answer, markup as it was written


def test_a_file_name_cannot_forge_a_line_of_the_run_summary(hostile: tuple[Run, str, Path]) -> None:
    _, summary, _ = hostile
    (stop,) = lines_starting(summary, "Stop reason:")
    assert "1 denied" in stop and stop != FORGED
    assert not lines_starting(summary, "Files:  ") and not lines_starting(summary, "  + Stop")


def test_the_plain_progress_lines_keep_one_event_per_line(hostile: tuple[Run, str, Path]) -> None:
    _, summary, _ = hostile
    denied = [line for line in summary.splitlines() if " DENIED write_file: " in line]
    assert len(denied) == 1 and f"\\n{FORGED}" in denied[0]
    assert "calls no_such\\x1b]0;pwned\\x07[red]x[/red]" in summary


def test_the_live_view_on_a_terminal_draws_no_escape_the_model_chose(
    hostile: tuple[Run, str, Path],
) -> None:
    run, _, _ = hostile
    drawn, _ = run.start("ws-live", FORCE_COLOR="1")  # rich draws as on a terminal
    assert "\x1b[" in drawn  # it did draw live, with its own escapes
    for raw in (TITLE[:-1], CLEAR, "\x1b]8;", RLO):  # a retitle, a clear, a link, an override
        assert raw not in drawn, raw
    assert "[red]x[/red].txt" in drawn and SHOWN_HOSTILE in drawn


@pytest.mark.parametrize("columns", [200, 80])
def test_audit_show_shows_escapes_in_paths_tools_and_reasons(
    hostile: tuple[Run, str, Path], columns: int
) -> None:
    run, _, record = hostile
    shown = run.swarm("audit", "show", record, columns=columns).stdout
    assert_nothing_raw(shown)
    assert "no_such\\x1b]0;pwned\\x07[red]x[/red]" in shown
    assert '"path": "invoice\\u202etxt.exe"' in shown and '"path": "[red]x[/red].txt"' in shown
    assert "'/etc/[red]x[/red]\\x1b]0;pwned\\x07\\nStop reason:" in shown
    assert not [line for line in shown.splitlines() if line.lstrip().startswith("Stop reason")]


def test_runs_show_shows_escapes_and_one_stop_reason(hostile: tuple[Run, str, Path]) -> None:
    run, _, record = hostile
    shown = run.swarm("runs", "show", record).stdout
    assert_nothing_raw(shown)
    (stop,) = lines_starting(shown, "Stop reason:")
    assert stop == "Stop reason: end_turn"
    assert f"  Final: {SHOWN_HOSTILE}" in shown.splitlines()
    assert "[red]x[/red]\\x1b]0;pwned\\x07\\nStop reason:" in shown  # the denial, one line


def test_runs_list_and_sessions_show_show_no_raw_character(
    hostile: tuple[Run, str, Path],
) -> None:
    run, _, record = hostile
    assert_nothing_raw(run.swarm("runs", "list", "--all", "--runs-dir", run.runs).stdout)
    session = run.swarm("sessions", "show", record, "orchestrator/developer#1").stdout
    assert_nothing_raw(session)
    assert "Created t\\x1b]0;pwned\\x07.txt" in session
    assert not lines_starting(session, "Stop reason")  # a message's lines are indented


def test_the_html_report_shows_escapes_in_names_arguments_and_answers(
    hostile: tuple[Run, str, Path],
) -> None:
    run, _, record = hostile
    report = run.where / "report.html"
    run.swarm("runs", "report", record, "-o", report)
    page = report.read_text(encoding="utf-8")
    assert_nothing_raw(page)
    assert f"<code>a\\n{FORGED}</code>" in page  # the file list: one line
    assert "<code>invoice\\u202etxt.exe</code>" in page
    assert "<code>t\\x1b]0;pwned\\x07.txt</code>" in page
    assert "<code>bad\\udcffname</code>" in page  # a name that is not UTF-8
    assert "+++ b/a\\nStop reason:" in page  # the diff's header too
    assert f"<pre>Final: {SHOWN_HOSTILE}\n" in page
    assert "out\\x1b]0;pwned\\x07\\x1b[2J" in page  # what the shell printed


def test_a_log_line_quoting_the_model_shows_escapes(tmp_path: Path) -> None:
    """Log lines go to the terminal too (above the live view): their strings are escaped."""
    code = (
        "from swarm.cli import _configure_logging\n"
        "from swarm._log import logger\n"
        "_configure_logging(False)\n"
        f"logger('t').warning('tool failed {TITLE}', path={NEWLINE_NAME + RLO!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert_nothing_raw(done.stderr)
    (line,) = done.stderr.splitlines()
    assert "tool failed \\x1b]0;pwned\\x07" in line and f"a\\n{FORGED}\\u202e" in line

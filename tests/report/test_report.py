"""The HTML report of a run: what it shows, what it escapes, what it never loads."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from swarm import ConfigError, build_report, write_report

from .conftest import HOSTILE


class Elements(HTMLParser):
    """The tags of a document and the URLs any attribute could load."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [
            v or "" for k, v in attrs if k in ("src", "href") and not (v or "").startswith("#")
        ]


def parse(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    return parser


def test_report_shows_header_agents_denial_files_and_audit(recorded_run: Path) -> None:
    page = build_report(recorded_run)
    assert "Tidy the notes and add a module." in page
    for agent in ("orchestrator", "orchestrator/developer#1", "orchestrator/tester#1"):
        assert agent in page
    assert "deny by policy:default (rule: no-recursive-delete)" in page
    assert "added: <code>module.py</code>" in page
    assert "changed: <code>notes.txt</code>" in page and "deleted: <code>old.txt</code>" in page
    assert '<span class="del">-one</span>' in page and '<span class="add">+two</span>' in page
    assert "chain intact, MACs valid, head anchored" in page
    assert "error: " in page  # the tester's failure, on its agent


def test_report_names_the_agent_beside_each_changed_file(recorded_run: Path) -> None:
    page = build_report(recorded_run)
    by = '<span class="agent">by <code>orchestrator/developer#1</code></span>'
    for line in ("added: <code>module.py</code>", "deleted: <code>old.txt</code>"):
        assert line + " " + by in page, line


def test_report_escapes_what_the_model_wrote(recorded_run: Path) -> None:
    page = build_report(recorded_run)
    elements = parse(page)
    assert elements.tags.count("script") == 1  # the report's own, nothing injected
    assert "img" not in elements.tags
    assert "&lt;script&gt;document.title=" in page
    assert HOSTILE not in page


def test_report_loads_nothing_and_allows_only_its_own_script(recorded_run: Path) -> None:
    page = build_report(recorded_run)
    assert parse(page).urls == []
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert "default-src 'none'" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1).split("script-src", 1)[1]


def test_report_of_a_tampered_audit_log_says_so(recorded_run: Path) -> None:
    log = recorded_run / "audit.jsonl"
    lines = log.read_text().splitlines()
    record = json.loads(lines[0])
    record["decision"] = "allow" if record["decision"] != "allow" else "deny"
    log.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    page = build_report(recorded_run)
    assert re.search(r'<dd class="bad" id="audit">[^<]*tampered', page)


def test_write_report_defaults_into_the_record_and_is_private(recorded_run: Path) -> None:
    written = write_report(recorded_run)
    assert written == recorded_run / "report.html"
    assert written.stat().st_mode & 0o077 == 0
    assert not list(recorded_run.glob("*.partial"))


def test_report_of_a_directory_that_is_no_record_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a run record"):
        build_report(tmp_path)


def test_report_of_a_run_killed_before_its_first_call(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        json.dumps({"run_id": "r1", "config": {"entry": "lead", "task": "Do it."}})
    )
    page = build_report(tmp_path)
    assert "Do it." in page and "(no summary: the run is going on or was killed)" in page
    assert "no audit records: the run made no tool call" in page


def test_report_of_a_run_whose_audit_log_was_deleted_says_so(recorded_run: Path) -> None:
    (recorded_run / "audit.jsonl").unlink()
    page = build_report(recorded_run)
    assert re.search(
        r'<dd class="bad" id="audit">tampered or damaged: the audit log is missing', page
    )


def test_report_puts_the_counts_first_each_linked_to_its_items(recorded_run: Path) -> None:
    page = build_report(recorded_run)
    header = page.split("</header>", 1)[0]
    for key, href, value, label in (
        ("denied", "#denied", "1", "denied call"),
        ("errors", "#errors", "2", "errors"),  # the tester, and the call that started it
        ("calls", "#timeline", "6", "tool calls"),
        ("agents", "#agents", "3", "agents"),
        ("cost", "#usage", "?", "cost unknown"),
    ):
        bad = "bad" if key in ("denied", "errors") else ""
        link = f'<a href="{href}" id="count-{key}" class="{bad}">'
        assert f"{link}<b>{value}</b>{label}</a>" in header, key
    problems = page.split('<h2 id="problems">What went wrong</h2>', 1)[1].split("<h2>", 1)[0]
    denied = (
        r'<ul class="problems" id="denied"><li><a href="#a1c\d">orchestrator/developer#1</a>'
        r" <b>shell</b> denied by policy:default \(rule: no-recursive-delete\)"
    )
    assert re.search(denied, problems)
    assert "orchestrator/tester#1</a> ended with an error: the script for role" in problems


def test_report_shows_agents_as_the_delegation_tree(recorded_run: Path) -> None:
    page = build_report(recorded_run)
    tree = page.split('<ul class="tree">', 1)[1]
    assert tree.startswith('<li data-agent="orchestrator"><details class="agent" id="a0">')
    children = tree.split("</details><ul>", 1)[1]
    assert children.startswith('<li data-agent="orchestrator/developer#1">')
    assert '</li><li data-agent="orchestrator/tester#1">' in children


def record(tmp_path: Path, arguments: object) -> Path:
    """A run record of one agent that made one ``write_file`` call with ``arguments``."""
    (tmp_path / "manifest.json").write_text(
        json.dumps({"run_id": "r1", "config": {"entry": "lead", "task": "Write it."}})
    )
    events = [
        {"type": "tool_use_start", "tool_use_id": "c1", "name": "write_file"},
        {"type": "tool_input_delta", "tool_use_id": "c1", "partial_json": json.dumps(arguments)},
        {"type": "tool_result", "tool_use_id": "c1", "name": "write_file", "content": "Created."},
        {"type": "session_end", "stop_reason": "end_turn"},
    ]
    (tmp_path / "events.jsonl").write_text(
        "".join(
            json.dumps({**event, "time": f"2026-01-01T00:00:0{n}+00:00"}) + "\n"
            for n, event in enumerate(events)
        )
    )
    return tmp_path


def test_code_a_call_wrote_is_shown_as_code_not_as_a_json_string(tmp_path: Path) -> None:
    code = 'def f(x):\n\treturn "<b>" + x\n'
    page = build_report(record(tmp_path, {"path": "f.py", "content": code}))
    assert '<span class="k">path</span> <code>f.py</code>' in page
    shown = '<pre class="code">def f(x):\n\treturn &quot;&lt;b&gt;&quot; + x\n</pre>'
    assert f'<span class="k">content</span>{shown}' in page
    assert "\\n" not in page.split('<details class="agent"', 1)[1]  # no JSON escapes


def test_a_long_written_file_is_folded_with_its_size(tmp_path: Path) -> None:
    code = "".join(f"line = {n}\n" for n in range(200))
    page = build_report(record(tmp_path, {"path": "long.py", "content": code}))
    assert (
        "<details><summary>content (201 lines, 2,090 characters)</summary>"
        f'<pre class="code">{code}</pre></details>'
    ) in page


def test_arguments_that_are_no_object_are_shown_as_they_came(tmp_path: Path) -> None:
    page = build_report(record(tmp_path, ["not", "an", "object"]))
    assert "<pre>[&quot;not&quot;, &quot;an&quot;, &quot;object&quot;]</pre>" in page


def test_argument_names_the_model_chose_are_escaped_too(tmp_path: Path) -> None:
    page = build_report(record(tmp_path, {HOSTILE: HOSTILE, "content": HOSTILE + "\n" * 40}))
    elements = parse(page)
    assert elements.tags.count("script") == 1 and "img" not in elements.tags
    assert HOSTILE not in page
    assert "<summary>&lt;/pre&gt;&lt;script&gt;document.title=1" not in page  # the fold's
    assert "<summary>content (41 lines, " in page  # label is the argument's name

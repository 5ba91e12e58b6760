"""``swarm test`` checks typed answers with ``expect.outputs`` (examples/typed-review.yaml)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm

EXAMPLE = Path(__file__).parents[2] / "examples" / "typed-review.yaml"


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = EXAMPLE.read_text().replace("team: teams/review", f"team: {EXAMPLE.parent}/teams/review")
    assert old in text
    path = tmp_path / "variant.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_the_typed_review_passes_retry_exhaustion_and_outputs(
    swarm: Swarm, examples: Path, runs: Path
) -> None:
    done = swarm("test", examples / "typed-review.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout
    (summary,) = runs.glob("*/summary.json")
    data = json.loads(summary.read_text())
    assert data["delegation_ends"]["lead/reviewer#2"] == "invalid_output"
    assert data["outputs"]["lead/reviewer#1"]["findings"][0]["line"] == 1
    # the third, continued after it finished, answered the follow-up with its context
    assert "templates" in data["outputs"]["lead/reviewer#3"]["findings"][0]["note"]
    assert data["delegation_ends"]["lead/reviewer#3"] == "end_turn"
    assert "lead/reviewer#2" not in data["outputs"]  # no placeholder for the failed one
    # the report shows the reviewers as started in the background, and the lead not
    report = summary.parent / "report.html"
    done = swarm("runs", "report", summary.parent.name, "-o", report)
    assert done.returncode == 0, done.stdout + done.stderr
    html = report.read_text()
    for number in (1, 2, 3):  # in the tree, each agent by its name, its path as a title
        reviewer = f'<b title="lead/reviewer#{number}">reviewer#{number}</b>'
        assert f'{reviewer} <span class="dim">(background)</span>' in html
    assert '<b title="lead">lead</b> <span class="dim">(background)</span>' not in html
    assert '<b title="lead">lead</b>' in html


def test_an_unmet_output_condition_fails_naming_path_and_value(
    swarm: Swarm, tmp_path: Path
) -> None:
    scenario = _variant(tmp_path, "      $.verdict: approve\n", "      $.verdict: reject\n")
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "outputs: lead/reviewer#3 $.verdict is 'approve', expected equals 'reject'" in (
        done.stdout
    )


def test_an_output_from_an_agent_that_gave_none_fails(swarm: Swarm, tmp_path: Path) -> None:
    scenario = _variant(
        tmp_path, "    reviewer#3:\n      $.verdict", "    reviewer#2:\n      $.verdict"
    )
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "outputs: no typed answer from 'reviewer#2'" in done.stdout


def test_an_unknown_operator_is_a_scenario_file_error(swarm: Swarm, tmp_path: Path) -> None:
    scenario = _variant(tmp_path, "{length: 1}", "{size: 1}")
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "ERROR  (invalid scenario file)" in done.stdout
    assert f"{scenario}:49: field 'expect.outputs': 'reviewer#1': $.findings: unknown" in (
        done.stdout
    )
    assert "Traceback" not in done.stderr

"""Dollar budgets and prices from the command line: a run whose roles fall under a dollar
budget without a price stops before anything runs, and a priced run records dollars per
agent and per subtree that add up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm

TEAM = {
    "lead.yaml": "description: Leads.\nsystem: You are the lead.\ndelegates: [helper]\n",
    "helper.yaml": "description: Helps.\nsystem: You are the helper.\n",
}
SCRIPT = """\
team: team
runs_dir: runs
task: Do two parts.
limits: {usd: 1.0}
model:
  script:
    lead:
      - calls:
          - {tool: helper, args: {task: one}}
          - {tool: helper, args: {task: two}}
      - text: Both done.
    helper:
      - text: One done.
      - text: Two done.
"""


def write(tmp_path: Path, scenario: str) -> None:
    (tmp_path / "team").mkdir()
    for name, text in TEAM.items():
        (tmp_path / "team" / name).write_text(text)
    (tmp_path / "scenario.yaml").write_text(scenario)


def test_an_unpriced_model_under_a_dollar_budget_stops_the_run_before_it_starts(
    swarm: Swarm, tmp_path: Path
) -> None:
    write(tmp_path, SCRIPT)
    done = swarm("run", "scenario.yaml")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "lead.yaml" in done.stderr
    assert "role 'lead' runs under a dollar budget but its model 'scripted' has no price" in (
        done.stderr
    )
    # no model call was made: no record holds the end of one
    for events in (tmp_path / "runs").glob("*/events.jsonl"):
        assert "iteration_end" not in events.read_text()


def test_a_priced_run_records_dollars_per_agent_and_subtree_that_add_up(
    swarm: Swarm, tmp_path: Path
) -> None:
    prices = "models:\n  scripted: {input: 3.0, output: 15.0, max_output_tokens: 500}\n"
    write(tmp_path, prices + SCRIPT)
    done = swarm("run", "scenario.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    [summary_file] = (tmp_path / "runs").glob("*/summary.json")
    summary = json.loads(summary_file.read_text())
    tree = summary["usage_tree"]
    helpers = tree["children"]
    assert len(helpers) == 2 and all(h["cost_usd"] > 0 for h in helpers)
    own = (tree["input_tokens"] * 3.0 + tree["output_tokens"] * 15.0) / 1e6
    assert abs(tree["cost_usd"] - own) < 1e-9
    assert abs(tree["subtree_cost_usd"] - (own + sum(h["cost_usd"] for h in helpers))) < 1e-9
    assert abs(summary["cost_usd"] - tree["subtree_cost_usd"]) < 1e-9
    assert f"(subtree ${tree['subtree_cost_usd']:.4f})" in done.stdout
    shown = swarm("runs", "show", summary_file.parent)
    assert shown.returncode == 0, shown.stderr
    assert f"(subtree ${tree['subtree_cost_usd']:.4f})" in shown.stdout

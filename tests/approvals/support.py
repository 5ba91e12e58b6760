"""A three-level team (boss -> lead -> worker and helper) whose worker's shell is ``ask``."""

from __future__ import annotations

from pathlib import Path

BOSS = """\
name: boss
description: Runs the job.
system: You run the job.
delegates: [lead]
max_iterations: 10
"""
LEAD = """\
name: lead
description: Leads the work.
system: You lead.
delegates: [worker, helper]
max_iterations: 10
"""
WORKER = """\
name: worker
description: Runs commands.
system: You run commands.
tools: [shell]
max_iterations: 10
"""
HELPER = """\
name: helper
description: Writes notes.
system: You write notes.
tools: [write_file]
max_iterations: 10
"""
POLICY = """\
name: careful
default: allow
on_ask: {on_ask}
rules:
  - id: ask-shell
    ask: shell
    roles: [worker]
    reason: a person must agree to every command the worker runs
  - id: no-rm
    deny: shell
    args:
      command: {{shell: rm}}
"""
SCENARIO = """\
name: counting
team: team
entry: boss
policy: careful.yaml
task: Count once.
model:
  script:
    boss:
      - call: lead
        args: {task: count and take notes}
      - text: all done
    lead:
      - calls:
          - {tool: worker, args: {task: count}}
          - {tool: helper, args: {task: take notes}}
      - text: lead done
    worker:
      - call: shell
        args: {command: "echo x >> count.txt"}
      - text: worker done
    helper:
      - call: write_file
        args: {path: notes.txt, content: noted}
      - text: notes written
"""


def make_project(root: Path, *, on_ask: str = "hold") -> Path:
    """Write the team, policy and scenario under ``root``; returns the scenario file."""
    team = root / "team"
    team.mkdir(parents=True)
    for name, text in (("boss", BOSS), ("lead", LEAD), ("worker", WORKER), ("helper", HELPER)):
        (team / f"{name}.yaml").write_text(text)
    (root / "careful.yaml").write_text(POLICY.format(on_ask=on_ask))
    scenario = root / "counting.yaml"
    scenario.write_text(SCENARIO)
    return scenario

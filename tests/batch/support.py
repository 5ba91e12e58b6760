"""A one-role scripted team and task files for batch tests."""

from __future__ import annotations

import json
from pathlib import Path

from swarm.scenario.spec import Script

WRITER = """\
name: writer
description: Writes one file.
system: You write the file you are asked for.
tools: [write_file, read_file]
max_iterations: 4
"""


# A small policy: the default one is ~200 lines of YAML, and parsing it (twice a run) is
# most of what a scripted task costs; a 200-task test does not need it.
TINY_POLICY = """\
name: tiny
description: Writing and reading files in the workspace; nothing else.
default: deny
rules:
  - id: files
    allow: [write_file, read_file]
"""


def make_policy(root: Path) -> str:
    path = root / "tiny-policy.yaml"
    path.write_text(TINY_POLICY)
    return str(path)


def make_team(root: Path) -> Path:
    team = root / "team"
    team.mkdir()
    (team / "writer.yaml").write_text(WRITER)
    return team


def script() -> Script:
    """Every task writes out.txt, then answers."""
    return Script.model_validate(
        {
            "script": {
                "writer": [
                    {"call": "write_file", "args": {"path": "out.txt", "content": "hello"}},
                    {"text": "wrote out.txt"},
                ]
            }
        }
    )


def write_tasks(path: Path, count: int, **extra: object) -> Path:
    lines = [
        json.dumps(
            {"id": f"t{i:03d}", "task": f"task {i}", "expect": {"files": {"out.txt": "hello"}}}
            | extra
        )
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_results(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]

"""``swarm init [DIR]``: a small team to start from, that validates and passes its test.

It writes an orchestrator and two specialists, a policy extending ``default``, and a
scenario played by a scripted model (no key, no network). Nothing is written when any of
the files already exists.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from swarm.cli.exits import OK
from swarm.errors import ConfigError

__all__ = ["SCAFFOLD", "add_commands"]

_LEAD = """\
# The entry role: plans the task and hands the pieces to the specialists.
name: lead
description: Leads the team; delegates writing to the writer and checking to the reviewer.
tools: [read_file, list_files, notes]
delegates: [writer, reviewer]
max_iterations: 20
budget: {tokens: 500000, delegations: 10}
system: |
  You lead a team of two. Give the writer one self-contained task at a time, then ask the
  reviewer to check what was written. Answer the user with the outcome and the files.
"""

_WRITER = """\
name: writer
description: Writes and edits files in the workspace.
tools: [read_file, write_file, edit_file, list_files]
max_iterations: 20
system: |
  You write the files your task asks for, then say which files you wrote.
"""

_REVIEWER = """\
name: reviewer
description: Reads the files it is pointed at and says what is wrong with them, if anything.
tools: [read_file, list_files, search]
max_iterations: 20
system: |
  You review files: read them, then answer "looks right" or list each problem with the
  file and line.
"""

_POLICY = """\
# Rules for every role of the team (a role may name its own with `policy:`).
name: team
extend: default          # the shipped policy: files in the workspace, no destructive shell
rules:
  - id: no-secrets
    deny: [read_file, write_file, edit_file]
    args: {path: {path: ["**/.env", "**/.env.*"]}}
    reason: .env files hold secrets
"""

_SCENARIO = """\
# A scenario: the team, a task, a model, and what must be true afterwards.
# `swarm test scenario.yaml` runs it in a fresh workspace and checks `expect`.
# For a real model: `swarm run scenario.yaml --model openai:gpt-4.1-mini`.
name: hello
team: team
entry: lead
policy: policies/team.yaml
task: Write hello.py, which prints a greeting, and have it reviewed.
model:
  script:                # a scripted model: each role's turns, in order
    lead:
      - call: writer
        args: {task: "Write hello.py; it prints 'hello'."}
      - call: reviewer
        args: {task: "Review hello.py."}
      - text: hello.py is written and reviewed.
    writer:
      - call: write_file
        args: {path: hello.py, content: "print('hello')\\n"}
      - text: I wrote hello.py.
    reviewer:
      - call: read_file
        args: {path: hello.py}
      - text: looks right
expect:
  stop_reason: end_turn
  delegations: [writer, reviewer]
  files: {hello.py: "print('hello')"}
  final_contains: [hello.py]
"""

SCAFFOLD: dict[str, str] = {
    "team/lead.yaml": _LEAD,
    "team/writer.yaml": _WRITER,
    "team/reviewer.yaml": _REVIEWER,
    "policies/team.yaml": _POLICY,
    "scenario.yaml": _SCENARIO,
}
"""The files ``swarm init`` writes, by path relative to its directory."""

GITIGNORE = "# swarm: the workspaces of runs started here\n.swarm/\n"
"""The ``.gitignore`` ``swarm init`` writes when the directory has none."""


def add_commands(sub: Any) -> None:
    init = sub.add_parser(
        "init",
        help="write a small team, a policy and a scenario to start from",
        description="Write an orchestrator and two specialists (team/), a policy"
        " (policies/team.yaml) and a scenario with a scripted model (scenario.yaml) that"
        " passes `swarm test` as written. Existing files are never overwritten.",
    )
    init.add_argument(
        "directory", nargs="?", type=Path, default=Path("."), help="where (default: here)"
    )
    init.set_defaults(handler=cmd_init)


def _ignores_swarm(ignore: Path) -> bool:
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return any(line.strip().strip("/") in (".swarm", ".swarm/*", "**/.swarm") for line in lines)


def _shown(path: Path) -> str:
    return os.path.relpath(path) if not path.is_absolute() else str(path)


def cmd_init(args: argparse.Namespace) -> int:
    root: Path = args.directory
    if root.exists() and not root.is_dir():
        raise ConfigError("cannot write a team here: it is a file, not a directory", path=root)
    targets = [root / name for name in SCAFFOLD]
    for target in targets:
        if target.exists() or target.is_symlink():
            raise ConfigError("already exists; swarm init overwrites nothing", path=target)
    written: list[Path] = []
    made = sorted(
        {d for t in targets for d in (t.parent, *t.parent.parents) if not d.exists()},
        key=lambda d: len(d.parts),
        reverse=True,
    )
    try:
        for target, text in zip(targets, SCAFFOLD.values(), strict=True):
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("x", encoding="utf-8") as file:  # "x": never overwrite
                file.write(text)
            written.append(target)
        ignore = root / ".gitignore"
        if not (ignore.exists() or ignore.is_symlink()):
            with ignore.open("x", encoding="utf-8") as file:
                file.write(GITIGNORE)
            written.append(ignore)
    except OSError as exc:
        for done in written:  # nothing half-written: take back what this call wrote
            done.unlink(missing_ok=True)
        for directory in made:  # deepest first
            with contextlib.suppress(OSError):
                directory.rmdir()
        where = exc.filename or root
        raise ConfigError(f"cannot write the team: {exc.strerror or exc}", path=where) from None
    for target in written:
        print(f"wrote {_shown(target)}")
    if ignore not in written and not _ignores_swarm(ignore):
        print(f"note: {_shown(ignore)} does not list .swarm/, where runs keep workspaces: add it")
    scenario = _shown(root / "scenario.yaml")
    sys.stdout.write(f"next: swarm test {scenario}\n")
    return OK

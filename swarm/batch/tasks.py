"""A task dataset: one JSON object a line, each a task for the same team.

::

    {"id": "t1", "task": "Write calc.py", "files": {"README.md": "# calc"},
     "expect": {"files": {"calc.py": "def add"}}}

``task`` is required; ``id`` defaults to ``line-N``; ``files`` are written into the task's
fresh workspace; ``expect`` is a scenario's ``expect`` section. Blank lines are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
from pydantic import ConfigDict

from swarm.config import load_document, validate_document
from swarm.errors import ConfigError
from swarm.scenario.spec import Expectations, Script

__all__ = ["BatchTask", "load_script_model", "load_tasks"]


class _TaskLine(pydantic.BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str | None = pydantic.Field(None, min_length=1, max_length=200)
    task: str = pydantic.Field(min_length=1)
    files: dict[str, str] = pydantic.Field(default_factory=dict)
    expect: Expectations | None = None


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One task of a batch: its id, the task text, seed files and expectations."""

    id: str
    task: str
    files: dict[str, str] = field(default_factory=dict)
    expect: Expectations | None = None


def load_tasks(path: str | Path) -> list[BatchTask]:
    """Read a JSONL task file. Raises ``ConfigError`` naming the file, the line and the
    field of the first bad line (and every problem in ``.problems``); ids must be unique."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the task file: {exc}", path=path) from None
    tasks: list[BatchTask] = []
    problems: list[ConfigError] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data: Any = json.loads(line)
        except ValueError as exc:
            problems.append(ConfigError(f"not a JSON object: {exc}", path=path, line=number))
            continue
        if not isinstance(data, dict):
            problems.append(ConfigError("expected a JSON object", path=path, line=number))
            continue
        try:
            parsed = _TaskLine.model_validate(data)
        except pydantic.ValidationError as exc:
            for error in exc.errors():
                where = ".".join(str(part) for part in error["loc"]) or None
                problems.append(ConfigError(error["msg"], path=path, line=number, field=where))
            continue
        task_id = parsed.id or f"line-{number}"
        if task_id in seen:
            problems.append(
                ConfigError(
                    f"id {task_id!r} is also on line {seen[task_id]}",
                    path=path,
                    line=number,
                    field="id",
                )
            )
            continue
        seen[task_id] = number
        tasks.append(BatchTask(task_id, parsed.task, dict(parsed.files), parsed.expect))
    if problems:
        raise ConfigError.collect(problems)
    if not tasks:
        raise ConfigError("the task file holds no tasks", path=path)
    return tasks


def load_script_model(path: str | Path) -> Script:
    """A scripted model from a YAML file holding ``script:`` (and optional ``summary:``),
    as in a scenario's ``model:``; every task of a batch plays it from the start.
    Raises ``ConfigError`` naming file, line and field."""
    document = load_document(path)
    return validate_document(Script, document)

"""A CrewAI task's ``output_pydantic`` / ``output_json`` model, read without running code.

The value names a pydantic class written in the crew's ``crew.py`` or a Python file beside
it (one folder down too: ``models/report.py``). swarm never imports or runs those files:
it parses them with ``ast`` and turns the class's annotated fields into a JSON Schema
(``swarm.team.crew_schema``) —
``str``/``int``/``float``/``bool``, ``list[...]``/``List[...]``/``set``/``tuple``,
``dict[...]``, ``Optional[X]``/``X | None``/``Union``, ``Literal[...]``, ``Annotated``,
enums and other models of the same files (as ``$defs``), ``Field(default=...,
description=..., ge=..., min_length=...)``, the class docstring as its description, and
the fields of base classes that are models of the same files.

What cannot be read that way — a class imported from elsewhere, a validator (its code
would have to run), a type swarm does not know (``conint(...)``, a generic) — is a
``ModelProblem`` naming the file and line; the task then runs untyped. The class of a
``@task`` method's ``Task(config=self.tasks_config['name'], output_pydantic=Model)`` in
``crew.py`` counts as that task's, as CrewAI reads it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from swarm.team.crew_schema import (
    ClassSchema,
    ModelProblem,
    ParsedClass,
    Unreadable,
    name_of,
)

__all__ = ["ModelProblem", "ProjectModels", "TaskModel", "crew_home", "python_files"]

OutputKind = Literal["output_pydantic", "output_json"]

_SKIPPED_DIRS = frozenset({"config", "tests", "venv", "node_modules", "__pycache__"})
_MAX_FILES = 200
_MAX_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class TaskModel:
    """The class a ``@task`` method of ``crew.py`` gives its task (``task``: the key of
    ``tasks.yaml`` it reads), as ``output_pydantic`` or ``output_json`` (``kind``)."""

    task: str
    kind: OutputKind
    name: str
    path: Path
    line: int


def crew_home(agents_path: Path) -> Path:
    """The folder of a crew's Python files: the parent of its ``config/``, else the
    folder of its ``agents.yaml``."""
    folder = agents_path.parent
    return folder.parent if folder.name == "config" else folder


def python_files(home: Path) -> Iterator[Path]:
    """``crew.py`` first, then the other ``.py`` files of ``home`` and its subfolders."""
    found = [home / "crew.py"] if (home / "crew.py").is_file() else []
    found += sorted(p for p in home.glob("*.py") if p.name != "crew.py")
    for sub in sorted(home.iterdir()) if home.is_dir() else []:
        if sub.is_dir() and not sub.name.startswith((".", "_")) and sub.name not in _SKIPPED_DIRS:
            found += sorted(sub.glob("*.py"))
    # regular files only (a FIFO named crew.py would block the read), and not huge ones
    yield from (p for p in found[:_MAX_FILES] if p.is_file() and p.stat().st_size <= _MAX_BYTES)


class ProjectModels:
    """The classes, imports and ``@task`` outputs of a crew's Python files, parsed once
    (never imported). ``problems`` holds files that do not parse."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.classes: dict[str, list[ParsedClass]] = {}
        self.imports: dict[str, tuple[str, Path, int]] = {}
        self.tasks: dict[str, TaskModel] = {}
        self.problems: list[ModelProblem] = []
        self._cache: dict[str, dict[str, Any] | ModelProblem] = {}
        for path in python_files(home):
            self._read(path)

    def _read(self, path: Path) -> None:
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            line = getattr(exc, "lineno", None)
            self.problems.append(ModelProblem(path, line, f"not read: {exc}"))
            return
        parts = path.relative_to(self.home.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, []).append(ParsedClass(node, path, module))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    where = ("." * node.level) + (node.module or "")
                    self.imports.setdefault(alias.asname or alias.name, (where, path, node.lineno))
            elif isinstance(node, ast.FunctionDef) and path.name == "crew.py":
                self._task_method(node, path)

    def _task_method(self, node: ast.FunctionDef, path: Path) -> None:
        if not any(name_of(d) == "task" for d in node.decorator_list):
            return
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and name_of(call.func) == "Task"):
                continue
            key = node.name
            for keyword in call.keywords:
                value = keyword.value
                if keyword.arg == "config" and isinstance(value, ast.Subscript):
                    index = value.slice
                    if isinstance(index, ast.Constant) and isinstance(index.value, str):
                        key = index.value
            for keyword in call.keywords:
                name = name_of(keyword.value)
                if keyword.arg in ("output_pydantic", "output_json") and name:
                    kind: OutputKind = (
                        "output_json" if keyword.arg == "output_json" else "output_pydantic"
                    )
                    self.tasks[key] = TaskModel(key, kind, name, path, keyword.value.lineno)

    def find(self, value: str) -> ParsedClass | None:
        """The class ``value`` names (``Model`` or ``package.module.Model``): the one of
        that module when several share the name, else the first (``crew.py``'s)."""
        module, _, name = value.rpartition(".")
        found = self.classes.get(name, [])
        for candidate in found:
            if module and (candidate.module == module or candidate.module.endswith("." + module)):
                return candidate
        return found[0] if found else None

    def schema(self, value: str) -> dict[str, Any] | ModelProblem:
        """The JSON Schema of the model ``value`` names, or why it cannot be read."""
        if value not in self._cache:
            self._cache[value] = self._build(value)
        return self._cache[value]

    def _build(self, value: str) -> dict[str, Any] | ModelProblem:
        name = value.rpartition(".")[2]
        found = self.find(value)
        if found is None and self.problems:  # perhaps in a file that does not parse
            return self.problems[0]
        if found is None:
            imported = self.imports.get(name)
            crew = self.home / "crew.py"
            if imported is not None:
                module, path, line = imported
                return ModelProblem(
                    path, line, f"'{name}' is imported from '{module}', which swarm does not read"
                )
            return ModelProblem(
                crew if crew.is_file() else self.home,
                None,
                f"no class '{name}' in {self.home.name}'s Python files (crew.py and beside it)",
            )
        builder = ClassSchema(self.classes, self.imports)
        try:
            root = builder.model(found)
        except Unreadable as exc:
            return exc.problem
        except RecursionError:
            message = f"'{name}' nests too deeply to be read"
            return ModelProblem(found.path, found.node.lineno, message)
        if builder.defs:
            root["$defs"] = builder.defs
        return root

"""A CrewAI task's ``output_pydantic`` / ``output_json`` model, read without running code.

The value names a pydantic class written in the crew's ``crew.py`` or a Python file beside
it (one folder down too: ``models/report.py``). swarm never imports or runs those files:
it parses them with ``ast`` and turns the class's annotated fields into a JSON Schema —
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
from typing import Any, Literal, TypeGuard

__all__ = ["ModelProblem", "ProjectModels", "TaskModel", "crew_home"]

OutputKind = Literal["output_pydantic", "output_json"]

_SCALARS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string"},
    "Any": {},
    "object": {},
    "None": {"type": "null"},
    "NoneType": {"type": "null"},
    "date": {"type": "string", "format": "date"},
    "datetime": {"type": "string", "format": "date-time"},
    "time": {"type": "string", "format": "time"},
    "UUID": {"type": "string", "format": "uuid"},
    "EmailStr": {"type": "string", "format": "email"},
    "HttpUrl": {"type": "string", "format": "uri"},
    "AnyUrl": {"type": "string", "format": "uri"},
}
_ARRAYS = frozenset(
    {"list", "List", "Sequence", "set", "Set", "frozenset", "FrozenSet", "Iterable"}
)
_TUPLES = frozenset({"tuple", "Tuple"})
_DICTS = frozenset({"dict", "Dict", "Mapping"})
_ENUMS = frozenset({"Enum", "StrEnum", "IntEnum"})
_CODE = frozenset(
    {"validator", "field_validator", "model_validator", "root_validator", "computed_field"}
    | {"field_serializer", "model_serializer"}
)
_LIMITS = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "pattern": "pattern",
}
_SKIPPED_DIRS = frozenset({"config", "tests", "venv", "node_modules", "__pycache__"})
_MAX_FILES = 200
_MAX_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class ModelProblem:
    """Why a model cannot be read statically, and where (``path``, ``line``)."""

    path: Path
    line: int | None
    message: str


@dataclass(frozen=True, slots=True)
class TaskModel:
    """The class a ``@task`` method of ``crew.py`` gives its task (``task``: the key of
    ``tasks.yaml`` it reads), as ``output_pydantic`` or ``output_json`` (``kind``)."""

    task: str
    kind: OutputKind
    name: str
    path: Path
    line: int


class _Unreadable(Exception):
    def __init__(self, problem: ModelProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


@dataclass(frozen=True, slots=True)
class _Class:
    node: ast.ClassDef
    path: Path
    module: str


def crew_home(agents_path: Path) -> Path:
    """The folder of a crew's Python files: the parent of its ``config/``, else the
    folder of its ``agents.yaml``."""
    folder = agents_path.parent
    return folder.parent if folder.name == "config" else folder


def _python_files(home: Path) -> Iterator[Path]:
    """``crew.py`` first, then the other ``.py`` files of ``home`` and its subfolders."""
    found = [home / "crew.py"] if (home / "crew.py").is_file() else []
    found += sorted(p for p in home.glob("*.py") if p.name != "crew.py")
    for sub in sorted(home.iterdir()) if home.is_dir() else []:
        if sub.is_dir() and not sub.name.startswith((".", "_")) and sub.name not in _SKIPPED_DIRS:
            found += sorted(sub.glob("*.py"))
    yield from (p for p in found[:_MAX_FILES] if p.stat().st_size <= _MAX_BYTES)


def _name_of(node: ast.expr) -> str | None:
    """``Name`` -> ``Name``, ``pkg.mod.Name`` -> ``Name``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class ProjectModels:
    """The classes, imports and ``@task`` outputs of a crew's Python files, parsed once
    (never imported). ``problems`` holds files that do not parse."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.classes: dict[str, list[_Class]] = {}
        self.imports: dict[str, tuple[str, Path, int]] = {}
        self.tasks: dict[str, TaskModel] = {}
        self.problems: list[ModelProblem] = []
        self._cache: dict[str, dict[str, Any] | ModelProblem] = {}
        for path in _python_files(home):
            self._read(path)

    def _read(self, path: Path) -> None:
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            self.problems.append(ModelProblem(path, line, f"not read: {exc}"))
            return
        parts = path.relative_to(self.home.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, []).append(_Class(node, path, module))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    where = ("." * node.level) + (node.module or "")
                    self.imports.setdefault(alias.asname or alias.name, (where, path, node.lineno))
            elif isinstance(node, ast.FunctionDef) and path.name == "crew.py":
                self._task_method(node, path)

    def _task_method(self, node: ast.FunctionDef, path: Path) -> None:
        if not any(_name_of(d) == "task" for d in node.decorator_list):
            return
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and _name_of(call.func) == "Task"):
                continue
            key = node.name
            for keyword in call.keywords:
                value = keyword.value
                if keyword.arg == "config" and isinstance(value, ast.Subscript):
                    index = value.slice
                    if isinstance(index, ast.Constant) and isinstance(index.value, str):
                        key = index.value
            for keyword in call.keywords:
                name = _name_of(keyword.value)
                if keyword.arg in ("output_pydantic", "output_json") and name:
                    kind: OutputKind = (
                        "output_json" if keyword.arg == "output_json" else "output_pydantic"
                    )
                    self.tasks[key] = TaskModel(key, kind, name, path, keyword.value.lineno)

    def find(self, value: str) -> _Class | None:
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
        builder = _SchemaBuilder(self)
        try:
            root = builder.model(found)
        except _Unreadable as exc:
            return exc.problem
        if builder.defs:
            root["$defs"] = builder.defs
        return root


class _SchemaBuilder:
    """Builds one model's schema; nested models and enums go to ``defs``."""

    def __init__(self, models: ProjectModels) -> None:
        self.models = models
        self.defs: dict[str, dict[str, Any]] = {}

    def fail(self, where: _Class, node: ast.AST | None, message: str) -> _Unreadable:
        line = getattr(node, "lineno", None) or where.node.lineno
        return _Unreadable(ModelProblem(where.path, line, message))

    def is_model(self, cls: _Class, seen: frozenset[str] = frozenset()) -> bool:
        for base in cls.node.bases:
            name = _name_of(base)
            if name == "BaseModel":
                return True
            found = self.models.classes.get(name or "")
            if found and name not in seen and self.is_model(found[0], seen | {cls.node.name}):
                return True
        return False

    def is_enum(self, cls: _Class) -> bool:
        return any(_name_of(base) in _ENUMS for base in cls.node.bases)

    def model(self, cls: _Class) -> dict[str, Any]:
        """The object schema of ``cls``: its bases' fields, then its own."""
        if not self.is_model(cls):
            bases = ", ".join(ast.unparse(b) for b in cls.node.bases) or "none"
            raise self.fail(
                cls, cls.node, f"'{cls.node.name}' is not a pydantic model (bases: {bases})"
            )
        properties: dict[str, Any] = {}
        required: list[str] = []
        for base in cls.node.bases:
            name = _name_of(base)
            if name == "BaseModel":
                continue
            parent = self.models.classes.get(name or "")
            if not parent:
                raise self.fail(cls, base, f"the base '{ast.unparse(base)}' is not read")
            inherited = self.model(parent[0])
            properties.update(inherited["properties"])
            required += [r for r in inherited.get("required", []) if r not in required]
        for statement in cls.node.body:
            self.statement(cls, statement, properties, required)
        schema: dict[str, Any] = {"title": cls.node.name, "type": "object"}
        doc = ast.get_docstring(cls.node)
        if doc:
            schema["description"] = doc
        schema["properties"] = properties
        if required:
            schema["required"] = required
        return schema

    def statement(
        self, cls: _Class, node: ast.stmt, properties: dict[str, Any], required: list[str]
    ) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if _name_of(target) in _CODE:
                    raise self.fail(
                        cls,
                        decorator,
                        f"'{cls.node.name}.{node.name}' is a {_name_of(target)}: its code"
                        " would have to run",
                    )
            return
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            return
        name = node.target.id
        annotation = node.annotation
        if name.startswith("_") or name == "model_config" or _name_of(annotation) == "ClassVar":
            return
        if isinstance(annotation, ast.Subscript) and _name_of(annotation.value) == "ClassVar":
            return
        field_call: ast.Call | None = None
        if isinstance(annotation, ast.Subscript) and _name_of(annotation.value) == "Annotated":
            parts = _elements(annotation.slice)
            annotation = parts[0]
            field_call = next((p for p in parts[1:] if _is_field(p)), None)
        schema = self.type(cls, annotation)
        is_required = node.value is None
        if node.value is not None and _is_field(node.value):
            field_call, is_required = node.value, True  # Field() without a default: required
        elif node.value is not None:
            _default(node.value, schema)
        key = name
        if field_call is not None:
            key, is_required = self.field(cls, name, field_call, schema, is_required)
        properties[key] = schema
        if is_required and key not in required:
            required.append(key)

    def field(
        self, cls: _Class, name: str, call: ast.Call, schema: dict[str, Any], required: bool
    ) -> tuple[str, bool]:
        """Read ``Field(...)`` into ``schema``: the property's key and whether it is required."""
        if call.args:
            first = call.args[0]
            required = isinstance(first, ast.Constant) and first.value is Ellipsis
            if not required:
                _default(first, schema)
        key = name
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg == "default":
                required = isinstance(value, ast.Constant) and value.value is Ellipsis
                if not required:
                    _default(value, schema)
            elif keyword.arg == "default_factory":
                required = False
            elif keyword.arg in ("description", "title", "examples"):
                literal = _literal(value)
                if literal is not None:
                    schema[keyword.arg] = literal
            elif keyword.arg in ("alias", "validation_alias"):
                literal = _literal(value)
                if isinstance(literal, str):
                    key = literal
            elif keyword.arg in _LIMITS:
                literal = _literal(value)
                if literal is not None:
                    schema[_LIMITS[keyword.arg]] = literal
            elif keyword.arg in ("min_length", "max_length"):
                literal = _literal(value)
                if literal is not None:
                    at = "min" if keyword.arg == "min_length" else "max"
                    kind = "Items" if schema.get("type") == "array" else "Length"
                    schema[at + kind] = literal
        return key, required

    def type(self, cls: _Class, node: ast.expr) -> dict[str, Any]:
        """The schema of a field's annotation."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                raise self.fail(cls, node, f"the type {node.value!r} is not Python") from None
            return self.type(cls, parsed)
        if isinstance(node, ast.Constant) and node.value is None:
            return {"type": "null"}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _union([self.type(cls, node.left), self.type(cls, node.right)])
        if isinstance(node, ast.Subscript):
            return self.generic(cls, node)
        name = _name_of(node)
        if name is None:
            raise self.fail(cls, node, f"the type '{ast.unparse(node)}' cannot be read statically")
        if name in _SCALARS:
            return dict(_SCALARS[name])
        if name in _ARRAYS or name in _TUPLES:
            return {"type": "array"}
        if name in _DICTS:
            return {"type": "object"}
        return self.reference(cls, node, name)

    def generic(self, cls: _Class, node: ast.Subscript) -> dict[str, Any]:
        outer = _name_of(node.value)
        args = _elements(node.slice)
        if outer == "Optional":
            return _union([self.type(cls, args[0]), {"type": "null"}])
        if outer == "Union":
            return _union([self.type(cls, a) for a in args])
        if outer == "Literal":
            values = [_literal(a) for a in args]
            if any(v is None and not _is_none(a) for v, a in zip(values, args, strict=True)):
                raise self.fail(
                    cls, node, f"'{ast.unparse(node)}' holds values that are not literals"
                )
            return {"enum": values}
        if outer == "Annotated":
            return self.type(cls, args[0])
        if outer in _ARRAYS:
            return {"type": "array", "items": self.type(cls, args[0])}
        if outer in _TUPLES:
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return {"type": "array", "items": self.type(cls, args[0])}
            items = [self.type(cls, a) for a in args]
            return {
                "type": "array",
                "prefixItems": items,
                "minItems": len(items),
                "maxItems": len(items),
            }
        if outer in _DICTS:
            value = self.type(cls, args[1]) if len(args) == 2 else {}
            return {"type": "object", "additionalProperties": value}
        raise self.fail(cls, node, f"the type '{ast.unparse(node)}' cannot be read statically")

    def reference(self, cls: _Class, node: ast.expr, name: str) -> dict[str, Any]:
        """A class of the same files used as a type: a ``$defs`` entry and its ``$ref``."""
        found = self.models.classes.get(name)
        if not found:
            imported = self.models.imports.get(name)
            origin = f", imported from '{imported[0]}'," if imported else ""
            raise self.fail(
                cls, node, f"the type '{name}'{origin} is not a class swarm can read statically"
            )
        ref = {"$ref": f"#/$defs/{name}"}
        if name in self.defs:
            return ref
        self.defs[name] = {}  # taken before it is built: a model may refer to itself
        self.defs[name] = self.enum(found[0]) if self.is_enum(found[0]) else self.model(found[0])
        return ref

    def enum(self, cls: _Class) -> dict[str, Any]:
        values: list[Any] = []
        for statement in cls.node.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
                values.append(statement.value.value)
            elif isinstance(statement, ast.Assign):
                raise self.fail(
                    cls, statement, f"a value of the enum '{cls.node.name}' is not a literal"
                )
        return {"title": cls.node.name, "enum": values}


def _elements(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _is_field(node: ast.expr) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and _name_of(node.func) == "Field"


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


_UNREAD = object()


def _literal(node: ast.expr, otherwise: Any = None) -> Any:
    """The value of a literal expression; ``otherwise`` for any other expression."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return otherwise


def _default(node: ast.expr, schema: dict[str, Any]) -> None:
    """A literal default is kept in the schema (others only make the field optional)."""
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return
    value = _literal(node, _UNREAD)
    if value is not _UNREAD:
        schema["default"] = value


def _union(options: list[dict[str, Any]]) -> dict[str, Any]:
    flat: list[dict[str, Any]] = []
    for option in options:
        for inner in option.get("anyOf", [option]) if set(option) == {"anyOf"} else [option]:
            if inner not in flat:
                flat.append(inner)
    return flat[0] if len(flat) == 1 else {"anyOf": flat}

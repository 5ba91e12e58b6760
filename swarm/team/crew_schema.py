"""A pydantic class's JSON Schema, read from its ``ast`` (its module is never imported).

``ClassSchema`` turns a class's annotated fields into a JSON Schema: ``str``/``int``/
``float``/``bool``/``date``, ``list[...]``/``List[...]``/``set``/``tuple``, ``dict[...]``,
``Optional[X]``/``X | None``/``Union``, ``Literal[...]``, ``Annotated``, enums and other
classes it is given (as ``$defs``), ``Field(default=..., description=..., ge=...,
min_length=...)``, the class docstring as its description, and the fields of base
classes it is given. What it cannot read (a validator, an unknown type or base) raises
``Unreadable`` with a ``ModelProblem`` naming the file and line.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

__all__ = ["ClassSchema", "ModelProblem", "ParsedClass", "Unreadable", "name_of"]

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


@dataclass(frozen=True, slots=True)
class ModelProblem:
    """Why a model cannot be read statically, and where (``path``, ``line``)."""

    path: Path
    line: int | None
    message: str


class Unreadable(Exception):
    """A class that cannot be read without running code: its ``problem``."""

    def __init__(self, problem: ModelProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


@dataclass(frozen=True, slots=True)
class ParsedClass:
    """A class as parsed: its ``node``, the file it is in and that file's module name."""

    node: ast.ClassDef
    path: Path
    module: str


def name_of(node: ast.expr) -> str | None:
    """``Name`` -> ``Name``, ``pkg.mod.Name`` -> ``Name``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class ClassSchema:
    """Builds one model's schema from the ``classes`` of its files (by name) and the
    names they ``imports`` (name: module, file, line); nested models and enums go to
    ``defs``."""

    def __init__(
        self,
        classes: Mapping[str, Sequence[ParsedClass]],
        imports: Mapping[str, tuple[str, Path, int]],
    ) -> None:
        self.classes = classes
        self.imports = imports
        self.defs: dict[str, dict[str, Any]] = {}

    def fail(self, where: ParsedClass, node: ast.AST | None, message: str) -> Unreadable:
        line = getattr(node, "lineno", None) or where.node.lineno
        return Unreadable(ModelProblem(where.path, line, message))

    def is_model(self, cls: ParsedClass, seen: frozenset[str] = frozenset()) -> bool:
        for base in cls.node.bases:
            name = name_of(base)
            if name == "BaseModel":
                return True
            found = self.classes.get(name or "")
            if found and name not in seen and self.is_model(found[0], seen | {cls.node.name}):
                return True
        return False

    def is_enum(self, cls: ParsedClass) -> bool:
        return any(name_of(base) in _ENUMS for base in cls.node.bases)

    def model(self, cls: ParsedClass, below: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The object schema of ``cls``: its bases' fields, then its own (``below``: the
        classes that inherit from it on the way here)."""
        if cls.node.name in below:
            raise self.fail(cls, cls.node, f"'{cls.node.name}' inherits from itself")
        if not self.is_model(cls):
            bases = ", ".join(ast.unparse(b) for b in cls.node.bases) or "none"
            raise self.fail(
                cls, cls.node, f"'{cls.node.name}' is not a pydantic model (bases: {bases})"
            )
        properties: dict[str, Any] = {}
        required: list[str] = []
        for base in cls.node.bases:
            name = name_of(base)
            if name == "BaseModel":
                continue
            parent = self.classes.get(name or "")
            if not parent:
                raise self.fail(cls, base, f"the base '{ast.unparse(base)}' is not read")
            inherited = self.model(parent[0], below | {cls.node.name})
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
        self, cls: ParsedClass, node: ast.stmt, properties: dict[str, Any], required: list[str]
    ) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if name_of(target) in _CODE:
                    raise self.fail(
                        cls,
                        decorator,
                        f"'{cls.node.name}.{node.name}' is a {name_of(target)}: its code"
                        " would have to run",
                    )
            return
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            return
        name = node.target.id
        annotation = node.annotation
        if name.startswith("_") or name == "model_config" or name_of(annotation) == "ClassVar":
            return
        if isinstance(annotation, ast.Subscript) and name_of(annotation.value) == "ClassVar":
            return
        field_call: ast.Call | None = None
        if isinstance(annotation, ast.Subscript) and name_of(annotation.value) == "Annotated":
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
        self, cls: ParsedClass, name: str, call: ast.Call, schema: dict[str, Any], required: bool
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

    def type(self, cls: ParsedClass, node: ast.expr) -> dict[str, Any]:
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
        name = name_of(node)
        if name is None:
            raise self.fail(cls, node, f"the type '{ast.unparse(node)}' cannot be read statically")
        if name in _SCALARS:
            return dict(_SCALARS[name])
        if name in _ARRAYS or name in _TUPLES:
            return {"type": "array"}
        if name in _DICTS:
            return {"type": "object"}
        return self.reference(cls, node, name)

    def generic(self, cls: ParsedClass, node: ast.Subscript) -> dict[str, Any]:
        outer = name_of(node.value)
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

    def reference(self, cls: ParsedClass, node: ast.expr, name: str) -> dict[str, Any]:
        """A class of the same files used as a type: a ``$defs`` entry and its ``$ref``."""
        found = self.classes.get(name)
        if not found:
            imported = self.imports.get(name)
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

    def enum(self, cls: ParsedClass) -> dict[str, Any]:
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
    return isinstance(node, ast.Call) and name_of(node.func) == "Field"


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

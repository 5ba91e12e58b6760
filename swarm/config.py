"""Reading configuration files (roles, policies, scenarios) with located errors.

``load_document`` parses YAML, JSON, TOML or Markdown with YAML front matter and remembers
the line of every key; ``validate_document`` checks the data with a pydantic model and turns
each problem into a ``ConfigError`` naming the file, the line and the field.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import pydantic
import yaml

from swarm.errors import ConfigError

__all__ = [
    "Document",
    "did_you_mean",
    "load_document",
    "parse_document",
    "salvage_document",
    "validate_document",
    "without_keys",
]

M = TypeVar("M", bound=pydantic.BaseModel)
Key = tuple[str | int, ...]

FORMATS = {
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".toml": "toml",
    ".md": "markdown",
    ".markdown": "markdown",
}


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its data, where each key stands, and (Markdown) the body text."""

    path: Path
    data: Any
    lines: Mapping[Key, int] = field(default_factory=dict)
    body: str | None = None

    def line_of(self, key: Key) -> int | None:
        """The line of ``key`` (or of its nearest enclosing key); None when unknown."""
        while True:
            if key in self.lines:
                return self.lines[key]
            if not key:
                return None
            key = key[:-1]


def _yaml_lines(node: yaml.Node | None, prefix: Key, out: dict[Key, int]) -> None:
    if node is None:
        return
    out.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*prefix, str(key_node.value))
            out[key] = key_node.start_mark.line + 1
            _yaml_lines(value_node, key, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _yaml_lines(item, (*prefix, i), out)


# libyaml's parser when PyYAML was built with it (about ten times faster), else Python's.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse_yaml(text: str, path: Path, offset: int = 0) -> tuple[Any, dict[Key, int]]:
    loader = _SafeLoader(text)
    try:
        node = loader.get_single_node()  # parsed once: the data is built from the node
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark is not None else None
        raise ConfigError(f"invalid YAML: {exc.problem or exc}", path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", path=path) from None
    finally:
        loader.dispose()
    lines: dict[Key, int] = {}
    _yaml_lines(node, (), lines)
    return data, {k: v + offset for k, v in lines.items()}


def _text_lines(text: str, data: Any, pattern: str) -> dict[Key, int]:
    """Best-effort key lines for JSON and TOML: the first line naming each top-level key."""
    lines: dict[Key, int] = {}
    if not isinstance(data, dict):
        return lines
    numbered = text.splitlines()
    for key in data:
        regex = re.compile(pattern.format(key=re.escape(str(key))))
        for number, line in enumerate(numbered, start=1):
            if regex.search(line):
                lines[(str(key),)] = number
                break
    return lines


def parse_document(text: str, path: str | Path, fmt: str | None = None) -> Document:
    """Parse ``text`` as the format of ``path`` (or ``fmt``). Raises ``ConfigError``."""
    path = Path(path)
    fmt = fmt or FORMATS.get(path.suffix.lower())
    if fmt == "yaml":
        data, lines = _parse_yaml(text, path)
        return Document(path, data, lines)
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
        return Document(path, data, _text_lines(text, data, r'"{key}"\s*:'))
    if fmt == "toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            found = re.search(r"line (\d+)", str(exc))
            line = int(found.group(1)) if found else None
            raise ConfigError(f"invalid TOML: {exc}", path=path, line=line) from None
        return Document(path, data, _text_lines(text, data, r"^\s*\[?\s*{key}\s*[=\]]"))
    if fmt == "markdown":
        return _parse_markdown(text, path)
    known = ", ".join(sorted(FORMATS))
    raise ConfigError(f"unsupported file type '{path.suffix}' (known: {known})", path=path)


def _parse_markdown(text: str, path: Path) -> Document:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Document(path, {}, {}, text.strip())
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        raise ConfigError("front matter opened with '---' is never closed", path=path, line=1)
    data, key_lines = _parse_yaml("".join(lines[1:end]), path, offset=1)
    body = "".join(lines[end + 1 :]).strip()
    return Document(path, {} if data is None else data, key_lines, body)


def load_document(path: str | Path) -> Document:
    """Read and parse a file. Raises ``ConfigError`` (never ``OSError``) naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path=path) from None
    return parse_document(text, path)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the choice closest to ``word``, or ``""``."""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _models_in(annotation: Any) -> list[type[pydantic.BaseModel]]:
    """The pydantic models an annotation holds (through unions, lists, tuples, dicts)."""
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    origin = get_origin(annotation)
    if origin is None:
        return []
    args = get_args(annotation)
    if origin is dict or (isinstance(origin, type) and issubclass(origin, Mapping)):
        args = args[1:]
    if origin not in (Union, types.UnionType) and origin not in (list, tuple, dict):
        args = args[:1]  # Annotated[X, ...] and the like
    return [model for arg in args for model in _models_in(arg)]


def _fields_at(model: type[pydantic.BaseModel], loc: Key) -> set[str]:
    """The field names (and aliases) of the model(s) that ``loc`` points into."""
    models = [model]
    for part in loc:
        if isinstance(part, int):
            continue
        following: list[type[pydantic.BaseModel]] = []
        for current in models:
            found = current.model_fields.get(part)
            if found is not None:
                following += _models_in(found.annotation)
            elif part == current.__name__:  # a union member's tag in pydantic's loc
                following.append(current)
        if following:
            models = following
    names: set[str] = set()
    for current in models:
        for name, info in current.model_fields.items():
            names.add(name)
            if isinstance(info.alias, str):
                names.add(info.alias)
    return names


_SHOWN_FIELDS = 8
"""An unknown field's message lists the known ones only when there are this few."""

# pydantic names the member of a union it tried in an error's location: `str`,
# `list[str]`, `function-after[...]`, or a model's class name (checked separately)
_TAG = re.compile(
    r"((constrained-)?(str|int|float|bool)|none|(list|dict|tuple|set|literal|function-\w+)\[.*\])"
)


def _model_names(model: type[pydantic.BaseModel], seen: set[str] | None = None) -> set[str]:
    """The class names of ``model`` and of every model its fields hold."""
    seen = set() if seen is None else seen
    if model.__name__ not in seen:
        seen.add(model.__name__)
        for info in model.model_fields.values():
            for inner in _models_in(info.annotation):
                _model_names(inner, seen)
    return seen


def _union_tag(part: str | int, names: set[str]) -> bool:
    return isinstance(part, str) and (part in names or _TAG.fullmatch(part) is not None)


def _user_errors(
    errors: list[Any], model: type[pydantic.BaseModel]
) -> list[tuple[Key, dict[str, Any]]]:
    """pydantic's errors as the user's file has them: the union members pydantic tried
    taken out of each location, a member's "not this type" error dropped when another
    member of that union got further into the value (``model: {script: ...}`` is a
    script with a typo, not a string), and the duplicates that leaves removed."""
    names = _model_names(model)
    foreign = _foreign_members(errors, model, names)
    found: list[tuple[Key, Key | None, bool, dict[str, Any]]] = []
    further: set[Key] = set()  # unions a member of which got further into the value
    for error in errors:
        raw = tuple(p for p in error["loc"] if isinstance(p, str | int))
        tags = [i for i, p in enumerate(raw) if _union_tag(p, names)]
        if any(raw[: i + 1] in foreign for i in tags):
            continue  # a member the value has nothing of: its errors are beside the point
        plain = tuple(p for i, p in enumerate(raw) if i not in tags)
        union = raw[: tags[-1]] if tags else None  # where the innermost union's value is
        whole = bool(tags) and tags[-1] == len(raw) - 1  # "the value is not this member"
        further.update(raw[:i] for i in tags if i < len(raw) - 1)
        found.append((plain, union, whole, error))
    kept: list[tuple[Key, dict[str, Any]]] = []
    seen: set[tuple[Key, str]] = set()
    meant = _meant_fields(found, model)
    for plain, union, whole, error in found:
        if whole and union in further:
            continue  # another member of this union got further into the value
        if error["type"] == "missing" and plain in meant:
            continue  # the field is there, misspelt: said once, by the unknown field
        key = (plain, _describe(error, model, plain))
        if key not in seen:
            seen.add(key)
            kept.append((plain, error))
    return kept


def _foreign_members(
    errors: list[Any], model: type[pydantic.BaseModel], names: set[str]
) -> set[Key]:
    """The union members (as their location with the member's tag last) that a mapping
    matched none of the fields of, when another member of that union matched better: a
    ``task:`` written as a mapping is "not a string", not every one of its keys unknown
    to ``{command: ..., args: ...}``."""
    groups: dict[Key, list[dict[str, Any]]] = {}
    for error in errors:
        raw = tuple(p for p in error["loc"] if isinstance(p, str | int))
        for i, part in enumerate(raw):
            if _union_tag(part, names):
                groups.setdefault(raw[: i + 1], []).append(error)
    foreign: set[Key] = set()
    for member, found in groups.items():
        shallow = all(
            e["type"] in ("extra_forbidden", "missing") and len(e["loc"]) == len(member) + 1
            for e in found
        )
        given = next((e["input"] for e in found if e["type"] == "missing"), None)
        if shallow and isinstance(given, dict) and not set(given) & _fields_at(model, member):
            foreign.add(member)
    # a union all of whose members are foreign keeps them: something must be said
    kept = {m[:-1] for m in groups if m not in foreign}
    return {m for m in foreign if m[:-1] in kept}


def _meant_fields(
    found: list[tuple[Key, Key | None, bool, dict[str, Any]]], model: type[pydantic.BaseModel]
) -> set[Key]:
    """Where the fields that unknown fields beside them were meant to be stand
    (``model.scrpt`` -> ``model.script``)."""
    meant: set[Key] = set()
    for plain, _, _, error in found:
        if error["type"] == "extra_forbidden" and plain:
            close = difflib.get_close_matches(
                str(plain[-1]), sorted(_fields_at(model, plain[:-1])), n=1
            )
            meant.update((*plain[:-1], name) for name in close)
    return meant


def _describe(error: Mapping[str, Any], model: type[pydantic.BaseModel], loc: Key) -> str:
    kind = error["type"]
    if kind == "model_type":
        return f"expected a mapping of fields (got {_got(error.get('input'))})"
    if kind == "extra_forbidden":
        fields = _fields_at(model, loc[:-1])
        hint = did_you_mean(str(loc[-1]), fields) if loc else ""
        shown = not hint and 0 < len(fields) <= _SHOWN_FIELDS
        known = f" (fields: {', '.join(sorted(fields))})" if shown else ""
        return f"unknown field{hint}{known}"
    if kind == "missing":
        return "required field is missing"
    message = str(error["msg"])
    if kind.startswith("value_error"):
        message = message.removeprefix("Value error, ")
    return (
        f"{message} (got {_got(error['input'])})"
        if "input" in error and kind != "model_type"
        else message
    )


_SHOWN_INPUT = 60
"""A value in a message longer than this is described, not quoted (no dumps of a
whole script or mapping)."""


def _got(value: Any) -> str:
    """The value a field got, as a message shows it: quoted when short, else its kind
    and size."""
    shown = repr(value)
    if len(shown) <= _SHOWN_INPUT:
        return shown
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key{'s' if len(value) != 1 else ''}"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    return shown[: _SHOWN_INPUT - 3] + "..."


def validate_document(model: type[M], document: Document, data: Any = None) -> M:
    """Validate ``data`` (default: the document's data) with ``model``.

    Raises ``ConfigError`` for the first problem, with every problem in ``.problems``
    and all of them in its message, each naming file, line and field.
    """
    data = document.data if data is None else data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of fields, found {type(data).__name__}", path=document.path, line=1
        )
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = []
        for loc, error in _user_errors(exc.errors(include_url=False), model):
            field_name = ".".join(str(p) for p in loc) or None
            problems.append(
                ConfigError(
                    _describe(error, model, loc),
                    path=document.path,
                    line=document.line_of(loc),
                    field=field_name,
                )
            )
        raise ConfigError.collect(problems) from None


def without_keys(
    document: Document, problems: Iterable[ConfigError], *, fill: Mapping[str, Any] | None = None
) -> Document | None:
    """The document without the top-level keys ``problems`` name (``fill`` gives stand-ins
    for required ones), so the checks that follow can run on what is right; ``None`` when
    a problem names no field (nothing can be salvaged)."""
    data = document.data
    bad = set()
    for problem in problems:
        if not problem.field or problem.path not in (None, str(document.path)):
            return None
        bad.add(problem.field.split(".", 1)[0])
    if not isinstance(data, dict):
        return None
    kept = {k: v for k, v in data.items() if k not in bad}
    for key, value in (fill or {}).items():
        kept.setdefault(key, value)
    return Document(document.path, kept, document.lines, document.body)


def salvage_document(
    model: type[M], document: Document, *, fill: Mapping[str, Any] | None = None
) -> tuple[M | None, list[ConfigError]]:
    """Validate like ``validate_document``, but keep going: every problem, and the model
    built from what is left once the top-level keys with problems are dropped (see
    ``without_keys``). The model is ``None`` when nothing can be built.

    ``swarm validate`` uses it so that later checks (the delegation graph, policy names)
    still run on the parts of a file that are right.
    """
    try:
        return validate_document(model, document), []
    except ConfigError as exc:
        problems = list(exc.problems)
    rest = without_keys(document, problems, fill=fill)
    if rest is None:
        return None, problems
    try:
        return validate_document(model, rest), problems
    except ConfigError:
        return None, problems

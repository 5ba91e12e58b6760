"""Reading configuration files (roles, policies, scenarios) with located errors.

``load_document`` parses YAML, JSON, TOML or Markdown with YAML front matter and remembers
the line of every key; ``validate_document`` checks the data with a pydantic model and turns
each problem into a ``ConfigError`` naming the file, the line and the field.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pydantic
import yaml

from swarm.errors import ConfigError

__all__ = ["Document", "load_document", "parse_document", "validate_document"]

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


def _parse_yaml(text: str, path: Path, offset: int = 0) -> tuple[Any, dict[Key, int]]:
    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark is not None else None
        raise ConfigError(f"invalid YAML: {exc.problem or exc}", path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", path=path) from None
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


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field (check its spelling)"
    if kind == "missing":
        return "required field is missing"
    message = str(error["msg"])
    if kind.startswith("value_error"):
        message = message.removeprefix("Value error, ")
    return (
        f"{message} (got {error['input']!r})"
        if "input" in error and kind != "model_type"
        else message
    )


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
        for error in exc.errors(include_url=False):
            loc: Key = tuple(p for p in error["loc"] if isinstance(p, str | int))
            field_name = ".".join(str(p) for p in loc) or None
            problems.append(
                ConfigError(
                    _describe(error),
                    path=document.path,
                    line=document.line_of(loc),
                    field=field_name,
                )
            )
        raise ConfigError.collect(problems) from None

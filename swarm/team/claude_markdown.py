"""Claude Code's Markdown files (agents, skills, commands) read as Claude Code reads them.

The front matter is YAML when YAML can parse it, else ``key: value`` lines with indented
lines continuing the value (what Claude Code accepts: ``tools: *``, an unquoted
``Examples:`` inside a description), closed by a line of three or more dashes. A file
that does not open with ``---`` has no front matter: all of it is the body.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from swarm.config import Document, parse_document
from swarm.errors import ConfigError

__all__ = ["Key", "located", "read_markdown", "slug"]

Key = tuple[str | int, ...]
"""A place in a parsed file: its keys (and list indexes) from the top."""

_NUMBERS = frozenset({"maxTurns", "max_iterations"})
_CLOSING = re.compile(r"-{3,}\s*")
_KEY_LINE = re.compile(r"([A-Za-z_][\w.-]*)\s*:(?:\s+(.*))?")


def slug(name: str) -> str:
    """``name`` made into a role name (``Issue Planner`` -> ``issue-planner``);
    ``""`` when nothing of it is left."""
    text = re.sub(r"[^A-Za-z0-9_-]+", "-", name.strip().lower()).strip("-")
    return re.sub(r"-{2,}", "-", text)[:64]


def located(path: Path, line: int | None, message: str, key: str | None = None) -> str:
    """``message`` as a warning naming the file, line and field."""
    return str(ConfigError(message, path=path, line=line, field=key))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _lenient(lines: list[str], offset: int) -> tuple[dict[str, Any], dict[Key, int]]:
    """Top-level ``key: value`` lines; indented (or unkeyed) lines continue the value."""
    data: dict[str, Any] = {}
    where: dict[Key, int] = {}
    parts: dict[str, list[str]] = {}
    current: str | None = None
    for number, line in enumerate(lines, start=offset + 1):
        text = line.rstrip("\r\n")
        if text.startswith("#"):
            continue  # a comment, as in YAML
        if not text.strip():
            if current is not None:
                parts[current].append("")
            continue
        match = None if text[:1].isspace() else _KEY_LINE.fullmatch(text)
        if match is None:
            if current is not None:
                parts[current].append(text.strip())
            continue
        current = match[1]
        parts[current] = [(match[2] or "").strip()]
        where[(current,)] = number
    for key, chunk in parts.items():
        first, rest = chunk[0], chunk[1:]
        while rest and not rest[-1]:
            rest.pop()
        if not first and rest and all(r.startswith("- ") for r in rest if r):
            data[key] = [_unquote(r[2:].strip()) for r in rest if r]
            continue
        if first in ("|", "|-", "|+", ">", ">-", ">+"):
            joiner = "\n" if first.startswith("|") else " "
            data[key] = joiner.join(rest).strip()
            continue
        value = _unquote("\n".join([first, *rest]).strip() if rest else first)
        if value.startswith("[") and value.endswith("]"):  # a flow list: [Read, Grep]
            data[key] = [_unquote(v.strip()) for v in value[1:-1].split(",") if v.strip()]
        elif key in _NUMBERS and value.isdigit():
            data[key] = int(value)
        else:
            data[key] = value
    return data, where


def read_markdown(content: str, path: Path) -> tuple[Document, list[str]]:
    """Parse a Markdown role: front matter (YAML, else the lenient reading) and body.

    A file that does not open with ``---`` has no front matter: the whole of it is the
    body, and the role is named after the file (a warning says so). Returns the document
    and its warnings. Raises ``ConfigError`` when the front matter is never closed.
    """
    lines = content.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        message = "no front matter: the whole file is the prompt, the role is named after the file"
        return Document(path, {}, {}, "".join(lines).strip()), [located(path, 1, message)]
    end = next((i for i in range(1, len(lines)) if _CLOSING.fullmatch(lines[i].strip())), None)
    if end is None:
        raise ConfigError("front matter opened with '---' is never closed", path=path, line=1)
    front = lines[1:end]
    body = "".join(lines[end + 1 :]).strip()
    warnings: list[str] = []
    try:
        parsed = parse_document("".join(front), path, "yaml")
        data = {} if parsed.data is None else parsed.data
        where = {key: line + 1 for key, line in parsed.lines.items()}
    except ConfigError as exc:
        data, where = _lenient(front, 1)
        warnings.append(
            located(
                path,
                exc.line + 1 if exc.line is not None else None,
                f"the front matter is not valid YAML ({exc.message}); read as Claude Code"
                " reads it: one 'key: value' per line, indented lines continuing the value",
            )
        )
    return Document(path, data, where, body), warnings

"""Markdown roles read the way Claude Code reads its sub-agent files.

A ``.claude/agents/*.md`` file runs as it is: its front matter is read as Claude Code
reads it (``swarm.team.claude_markdown``), then ``claude_fields`` turns Claude Code's
fields into swarm's: its tools and ``permissions`` as ``swarm.team.claude_tools`` maps
them; Claude Code's display and runtime keys are ignored, its unsupported features warned
about (hook commands are never run), other spellings of its keys (``allowed_tools``,
``permission-mode``) read as its own, other unknown keys are warnings unless they are
close to a real field (a typo stays an error).

Every change is reported as a warning naming the file and line, kept on the ``AgentSpec``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from swarm.config import Document
from swarm.errors import ConfigError
from swarm.team.claude_markdown import Key, located, read_markdown, slug
from swarm.team.claude_tools import (
    CLAUDE_TOOLS,
    WHOLE_TOOLBOX,
    ClaudeFields,
    fill_tools,
    permission_mode,
)
from swarm.team.spec import ALIASES, FIELD_NAMES, NAME_PATTERN

__all__ = [
    "CLAUDE_KEYS",
    "CLAUDE_TOOLS",
    "WHOLE_TOOLBOX",
    "ClaudeFields",
    "claude_fields",
    "read_markdown",
    "slug",
]

IGNORED = frozenset({"color", "effort", "background", "isolation"})
# Keys people write in agent files that Claude Code itself ignores (catalogue metadata):
# accepted, with one warning each saying they mean nothing to swarm.
METADATA = frozenset(
    {"version", "author", "tags", "category", "license", "metadata", "examples", "when_to_use"}
)
# Other spellings of Claude Code's own keys, read as those keys.
SPELLINGS: Mapping[str, str] = {
    "allowed_tools": "allowed-tools",
    "allowedTools": "allowed-tools",
    "permission-mode": "permissionMode",
    "permission_mode": "permissionMode",
    "disallowed-tools": "disallowedTools",
    "disallowed_tools": "disallowedTools",
}
UNSUPPORTED = {
    "hooks": "not supported, ignored (its commands are never run)",
    "mcpServers": "not supported, ignored (declare MCP servers for the team)",
    "memory": "not supported, ignored",
}
CLAUDE_KEYS = frozenset(
    {"tools", "disallowedTools", "allowed-tools", "permissionMode", "maxTurns", "permissions"}
    | {"skills"}
    | IGNORED
    | METADATA
    | set(SPELLINGS)
    | set(UNSUPPORTED)
)
_MODE = "permissionMode"
_NAME = re.compile(NAME_PATTERN)


def _other_key(key: str, line: int | None, out: ClaudeFields) -> None:
    path = out.path
    if key in IGNORED:
        return
    if key in METADATA:
        message = "Claude Code ignores it and it means nothing to swarm: ignored"
        out.warnings.append(located(path, line, message, key))
        return
    if key in UNSUPPORTED:
        out.warnings.append(located(path, line, UNSUPPORTED[key], key))
        return
    known = sorted(FIELD_NAMES | set(ALIASES) | CLAUDE_KEYS)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    if close:
        out.problems.append(
            ConfigError(
                f"unknown field; did you mean '{close[0]}'?", path=path, line=line, field=key
            )
        )
    else:
        out.warnings.append(located(path, line, "unknown field, ignored", key))


def _name(value: Any, line: int | None, out: ClaudeFields) -> None:
    if not isinstance(value, str) or _NAME.fullmatch(value):
        out.data["name"] = value
        return
    made = slug(value)
    if not made:
        out.data["name"] = value  # RoleFile reports it
        return
    out.data["name"] = made
    message = f"'{value}' cannot name a tool; the role is named '{made}'"
    out.warnings.append(located(out.path, line, message, "name"))


def _spelled(data: Mapping[str, Any], where: dict[Key, int], out: ClaudeFields) -> dict[str, Any]:
    """``data`` with other spellings of Claude Code's keys (``allowed_tools``,
    ``permission-mode``) read as its own; both spellings is an error."""
    result: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key)
        canonical = SPELLINGS.get(key)
        if canonical is None:
            result[key] = value
            continue
        line = where.get((key,))
        if canonical in data:
            message = f"'{key}' and '{canonical}' are the same setting; keep one"
            out.problems.append(ConfigError(message, path=out.path, line=line, field=key))
            continue
        out.spelled[canonical] = key  # read silently: warnings name the key as written
        result[canonical] = value
        for place, number in list(where.items()):
            if place and place[0] == key:
                where[(canonical, *place[1:])] = number
    return result


def claude_fields(document: Document, warnings: Iterable[str] = ()) -> ClaudeFields:
    """Translate a Markdown role's front matter into swarm's fields (see the module)."""
    where: dict[Key, int] = dict(document.lines)
    out = ClaudeFields(document.path, document.body, warnings=list(warnings))
    if not isinstance(document.data, dict):
        out.data, out.lines = document.data, where  # RoleFile reports that it is not a mapping
        return out
    data = _spelled(document.data, where, out)
    out.lines = {k: v for k, v in where.items() if k and k[0] != "tools"}
    for key, value in data.items():
        line = where.get((key,))
        if key in ("tools", "allowed-tools", "disallowedTools", "permissions"):
            if key == "permissions" and not isinstance(value, dict):
                message = "expected a mapping of 'allow' and 'deny' lists"
                out.problems.append(ConfigError(message, path=out.path, line=line, field=key))
            continue
        if key == "name":
            _name(value, line, out)
        elif key == "permissionMode":
            permission_mode(value, data, line, out)
        elif key in FIELD_NAMES or key in ALIASES:
            out.data[key] = value
        else:
            _other_key(key, line, out)
    fill_tools(data, where, out)
    tools_line = where.get(("tools",), where.get(("allowed-tools",)))
    if tools_line is not None:
        out.lines[("tools",)] = tools_line
    return out

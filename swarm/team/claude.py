"""Markdown roles read the way Claude Code reads its sub-agent files.

A ``.claude/agents/*.md`` file runs as it is: its front matter is YAML when YAML can parse
it, else ``key: value`` lines with indented lines continuing the value (what Claude Code
accepts: ``tools: *``, an unquoted ``Examples:`` inside a description), closed by a line of
three or more dashes. ``claude_fields`` then turns Claude Code's fields into swarm's:

- tool names map to the toolbox (``Read`` -> ``read_file``, ``Bash`` -> ``shell``, ...);
  ``Bash(git log:*)`` gives ``shell`` limited to commands starting with ``git log``;
  ``mcp__server__tool`` becomes the optional entry ``mcp:server/tool``; tools with no
  equivalent (``WebFetch``, ``Task``) are dropped with a warning;
- no ``tools`` key, or ``*``, means the whole toolbox; ``disallowedTools`` removes tools;
- ``permissionMode: plan`` gives the ``readonly`` policy;
- Claude Code's display and runtime keys are ignored, its unsupported features warned
  about (hook commands are never run), other unknown keys are warnings unless they are
  close to a real field (a typo stays an error).

Every change is reported as a warning naming the file and line, kept on the ``AgentSpec``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm.config import Document, parse_document
from swarm.errors import ConfigError
from swarm.team.spec import ALIASES, FIELD_NAMES, NAME_PATTERN
from swarm.toolbox import TOOL_NAMES

__all__ = [
    "CLAUDE_TOOLS",
    "WHOLE_TOOLBOX",
    "ClaudeFields",
    "claude_fields",
    "read_markdown",
    "slug",
]

Key = tuple[str | int, ...]

CLAUDE_TOOLS: Mapping[str, str] = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "NotebookEdit": "edit_file",
    "Bash": "shell",
    "Grep": "search",
    "Glob": "list_files",
    "LS": "list_files",
    "TodoWrite": "todo",
    "AskUserQuestion": "ask_user",
}
"""Claude Code's tool names and the toolbox tool each one becomes."""

# Claude Code tools swarm has no equivalent of: dropped with a warning naming them.
NO_EQUIVALENT = frozenset(
    {
        "WebFetch",
        "WebSearch",
        "Task",
        "Agent",
        "NotebookRead",
        "BashOutput",
        "KillShell",
        "KillBash",
        "ExitPlanMode",
        "SlashCommand",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "TaskOutput",
        "TaskStop",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskUpdate",
        "EnterPlanMode",
        "EnterWorktree",
        "ExitWorktree",
        "LSP",
        "ToolSearch",
        "MCPSearch",
        "Computer",
    }
)

WHOLE_TOOLBOX = TOOL_NAMES
"""What a role without ``tools`` (or with ``*``) gets: every built-in tool, each dropped
when the toolbox in use lacks it."""

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
_NUMBERS = frozenset({"maxTurns", "max_iterations"})
_CLOSING = re.compile(r"-{3,}\s*")
_KEY_LINE = re.compile(r"([A-Za-z_][\w.-]*)\s*:(?:\s+(.*))?")
_PATTERN = re.compile(r"(\w+)\((.*)\)", re.DOTALL)
_NAME = re.compile(NAME_PATTERN)


def slug(name: str) -> str:
    """``name`` made into a role name (``Issue Planner`` -> ``issue-planner``);
    ``""`` when nothing of it is left."""
    text = re.sub(r"[^A-Za-z0-9_-]+", "-", name.strip().lower()).strip("-")
    return re.sub(r"-{2,}", "-", text)[:64]


def _where(path: Path, line: int | None, message: str, key: str | None = None) -> str:
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
        return Document(path, {}, {}, "".join(lines).strip()), [_where(path, 1, message)]
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
            _where(
                path,
                exc.line + 1 if exc.line is not None else None,
                f"the front matter is not valid YAML ({exc.message}); read as Claude Code"
                " reads it: one 'key: value' per line, indented lines continuing the value",
            )
        )
    return Document(path, data, where, body), warnings


@dataclass
class ClaudeFields:
    """A Markdown role's fields in swarm's terms, and what changed on the way.

    ``document`` holds only fields ``RoleFile`` knows; ``optional_tools`` are entries
    dropped when the toolbox lacks them; ``shell_commands`` limit the role's ``shell``
    (empty: no limit); ``warnings`` are located messages; ``problems`` are errors.
    """

    path: Path
    body: str | None
    data: Any = field(default_factory=dict)
    lines: dict[Key, int] = field(default_factory=dict)
    optional_tools: set[str] = field(default_factory=set)
    shell_commands: list[str] = field(default_factory=list)
    shell_denied: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    spelled: dict[str, str] = field(default_factory=dict)
    problems: list[ConfigError] = field(default_factory=list)

    @property
    def document(self) -> Document:
        """The translated front matter as a document ``role_spec`` validates."""
        return Document(self.path, self.data, dict(self.lines), self.body)


def _entries(value: Any) -> list[Any] | None:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return value
    return None


class _Tools:
    """Collects a role's tools from its ``tools`` entries."""

    def __init__(self, out: ClaudeFields, path: Path) -> None:
        self.out, self.path = out, path
        self.names: list[str] = []
        self.lines: list[int | None] = []
        self.prefixes: list[str] = []
        self.allowed_prefixes: list[str] = []
        self.denied_prefixes: list[str] = []
        self.plain_shell = False

    def add(self, name: str, line: int | None, *, optional: bool = False) -> None:
        if name in self.names:
            return
        self.names.append(name)
        self.lines.append(line)
        if optional:
            self.out.optional_tools.add(name)

    def warn(self, line: int | None, message: str) -> None:
        self.out.warnings.append(_where(self.path, line, message, "tools"))

    def entry(self, raw: str, line: int | None) -> None:
        text = raw.strip()
        if text == "*":
            for name in WHOLE_TOOLBOX:
                self.add(name, line, optional=True)
            return
        if text.startswith("mcp__"):
            server, _, tool = text[len("mcp__") :].partition("__")
            self.add(f"mcp:{server}/{tool}" if tool else f"mcp:{server}", line, optional=True)
            return
        pattern = _PATTERN.fullmatch(text)
        base = pattern[1] if pattern else text
        if base in NO_EQUIVALENT:
            self.warn(line, f"Claude Code's '{text}' has no equivalent in swarm: dropped")
            return
        mapped = CLAUDE_TOOLS.get(base)
        if pattern is None:
            if mapped == "shell":
                self.plain_shell = True
            self.add(mapped or text, line)
            return
        if mapped is None:
            self.add(text, line)  # not a Claude tool: reported as an unknown tool
            return
        if mapped == "shell":
            inner = pattern[2].strip()
            for suffix in (":*", " *"):
                inner = inner.removesuffix(suffix)
            if not inner.strip():
                self.warn(line, f"'{text}' names no command: dropped")
                return
            self.prefixes.append(inner)
        else:
            self.warn(
                line,
                f"the pattern of '{text}' is not enforced: '{mapped}' is limited by the"
                " role's policy",
            )
        self.add(mapped, line)


def _tools(data: Mapping[str, Any], where: Mapping[Key, int], out: ClaudeFields) -> None:
    """Fill ``tools`` (and shell limits) from ``tools``/``allowed-tools``/``disallowedTools``."""
    path = out.path
    key = "tools" if "tools" in data else "allowed-tools" if "allowed-tools" in data else None
    collected = _Tools(out, path)
    if key is None:
        for name in WHOLE_TOOLBOX:
            collected.add(name, None, optional=True)
    else:
        if key == "allowed-tools":
            written = out.spelled.get(key, key)
            message = "read as 'tools' (a slash-command field)"
            out.warnings.append(_where(path, where.get((key,)), message, written))
        entries = _entries(data[key])
        if entries is None or not all(isinstance(e, str) for e in entries):
            out.data["tools"] = data[key]  # RoleFile reports the type
            return
        for index, entry in enumerate(entries):
            collected.entry(entry, where.get((key, index), where.get((key,))))
    removed = _entries(data.get("disallowedTools")) or []
    for entry in removed:
        _remove(str(entry), where.get(("disallowedTools",)), "disallowedTools", collected)
    permissions = data.get("permissions")
    if isinstance(permissions, dict):
        _permissions(permissions, where, collected)
    narrowed = collected.allowed_prefixes or (
        collected.prefixes if not collected.plain_shell else []
    )
    if narrowed and "shell" in collected.names:
        out.shell_commands = narrowed
    if collected.denied_prefixes and "shell" in collected.names:
        out.shell_denied = collected.denied_prefixes
    out.data["tools"] = collected.names
    for index, line in enumerate(collected.lines):
        if line is not None:
            out.lines[("tools", index)] = line


def _tool_name(base: str) -> str:
    """The swarm tool a Claude Code tool name (or ``mcp__server__tool``) stands for."""
    if base.startswith("mcp__"):
        server, _, tool = base[len("mcp__") :].partition("__")
        return f"mcp:{server}/{tool}" if tool else f"mcp:{server}"
    return CLAUDE_TOOLS.get(base, base)


def _command(inner: str) -> str:
    """``git log:*`` (Claude Code's prefix pattern) as the prefix ``git log``."""
    inner = inner.strip()
    for suffix in (":*", " *", "*"):
        inner = inner.removesuffix(suffix)
    return inner.strip()


def _remove(entry: str, line: int | None, key: str, collected: _Tools) -> None:
    """Take the tool ``entry`` names away from the role; a pattern other than a shell
    prefix cannot be refused in part, so it removes the whole tool (said once)."""
    out, path = collected.out, collected.path
    pattern = _PATTERN.fullmatch(entry.strip())
    base = pattern[1] if pattern else entry.strip()
    name = _tool_name(base)
    if pattern is not None and name == "shell":
        command = _command(pattern[2])
        if command:
            collected.denied_prefixes.append(command)
            return
    if pattern is not None:
        message = (
            f"swarm cannot refuse only some uses of '{base}': '{entry}' removes '{name}' altogether"
        )
        out.warnings.append(_where(path, line, message, key))
    if name in collected.names:
        at = collected.names.index(name)
        del collected.names[at], collected.lines[at]
    if name == "shell":
        collected.prefixes.clear()
        collected.allowed_prefixes.clear()


def _permissions(value: Mapping[str, Any], where: Mapping[Key, int], collected: _Tools) -> None:
    """Claude Code's ``permissions`` (settings.json's format) as far as it maps: ``deny``
    (and ``ask``: nobody is asked in a run) removes tools, ``Bash(cmd:*)`` refuses the
    commands starting with ``cmd``; ``allow``'s ``Bash(cmd:*)`` entries limit the shell to
    them (what is not allowed would be asked, and a run asks nobody)."""
    out, path = collected.out, collected.path
    line = where.get(("permissions",))
    for kind in ("deny", "ask"):
        entries = _entries(value.get(kind)) or []
        if kind == "ask" and entries:
            message = "'ask' entries are refused: nobody is asked during a run"
            out.warnings.append(_where(path, line, message, "permissions.ask"))
        for index, entry in enumerate(entries):
            at = where.get(("permissions", kind, index), line)
            _remove(str(entry), at, "permissions.deny", collected)
    for index, entry in enumerate(_entries(value.get("allow")) or []):
        pattern = _PATTERN.fullmatch(str(entry).strip())
        if pattern is None:
            continue  # a tool allowed as a whole: the role's tools say whether it has it
        at = where.get(("permissions", "allow", index), line)
        if _tool_name(pattern[1]) == "shell" and _command(pattern[2]):
            collected.allowed_prefixes.append(_command(pattern[2]))
        else:
            message = f"the pattern of '{entry}' is not enforced: the role's policy limits it"
            out.warnings.append(_where(path, at, message, "permissions.allow"))
    for key in value:
        if key not in ("allow", "deny", "ask", "defaultMode"):
            message = f"'{key}' means nothing to swarm: ignored"
            out.warnings.append(_where(path, line, message, "permissions"))
    mode = value.get("defaultMode")
    if mode is not None:
        _permission_mode(mode, {}, line, out)


def _permission_mode(
    value: Any, data: Mapping[str, Any], line: int | None, out: ClaudeFields
) -> None:
    path = out.path
    if value == "plan":
        if "policy" in data:
            message = "'plan' asks for the readonly policy; the role's own 'policy' is kept"
            out.warnings.append(_where(path, line, message, out.spelled.get(_MODE, _MODE)))
        else:
            out.data["policy"] = "readonly"
        return
    message = (
        f"'{value}' is ignored: swarm's guards and the role's policy still apply to every call"
    )
    out.warnings.append(_where(path, line, message, out.spelled.get(_MODE, _MODE)))


def _other_key(key: str, line: int | None, out: ClaudeFields) -> None:
    path = out.path
    if key in IGNORED:
        return
    if key in METADATA:
        message = "Claude Code ignores it and it means nothing to swarm: ignored"
        out.warnings.append(_where(path, line, message, key))
        return
    if key in UNSUPPORTED:
        out.warnings.append(_where(path, line, UNSUPPORTED[key], key))
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
        out.warnings.append(_where(path, line, "unknown field, ignored", key))


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
    out.warnings.append(_where(out.path, line, message, "name"))


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
        for located, number in list(where.items()):
            if located and located[0] == key:
                where[(canonical, *located[1:])] = number
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
            _permission_mode(value, data, line, out)
        elif key in FIELD_NAMES or key in ALIASES:
            out.data[key] = value
        else:
            _other_key(key, line, out)
    _tools(data, where, out)
    tools_line = where.get(("tools",), where.get(("allowed-tools",)))
    if tools_line is not None:
        out.lines[("tools",)] = tools_line
    return out

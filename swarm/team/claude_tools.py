"""Claude Code's tool names and ``permissions`` in an agent file, in swarm's terms.

- tool names map to the toolbox (``Read`` -> ``read_file``, ``Bash`` -> ``shell``, ...);
  ``Bash(git log:*)`` gives ``shell`` limited to commands starting with ``git log``;
  ``mcp__server__tool`` becomes the optional entry ``mcp:server/tool``; tools with no
  equivalent (``WebFetch``, ``Task``) are dropped with a warning;
- no ``tools`` key, or ``*``, means the whole toolbox; ``disallowedTools`` removes tools;
- ``permissions`` (settings.json's format): ``deny`` (and ``ask``: nobody is asked about
  an agent file's) removes tools or refuses ``Bash(cmd:*)`` commands, ``allow``'s
  ``Bash(cmd:*)`` limits the shell to them;
- ``permissionMode: plan`` gives the ``readonly`` policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm.config import Document
from swarm.errors import ConfigError
from swarm.team.claude_markdown import Key, located
from swarm.toolbox import TOOL_NAMES

__all__ = [
    "CLAUDE_TOOLS",
    "NO_EQUIVALENT",
    "WHOLE_TOOLBOX",
    "ClaudeFields",
    "fill_tools",
    "permission_mode",
]

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

_MODE = "permissionMode"
_PATTERN = re.compile(r"(\w+)\((.*)\)", re.DOTALL)


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
        self.out.warnings.append(located(self.path, line, message, "tools"))

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


def fill_tools(data: Mapping[str, Any], where: Mapping[Key, int], out: ClaudeFields) -> None:
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
            out.warnings.append(located(path, where.get((key,)), message, written))
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
        out.warnings.append(located(path, line, message, key))
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
            out.warnings.append(located(path, line, message, "permissions.ask"))
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
            out.warnings.append(located(path, at, message, "permissions.allow"))
    for key in value:
        if key not in ("allow", "deny", "ask", "defaultMode"):
            message = f"'{key}' means nothing to swarm: ignored"
            out.warnings.append(located(path, line, message, "permissions"))
    mode = value.get("defaultMode")
    if mode is not None:
        permission_mode(mode, {}, line, out)


def permission_mode(
    value: Any, data: Mapping[str, Any], line: int | None, out: ClaudeFields
) -> None:
    """``permissionMode`` (or ``permissions.defaultMode``): ``plan`` is the ``readonly``
    policy (unless the role names its own); other modes are warned about and ignored."""
    path = out.path
    if value == "plan":
        if "policy" in data:
            message = "'plan' asks for the readonly policy; the role's own 'policy' is kept"
            out.warnings.append(located(path, line, message, out.spelled.get(_MODE, _MODE)))
        else:
            out.data["policy"] = "readonly"
        return
    message = (
        f"'{value}' is ignored: swarm's guards and the role's policy still apply to every call"
    )
    out.warnings.append(located(path, line, message, out.spelled.get(_MODE, _MODE)))

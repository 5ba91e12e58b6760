"""A Claude Code project's ``.claude/settings.json`` and ``.claude/settings.local.json``.

Loading a project root as a team reads both, as Claude Code does: their ``permissions``
rules add up (the local file's beside the shared one's), a matching ``deny`` wins over
``ask``, which wins over ``allow``; ``defaultMode`` is the local file's when it sets one.
Every role of the project gets them (``AgentSpec.permission_rules``, decided by
``swarm.guards.claude_rules.ClaudeRulesGuard``):

- ``Bash(cmd:*)`` / ``Bash(cmd *)`` match commands whose words start with ``cmd``,
  ``Bash(cmd*)`` those whose last such word only begins with it (``rmdir`` for ``rm``),
  ``Bash(cmd)`` that command exactly; ``Read(glob)`` matches the paths ``read_file``, ``search`` and
  ``list_files`` are given, ``Edit(glob)`` those of ``edit_file`` and ``write_file``
  (``./x`` and ``/x`` are relative to the workspace);
- a ``deny`` of a whole tool (``WebFetch`` aside) takes it from every role; ``ask``
  entries ask the run's approver (``swarm approve``, or ``--approve``), denied when nobody
  can be asked; a command (or edited path) the ``allow`` patterns do not cover is asked too;
- ``defaultMode``: ``plan`` gives roles without a policy the ``readonly`` one,
  ``acceptEdits`` stops asking about edits, ``dontAsk`` denies what would be asked;
  ``bypassPermissions`` is refused (the rules still apply);
- what has no equivalent (``WebFetch(domain:...)``, ``additionalDirectories``, paths
  outside the workspace, other settings) is warned about once, with its file and line.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm.config import Document, parse_document
from swarm.errors import ConfigError
from swarm.guards.claude_rules import ClaudePermissions, ClaudeRule, RuleAction
from swarm.team.claude_tools import CLAUDE_TOOLS, NO_EQUIVALENT
from swarm.team.layout import team_layout
from swarm.team.spec import AgentSpec

__all__ = [
    "SETTINGS_FILES",
    "ProjectSettings",
    "project_settings",
    "project_specs",
    "with_settings",
]

SETTINGS_FILES = ("settings.json", "settings.local.json")
"""The settings files of a project's ``.claude/``, the one that wins last."""

_READS = ("read_file", "search", "list_files")
_EDITS = ("edit_file", "write_file")
# Claude Code's tools whose path rules apply to all the tools that read, or that edit
_PATH_TOOLS: Mapping[str, tuple[str, ...]] = {
    "Read": _READS,
    "Grep": ("search",),
    "Glob": ("list_files",),
    "LS": ("list_files",),
    "Edit": _EDITS,
    "MultiEdit": _EDITS,
    "Write": ("write_file",),
    "NotebookEdit": ("edit_file",),
}
_MODES = frozenset({"default", "plan", "acceptEdits", "dontAsk", "bypassPermissions"})
_PERMISSION_KEYS = frozenset({"allow", "deny", "ask", "defaultMode", "additionalDirectories"})
_PATTERN = re.compile(r"(\w+)\((.*)\)", re.DOTALL)


@dataclass
class ProjectSettings:
    """What a project's settings say in swarm's terms: the ``rules`` every role gets,
    the tools a whole-tool ``deny`` takes away (``removed``), the ``mode``, and what did
    not map (``warnings``, each naming its file and line)."""

    rules: list[ClaudeRule] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    mode: str | None = None
    warnings: list[str] = field(default_factory=list)

    def warn(self, document: Document, key: tuple[str | int, ...], message: str) -> None:
        """Say ``message`` about ``key`` of ``document`` once."""
        field_name = ".".join(str(k) for k in key if isinstance(k, str)) or None
        line = document.line_of(key)
        text = str(ConfigError(message, path=document.path, line=line, field=field_name))
        if text not in self.warnings:
            self.warnings.append(text)


def _document(path: Path) -> Document:
    """The file, which must be JSON (as Claude Code reads it), with the line of every
    entry: read again as YAML, which JSON is, for those lines when YAML can read it;
    else with the lines of its top-level keys."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the settings: {exc}", path=path) from None
    if not text.strip():
        return Document(path, {}, {})
    document = parse_document(text, path, "json")  # raises for what is not JSON
    try:
        lined = parse_document(text, path, "yaml")
    except ConfigError:
        return document
    return lined if lined.data == document.data else document


def project_settings(root: Path) -> ProjectSettings | None:
    """The settings of the Claude Code project at ``root`` (``None`` when it has no
    settings file). Raises ``ConfigError`` for a file that is not JSON, or whose
    ``permissions`` are not a mapping of lists."""
    paths = [root / ".claude" / name for name in SETTINGS_FILES]
    found = [p for p in paths if p.is_file()]
    if not found:
        return None
    settings = ProjectSettings()
    for path in found:
        document = _document(path)
        if not isinstance(document.data, dict):
            raise ConfigError("expected a JSON object of settings", path=path, line=1)
        for key in document.data:
            if key == "hooks":
                settings.warn(document, (key,), "swarm never runs Claude Code's hooks: ignored")
            elif key not in ("permissions", "$schema"):
                settings.warn(document, (str(key),), "means nothing to swarm: ignored")
        permissions = document.data.get("permissions")
        if permissions is None:
            continue
        if not isinstance(permissions, dict):
            raise ConfigError(
                "expected an object of 'allow', 'deny' and 'ask' lists",
                path=path,
                line=document.line_of(("permissions",)),
                field="permissions",
            )
        _permissions(permissions, document, root, settings)
    if settings.mode == "acceptEdits":  # edits are not asked about
        settings.rules += [ClaudeRule("allow", tool, source="acceptEdits") for tool in _EDITS]
    return settings


def _permissions(
    permissions: Mapping[str, Any], document: Document, root: Path, settings: ProjectSettings
) -> None:
    where = document.path.relative_to(root).as_posix()
    kinds: tuple[RuleAction, ...] = ("deny", "ask", "allow")
    for kind in kinds:
        entries = permissions.get(kind, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ConfigError(
                'expected a list of rules such as "Bash(npm test:*)"',
                path=document.path,
                line=document.line_of(("permissions", kind)),
                field=f"permissions.{kind}",
            )
        for index, entry in enumerate(entries):
            key: tuple[str | int, ...] = ("permissions", kind, index)
            source = f"{where}:{document.line_of(key) or 1}"
            _rule(kind, entry, document, key, source, settings)
    mode = permissions.get("defaultMode")
    if mode is not None:
        key = ("permissions", "defaultMode")
        if mode not in _MODES:
            settings.warn(document, key, f"'{mode}' is not a permission mode: ignored")
        elif mode == "bypassPermissions":
            settings.warn(
                document, key, "'bypassPermissions' is refused: the rules and guards still apply"
            )
        else:
            settings.mode = str(mode)
    if permissions.get("additionalDirectories"):
        settings.warn(
            document,
            ("permissions", "additionalDirectories"),
            "swarm's tools reach only the run's workspace: not applied",
        )
    for other in permissions:
        if other not in _PERMISSION_KEYS:
            settings.warn(document, ("permissions", str(other)), "means nothing to swarm: ignored")


def _rule(
    kind: RuleAction,
    entry: str,
    document: Document,
    key: tuple[str | int, ...],
    source: str,
    settings: ProjectSettings,
) -> None:
    """Add what one ``allow``/``deny``/``ask`` entry becomes to ``settings``."""
    text = entry.strip()
    pattern = _PATTERN.fullmatch(text)
    base, inner = (pattern[1], pattern[2].strip()) if pattern else (text, None)
    if base.startswith("mcp__"):
        server, _, tool = base[len("mcp__") :].partition("__")
        if kind == "deny":
            settings.removed.add(f"mcp:{server}/{tool}" if tool else f"mcp:{server}")
        else:
            settings.warn(document, key, f"'{text}': MCP tools are left to the role's policy")
        return
    if base in NO_EQUIVALENT:
        settings.warn(document, key, f"'{text}': Claude Code's '{base}' has no equivalent in swarm")
        return
    mapped = CLAUDE_TOOLS.get(base)
    if mapped is None:
        settings.warn(document, key, f"'{text}' names no Claude Code tool swarm knows: ignored")
        return
    if mapped == "shell":
        _shell_rule(kind, text, inner, document, key, source, settings)
        return
    tools = _PATH_TOOLS.get(base, (mapped,))
    if inner is None or inner in ("", "*", "**"):
        _whole(kind, tools, source, settings)
        return
    path = _relative(inner)
    if path is None:
        message = f"'{text}' is outside the workspace, which swarm's file tools never leave"
        settings.warn(document, key, message)
        return
    if kind == "allow" and tools == _READS:
        return  # reading in the workspace is never asked about: nothing to allow
    settings.rules += [ClaudeRule(kind, tool, path=path, source=source) for tool in tools]


def _whole(
    kind: RuleAction, tools: tuple[str, ...], source: str, settings: ProjectSettings
) -> None:
    if kind == "deny":
        settings.removed.update(tools)
    else:
        settings.rules += [ClaudeRule(kind, tool, source=source) for tool in tools]


def _shell_rule(
    kind: RuleAction,
    text: str,
    inner: str | None,
    document: Document,
    key: tuple[str | int, ...],
    source: str,
    settings: ProjectSettings,
) -> None:
    if inner is None or inner in ("", "*", ":*"):
        _whole(kind, ("shell",), source, settings)
        return
    exact, glued = True, False
    for suffix in (":*", " *", "*"):
        if inner.endswith(suffix):
            inner, exact, glued = inner.removesuffix(suffix), False, suffix == "*"
            break
    glued = glued and not inner.endswith((" ", ":"))  # Bash(rm*) begins 'rmdir' too
    inner = inner.strip()
    if "*" in inner:
        message = f"'{text}': a '*' inside a command is not matched by swarm: ignored"
        settings.warn(document, key, message)
        return
    try:
        words = tuple(shlex.split(inner))  # Bash(git commit -m "wip":*)
    except ValueError:
        words = tuple(inner.split())
    rule = ClaudeRule(kind, "shell", words=words, exact=exact, glued=glued, source=source)
    settings.rules.append(rule)


def _relative(inner: str) -> str | None:
    """A Claude Code path pattern relative to the workspace (``None``: outside it)."""
    if inner.startswith(("//", "~")):
        return None
    return inner.removeprefix("./").lstrip("/") or None


def with_settings(
    specs: Mapping[str, AgentSpec], settings: ProjectSettings
) -> dict[str, AgentSpec]:
    """``specs`` with the project's settings applied to each role (the warnings ride on
    the first role's, said once)."""
    out: dict[str, AgentSpec] = {}
    never_ask = settings.mode == "dontAsk"
    permissions = ClaudePermissions(tuple(settings.rules), never_ask=never_ask)
    for index, (name, spec) in enumerate(specs.items()):
        policy = spec.policy
        if settings.mode == "plan" and policy is None:
            policy = "readonly"
        out[name] = dataclasses.replace(
            spec,
            tools=tuple(t for t in spec.tools if t not in settings.removed),
            policy=policy,
            permissions=permissions if settings.rules else spec.permissions,
            warnings=(*settings.warnings, *spec.warnings) if index == 0 else spec.warnings,
        )
    return out


def project_specs(directory: Path, specs: Mapping[str, AgentSpec]) -> dict[str, AgentSpec]:
    """``specs`` of the team in ``directory`` with its Claude Code project's settings
    applied (unchanged when the project has none). Raises ``ConfigError`` for a bad
    settings file."""
    settings = project_settings(team_layout(directory).root)
    return dict(specs) if settings is None else with_settings(specs, settings)

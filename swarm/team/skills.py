"""Skills: procedures a role loads when it needs them, as Claude Code's ``SKILL.md`` folders.

A skill is a folder ``<name>/SKILL.md`` in one of the team's skill folders
(``.claude/skills/``, ``.agents/skills/``, a team's ``skills/``: see ``team_layout``). Its
front matter gives ``name``, ``description`` and optionally ``allowed-tools``; the body is
the procedure, and the files beside it (references, ``scripts/``) are its resources.

A role sees each of its skills' name and description at the end of its system prompt and
gets the ``load_skill`` tool, which returns the skill's body and where its files are. A role
has the skills it lists in ``skills:`` (as a Claude Code sub-agent does; a skill marked
``disable-model-invocation: true`` is not listed in its prompt, and can still be loaded by
name). The files are read with the guarded
file tools and its scripts run with ``shell``: the role's policy and sandbox apply, so a
skill outside the workspace is copied to ``.swarm/skills/<name>/`` there when it is loaded.
While a skill with ``allowed-tools`` is in use (the last one loaded), the role's calls of
other tools are refused: it narrows the role's tools and never widens them. Loading is a
tool call like any other, so it is guarded and audited.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from swarm.errors import ConfigError, GuardError, ToolError
from swarm.guards.base import PermissionGuard
from swarm.guards.prefixes import CommandPrefixGuard
from swarm.team.claude_markdown import read_markdown, slug
from swarm.team.claude_tools import CLAUDE_TOOLS
from swarm.team.spec import AgentSpec
from swarm.tools import Field, Tool

__all__ = ["LOAD_SKILL", "Skill", "SkillShelf", "load_skills", "scoped_skill_tools", "with_skills"]

LOAD_SKILL = "load_skill"
"""The name of the tool that loads a skill."""
SKILL_FILE = "SKILL.md"
_ENTRY = re.compile(r"[^\s,()]+(?:\([^)]*\))?")
_KNOWN = frozenset(
    {"name", "description", "allowed-tools", "allowed_tools", "disable-model-invocation"}
)
# Claude Code keys a skill may carry that mean nothing to swarm (said once per file).
_IGNORED = frozenset({"context", "agent", "model", "license", "metadata", "version", "hooks"})
_IGNORED |= frozenset({"argument-hint", "user-invocable", "when_to_use", "compatibility"})


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its ``name``, ``description``, the ``body`` of its ``SKILL.md``, the
    ``folder`` holding it and its resources, ``allowed_tools`` (swarm tool names; ``None``:
    no limit) and ``shell_commands`` (the prefixes its ``Bash(...)`` entries allow), and
    ``listed`` (``False`` when ``disable-model-invocation`` hides it from the prompt)."""

    name: str
    description: str
    body: str
    folder: Path
    allowed_tools: frozenset[str] | None = None
    shell_commands: tuple[str, ...] = ()
    listed: bool = True
    warnings: tuple[str, ...] = ()


def _allowed(value: Any, path: Path, line: int | None) -> tuple[frozenset[str], tuple[str, ...]]:
    # "Read, Grep" or "Read Bash(git log:*)": names apart from what is in parentheses
    entries = _ENTRY.findall(value) if isinstance(value, str) else value
    if not isinstance(entries, list):
        raise ConfigError(
            "expected a list of tool names", path=path, line=line, field="allowed-tools"
        )
    names: set[str] = set()
    prefixes: list[str] = []
    for raw in entries:
        text = str(raw).strip()
        base, _, inner = text.partition("(")
        name = CLAUDE_TOOLS.get(base, base)
        if text.startswith("mcp__"):
            server, _, tool = text[len("mcp__") :].partition("__")
            name = f"mcp__{server}__{tool}" if tool else text
        names.add(name)
        if inner and name == "shell":
            command = inner.rstrip(")").removesuffix("*").removesuffix(":").strip()
            prefixes.append(command or "*")
        elif name == "shell":
            prefixes.append("*")
    return frozenset(names), tuple(prefixes)


def read_skill(path: Path) -> Skill:
    """The skill whose ``SKILL.md`` is ``path``. Raises ``ConfigError`` naming the file."""
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path=path) from None
    document, warnings = read_markdown(content, path)
    data = document.data if isinstance(document.data, dict) else {}
    said = list(warnings)
    for key in data:
        if key not in _KNOWN:
            note = (
                "means nothing to swarm: ignored" if key in _IGNORED else "unknown field, ignored"
            )
            said.append(str(ConfigError(note, path=path, line=document.line_of((key,)), field=key)))
    name = slug(str(data.get("name") or path.parent.name))
    if not name:
        raise ConfigError("a skill needs a name", path=path, field="name")
    allowed: frozenset[str] | None = None
    prefixes: tuple[str, ...] = ()
    key = "allowed-tools" if "allowed-tools" in data else "allowed_tools"
    if key in data:
        allowed, prefixes = _allowed(data[key], path, document.line_of((key,)))
    return Skill(
        name=name,
        description=str(data.get("description") or "").strip(),
        body=document.body or "",
        folder=path.parent,
        allowed_tools=allowed,
        shell_commands=() if "*" in prefixes else prefixes,
        listed=data.get("disable-model-invocation") is not True,
        warnings=tuple(said),
    )


def load_skills(folders: Iterable[Path]) -> dict[str, Skill]:
    """Every skill in ``folders`` (each ``<name>/SKILL.md``), by name; the first folder
    holding a name wins. Raises ``ConfigError`` with every bad file's problems."""
    skills: dict[str, Skill] = {}
    problems: list[ConfigError] = []
    for folder in folders:
        for path in sorted(folder.glob(f"*/{SKILL_FILE}")):
            try:
                skill = read_skill(path)
            except ConfigError as exc:
                problems += exc.problems
                continue
            skills.setdefault(skill.name, skill)
    if problems:
        raise ConfigError.collect(problems)
    return skills


def _listing(skills: Sequence[Skill]) -> str:
    lines = [f"- {s.name}: {s.description}" if s.description else f"- {s.name}" for s in skills]
    return (
        "\n\n## Skills\n\nThese skills hold procedures for particular tasks. When a task"
        f" fits one, call {LOAD_SKILL} with its name first and follow what it says.\n\n"
        + "\n".join(lines)
    )


def with_skills(
    specs: Mapping[str, AgentSpec], skills: Mapping[str, Skill]
) -> tuple[dict[str, AgentSpec], list[str]]:
    """``specs`` with each role's skills listed in its prompt and ``load_skill`` among its
    tools, and a warning for each listed skill the team does not have (it may be one of
    the user's own, which a team does not carry: the role runs without it)."""
    problems: list[str] = []
    result: dict[str, AgentSpec] = {}
    for name, spec in specs.items():
        chosen = []
        for index, wanted in enumerate(spec.skills):
            if wanted in skills:
                chosen.append(skills[wanted])
            else:
                known = ", ".join(sorted(skills)) or "none"
                message = (
                    f"no skill '{wanted}' in the team's skill folders (skills: {known}):"
                    " the role runs without it"
                )
                problems.append(str(spec.error(message, "skills", index)))
        if not chosen or LOAD_SKILL in spec.tools:
            result[name] = spec
            continue
        shown = [s for s in chosen if s.listed]
        result[name] = dataclasses.replace(
            spec,
            system=spec.system + (_listing(shown) if shown else ""),
            tools=(*spec.tools, LOAD_SKILL),
            optional_tools=spec.optional_tools | {LOAD_SKILL},
        )
    return result, problems


@dataclass
class _InUse:
    """The skill a role's agent is following (the last it loaded)."""

    skill: Skill | None = None


class SkillToolsGuard(PermissionGuard):
    """Refuses a call of a tool the skill in use does not allow (its ``allowed-tools``);
    with no skill in use, or one without ``allowed-tools``, it allows every call."""

    def __init__(self, in_use: _InUse) -> None:
        self.in_use = in_use

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        """Allow ``tool`` when the skill in use allows it (or there is no limit)."""
        skill = self.in_use.skill
        if skill is None or skill.allowed_tools is None or tool.name == LOAD_SKILL:
            return kwargs
        if tool.name not in skill.allowed_tools:
            allowed = ", ".join(sorted(skill.allowed_tools)) or "none"
            raise GuardError(
                f"the skill '{skill.name}' in use allows only: {allowed}",
                guard=self.name,
                rule="skill allowed-tools",
            )
        if tool.name == "shell" and skill.shell_commands:
            return await CommandPrefixGuard(skill.shell_commands).check(tool, **kwargs)
        return kwargs


@dataclass(frozen=True)
class SkillShelf:
    """The team's ``skills`` for a run in ``workspace``: the source of each role's
    ``load_skill`` tool."""

    skills: Mapping[str, Skill]
    workspace: Path
    copies: dict[str, str] = field(default_factory=dict, compare=False)

    def _where(self, skill: Skill) -> str:
        """The skill's folder as a workspace path (copied in when it is outside)."""
        root = self.workspace.resolve()
        folder = skill.folder.resolve()
        if folder.is_relative_to(root):
            return str(folder.relative_to(root)) or "."
        if skill.name not in self.copies:
            target = root / ".swarm" / "skills" / skill.name
            shutil.copytree(folder, target, symlinks=True, dirs_exist_ok=True)
            self.copies[skill.name] = str(target.relative_to(root))
        return self.copies[skill.name]

    def tool(self, names: Iterable[str] | None = None, in_use: _InUse | None = None) -> Tool[Any]:
        """A ``load_skill`` tool for the skills ``names`` (``None``: all), recording the
        skill loaded in ``in_use``."""
        allowed = set(self.skills if names is None else names)
        state = in_use if in_use is not None else _InUse()

        def load_skill(
            name: Annotated[str, Field(description="the skill's name, as listed")],
        ) -> str:
            skill = self.skills.get(name)
            if skill is None or name not in allowed:
                known = ", ".join(sorted(allowed)) or "none"
                raise ToolError(f"no skill '{name}' for this role (its skills: {known})")
            where = self._where(skill)
            files = sorted(
                str(p.relative_to(skill.folder))
                for p in skill.folder.rglob("*")
                if p.is_file() and p.name != SKILL_FILE
            )
            state.skill = skill
            listing = "".join(f"\n- {where}/{f}" for f in files) or " (none)"
            limit = ""
            if skill.allowed_tools is not None:
                only = ", ".join(sorted(skill.allowed_tools))
                limit = f"\n\nWhile you follow it you may use only: {only}."
            return (
                f"# Skill: {skill.name}\n\n{skill.body}\n\n---\nIts files are in {where}/"
                f" (read them with read_file, run its scripts with shell):{listing}{limit}"
            )

        return Tool(
            name=LOAD_SKILL,
            handler=load_skill,
            description="Load a skill: its instructions, and where its files are.",
            context={"shelf": self},
        )


def scoped_skill_tools(spec: AgentSpec, tools: list[Tool[Any]]) -> list[Tool[Any]]:
    """A role's tools with its own ``load_skill`` (only its skills) and the other tools
    guarded by what the skill in use allows; unchanged when it has no ``load_skill``."""
    shelf = next(
        (
            t.context.get("shelf")
            for t in tools
            if t.name == LOAD_SKILL and isinstance(t.context, Mapping)
        ),
        None,
    )
    if not isinstance(shelf, SkillShelf):
        return tools
    in_use = _InUse()
    guard = SkillToolsGuard(in_use)
    own = shelf.tool(spec.skills, in_use)
    return [own if t.name == LOAD_SKILL else t.copy(guards=(*t.guards, guard)) for t in tools]

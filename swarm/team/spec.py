"""Role files as data: the pydantic model of a file and the ``AgentSpec`` it becomes.

A role file describes one agent. ``RoleFile`` validates what a file says (unknown fields
are errors, so typos never pass silently) and accepts the Claude Code sub-agent names
(``maxTurns``; ``tools`` as a comma-separated string; ``model: inherit``).
``role_spec`` turns a parsed ``Document`` into a frozen ``AgentSpec`` that remembers the
file and the line of every key, so later checks (unknown tools, bad delegates) can point
at the exact entry.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import pydantic
from pydantic import AliasChoices, ConfigDict

from swarm.background import OnExit
from swarm.config import Document, validate_document
from swarm.contracts import DEFAULT_OUTPUT_RETRIES, OutputContract
from swarm.errors import ConfigError
from swarm.guards.claude_rules import ClaudePermissions, ClaudeRulesGuard
from swarm.guards.prefixes import CommandDenyGuard, CommandPrefixGuard
from swarm.loop.agent import Agent
from swarm.team.outputs import role_output
from swarm.team.tool_entries import resolve_entries
from swarm.tools import Tool
from swarm.transports.base import DummyCompletionTransport

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "AgentSpec",
    "BudgetSettings",
    "CompactionSettings",
    "RoleFile",
    "ToolChoice",
    "check_name",
    "index_specs",
    "meant_field",
    "role_spec",
]

DEFAULT_MAX_ITERATIONS = 50
ToolChoice: TypeAlias = Literal["auto", "required", "none"]
CacheTTL: TypeAlias = Literal["5m", "1h"]  # as swarm.transports.options, without its imports
Key: TypeAlias = tuple[str | int, ...]

# Role names become tool names for the model, so they follow the providers' tool-name rule.
NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_NAME = re.compile(NAME_PATTERN)
# Claude Code spells these differently; each maps to the canonical field.
ALIASES: Mapping[str, str] = MappingProxyType({"maxTurns": "max_iterations"})


def check_name(name: str) -> str:
    """Return ``name`` if it can name a role (and so a tool); raise ``ValueError`` if not."""
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"'{name}' cannot name a role: use 1-64 letters, digits, '_' or '-' "
            "(it becomes a tool name for the model)"
        )
    return name


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """When a role's context is summarised (see ``AutoCompactStore``).

    ``keep_recent`` messages stay verbatim; compaction fires when the context passes
    ``threshold`` (a fraction) of ``max_tokens`` (``None``: the model's context window).
    """

    keep_recent: int = 6
    threshold: float = 0.75
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class BudgetSettings:
    """Limits for one run of a role, counting everything it delegates (its subtree).

    ``tokens`` bounds input plus output tokens, ``seconds`` wall-clock time,
    ``delegations`` the sub-agent calls, ``depth`` how many levels of delegation may
    open below the role, ``usd`` the dollars its subtree may spend at list prices.
    ``None`` means no limit of that kind from this role.
    """

    tokens: int | None = None
    seconds: float | None = None
    delegations: int | None = None
    depth: int | None = None
    usd: float | None = None


_FIELDS = ConfigDict(extra="forbid", strict=True, frozen=True)


class CompactionFile(pydantic.BaseModel):
    """The ``compaction`` mapping of a role file."""

    model_config = _FIELDS

    keep_recent: int = pydantic.Field(6, ge=0)
    threshold: float = pydantic.Field(0.75, gt=0, le=1)
    max_tokens: int | None = pydantic.Field(None, gt=0)


class BudgetFile(pydantic.BaseModel):
    """The ``budget`` mapping of a role file."""

    model_config = _FIELDS

    tokens: int | None = pydantic.Field(None, gt=0)
    seconds: float | None = pydantic.Field(None, gt=0)
    delegations: int | None = pydantic.Field(None, ge=0)
    depth: int | None = pydantic.Field(None, ge=0)
    usd: float | None = pydantic.Field(None, gt=0)


def _names_list(value: Any) -> Any:
    # Claude Code writes `tools: Read, Grep, Glob`; a YAML list is the native form.
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _no_repeats(kind: str, names: list[str]) -> list[str]:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{kind} '{name}' is listed twice")
        seen.add(name)
    return names


class RoleFile(pydantic.BaseModel):
    """What a role file may say. Every field but ``system`` is optional.

    ``system`` is a string or ``{text: ...}`` (in Markdown, the body). ``maxTurns`` is
    accepted for ``max_iterations``; ``tools``, ``delegates`` and ``skills`` (the team's
    skills the role may load: ``swarm.team.skills``) may be comma-separated strings;
    ``model: inherit`` (or ``default``) means no model of its own.
    """

    model_config = _FIELDS

    name: str | None = None
    description: str = ""
    system: str | None = None
    model: str | None = None
    tools: list[str] = pydantic.Field(default_factory=list)
    delegates: list[str] = pydantic.Field(default_factory=list)
    skills: list[str] = pydantic.Field(default_factory=list)
    max_iterations: int = pydantic.Field(
        DEFAULT_MAX_ITERATIONS,
        ge=1,
        validation_alias=AliasChoices("max_iterations", "maxTurns"),
    )
    policy: str | None = pydantic.Field(None, min_length=1)
    compaction: CompactionFile | None = None
    budget: BudgetFile | None = None
    tool_choice: ToolChoice | None = None
    tool_timeout: float | None = pydantic.Field(None, gt=0)
    max_result_chars: int | None = pydantic.Field(None, gt=0)
    cache: bool | CacheTTL | None = None
    output: dict[str, Any] | str | None = None
    output_retries: int = pydantic.Field(DEFAULT_OUTPUT_RETRIES, ge=0)
    on_exit: OnExit = "wait"
    agents_tool: bool = True

    @pydantic.field_validator("name")
    @classmethod
    def _valid_name(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value)

    @pydantic.field_validator("system", mode="before")
    @classmethod
    def _system_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) != {"text"}:
                raise ValueError("expected a string or a mapping with the one key 'text'")
            return value["text"]
        return value

    @pydantic.field_validator("model")
    @classmethod
    def _inherit_model(cls, value: str | None) -> str | None:
        return None if value in ("inherit", "default") else value

    @pydantic.field_validator("tools", "delegates", "skills", mode="before")
    @classmethod
    def _split_names(cls, value: Any) -> Any:
        return _names_list(value)

    @pydantic.field_validator("tools")
    @classmethod
    def _unique_tools(cls, value: list[str]) -> list[str]:
        return _no_repeats("tool", value)

    @pydantic.field_validator("delegates")
    @classmethod
    def _unique_delegates(cls, value: list[str]) -> list[str]:
        return _no_repeats("delegate", value)


FIELD_NAMES = frozenset(RoleFile.model_fields)


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """A parsed role: everything needed to build its agent, before tools and transport.

    ``source`` is the file it came from and ``locations`` the line of each key in it
    (``("tools", 2)`` is the third tool), so errors found later can point into the file.
    ``policy`` is kept as written (a policy name or a path relative to ``source``).
    ``compaction`` is ``None`` when the role leaves it to the run.
    ``tool_timeout`` (seconds) and ``max_result_chars`` override the agent's defaults.
    ``cache`` turns prompt caching off (``False``) or on (``True``, or a lifetime
    ``"5m"``/``"1h"``) for the role's requests; ``None`` leaves it to the transport.
    ``optional_tools`` names entries of ``tools`` that are dropped, not refused, when they
    cannot be resolved (a Claude Code file naming a server the team does not declare).
    ``shell_commands``, when not empty, limits the role's ``shell`` to commands whose
    programs start with one of these words (Claude Code's ``Bash(git log:*)``; ``"*"``:
    any); ``shell_denied`` refuses the commands starting with one of these
    (``Bash(rm:*)`` in ``permissions.deny``). ``permissions`` are a Claude Code project's
    settings rules (``swarm.team.claude_settings``), decided on each call of the tools
    they name. ``warnings`` are what loading changed or ignored, each naming file and line.
    ``output`` is the schema the role's final answer must meet (``None``: free text),
    with ``output_retries`` invalid answers sent back before it fails ``invalid_output``;
    set it with ``OutputContract.of(Model)`` or ``OutputContract.of(json_schema)``.
    ``on_exit`` is what the role does with background sub-agents still running when it
    would end: ``wait`` for them, or ``stop`` them. ``agents_tool`` (default true) gives
    a role with delegates the ``agents`` tool and its delegation tools the
    ``background`` and ``continue_from`` arguments; false keeps its tools as lean as a
    very small model needs.
    """

    name: str
    description: str
    system: str
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    tools: tuple[str, ...] = ()
    model: str | None = None
    delegates: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    policy: str | None = None
    compaction: CompactionSettings | None = None
    budget: BudgetSettings = BudgetSettings()
    tool_choice: ToolChoice | None = None
    tool_timeout: float | None = None
    max_result_chars: int | None = None
    cache: bool | CacheTTL | None = None
    output: OutputContract | None = None
    output_retries: int = DEFAULT_OUTPUT_RETRIES
    on_exit: OnExit = "wait"
    agents_tool: bool = True
    source: Path | None = None
    optional_tools: frozenset[str] = frozenset()
    shell_commands: tuple[str, ...] = ()
    shell_denied: tuple[str, ...] = ()
    permissions: ClaudePermissions | None = None
    warnings: tuple[str, ...] = ()
    locations: Mapping[Key, int] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )

    def line_of(self, *key: str | int) -> int | None:
        """The line of ``key`` in ``source`` (or of its nearest enclosing key), if known."""
        path: Key = key
        while True:
            if path in self.locations:
                return self.locations[path]
            if not path:
                return None
            path = path[:-1]

    def error(self, message: str, *key: str | int) -> ConfigError:
        """A ``ConfigError`` about this role, pointing at ``key`` in its file.

        ``key`` is a field path such as ``("delegates", 2)``; the error's ``field`` names
        the field (``delegates``) and its ``line`` the entry.
        """
        return ConfigError(
            message,
            path=self.source,
            line=self.line_of(*key),
            field=".".join(part for part in key if isinstance(part, str)) or None,
        )

    def to_agent(
        self,
        toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]] = MappingProxyType({}),
        *,
        mcp_servers: Collection[str] = (),
    ) -> Agent:
        """Return a prototype ``Agent`` with this role's tools attached.

        Each ``tools`` entry is a ``toolbox`` key (a value may be one tool or several, as
        an ``mcp:`` entry is), else a Python reference ``module:attr`` (imported with the
        current directory and the role file's directory on the import path), else the name
        of a ``swarm.tools`` entry point. An ``mcp:`` entry absent from ``toolbox`` names a
        server the team does not declare: dropped with a warning when the entry is
        optional; one whose server is in ``mcp_servers`` (declared, not connected: when
        checking files) gives no tool. The agent has a ``DummyCompletionTransport``: call
        ``agent.copy(transport=...)`` before running it. Delegation tools are not added
        here (that needs a transport). Raises ``ConfigError`` for every entry that cannot
        be resolved, pointing at it. ``shell_commands`` become a
        ``CommandPrefixGuard`` and ``shell_denied`` a ``CommandDenyGuard`` on the role's
        ``shell``, after the tool's own guards; ``permissions`` a ``ClaudeRulesGuard`` on
        each tool its rules name, after those.
        """
        tools, problems = resolve_entries(self, toolbox, mcp_servers=mcp_servers)
        if problems:
            raise ConfigError.collect(problems)
        limits: list[CommandPrefixGuard | CommandDenyGuard] = []
        if self.shell_commands:
            limits.append(CommandPrefixGuard(self.shell_commands))
        if self.shell_denied:
            limits.append(CommandDenyGuard(self.shell_denied))
        if limits:
            tools = [t.copy(guards=(*t.guards, *limits)) if t.name == "shell" else t for t in tools]
        if self.permissions is not None:
            ruled = {rule.tool for rule in self.permissions.rules}
            guard: ClaudeRulesGuard = self.permissions.guard()
            tools = [t.copy(guards=(*t.guards, guard)) if t.name in ruled else t for t in tools]
        agent = Agent(
            system=self.system,
            transport=DummyCompletionTransport(),
            tools=tools,
            max_iterations=self.max_iterations,
            name=self.name,
            output=self.output,
            output_retries=self.output_retries,
        )
        if self.tool_timeout is not None:
            agent.tool_timeout = self.tool_timeout
        if self.max_result_chars is not None:
            agent.max_result_chars = self.max_result_chars
        return agent


def _check_aliases(document: Document) -> None:
    """Refuse a file that gives both spellings of one setting."""
    data = document.data
    if not isinstance(data, dict):
        return
    for alias, canonical in ALIASES.items():
        if alias in data and canonical in data:
            raise ConfigError(
                f"'{alias}' and '{canonical}' are the same setting; keep one",
                path=document.path,
                line=document.line_of((alias,)),
                field=alias,
            )


def meant_field(key: str) -> str | None:
    """The role-file field a key that is not one was most likely meant to be
    (``delegate`` -> ``delegates``), or ``None`` when none is close."""
    close = difflib.get_close_matches(key, sorted({*FIELD_NAMES, *ALIASES}), n=1)
    return close[0] if close else None


def _unknown_field(document: Document, key: str) -> ConfigError:
    meant = meant_field(key)
    # the list of every field only when there is no suggestion: beside one, it is noise
    said = f"; did you mean '{meant}'?" if meant else f" (fields: {', '.join(sorted(FIELD_NAMES))})"
    return ConfigError(
        f"unknown field{said}",
        path=document.path,
        line=document.line_of((key,)),
        field=key,
    )


def _validate(document: Document) -> RoleFile:
    """Validate a role file, reporting every problem, unknown fields with a suggestion."""
    data = document.data
    if not isinstance(data, dict):
        return validate_document(RoleFile, document)
    known = FIELD_NAMES | set(ALIASES)
    problems = [_unknown_field(document, str(key)) for key in data if key not in known]
    try:
        role = validate_document(RoleFile, document, {k: v for k, v in data.items() if k in known})
    except ConfigError as exc:
        problems.extend(exc.problems)
    if problems:
        problems.sort(key=lambda problem: problem.line or 0)
        raise ConfigError.collect(problems)
    return role


def role_spec(document: Document, *, source: Path | None = None) -> AgentSpec:
    """Validate a parsed role file and return its ``AgentSpec``.

    A Markdown body is the system prompt. ``name`` is ``""`` when the file has none (the
    caller names it after the file). Raises ``ConfigError`` naming file, line and field
    for every problem.
    """
    _check_aliases(document)
    role = _validate(document)
    system = role.system
    if document.body:
        if system is not None:
            raise ConfigError(
                "the system prompt is given twice: in the front matter and as the body",
                path=document.path,
                line=document.line_of(("system",)),
                field="system",
            )
        system = document.body
    if not system or not system.strip():
        line = document.line_of(("system",)) or 1
        raise ConfigError(
            "a role needs a system prompt (a 'system' field, or the Markdown body)",
            path=document.path,
            line=line,
            field="system",
        )
    compaction = role.compaction
    budget = role.budget
    output = role_output(role.output, document, source)
    return AgentSpec(
        name=role.name or "",
        description=role.description.strip(),
        system=system.strip(),
        max_iterations=role.max_iterations,
        tools=tuple(role.tools),
        model=role.model,
        delegates=tuple(role.delegates),
        skills=tuple(role.skills),
        policy=role.policy,
        compaction=None if compaction is None else CompactionSettings(**compaction.model_dump()),
        budget=BudgetSettings() if budget is None else BudgetSettings(**budget.model_dump()),
        tool_choice=role.tool_choice,
        tool_timeout=role.tool_timeout,
        max_result_chars=role.max_result_chars,
        cache=role.cache,
        output=output,
        output_retries=role.output_retries,
        on_exit=role.on_exit,
        agents_tool=role.agents_tool,
        source=source,
        locations=MappingProxyType(dict(document.lines)),
    )


def index_specs(specs: Iterable[AgentSpec]) -> dict[str, AgentSpec]:
    """Key specs by name; two roles with one name are a ``ConfigError`` naming both files."""
    index: dict[str, AgentSpec] = {}
    problems: list[ConfigError] = []
    for spec in specs:
        first = index.get(spec.name)
        if first is None:
            index[spec.name] = spec
            continue
        where = str(first.source) if first.source is not None else "another spec"
        problems.append(spec.error(f"role '{spec.name}' is already defined in {where}", "name"))
    if problems:
        raise ConfigError.collect(problems)
    return index

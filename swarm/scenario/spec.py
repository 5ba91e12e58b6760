"""The scenario file: a team, a policy, a workspace, a task, a model, and expectations.

::

    name: calculator                 # default: the file's stem
    team: ../roles                   # the role files (relative to this file)
    entry: orchestrator              # default: the team's one root role
    policy: default                  # for roles that name none (a name or a path)
    workspace: work/calculator       # default: .swarm/workspaces/<name> in the cwd
    runs_dir: ~/swarm-runs           # default: $XDG_STATE_HOME/swarm/runs
    files: {README.md: "# calc"}     # written into the workspace before the run
    task: Write calc.py with add and sub, and a test for it.
    models: {fast: openai:gpt-4.1-mini}  # aliases a role's 'model:' may name (over team.yaml's)
    #   and prices (USD per million tokens): {house: {input: 0.5, output: 1.5, cache_read: 0.05}}
    cache: 1h                        # prompt caching for roles that set none: false, true, 5m, 1h
    model: openai:gpt-4.1-mini       # a provider spec, or a script:
    #   script:
    #     orchestrator:
    #       - call: developer
    #         args: {task: "Write calc.py"}
    #       - text: calc.py is written.
    #     developer#2: [...]       # turns of one instance (wins over 'developer:')
    limits: {tokens: 200000, usd: 2.5, seconds: 600, max_iterations: 30, max_depth: 3}
    expect:
      stop_reason: end_turn
      final_contains: [calc.py]
      delegations: [developer]
      denied: [{role: developer, tool: shell, rule: no-recursive-delete}]
      files: {calc.py: "def add"}
      max_tokens: 100000
      compactions: 1
      errors: ["no turns for role 'checker'"]   # errors the run may end agents with
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import ConfigDict

from swarm.config import Document, load_document, validate_document
from swarm.contracts import OutputContract
from swarm.errors import ConfigError
from swarm.mcp.config import McpServer, parse_mcp_servers
from swarm.scenario.output_checks import condition_problems
from swarm.team.commands import CommandTask, read_command
from swarm.team.teamfile import ModelsField, model_aliases, model_prices

__all__ = [
    "Expectations",
    "Limits",
    "Scenario",
    "ScriptCall",
    "Script",
    "ScriptTurn",
    "load_scenario",
    "scenario_from_document",
]

_STRICT = ConfigDict(extra="forbid", frozen=True)
_SCRIPT_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}(#[1-9][0-9]*)?")


class ScriptCall(pydantic.BaseModel):
    """One tool call a scripted model makes."""

    model_config = _STRICT
    tool: str = pydantic.Field(min_length=1)
    args: dict[str, Any] = pydantic.Field(default_factory=dict)


class ScriptTurn(pydantic.BaseModel):
    """One scripted model turn: text, tool calls, or both.

    ``call``/``args`` is shorthand for a single call.
    """

    model_config = _STRICT
    text: str = ""
    calls: tuple[ScriptCall, ...] = ()
    call: str | None = None
    args: dict[str, Any] = pydantic.Field(default_factory=dict)
    stop: Literal["end_turn", "max_tokens"] = "end_turn"

    @pydantic.model_validator(mode="after")
    def _one_form(self) -> ScriptTurn:
        if self.call is not None and self.calls:
            raise ValueError("use either 'call' (one call) or 'calls' (a list), not both")
        if self.call is None and self.args:
            raise ValueError("'args' belongs to 'call'")
        if not self.text and not self.all_calls:
            raise ValueError("a turn needs 'text', 'call' or 'calls'")
        return self

    @property
    def all_calls(self) -> tuple[ScriptCall, ...]:
        if self.call is not None:
            return (ScriptCall(tool=self.call, args=self.args),)
        return self.calls


class Script(pydantic.BaseModel):
    """The model turns of each role, in order; ``summary`` answers compaction requests.

    A key is a role (``developer``: turns shared by its instances, in the order they ask)
    or one instance (``developer#2``: the caller's second delegation to it), which wins
    over the role key for that instance."""

    model_config = _STRICT
    script: dict[str, tuple[ScriptTurn, ...]]
    summary: str | None = pydantic.Field(None, min_length=1)


class Limits(pydantic.BaseModel):
    """Limits for the whole run (the entry role's subtree). ``tool_timeout`` (seconds)
    applies to the roles whose file sets none."""

    model_config = _STRICT
    tokens: int | None = pydantic.Field(None, gt=0)
    seconds: float | None = pydantic.Field(None, gt=0)
    delegations: int | None = pydantic.Field(None, ge=0)
    usd: float | None = pydantic.Field(None, gt=0)
    max_iterations: int | None = pydantic.Field(None, gt=0)
    max_depth: int | None = pydantic.Field(None, ge=0)
    tool_timeout: float | None = pydantic.Field(None, gt=0)


class DeniedCall(pydantic.BaseModel):
    """A call that must have been denied: by role (any instance), tool, and (``rule``) the
    id of the policy rule that denied it."""

    model_config = _STRICT
    role: str | None = None
    tool: str
    rule: str | None = None


class Expectations(pydantic.BaseModel):
    """What must be true after the run for the scenario to pass.

    An agent that ended in an error fails the scenario unless ``errors`` expects it:
    ``errors: [text, ...]`` (each text is in some error of the run, and each error holds
    one of the texts) or ``errors: N`` (exactly N errors). Without ``errors``, only the
    entry agent's own error is expected, when ``stop_reason`` names it (error, budget,
    cancelled). ``delegations`` count only delegations whose sub-agent finished.
    ``outputs`` puts conditions on typed answers, per agent (see
    ``swarm.scenario.output_checks``).
    """

    model_config = _STRICT
    stop_reason: (
        Literal["end_turn", "max_tokens", "error", "cancelled", "budget", "invalid_output"] | None
    ) = None
    final_contains: tuple[str, ...] = ()
    delegations: tuple[str, ...] = ()
    denied: tuple[DeniedCall, ...] = ()
    files: dict[str, str | None] = pydantic.Field(default_factory=dict)
    absent_files: tuple[str, ...] = ()
    max_tokens: int | None = pydantic.Field(None, gt=0)
    compactions: int | None = pydantic.Field(None, ge=0)
    errors: Annotated[int, pydantic.Field(ge=0)] | tuple[str, ...] | None = None
    outputs: dict[str, dict[str, Any]] = pydantic.Field(default_factory=dict)

    @pydantic.field_validator("outputs")
    @classmethod
    def _output_conditions(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        problems = [
            f"'{who}': {problem}"
            for who, conditions in value.items()
            for problem in condition_problems(conditions)
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @pydantic.field_validator("errors", mode="before")
    @classmethod
    def _errors_form(cls, value: Any) -> Any:
        count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        texts = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        if value is not None and not count and not texts:
            raise ValueError(
                "give the texts of the errors the run may have (errors: [budget]) or"
                " their number (errors: 0)"
            )
        return value


class CommandFile(pydantic.BaseModel):
    """``task: {command: FILE, args: [...]}``: a slash command file (relative to the
    scenario) run with its arguments."""

    model_config = _STRICT
    command: str = pydantic.Field(min_length=1)
    args: list[str] = pydantic.Field(default_factory=list)


class ScenarioFile(pydantic.BaseModel):
    model_config = _STRICT
    name: str | None = None
    description: str = ""
    team: str = "roles"
    entry: str | None = None
    policy: str | None = None
    workspace: str | None = None
    runs_dir: str | None = None
    files: dict[str, str] = pydantic.Field(default_factory=dict)
    task: Annotated[str, pydantic.Field(min_length=1)] | CommandFile
    model: str | Script | None = None
    models: ModelsField = pydantic.Field(default_factory=dict)
    cache: bool | Literal["5m", "1h"] | None = None
    limits: Limits = field(default_factory=Limits)
    expect: Expectations | None = None
    tools: dict[str, str] = pydantic.Field(default_factory=dict)
    mcp_servers: dict[str, Any] = pydantic.Field(default_factory=dict)
    inputs: dict[str, str] = pydantic.Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A loaded scenario, its paths resolved against its file's directory.

    ``tools`` names Python tools for its roles (``{name: "module:attr"}``, a role lists
    ``name``); ``mcp_servers`` adds MCP servers to the team's (a server of one name
    replaces the team's); ``command`` is a slash command whose text is the task (its
    shell lines run first: ``swarm.team.commands``); ``inputs`` fill the
    ``{placeholders}`` of the roles' prompts (a CrewAI crew's, ``swarm.team.crewai``);
    ``output`` is the schema the entry role's answer must meet in this run, over the
    role's own (a CrewAI task's ``output_pydantic``; no scenario file sets it)."""

    name: str
    task: str
    team: Path
    description: str = ""
    path: Path | None = None
    entry: str | None = None
    policy: str | None = None
    workspace: Path | None = None
    runs_dir: Path | None = None
    files: dict[str, str] = field(default_factory=dict)
    model: str | Script | None = None
    limits: Limits = field(default_factory=Limits)
    expect: Expectations | None = None
    models: dict[str, str] = field(default_factory=dict)
    prices: dict[str, dict[str, float | int]] = field(default_factory=dict)
    cache: bool | Literal["5m", "1h"] | None = None
    document: Document | None = field(default=None, compare=False, repr=False)
    tools: dict[str, str] = field(default_factory=dict)
    mcp_servers: dict[str, McpServer] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    command: CommandTask | None = None
    output: OutputContract | None = None

    def error(self, message: str, *key: str | int) -> ConfigError:
        """A ``ConfigError`` about ``key`` of this scenario's file."""
        line = self.document.line_of(key) if self.document is not None else None
        field_name = ".".join(str(k) for k in key) or None
        return ConfigError(message, path=self.path, line=line, field=field_name)


def scenario_from_document(document: Document) -> Scenario:
    """Validate a parsed scenario file. Raises ``ConfigError`` with file, line and field."""
    data = validate_document(ScenarioFile, document)
    if isinstance(data.model, Script):
        bad = [key for key in data.model.script if not _SCRIPT_KEY.fullmatch(key)]
        if bad:
            raise ConfigError.collect(
                [
                    ConfigError(
                        f"'{key}' is not a script key: give a role ('developer') or one"
                        " instance of it ('developer#2', numbered from 1)",
                        path=document.path,
                        line=document.line_of(("model", "script", key)),
                        field=f"model.script.{key}",
                    )
                    for key in bad
                ]
            )
    base = document.path.parent
    team = Path(data.team)
    workspace = Path(data.workspace) if data.workspace else None
    if workspace is not None and not workspace.is_absolute():
        workspace = base / workspace
    runs_dir = Path(data.runs_dir).expanduser() if data.runs_dir else None
    if runs_dir is not None and not runs_dir.is_absolute():
        runs_dir = base / runs_dir
    command = None
    if isinstance(data.task, CommandFile):
        where = Path(data.task.command)
        try:
            found = read_command(where if where.is_absolute() else base / where)
        except ConfigError as exc:
            raise ConfigError(
                exc.message, path=document.path, line=document.line_of(("task",)), field="task"
            ) from None
        command = CommandTask(found, tuple(data.task.args))
    return Scenario(
        name=data.name or document.path.stem,
        task=command.title if command is not None else str(data.task),
        team=team if team.is_absolute() else base / team,
        description=data.description,
        path=document.path,
        entry=data.entry,
        policy=data.policy,
        workspace=workspace,
        runs_dir=runs_dir,
        files=dict(data.files),
        model=data.model,
        models=model_aliases(data.models),
        prices=model_prices(data.models),
        cache=data.cache,
        limits=data.limits,
        expect=data.expect,
        document=document,
        tools=dict(data.tools),
        mcp_servers=parse_mcp_servers(data.mcp_servers, document, key=("mcp_servers",))
        if data.mcp_servers
        else {},
        inputs=dict(data.inputs),
        command=command,
    )


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario file. Raises ``ConfigError`` naming file, line, field."""
    return scenario_from_document(load_document(path))

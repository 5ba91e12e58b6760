"""CrewAI crews read as they are: ``agents.yaml`` and ``tasks.yaml`` (in ``config/`` or not).

Each agent of ``agents.yaml`` becomes a role: ``role``, ``goal`` and ``backstory`` its
system prompt (``role`` also its description), ``llm`` its model (``openai/gpt-4o`` is
``openai:gpt-4o``, ``ollama/llama3`` the local Ollama server's; other providers are warned
about and the run's model is used), ``max_iter`` its ``max_iterations``, ``tools`` the
toolbox tools whose names match (``FileReadTool`` is ``read_file``; the others are dropped
with a warning). ``allow_delegation: true`` makes the agent delegate to every agent that
does not, and to the delegating agents after it in the file (so no two agents delegate to
each other); in a hierarchical crew the manager (``manager:`` in ``crew.yaml``, else the
first agent that allows delegation, else the first agent) delegates to all the others and
takes every task.

``tasks.yaml`` becomes the run's task list, in order: the task's ``description`` with its
``expected_output``, given to its ``agent``, with the outputs of the tasks its ``context``
names. ``{placeholders}`` anywhere are filled from the run's inputs (``--input key=value``).
A task's ``output_pydantic`` / ``output_json`` (in ``tasks.yaml``, or its ``@task`` method
in ``crew.py``) names a pydantic class of the crew's Python files: read without running
them (``swarm.team.crew_models``), it is the schema the task's answer must meet; a class
that cannot be read that way is said once, and the task runs untyped.
The crew's process is ``process:`` in an optional ``crew.yaml`` (``sequential`` or
``hierarchical``), else what a ``crew.py`` beside the config says (``Process.hierarchical``).
What does not map is said once, with the file and the line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swarm.config import Document, load_document
from swarm.contracts import OutputContract
from swarm.errors import ConfigError
from swarm.team.claude_markdown import slug
from swarm.team.spec import AgentSpec

if TYPE_CHECKING:  # a crew's Python models are read only when a crew is loaded
    from swarm.team.crew_models import ModelProblem, ProjectModels

__all__ = [
    "CREW_TOOLS",
    "Crew",
    "CrewTask",
    "crew_files",
    "fill",
    "load_crew",
    "missing_inputs",
]

CREW_TOOLS: Mapping[str, str] = {
    "FileReadTool": "read_file",
    "file_read_tool": "read_file",
    "FileWriterTool": "write_file",
    "file_writer_tool": "write_file",
    "DirectoryReadTool": "list_files",
    "directory_read_tool": "list_files",
    "DirectorySearchTool": "search",
    "directory_search_tool": "search",
    "TXTSearchTool": "search",
    "txt_search_tool": "search",
}
"""CrewAI tool names and the toolbox tool each one becomes; any other is dropped."""

_PROVIDERS = frozenset({"openai", "anthropic"})
_OLLAMA = "openai-compatible:http://127.0.0.1:11434/v1:"  # Ollama's OpenAI-compatible API
_AGENT_IGNORED = frozenset(
    {"verbose", "cache", "memory", "max_rpm", "max_execution_time", "respect_context_window"}
    | {"allow_code_execution", "code_execution_mode", "multimodal", "reasoning", "inject_date"}
    | {"function_calling_llm", "system_template", "prompt_template", "response_template"}
    | {"max_retry_limit", "use_system_prompt", "step_callback", "embedder", "knowledge_sources"}
    | {"max_reasoning_attempts", "date_format"}
)
_TASK_IGNORED = frozenset(
    {"async_execution", "human_input", "markdown", "tools", "guardrail", "callback"}
    | {"create_directory", "output_file", "name", "config", "converter_cls"}
)
_TASK_READ = frozenset(
    {"description", "expected_output", "agent", "context", "output_pydantic", "output_json"}
)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
Process = Literal["sequential", "hierarchical"]


@dataclass(frozen=True, slots=True)
class CrewTask:
    """One task of ``tasks.yaml``: its ``name`` (the key), ``description``,
    ``expected_output``, the ``agent`` that takes it (``None``: the crew's entry), the
    earlier tasks whose outputs it is given (``context``), the schema its answer must
    meet (``output``: its ``output_pydantic``/``output_json``; ``None``: free text), and
    where it is written."""

    name: str
    description: str
    expected_output: str = ""
    agent: str | None = None
    context: tuple[str, ...] = ()
    source: Path | None = None
    line: int | None = None
    output: OutputContract | None = None

    def text(self, inputs: Mapping[str, str], outputs: Mapping[str, str]) -> str:
        """The task as the agent gets it: the description, what to deliver, and the
        outputs of its ``context`` tasks, placeholders filled from ``inputs``."""
        parts = [fill(self.description, inputs).strip()]
        if self.expected_output:
            parts.append("Expected output: " + fill(self.expected_output, inputs).strip())
        for name in self.context:
            parts.append(f"Context from the task '{name}':\n{outputs.get(name, '').strip()}")
        return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class Crew:
    """A crew: its roles (``specs``), its ``tasks`` in order, its ``process``, the role
    that takes every task of a hierarchical crew (``manager``), and what did not map."""

    specs: Mapping[str, AgentSpec]
    tasks: tuple[CrewTask, ...]
    process: Process = "sequential"
    manager: str | None = None
    warnings: tuple[str, ...] = ()

    def entry_of(self, task: CrewTask) -> str | None:
        """The role that takes ``task``: the manager in a hierarchical crew, else its agent."""
        return self.manager if self.process == "hierarchical" else task.agent

    def filled(self, inputs: Mapping[str, str]) -> list[AgentSpec]:
        """The roles with their prompts' placeholders filled from ``inputs``."""
        return [
            dataclasses.replace(
                s, system=fill(s.system, inputs), description=fill(s.description, inputs)
            )
            for s in self.specs.values()
        ]


def fill(text: str, inputs: Mapping[str, str]) -> str:
    """``text`` with each ``{name}`` that ``inputs`` holds replaced by its value (the
    others are left as written)."""
    return _PLACEHOLDER.sub(lambda m: inputs.get(m[1], m[0]), text)


def missing_inputs(crew: Crew, inputs: Mapping[str, str]) -> list[str]:
    """The placeholders the crew's prompts and tasks use that ``inputs`` does not fill."""
    texts = [s.system for s in crew.specs.values()]
    texts += [t.description + t.expected_output for t in crew.tasks]
    names = dict.fromkeys(m for text in texts for m in _PLACEHOLDER.findall(text))
    return [name for name in names if name not in inputs]


def crew_files(directory: Path) -> tuple[Path, Path] | None:
    """``agents.yaml`` and ``tasks.yaml`` of the crew in ``directory`` (itself, its
    ``config/``, or a CrewAI project's ``src/<package>/config/``), or ``None``."""
    candidates = [directory, directory / "config", *sorted(directory.glob("src/*/config"))]
    for folder in candidates:
        for ext in ("yaml", "yml"):
            agents, tasks = folder / f"agents.{ext}", folder / f"tasks.{ext}"
            if agents.is_file() and tasks.is_file():
                return agents, tasks
    return None


class _Said:
    """Warnings of one crew, each once."""

    def __init__(self) -> None:
        self.lines: dict[str, None] = {}

    def warn(self, document: Document, key: tuple[str, ...], message: str) -> None:
        line = document.line_of(key)
        error = ConfigError(message, path=document.path, line=line, field=".".join(key))
        self.lines[str(error)] = None

    def untyped(self, problem: ModelProblem, tasks: list[str]) -> None:
        """A model that cannot be read, and the tasks that run untyped for it."""
        names = ", ".join(f"'{t}'" for t in tasks)
        which = f"the task {names} runs" if len(tasks) == 1 else f"the tasks {names} run"
        message = f"{problem.message}: {which} untyped"
        self.lines[str(ConfigError(message, path=problem.path, line=problem.line))] = None


class _Outputs:
    """The typed outputs of a crew's tasks, their models read once from its Python files
    (parsed only when some task names one)."""

    def __init__(self, agents_path: Path) -> None:
        from swarm.team.crew_models import crew_home

        self.home = crew_home(agents_path)
        self._models: ProjectModels | None = None
        self.unread: dict[ModelProblem, list[str]] = {}

    @property
    def models(self) -> ProjectModels:
        if self._models is None:
            from swarm.team.crew_models import ProjectModels

            self._models = ProjectModels(self.home)
        return self._models

    def declared(self) -> bool:
        """Whether ``crew.py`` may give tasks their models (so it must be read)."""
        return (self.home / "crew.py").is_file()

    def of(
        self, name: str, data: dict[str, Any], document: Document, said: _Said
    ) -> OutputContract | None:
        """The contract of the task ``name``: its ``@task`` method's class, else the one
        its ``output_pydantic``/``output_json`` names; ``None`` when it has none or the
        class cannot be read (said once, with where)."""
        from swarm.team.crew_models import ModelProblem

        keys = [k for k in ("output_pydantic", "output_json") if k in data]
        if len(keys) == 2:
            raise ConfigError(
                "a task has 'output_pydantic' or 'output_json', not both (as CrewAI says)",
                path=document.path,
                line=document.line_of((name, "output_json")),
                field=f"{name}.output_json",
            )
        method = self.models.tasks.get(name) if keys or self.declared() else None
        if method is not None:
            value = method.name
        elif keys:
            raw = data[keys[0]]
            if not isinstance(raw, str) or not raw.strip():
                message = "expected the name of a pydantic class: the task runs untyped"
                said.warn(document, (name, keys[0]), message)
                return None
            value = raw.strip()
        else:
            return None
        schema = self.models.schema(value)
        if isinstance(schema, ModelProblem):
            self.unread.setdefault(schema, []).append(name)
            return None
        try:
            return OutputContract.of(schema, source=value)
        except ValueError as exc:  # a schema the JSON Schema meta-schema refuses
            problem = ModelProblem(self.home, None, f"the schema of '{value}' is invalid: {exc}")
            self.unread.setdefault(problem, []).append(name)
            return None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else str(value)


def _model(value: Any, document: Document, key: tuple[str, ...], said: _Said) -> str | None:
    if not isinstance(value, str) or not value.strip():
        if value is not None:
            said.warn(document, key, "an llm given in Python is not read: the run's model is used")
        return None
    text = value.strip()
    provider, slash, model = text.partition("/")
    if slash and provider in _PROVIDERS:
        return f"{provider}:{model}"
    if slash and provider == "ollama":
        return _OLLAMA + model
    if not slash and text.startswith(("gpt-", "o1", "o3", "o4")):
        return f"openai:{text}"
    if not slash and text.startswith("claude"):
        return f"anthropic:{text}"
    said.warn(document, key, f"llm '{text}' names no provider swarm knows: the run's model is used")
    return None


def _tools(value: Any, document: Document, name: str, said: _Said) -> tuple[str, ...]:
    entries = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    mapped: list[str] = []
    for entry in entries:
        text = str(entry).strip().removesuffix("()")
        tool = CREW_TOOLS.get(text)
        if tool is None:
            said.warn(
                document,
                (name, "tools"),
                f"the CrewAI tool '{text}' has no equivalent in swarm: dropped",
            )
        elif tool not in mapped:
            mapped.append(tool)
    return tuple(mapped)


def _agent(name: str, data: Any, document: Document, said: _Said) -> AgentSpec:
    if not isinstance(data, dict):
        raise ConfigError(
            "expected an agent: role, goal, backstory",
            path=document.path,
            line=document.line_of((name,)),
            field=name,
        )
    role, goal, backstory = (_text(data.get(k)) for k in ("role", "goal", "backstory"))
    if not role:
        raise ConfigError(
            "an agent needs a 'role'",
            path=document.path,
            line=document.line_of((name,)),
            field=name,
        )
    system = f"You are {role}."
    if goal:
        system += f"\n\nYour goal: {goal}"
    if backstory:
        system += f"\n\n{backstory}"
    max_iter = data.get("max_iter")
    for key in data:
        if key in _AGENT_IGNORED:
            said.warn(document, (name, str(key)), "means nothing to swarm: ignored")
        elif key not in (
            "role",
            "goal",
            "backstory",
            "llm",
            "tools",
            "allow_delegation",
            "max_iter",
        ):
            said.warn(document, (name, str(key)), "not a CrewAI agent field swarm reads: ignored")
    role_name = slug(name) or "agent"
    locations = {("name",): document.line_of((name,)) or 1}
    return AgentSpec(
        name=role_name,
        description=role,
        system=system,
        model=_model(data.get("llm"), document, (name, "llm"), said),
        tools=_tools(data.get("tools", []), document, name, said),
        max_iterations=max_iter if isinstance(max_iter, int) and max_iter > 0 else 50,
        source=document.path,
        locations={k: v for k, v in locations.items() if v is not None},
    )


def _task(
    name: str,
    data: Any,
    document: Document,
    agents: Mapping[str, str],
    said: _Said,
    earlier: list[str],
    outputs: _Outputs,
) -> CrewTask:
    where = {"path": document.path, "line": document.line_of((name,)), "field": name}
    if not isinstance(data, dict) or not _text(data.get("description")):
        raise ConfigError("a task needs a 'description'", **where)  # type: ignore[arg-type]
    agent = data.get("agent")
    if agent is not None and str(agent) not in agents:
        known = ", ".join(agents) or "none"
        raise ConfigError(
            f"no agent '{agent}' in agents.yaml (agents: {known})",
            path=document.path,
            line=document.line_of((name, "agent")),
            field=f"{name}.agent",
        )
    context = data.get("context") or []
    context = context if isinstance(context, list) else [context]
    for other in context:
        if str(other) not in earlier:
            raise ConfigError(
                f"'{other}' is not a task before this one: its output cannot be passed",
                path=document.path,
                line=document.line_of((name, "context")),
                field=f"{name}.context",
            )
    for key in data:
        if key in _TASK_IGNORED:
            said.warn(document, (name, str(key)), "means nothing to swarm: ignored")
        elif key not in _TASK_READ:
            said.warn(document, (name, str(key)), "not a CrewAI task field swarm reads: ignored")
    return CrewTask(
        name=name,
        description=_text(data.get("description")),
        expected_output=_text(data.get("expected_output")),
        agent=agents[str(agent)] if agent is not None else None,
        context=tuple(str(c) for c in context),
        source=document.path,
        line=document.line_of((name,)),
        output=outputs.of(name, data, document, said),
    )


def _process(agents_path: Path) -> tuple[Process, str | None]:
    """The crew's process and named manager: ``crew.yaml`` beside the config or above it,
    else a ``crew.py`` that says ``Process.hierarchical``."""
    folders = [agents_path.parent, agents_path.parent.parent]
    for folder in folders:
        path = folder / "crew.yaml"
        if path.is_file():
            data = load_document(path).data
            if isinstance(data, dict):
                process = data.get("process", "sequential")
                if process not in ("sequential", "hierarchical"):
                    raise ConfigError(
                        "expected 'sequential' or 'hierarchical'", path=path, field="process"
                    )
                manager = data.get("manager")
                return process, str(manager) if manager else None
    for folder in folders:
        code = folder / "crew.py"
        if code.is_file() and "Process.hierarchical" in code.read_text(
            encoding="utf-8", errors="replace"
        ):
            return "hierarchical", None
    return "sequential", None


def load_crew(agents_path: Path, tasks_path: Path) -> Crew:
    """The crew of ``agents_path`` and ``tasks_path``. Raises ``ConfigError`` naming the
    file, line and field of each problem."""
    said = _Said()
    agents_doc, tasks_doc = load_document(agents_path), load_document(tasks_path)
    for document in (agents_doc, tasks_doc):
        if not isinstance(document.data, dict) or not document.data:
            raise ConfigError("expected a mapping of names to entries", path=document.path, line=1)
    specs: dict[str, AgentSpec] = {}
    names: dict[str, str] = {}
    delegating: list[str] = []
    for key, data in agents_doc.data.items():
        if isinstance(data, dict) and "role" not in data:
            # a YAML anchor's holder (defaults: &defaults), which CrewAI never reads either
            said.warn(agents_doc, (str(key),), "no 'role': not an agent, ignored")
            continue
        spec = _agent(str(key), data, agents_doc, said)
        specs[spec.name] = spec
        names[str(key)] = spec.name
        if isinstance(data, dict) and data.get("allow_delegation") is True:
            delegating.append(spec.name)
    process, manager = _process(agents_path)
    if manager is not None and manager not in names:
        raise ConfigError(
            f"no agent '{manager}' to be the manager", path=agents_path, field="manager"
        )
    if process == "hierarchical":
        boss = names[manager] if manager else delegating[0] if delegating else next(iter(specs))
        others = tuple(n for n in specs if n != boss)
        specs[boss] = dataclasses.replace(specs[boss], delegates=others)
        manager = boss
    else:
        # each delegating agent delegates to the agents that do not, and to the delegating
        # ones after it: never in a circle, and the first one leads
        for at, name in enumerate(delegating):
            later = set(delegating[at + 1 :])
            helpers = tuple(n for n in specs if n not in delegating or n in later)
            specs[name] = dataclasses.replace(specs[name], delegates=helpers)
    tasks: list[CrewTask] = []
    outputs = _Outputs(agents_path)
    for key, data in tasks_doc.data.items():
        earlier = [t.name for t in tasks]
        tasks.append(_task(str(key), data, tasks_doc, names, said, earlier, outputs))
    for problem, task_names in outputs.unread.items():
        said.untyped(problem, task_names)
    return Crew(specs, tuple(tasks), process, manager, tuple(said.lines))

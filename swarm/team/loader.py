"""Loading role files: one loader per format, a directory scan, and ``load_agents``.

A directory holds one role per file: YAML (``.yaml``/``.yml``), TOML, JSON, or Markdown
whose YAML front matter holds the fields and whose body is the system prompt (the Claude
Code sub-agent format, read as Claude Code reads it: ``swarm.team.claude``). A
``README.md`` is not a role and the directory scan skips it; any other Markdown file
without front matter is an error. Custom sources subclass ``AgentLoader`` and implement
``load(content)``; ``load_file`` reads the file and names it in any error.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from swarm.config import parse_document
from swarm.errors import ConfigError
from swarm.loop.agent import Agent
from swarm.mcp.config import MCP_FILES
from swarm.team.claude import claude_fields
from swarm.team.claude_markdown import read_markdown, slug
from swarm.team.claude_settings import project_specs
from swarm.team.crewai import crew_files, load_crew
from swarm.team.layout import team_layout
from swarm.team.spec import AgentSpec, check_name, index_specs, role_spec
from swarm.team.teamfile import TEAM_FILES
from swarm.tools import Tool

__all__ = [
    "AgentLoader",
    "JsonAgentLoader",
    "MarkdownAgentLoader",
    "MultiFormatLoader",
    "TomlAgentLoader",
    "YamlAgentLoader",
    "default_roles_dir",
    "load_agents",
    "load_specs",
]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path=path) from None


def _with_path(error: ConfigError, path: Path) -> ConfigError:
    """The same problems, each naming ``path`` where it named no file."""
    located = [
        p if p.path is not None else ConfigError(p.message, path=path, line=p.line, field=p.field)
        for p in error.problems
    ]
    return ConfigError.collect(located)


class AgentLoader(ABC):
    """Base class for loaders of one role format.

    Subclasses set ``extensions`` (without the dot) and implement ``load(content)``; the
    content may come from anywhere (a file, a database, HTTP). ``load_file`` reads a file,
    calls ``load_source`` (by default ``load``), names the role after the file stem when
    the content gives no name, and reports parse failures as a ``ConfigError`` naming the
    file.
    """

    extensions: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def load(self, content: str) -> AgentSpec:
        """Parse ``content`` into an ``AgentSpec``; ``name`` is ``""`` when absent."""

    def load_source(self, content: str, source: Path) -> AgentSpec:
        """Parse ``content`` read from ``source``; override to give located errors."""
        return self.load(content)

    def handles(self, path: Path) -> bool:
        """Whether ``path`` has one of this loader's extensions."""
        return path.suffix.lower().lstrip(".") in self.extensions

    def is_role_file(self, path: Path) -> bool:
        """Whether a directory scan should load ``path`` (a file this loader handles)."""
        return self.handles(path)

    def load_file(self, path: str | Path) -> AgentSpec:
        """Read and parse one role file. Raises ``ConfigError`` naming the file."""
        path = Path(path)
        content = _read(path)
        try:
            spec = self.load_source(content, path)
        except ConfigError as exc:
            raise _with_path(exc, path) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot load role: {exc}", path=path) from exc
        if not spec.name:
            try:
                name = check_name(path.stem)
            except ValueError as exc:
                raise ConfigError(
                    f"the file gives no name and its stem cannot be one: {exc}",
                    path=path,
                    field="name",
                ) from None
            spec = dataclasses.replace(spec, name=name)
        if spec.source is None:
            spec = dataclasses.replace(spec, source=path)
        return spec


class _DocumentLoader(AgentLoader):
    """A loader for a format ``swarm.config`` parses, with the line of every key."""

    format: ClassVar[str]

    def load(self, content: str) -> AgentSpec:
        """Parse ``content``; errors name the format in place of a file."""
        return self._parse(content, None)

    def load_source(self, content: str, source: Path) -> AgentSpec:
        """Parse ``content``; errors name ``source`` and the line."""
        return self._parse(content, source)

    def _parse(self, content: str, source: Path | None) -> AgentSpec:
        where = source if source is not None else Path(f"<{self.format}>")
        content = content.removeprefix("\ufeff")  # editors on Windows add a byte-order mark
        return role_spec(parse_document(content, where, self.format), source=source)


class YamlAgentLoader(_DocumentLoader):
    """Load roles from YAML files: the fields at the top level."""

    extensions = ("yaml", "yml")
    format = "yaml"


class TomlAgentLoader(_DocumentLoader):
    """Load roles from TOML files; ``[system]`` with ``text = ...`` holds a long prompt."""

    extensions = ("toml",)
    format = "toml"


class JsonAgentLoader(_DocumentLoader):
    """Load roles from JSON files: one object of fields."""

    extensions = ("json",)
    format = "json"


def _is_readme(path: Path) -> bool:
    return path.stem.lower() == "readme"


class MarkdownAgentLoader(_DocumentLoader):
    """Load roles from Markdown: front matter for the fields, the body as the prompt.

    This is the Claude Code sub-agent format, read as Claude Code reads it (see
    ``swarm.team.claude``): its tool names, fields and lenient front matter are accepted,
    and what changed or was ignored is in the spec's ``warnings``. A file without front
    matter is an error, except a ``README.md`` (any case), which a directory scan skips:
    it documents the roles and is never one.
    """

    extensions = ("md", "markdown")
    format = "markdown"

    def _parse(self, content: str, source: Path | None) -> AgentSpec:
        where = source if source is not None else Path("<markdown>")
        document, warnings = read_markdown(content, where)
        fields = claude_fields(document, warnings)
        try:
            spec = role_spec(fields.document, source=source)
        except ConfigError as exc:
            raise ConfigError.collect(
                sorted([*fields.problems, *exc.problems], key=lambda p: p.line or 0)
            ) from None
        if fields.problems:
            raise ConfigError.collect(fields.problems)
        if not spec.name and source is not None:
            made = slug(source.stem)
            if made and made != source.stem:
                fields.warnings.append(
                    str(
                        ConfigError(
                            f"the file's name cannot name a tool; the role is named '{made}'",
                            path=source,
                            field="name",
                        )
                    )
                )
                spec = dataclasses.replace(spec, name=made)
        return dataclasses.replace(
            spec,
            optional_tools=spec.optional_tools | fields.optional_tools,
            shell_commands=tuple(fields.shell_commands),
            shell_denied=tuple(fields.shell_denied),
            warnings=(*spec.warnings, *fields.warnings),
        )

    def is_role_file(self, path: Path) -> bool:
        """Every Markdown file but a README is a role."""
        return self.handles(path) and not _is_readme(path)


def _default_loaders() -> list[AgentLoader]:
    return [YamlAgentLoader(), TomlAgentLoader(), JsonAgentLoader(), MarkdownAgentLoader()]


@dataclass
class MultiFormatLoader:
    """Loads role files of every format its ``loaders`` handle (YAML, TOML, JSON and
    Markdown by default), choosing by extension; the first loader that handles a file wins.
    """

    loaders: list[AgentLoader] = field(default_factory=_default_loaders)

    @property
    def extensions(self) -> tuple[str, ...]:
        """Every extension some loader handles."""
        return tuple(ext for loader in self.loaders for ext in loader.extensions)

    def loader_for(self, path: str | Path) -> AgentLoader | None:
        """The loader for ``path``, or ``None`` when no loader handles it."""
        return next((lo for lo in self.loaders if lo.handles(Path(path))), None)

    def load_file(self, path: str | Path) -> AgentSpec:
        """Load one role file. Raises ``ConfigError`` for a format no loader handles."""
        path = Path(path)
        loader = self.loader_for(path)
        if loader is None:
            known = ", ".join(f".{ext}" for ext in self.extensions)
            raise ConfigError(f"not a role file type (known: {known})", path=path)
        return loader.load_file(path)

    def role_files(self, directory: str | Path) -> list[Path]:
        """The role files in ``directory`` (not its subdirectories), sorted by name; for a
        Claude Code project root, those of its ``.claude/agents`` (``team_layout``).

        Hidden files, the team file (``team.yaml``), ``mcp.json``, a ``README.md`` and
        files no loader handles are left out. Raises ``ConfigError`` when the directory
        does not exist or holds no role file.
        """
        directory = Path(directory)
        if not directory.exists():
            raise ConfigError("role directory not found", path=directory)
        if directory.is_dir():
            directory = team_layout(directory).roles
        if not directory.is_dir():
            raise ConfigError("expected a directory of role files, found a file", path=directory)
        files = []
        for path in sorted(directory.iterdir()):
            reserved = path.name in TEAM_FILES or path.name in MCP_FILES
            if path.name.startswith(".") or not path.is_file() or reserved:
                continue
            loader = self.loader_for(path)
            if loader is not None and loader.is_role_file(path):
                files.append(path)
        if not files:
            known = ", ".join(f".{ext}" for ext in self.extensions)
            raise ConfigError(f"no role files ({known}) in this directory", path=directory)
        return files

    def load_directory(self, directory: str | Path) -> dict[str, AgentSpec]:
        """Load every role file in ``directory``, keyed by role name.

        Raises one ``ConfigError`` with every bad file's problems in ``.problems``; two
        files defining one name are an error naming both. A CrewAI crew folder
        (``agents.yaml`` and ``tasks.yaml``) gives its agents (``swarm.team.crewai``); a
        Claude Code project's settings apply to its roles (``swarm.team.claude_settings``).
        """
        crew = crew_specs(Path(directory))
        if crew is not None:
            return crew
        specs: list[AgentSpec] = []
        problems: list[ConfigError] = []
        for path in self.role_files(directory):
            try:
                specs.append(self.load_file(path))
            except ConfigError as exc:
                problems.extend(exc.problems)
        if problems:
            raise ConfigError.collect(problems)
        return project_specs(Path(directory), index_specs(specs))  # .claude/settings.json


def crew_specs(directory: Path) -> dict[str, AgentSpec] | None:
    """The roles of the CrewAI crew in ``directory`` (``None`` when it holds none); what
    did not map rides on the first role's ``warnings``."""
    found = crew_files(directory) if directory.is_dir() else None
    if found is None:
        return None
    crew = load_crew(*found)
    specs = dict(crew.specs)
    first = next(iter(specs))
    specs[first] = dataclasses.replace(
        specs[first], warnings=(*crew.warnings, *specs[first].warnings)
    )
    return specs


def load_specs(
    directory: str | Path, *, loader: MultiFormatLoader | None = None
) -> dict[str, AgentSpec]:
    """Load every role file in ``directory`` into ``{name: AgentSpec}``.

    Raises ``ConfigError`` (every problem in ``.problems``) for a missing or empty
    directory, a bad file, or two files with one role name.
    """
    return (loader or MultiFormatLoader()).load_directory(directory)


def agents_from_specs(
    specs: Mapping[str, AgentSpec],
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]],
    *,
    mcp_servers: Collection[str] = (),
) -> dict[str, tuple[str, Agent]]:
    """Prototype agents for ``specs``; every unknown tool of every role in one error."""
    agents: dict[str, tuple[str, Agent]] = {}
    problems: list[ConfigError] = []
    for name, spec in specs.items():
        try:
            agents[name] = (spec.description, spec.to_agent(toolbox, mcp_servers=mcp_servers))
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError.collect(problems)
    return agents


def load_agents(
    directory: str | Path,
    toolbox: Mapping[str, Tool[Any]] = MappingProxyType({}),
    *,
    loader: MultiFormatLoader | None = None,
) -> dict[str, tuple[str, Agent]]:
    """Load a directory of roles as ``{name: (description, prototype Agent)}``.

    Each agent has its role's toolbox tools and a ``DummyCompletionTransport`` (use
    ``agent.copy(transport=...)``). The delegation graph is not checked here; use
    ``Team.load`` for that. Raises ``ConfigError`` for bad files and unknown tools.
    """
    return agents_from_specs(load_specs(directory, loader=loader), toolbox)


def default_roles_dir() -> Path:
    """The directory of the default team that ships with swarm.

    An installed wheel carries it as ``swarm/team/roles``; in a source checkout (or an
    editable install) it is ``roles/`` at the repository root, the files users copy and
    edit. Raises ``ConfigError`` when neither is present.
    """
    package = Path(__file__).resolve().parent
    packaged = package / "roles"
    if packaged.is_dir():
        return packaged
    checkout = package.parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "roles").is_dir():
        return checkout / "roles"
    raise ConfigError("the default roles are not installed", path=packaged)

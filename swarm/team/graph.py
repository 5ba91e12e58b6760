"""The team: roles and the delegation graph between them, validated before anything runs.

Each role's ``delegates`` are edges of the delegation graph (``swarm.team.digraph``, plain
dictionaries; ``Team.graph`` builds the same graph as a ``networkx.DiGraph`` on first use,
so validating and running a team never import networkx). A ``Team`` refuses to exist
when a delegate is not a role, a delegation cycle exists, or a chain from the entry role
runs deeper than ``max_depth`` (or than a role's own ``budget.depth``); it warns about roles
that only delegation reaches but the entry cannot. The graph exports as Mermaid and DOT.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from swarm._log import logger
from swarm.config import did_you_mean
from swarm.errors import ConfigError
from swarm.loop.agent import Agent
from swarm.mcp.config import McpServer
from swarm.team.digraph import Delegations, delegations
from swarm.team.implicit import implicit_orchestrator, needs_orchestrator
from swarm.team.layout import team_layout
from swarm.team.loader import MultiFormatLoader, agents_from_specs, load_specs
from swarm.team.skills import Skill, load_skills, with_skills
from swarm.team.spec import AgentSpec, check_name, index_specs
from swarm.team.teamfile import (
    load_team_file,
    load_team_mcp,
    mcp_file_warnings,
    mcp_warnings,
    model_aliases,
    model_prices,
)
from swarm.tools import Tool

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["DEFAULT_MAX_DEPTH", "Team"]

DEFAULT_MAX_DEPTH = 3

log = logger(__name__)


def _role_problems(specs: Mapping[str, AgentSpec]) -> list[ConfigError]:
    """Names that cannot be tool names, and delegates that are not roles."""
    roles = ", ".join(specs)
    problems = []
    for spec in specs.values():
        try:
            check_name(spec.name)
        except ValueError as exc:
            problems.append(spec.error(str(exc), "name"))
        for index, delegate in enumerate(spec.delegates):
            if delegate not in specs:
                hint = did_you_mean(delegate, specs)
                known = hint or f" (roles: {roles})"
                message = f"delegate '{delegate}' is not a role{known}"
                problems.append(spec.error(message, "delegates", index))
            elif delegate in spec.tools:
                message = f"delegate '{delegate}' has the name of one of the role's tools"
                problems.append(spec.error(message, "delegates", index))
    return problems


def _arrows(chain: Iterable[str]) -> str:
    return " -> ".join(chain)


def _cycle_problems(graph: Delegations, specs: Mapping[str, AgentSpec]) -> list[ConfigError]:
    """One problem per strongly connected component that holds a cycle, named from its
    alphabetically first role and pointing at that role's delegates entry."""
    problems = []
    components = sorted((sorted(c) for c in graph.components()), key=lambda c: c[0])
    for component in components:
        first = component[0]
        if len(component) == 1 and not graph.has_edge(first, first):
            continue
        cycle = graph.subgraph(component).find_cycle(first)
        start = cycle.index(min(cycle))
        cycle = cycle[start:] + cycle[:start]
        spec = specs[cycle[0]]
        following = cycle[1] if len(cycle) > 1 else cycle[0]
        message = f"delegation cycle {_arrows([*cycle, cycle[0]])}"
        problems.append(spec.error(message, "delegates", spec.delegates.index(following)))
    return problems


def _choose_entry(graph: Delegations, entry: str | None) -> str:
    if entry is not None:
        if entry not in graph:
            raise ConfigError(f"entry role '{entry}' is not a role (roles: {', '.join(graph)})")
        return entry
    roots = [name for name in graph if not graph.pred[name]]
    if len(roots) == 1:
        return roots[0]
    raise ConfigError(
        f"cannot tell the entry role: {', '.join(roots)} are delegated to by no role; "
        "choose one with --entry ROLE (a scenario's 'entry:', Team(entry=...) in Python)"
    )


def _longest_chain(graph: Delegations, start: str) -> list[str]:
    """The longest delegation chain from ``start`` (the graph must have no cycles)."""
    chain = graph.subgraph(graph.descendants(start) | {start}).longest_path()
    return chain if chain else [start]


def _depth_problems(
    graph: Delegations, specs: Mapping[str, AgentSpec], entry: str, max_depth: int
) -> list[ConfigError]:
    problems = []
    chain = _longest_chain(graph, entry)
    if len(chain) - 1 > max_depth:
        # Point at the delegates entry that takes the chain past the limit.
        owner = specs[chain[max_depth]]
        index = owner.delegates.index(chain[max_depth + 1])
        message = (
            f"delegation chain {_arrows(chain)} is {len(chain) - 1} deep; max_depth is {max_depth}"
        )
        problems.append(owner.error(message, "delegates", index))
    for name, spec in specs.items():
        limit = spec.budget.depth
        if limit is None:
            continue
        chain = _longest_chain(graph, name)
        if len(chain) - 1 > limit:
            message = (
                f"delegation chain {_arrows(chain)} is {len(chain) - 1} deep; "
                f"this role's budget allows {limit}"
            )
            problems.append(spec.error(message, "budget", "depth"))
    return problems


def _warnings(graph: Delegations, specs: Mapping[str, AgentSpec], entry: str) -> list[str]:
    reachable = graph.descendants(entry) | {entry}
    found = []
    for name in graph:
        callers = sorted(graph.pred[name])
        if name not in reachable and callers:
            found.append(
                f"role '{name}' is only reached by delegation (from {', '.join(callers)}) "
                f"but the entry role '{entry}' cannot reach it"
            )
        elif name in reachable and callers and not specs[name].description:
            found.append(
                f"role '{name}' has no description: the roles that delegate to it "
                "will not know what it is for"
            )
    return found


_MERMAID_WORDS = frozenset(
    {"end", "graph", "flowchart", "subgraph", "style", "class", "classdef", "click"}
)


def _mermaid_ids(names: Iterable[str]) -> dict[str, str]:
    ids: dict[str, str] = {}
    for name in names:
        base = re.sub(r"\W", "_", name)
        if not base[0].isalpha() or base.lower() in _MERMAID_WORDS:
            base = f"role_{base}"
        candidate, number = base, 2
        while candidate in ids.values():
            candidate, number = f"{base}_{number}", number + 1
        ids[name] = candidate
    return ids


def _dot_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class Team:
    """A validated team: role specs, the delegation graph and the entry role.

    ``delegations`` has an edge ``a -> b`` when ``a`` may delegate to ``b``; ``graph`` is
    the same as a ``networkx.DiGraph`` (built on first use), with a node per role
    (attributes ``spec`` and ``description``). ``entry`` is the role a run starts with;
    when not given it is the one role no other role delegates to, or, when two or more
    roles and none delegates, the implicit orchestrator (``swarm.team.implicit``; then
    ``implicit`` is true). ``models`` are the team's model aliases (``team.yaml``).
    ``warnings`` lists what is suspicious but allowed, and what loading the role files
    changed or ignored (also logged). Raises ``ConfigError`` (every problem in
    ``.problems``, each naming the role's file, the line and the ``delegates`` field) for a
    delegate that is not a role, a delegation cycle (``a -> b -> a``), or a chain from the
    entry deeper than ``max_depth`` delegations (or a role's ``budget.depth``).
    """

    def __init__(
        self,
        specs: Mapping[str, AgentSpec] | Iterable[AgentSpec],
        *,
        entry: str | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        directory: Path | None = None,
        mcp_servers: Mapping[str, McpServer] | None = None,
        models: Mapping[str, str] = MappingProxyType({}),
        skills: Mapping[str, Skill] | None = None,
    ) -> None:
        if max_depth < 0:
            raise ValueError(f"max_depth must be 0 or more, not {max_depth}")
        index = index_specs(specs.values() if isinstance(specs, Mapping) else specs)
        if not index:
            raise ConfigError("a team needs at least one role", path=directory)
        self.skills: Mapping[str, Skill] = MappingProxyType(dict(skills or {}))
        index, skill_notes = with_skills(index, self.skills)
        self.implicit = needs_orchestrator(index, entry)
        notes: list[str] = [w for spec in index.values() for w in spec.warnings] + skill_notes
        if self.implicit:
            main = implicit_orchestrator(index)
            index[main.name] = main
            entry = main.name
            notes.append(
                f"no role delegates and no entry was chosen: the implicit orchestrator"
                f" '{main.name}' delegates to every role ({', '.join(main.delegates)})"
            )
        self.models: Mapping[str, str] = MappingProxyType(dict(models))
        self.prices: dict[str, dict[str, float | int]] = {}  # from team.yaml's `models:`
        self.specs: Mapping[str, AgentSpec] = MappingProxyType(dict(sorted(index.items())))
        self.max_depth = max_depth
        self.directory = directory
        self.mcp_servers: Mapping[str, McpServer] = MappingProxyType(dict(mcp_servers or {}))
        self.delegations = delegations({n: spec.delegates for n, spec in self.specs.items()})
        cycles = _cycle_problems(self.delegations, self.specs)
        problems = _role_problems(self.specs) + cycles
        try:
            self.entry = _choose_entry(self.delegations, entry)
        except ConfigError as exc:
            # a delegate that is not a role leaves the role it meant delegated to by no
            # one: "cannot tell the entry role" would be that typo said a second time
            missing = any(d not in self.specs for r in self.specs.values() for d in r.delegates)
            if not missing:
                problems.append(exc if exc.path else ConfigError(exc.message, path=directory))
        else:
            if not cycles:  # depth is only defined on a graph without cycles
                problems += _depth_problems(self.delegations, self.specs, self.entry, max_depth)
        if problems:
            raise ConfigError.collect(problems)
        where = str(directory) if directory else None
        for note in notes:  # what loading changed: shown by `swarm validate` and `swarm run`
            log.info("team: " + note, directory=where)
        suspicious = _warnings(self.delegations, self.specs, self.entry)
        for warning in suspicious:
            log.warning("team: " + warning, directory=where)
        self.warnings: tuple[str, ...] = (*notes, *suspicious)

    @classmethod
    def load(
        cls,
        directory: str | Path,
        *,
        entry: str | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        loader: MultiFormatLoader | None = None,
    ) -> Team:
        """Load and validate the team whose role files are in ``directory``, with the MCP
        servers its ``mcp.json`` or ``.mcp.json`` declares and its ``team.yaml`` (model
        aliases) when it has one.

        Raises ``ConfigError`` for a bad file (see ``load_specs``) or a bad graph.
        """
        directory = Path(directory)
        specs = load_specs(directory, loader=loader)
        servers = load_team_mcp(directory)
        settings = load_team_file(directory)
        skills = load_skills(team_layout(directory).skills) if directory.is_dir() else {}
        team = cls(
            specs,
            entry=entry,
            max_depth=max_depth,
            directory=directory,
            mcp_servers=servers,
            models=model_aliases(settings.models),
            skills=skills,
        )
        team.prices = model_prices(settings.models)
        dropped = [
            *(w for skill in skills.values() for w in skill.warnings),
            *mcp_file_warnings(servers),
            *mcp_warnings(team.specs.values(), set(servers)),
        ]
        for warning in dropped:
            log.info("team: " + warning, directory=str(directory))
        team.warnings = (*team.warnings, *dropped)
        return team

    def replaced(
        self,
        *,
        specs: Iterable[AgentSpec] | None = None,
        mcp_servers: Mapping[str, McpServer] | None = None,
    ) -> Team:
        """This team with other role specs or MCP servers, and everything else kept (the
        entry, the depth limit, the directory, the model aliases); validated again."""
        return Team(
            list(self.specs.values()) if specs is None else specs,
            entry=self.entry,
            max_depth=self.max_depth,
            directory=self.directory,
            mcp_servers=self.mcp_servers if mcp_servers is None else mcp_servers,
            models=self.models,
            skills=self.skills,
        )

    @functools.cached_property
    def graph(self) -> nx.DiGraph[str]:
        """The delegation graph as a ``networkx.DiGraph`` (networkx is imported on first
        use): a node per role with attributes ``spec`` and ``description``, an edge
        ``a -> b`` when ``a`` may delegate to ``b``."""
        import networkx as nx

        graph: nx.DiGraph[str] = nx.DiGraph()
        for name, spec in self.specs.items():
            graph.add_node(name, spec=spec, description=spec.description)
        for name, spec in self.specs.items():
            graph.add_edges_from((name, d) for d in spec.delegates if d in self.specs)
        return graph

    def __repr__(self) -> str:
        return f"Team(entry={self.entry!r}, roles={list(self.specs)!r})"

    def __contains__(self, name: object) -> bool:
        return name in self.specs

    def __len__(self) -> int:
        return len(self.specs)

    @property
    def depth(self) -> int:
        """How many delegations deep the longest chain from the entry role goes."""
        return len(_longest_chain(self.delegations, self.entry)) - 1

    def delegates_of(self, name: str) -> tuple[str, ...]:
        """The roles ``name`` may delegate to, in the order its file lists them.

        Raises ``KeyError`` for a name that is not a role.
        """
        if name not in self.specs:
            raise KeyError(f"'{name}' is not a role of this team")
        return self.specs[name].delegates

    def reachable(self) -> tuple[str, ...]:
        """The roles a run from the entry can reach (the entry first, then by name)."""
        below = sorted(self.delegations.descendants(self.entry))
        return (self.entry, *below)

    def agents(
        self, toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]] = MappingProxyType({})
    ) -> dict[str, tuple[str, Agent]]:
        """``{name: (description, prototype Agent)}`` for every role, as ``load_agents``.

        ``mcp:`` entries of declared servers that ``toolbox`` lacks give no tool (a run
        puts the connected servers' tools in ``toolbox``, see ``swarm.mcp.mcp_toolbox``).

        The agents hold their toolbox tools only; delegation tools are added by the run.
        Raises ``ConfigError`` for every unknown tool name.
        """
        return agents_from_specs(self.specs, toolbox, mcp_servers=self.mcp_servers)

    def _drawing_order(self) -> list[str]:
        """The entry, then the other roles by name."""
        return [self.entry, *(name for name in self.specs if name != self.entry)]

    def _edges(self) -> list[tuple[str, str]]:
        """Delegation edges, grouped by role in drawing order, each in declared order."""
        return [(name, d) for name in self._drawing_order() for d in self.specs[name].delegates]

    def to_mermaid(self) -> str:
        """The delegation graph as a Mermaid flowchart (the entry role drawn rounded)."""
        ids = _mermaid_ids(self.specs)
        lines = ["flowchart TD"]
        for name in self._drawing_order():
            shape = '(["{}"])' if name == self.entry else '["{}"]'
            lines.append(f"    {ids[name]}{shape.format(name)}")
        lines.extend(f"    {ids[a]} --> {ids[b]}" for a, b in self._edges())
        return "\n".join(lines) + "\n"

    def to_dot(self) -> str:
        """The delegation graph in Graphviz DOT (the entry role drawn bold)."""
        lines = ["digraph team {", "    node [shape=box];"]
        for name in self._drawing_order():
            attributes = [f"tooltip={_dot_string(self.specs[name].description)}"]
            if name == self.entry:
                attributes.insert(0, "style=bold")
            lines.append(f"    {_dot_string(name)} [{', '.join(attributes)}];")
        lines.extend(f"    {_dot_string(a)} -> {_dot_string(b)};" for a, b in self._edges())
        lines.append("}")
        return "\n".join(lines) + "\n"

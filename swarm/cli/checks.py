"""``swarm validate`` in one pass: every problem of every file, each stage going on with
what the stages before it could read.

The stages: the scenario file (when given), each role file, the role names, the delegation
graph, each role's tools, each policy a role or the scenario names (and the ones they
extend), the rules of those policies that can never match in this team
(``swarm.guards.reach``), and the scenario's script. A file with a bad key is checked
again without that key (``swarm.config.without_keys``), so a typo in ``budget`` does not
hide an unknown delegate; a role file that cannot be read at all still stands in the graph
under its file's name, so the roles that delegate to it are not reported too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.background import AGENTS_TOOL
from swarm.config import Document, load_document, without_keys
from swarm.contracts import FINAL_ANSWER
from swarm.errors import ConfigError
from swarm.guards.policy import Policy, checked_policy, load_policy
from swarm.guards.reach import Reach, ToolNames, idle, unreachable
from swarm.models.resolver import missing_key, model_spec
from swarm.models.spec import transport_from_spec
from swarm.scenario.folders import is_policy_file
from swarm.scenario.policies import policy_refs
from swarm.scenario.tooling import scenario_tools
from swarm.team import DEFAULT_MAX_DEPTH, AgentSpec, MultiFormatLoader, Team
from swarm.team.claude_settings import project_specs
from swarm.team.layout import team_layout
from swarm.team.loader import crew_specs
from swarm.team.reach import role_tool_names, team_reach
from swarm.team.skills import Skill, load_skills
from swarm.team.spec import check_name, index_specs, meant_field, role_spec
from swarm.team.teamfile import (
    TeamFile,
    load_team_file,
    load_team_mcp,
    mcp_file_warnings,
    mcp_unset,
    mcp_warnings,
    model_aliases,
)
from swarm.toolbox import TOOL_NAMES
from swarm.tools import Tool

if TYPE_CHECKING:  # a team directory is checked without the scenario file's models
    from swarm.scenario.spec import Scenario, Script

__all__ = ["checked", "needed_keys", "validate"]

# Stand-ins for required fields while checking the rest of a file that lacks them.
_ROLE_FILL = {"system": "(stand-in: the file's prompt has a problem)"}
_SCENARIO_FILL = {"task": "(stand-in: the file's task has a problem)"}
_NO_ENTRY = "cannot tell the entry role"
_UNSET = re.compile(r"variable '([^']+)' is not set")

# Each policy a check reads, by (reference, directory): read once for its problems, and
# the same policy (when it has none) is the one whose rules are checked for reach.
_Policies = dict[tuple[str, Path | None], Policy | None]


def validate(target: Path, entry: str | None = None) -> tuple[list[ConfigError], list[str]]:
    """Every problem with a team directory, a scenario file or a policy file, and the
    warnings."""
    problems, warnings, _, _ = checked(target, entry)
    return problems, warnings


def checked(
    target: Path, entry: str | None = None
) -> tuple[list[ConfigError], list[str], Team | None, Scenario | None]:
    """``validate``'s problems and warnings, with the team and the scenario as they were
    read (for a caller that goes on with them rather than reading the files again);
    the team is ``None`` for a policy file and for files that do not make one."""
    problems: list[ConfigError] = []
    policies: _Policies = {}
    if is_policy_file(target):
        found = _one_policy(str(target), Path(), lambda m: ConfigError(m, path=target), policies)
        return found or _policy_alone(target), [], None, None
    scenario: Scenario | None = None
    directory = target
    max_depth = DEFAULT_MAX_DEPTH
    if not target.is_dir():
        scenario = _scenario(target, problems)
        if scenario is None:
            return problems, [], None, None
        directory = scenario.team
        entry = entry or scenario.entry
        if scenario.limits.max_depth is not None:
            max_depth = scenario.limits.max_depth
    before = len(problems)
    specs = _role_specs(directory, problems)
    partial = len(problems) > before  # some role was read without some of its keys
    team: Team | None = None
    warnings: list[str] = []
    servers, settings = _team_settings(directory, scenario, problems)
    skills = _skills(directory, problems)
    warnings += [w for skill in skills.values() for w in skill.warnings]
    if specs:
        try:
            team = Team(
                specs,
                entry=entry,
                max_depth=max_depth,
                directory=directory,
                mcp_servers=servers,
                models=model_aliases(settings.models),
                skills=skills,
            )
            warnings += team.warnings
            warnings += mcp_file_warnings(servers)
            warnings += mcp_warnings(team.specs.values(), set(servers))
        except ConfigError as exc:
            # A role read without its delegates leaves more roles no one delegates to:
            # "cannot tell the entry role" would then be the stand-ins' doing.
            problems += [
                p for p in exc.problems if not (partial and p.message.startswith(_NO_ENTRY))
            ]
        problems += _tool_problems(specs, scenario, servers)
        problems += _policy_problems(specs, scenario, policies)
        found, idle_rules = _reach_problems(
            team.specs if team else specs, scenario, servers, policies
        )
        problems += found
        warnings += idle_rules
    elif scenario is not None:
        problems += _policy_problems({}, scenario, policies)
    if scenario is not None:
        problems += _model_problems(scenario)
    if team is not None:
        problems += _role_model_problems(team, scenario)
    if scenario is not None and team is not None:
        problems += _script_problems(scenario, team, servers)
        warnings += _script_warnings(scenario, team)
    return _unique(problems), warnings, team, scenario


def _unique(problems: list[ConfigError]) -> list[ConfigError]:
    """Each problem once (two roles naming one bad policy file report it once)."""
    seen: set[str] = set()
    kept = []
    for problem in problems:
        if str(problem) not in seen:
            seen.add(str(problem))
            kept.append(problem)
    return kept


def _script(scenario: Scenario) -> Script | None:
    """The scenario's model when it is a script (its module is loaded: a scenario is)."""
    from swarm.scenario.spec import Script

    return scenario.model if isinstance(scenario.model, Script) else None


def _scenario(path: Path, problems: list[ConfigError]) -> Scenario | None:
    """The scenario, salvaged without its bad keys when it has some."""
    try:
        document = load_document(path)
    except ConfigError as exc:
        problems += exc.problems
        return None
    from swarm.scenario import scenario_from_document

    try:
        return scenario_from_document(document)
    except ConfigError as exc:
        problems += exc.problems
        if any(p.field and p.field.split(".")[0] == "team" for p in exc.problems):
            return None  # without its team, the scenario would check the default one
        rest = without_keys(document, exc.problems, fill=_SCENARIO_FILL)
    if rest is None:
        return None
    try:
        return scenario_from_document(rest)
    except ConfigError:
        return None


def _role_specs(directory: Path, problems: list[ConfigError]) -> dict[str, AgentSpec]:
    """Every role of ``directory``: a bad file's problems go to ``problems`` and the file
    stays in the team as well as it can (without its bad keys, or as a bare stand-in)."""
    loader = MultiFormatLoader()
    try:
        crew = crew_specs(directory)
        if crew is not None:
            return crew
        files = loader.role_files(directory)
    except ConfigError as exc:
        problems += exc.problems
        return {}
    specs: list[AgentSpec] = []
    for path in files:
        try:
            specs.append(loader.load_file(path))
        except ConfigError as exc:
            problems += exc.problems
            stand_in = _salvaged(path, exc)
            if stand_in is not None:
                specs.append(stand_in)
    try:
        indexed = index_specs(specs)
    except ConfigError as exc:
        problems += exc.problems
        indexed = {}
        for spec in specs:
            indexed.setdefault(spec.name, spec)
    try:
        return project_specs(directory, indexed)  # a Claude Code project's settings.json
    except ConfigError as exc:
        problems += exc.problems
        return indexed


def _salvaged(path: Path, error: ConfigError) -> AgentSpec | None:
    """What can be read of a role file with problems: without its bad keys, or a stand-in
    with no tools or delegates named after the file (``None`` when the stem cannot name
    a role)."""
    try:
        name = check_name(path.stem)
    except ValueError:
        name = ""
    try:
        document = _as_meant(load_document(path), error.problems)
        rest = without_keys(document, error.problems, fill=_ROLE_FILL)
        if rest is not None:
            spec = role_spec(rest, source=path)
            return spec if spec.name else _renamed(spec, name)
    except ConfigError:
        pass
    if not name:
        return None
    # A stand-in: it stops the roles delegating to it being reported as well.
    return AgentSpec(name=name, description=name, system=_ROLE_FILL["system"], source=path)


def _as_meant(document: Document, problems: list[ConfigError]) -> Document:
    """The role file with each misspelt top-level key read as the field it was meant to
    be (``delegate:`` as ``delegates:``) unless the file gives that field too: the typo is
    reported once, and the checks that follow see the team the file describes, not one
    without that field (roles no one delegates to, script calls the role lacks)."""
    data = document.data
    if not isinstance(data, dict):
        return document
    misspelt = {p.field for p in problems if p.field and p.message.startswith("unknown field")}
    names: dict[Any, Any] = {}
    for key in data:
        meant = meant_field(str(key)) if key in misspelt else None
        names[key] = meant if meant and meant not in data else key
    lines = {(names.get(k[0], k[0]), *k[1:]) if k else k: n for k, n in document.lines.items()}
    renamed = {names[key]: value for key, value in data.items()}
    return Document(document.path, renamed, lines, document.body)


def _renamed(spec: AgentSpec, name: str) -> AgentSpec | None:
    return dataclasses.replace(spec, name=name) if name else None


def _skills(directory: Path, problems: list[ConfigError]) -> dict[str, Skill]:
    """The team's skills (``swarm.team.skills``); bad ``SKILL.md`` files to ``problems``."""
    if not directory.is_dir():
        return {}
    try:
        return load_skills(team_layout(directory).skills)
    except ConfigError as exc:
        problems += exc.problems
        return {}


@functools.cache
def _toolbox() -> dict[str, Tool[Any]]:
    """The built-in tools (for their names and arguments; never run), made once: callers
    copy the mapping."""
    from swarm.toolbox import make_toolbox

    with tempfile.TemporaryDirectory() as tmp:
        return dict(make_toolbox(Path(tmp), ask=_never))


async def _never(question: str) -> str:
    return ""


def _team_settings(
    directory: Path, scenario: Scenario | None, problems: list[ConfigError]
) -> tuple[dict[str, Any], TeamFile]:
    """The MCP servers (the team's, then the scenario's) and the team file (model
    aliases) of ``directory``; what cannot be read goes to ``problems``."""
    servers: dict[str, Any] = {}
    settings = TeamFile()
    if directory.is_dir():
        try:
            servers.update(load_team_mcp(directory))
        except ConfigError as exc:
            problems += exc.problems
        try:
            settings = load_team_file(directory)
        except ConfigError as exc:
            problems += exc.problems
    if scenario is not None:
        servers.update(scenario.mcp_servers)
    return servers, settings


def _tool_problems(
    specs: Mapping[str, AgentSpec], scenario: Scenario | None, servers: Mapping[str, Any]
) -> list[ConfigError]:
    """Every tool entry that resolves to nothing (Python references are imported; MCP
    entries need their server declared, not started)."""
    toolbox: dict[str, Tool[Any] | list[Tool[Any]]] = {**_toolbox()}
    problems: list[ConfigError] = []
    if scenario is not None:
        try:
            toolbox.update(scenario_tools(scenario))
        except ConfigError as exc:
            problems += exc.problems
    for spec in specs.values():
        try:
            spec.to_agent(toolbox, mcp_servers=servers)
        except ConfigError as exc:
            problems += exc.problems
    return problems


def _role_model_problems(team: Team, scenario: Scenario | None) -> list[ConfigError]:
    """Each role model that names no provider (a missing key is not a problem here: see
    ``needed_keys``)."""
    aliases = {**team.models, **(scenario.models if scenario else {})}
    problems: list[ConfigError] = []
    for spec in team.specs.values():
        if not spec.model:
            continue
        try:
            resolved = model_spec(spec.model, aliases)
            if resolved is not None:
                transport_from_spec(resolved, api_key="")  # the key: needed_keys
        except ConfigError as exc:
            problems.append(spec.error(exc.message, "model"))
    return problems


def needed_keys(team: Team, scenario: Scenario | None = None) -> list[str]:
    """The provider key variables the team's role models need, and the ``${VAR}``s of
    the MCP servers its roles use, that are not set, each once (no provider key for a
    scripted scenario, which calls none). Validation only notes them: a missing secret
    is an error when running, never when checking files."""
    servers = {**team.mcp_servers, **(scenario.mcp_servers if scenario else {})}
    variables = [e.message.split("'")[1] for e in mcp_unset(team.specs.values(), servers)]
    if scenario is not None and _script(scenario) is not None:
        return list(dict.fromkeys(variables))
    aliases = {**team.models, **(scenario.models if scenario else {})}
    for spec in team.specs.values():
        if not spec.model:
            continue
        try:
            resolved = model_spec(spec.model, aliases)
        except ConfigError:
            continue  # reported by _role_model_problems
        variable = missing_key(resolved) if resolved is not None else None
        if variable is not None and variable not in variables:
            variables.append(variable)
    return variables


def _policy_problems(
    specs: Mapping[str, AgentSpec], scenario: Scenario | None, policies: _Policies
) -> list[ConfigError]:
    """The problems of every policy named, each reference checked where it is written:
    a name or path that finds no policy is reported at the role's or scenario's line.
    Each policy read goes to ``policies``."""
    problems: list[ConfigError] = []
    for spec in specs.values():
        if spec.policy is not None:
            base = spec.source.parent if spec.source else None
            problems += _one_policy(
                spec.policy, base, lambda m, s=spec: s.error(m, "policy"), policies
            )
    if scenario is not None and scenario.policy is not None:
        base = scenario.path.parent if scenario.path else None
        problems += _one_policy(
            scenario.policy, base, lambda m: scenario.error(m, "policy"), policies
        )
    return problems


def _reach_problems(
    specs: Mapping[str, AgentSpec],
    scenario: Scenario | None,
    servers: Mapping[str, Any],
    loaded: _Policies,
) -> tuple[list[ConfigError], list[str]]:
    """The rules of the team's policies that can never match (errors) or never apply in
    this team (warnings); see ``swarm.guards.reach``. A policy that does not load is
    reported by ``_policy_problems``."""
    toolbox: dict[str, list[Tool[Any]]] = {}
    if scenario is not None:
        # a reference that does not load is reported by _tool_problems; its entry then
        # leaves the world open
        with contextlib.suppress(ConfigError):
            toolbox = scenario_tools(scenario)
    reach = team_reach(specs, toolbox={**_toolbox(), **toolbox}, mcp_servers=servers)
    policies: list[Policy] = []
    for ref, base in set(policy_refs(specs, scenario).values()):
        if (ref, base) not in loaded:
            with contextlib.suppress(ConfigError):  # reported by _policy_problems
                loaded[ref, base] = checked_policy(ref, relative_to=base)[0]
        policy = loaded.get((ref, base))
        if policy is not None:
            policies.append(policy)
    return unreachable(policies, reach), idle(policies, reach)


def _policy_alone(target: Path) -> list[ConfigError]:
    """The rules of a policy checked without a team that can never match: a glob close
    to a built-in tool's name, or shaped almost like an MCP tool's (the team's Python and
    delegation tools, and its roles, are not known here)."""
    reach = Reach(offered=ToolNames(names=frozenset(TOOL_NAMES)), closed=False)
    return unreachable([load_policy(target, relative_to=Path())], reach)


def _one_policy(
    ref: str, base: Path | None, located: Any, policies: _Policies
) -> list[ConfigError]:
    try:
        policy, problems = checked_policy(ref, relative_to=base)
    except ConfigError as exc:
        where = f" ({exc.path})" if exc.path else ""
        return [located(exc.message + where)]
    policies[ref, base] = policy
    return problems


def _model_problems(scenario: Scenario) -> list[ConfigError]:
    """A model spec that names no provider."""
    if isinstance(scenario.model, str):
        try:
            transport_from_spec(scenario.model, api_key="")  # a missing key is the run's error
        except ConfigError as exc:
            return [scenario.error(exc.message, "model")]
    return []


def _built_in(spec: AgentSpec) -> set[str]:
    """The tools a role gets from what it declares: ``final_answer`` with an ``output``,
    ``agents`` with delegates (unless ``agents_tool: false``)."""
    names = {FINAL_ANSWER} if spec.output is not None else set()
    if spec.delegates and spec.agents_tool:
        names.add(AGENTS_TOOL)
    return names


def _script_problems(
    scenario: Scenario, team: Team, servers: Mapping[str, Any]
) -> list[ConfigError]:
    """Each scripted call to a tool the role does not have, by the names the run gives
    its tools (a ``module:function`` entry by its tool's name); a role with an entry that
    does not resolve (reported by ``_tool_problems``) is not checked."""
    problems: list[ConfigError] = []
    model = _script(scenario)
    if model is not None:
        toolbox: dict[str, Tool[Any] | list[Tool[Any]]] = {**_toolbox()}
        with contextlib.suppress(ConfigError):  # reported by _tool_problems
            toolbox.update(scenario_tools(scenario))
        for key, turns in model.script.items():
            role = key.partition("#")[0]
            if role not in team.specs:
                known = ", ".join(team.specs)
                problems.append(
                    scenario.error(
                        f"'{role}' is not a role of the team (roles: {known})",
                        "model",
                        "script",
                        key,
                    )
                )
                continue
            spec = team.specs[role]
            names, complete = role_tool_names(spec, toolbox=toolbox, mcp_servers=servers)
            if not complete:
                continue
            names |= ToolNames(names=frozenset(_built_in(spec)))
            for number, turn in enumerate(turns):
                for call in turn.all_calls:
                    if not names.matched_by(call.tool):
                        offered = ", ".join(names.shown()) or "none"
                        problems.append(
                            scenario.error(
                                f"turn {number + 1} of '{key}' calls '{call.tool}', which the"
                                f" role does not have (it has: {offered}); the run would"
                                " refuse it",
                                "model",
                                "script",
                                key,
                                number,
                            )
                        )
    return problems


def _script_warnings(scenario: Scenario, team: Team) -> list[str]:
    """Each role a scripted run delegates to (following the script's calls from the entry)
    that has no turns of its own: its agent would end in an error at its first turn."""
    model = _script(scenario)
    if model is None:
        return []
    keys_of: dict[str, list[str]] = {}
    for key in model.script:
        keys_of.setdefault(key.partition("#")[0], []).append(key)
    warnings: list[str] = []
    if team.entry not in model.script:
        warnings.append(
            str(scenario.error(f"the entry role '{team.entry}' has no turns", "model", "script"))
        )
    for key in keys_of.get(team.entry, []):
        if key != team.entry:  # the entry agent is one, named without a number
            warnings.append(
                str(
                    scenario.error(
                        f"'{key}' is never played: the entry agent takes the turns of"
                        f" '{team.entry}'",
                        "model",
                        "script",
                        key,
                    )
                )
            )
    seen = {team.entry}
    todo = [team.entry]
    while todo:
        caller = todo.pop(0)
        delegates = set(team.specs[caller].delegates) if caller in team.specs else set()
        for key in keys_of.get(caller, []):
            for number, turn in enumerate(model.script[key]):
                for call in turn.all_calls:
                    if call.tool not in delegates or call.tool in seen:
                        continue
                    seen.add(call.tool)
                    todo.append(call.tool)
                    if call.tool not in keys_of:
                        problem = scenario.error(
                            f"turn {number + 1} of '{key}' delegates to '{call.tool}', which"
                            f" has no turns: that agent would end in an error (give it"
                            f" turns under '{call.tool}:' or '{call.tool}#1:')",
                            "model",
                            "script",
                            key,
                            number,
                        )
                        warnings.append(str(problem))
    return warnings

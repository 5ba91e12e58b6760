"""The team graph: delegation edges, validation on load, warnings and export."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from structlog.testing import capture_logs

from swarm import ConfigError, Tool
from swarm.team import AgentSpec, BudgetSettings, Team

WriteRole = Callable[[str, str], Path]


def write_team(write_role: WriteRole, roles: dict[str, list[str]]) -> None:
    """One YAML file per role; its delegates start on line 4, one per line."""
    for name, delegates in roles.items():
        listed = "\n" + "".join(f"  - {d}\n" for d in delegates) if delegates else " []\n"
        write_role(
            f"{name}.yaml",
            f"description: The {name}.\nsystem: You are the {name}.\ndelegates:{listed}",
        )


def spec(name: str, *delegates: str, **fields: Any) -> AgentSpec:
    return AgentSpec(
        name=name,
        description=fields.pop("description", f"The {name}."),
        system=f"You are the {name}.",
        delegates=delegates,
        **fields,
    )


def team_error(*specs: AgentSpec, **options: Any) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        Team(specs, **options)
    return caught.value


# --- building --------------------------------------------------------------------------


def test_team_graph_has_an_edge_per_delegate(roles_dir: Path, write_role: WriteRole) -> None:
    write_team(write_role, {"lead": ["dev", "qa"], "dev": ["qa"], "qa": []})
    team = Team.load(roles_dir)
    assert isinstance(team.graph, nx.DiGraph)
    assert sorted(team.graph.edges) == [("dev", "qa"), ("lead", "dev"), ("lead", "qa")]
    assert team.graph.nodes["dev"]["spec"] is team.specs["dev"]
    assert team.directory == roles_dir


def test_entry_is_the_role_nobody_delegates_to(roles_dir: Path, write_role: WriteRole) -> None:
    write_team(write_role, {"lead": ["dev"], "dev": []})
    team = Team.load(roles_dir)
    assert team.entry == "lead"
    assert team.reachable() == ("lead", "dev")
    assert team.warnings == ()


def test_delegates_of_keeps_the_declared_order() -> None:
    team = Team([spec("lead", "zed", "amy"), spec("zed"), spec("amy")])
    assert team.delegates_of("lead") == ("zed", "amy")
    assert team.delegates_of("amy") == ()
    with pytest.raises(KeyError):
        team.delegates_of("nobody")


def test_a_single_role_is_a_team() -> None:
    team = Team([spec("solo")])
    assert (team.entry, team.depth, len(team)) == ("solo", 0, 1)
    assert "solo" in team


def test_several_roots_need_an_explicit_entry() -> None:
    error = team_error(spec("a", "c"), spec("b"), spec("c"))
    assert "a, b are delegated to by no role" in error.message
    assert "choose one with --entry ROLE" in error.message
    assert Team([spec("a", "c"), spec("b"), spec("c")], entry="b").entry == "b"


def test_roles_of_which_none_delegates_get_the_implicit_orchestrator() -> None:
    team = Team([spec("a"), spec("b")])
    assert team.implicit and team.entry == "main"
    assert team.delegates_of("main") == ("a", "b")
    assert any("implicit orchestrator 'main'" in w for w in team.warnings)
    assert not Team([spec("a"), spec("b")], entry="b").implicit


def test_the_implicit_orchestrator_takes_a_free_name() -> None:
    team = Team([spec("main"), spec("b")])
    assert team.entry == "main-2"
    assert team.delegates_of("main-2") == ("b", "main")


def test_an_entry_that_is_not_a_role_is_refused() -> None:
    error = team_error(spec("a"), entry="boss")
    assert error.message == "entry role 'boss' is not a role (roles: a)"


def test_team_agents_are_prototypes_with_toolbox_tools(
    toolbox: dict[str, Tool[Any]],
) -> None:
    team = Team([spec("lead", "dev", tools=("todo",)), spec("dev", tools=("shell", "search"))])
    agents = team.agents(toolbox)
    description, dev = agents["dev"]
    assert (description, dev.name) == ("The dev.", "dev")
    assert [t.name for t in dev.tools] == ["shell", "search"]
    assert [t.name for t in agents["lead"][1].tools] == ["todo"]


def test_team_agents_refuse_unknown_tools(toolbox: dict[str, Tool[Any]]) -> None:
    team = Team([spec("lead", tools=("teleport",))])
    with pytest.raises(ConfigError, match="unknown tool 'teleport'"):
        team.agents(toolbox)


def test_duplicate_names_among_specs_are_refused() -> None:
    first = spec("a", source=Path("one.yaml"))
    second = spec("a", source=Path("two.yaml"))
    error = team_error(first, second)
    assert (error.path, error.message) == ("two.yaml", "role 'a' is already defined in one.yaml")


def test_a_name_that_cannot_be_a_tool_name_is_refused() -> None:
    error = team_error(spec("two words"))
    assert (error.field, "cannot name a role" in error.message) == ("name", True)


def test_negative_max_depth_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="max_depth"):
        Team([spec("a")], max_depth=-1)


# --- refusals --------------------------------------------------------------------------


def test_undeclared_delegate_is_refused_naming_file_line_and_field(
    roles_dir: Path, write_role: WriteRole
) -> None:
    write_team(write_role, {"lead": ["dev", "ghost"], "dev": []})
    with pytest.raises(ConfigError) as caught:
        Team.load(roles_dir)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(roles_dir / "lead.yaml"), 5, "delegates")
    assert error.message == "delegate 'ghost' is not a role (roles: dev, lead)"


def test_cycle_is_refused_with_its_path_named(roles_dir: Path, write_role: WriteRole) -> None:
    write_team(write_role, {"lead": ["a"], "a": ["b"], "b": ["a"]})
    with pytest.raises(ConfigError) as caught:
        Team.load(roles_dir)
    error = caught.value
    assert error.message == "delegation cycle a -> b -> a"
    assert (error.path, error.line, error.field) == (str(roles_dir / "a.yaml"), 4, "delegates")


def test_longer_cycle_is_named_from_its_first_role() -> None:
    error = team_error(spec("top", "c"), spec("c", "a"), spec("a", "b"), spec("b", "c"))
    assert error.message == "delegation cycle a -> b -> c -> a"


def test_self_delegation_is_a_cycle() -> None:
    error = team_error(spec("top", "loop"), spec("loop", "loop"))
    assert error.message == "delegation cycle loop -> loop"


def test_every_cycle_and_bad_delegate_is_reported_at_once() -> None:
    error = team_error(
        spec("top", "a", "x", "nobody"), spec("a", "b"), spec("b", "a"), spec("x", "x")
    )
    assert [p.message for p in error.problems] == [
        "delegate 'nobody' is not a role (roles: a, b, top, x)",
        "delegation cycle a -> b -> a",
        "delegation cycle x -> x",
    ]


def test_cycle_out_of_the_entrys_reach_is_still_refused() -> None:
    error = team_error(spec("top"), spec("a", "b"), spec("b", "a"), entry="top")
    assert error.message == "delegation cycle a -> b -> a"


def test_delegate_named_like_one_of_the_roles_tools_is_refused() -> None:
    error = team_error(spec("lead", "search", tools=("search",)), spec("search"))
    assert error.field == "delegates"
    assert "has the name of one of the role's tools" in error.message


def test_depth_over_max_depth_is_refused(roles_dir: Path, write_role: WriteRole) -> None:
    write_team(write_role, {"a": ["b"], "b": ["c"], "c": ["d"], "d": []})
    with pytest.raises(ConfigError) as caught:
        Team.load(roles_dir, max_depth=2)
    error = caught.value
    assert error.message == "delegation chain a -> b -> c -> d is 3 deep; max_depth is 2"
    assert (error.path, error.line, error.field) == (str(roles_dir / "c.yaml"), 4, "delegates")


def test_depth_equal_to_max_depth_is_allowed() -> None:
    team = Team([spec("a", "b"), spec("b", "c"), spec("c")], max_depth=2)
    assert team.depth == 2


def test_depth_counts_the_longest_chain_only() -> None:
    team = Team([spec("a", "b", "c"), spec("b", "c"), spec("c")])
    assert team.depth == 2


def test_depth_over_a_roles_budget_is_refused() -> None:
    lead = spec("lead", "dev", budget=BudgetSettings(depth=1))
    error = team_error(lead, spec("dev", "qa"), spec("qa"))
    assert error.field == "budget.depth"
    assert error.message == (
        "delegation chain lead -> dev -> qa is 2 deep; this role's budget allows 1"
    )


# --- warnings --------------------------------------------------------------------------


def test_role_only_reached_by_delegation_but_not_from_entry_warns() -> None:
    specs = [spec("lead", "dev"), spec("dev"), spec("side", "helper"), spec("helper")]
    with capture_logs() as logs:
        team = Team(specs, entry="lead")
    assert team.warnings == (
        "role 'helper' is only reached by delegation (from side) "
        "but the entry role 'lead' cannot reach it",
    )
    assert [entry["log_level"] for entry in logs] == ["warning"]
    assert "helper" in logs[0]["event"]


def test_delegate_without_description_warns() -> None:
    team = Team([spec("lead", "dev"), spec("dev", description="")])
    assert team.warnings == (
        "role 'dev' has no description: the roles that delegate to it will not know what it is for",
    )


# --- export ----------------------------------------------------------------------------


def test_mermaid_export() -> None:
    team = Team([spec("lead", "dev", "qa"), spec("dev", "qa"), spec("qa")])
    assert team.to_mermaid() == (
        "flowchart TD\n"
        '    lead(["lead"])\n'
        '    dev["dev"]\n'
        '    qa["qa"]\n'
        "    lead --> dev\n"
        "    lead --> qa\n"
        "    dev --> qa\n"
    )


def test_mermaid_ids_are_safe_for_any_role_name() -> None:
    lead = spec("code-reviewer", "end", "code_reviewer", "9lives")
    team = Team([lead, spec("end"), spec("code_reviewer"), spec("9lives")])
    text = team.to_mermaid()
    assert 'code_reviewer(["code-reviewer"])' in text
    assert 'code_reviewer_2["code_reviewer"]' in text
    assert 'role_end["end"]' in text
    assert 'role_9lives["9lives"]' in text
    assert "code_reviewer --> role_end" in text


def test_dot_export() -> None:
    team = Team([spec("lead", "dev", description='The "boss"'), spec("dev")])
    assert team.to_dot() == (
        "digraph team {\n"
        "    node [shape=box];\n"
        '    "lead" [style=bold, tooltip="The \\"boss\\""];\n'
        '    "dev" [tooltip="The dev."];\n'
        '    "lead" -> "dev";\n'
        "}\n"
    )


def test_a_cycle_and_an_unknown_entry_are_reported_together() -> None:
    specs = [
        AgentSpec(name="a", description="a", system="x", delegates=("b",)),
        AgentSpec(name="b", description="b", system="x", delegates=("a",)),
    ]
    with pytest.raises(ConfigError) as caught:
        Team(specs, entry="ghost")
    messages = [p.message for p in caught.value.problems]
    assert any("delegation cycle a -> b -> a" in m for m in messages), messages
    assert any("entry role 'ghost' is not a role" in m for m in messages), messages


def test_a_replaced_team_keeps_its_model_aliases_and_mcp_servers() -> None:
    from swarm.mcp.config import McpStdioServer

    lead = AgentSpec(name="lead", description="leads", system="s", delegates=("dev",))
    dev = AgentSpec(name="dev", description="codes", system="s")
    server = McpStdioServer("time", "mcp-server-time")
    team = Team([lead, dev], max_depth=2, mcp_servers={"time": server}, models={"fast": "x:y"})
    slower = team.replaced(specs=[lead, AgentSpec(name="dev", description="d", system="t")])
    assert slower.models == {"fast": "x:y"} and dict(slower.mcp_servers) == {"time": server}
    assert slower.entry == "lead" and slower.max_depth == 2
    assert slower.specs["dev"].system == "t"
    other = team.replaced(mcp_servers={})
    assert dict(other.mcp_servers) == {} and other.models == {"fast": "x:y"}

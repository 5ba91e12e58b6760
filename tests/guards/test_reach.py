"""Rules that can never match are found before a run: tool and role globs of a user's
policy checked against the team (swarm.guards.reach, swarm.team.reach)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import pytest

from swarm.errors import ConfigError
from swarm.guards.policy import load_policy
from swarm.guards.reach import Reach, ToolNames, globs_overlap, idle, unreachable
from swarm.mcp.tools import mcp_tool_name
from swarm.team.reach import mcp_names, team_reach
from swarm.team.spec import AgentSpec
from swarm.toolbox import TOOL_NAMES, make_toolbox
from swarm.tools import Tool

LEAD = AgentSpec(
    name="lead", description="leads", system="x", tools=("read_file",), delegates=("reviewer",)
)
REVIEWER = AgentSpec(
    name="reviewer", description="reviews", system="x", tools=("read_file", "write_file")
)
TEAM = {"lead": LEAD, "reviewer": REVIEWER}


@functools.cache
def builtins() -> dict[str, Tool[Any]]:
    """The built-in tools, as a run gives them (for their names and arguments)."""
    with tempfile.TemporaryDirectory() as scratch:
        return make_toolbox(Path(scratch))


def reach_of(specs: dict[str, AgentSpec] = TEAM, servers: tuple[str, ...] = ()) -> Reach:
    return team_reach(specs, toolbox=builtins(), mcp_servers=servers)


def policy_file(tmp_path: Path, text: str, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(path: Path, reach: Reach | None = None) -> list[ConfigError]:
    return unreachable([load_policy(path)], reach or reach_of())


def test_a_typo_in_a_deny_list_names_file_line_field_and_the_tool_meant(
    tmp_path: Path,
) -> None:
    path = policy_file(tmp_path, "rules:\n  - allow: '*'\n  - deny: [read_file, wirte_file]\n")
    [found] = problems(path)
    assert (found.path, found.line, found.field) == (str(path), 3, "rules.1.deny.1")
    assert "'wirte_file'" in found.message
    assert found.message.endswith("did you mean 'write_file'?")


def test_a_typo_in_roles_is_refused_with_the_role_meant(tmp_path: Path) -> None:
    path = policy_file(tmp_path, "rules:\n  - deny: write_file\n    roles: [reviewr]\n")
    [found] = problems(path)
    assert (found.line, found.field) == (3, "rules.0.roles")
    assert "did you mean 'reviewer'?" in found.message
    assert "(roles: lead, reviewer)" in found.message


def test_each_glob_of_a_block_list_is_located_on_its_own_line(tmp_path: Path) -> None:
    text = "rules:\n  - ask:\n      - read_file\n      - edit_fiel\n    roles:\n      - lead\n"
    [found] = problems(policy_file(tmp_path, text))
    assert (found.line, found.field) == (4, "rules.0.ask.1")
    assert "did you mean 'edit_file'?" in found.message


def test_correct_rules_and_globs_are_unaffected(tmp_path: Path) -> None:
    text = (
        "rules:\n"
        "  - deny: [read_file, write_file]\n    roles: [reviewer]\n"
        "  - ask: '*_file'\n    roles: ['rev*', lead]\n"
        "  - deny: reviewer\n"  # the lead's delegation tool
        "  - allow: '*'\n"
        "  - deny: 'mcp__*'\n"  # names no server: right whatever servers there are
    )
    path = policy_file(tmp_path, text)
    assert problems(path) == []
    assert load_policy(path).decide("write_file", {}, role="reviewer").action == "deny"


def test_a_built_in_tool_no_role_has_is_a_warning_not_an_error(tmp_path: Path) -> None:
    # a policy shared by teams may name the shell in a team that has none
    path = policy_file(tmp_path, "rules:\n  - id: no-shell\n    deny: shell\n")
    policy = load_policy(path)
    assert unreachable([policy], reach_of()) == []
    [warning] = idle([policy], reach_of())
    assert f"{path}:3:" in warning and "no-shell" in warning and "never applies" in warning


def test_a_guard_covering_no_tool_is_refused(tmp_path: Path) -> None:
    text = "guards:\n  - use: audit\n  - use: rate_limit\n    tools: [shell, shel]\n" + (
        "    with: {calls: 3, window: 60}\n"
    )
    [found] = problems(policy_file(tmp_path, text))
    assert (found.line, found.field) == (3, "guards.tools")
    assert "guard 'rate_limit' covers the tool 'shel'" in found.message
    assert "did you mean 'shell'?" in found.message


def test_mcp_globs_count_when_they_could_match_a_declared_servers_tool(tmp_path: Path) -> None:
    specs = {"lead": AgentSpec(name="lead", description="d", system="x", tools=("mcp:git",))}
    globs = "[mcp__git__git_push, 'mcp__git__*', 'mcp__g?t__*', mcp__gti__status]"
    text = f"rules:\n  - deny: {globs}\n"
    [found] = problems(policy_file(tmp_path, text), reach_of(specs, ("git",)))
    assert found.field == "rules.0.deny.3"
    assert "did you mean 'mcp__git__*'?" in found.message


def test_an_mcp_name_of_the_wrong_shape_says_how_mcp_tools_are_named(tmp_path: Path) -> None:
    [found] = problems(policy_file(tmp_path, "rules:\n  - deny: mcp_git_push\n"))
    assert "MCP tools are named mcp__SERVER__TOOL" in found.message


def test_mcp_names_are_the_names_the_mcp_toolbox_gives() -> None:
    assert mcp_names("git", "git_status") == mcp_tool_name("git", "git_status")
    assert globs_overlap(mcp_names("git"), mcp_tool_name("git", "git_status"))


def test_shipped_policies_are_not_checked_but_what_extends_them_is(tmp_path: Path) -> None:
    # readonly names read tools other teams may have (grep, glob); this team has none
    text = "extend: builtin:readonly\nrules:\n  - deny: wirte_file\n"
    [found] = problems(policy_file(tmp_path, text))
    assert found.path == str(tmp_path / "mine.yaml") and found.field == "rules.0.deny"


def test_a_typo_in_an_extended_file_is_reported_in_that_file_once(tmp_path: Path) -> None:
    base = policy_file(tmp_path, "rules:\n  - allow: '*'\n  - deny: wirte_file\n", "base.yaml")
    one = policy_file(tmp_path, "extend: base.yaml\n", "one.yaml")
    two = policy_file(tmp_path, "extend: base.yaml\nrules:\n  - deny: shell\n", "two.yaml")
    found = unreachable([load_policy(one), load_policy(two)], reach_of())
    assert [(p.path, p.line) for p in found] == [(str(base), 3)]


def test_a_tool_that_does_not_resolve_leaves_only_near_misses_as_errors(tmp_path: Path) -> None:
    specs = {
        "lead": AgentSpec(
            name="lead", description="d", system="x", tools=("nowhere_module_xyz:tools",)
        )
    }
    reach = reach_of(specs)
    assert not reach.closed
    text = "rules:\n  - deny: [frobnicate, wirte_file]\n"
    [found] = problems(policy_file(tmp_path, text), reach)
    assert found.field == "rules.0.deny.1"


def test_python_tools_a_role_names_are_tools_of_the_team(tmp_path: Path) -> None:
    module = tmp_path / "my_reach_tools.py"
    module.write_text(
        "from swarm import tool\n\n@tool\ndef frobnicate(x: int) -> int:\n"
        '    """Frobnicate."""\n    return x\n'
    )
    spec = AgentSpec(
        name="lead",
        description="d",
        system="x",
        tools=("my_reach_tools:frobnicate",),
        source=tmp_path / "lead.yaml",
    )
    reach = reach_of({"lead": spec})
    assert reach.closed and "frobnicate" in reach.team.names
    path = policy_file(tmp_path, "rules:\n  - deny: [frobnicate, frobnicat]\n")
    [found] = problems(path, reach)
    assert "did you mean 'frobnicate'?" in found.message


def test_a_policy_alone_refuses_near_misses_of_built_in_tools_only(tmp_path: Path) -> None:
    alone = Reach(offered=ToolNames(names=frozenset(TOOL_NAMES)), closed=False)
    text = "rules:\n  - deny: [wirte_file, reviewer, 'mcp__*']\n    roles: [anyone]\n"
    [found] = unreachable([load_policy(policy_file(tmp_path, text))], alone)
    assert found.field == "rules.0.deny.0"


def test_an_argument_no_named_tool_takes_is_refused(tmp_path: Path) -> None:
    text = (
        "rules:\n  - allow: '*'\n  - id: no-env\n    deny: [read_file, write_file]\n"
        "    args:\n      pth: {path: '**/.env'}\n"
    )
    [found] = problems(policy_file(tmp_path, text))
    assert (found.line, found.field) == (6, "rules.1.args.pth")
    assert "'pth', which 'read_file', 'write_file' never take" in found.message
    assert "did you mean 'path'?" in found.message


def test_arguments_are_checked_only_where_every_named_tool_is_known(tmp_path: Path) -> None:
    text = (
        "rules:\n"
        "  - deny: '*'\n    args: {uri: {glob: 'file://*'}}\n"  # MCP tools may take it
        "  - deny: reviewer\n    args: {task: {regex: secret}}\n"  # a delegation tool
        "  - deny: '*_file'\n    args: {content: {regex: secret}}\n"  # write_file's
        "  - deny: shell\n    args: {command: {shell: [rm]}}\n"
    )
    assert problems(policy_file(tmp_path, text)) == []


def test_a_look_alike_letter_is_shown_escaped_and_braces_are_kept(tmp_path: Path) -> None:
    text = "rules:\n  - deny: [wr\u0456te_file, 'write_{file}']\n"
    first, second = problems(policy_file(tmp_path, text))
    assert "the tool 'wr\\u0456te_file'" in first.message
    assert "the tool 'write_{file}'" in second.message


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        ("write_*", "*_file", True),
        ("mcp__git__*", "mcp__gti__?*", False),
        ("mcp__g?t__*", "mcp__git__?*", True),
        ("[!a]bc", "abc", False),
        ("[a-c]x", "[!ac]x", True),  # b
        ("[ac]x", "[!ac]x", False),
        ("a*", "b*", False),
        ("*a*b*", "*b*a*", True),
        ("[abc", "[abc", True),  # an unclosed bracket is a character
        ("", "*", True),
        ("", "?", False),
        ("a" * 5000 + "*", "b*", False),  # long globs: no recursion limit
        ("*" + "ab" * 3000, "*b", True),
    ],
)
def test_glob_overlap(first: str, second: str, overlap: bool) -> None:
    assert globs_overlap(first, second) is overlap
    assert globs_overlap(second, first) is overlap

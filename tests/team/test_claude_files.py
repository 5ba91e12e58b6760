"""Claude Code agent files load as Claude Code reads them: tools, fields, lenient front matter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm import AgentSpec, ConfigError, MarkdownAgentLoader, Tool
from swarm.team import Team, load_specs
from swarm.team.claude_tools import WHOLE_TOOLBOX
from swarm.toolbox import TOOL_NAMES

WriteRole = Callable[[str, str], Path]


def load(write_role: WriteRole, front: str, body: str = "You help.\n") -> AgentSpec:
    return MarkdownAgentLoader().load_file(write_role("agent.md", f"---\n{front}---\n{body}"))


def load_error(write_role: WriteRole, front: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(write_role, front)
    return caught.value


def warned(spec: AgentSpec, *fragments: str) -> bool:
    return any(all(f in w for f in fragments) for w in spec.warnings)


# --- tools -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claude", "swarm_name"),
    [
        ("Read", "read_file"),
        ("Write", "write_file"),
        ("Edit", "edit_file"),
        ("MultiEdit", "edit_file"),
        ("NotebookEdit", "edit_file"),
        ("Bash", "shell"),
        ("Grep", "search"),
        ("Glob", "list_files"),
        ("LS", "list_files"),
        ("TodoWrite", "todo"),
        ("AskUserQuestion", "ask_user"),
    ],
)
def test_each_claude_tool_maps_to_its_toolbox_tool(
    write_role: WriteRole, claude: str, swarm_name: str
) -> None:
    spec = load(write_role, f"tools: {claude}\n")
    assert spec.tools == (swarm_name,)
    assert spec.warnings == ()


def test_tools_as_a_yaml_list_map_and_tools_named_twice_are_kept_once(
    write_role: WriteRole,
) -> None:
    spec = load(write_role, "tools:\n  - Edit\n  - MultiEdit\n  - Read\n")
    assert spec.tools == ("edit_file", "read_file")


def test_swarm_tool_names_pass_unchanged(write_role: WriteRole) -> None:
    assert load(write_role, "tools: read_file, notes\n").tools == ("read_file", "notes")


@pytest.mark.parametrize("name", ["WebFetch", "WebSearch", "Task"])
def test_tools_without_equivalent_are_dropped_with_a_warning_naming_them(
    write_role: WriteRole, name: str
) -> None:
    spec = load(write_role, f"tools: Read, {name}\n")
    assert spec.tools == ("read_file",)
    assert warned(spec, f"'{name}' has no equivalent", "agent.md:2", "dropped")


def test_no_tools_key_means_the_whole_toolbox(write_role: WriteRole) -> None:
    spec = load(write_role, "description: d\n")
    assert spec.tools == WHOLE_TOOLBOX == TOOL_NAMES
    assert spec.optional_tools == frozenset(TOOL_NAMES)


def test_a_star_means_the_whole_toolbox(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: '*'\n")
    assert spec.tools == TOOL_NAMES


def test_the_whole_toolbox_is_what_the_toolbox_in_use_has(
    write_role: WriteRole, toolbox: dict[str, Tool[Any]]
) -> None:
    spec = load(write_role, "description: d\n")
    smaller = {k: v for k, v in toolbox.items() if k in ("read_file", "search")}
    assert [t.name for t in spec.to_agent(smaller).tools] == ["read_file", "search"]


def test_an_empty_tools_list_means_no_tools(write_role: WriteRole) -> None:
    assert load(write_role, "tools: []\n").tools == ()


def test_disallowed_tools_are_removed(write_role: WriteRole) -> None:
    spec = load(write_role, "disallowedTools: Write, Bash\n")
    assert "write_file" not in spec.tools and "shell" not in spec.tools
    assert "read_file" in spec.tools


def test_a_disallowed_shell_pattern_refuses_only_those_commands(
    write_role: WriteRole,
) -> None:
    spec = load(write_role, "tools: Read, Bash\ndisallowedTools: Bash(rm:*)\n")
    assert spec.tools == ("read_file", "shell")
    assert spec.shell_denied == ("rm",)


def test_a_disallowed_pattern_of_another_tool_removes_it_with_a_warning(
    write_role: WriteRole,
) -> None:
    spec = load(write_role, "tools: Read, Write\ndisallowedTools: Write(./secrets/**)\n")
    assert spec.tools == ("read_file",)
    assert warned(spec, "removes 'write_file' altogether")


def test_allowed_tools_is_read_as_tools_with_a_warning(write_role: WriteRole) -> None:
    spec = load(write_role, "allowed-tools: Read, Grep\n")
    assert spec.tools == ("read_file", "search")
    assert warned(spec, "field 'allowed-tools'", "read as 'tools'")


def test_bash_patterns_become_shell_limited_to_their_commands(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: Read, Bash(git log:*), Bash(git diff:*), Bash(npm test)\n")
    assert spec.tools == ("read_file", "shell")
    assert spec.shell_commands == ("git log", "git diff", "npm test")


@pytest.mark.parametrize("entry", ["Bash()", "Bash(:*)"])
def test_a_bash_pattern_naming_no_command_allows_none(write_role: WriteRole, entry: str) -> None:
    spec = load(write_role, f"tools: Read, {entry}\n")
    assert spec.tools == ("read_file",)
    assert warned(spec, "names no command: dropped")


def test_bash_star_is_any_command(write_role: WriteRole) -> None:
    assert load(write_role, "tools: Bash(*)\n").shell_commands == ("*",)


def test_plain_bash_beside_a_pattern_is_not_limited(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: Bash(git log:*), Bash\n")
    assert spec.tools == ("shell",) and spec.shell_commands == ()


def test_the_pattern_of_another_tool_is_warned_about(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: Read(src/**)\n")
    assert spec.tools == ("read_file",)
    assert warned(spec, "'Read(src/**)' is not enforced")


def test_mcp_names_become_optional_mcp_entries(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: Read, mcp__github__get_issue, mcp__figma\n")
    assert spec.tools == ("read_file", "mcp:github/get_issue", "mcp:figma")
    assert spec.optional_tools == {"mcp:github/get_issue", "mcp:figma"}


def test_undeclared_mcp_servers_are_warned_and_their_tools_dropped(
    write_role: WriteRole, roles_dir: Path, toolbox: dict[str, Tool[Any]]
) -> None:
    write_role("a.md", "---\ntools: Read, mcp__github__get_issue, mcp__git__status\n---\nA.\n")
    (roles_dir / ".mcp.json").write_text('{"mcpServers": {"git": {"command": "x"}}}')
    team = Team.load(roles_dir)
    dropped = [w for w in team.warnings if "not declared" in w]
    assert dropped == [
        f"{roles_dir / 'a.md'}:2: field 'tools': mcp server 'github' not declared by the"
        " team: tool dropped (mcp:github/get_issue)"
    ]
    assert [t.name for t in team.specs["a"].to_agent(toolbox).tools] == ["read_file"]


def test_an_unknown_tool_name_is_still_an_error_when_built(
    write_role: WriteRole, toolbox: dict[str, Tool[Any]]
) -> None:
    spec = load(write_role, "tools: Read, Raed\n")
    with pytest.raises(ConfigError, match="unknown tool 'Raed'"):
        spec.to_agent(toolbox)


# --- fields ----------------------------------------------------------------------------


def test_plan_mode_gives_the_readonly_policy(write_role: WriteRole) -> None:
    spec = load(write_role, "permissionMode: plan\n")
    assert spec.policy == "readonly" and spec.warnings == ()


def test_plan_mode_keeps_a_policy_the_role_names(write_role: WriteRole) -> None:
    spec = load(write_role, "permissionMode: plan\npolicy: strict\n")
    assert spec.policy == "strict"
    assert warned(spec, "the role's own 'policy' is kept")


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions", "default"])
def test_other_permission_modes_warn_that_the_guards_still_apply(
    write_role: WriteRole, mode: str
) -> None:
    spec = load(write_role, f"permissionMode: {mode}\n")
    assert spec.policy is None
    assert warned(spec, f"'{mode}' is ignored", "guards")


def test_display_keys_are_ignored_silently(write_role: WriteRole) -> None:
    spec = load(write_role, "color: red\neffort: high\nbackground: true\nisolation: worktree\n")
    assert spec.warnings == ()


@pytest.mark.parametrize("key", ["hooks", "mcpServers", "memory"])
def test_unsupported_features_warn_not_supported(write_role: WriteRole, key: str) -> None:
    spec = load(write_role, f"{key}: something\n")
    assert warned(spec, f"field '{key}'", "not supported, ignored")


def test_hook_commands_are_never_run(write_role: WriteRole, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    front = (
        "hooks:\n  SessionStart:\n    - hooks:\n        - type: command\n"
        f"          command: touch {marker}\n"
    )
    spec = load(write_role, front)
    assert warned(spec, "its commands are never run")
    assert not marker.exists()


def test_unknown_keys_of_the_authors_own_are_warnings(write_role: WriteRole) -> None:
    spec = load(write_role, "version: 1.0\ncategory: quality\nreviewed-by: ana\n")
    assert warned(spec, "field 'version'", "Claude Code ignores it")
    assert warned(spec, "field 'category'")
    assert warned(spec, "field 'reviewed-by'", "unknown field, ignored")


@pytest.mark.parametrize(
    ("typo", "meant"), [("tool", "tools"), ("descripton", "description"), ("modle", "model")]
)
def test_a_key_close_to_a_real_field_is_still_an_error(
    write_role: WriteRole, typo: str, meant: str
) -> None:
    error = load_error(write_role, f"{typo}: x\n")
    assert error.field == typo and error.line == 2
    assert f"did you mean '{meant}'?" in error.message


def test_model_inherit_and_default_mean_the_run_model(write_role: WriteRole) -> None:
    assert load(write_role, "model: inherit\n").model is None
    assert load(write_role, "model: default\n").model is None
    assert load(write_role, "model: sonnet\n").model == "sonnet"


def test_a_name_that_cannot_name_a_tool_becomes_a_slug(write_role: WriteRole) -> None:
    spec = load(write_role, "name: Issue Planner\n")
    assert spec.name == "issue-planner"
    assert warned(spec, "'Issue Planner' cannot name a tool", "'issue-planner'")


def test_a_file_stem_that_cannot_name_a_tool_becomes_a_slug(write_role: WriteRole) -> None:
    spec = MarkdownAgentLoader().load_file(write_role("Code Reviewer.md", "---\n---\nHi.\n"))
    assert spec.name == "code-reviewer"
    assert warned(spec, "the role is named 'code-reviewer'")


# --- front matter that YAML cannot parse -----------------------------------------------


def test_unquoted_examples_with_colons_are_read_as_claude_code_reads_them(
    write_role: WriteRole,
) -> None:
    front = (
        "name: planner\n"
        'description: Plans work. Examples: <example>Context: user: "plan it"</example>\n'
        "tools: Read, Grep\n"
        "model: opus\n"
    )
    spec = load(write_role, front)
    assert spec.description == 'Plans work. Examples: <example>Context: user: "plan it"</example>'
    assert spec.tools == ("read_file", "search") and spec.model == "opus"
    assert warned(spec, "agent.md:3", "not valid YAML", "read as Claude Code reads it")


def test_indented_lines_continue_the_value(write_role: WriteRole) -> None:
    front = (
        "description: Profiles code.\n"
        "  Examples: profile first.\n"
        "  Note: measure twice.\n"
        "maxTurns: 12\n"
    )
    spec = load(write_role, front)
    assert spec.description == "Profiles code.\nExamples: profile first.\nNote: measure twice."
    assert spec.max_iterations == 12


def test_an_unquoted_star_is_the_whole_toolbox(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: *\nmodel: haiku\n")
    assert spec.tools == TOOL_NAMES and spec.model == "haiku"
    assert warned(spec, "not valid YAML")


def test_a_list_in_lenient_front_matter_is_a_list(write_role: WriteRole) -> None:
    spec = load(write_role, "description: a: b\ntools:\n  - Read\n  - Bash\n")
    assert spec.tools == ("read_file", "shell")


def test_a_long_dash_line_closes_the_front_matter(write_role: WriteRole) -> None:
    path = write_role("agent.md", "---\nname: m\ntools: Read\n" + "-" * 60 + "\nYou migrate.\n")
    spec = MarkdownAgentLoader().load_file(path)
    assert (spec.name, spec.tools, spec.system) == ("m", ("read_file",), "You migrate.")


def test_lenient_errors_still_name_the_line(write_role: WriteRole) -> None:
    error = load_error(write_role, "description: a: b\nmaxTurns: lots\n")
    assert error.line == 3 and error.field in ("max_iterations", "maxTurns")


def test_front_matter_never_closed_is_an_error(write_role: WriteRole) -> None:
    path = write_role("agent.md", "---\nname: x\n\nYou help.\n")
    with pytest.raises(ConfigError, match="never closed"):
        MarkdownAgentLoader().load_file(path)


# --- which Markdown files are roles ----------------------------------------------------


def test_markdown_without_front_matter_is_named_after_its_file_and_a_readme_is_skipped(
    write_role: WriteRole, roles_dir: Path
) -> None:
    write_role("README.md", "# About these roles\n")
    write_role("lead.md", "---\ndescription: leads\n---\nLead.\n")
    assert list(load_specs(roles_dir)) == ["lead"]
    write_role("reviewer.md", "You review the code you are given.\n")
    specs = load_specs(roles_dir)
    assert sorted(specs) == ["lead", "reviewer"]
    assert specs["reviewer"].system == "You review the code you are given."
    assert warned(specs["reviewer"], "reviewer.md:1: no front matter")


def test_yaml_roles_keep_their_strictness(write_role: WriteRole, roles_dir: Path) -> None:
    write_role("a.yaml", "system: x\ntools: [Read]\nversion: 2\n")
    with pytest.raises(ConfigError) as caught:
        load_specs(roles_dir)
    assert caught.value.field == "version"


def test_a_flow_list_in_lenient_front_matter_is_a_list(write_role: WriteRole) -> None:
    spec = load(write_role, "description: a: b\ntools: [Read, 'Grep']\nname: '123'\n")
    assert spec.tools == ("read_file", "search") and spec.name == "123"

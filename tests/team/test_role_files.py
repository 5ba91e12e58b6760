"""Role files: every format, the Claude Code aliases, and located errors for bad files."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm import ConfigError, DummyCompletionTransport, Tool
from swarm.team import (
    AgentSpec,
    BudgetSettings,
    CompactionSettings,
    JsonAgentLoader,
    MarkdownAgentLoader,
    MultiFormatLoader,
    TomlAgentLoader,
    YamlAgentLoader,
)

WriteRole = Callable[[str, str], Path]

FULL_YAML = """
name: builder
description: Builds things.
system: |
  You build things.
model: gpt-test
tools: [read_file, shell]
delegates: [checker]
max_iterations: 12
policy: read-only
compaction:
  keep_recent: 4
  threshold: 0.5
  max_tokens: 32000
budget:
  tokens: 1000
  seconds: 60
  delegations: 3
  depth: 1
tool_choice: required
"""


def load_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        MultiFormatLoader().load_file(path)
    return caught.value


# --- formats ---------------------------------------------------------------------------


def test_yaml_role_keeps_every_field(write_role: WriteRole) -> None:
    path = write_role("builder.yaml", FULL_YAML)
    spec = YamlAgentLoader().load_file(path)
    assert spec == AgentSpec(
        name="builder",
        description="Builds things.",
        system="You build things.",
        max_iterations=12,
        tools=("read_file", "shell"),
        model="gpt-test",
        delegates=("checker",),
        policy="read-only",
        compaction=CompactionSettings(keep_recent=4, threshold=0.5, max_tokens=32000),
        budget=BudgetSettings(tokens=1000, seconds=60.0, delegations=3, depth=1),
        tool_choice="required",
        source=path,
    )


def test_optional_fields_take_defaults(write_role: WriteRole) -> None:
    spec = YamlAgentLoader().load_file(write_role("plain.yml", "system: Hello."))
    assert (spec.name, spec.description, spec.max_iterations) == ("plain", "", 50)
    assert (spec.tools, spec.delegates, spec.model, spec.policy) == ((), (), None, None)
    assert spec.compaction is None
    assert spec.budget == BudgetSettings()
    assert spec.tool_choice is None


def test_toml_role_with_system_table(write_role: WriteRole) -> None:
    path = write_role(
        "architect.toml",
        '''
        name = "architect"
        description = "System design"
        max_iterations = 100
        tools = ["read_file", "write_file"]

        [system]
        text = """
        You are an expert software architect.
        """
        ''',
    )
    spec = TomlAgentLoader().load_file(path)
    assert spec.name == "architect"
    assert spec.system == "You are an expert software architect."
    assert spec.tools == ("read_file", "write_file")
    assert spec.max_iterations == 100


def test_json_role(write_role: WriteRole) -> None:
    path = write_role(
        "architect.json",
        """
        {"name": "architect", "description": "System design", "max_iterations": 7,
         "tools": ["read_file"], "system": "You design.", "compaction": {"keep_recent": 2}}
        """,
    )
    spec = JsonAgentLoader().load_file(path)
    assert (spec.name, spec.system, spec.max_iterations) == ("architect", "You design.", 7)
    assert spec.compaction == CompactionSettings(keep_recent=2)


def test_system_as_text_mapping_in_yaml(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system:\n  text: Be brief.\n")
    assert YamlAgentLoader().load_file(path).system == "Be brief."


def test_markdown_body_is_the_system_prompt(write_role: WriteRole) -> None:
    path = write_role(
        "checker.md",
        """
        ---
        name: checker
        description: Checks things.
        delegates: [builder]
        ---
        You check things.

        Carefully.
        """,
    )
    spec = MarkdownAgentLoader().load_file(path)
    assert spec.system == "You check things.\n\nCarefully."
    assert spec.delegates == ("builder",)


def test_markdown_accepts_claude_code_field_names(write_role: WriteRole) -> None:
    path = write_role(
        "code-reviewer.md",
        """
        ---
        name: code-reviewer
        description: Expert code reviewer.
        tools: Read, Grep,Glob
        model: sonnet
        maxTurns: 9
        ---
        You review code.
        """,
    )
    spec = MarkdownAgentLoader().load_file(path)
    assert spec.name == "code-reviewer"
    assert spec.tools == ("read_file", "search", "list_files")
    assert spec.model == "sonnet"
    assert spec.max_iterations == 9


def test_claude_code_model_inherit_means_no_model_of_its_own(write_role: WriteRole) -> None:
    path = write_role("r.md", "---\nmodel: inherit\n---\nHi.\n")
    assert MarkdownAgentLoader().load_file(path).model is None


def test_max_turns_alias_works_in_yaml(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system: x\nmaxTurns: 3\n")
    assert YamlAgentLoader().load_file(path).max_iterations == 3


def test_delegates_may_be_comma_separated(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system: x\ndelegates: b, c\n")
    assert YamlAgentLoader().load_file(path).delegates == ("b", "c")


@pytest.mark.parametrize("filename", ["solo.yaml", "solo.yml", "solo.md"])
def test_name_defaults_to_the_file_stem(write_role: WriteRole, filename: str) -> None:
    text = "---\n---\nHi.\n" if filename.endswith(".md") else "system: Hi.\n"
    assert MultiFormatLoader().load_file(write_role(filename, text)).name == "solo"


def test_name_defaults_to_the_stem_in_toml_and_json(write_role: WriteRole) -> None:
    loader = MultiFormatLoader()
    assert loader.load_file(write_role("t.toml", 'system = "Hi."\n')).name == "t"
    assert loader.load_file(write_role("j.json", '{"system": "Hi."}')).name == "j"


def test_load_from_a_string_leaves_the_name_empty() -> None:
    spec = YamlAgentLoader().load("system: Hi.\n")
    assert (spec.name, spec.source) == ("", None)


# --- bad files -------------------------------------------------------------------------


def test_wrong_type_names_file_line_and_field(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "name: a\nsystem: x\nmax_iterations: ten\n")
    error = load_error(path)
    assert (error.path, error.line, error.field) == (str(path), 3, "max_iterations")
    assert "valid integer" in error.message
    assert str(error).startswith(f"{path}:3: field 'max_iterations'")


def test_unknown_field_is_an_error_with_a_suggestion(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system: x\ndescripton: typo\n")
    error = load_error(path)
    assert (error.line, error.field) == (2, "descripton")
    assert "unknown field; did you mean 'description'?" in error.message


def test_unknown_nested_field_is_an_error(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system: x\ncompaction:\n  keep_recnt: 3\n")
    error = load_error(path)
    assert (error.line, error.field) == (3, "compaction.keep_recnt")
    assert "unknown field" in error.message


def test_every_problem_of_a_file_is_reported(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system: x\ncolour: red\nmax_iterations: 0\ntool_choice: any\n")
    error = load_error(path)
    assert [(p.line, p.field) for p in error.problems] == [
        (2, "colour"),
        (3, "max_iterations"),
        (4, "tool_choice"),
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("compaction:\n  threshold: 1.5\n", "compaction.threshold"),
        ("compaction:\n  keep_recent: -1\n", "compaction.keep_recent"),
        ("budget:\n  tokens: 0\n", "budget.tokens"),
        ("budget:\n  seconds: -5\n", "budget.seconds"),
        ("budget:\n  delegations: many\n", "budget.delegations"),
        ("tools: [read_file, 3]\n", "tools.1"),
        ("tools: [read_file, read_file]\n", "tools"),
        ("delegates: [b, b]\n", "delegates"),
        ("policy: ''\n", "policy"),
        ("name: two words\n", "name"),
        ("max_iterations: true\n", "max_iterations"),
    ],
)
def test_invalid_values_are_located(write_role: WriteRole, body: str, field: str) -> None:
    path = write_role("a.yaml", "system: x\n" + body)
    error = load_error(path)
    last_line = 1 + body.count("\n")
    assert (error.path, error.line, error.field) == (str(path), last_line, field)


def test_system_mapping_needs_exactly_text(write_role: WriteRole) -> None:
    error = load_error(write_role("a.yaml", "system:\n  prompt: x\n"))
    assert (error.field, error.line) == ("system", 1)
    assert "'text'" in error.message


def test_missing_system_prompt_is_an_error(write_role: WriteRole) -> None:
    error = load_error(write_role("a.yaml", "name: a\ndescription: nothing to say\n"))
    assert error.field == "system"
    assert "system prompt" in error.message


def test_both_spellings_of_max_iterations_are_refused(write_role: WriteRole) -> None:
    error = load_error(write_role("a.yaml", "system: x\nmax_iterations: 3\nmaxTurns: 4\n"))
    assert (error.line, error.field) == (3, "maxTurns")


def test_yaml_that_is_not_a_mapping_is_refused(write_role: WriteRole) -> None:
    error = load_error(write_role("a.yaml", "- system\n- x\n"))
    assert "mapping" in error.message


def test_yaml_syntax_error_gives_the_line(write_role: WriteRole) -> None:
    error = load_error(write_role("a.yaml", "system: x\ntools: [a, b\nmodel: m\n"))
    assert error.path is not None and error.path.endswith("a.yaml")
    assert error.line is not None and error.line >= 2
    assert "invalid YAML" in error.message


def test_markdown_errors_count_lines_in_the_whole_file(write_role: WriteRole) -> None:
    path = write_role("r.md", "---\nname: r\nmaxTurns: lots\n---\nHi.\n")
    error = load_error(path)
    assert (error.line, error.field) == (3, "maxTurns")


def test_markdown_without_front_matter_is_its_prompt_alone(write_role: WriteRole) -> None:
    path = write_role("notes.md", "# Just notes\n")
    spec = MultiFormatLoader().load_file(path)
    assert (spec.name, spec.system) == ("notes", "# Just notes")


def test_markdown_with_system_twice_is_refused(write_role: WriteRole) -> None:
    error = load_error(write_role("r.md", "---\nsystem: one\n---\nTwo.\n"))
    assert (error.field, error.line) == ("system", 2)


def test_toml_errors_give_the_line_of_the_key(write_role: WriteRole) -> None:
    path = write_role("t.toml", 'system = "x"\nmax_iterations = "ten"\n')
    error = load_error(path)
    assert (error.path, error.line, error.field) == (str(path), 2, "max_iterations")


def test_toml_syntax_error_gives_the_line(write_role: WriteRole) -> None:
    error = load_error(write_role("t.toml", 'system = "x"\nmodel = = 1\n'))
    assert "invalid TOML" in error.message
    assert error.line == 2


def test_json_unknown_field_gives_the_line(write_role: WriteRole) -> None:
    path = write_role("j.json", '{\n  "system": "x",\n  "tols": ["a"]\n}\n')
    error = load_error(path)
    assert (error.line, error.field) == (3, "tols")
    assert "did you mean 'tools'?" in error.message


def test_json_syntax_error_gives_the_line(write_role: WriteRole) -> None:
    error = load_error(write_role("j.json", '{\n  "system": "x",\n}\n'))
    assert (error.line, "invalid JSON" in error.message) == (3, True)


def test_a_stem_that_cannot_be_a_name_is_refused(write_role: WriteRole) -> None:
    error = load_error(write_role("my role.yaml", "system: x\n"))
    assert error.field == "name"


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    error = load_error(tmp_path / "absent.yaml")
    assert (error.path, error.message) == (str(tmp_path / "absent.yaml"), "file not found")


def test_unsupported_extension_lists_the_known_ones(write_role: WriteRole) -> None:
    error = load_error(write_role("a.ini", "[agent]\n"))
    assert ".yaml" in error.message and ".md" in error.message


# --- tools -----------------------------------------------------------------------------


def test_to_agent_builds_a_prototype_with_its_tools(
    write_role: WriteRole, toolbox: dict[str, Tool[Any]]
) -> None:
    spec = YamlAgentLoader().load_file(write_role("builder.yaml", FULL_YAML))
    agent = spec.to_agent(toolbox)
    assert [t.name for t in agent.tools] == ["read_file", "shell"]
    assert agent.tools[0] is toolbox["read_file"]
    assert (agent.name, agent.system, agent.max_iterations) == ("builder", spec.system, 12)
    assert isinstance(agent.transport, DummyCompletionTransport)


def test_unknown_tool_lists_the_toolbox_and_points_at_the_entry(
    write_role: WriteRole, toolbox: dict[str, Tool[Any]]
) -> None:
    path = write_role("a.yaml", "system: x\ntools:\n  - read_file\n  - shel\n")
    spec = YamlAgentLoader().load_file(path)
    with pytest.raises(ConfigError) as caught:
        spec.to_agent(toolbox)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), 4, "tools")
    assert error.message == (
        "unknown tool 'shel' (known: ask_user, edit_file, list_files, notes, read_file, "
        "search, shell, todo, write_file)"
    )


def test_unknown_tool_in_a_comma_list_points_at_the_tools_line(write_role: WriteRole) -> None:
    path = write_role("r.md", "---\ndescription: d\ntools: Read, Grep\n---\nHi.\n")
    spec = MarkdownAgentLoader().load_file(path)
    with pytest.raises(ConfigError) as caught:
        spec.to_agent({})
    assert [(p.line, p.field) for p in caught.value.problems] == [(3, "tools"), (3, "tools")]
    assert "the toolbox is empty" in caught.value.message


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("bom.md", "\ufeff---\ndescription: d\n---\nHi.\n"),
        ("bom.json", '\ufeff{"system": "Hi."}'),
        ("bom.yaml", "\ufeffsystem: Hi.\n"),
    ],
)
def test_a_byte_order_mark_is_ignored(write_role: WriteRole, filename: str, text: str) -> None:
    spec = MultiFormatLoader().load_file(write_role(filename, text))
    assert (spec.name, spec.system) == ("bom", "Hi.")

"""A directory of 40 Claude Code agent files, in every form they come in, loads as a team."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm import Tool
from swarm.team import Team
from swarm.toolbox import TOOL_NAMES

CORPUS = Path(__file__).parent / "claude_agents"


def team() -> Team:
    return Team.load(CORPUS)


def warnings_about(fragment: str) -> list[str]:
    return [w for w in team().warnings if fragment in w]


def test_the_whole_directory_loads_with_no_error() -> None:
    loaded = team()
    assert len(list(CORPUS.glob("*.md"))) == 40
    assert len(loaded) == 41  # the 40 roles and the implicit orchestrator
    assert loaded.implicit and loaded.entry == "main"
    assert loaded.delegates_of("main") == tuple(sorted(set(loaded.specs) - {"main"}))


def test_every_role_builds_with_the_toolbox(toolbox: dict[str, Tool[Any]]) -> None:
    agents = team().agents(toolbox)
    assert len(agents) == 41
    assert agents["main"][1].tools == []  # it only delegates


def test_the_six_files_yaml_cannot_parse_are_read_leniently() -> None:
    lenient = warnings_about("not valid YAML")
    files = sorted(Path(w.split(":", 1)[0]).name for w in lenient)
    assert files == [
        "backend-architect.md",
        "general-helper.md",
        "issue-planner.md",
        "performance-engineer.md",
        "refactoring-expert.md",
    ]
    specs = team().specs
    # the sixth: closed with a long dash line, which is no longer a YAML problem at all
    assert specs["migration-specialist"].system.startswith("You migrate code")
    assert specs["backend-architect"].description.startswith("Use this agent when designing")
    assert "<commentary>" in specs["backend-architect"].description
    assert specs["general-helper"].tools == TOOL_NAMES


def test_tool_names_are_mapped() -> None:
    specs = team().specs
    assert specs["code-reviewer"].tools == ("read_file", "search", "list_files", "shell")
    assert specs["frontend-developer"].tools == (
        "read_file",
        "write_file",
        "edit_file",
        "shell",
        "list_files",
        "search",
    )
    assert specs["requirements-analyst"].tools[0] == "ask_user"
    assert specs["file-organizer"].tools == ("list_files", "read_file", "shell")
    assert specs["notebook-analyst"].tools == ("read_file", "edit_file", "shell", "list_files")


def test_files_without_tools_get_the_whole_toolbox() -> None:
    whole = [name for name, spec in team().specs.items() if spec.tools == TOOL_NAMES]
    assert len(whole) == 11  # the ten files with no tools key, and 'tools: *'


def test_bash_patterns_limit_the_shell() -> None:
    specs = team().specs
    assert specs["git-historian"].shell_commands == ("git log", "git blame", "git diff", "git show")
    assert specs["changelog-writer"].shell_commands == ("git log", "git tag")
    assert specs["release-manager"].shell_commands[-2:] == ("git status", "git tag")


def test_mcp_tools_of_undeclared_servers_are_warned_once_per_server() -> None:
    dropped = warnings_about("not declared by the team")
    servers = sorted(w.split("mcp server '")[1].split("'")[0] for w in dropped)
    assert servers == ["figma", "github", "osv", "playwright", "postgres"]


def test_fields_are_mapped_or_warned() -> None:
    loaded = team()
    assert loaded.specs["planner"].policy == "readonly"
    assert loaded.specs["issue-planner"].name == "issue-planner"
    assert loaded.specs["performance-engineer"].model is None  # inherit
    assert loaded.specs["general-helper"].model is None  # default
    assert loaded.specs["migration-specialist"].model == "claude-sonnet-4-5-20250929"
    assert loaded.specs["accessibility-auditor"].max_iterations == 20
    assert "write_file" not in loaded.specs["data-scientist"].tools
    assert loaded.specs["dependency-auditor"].shell_denied == ("rm",)
    for fragment in (
        "'WebFetch' has no equivalent",
        "'WebSearch' has no equivalent",
        "'Task' has no equivalent",
        "field 'hooks': not supported",
        "field 'memory': not supported",
        "field 'allowed-tools': read as 'tools'",
        "'acceptEdits' is ignored",
        "field 'version': Claude Code ignores it",
        "field 'category': Claude Code ignores it",
        "'Issue Planner' cannot name a tool",
    ):
        assert warnings_about(fragment), fragment
    assert not warnings_about("field 'color'") and not warnings_about("field 'effort'")

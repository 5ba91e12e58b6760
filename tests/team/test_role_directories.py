"""Directories of role files, ``load_agents``, and custom loaders."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm import ConfigError, Tool
from swarm.team import (
    AgentLoader,
    AgentSpec,
    MultiFormatLoader,
    YamlAgentLoader,
    load_agents,
    load_specs,
)

WriteRole = Callable[[str, str], Path]


# --- directories -----------------------------------------------------------------------


def test_load_specs_reads_every_format_and_skips_the_rest(
    roles_dir: Path, write_role: WriteRole
) -> None:
    write_role("a.yaml", "system: a\n")
    write_role("b.toml", 'system = "b"\n')
    write_role("c.json", '{"system": "c"}')
    write_role("d.md", "---\ndescription: d\n---\nd\n")
    write_role("README.md", "# About these roles\n")
    write_role(".hidden.yaml", "system: hidden\n")
    write_role("notes.txt", "not a role\n")
    (roles_dir / "sub").mkdir()
    (roles_dir / "sub" / "e.yaml").write_text("system: e\n")
    specs = load_specs(roles_dir)
    assert list(specs) == ["a", "b", "c", "d"]
    assert specs["b"].source == roles_dir / "b.toml"


def test_duplicate_role_names_name_both_files(roles_dir: Path, write_role: WriteRole) -> None:
    write_role("a.yaml", "name: worker\nsystem: a\n")
    second = write_role("b.md", "---\nname: worker\n---\nb\n")
    with pytest.raises(ConfigError) as caught:
        load_specs(roles_dir)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(second), 2, "name")
    assert f"already defined in {roles_dir / 'a.yaml'}" in error.message


def test_every_bad_file_in_a_directory_is_reported(roles_dir: Path, write_role: WriteRole) -> None:
    write_role("a.yaml", "system: a\nmax_iterations: 0\n")
    write_role("b.yaml", "system: b\nextra: 1\n")
    write_role("c.yaml", "system: c\n")
    with pytest.raises(ConfigError) as caught:
        load_specs(roles_dir)
    assert [Path(p.path or "").name for p in caught.value.problems] == ["a.yaml", "b.yaml"]


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="role directory not found"):
        load_specs(tmp_path / "nowhere")


def test_directory_without_role_files_is_a_clear_error(
    roles_dir: Path, write_role: WriteRole
) -> None:
    write_role("README.md", "# nothing here\n")
    with pytest.raises(ConfigError, match=r"no role files \(\.yaml, \.yml"):
        load_specs(roles_dir)


def test_a_file_is_not_a_role_directory(write_role: WriteRole) -> None:
    with pytest.raises(ConfigError, match="expected a directory"):
        load_specs(write_role("a.yaml", "system: a\n"))


def test_load_agents_returns_descriptions_and_prototypes(
    roles_dir: Path, write_role: WriteRole, toolbox: dict[str, Tool[Any]]
) -> None:
    write_role("a.yaml", "description: Does A.\nsystem: a\ntools: [search]\n")
    write_role("b.yaml", "system: b\n")
    agents = load_agents(roles_dir, toolbox)
    assert sorted(agents) == ["a", "b"]
    description, agent = agents["a"]
    assert (description, agent.name, [t.name for t in agent.tools]) == ("Does A.", "a", ["search"])


def test_load_agents_reports_unknown_tools_of_every_role(
    roles_dir: Path, write_role: WriteRole, toolbox: dict[str, Tool[Any]]
) -> None:
    write_role("a.yaml", "system: a\ntools: [grep]\n")
    write_role("b.yaml", "system: b\ntools: [read_file, web]\n")
    with pytest.raises(ConfigError) as caught:
        load_agents(roles_dir, toolbox)
    assert [(Path(p.path or "").name, p.line) for p in caught.value.problems] == [
        ("a.yaml", 2),
        ("b.yaml", 2),
    ]


# --- custom loaders --------------------------------------------------------------------


class KeyValueLoader(AgentLoader):
    """A custom format: ``key=value`` lines."""

    extensions = ("kv",)

    def load(self, content: str) -> AgentSpec:
        fields = dict(line.split("=", 1) for line in content.splitlines() if line)
        if "system" not in fields:
            raise ConfigError("no system line", field="system")
        return AgentSpec(name=fields.get("name", ""), description="", system=fields["system"])


def test_a_custom_loader_only_implements_load(roles_dir: Path, write_role: WriteRole) -> None:
    write_role("helper.kv", "system=Help.\n")
    write_role("other.yaml", "system: other\n")
    loader = MultiFormatLoader([KeyValueLoader(), YamlAgentLoader()])
    specs = load_specs(roles_dir, loader=loader)
    assert specs["helper"] == AgentSpec(
        name="helper", description="", system="Help.", source=roles_dir / "helper.kv"
    )
    assert "other" in specs


def test_a_custom_loaders_errors_name_the_file(write_role: WriteRole) -> None:
    path = write_role("bad.kv", "name=x\n")
    with pytest.raises(ConfigError) as caught:
        KeyValueLoader().load_file(path)
    assert (caught.value.path, caught.value.field) == (str(path), "system")


def test_a_custom_loaders_parse_failure_becomes_a_config_error(write_role: WriteRole) -> None:
    path = write_role("bad.kv", "no equals sign\n")
    with pytest.raises(ConfigError) as caught:
        KeyValueLoader().load_file(path)
    assert caught.value.path == str(path)
    assert caught.value.message.startswith("cannot load role:")

"""``team.yaml``: the team's model aliases, never a role."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm import ConfigError
from swarm.team import Team


def test_team_yaml_holds_model_aliases_and_is_not_a_role(tmp_path: Path) -> None:
    (tmp_path / "lead.yaml").write_text("system: lead\nmodel: fast\n")
    (tmp_path / "team.yaml").write_text("models:\n  fast: openai:gpt-4.1-mini\n")
    team = Team.load(tmp_path)
    assert list(team.specs) == ["lead"]
    assert dict(team.models) == {"fast": "openai:gpt-4.1-mini"}


def test_a_bad_team_yaml_names_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / "lead.yaml").write_text("system: lead\n")
    (tmp_path / "team.yaml").write_text("# aliases\nmodles:\n  fast: openai:gpt-4.1-mini\n")
    with pytest.raises(ConfigError) as caught:
        Team.load(tmp_path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(tmp_path / "team.yaml"), 2, "modles")

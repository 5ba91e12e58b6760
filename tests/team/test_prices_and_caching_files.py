"""`models:` prices in team.yaml, and `budget.usd` and `cache:` in role files: what they
set, and a clear error naming file, line and field for a bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm import ConfigError, Team
from swarm.team.prices import team_registry


def team_dir(tmp_path: Path, team_yaml: str, role_extra: str = "") -> Path:
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "team.yaml").write_text(team_yaml)
    (directory / "lead.yaml").write_text(f"description: Leads.\nsystem: You lead.\n{role_extra}")
    return directory


def test_team_yaml_prices_a_model_and_keeps_aliases(tmp_path: Path) -> None:
    directory = team_dir(
        tmp_path,
        "models:\n"
        "  fast: openai:gpt-4.1-mini\n"
        "  house: {input: 0.5, output: 1.5, cache_read: 0.05}\n"
        "  cheap: {model: 'openai:gpt-4.1-nano', input: 0.08}\n",
        "budget: {usd: 2.5}\ncache: 1h\n",
    )
    team = Team.load(directory)
    assert dict(team.models) == {"fast": "openai:gpt-4.1-mini", "cheap": "openai:gpt-4.1-nano"}
    registry = team_registry(team)
    house = registry.lookup("house")
    assert house is not None and (house.input_price, house.cache_read_price) == (0.5, 0.05)
    nano = registry.lookup("gpt-4.1-nano")
    assert nano is not None and (nano.input_price, nano.output_price) == (0.08, 0.40)
    spec = team.specs["lead"]
    assert (spec.budget.usd, spec.cache) == (2.5, "1h")


def test_a_misspelt_price_field_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    directory = team_dir(tmp_path, "models:\n  house: {input: 0.5, ouptut: 1.5}\n")
    with pytest.raises(ConfigError) as caught:
        Team.load(directory)
    text = str(caught.value)
    assert "team.yaml:2" in text and "ouptut" in text


@pytest.mark.parametrize(
    ("extra", "field"),
    [("budget: {usd: -1}\n", "budget.usd"), ("cache: 2h\n", "cache")],
)
def test_a_bad_dollar_budget_or_cache_setting_is_named(
    tmp_path: Path, extra: str, field: str
) -> None:
    directory = team_dir(tmp_path, "models: {}\n", extra)
    with pytest.raises(ConfigError) as caught:
        Team.load(directory)
    assert f"lead.yaml:3: field '{field}" in str(caught.value)

"""``--model`` takes what a role's ``model:`` takes, and a bad one is the first thing said."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

import pytest


@pytest.mark.parametrize(
    ("name", "meant", "variable"),
    [
        ("sonnet", "anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gpt-4.1-mini", "openai:gpt-4.1-mini", "OPENAI_API_KEY"),
    ],
)
def test_a_role_model_name_is_understood_by_model(
    swarm: Swarm, examples: Path, name: str, meant: str, variable: str
) -> None:
    done = swarm("run", examples / "build-a-calculator.yaml", "--model", name)
    assert done.returncode == 2
    assert f"the model {name} ({meant}) needs an API key: set {variable}" in done.stderr
    assert "workspace:" not in done.stdout and "Traceback" not in done.stderr
    assert not (swarm.cwd / ".swarm").exists()  # nothing was made for the run


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("opneai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
        ("openai/gpt-4.1-mini", "openai:gpt-4.1-mini"),
    ],
)
def test_a_misspelt_provider_gets_a_suggestion_before_anything_runs(
    swarm: Swarm, examples: Path, given: str, meant: str
) -> None:
    done = swarm("run", examples / "build-a-calculator.yaml", "--model", given)
    assert done.returncode == 2
    assert f"unknown model provider in '{given}'" in done.stderr
    assert f"did you mean '{meant}'?" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert not (swarm.cwd / ".swarm").exists()

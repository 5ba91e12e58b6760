"""Every crew of ``tests/team/corpus/crews`` (modelled on public CrewAI projects: both
layouts, sequential and hierarchical) loads and validates as found, with no API key."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.cli.checks import validate
from swarm.team import Team
from swarm.team.crewai import crew_files, load_crew

CREWS = Path(__file__).parent / "corpus" / "crews"
ALL = sorted(p.name for p in CREWS.iterdir() if p.is_dir())


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_corpus_has_both_layouts_and_both_processes() -> None:
    assert len(ALL) >= 10
    found = {name: crew_files(CREWS / name) for name in ALL}
    assert all(found.values())
    nested = [n for n, f in found.items() if f and f[0].parent.name == "config"]
    assert 3 <= len(nested) < len(ALL)
    processes = {load_crew(*f).process for f in found.values() if f}
    assert processes == {"sequential", "hierarchical"}


@pytest.mark.parametrize("name", ALL)
def test_each_crew_validates_with_no_key(name: str) -> None:
    problems, _ = validate(CREWS / name)
    assert problems == []


@pytest.mark.parametrize("name", ALL)
def test_each_crew_loads_as_a_team_with_its_tasks(name: str) -> None:
    team = Team.load(CREWS / name)
    found = crew_files(CREWS / name)
    assert found is not None
    crew = load_crew(*found)
    assert crew.tasks and set(crew.specs) <= set(team.specs)
    for task in crew.tasks:
        assert task.agent is None or task.agent in team.specs
        assert crew.entry_of(task) is None or crew.entry_of(task) in team.specs


def test_a_hierarchical_crew_is_led_by_its_manager() -> None:
    found = crew_files(CREWS / "support_desk")
    assert found is not None
    crew = load_crew(*found)
    assert (crew.process, crew.manager) == ("hierarchical", "support_manager")
    assert set(crew.specs["support_manager"].delegates) == {"support_agent", "qa_specialist"}
    assert {crew.entry_of(t) for t in crew.tasks} == {"support_manager"}


def test_crewai_project_roots_read_crew_py_for_the_process() -> None:
    for name, process in (("latest_ai", "sequential"), ("meeting_prep", "hierarchical")):
        found = crew_files(CREWS / name)
        assert found is not None and found[0].parts[-4] == "src"
        assert load_crew(*found).process == process


def test_what_does_not_map_is_said_once_with_its_line() -> None:
    team = Team.load(CREWS / "stock_analysis")
    said = [w for w in team.warnings if "gemini" in w]
    assert len(said) == 1 and "agents.yml:5:" in said[0]
    assert "names no provider swarm knows" in said[0]
    assert not [w for w in team.warnings if "output_pydantic" in w]  # it maps now

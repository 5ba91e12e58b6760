"""Python tools named in role files (``module:attr``), entry points, and bad references."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from swarm import ConfigError, Team
from swarm.cli import main
from swarm.team import MultiFormatLoader

pytestmark = pytest.mark.anyio

_numbers = itertools.count()

TOOLS_MODULE = '''
from swarm import Tool, tool


async def _forecast(city: str) -> str:
    return f"sunny in {city}"


forecast = Tool(name="forecast", handler=_forecast, description="The weather.")


@tool
def humidity(city: str) -> str:
    """How humid a city is."""
    return f"humid in {city}"


def wind(city: str, gusts: bool = False) -> str:
    """How windy a city is."""
    return f"windy in {city}" + (" with gusts" if gusts else "")


weather = [forecast, humidity, wind]
NOT_A_TOOL = 3
EMPTY = []


class Socketish:
    pass


def needs_object(thing: Socketish) -> str:
    """Takes something no JSON schema describes."""
    return "?"
'''


@pytest.fixture
def module_name(tmp_path: Path) -> str:
    """A module of tools in the team directory, under a name no other test imported."""
    name = f"team_tools_{next(_numbers)}_{tmp_path.name.replace('-', '_')}"
    team = tmp_path / "team"
    team.mkdir()
    (team / f"{name}.py").write_text(TOOLS_MODULE)
    return name


@pytest.fixture
def write_role(tmp_path: Path) -> Callable[[str], Path]:
    def write(tools: str) -> Path:
        path = tmp_path / "team" / "weatherman.yaml"
        path.write_text("name: weatherman\nsystem: You tell the weather.\ntools:\n" + tools + "\n")
        return path

    return write


def _tools_of(path: Path) -> dict[str, object]:
    spec = MultiFormatLoader().load_file(path)
    return {t.name: t for t in spec.to_agent().tools}


async def test_a_tool_object_reference_gives_that_tool(
    module_name: str, write_role: Callable[[str], Path]
) -> None:
    tools = _tools_of(write_role(f"  - {module_name}:forecast"))
    assert list(tools) == ["forecast"]
    assert await tools["forecast"](city="Oslo") == "sunny in Oslo"  # type: ignore[operator]


async def test_a_decorated_function_reference_gives_its_tool(
    module_name: str, write_role: Callable[[str], Path]
) -> None:
    tools = _tools_of(write_role(f"  - {module_name}:humidity"))
    assert tools["humidity"].description == "How humid a city is."  # type: ignore[attr-defined]
    assert await tools["humidity"](city="Lima") == "humid in Lima"  # type: ignore[operator]


async def test_a_plain_function_becomes_a_tool_from_its_signature_and_docstring(
    module_name: str, write_role: Callable[[str], Path]
) -> None:
    wind = _tools_of(write_role(f"  - {module_name}:wind"))["wind"]
    assert wind.description == "How windy a city is."  # type: ignore[attr-defined]
    schema = wind.input_schema  # type: ignore[attr-defined]
    assert schema["required"] == ["city"]
    assert schema["properties"]["gusts"]["type"] == "boolean"
    assert await wind(city="Rome", gusts="true") == "windy in Rome with gusts"  # type: ignore[operator]


def test_a_list_reference_gives_every_tool_in_it(
    module_name: str, write_role: Callable[[str], Path]
) -> None:
    tools = _tools_of(write_role(f"  - {module_name}:weather"))
    assert sorted(tools) == ["forecast", "humidity", "wind"]


def test_references_sit_beside_toolbox_names(
    module_name: str, write_role: Callable[[str], Path]
) -> None:
    spec = MultiFormatLoader().load_file(write_role(f"  - notes\n  - {module_name}:wind"))
    from swarm import tool

    @tool
    def notes() -> str:
        """Notes."""
        return ""

    agent = spec.to_agent({"notes": notes})
    assert [t.name for t in agent.tools] == ["notes", "wind"]


def test_an_entry_point_in_the_swarm_tools_group_adds_a_named_tool(
    module_name: str,
    tmp_path: Path,
    write_role: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dist = tmp_path / "site"
    info = dist / "weather_pack-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: weather-pack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[swarm.tools]\nweather = {module_name}:weather\n")
    monkeypatch.syspath_prepend(str(dist))
    monkeypatch.syspath_prepend(str(tmp_path / "team"))
    tools = _tools_of(write_role("  - weather"))
    assert sorted(tools) == ["forecast", "humidity", "wind"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("no_such_module_xyz:thing", "cannot import module 'no_such_module_xyz'"),
        ("{module}:missing", "module '{module}' has no attribute 'missing'"),
        ("{module}:NOT_A_TOOL", "'NOT_A_TOOL' is a int, not a tool"),
        ("{module}:EMPTY", "'EMPTY' is an empty list"),
        ("{module}:needs_object", "cannot build the input schema of tool 'needs_object'"),
    ],
)
def test_a_bad_reference_is_an_error_naming_file_line_and_entry(
    module_name: str, write_role: Callable[[str], Path], entry: str, message: str
) -> None:
    entry = entry.format(module=module_name)
    path = write_role(f"  - {module_name}:wind\n  - {entry}")
    spec = MultiFormatLoader().load_file(path)
    with pytest.raises(ConfigError) as caught:
        spec.to_agent()
    error = caught.value
    assert error.path == str(path)
    assert error.line == 5  # the second entry
    assert error.field == "tools"
    assert f"tool '{entry}'" in error.message
    assert message.format(module=module_name) in error.message


def test_a_module_failing_on_import_is_an_error_saying_how(
    tmp_path: Path, write_role: Callable[[str], Path]
) -> None:
    (tmp_path / "team").mkdir()
    name = f"broken_tools_{next(_numbers)}"
    (tmp_path / "team" / f"{name}.py").write_text("raise RuntimeError('no weather today')\n")
    spec = MultiFormatLoader().load_file(write_role(f"  - {name}:forecast"))
    with pytest.raises(ConfigError, match="RuntimeError: no weather today"):
        spec.to_agent()


def test_swarm_validate_reports_a_bad_reference_with_exit_2(
    module_name: str,
    write_role: Callable[[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_role(f"  - {module_name}:missing")
    assert main(["validate", str(tmp_path / "team")]) == 2
    captured = capsys.readouterr()
    err = captured.out + captured.err
    assert f"{path}:4" in err
    assert f"module '{module_name}' has no attribute 'missing'" in err
    assert "Traceback" not in err


def test_swarm_validate_accepts_a_team_with_python_tools(
    module_name: str,
    write_role: Callable[[str], Path],
    tmp_path: Path,
) -> None:
    write_role(f"  - {module_name}:weather")
    assert main(["validate", str(tmp_path / "team")]) == 0
    assert Team.load(tmp_path / "team").entry == "weatherman"

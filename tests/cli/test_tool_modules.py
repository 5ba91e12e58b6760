"""A ``module:function`` tool is found beside the file that names it (the scenario, the
role file), from whatever directory swarm is run, and the error says where it looked."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

SHOUT = 'def shout(text: str) -> str:\n    """Say it loudly."""\n    return text.upper()\n'
WHISPER = 'def whisper(text: str) -> str:\n    """Say it softly."""\n    return text.lower()\n'


def _project(swarm: Swarm, tmp_path: Path) -> Path:
    """``swarm init``'s project, whose scenario gives a tool from ``mytools.py`` beside it
    and whose writer names ``roletools:whisper`` (beside the role file); the writer's
    script calls both."""
    assert swarm("init", "proj").returncode == 0
    proj = tmp_path / "proj"
    (proj / "mytools.py").write_text(SHOUT)
    (proj / "team" / "roletools.py").write_text(WHISPER)
    scenario = proj / "scenario.yaml"
    text = scenario.read_text().replace(
        "policy: policies/team.yaml\n",
        "policy: policies/team.yaml\ntools: {shout: 'mytools:shout'}\n",
    )
    calls = (
        "      - call: shout\n        args: {text: hi}\n"
        "      - call: whisper\n        args: {text: HI}\n"
    )
    scenario.write_text(
        text.replace("      - text: I wrote hello.py.", calls + "      - text: I wrote hello.py.")
    )
    writer = proj / "team" / "writer.yaml"
    writer.write_text(
        writer.read_text().replace("list_files]", "list_files, shout, 'roletools:whisper']")
    )
    return proj


def test_a_scenario_with_its_own_tools_passes_from_its_folder_and_from_the_parent(
    swarm: Swarm, tmp_path: Path
) -> None:
    proj = _project(swarm, tmp_path)
    for where, target in ((tmp_path, "proj/scenario.yaml"), (proj, "scenario.yaml")):
        here = type(swarm)(where)
        checked = here("validate", target)
        # the script's call to `whisper` is a call to the tool 'roletools:whisper' gives
        assert (checked.returncode, checked.stderr) == (0, ""), where
        tested = here("test", target)
        assert tested.returncode == 0, tested.stdout + tested.stderr
        assert tested.stdout.splitlines()[-1] == "1 passed, 0 failed"


def test_a_module_in_the_current_directory_only_is_not_found_and_the_error_says_where(
    swarm: Swarm, tmp_path: Path
) -> None:
    proj = _project(swarm, tmp_path)
    (proj / "team" / "roletools.py").rename(proj / "roletools.py")  # beside the scenario
    looked = f"{proj / 'team'}"
    for where, prefix in ((tmp_path, Path("proj/team")), (proj, Path("team"))):
        checked = type(swarm)(where)(
            "validate", "proj/scenario.yaml" if where == tmp_path else "scenario.yaml"
        )
        assert checked.returncode == 2
        assert checked.stderr.splitlines() == [
            f"{prefix / 'writer.yaml'}:3: field 'tools': tool 'roletools:whisper': cannot"
            f" import module 'roletools': it is neither in {looked} (beside the file that"
            " names it) nor installed",
            "1 problem found",
        ]


def test_two_scenarios_with_a_tools_module_of_one_name_each_get_their_own(
    swarm: Swarm, tmp_path: Path
) -> None:
    proj = _project(swarm, tmp_path)
    text = (proj / "scenario.yaml").read_text()
    # b's module has what a's has not: imported as a's, 'tools:loud' would not be found
    for name, module, function in (
        ("a", SHOUT, "shout"),
        ("b", SHOUT + "loud = [shout]\n", "loud"),
    ):
        folder = proj / "suite" / name
        folder.mkdir(parents=True)
        (folder / "tools.py").write_text(module)
        scenario = text.replace("name: hello", f"name: {name}")
        scenario = scenario.replace("team: team", "team: ../../team")
        scenario = scenario.replace("policies/team.yaml", "../../policies/team.yaml")
        scenario = scenario.replace("'mytools:shout'", f"'tools:{function}'")
        (folder / f"{name}.yaml").write_text(scenario)
    tested = swarm("test", "proj/suite")
    assert tested.returncode == 0, tested.stdout
    assert tested.stdout.splitlines()[-1] == "2 passed, 0 failed"

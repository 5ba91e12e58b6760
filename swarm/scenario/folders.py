"""What a folder given to ``swarm validate`` or ``swarm test`` holds: one rule for both.

- A **scenario** is a YAML file with a key only scenarios have (``task``, ``team``,
  ``expect``, ...); a policy file is one with policy keys (``rules``, ``extend``, ...) and
  none of those.
- A **team folder** holds role files (Markdown with front matter; YAML, TOML or JSON
  most of whose keys are role fields), a Claude Code project's ``.claude/agents``, or a
  CrewAI crew, and no scenario.
- Any other folder holds its scenarios and the scenarios and team folders of its
  subfolders, found the same way (a team folder is not searched further; hidden folders,
  ``__pycache__``, ``node_modules`` and virtual environments are skipped).

``swarm test DIR`` runs the scenarios; ``swarm validate DIR`` checks a team folder as a
team, and any other folder's scenarios (each with its team) and the team folders no
scenario of it names. Nothing here runs or validates a file: a YAML file that cannot be
read counts as a scenario in a folder of scenarios, so loading it reports the problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm.config import load_document
from swarm.errors import ConfigError
from swarm.mcp.config import MCP_FILES
from swarm.team.crewai import crew_files
from swarm.team.layout import team_layout
from swarm.team.loader import MultiFormatLoader
from swarm.team.spec import ALIASES, FIELD_NAMES
from swarm.team.teamfile import TEAM_FILES

__all__ = [
    "FolderContents",
    "folder_contents",
    "is_policy_file",
    "is_scenario_file",
    "is_team_folder",
]

# Keys only a scenario file has, and keys only a policy file has.
SCENARIO_KEYS = frozenset(
    {"task", "team", "entry", "expect", "files", "limits", "inputs", "workspace", "runs_dir"}
)
POLICY_KEYS = frozenset({"rules", "guards", "extend", "sandbox", "default", "protect"})
ROLE_FIELDS = FIELD_NAMES | set(ALIASES)
_YAML = (".yaml", ".yml")
_SKIPPED = frozenset({"__pycache__", "node_modules"})


def _keys(path: Path) -> set[str] | None:
    """The top-level keys of a data file (none when it is not a mapping); ``None`` when
    it cannot be read at all."""
    try:
        data: Any = load_document(path).data
    except ConfigError:
        return None
    return {str(k) for k in data} if isinstance(data, dict) else set()


def is_scenario_file(path: Path) -> bool:
    """Whether ``path`` is a YAML file with a key only scenarios have."""
    if path.suffix.lower() not in _YAML or not path.is_file():
        return False
    keys = _keys(path)
    return keys is not None and bool(keys & SCENARIO_KEYS)


def is_policy_file(path: Path) -> bool:
    """Whether ``path`` reads as a policy file: a mapping with a key only policies have
    and none only scenarios have."""
    if path.is_dir():
        return False
    keys = _keys(path)
    return keys is not None and bool(keys & POLICY_KEYS) and not (keys & SCENARIO_KEYS)


def _role_files(directory: Path) -> Iterator[Path]:
    loader = MultiFormatLoader()
    roles = team_layout(directory).roles
    if not roles.is_dir():
        return
    for path in sorted(roles.iterdir()):
        reserved = path.name in TEAM_FILES or path.name in MCP_FILES
        if path.name.startswith(".") or reserved or not path.is_file():
            continue
        found = loader.loader_for(path)
        if found is not None and found.is_role_file(path) and _reads_as_role(path):
            yield path


def _reads_as_role(path: Path) -> bool:
    """A Markdown file with front matter, or a data file most of whose keys are role
    fields and none a scenario's or a policy's (a ``pyproject.toml``, a ``package.json``
    or a ``CHANGELOG.md`` is not a role)."""
    if path.suffix.lower() in (".md", ".markdown"):
        try:
            with path.open(encoding="utf-8") as text:
                return text.readline().strip() == "---"
        except (OSError, UnicodeDecodeError):
            return False
    keys = _keys(path)
    if not keys or keys & (SCENARIO_KEYS | POLICY_KEYS):
        return False
    return 2 * len(keys & ROLE_FIELDS) > len(keys)


def is_team_folder(directory: Path) -> bool:
    """Whether ``directory`` is a team: role files (or a Claude Code project, or a
    CrewAI crew) and no scenario."""
    if not directory.is_dir():
        return False
    if any(is_scenario_file(p) for p in directory.iterdir()):
        return False
    return crew_files(directory) is not None or next(_role_files(directory), None) is not None


@dataclass(frozen=True, slots=True)
class FolderContents:
    """The scenario files and team folders under a folder, each in path order."""

    scenarios: tuple[Path, ...] = ()
    teams: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.scenarios or self.teams)


def _searched(directory: Path) -> bool:
    name = directory.name
    return not (name.startswith(".") or name in _SKIPPED or (directory / "pyvenv.cfg").exists())


def folder_contents(directory: Path) -> FolderContents:
    """The scenarios and team folders ``directory`` holds (see the module); a team
    folder holds itself as its one team."""
    if is_team_folder(directory):
        return FolderContents(teams=(directory,))
    scenarios: list[Path] = []
    teams: list[Path] = []
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.suffix.lower() in _YAML:
            keys = _keys(path)
            if keys is None or keys & SCENARIO_KEYS:  # one that cannot be read: reported
                scenarios.append(path)
        elif path.is_dir() and _searched(path):
            inner = folder_contents(path)
            scenarios += inner.scenarios
            teams += inner.teams
    return FolderContents(tuple(scenarios), tuple(teams))

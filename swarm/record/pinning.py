"""A run pinned to what defines it: the hashes of its team files, policies, scenario and
MCP declarations, recorded in ``manifest.json`` as ``defined_by`` and checked again when
the run is resumed."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from swarm.errors import ConfigError
from swarm.guards.policy import Policy
from swarm.mcp.config import MCP_FILES
from swarm.record.record import file_hash
from swarm.scenario.spec import Scenario
from swarm.team.claude_settings import SETTINGS_FILES
from swarm.team.crew_models import crew_home, python_files
from swarm.team.crewai import crew_files
from swarm.team.layout import team_layout
from swarm.team.teamfile import TEAM_FILES

__all__ = ["ChangedFile", "changed_files", "check_unchanged", "defining_files"]


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _team_files(team: Path) -> list[Path]:
    team = _real(team)
    if not team.is_dir():
        return [team]
    crew = crew_files(team)
    if crew is not None:  # a CrewAI project: its crew files, not its code or virtualenv
        near = [crew[0].parent, crew[0].parent.parent]
        extra = [d / n for d in near for n in ("crew.yaml", "crew.py") if (d / n).is_file()]
        models = list(python_files(crew_home(crew[0])))  # where typed outputs are read
        return list(dict.fromkeys([*crew, *extra, *models]))
    layout = team_layout(team)
    if layout.roles == layout.root == team:
        return _files_under(team)
    # a project root: its team is its role, skill and command folders and its settings
    # (.claude/settings*.json too), not the project's own files (which the run may change)
    files = _files_under(layout.roles)
    for folder in (*layout.skills, *([layout.commands] if layout.commands else [])):
        files += _files_under(folder)
    for folder in layout.settings_dirs:
        files += [folder / n for n in (*MCP_FILES, *TEAM_FILES) if (folder / n).is_file()]
    claude = layout.root / ".claude"
    files += [claude / n for n in SETTINGS_FILES if (claude / n).is_file()]
    return files


def defining_files(scenario: Scenario, policies: Iterable[Policy]) -> dict[str, str | None]:
    """Each file that defines ``scenario``'s run, by absolute path, with its hash
    (``sha256:...``; ``None`` for one that does not exist): every file of the team
    directory (role files, ``team.yaml``, ``mcp.json``/``.mcp.json``), the scenario file
    (its ``mcp_servers``, tools and limits included), and every file of ``policies``
    (with the ones they extend)."""
    files = _team_files(scenario.team)
    if scenario.path is not None:
        files.append(_real(scenario.path))
    files += [_real(Path(f)) for policy in policies for f in policy.files]
    return {str(f): file_hash(f) for f in dict.fromkeys(files)}


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """A file that defines a run and is not what it was when the run started: ``how``
    is ``changed``, ``removed`` or ``added`` (a new file in the team directory)."""

    path: str
    how: str

    def to_dict(self) -> dict[str, str]:
        """As the audit log records it."""
        return {"path": self.path, "how": self.how}


def changed_files(pinned: Mapping[str, str | None], team: Path) -> list[ChangedFile]:
    """What differs between the files ``pinned`` (as ``defining_files`` recorded them)
    and the disk now, including files added to the ``team`` directory since."""
    changed: list[ChangedFile] = []
    for path, digest in pinned.items():
        now = file_hash(Path(path))
        if now != digest:
            changed.append(ChangedFile(path, "removed" if now is None else "changed"))
    for file in _team_files(team):
        if str(file) not in pinned:
            changed.append(ChangedFile(str(file), "added"))
    return changed


def check_unchanged(
    pinned: object, team: Path, *, accept: bool, manifest: Path
) -> list[ChangedFile]:
    """The files that changed since the run started (``[]`` for a record from before
    runs were pinned). Raises ``ConfigError`` naming the first one unless ``accept``."""
    if not isinstance(pinned, Mapping):
        return []
    changed = changed_files(pinned, team)
    if changed and not accept:
        first = changed[0]
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise ConfigError(
            f"this file was {first.how} since the run started{more}; what defines a run"
            " (team, policies, scenario, MCP declarations) must be what it was. Undo the"
            " change, or resume with --accept-changed-team to go on with the files as they"
            f" are now (the audit log records it). Pinned in {manifest}",
            path=first.path,
        )
    return changed

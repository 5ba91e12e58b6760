"""Where a team's parts are: the role files, skills, commands and MCP declarations.

A team directory is one of:

- a folder of role files (``roles/``): its skills in ``skills/`` beside them;
- a Claude Code project root: a folder with ``.claude/agents/``. Its roles are there, its
  skills in ``.claude/skills/`` (and ``.agents/skills/``), its commands in
  ``.claude/commands/``, its MCP servers in ``.mcp.json`` at the root, as Claude Code
  finds them;
- a ``.claude/agents`` folder itself: the project around it is read the same way;
- a Claude Code plugin (a folder with ``.claude-plugin/``): its roles in ``agents/``, its
  skills in ``skills/``, its commands in ``commands/``.

``team_layout`` tells which; nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["TeamLayout", "team_layout"]

CLAUDE_DIR = ".claude"
PLUGIN_DIR = ".claude-plugin"


@dataclass(frozen=True, slots=True)
class TeamLayout:
    """The parts of a team directory: ``roles`` (the folder of role files), ``root``
    (the project: ``.mcp.json``, ``team.yaml``), the existing ``skills`` folders (in the
    order a name is looked up) and the ``commands`` folder (``None`` when absent)."""

    root: Path
    roles: Path
    skills: tuple[Path, ...] = ()
    commands: Path | None = None

    @property
    def settings_dirs(self) -> tuple[Path, ...]:
        """Where the team's own files (``.mcp.json``, ``team.yaml``) may be: the role
        folder, then the project root (each once)."""
        return (self.roles,) if self.roles == self.root else (self.roles, self.root)


def _project_of(directory: Path) -> Path | None:
    """The project root of a ``.claude/agents`` folder (``None`` for any other)."""
    if directory.name == "agents" and directory.parent.name == CLAUDE_DIR:
        return directory.parent.parent
    return None


def team_layout(directory: str | Path) -> TeamLayout:
    """The layout of the team in ``directory`` (see the module); a folder with no
    ``.claude/agents`` is its own role folder."""
    directory = Path(directory)
    root, roles = directory, directory
    project = _project_of(directory)
    if project is not None:
        root = project
    elif (directory / CLAUDE_DIR / "agents").is_dir():
        roles = directory / CLAUDE_DIR / "agents"
    elif (directory / PLUGIN_DIR).is_dir() and (directory / "agents").is_dir():
        roles = directory / "agents"
    candidates = [
        root / CLAUDE_DIR / "skills",
        root / ".agents" / "skills",
        roles / "skills",
        root / "skills",
    ]
    skills: list[Path] = []
    for folder in candidates:
        if folder.is_dir() and folder not in skills:
            skills.append(folder)
    commands = root / CLAUDE_DIR / "commands"
    if (root / PLUGIN_DIR).is_dir():
        commands = root / "commands"
    return TeamLayout(
        root=root,
        roles=roles,
        skills=tuple(skills),
        commands=commands if commands.is_dir() else None,
    )

"""Slash commands: Claude Code's ``.claude/commands/*.md``, task templates (not roles).

A command file's body is the task; its front matter (``description``, ``argument-hint``,
``allowed-tools``, ``model``) says what it is for. A file without front matter is all
body. When a command is run with arguments:

- ``$ARGUMENTS`` becomes all of them, ``$1`` .. ``$9`` each one (an absent one: empty);
- ``@path`` naming a file in the workspace becomes that file's text (a path outside the
  workspace, or a link leading out of it, is left as written);
- each ``!`cmd``` is a shell command run before the task is sent, as a call of the entry
  role's ``shell`` tool: its guards, policy, sandbox and audit apply, and its output (or
  why it was refused) takes its place in the task.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from swarm.errors import ConfigError
from swarm.team.claude_markdown import read_markdown, slug

__all__ = ["Command", "CommandTask", "read_command"]

_ARGUMENT = re.compile(r"\$(ARGUMENTS|[1-9])")
_FILE = re.compile(r"(?<![\w/@])@([\w./-]*[\w/-])")
_SHELL = re.compile(r"!`([^`\n]+)`")
_EITHER = re.compile(rf"(?P<shell>{_SHELL.pattern})|{_FILE.pattern}")
_MAX_FILE_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class Command:
    """A command file: its ``name`` (the file's stem), ``description``, ``body`` and the
    file it came from; ``warnings`` say what was ignored."""

    name: str
    description: str
    body: str
    path: Path
    warnings: tuple[str, ...] = ()


def read_command(path: str | Path) -> Command:
    """The command in ``path``. Raises ``ConfigError`` naming the file."""
    path = Path(path)
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the command: {exc}", path=path) from None
    document, warnings = read_markdown(content, path)
    data = document.data if isinstance(document.data, dict) else {}
    said = [w for w in warnings if "no front matter" not in w]  # a command may have none
    if not (document.body or "").strip():
        raise ConfigError("the command has no text", path=path)
    return Command(
        name=slug(path.stem) or "command",
        description=str(data.get("description") or "").strip(),
        body=(document.body or "").strip(),
        path=path,
        warnings=tuple(said),
    )


def _inlined(match: re.Match[str], workspace: Path) -> str:
    name = match[match.lastindex or 1]
    root = workspace.resolve()
    target = (root / name).resolve()
    if not target.is_relative_to(root) or not target.is_file():
        return match[0]
    try:
        text = target.read_text(encoding="utf-8", errors="replace")[:_MAX_FILE_CHARS]
    except OSError:
        return match[0]
    return f"{name}:\n```\n{text.rstrip()}\n```\n"


@dataclass(frozen=True, slots=True)
class CommandTask:
    """A command run with ``arguments``: the task it makes (``render``) and the shell
    commands to run first (``shell_lines``)."""

    command: Command
    arguments: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """How the run names its task: ``/name args``."""
        return " ".join(["/" + self.command.name, *self.arguments])

    def _filled(self) -> str:
        def one(match: re.Match[str]) -> str:
            if match[1] == "ARGUMENTS":
                return " ".join(self.arguments)
            index = int(match[1]) - 1
            return self.arguments[index] if index < len(self.arguments) else ""

        return _ARGUMENT.sub(one, self.command.body)

    @property
    def shell_lines(self) -> list[str]:
        """The ``!`cmd``` commands of the filled text, in order."""
        return [m[1].strip() for m in _SHELL.finditer(self._filled())]

    def render(self, workspace: Path, outputs: Sequence[str]) -> str:
        """The task: arguments filled, ``@files`` inlined, each ``!`cmd``` replaced by
        its output in ``outputs`` (one per ``shell_lines`` entry), in one pass (what a
        file or an output holds is never read as a reference)."""
        results = iter(outputs)

        def one(match: re.Match[str]) -> str:
            if match["shell"] is not None:
                return next(results, match[0])
            return _inlined(match, workspace)

        return _EITHER.sub(one, self._filled())

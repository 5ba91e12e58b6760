"""PathGuard: every path a tool is given stays inside the workspace.

Which arguments are paths (``path_arguments``), in this order:

1. those a tool lists in its ``context`` under ``"path_arguments"``;
2. those whose schema says ``"format": "path"`` (a handler parameter typed
   ``pathlib.Path`` or ``list[Path]``);
3. those named ``path``, ``paths``, ``file``, ``files``, ``filename``, ``directory``,
   ``dir``, ``cwd``, or ending in ``_path``, ``_paths``, ``_file``, ``_files``, ``_dir``
   or ``_directory``.

A value may be a string, a ``Path`` or a list of them.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["PathGuard", "path_arguments"]

_PATH_NAME = re.compile(
    r"(path|paths|file|files|filename|directory|dir|cwd)"
    r"|.+_(path|paths|file|files|dir|directory)"
)


def path_arguments(tool: Tool[Any]) -> frozenset[str]:
    """The names of ``tool``'s arguments that are paths (see the module docstring)."""
    context = tool.context
    if isinstance(context, Mapping) and "path_arguments" in context:
        return frozenset(context["path_arguments"])
    names: set[str] = set()
    for name, schema in tool.input_schema.get("properties", {}).items():
        if _PATH_NAME.fullmatch(name) or _is_path_schema(schema):
            names.add(name)
    return frozenset(names)


def _is_path_schema(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    if schema.get("format") == "path":
        return True
    options = [schema.get("items"), *schema.get("anyOf", ())]
    return any(_is_path_schema(option) for option in options)


def _values(value: Any) -> Iterator[Any]:
    if isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _values(item)
    elif value is not None:
        yield value


class PathGuard(PermissionGuard):
    """Denies a call when a path argument would leave ``root``.

    A relative path is taken from ``root``. Denied: a ``..`` component (what it means
    depends on symlinks that ``..`` walks back over, so it is refused outright), an
    absolute path outside ``root``, a path through a symlink that resolves outside
    ``root``, and a value that is not a path (not a string or ``Path``, or with a NUL).
    Symlinks are resolved when the call is checked; a tool that follows them later should
    not trust a link created in between.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(root))
        self._root = str(self.root)
        self._inside = self._root.rstrip(os.sep) + os.sep
        self._cache: dict[int, tuple[Tool[Any], frozenset[str]]] = {}

    def _names(self, tool: Tool[Any]) -> frozenset[str]:
        hit = self._cache.get(id(tool))
        if hit is not None and hit[0] is tool:
            return hit[1]
        names = path_arguments(tool)
        if len(self._cache) > 1024:
            self._cache.clear()
        self._cache[id(tool)] = (tool, names)
        return names

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        for name in self._names(tool):
            for value in _values(kwargs.get(name)):
                reason = self.problem(value)
                if reason is not None:
                    raise GuardError(
                        f"argument '{name}': {reason}", guard=self.name, rule="workspace"
                    )
        return kwargs

    def _resolve(self, path: str) -> str:
        """``os.path.realpath(path)``, checking only the components below the (already
        resolved) root: an lstat each on a local disk, cheaper than a hop to a thread."""
        if not path.startswith(self._inside):
            return os.path.realpath(path)
        current = self._root.rstrip(os.sep)
        for part in path[len(self._inside) :].split(os.sep):
            if part in ("", "."):
                continue
            current = f"{current}{os.sep}{part}"
            try:
                mode = os.lstat(current).st_mode
            except OSError:  # not there (yet): nothing below it can be a link
                return os.path.normpath(path)
            if stat.S_ISLNK(mode):
                return os.path.realpath(path)
        return current or os.sep

    def problem(self, value: Any) -> str | None:
        """Why ``value`` may not be used as a path, or ``None`` when it stays inside."""
        if not isinstance(value, str | PurePath):
            return f"{value!r} is not a path"
        text = os.fspath(value)
        if "\x00" in text:
            return "the path contains a NUL character"
        if ".." in text.replace(os.altsep or os.sep, os.sep).split(os.sep):
            return f"'{text}' uses '..'; give a path inside the workspace without it"
        resolved = self._resolve(os.path.join(self._root, text))
        if resolved == self._root or resolved.startswith(self._inside):
            return None
        if os.path.isabs(text) and not os.path.abspath(text).startswith(self._inside):
            return f"'{text}' is outside the workspace {self.root}"
        return f"'{text}' leads outside the workspace {self.root} (through a symlink)"

"""Python tools named in role files: ``package.module:name`` entries and entry points.

A role's ``tools:`` entry that is not a toolbox name may be a reference ``module:attr``
(``attr`` may be dotted: ``tools.weather:Client.forecast``) naming a ``Tool``, a ``@tool``
function, a plain function (made a tool from its signature and docstring) or a list of
those. A module is found beside the file that names it (the role file, the scenario), or
installed; never through the current directory, so a file means the same from anywhere.
Installed packages add named tools for every team through entry points in the
``swarm.tools`` group (the entry's name is the name a role lists).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from swarm.tools import Tool, tool

__all__ = [
    "ENTRY_POINT_GROUP",
    "entry_point_tools",
    "import_beside",
    "is_reference",
    "load_tool_reference",
]

ENTRY_POINT_GROUP = "swarm.tools"
"""The entry point group whose entries add named tools for every team."""


class ReferenceError(ValueError):
    """A reference that cannot be loaded; the message says why, without the location."""


def is_reference(entry: str) -> bool:
    """Whether a ``tools:`` entry is a Python reference (``module:attr``), not a tool
    name or an ``mcp:`` entry."""
    module, sep, attr = entry.partition(":")
    return bool(sep and module and attr) and module != "mcp"


@contextlib.contextmanager
def _import_path(directories: Sequence[Path]) -> Iterator[None]:
    """``directories`` first on ``sys.path`` while importing, then as it was."""
    added = [str(d) for d in directories if str(d) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for entry in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)


def _as_tools(value: Any, what: str) -> list[Tool[Any]]:
    """``value`` as tools: a ``Tool``, a function, or a list or tuple of those."""
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not items:
        raise ReferenceError(f"{what} is an empty list: it names no tool")
    tools: list[Tool[Any]] = []
    for item in items:
        if isinstance(item, Tool):
            tools.append(item)
        elif callable(item) and not isinstance(item, type):
            try:
                tools.append(tool(item))
            except (TypeError, NameError) as exc:
                raise ReferenceError(f"{what}: {exc}") from None
        else:
            kind = type(item).__name__
            raise ReferenceError(
                f"{what} is a {kind}, not a tool (expected a Tool, a function or a list of them)"
            )
    return tools


def _drop(top: str) -> None:
    """Forget the module ``top`` and its submodules, imported from another folder."""
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


def _in_folder(origin: str | None, folder: Path) -> bool:
    """Whether a module found at ``origin`` is a file or package directly in ``folder``."""
    if not origin:
        return False
    found = Path(origin)
    home = found.parent.parent if found.name == "__init__.py" else found.parent
    return home.resolve() == folder


def import_beside(module_name: str, search: Sequence[Path] = ()) -> ModuleType:
    """Import ``module_name`` from the folders of ``search`` (the folder of the file that
    names it), else as installed; with no ``search`` (a Python caller), the current
    directory first.

    With ``search``, a module of that name imported before from elsewhere (another
    team's ``tools.py``) is imported again from here, and one found only in the current
    directory is refused: a file's references mean the same from any directory. Raises
    ``ValueError`` saying where it looked, or what failed while importing.
    """
    folders = [d.resolve() for d in search]
    top = module_name.partition(".")[0]
    where = ", ".join(map(str, folders))
    try:
        if not folders:
            with _import_path([Path.cwd()]):
                return importlib.import_module(module_name)
        beside = importlib.machinery.PathFinder.find_spec(top, [str(f) for f in folders])
        if beside is not None:
            loaded = sys.modules.get(top)
            if loaded is not None and getattr(loaded, "__file__", None) != beside.origin:
                _drop(top)
            with _import_path(folders):
                return importlib.import_module(module_name)
        here = Path.cwd().resolve()
        installed = importlib.util.find_spec(top)
        if installed is None or (here not in folders and _in_folder(installed.origin, here)):
            raise ReferenceError(
                f"cannot import module '{module_name}': it is neither in {where} (beside"
                " the file that names it) nor installed"
            )
        return importlib.import_module(module_name)
    except ReferenceError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name != top:  # the module is there; something it imports is not
            raise ReferenceError(
                f"importing module '{module_name}' failed: ModuleNotFoundError: {exc}"
            ) from None
        raise ReferenceError(f"cannot import module '{module_name}': {exc}") from None
    except Exception as exc:
        raise ReferenceError(
            f"importing module '{module_name}' failed: {type(exc).__name__}: {exc}"
        ) from None


def load_tool_reference(entry: str, *, search: Sequence[Path] = ()) -> list[Tool[Any]]:
    """The tools ``entry`` (``module:attr``) names, the module imported from the folders
    of ``search`` (the folder of the file naming it) or as installed (``import_beside``).

    Raises ``ValueError`` saying what is wrong: the module cannot be found (and where it
    looked) or fails while importing, it has no such attribute, the attribute is not a
    tool, or its input schema cannot be built.
    """
    module_name, _, attr = entry.partition(":")
    module = import_beside(module_name, search)
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ReferenceError(f"module '{module_name}' has no attribute '{attr}'") from None
    return _as_tools(value, f"'{attr}'")


def entry_point_tools() -> dict[str, list[Tool[Any]]]:
    """The tools installed packages add through the ``swarm.tools`` entry point group,
    by entry name. Raises ``ValueError`` naming the entry point that cannot be loaded."""
    found: dict[str, list[Tool[Any]]] = {}
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        what = f"entry point '{point.name}' ({point.value})"
        try:
            value = point.load()
        except Exception as exc:
            raise ReferenceError(f"{what} cannot be loaded: {type(exc).__name__}: {exc}") from None
        found[point.name] = _as_tools(value, what)
    return found

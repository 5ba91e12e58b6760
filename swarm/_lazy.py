"""Names a package exports but imports only when first used (PEP 562 ``__getattr__``).

``import swarm`` stays cheap: a package face imports its light names as it runs, and lists
where each heavy one lives (the module that defines it, with its third-party imports:
httpx, networkx, pydantic, ...); that module is imported on the first ``swarm.Name`` or
``from swarm import Name``, and the value is then stored in the package, so later lookups
are plain attribute reads.

Each public name is written once for the runtime: as an import (``from m import X as X``,
the ``as`` telling type checkers it is re-exported) or in the face's table. ``__all__`` is
built from both, never written by hand. A lazy name is also imported under
``if TYPE_CHECKING:`` for type checkers; ``tests/test_public_api.py`` checks that block and
the table name the same things.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """A ``__getattr__``, a ``__dir__`` and the ``__all__`` of ``package``.

    Call it last in the package's ``__init__``: ``__all__`` is every public name the
    package holds by then (what it imported, not its submodules) and every name of
    ``where``, which maps a module to the names it defines, sorted. An unknown name raises
    ``AttributeError`` as a plain module would.
    """
    module_of = {name: module for module, names in where.items() for name in names}
    here = sys.modules[package]
    eager = [
        name
        for name, value in vars(here).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    ]
    listed = sorted({*eager, *module_of})

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(here, name, value)
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*vars(here), *listed})

    return __getattr__, __dir__, listed

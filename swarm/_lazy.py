"""Names a package exports but imports only when first used (PEP 562 ``__getattr__``).

``import swarm`` stays cheap: a package lists where each of its lazy names lives, and the
module that defines a name (with its third-party imports: httpx, networkx, pydantic, ...)
is imported on the first ``swarm.Name`` or ``from swarm import Name``. The value is then
stored in the package, so later lookups are plain attribute reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, Iterable[str]], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A ``__getattr__`` and a ``__dir__`` for ``package``.

    ``where`` maps a module to the names it defines; ``public`` is the package's
    ``__all__`` (what ``dir()`` lists beside the names already loaded). An unknown name
    raises ``AttributeError`` as a plain module would.
    """
    module_of = {name: module for module, names in where.items() for name in names}
    listed = sorted(public)

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*vars(importlib.import_module(package)), *listed})

    return __getattr__, __dir__

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import swarm


def test_all_is_sorted() -> None:
    assert swarm.__all__ == sorted(swarm.__all__)


def test_all_names_exist_and_every_public_import_is_listed() -> None:
    # names imported on first use are in the module once looked up: look every one up
    for name in swarm.__all__:
        getattr(swarm, name)
    public = {
        name
        for name, value in vars(swarm).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(swarm.__all__) == public


def test_every_public_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name in swarm.__all__
        if (inspect.isclass(obj := getattr(swarm, name)) or inspect.isfunction(obj))
        and obj.__module__.startswith("swarm")
        and not (obj.__doc__ or "").strip()
    ]
    assert missing == []


def test_dir_lists_every_public_name_before_it_is_used() -> None:
    assert set(swarm.__all__) <= set(dir(swarm))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        swarm.NoSuchThing  # noqa: B018


def _faces(marker: str) -> list[str]:
    root = Path(swarm.__file__).parent
    return sorted(
        ".".join(("swarm", *path.parent.relative_to(root).parts))
        for path in root.rglob("__init__.py")
        if marker in path.read_text()
    )


FACES = _faces("_lazy_exports(")
"""The package faces whose ``__all__`` is built from what they import."""
LAZY_FACES = _faces("_LAZY")
"""The faces with names imported on first use."""


def _typed_imports(module: str) -> dict[str, set[str]]:
    """What a face imports under ``if TYPE_CHECKING:``, by module."""
    source = Path(importlib.import_module(module).__file__ or "").read_text()
    found: dict[str, set[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                names = found.setdefault(statement.module or "", set())
                names |= {alias.name for alias in statement.names}
    return found


@pytest.mark.parametrize("face", LAZY_FACES)
def test_a_face_declares_for_type_checkers_exactly_the_names_it_loads_on_first_use(
    face: str,
) -> None:
    table = {
        module: set(names) for module, names in vars(importlib.import_module(face))["_LAZY"].items()
    }
    assert _typed_imports(face) == table


@pytest.mark.parametrize("face", FACES)
def test_a_face_lists_each_public_name_once_and_every_one_resolves(face: str) -> None:
    module = importlib.import_module(face)
    assert module.__all__ == sorted(set(module.__all__))
    for name in module.__all__:
        assert not name.startswith("_")
        getattr(module, name)

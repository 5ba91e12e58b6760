import inspect

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

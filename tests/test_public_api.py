import inspect

import swarm


def test_all_is_sorted() -> None:
    assert swarm.__all__ == sorted(swarm.__all__)


def test_all_names_exist_and_every_public_import_is_listed() -> None:
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

"""The run scope: ``RunScope.child`` copies every field and replaces only what it is given."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from swarm.budget import Budget
from swarm.control import AgentTree
from swarm.scope import AgentNumbers, RunScope


def _distinct_values() -> dict[str, Any]:
    """A value for every field of RunScope, none equal to the field's default."""

    def sink(event: Any) -> None:
        return None

    return {
        "path": "orchestrator/worker#1",
        "run_id": "abc123",
        "sink": sink,
        "observers": (object(),),
        "approver": object(),
        "budget": Budget("orchestrator"),
        "numbers": AgentNumbers(),
        "output_dir": Path("/tmp/outputs"),
        "agents": AgentTree(),
        "capture": object(),
        "subagents": object(),
        "restore_subagents": sink,
    }


def test_child_without_changes_keeps_every_field() -> None:
    values = _distinct_values()
    assert set(values) == {f.name for f in dataclasses.fields(RunScope)}, "a field is untested"
    scope = RunScope(**values)
    child = scope.child()
    for name, value in values.items():
        assert getattr(child, name) is value, name


def test_child_replaces_each_field_alone() -> None:
    values = _distinct_values()
    scope = RunScope()
    for name, value in values.items():
        child = scope.child(**{name: value})
        assert getattr(child, name) is value, name
        for other in values.keys() - {name}:
            assert getattr(child, other) == getattr(scope, other), (name, other)


def test_child_shares_the_numbering_of_its_parent() -> None:
    scope = RunScope()
    assert scope.child(path="a").numbers.take("a", "worker") == 1
    assert scope.numbers.take("a", "worker") == 2


def test_child_rejects_a_name_that_is_not_a_field() -> None:
    with pytest.raises(TypeError, match="sinks"):
        RunScope().child(sinks=None)

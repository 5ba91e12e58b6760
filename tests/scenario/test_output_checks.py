"""JSON-path conditions of ``expect.outputs``."""

from __future__ import annotations

import pytest

from swarm.scenario.output_checks import (
    check_outputs,
    condition_problems,
    parse_json_path,
)
from swarm.scenario.script import role_of

ANSWER = {"verdict": "ok", "findings": [{"line": 3, "sev": "low"}, {"line": 9, "sev": "high"}]}


def test_json_paths_read_keys_indexes_and_every_item() -> None:
    assert parse_json_path("$.findings[0].line") == ["findings", 0, "line"]
    assert parse_json_path("$.findings[*]['sev']") == ["findings", None, "sev"]
    with pytest.raises(ValueError, match="starts with"):
        parse_json_path("findings")
    with pytest.raises(ValueError, match=r"from '\.\.x'"):
        parse_json_path("$..x")


@pytest.mark.parametrize(
    ("conditions", "failure"),
    [
        ({"$.verdict": "ok", "$.findings": {"length": 2}}, None),
        ({"$.findings[*].line": {"gte": 3, "lt": 10}}, None),
        ({"$.findings[*].sev": {"one_of": ["low", "high"]}, "$.nope": {"exists": False}}, None),
        ({"$.verdict": {"matches": "^o", "type": "string"}}, None),
        ({"$.findings[*].line": {"gt": 3}}, "$.findings[*].line is 3, expected gt 3"),
        ({"$.findings": {"length": 1}}, "$.findings is of length 2, expected length 1"),
        ({"$.score": {"gte": 1}}, "$.score is missing"),
        ({"$.verdict": {"type": "integer"}}, "$.verdict is 'ok', expected type 'integer'"),
    ],
)
def test_conditions(conditions: dict[str, object], failure: str | None) -> None:
    failures = check_outputs({"r": conditions}, {"lead/r#1": ANSWER}, "lead", role_of)
    assert failures == ([] if failure is None else [f"outputs: lead/r#1 {failure}"])


def test_a_role_name_checks_every_agent_of_the_role() -> None:
    outputs = {"lead/r#1": {"v": 1}, "lead/r#2": {"v": 2}, "lead": {"v": 0}}
    failures = check_outputs({"r": {"$.v": 1}}, outputs, "lead", role_of)
    assert failures == ["outputs: lead/r#2 $.v is 2, expected equals 1"]
    assert check_outputs({"lead": {"$.v": 0}}, outputs, "lead", role_of) == []


def test_condition_problems_name_path_and_operator() -> None:
    problems = condition_problems({"$.a": {"size": 1}, "a": 1, "$.b": {"type": "text"}})
    assert any("unknown operator 'size'" in p for p in problems)
    assert any("starts with '$'" in p for p in problems)
    assert any("unknown type 'text'" in p for p in problems)

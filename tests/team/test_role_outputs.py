"""A role's ``output:`` in every format: inline schema, schema file, ``module:Model``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import (
    ConfigError,
    MultiFormatLoader,
    SessionEndEvent,
    StopReason,
    Team,
    make_agent_tools,
    run_team,
)
from swarm.contracts import FINAL_ANSWER
from swarm.testing import FunctionTransport, make_tool_use_response
from swarm.tools import ToolOutput

YAML_ROLE = """\
name: reviewer
system: Review.
output_retries: 1
output:
  type: object
  properties:
    verdict: {type: string, enum: [ok, bad]}
  required: [verdict]
"""
TOML_ROLE = """\
name = "reviewer"
system = "Review."
[output]
type = "object"
required = ["verdict"]
[output.properties.verdict]
type = "string"
"""
JSON_ROLE = json.dumps(
    {
        "name": "reviewer",
        "system": "Review.",
        "output": {"type": "object", "properties": {"verdict": {"type": "string"}}},
    }
)
MD_ROLE = """\
---
name: reviewer
description: Reviews.
output:
  type: object
  properties:
    verdict: {type: string}
---
Review.
"""
MODEL_MODULE = """\
import pydantic

class Verdict(pydantic.BaseModel):
    verdict: str
    score: int

NOT_A_MODEL = 3
"""


def _load(path: Path) -> Any:
    return MultiFormatLoader().load_file(path)


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("reviewer.yaml", YAML_ROLE),
        ("reviewer.toml", TOML_ROLE),
        ("reviewer.json", JSON_ROLE),
        ("reviewer.md", MD_ROLE),
    ],
)
def test_every_format_declares_an_output_schema(tmp_path: Path, filename: str, text: str) -> None:
    path = tmp_path / filename
    path.write_text(text)
    spec = _load(path)
    assert spec.output is not None
    assert spec.output.schema["properties"]["verdict"]["type"] == "string"
    agent = spec.to_agent()
    assert agent.contract is spec.output
    assert agent.output_retries == (1 if filename.endswith("yaml") else 2)


def test_a_schema_file_relative_to_the_role(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "verdict.json").write_text(
        json.dumps({"type": "object", "properties": {"v": {"type": "integer"}}})
    )
    path = tmp_path / "r.yaml"
    path.write_text("system: s\noutput: schemas/verdict.json\n")
    spec = _load(path)
    assert spec.output.source == "schemas/verdict.json"
    assert spec.output.check({"v": "x"})[1] == ["field 'v': 'x' is not of type 'integer'"]


def test_a_pydantic_model_next_to_the_role(tmp_path: Path) -> None:
    (tmp_path / "verdicts_mod.py").write_text(MODEL_MODULE)
    path = tmp_path / "r.yaml"
    path.write_text("system: s\noutput: verdicts_mod:Verdict\n")
    spec = _load(path)
    assert spec.output.model is not None and spec.output.model.__name__ == "Verdict"
    assert spec.output.check({"verdict": "ok", "score": 2}) == ({"verdict": "ok", "score": 2}, [])
    assert spec.output.check({"verdict": "ok"})[1] == ["missing field 'score'"]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "\n  type: object\n  properties:\n    v: {type: nope}\n",
            ":5: field 'output.properties.v.type': invalid JSON Schema",
        ),
        (" missing_mod_xyz:Model\n", ":2: field 'output': cannot import module 'missing_mod_xyz'"),
        (" verdicts_mod:NOT_A_MODEL\n", ":2: field 'output': 'verdicts_mod:NOT_A_MODEL' is a int"),
        (" verdicts_mod:Nope\n", ":2: field 'output': module 'verdicts_mod' has no attribute"),
        (" nowhere.json\n", ":2: field 'output': schema file 'nowhere.json' not found"),
        ("\n  type: array\n", ":3: field 'output.type': the output must be an object schema"),
    ],
)
def test_a_bad_output_is_a_located_error(tmp_path: Path, output: str, expected: str) -> None:
    (tmp_path / "verdicts_mod.py").write_text(MODEL_MODULE)
    path = tmp_path / "r.yaml"
    path.write_text("system: s\noutput:" + output)
    with pytest.raises(ConfigError) as caught:
        _load(path)
    assert f"{path}{expected}" in str(caught.value)


def test_a_delegation_to_a_typed_role_returns_json_and_the_data(tmp_path: Path) -> None:
    path = tmp_path / "reviewer.yaml"
    path.write_text(YAML_ROLE)
    agent = _load(path).to_agent()
    seen: list[str] = []

    def respond(messages: Any, tools: Any, system: str) -> Any:
        seen.append(",".join(t.name for t in tools))
        return make_tool_use_response(FINAL_ANSWER, "c1", {"verdict": "ok"})

    (tool,) = make_agent_tools({"reviewer": ("Reviews.", agent)}, FunctionTransport(respond))
    assert '"enum":["ok","bad"]' in tool.description

    async def call() -> ToolOutput:
        return await tool.run_handler({"task": "review", "topic": ""})

    out = anyio.run(call)
    assert json.loads(out.content if isinstance(out.content, str) else "") == {"verdict": "ok"}
    assert out.details is not None and out.details["output"] == {"verdict": "ok"}
    assert seen == [FINAL_ANSWER]


def test_a_delegation_whose_child_exhausts_its_retries_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "reviewer.yaml"
    path.write_text(YAML_ROLE)  # output_retries: 1
    agent = _load(path).to_agent()
    respond = lambda *_: make_tool_use_response(FINAL_ANSWER, "c", {"verdict": "meh"})  # noqa: E731
    (tool,) = make_agent_tools({"reviewer": ("Reviews.", agent)}, FunctionTransport(respond))

    async def call() -> None:
        await tool.run_handler({"task": "review", "topic": ""})

    with pytest.raises(Exception, match=r"did not finish \(invalid_output\)") as caught:
        anyio.run(call)
    assert "'meh' is not one of" in str(caught.value)


def test_team_run_reports_the_typed_answer(tmp_path: Path) -> None:
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "reviewer.yaml").write_text(YAML_ROLE)
    team = Team.load(roles)

    def respond(messages: Any, tools: Any, system: str) -> Any:
        return make_tool_use_response(FINAL_ANSWER, "c1", {"verdict": "bad"})

    async def main() -> SessionEndEvent:
        stream = run_team(team, "go", transport=FunctionTransport(respond))
        return await stream.get_session_end()

    end = anyio.run(main)
    assert end.stop_reason == StopReason.end_turn and end.output == {"verdict": "bad"}

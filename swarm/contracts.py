"""Typed results: the ``output`` schema an agent's final answer must meet.

An agent with an ``output`` (a JSON Schema, or a pydantic model) ends its run by calling
the ``final_answer`` tool, whose arguments are the answer; where the provider has a
structured output mode and ``final_answer`` is the only tool offered, the transport asks
for the JSON itself and the model's text is the answer. Either way the answer is
validated: an invalid one goes back to the model with a message naming every wrong,
missing or extra field, at most ``output_retries`` times (each counted in the budget
tree and shown as an ``OutputInvalid`` event); one more ends the run with stop reason
``invalid_output``, never with a placeholder taken for an answer.

An object schema that lists ``properties`` and says nothing of ``additionalProperties``
is read as closed (other keys are extra fields, reported as such): what OpenAI's strict
mode asks too, and what a caller who declared the fields expects.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from swarm.errors import InvalidOutput, ToolError
from swarm.events import OutputInvalid
from swarm.messages import Message, ToolResultBlock, ToolUseBlock
from swarm.tools import Tool, ToolOutput

if TYPE_CHECKING:
    import pydantic

    from swarm.budget import Budget

__all__ = [
    "DEFAULT_OUTPUT_RETRIES",
    "FINAL_ANSWER",
    "OutputCheck",
    "OutputContract",
    "OutputSpec",
    "OutputTool",
    "schema_problems",
    "structured_output",
]

FINAL_ANSWER = "final_answer"
"""The name of the tool an agent with an ``output`` schema answers through."""

DEFAULT_OUTPUT_RETRIES = 2
"""How many invalid final answers are sent back before the run ends ``invalid_output``."""

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n?```\s*$", re.DOTALL)


def _closed(node: Any) -> Any:
    """``node`` with every object schema that lists properties closed to other keys."""
    if isinstance(node, dict):
        out = {key: _closed(value) for key, value in node.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed(item) for item in node]
    return node


def schema_problems(schema: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """What makes ``schema`` an invalid JSON Schema (its own meta-schema's verdict): each
    problem's place in the schema (a key path) and message; empty when it is valid."""
    from jsonschema import validators  # the standard JSON Schema validator, loaded on use

    cls = validators.validator_for(schema)
    meta = cls(cls.META_SCHEMA)
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for error in sorted(meta.iter_errors(schema), key=lambda e: list(map(str, e.path))):
        where = tuple(error.absolute_path)
        shown = "/".join(map(str, where)) or "(top)"
        problems.append((where, f"invalid JSON Schema at {shown}: {error.message}"))
    if not problems and schema.get("type", "object") != "object":
        problems.append((("type",), "the output must be an object schema (type: object)"))
    return problems


def _where(path: Sequence[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: Any) -> list[str]:
    """One line per wrong, missing or extra field of a ``jsonschema`` error."""
    at = list(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict):
        return [
            f"missing field '{_where([*at, name])}'"
            for name in error.validator_value
            if name not in instance
        ]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        return [
            f"unexpected field '{_where([*at, name])}'" for name in instance if name not in known
        ]
    where = _where(at)
    return [f"field '{where}': {error.message}" if where else error.message]


@dataclass(frozen=True, slots=True)
class OutputContract:
    """The schema a final answer must meet: a JSON Schema (``schema``) and, when it came
    from a pydantic model, the ``model`` that also validates it (its own validators).

    ``source`` says where it was declared (``module:Model``, a file, ``inline``), for
    messages. Build one with ``OutputContract.of`` from a model class or a schema.
    """

    schema: Mapping[str, Any]
    model: type[pydantic.BaseModel] | None = None
    source: str = "inline"
    _checked: Mapping[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_checked", _closed(dict(self.schema)))

    @classmethod
    def of(cls, value: OutputSpec, *, source: str | None = None) -> OutputContract:
        """A contract from a pydantic model class, a JSON Schema mapping, or a contract.

        Raises ``ValueError`` naming what is wrong with the schema."""
        if isinstance(value, OutputContract):
            return value
        if isinstance(value, Mapping):
            schema = copy.deepcopy(dict(value))
            problems = schema_problems(schema)
            if problems:
                raise ValueError("; ".join(message for _, message in problems))
            return cls(schema, None, source or "inline")
        import pydantic

        if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
            schema = value.model_json_schema()
            name = source or f"{value.__module__}:{value.__qualname__}"
            return cls(schema, value, name)
        raise ValueError(
            f"an output is a pydantic model class or a JSON Schema mapping, not {value!r}"
        )

    @property
    def closed_schema(self) -> Mapping[str, Any]:
        """The schema as answers are checked against it: objects that list properties
        closed to other keys (what a provider's structured output mode is given)."""
        return self._checked

    def check(self, value: Any) -> tuple[Any, list[str]]:
        """Validate ``value``: the answer as JSON data and an empty list, or every problem
        (wrong, missing, extra fields), each naming its field."""
        from jsonschema import validators

        validator = validators.validator_for(self._checked)(self._checked)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path)))
        problems = [line for error in errors for line in _describe(error)]
        if problems or self.model is None:
            return value, problems
        import pydantic

        try:
            parsed = self.model.model_validate(value)
        except pydantic.ValidationError as exc:
            return value, [
                f"field '{_where(list(err['loc']))}': {err['msg']}" if err["loc"] else err["msg"]
                for err in exc.errors(include_url=False)
            ]
        return parsed.model_dump(mode="json"), []

    def parse_text(self, text: str) -> tuple[Any, list[str]]:
        """Validate a text answer (JSON, perhaps in a code fence), as ``check`` does."""
        body = text.strip()
        fenced = _FENCE.match(body)
        if fenced is not None:
            body = fenced.group(1)
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            shown = body if len(body) <= 80 else body[:77] + "..."
            return None, [f"the answer is not JSON ({exc.msg}): {shown!r}"]
        return self.check(value)


OutputSpec: TypeAlias = "OutputContract | type[pydantic.BaseModel] | Mapping[str, Any]"
"""What ``Agent(output=...)`` takes: a pydantic model class, a JSON Schema, a contract."""


@dataclass(frozen=True, slots=True)
class OutputTool(Tool[OutputContract]):
    """The ``final_answer`` tool: its arguments are the answer, checked against the
    contract in ``context`` by the handler (so every problem reaches the model at once,
    not pydantic's view of a signature)."""

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as they are: the contract checks them."""
        return dict(arguments)


def output_tool(
    contract: OutputContract, on_invalid: Callable[[list[str]], None] | None = None
) -> OutputTool:
    """The ``final_answer`` tool for ``contract``; ``on_invalid`` sees the problems of
    each invalid answer."""

    async def final_answer(**answer: Any) -> ToolOutput:
        value, problems = contract.check(answer)
        if problems:
            if on_invalid is not None:
                on_invalid(problems)
            raise ToolError("Invalid final answer: " + "; ".join(problems) + ".")
        return ToolOutput("Final answer accepted.", details={"output": value})

    return OutputTool(
        FINAL_ANSWER,
        final_answer,
        "Give your final answer: its arguments are the answer (nothing else is read). "
        "Call it once, when you are done.",
        context=contract,
        schema=contract.schema,
    )


def structured_output(tools: Sequence[Tool[Any]]) -> OutputContract | None:
    """The contract to ask a provider's structured output mode for: when the only tool a
    model call offers is ``final_answer`` (no other tool could be called then)."""
    if len(tools) == 1 and isinstance(tools[0], OutputTool):
        return tools[0].context
    return None


@dataclass(slots=True)
class OutputCheck:
    """One run's side of a contract: its ``final_answer`` tool, the invalid answers so
    far, and the accepted answer (``value``, ``done``)."""

    contract: OutputContract
    retries: int
    budget: Budget | None = None
    tool: OutputTool = field(init=False)
    attempts: int = 0
    value: Any = None
    done: bool = False
    _problems: list[str] = field(default_factory=list)
    _note: Message | None = None

    def __post_init__(self) -> None:
        self.tool = output_tool(self.contract, self._problems.extend)

    @property
    def text(self) -> str:
        """The accepted answer as JSON text (what a caller reads as the final text)."""
        return json.dumps(self.value, ensure_ascii=False)

    def after_calls(
        self, uses: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock]
    ) -> list[OutputInvalid]:
        """Look at a turn's calls: the first accepted ``final_answer`` ends the run
        (``done``); when every one of them failed, one invalid answer is counted (its
        event returned). Raises ``InvalidOutput`` past the retries."""
        tried = {u.id for u in uses if u.name == FINAL_ANSWER}
        if not tried:
            return []
        problems, self._problems[:] = list(self._problems), []
        for result in results:
            if result.tool_use_id not in tried:
                continue
            details = result.details or {}
            if not result.is_error and "output" in details:
                self.value, self.done = details["output"], True
                return []
            if not problems:  # refused before the contract saw it: unparseable, denied
                problems.append(result.text)
        return [self._invalid(problems)]

    def after_answer(self, message: Message) -> list[OutputInvalid]:
        """Look at an answer without tool calls: valid JSON that meets the contract is
        the answer (structured output mode); else one invalid answer is counted and the
        message to send back waits in ``take_note()``. Raises ``InvalidOutput`` past the
        retries."""
        value, problems = self.contract.parse_text(message.text)
        if not problems:
            self.value, self.done = value, True
            return []
        event = self._invalid(problems)
        self._note = Message.user(
            f"Your final answer is not valid: {'; '.join(problems)}. Give it again as the"
            f" arguments of the {FINAL_ANSWER} tool (or, when that tool is not offered, as"
            " one JSON object alone) with every field fixed."
        )
        return [event]

    def take_note(self) -> Message | None:
        """The message that sends an invalid text answer back, once."""
        note, self._note = self._note, None
        return note

    def _invalid(self, problems: Sequence[str]) -> OutputInvalid:
        self.attempts += 1
        if self.attempts > self.retries:
            raise InvalidOutput(
                f"the final answer did not meet the output schema ({self.contract.source})"
                f" after {self.attempts} attempts: " + "; ".join(problems)
            )
        if self.budget is not None:
            self.budget.count_output_retry()
        return OutputInvalid(self.attempts, self.retries, tuple(problems))

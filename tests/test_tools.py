from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
import anyio.lowlevel
import pytest
from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from swarm import Field, Progress, Tool, ToolContext, ToolError, ToolOutput, ToolTimeout, tool


@dataclass
class Point:
    x: int
    y: int


class Options(TypedDict):
    verbose: bool


def _titles(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                found.append(value)
            found += _titles(value)
    elif isinstance(node, list):
        for item in node:
            found += _titles(item)
    return found


async def everything(
    query: Annotated[str, Field(description="What to find")],
    mode: Literal["fast", "slow"],
    limit: Annotated[int, Field(default=10, ge=1, le=100)],
    tags: list[str] | None = None,
    weights: dict[str, float] | None = None,
    origin: Point | None = None,
    options: Options | None = None,
) -> str:
    return "ok"


def test_schema_from_annotations() -> None:
    schema = Tool("everything", everything).input_schema
    props = schema["properties"]
    assert props["query"] == {"type": "string", "description": "What to find"}
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["limit"]["minimum"] == 1 and props["limit"]["maximum"] == 100
    assert props["limit"]["default"] == 10
    assert schema["required"] == ["query", "mode"]
    assert schema["additionalProperties"] is False
    assert "Point" in schema["$defs"] and "Options" in schema["$defs"]


def test_schema_has_no_title_keys_but_keeps_a_field_named_title() -> None:
    async def post(title: str, origin: Point) -> str:
        return title

    schema = Tool("post", post).input_schema
    assert "title" in schema["properties"]
    assert _titles(schema) == []


def test_tool_decorator_takes_description_from_docstring() -> None:
    @tool
    async def greet(name: str) -> str:
        """Greet someone.

        Says hello.
        """
        return f"hi {name}"

    assert greet.name == "greet"
    assert greet.description == "Greet someone.\n\nSays hello."


def test_tool_decorator_with_options() -> None:
    @tool(name="shout", concurrency=2, timeout=5)
    def loud(text: str) -> str:
        return text.upper()

    assert (loud.name, loud.concurrency, loud.timeout) == ("shout", 2, 5)


def test_validation_coerces_strings_to_numbers() -> None:
    t = Tool("everything", everything)
    args = t.validate({"query": "q", "mode": "fast", "limit": "42", "origin": {"x": "1", "y": 2}})
    assert args["limit"] == 42
    assert args["origin"] == Point(1, 2)


def test_validation_error_names_each_bad_field() -> None:
    t = Tool("everything", everything)
    with pytest.raises(ToolError) as info:
        t.validate({"query": "q", "mode": "medium", "limit": 500, "extra": 1})
    text = str(info.value)
    assert "tool 'everything'" in text
    assert "field 'mode'" in text and "'fast' or 'slow'" in text
    assert "field 'limit'" in text and "less than or equal to 100" in text
    assert "field 'extra': unexpected field" in text


def test_missing_required_field_is_named() -> None:
    with pytest.raises(ToolError, match="field 'query': Field required"):
        Tool("everything", everything).validate({"mode": "fast"})


@pytest.mark.anyio
async def test_sync_handler_runs_in_a_worker_thread() -> None:
    import threading

    main = threading.get_ident()

    def where() -> str:
        return "worker" if threading.get_ident() != main else "loop"

    assert await Tool("where", where)() == "worker"


@pytest.mark.anyio
async def test_calling_a_tool_directly_validates_and_returns_content() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    assert await Tool("add", add)(a="2", b=3) == "5"
    with pytest.raises(ToolError):
        await Tool("add", add)(a="two", b=3)


@pytest.mark.anyio
async def test_tool_output_keeps_details() -> None:
    async def lookup() -> ToolOutput:
        return ToolOutput("found", details={"rows": [1, 2]})

    output = await Tool("lookup", lookup).execute({})
    assert output == ToolOutput("found", {"rows": [1, 2]})


@pytest.mark.anyio
async def test_concurrency_limit_bounds_parallel_calls() -> None:
    running = 0
    peak = 0

    async def work() -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        running -= 1
        return "done"

    limited = Tool("work", work, concurrency=2)
    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(limited.execute, {})
    assert peak == 2


@pytest.mark.anyio
async def test_timeout_raises_tool_timeout() -> None:
    async def forever() -> str:
        await anyio.sleep_forever()
        return ""

    with pytest.raises(ToolTimeout, match=r"timed out after 0\.01s"):
        await Tool("forever", forever, timeout=0.01).execute({})


@pytest.mark.anyio
async def test_progress_parameter_is_injected_not_in_schema() -> None:
    seen: list[tuple[str, str]] = []

    async def build(target: str, progress: Progress) -> str:
        progress("step 1")
        progress("warning", key="stderr")
        return target

    t = Tool("build", build)
    assert list(t.input_schema["properties"]) == ["target"]
    assert t.supports_streaming
    out = await t.execute(
        {"target": "x"}, progress=Progress("id", "build", lambda k, d: seen.append((k, d)))
    )
    assert out.content == "x"
    assert seen == [("output", "step 1"), ("stderr", "warning")]


@dataclass(frozen=True)
class Limits:
    most: int


async def capped(limits: Annotated[Limits, ToolContext], n: int) -> str:
    return str(min(n, limits.most))


@pytest.mark.anyio
async def test_a_handler_gets_the_context_of_the_tool_called_not_of_the_one_copied() -> None:
    t = Tool("capped", capped, context=Limits(3))
    tighter = t.copy(context=Limits(1))
    assert (await t.execute({"n": 5})).content == "3"
    assert (await tighter.execute({"n": 5})).content == "1"
    assert await tighter(n=5) == "1"


def test_the_context_parameter_is_not_in_the_schema_and_a_model_cannot_pass_it() -> None:
    t = Tool("capped", capped, context=Limits(3))
    assert list(t.input_schema["properties"]) == ["n"]
    assert not t.supports_streaming
    with pytest.raises(ToolError, match="field 'limits': unexpected field"):
        t.validate({"n": 5, "limits": {"most": 100}})


def test_a_tool_whose_context_is_not_the_handlers_type_is_refused_when_made() -> None:
    with pytest.raises(TypeError, match="takes its context as Limits, not dict"):
        Tool("capped", capped, context={"most": 3})
    with pytest.raises(TypeError, match="takes its context as Limits, not mappingproxy"):
        Tool("capped", capped)


@pytest.mark.anyio
async def test_progress_from_a_sync_handler_thread_reaches_the_loop() -> None:
    seen: list[str] = []

    def count(n: int, progress: Progress) -> str:
        for i in range(n):
            progress(str(i))
        return "counted"

    out = await Tool("count", count).execute(
        {"n": 3}, progress=Progress("id", "count", lambda k, d: seen.append(d))
    )
    assert out.content == "counted" and seen == ["0", "1", "2"]


@pytest.mark.anyio
async def test_streaming_handler_yields_chunks_and_joins_them() -> None:
    class Streamer:
        __name__ = "streamer"

        async def __call__(self) -> str:
            return "unused"

        async def stream(self) -> Any:
            yield ("stdout", "a")
            yield ("stdout", "b")

    seen: list[str] = []
    t = Tool("s", Streamer())
    out = await t.execute({}, progress=Progress("id", "s", lambda k, d: seen.append(k + d)))
    assert out.content == "ab" and seen == ["stdouta", "stdoutb"]


@pytest.mark.anyio
async def test_non_string_results_are_serialised_as_json() -> None:
    async def data() -> dict[str, int]:
        return {"a": 1}

    assert (await Tool("data", data).execute({})).content == '{"a": 1}'


def _make_named(name: str) -> Tool[Any]:
    async def handler(count: Annotated[int, Field(description="How many", ge=1)]) -> str:
        return f"{name}: {count}"

    return Tool(name=name, description="", handler=handler)


@pytest.mark.anyio
async def test_tools_from_one_definition_under_other_names_validate_and_name_themselves() -> None:
    first, second = _make_named("first_tool"), _make_named("second_tool")
    assert first.input_schema == second.input_schema
    assert "first_tool" not in str(second.input_schema)
    with pytest.raises(ToolError, match=r"Invalid arguments for tool 'second_tool'.*count"):
        second.validate({"count": 0})
    with pytest.raises(ToolError, match=r"Invalid arguments for tool 'first_tool'.*count"):
        first.validate({"count": "many"})
    assert await second(count=2) == "second_tool: 2"

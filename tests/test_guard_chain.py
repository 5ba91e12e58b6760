from typing import Annotated, Any

import anyio
import anyio.lowlevel
import pytest

from swarm import (
    Agent,
    AllowAllGuard,
    ConcurrentGuard,
    DenyAllGuard,
    Field,
    GuardError,
    MemoryContextStore,
    PermissionGuard,
    Tool,
    ToolResult,
)
from swarm.testing import StubTransport, make_text_response, make_tool_use_response


class Recorder(PermissionGuard):
    def __init__(self, log: list[str], label: str, change: dict[str, Any] | None = None):
        self.log, self.label, self.change = log, label, change or {}

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        self.log.append(f"{self.label}:{kwargs}")
        return {**kwargs, **self.change}


class Exploding(PermissionGuard):
    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("boom")


class ReturnsNone(PermissionGuard):
    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return None  # type: ignore[return-value]


def make_tool(calls: list[int], *guards: PermissionGuard) -> Tool[Any]:
    async def count(n: Annotated[int, Field(ge=0, le=10)]) -> str:
        calls.append(n)
        return f"counted {n}"

    return Tool("count", count, guards=guards)


async def run_one_call(tool: Tool[Any], arguments: dict[str, Any]) -> ToolResult:
    model = StubTransport([make_tool_use_response("count", "c1", arguments), make_text_response()])
    agent = Agent("s", model, [tool])
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        results = [e async for e in stream if isinstance(e, ToolResult)]
    assert len(results) == 1
    return results[0]


@pytest.mark.anyio
async def test_guards_run_in_order_each_seeing_the_previous_output() -> None:
    log: list[str] = []
    calls: list[int] = []
    tool = make_tool(calls, Recorder(log, "first", {"n": 2}), Recorder(log, "second"))
    result = await run_one_call(tool, {"n": 1})
    assert log == ["first:{'n': 1}", "second:{'n': 2}"]
    assert calls == [2] and result.content == "counted 2"


@pytest.mark.anyio
async def test_denial_reaches_model_as_error_result_and_handler_never_runs() -> None:
    calls: list[int] = []
    result = await run_one_call(make_tool(calls, DenyAllGuard("not today")), {"n": 1})
    assert result.is_error
    assert "Permission denied by DenyAllGuard: not today" in result.content
    assert calls == []


@pytest.mark.anyio
async def test_a_guard_that_raises_denies_the_call() -> None:
    calls: list[int] = []
    result = await run_one_call(make_tool(calls, AllowAllGuard(), Exploding()), {"n": 1})
    assert result.is_error and "Exploding" in result.content and "boom" in result.content
    assert calls == []


@pytest.mark.anyio
async def test_a_guard_returning_something_else_denies_the_call() -> None:
    calls: list[int] = []
    result = await run_one_call(make_tool(calls, ReturnsNone()), {"n": 1})
    assert result.is_error and "not the arguments" in result.content
    assert calls == []


@pytest.mark.anyio
async def test_a_guard_cannot_push_arguments_past_field_bounds() -> None:
    calls: list[int] = []
    result = await run_one_call(make_tool(calls, Recorder([], "g", {"n": 99})), {"n": 1})
    assert result.is_error and "invalid arguments" in result.content
    assert "less than or equal to 10" in result.content
    assert calls == []


@pytest.mark.anyio
async def test_guards_see_validated_arguments() -> None:
    log: list[str] = []
    await run_one_call(make_tool([], Recorder(log, "g")), {"n": "7"})
    assert log == ["g:{'n': 7}"]


@pytest.mark.anyio
async def test_concurrent_guard_checks_one_at_a_time() -> None:
    inside = 0
    peak = 0

    class Slow(ConcurrentGuard):
        async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
            nonlocal inside, peak
            inside += 1
            peak = max(peak, inside)
            await anyio.lowlevel.checkpoint()
            inside -= 1
            return kwargs

    tool = make_tool([], Slow())
    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(tool.check, {"n": 1})
    assert peak == 1


@pytest.mark.anyio
async def test_guard_error_raised_by_a_direct_call() -> None:
    with pytest.raises(GuardError, match="no"):
        await make_tool([], DenyAllGuard("no"))(n=1)

"""RateLimitGuard and BudgetGuard."""

from __future__ import annotations

from typing import Any

import pytest

from swarm.errors import GuardError
from swarm.guards import BudgetGuard, RateLimitGuard
from swarm.scope import CallRecord, RunScope, role_of, use_call, use_scope
from swarm.tools import Tool

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_rate_limit_denies_past_the_window_count(shell: Tool[Any]) -> None:
    clock = Clock()
    guard = RateLimitGuard(2, 10.0, clock=clock)
    await guard(shell, command="a")
    await guard(shell, command="b")
    with pytest.raises(GuardError) as caught:
        await guard(shell, command="c")
    assert caught.value.rule == "2/10s per tool"
    assert "try again in 10s" in caught.value.reason


async def test_rate_limit_window_slides(shell: Tool[Any]) -> None:
    clock = Clock()
    guard = RateLimitGuard(2, 10.0, clock=clock)
    await guard(shell, command="a")
    clock.now += 6
    await guard(shell, command="b")
    clock.now += 5
    await guard(shell, command="c")
    with pytest.raises(GuardError):
        await guard(shell, command="d")


async def test_denied_calls_do_not_count(shell: Tool[Any]) -> None:
    clock = Clock()
    guard = RateLimitGuard(1, 10.0, clock=clock)
    await guard(shell, command="a")
    for _ in range(5):
        with pytest.raises(GuardError):
            await guard(shell, command="again")
    clock.now += 10
    assert await guard(shell, command="b")


async def test_rate_limit_per_tool_keeps_tools_apart(
    shell: Tool[Any], read_file: Tool[Any]
) -> None:
    guard = RateLimitGuard(1, 60.0, clock=Clock())
    await guard(shell, command="a")
    assert await guard(read_file, path="x")


async def test_rate_limit_per_role_counts_across_tools(
    shell: Tool[Any], read_file: Tool[Any]
) -> None:
    guard = RateLimitGuard(1, 60.0, per="role", clock=Clock())
    with use_call(CallRecord("1", "shell", "lead/dev#1", {})):
        await guard(shell, command="a")
    with use_call(CallRecord("2", "read_file", "lead/dev#2", {})), pytest.raises(GuardError):
        await guard(read_file, path="x")
    with use_call(CallRecord("3", "read_file", "lead/tester#1", {})):
        assert await guard(read_file, path="x")


async def test_rate_limit_for_a_named_role(shell: Tool[Any]) -> None:
    guard = RateLimitGuard(1, 60.0, per="role", role="dev", clock=Clock())
    await guard(shell, command="a")
    with pytest.raises(GuardError, match="role 'dev'"):
        await guard(shell, command="b")


def test_rate_limit_needs_a_positive_rate() -> None:
    with pytest.raises(ValueError):
        RateLimitGuard(0, 1.0)


def test_role_of_strips_the_instance_number() -> None:
    assert [role_of(p) for p in ("lead", "lead/dev#2", "a/b#x", "")] == ["lead", "dev", "b#x", ""]


class Budget:
    def __init__(self) -> None:
        self.exceeded: str | None = None


async def test_budget_guard_denies_once_the_budget_is_spent(shell: Tool[Any]) -> None:
    budget = Budget()
    guard = BudgetGuard(budget)
    assert await guard(shell, command="a")
    budget.exceeded = "token budget of 100 is spent"
    with pytest.raises(GuardError) as caught:
        await guard(shell, command="a")
    assert (caught.value.rule, caught.value.reason) == (
        "budget",
        "budget spent: token budget of 100 is spent",
    )


async def test_budget_guard_uses_the_run_budget(shell: Tool[Any]) -> None:
    budget = Budget()
    budget.exceeded = "time is up"
    with use_scope(RunScope().child(budget=budget)), pytest.raises(GuardError, match="time is up"):
        await BudgetGuard()(shell, command="a")
    assert await BudgetGuard()(shell, command="a")

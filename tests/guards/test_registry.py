"""Guard factories by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest

from swarm.guards import (
    ApprovalGuard,
    AuditGuard,
    BudgetGuard,
    GuardContext,
    PathGuard,
    PermissionGuard,
    RateLimitGuard,
    ShellGuard,
    guard_names,
    load_policy,
    make_guard,
    register_guard,
)
from swarm.guards.registry import _FACTORIES
from swarm.tools import Tool


def test_built_in_guards_by_name(tmp_path: Path) -> None:
    context = GuardContext(workspace=tmp_path, role="dev")
    built = {
        "path": make_guard("path", context=context),
        "shell": make_guard("shell", {"deny": ["curl", {"program": "rm", "any_arg": "-r*"}]}),
        "rate_limit": make_guard(
            "rate_limit", {"calls": 3, "window": 60, "per": "role"}, context=context
        ),
        "budget": make_guard("budget"),
        "approval": make_guard("approval", {"reason": "ask me"}),
        "audit": make_guard("audit"),
    }
    kinds = [PathGuard, ShellGuard, RateLimitGuard, BudgetGuard, ApprovalGuard, AuditGuard]
    assert [type(g) for g in built.values()] == kinds
    assert isinstance(built["path"], PathGuard) and built["path"].root == tmp_path.resolve()
    assert isinstance(built["rate_limit"], RateLimitGuard) and built["rate_limit"].role == "dev"


def test_path_root_is_relative_to_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    guard = make_guard("path", {"root": "src"}, context=GuardContext(workspace=tmp_path))
    assert isinstance(guard, PathGuard) and guard.root == (tmp_path / "src").resolve()


def test_unknown_names_and_bad_options_are_errors() -> None:
    with pytest.raises(KeyError, match="unknown guard 'nope'"):
        make_guard("nope")
    with pytest.raises(pydantic.ValidationError):
        make_guard("rate_limit", {"calls": 1})
    with pytest.raises(ValueError, match="workspace"):
        make_guard("path")


class Quota(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    limit: int


class QuotaGuard(PermissionGuard):
    def __init__(self, limit: int) -> None:
        self.limit = limit

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return kwargs


def test_registered_guards_are_usable_in_policy_files(tmp_path: Path) -> None:
    register_guard("quota", lambda o, c: QuotaGuard(o.limit), options=Quota)
    try:
        assert "quota" in guard_names()
        with pytest.raises(ValueError, match="already registered"):
            register_guard("quota", lambda o, c: QuotaGuard(o.limit), options=Quota)
        (tmp_path / "p.yaml").write_text("guards:\n  - use: quota\n    with: {limit: 3}\n")
        (spec,) = load_policy(tmp_path / "p.yaml").guards
        assert spec.use == "quota" and spec.options == Quota(limit=3)
    finally:
        del _FACTORIES["quota"]

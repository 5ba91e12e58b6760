"""Checking a run against a scenario's ``expect``: each unmet expectation, in words."""

from __future__ import annotations

from swarm.scenario.runner import RunOutcome
from swarm.scenario.script import role_of
from swarm.scenario.spec import Expectations

__all__ = ["check_expectations"]


def check_expectations(expect: Expectations, outcome: RunOutcome) -> list[str]:
    """What the run did not meet (empty when it passes)."""
    failures: list[str] = []
    if expect.stop_reason is not None and outcome.stop_reason.value != expect.stop_reason:
        failures.append(
            f"stop_reason: expected {expect.stop_reason}, the run ended with"
            f" {outcome.stop_reason.value}"
        )
    for text in expect.final_contains:
        if text not in outcome.final_text:
            failures.append(f"final_contains: the final answer does not contain {text!r}")
    delegated = {role_of(path) for path in outcome.delegations}
    paths = set(outcome.delegations)
    for wanted in expect.delegations:
        if wanted not in delegated and not any(p.endswith(wanted) for p in paths):
            seen = ", ".join(sorted(delegated)) or "none"
            failures.append(f"delegations: '{wanted}' was never delegated to (delegated: {seen})")
    for denied in expect.denied:
        match = [
            (path, tool)
            for path, tool, _ in outcome.denied_calls
            if tool == denied.tool and (denied.role is None or role_of(path) == denied.role)
        ]
        if not match:
            who = f"{denied.role}'s " if denied.role else ""
            failures.append(f"denied: no call of {who}'{denied.tool}' was denied")
    root = outcome.workspace
    for name, contains in expect.files.items():
        target = root / name
        if not target.is_file():
            failures.append(f"files: '{name}' does not exist in the workspace")
        elif contains is not None and contains not in target.read_text(errors="replace"):
            failures.append(f"files: '{name}' does not contain {contains!r}")
    for name in expect.absent_files:
        if (root / name).exists():
            failures.append(f"absent_files: '{name}' exists in the workspace")
    if expect.max_tokens is not None and outcome.usage.total_tokens > expect.max_tokens:
        failures.append(
            f"max_tokens: the run used {outcome.usage.total_tokens:,} tokens,"
            f" more than {expect.max_tokens:,}"
        )
    if expect.compactions is not None and outcome.compactions < expect.compactions:
        failures.append(
            f"compactions: expected at least {expect.compactions}, saw {outcome.compactions}"
        )
    if expect.errors is not None and len(outcome.errors) != expect.errors:
        failures.append(
            f"errors: expected {expect.errors} error events, saw {len(outcome.errors)}"
            + (f" ({'; '.join(outcome.errors)})" if outcome.errors else "")
        )
    return failures

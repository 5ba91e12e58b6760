"""Checking a run against a scenario's ``expect``: each unmet expectation, in words."""

from __future__ import annotations

from swarm.record.outcome import RunOutcome
from swarm.scenario.output_checks import check_outputs
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
    failures += _delegations(expect, outcome)
    for denied in expect.denied:
        match = [
            (path, tool)
            for path, tool, _, rule in outcome.denied_calls
            if tool == denied.tool
            and (denied.role is None or role_of(path) == denied.role)
            and (denied.rule is None or rule == denied.rule)
        ]
        if not match:
            who = f"{denied.role}'s " if denied.role else ""
            by = f" by rule '{denied.rule}'" if denied.rule else ""
            failures.append(f"denied: no call of {who}'{denied.tool}' was denied{by}")
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
    failures += _errors(expect, outcome)
    if expect.outputs:
        entry = outcome.usage_tree.path if outcome.usage_tree is not None else ""
        failures += check_outputs(expect.outputs, outcome.outputs, entry, role_of)
    return failures


def _delegations(expect: Expectations, outcome: RunOutcome) -> list[str]:
    """Each wanted role (or path) with no delegation that finished and answered."""
    failures: list[str] = []
    completed = outcome.completed_delegations
    for wanted in expect.delegations:
        if any(_names(path, wanted) for path in completed):
            continue
        tried = [path for path in outcome.delegations if _names(path, wanted)]
        if tried:
            ends = ", ".join(
                f"{path}: {outcome.delegation_ends.get(path, 'stopped')}" for path in tried
            )
            failures.append(f"delegations: '{wanted}' was delegated to but never finished ({ends})")
        else:
            seen = ", ".join(sorted({role_of(p) for p in completed})) or "none"
            failures.append(f"delegations: '{wanted}' was never delegated to (finished: {seen})")
    return failures


def _names(path: str, wanted: str) -> bool:
    return role_of(path) == wanted or path.endswith(wanted)


def _errors(expect: Expectations, outcome: RunOutcome) -> list[str]:
    """The errors the scenario does not expect, and the expected ones that did not come."""
    errors = outcome.agent_errors
    expected = expect.errors
    if isinstance(expected, int):
        if len(errors) == expected:
            return []
        seen = "; ".join(_describe(path, message) for path, message in errors)
        return [
            f"errors: expected {expected} error{'s' if expected != 1 else ''}, saw {len(errors)}"
            + (f" ({seen})" if seen else "")
        ]
    if expected is None:
        entry_may_fail = expect.stop_reason in ("error", "budget", "cancelled")
        return [
            f"errors: {_describe(path, message)} (expect it with errors: [...])"
            for path, message in errors
            if path or not entry_may_fail
        ]
    failures = [
        f"errors: no error of the run contains {text!r}"
        for text in expected
        if not any(text in _line(path, message) for path, message in errors)
    ]
    failures += [
        f"errors: {_describe(path, message)}, which no entry of errors expects"
        for path, message in errors
        if not any(text in _line(path, message) for text in expected)
    ]
    return failures


def _line(path: str, message: str) -> str:
    """An error as ``errors`` entries are matched against: ``path: message``."""
    return f"{path}: {message}" if path else message


def _describe(path: str, message: str) -> str:
    who = f"the agent {path}" if path else "the entry agent"
    return f"{who} ended in an error: {message}"

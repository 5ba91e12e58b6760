"""``expect: outputs:``: conditions on the typed answers of a run's agents.

Each key of ``outputs`` names agents: a whole path (``lead/reviewer#2``), its tail
(``reviewer#2``), a role (``reviewer``: every agent of that role, and at least one), or
the entry role (its own answer). Its value maps JSON paths to conditions::

    expect:
      outputs:
        reviewer#1:
          $.verdict: approve               # equal to this value
          $.findings: {length: 2}
          $.findings[0].line: {gte: 1}
          $.findings[*].severity: {one_of: [low, high]}   # every item
          $.summary: {matches: "^LGTM"}

A JSON path is ``$`` followed by ``.key``, ``[index]`` or ``[*]`` steps. A condition is
a JSON value (equality) or a mapping of operators: ``equals``, ``one_of``, ``contains``
(a substring, a list item or a key), ``matches`` (a regular expression, searched),
``exists`` (true or false), ``length``, ``gt``, ``gte``, ``lt``, ``lte``, ``type``
(``string``, ``number``, ``integer``, ``boolean``, ``array``, ``object``, ``null``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "OPERATORS",
    "check_condition",
    "check_outputs",
    "condition_problems",
    "parse_json_path",
]

_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+|\*)\]|\[\"([^\"]*)\"\]|\['([^']*)'\]")
_MISSING = object()
_TYPES: Mapping[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}
OPERATORS = frozenset(
    {"equals", "one_of", "contains", "matches", "exists", "length"}
    | {"gt", "gte", "lt", "lte", "type"}
)
"""The operators a condition mapping may use."""


def parse_json_path(path: str) -> list[str | int | None]:
    """The steps of ``path`` (``$.a[0][*]`` → ``["a", 0, None]``; ``None`` is ``[*]``).

    Raises ``ValueError`` saying where the path cannot be read."""
    if not path.startswith("$"):
        raise ValueError(f"a JSON path starts with '$': {path!r}")
    steps: list[str | int | None] = []
    at = 1
    while at < len(path):
        step = _STEP.match(path, at)
        if step is None:
            raise ValueError(f"cannot read the JSON path {path!r} from {path[at:]!r}")
        key, index, dq, sq = step.groups()
        if index is not None:
            steps.append(None if index == "*" else int(index))
        else:
            steps.append(key if key is not None else (dq if dq is not None else sq))
        at = step.end()
    return steps


def _values(data: Any, steps: list[str | int | None]) -> list[Any]:
    """The values ``steps`` reach in ``data`` (``_MISSING`` where a step finds nothing)."""
    found = [data]
    for step in steps:
        reached: list[Any] = []
        for value in found:
            if step is None:
                reached.extend(value if isinstance(value, list) else [_MISSING])
            elif isinstance(step, int):
                ok = isinstance(value, list) and step < len(value)
                reached.append(value[step] if ok else _MISSING)
            else:
                ok = isinstance(value, dict) and step in value
                reached.append(value[step] if ok else _MISSING)
        found = reached
    return found


def check_condition(value: Any, condition: Any) -> str | None:
    """Why ``value`` (``_MISSING``: not there) fails ``condition``, or ``None``."""
    if not isinstance(condition, dict):
        condition = {"equals": condition}
    for op, want in condition.items():
        problem = _check(op, value, want)
        if problem is not None:
            return problem
    return None


def _check(op: str, value: Any, want: Any) -> str | None:
    if op == "exists":
        there = value is not _MISSING
        return None if there == bool(want) else ("is missing" if want else "exists")
    if value is _MISSING:
        return "is missing"
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    ok: bool
    if op == "equals":
        ok = value == want
    elif op == "one_of":
        ok = value in want
    elif op == "contains":
        ok = isinstance(value, str | list | dict) and want in value
    elif op == "matches":
        ok = isinstance(value, str) and re.search(str(want), value) is not None
    elif op == "length":
        ok = isinstance(value, str | list | dict) and len(value) == want
        if isinstance(value, str | list | dict):
            shown = f"of length {len(value)}"
    elif op == "type":
        ok = _TYPES[str(want)](value)
    else:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if op == "gt":
            ok = number and value > want
        elif op == "gte":
            ok = number and value >= want
        elif op == "lt":
            ok = number and value < want
        else:
            ok = number and value <= want
    return None if ok else f"is {shown}, expected {op} {want!r}"


def condition_problems(conditions: Mapping[str, Any]) -> list[str]:
    """What is wrong with a mapping of JSON paths to conditions (for the scenario file)."""
    problems: list[str] = []
    for path, condition in conditions.items():
        try:
            parse_json_path(path)
        except ValueError as exc:
            problems.append(str(exc))
        if isinstance(condition, dict):
            unknown = sorted(set(condition) - OPERATORS)
            if unknown:
                problems.append(
                    f"{path}: unknown operator {', '.join(map(repr, unknown))} (operators:"
                    f" {', '.join(sorted(OPERATORS))}; compare to an object with 'equals')"
                )
            kind = condition.get("type")
            if kind is not None and kind not in _TYPES:
                problems.append(f"{path}: unknown type {kind!r} (types: {', '.join(_TYPES)})")
    return problems


def check_outputs(
    wanted: Mapping[str, Mapping[str, Any]],
    outputs: Mapping[str, Any],
    entry: str,
    role_of: Callable[[str], str],
) -> list[str]:
    """Each unmet condition on the typed answers ``outputs`` (agent path → answer; the
    entry agent's under its own name ``entry``), in words."""
    failures: list[str] = []
    for who, conditions in wanted.items():
        paths = [
            p
            for p in outputs
            if p == who or p.endswith("/" + who) or role_of(p) == who or (p == entry == who)
        ]
        if not paths:
            seen = ", ".join(sorted(outputs)) or "none"
            failures.append(f"outputs: no typed answer from '{who}' (answers from: {seen})")
            continue
        for path in paths:
            for json_path, condition in conditions.items():
                for value in _values(outputs[path], parse_json_path(json_path)):
                    problem = check_condition(value, condition)
                    if problem is not None:
                        failures.append(f"outputs: {path} {json_path} {problem}")
                        break
    return failures

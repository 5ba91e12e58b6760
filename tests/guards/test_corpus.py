"""The shipped default policy on two corpora of shell commands (``corpus/``): ordinary
developer commands it must allow, and hostile ones it must deny under the expected rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.guards import load_policy
from swarm.guards.rules import UNPARSEABLE, Unjudgeable

CORPUS = Path(__file__).with_name("corpus")
POLICY = load_policy("default")


def entries(name: str) -> list[tuple[str, str]]:
    """(expected, command) for each command of a corpus file; expected is ``allow`` or a
    rule id."""
    found = []
    for line in (CORPUS / name).read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if name == "benign.txt":
            expected = "allow" if len(fields) == 1 else fields[1]
        else:
            expected = fields[0]
        found.append((expected, fields[-1].replace("␤", "\n")))
    return found


def verdict(command: str) -> str:
    """``allow``, or the id of the rule the default policy denies ``command`` under."""
    try:
        decision = POLICY.decide("shell", {"command": command})
    except Unjudgeable:
        return UNPARSEABLE
    if decision.action == "allow":
        return "allow"
    return decision.rule.id if decision.rule is not None else "default"


BENIGN = entries("benign.txt")
DENIED = entries("denied.txt")


def test_the_corpora_are_big_enough() -> None:
    assert len(BENIGN) >= 120
    assert len(DENIED) >= 150
    exceptions = [c for expected, c in BENIGN if expected != "allow"]
    assert len(exceptions) <= len(BENIGN) // 20  # at most 5% of ordinary commands denied


@pytest.mark.parametrize(("expected", "command"), BENIGN, ids=[c for _, c in BENIGN])
def test_ordinary_commands_are_allowed(expected: str, command: str) -> None:
    assert verdict(command) == expected


@pytest.mark.parametrize(("expected", "command"), DENIED, ids=[c for _, c in DENIED])
def test_hostile_commands_are_denied_under_their_rule(expected: str, command: str) -> None:
    assert verdict(command) == expected

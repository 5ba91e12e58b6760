"""The implicit orchestrator: the entry of a team in which no role delegates.

A Claude Code agents directory has no orchestrator of its own: Claude's main session is
one, choosing a sub-agent by its description. ``Team`` does the same for a directory of two
or more roles where none declares ``delegates`` and no entry is chosen: it adds the role
``main`` (``main-2``... when that name is taken), which delegates to every role, has no
tools of its own, and runs under the run's model, policy and audit log like any role.
"""

from __future__ import annotations

from collections.abc import Mapping

from swarm.team.spec import AgentSpec

__all__ = ["IMPLICIT_NAME", "IMPLICIT_SYSTEM", "implicit_orchestrator", "needs_orchestrator"]

IMPLICIT_NAME = "main"
IMPLICIT_SYSTEM = (
    "You lead a team of agents; each one is a tool you can call, and its description says"
    " what it is for. You do not do the work yourself. For each task, choose the agent (or"
    " agents, one after another) whose description fits it best, and give it the whole"
    " task: what to do, the context it needs, and what to report back. When the agents"
    " have answered, reply with what was done and what they found. If no agent fits, say"
    " so instead of guessing."
)


def needs_orchestrator(specs: Mapping[str, AgentSpec], entry: str | None) -> bool:
    """Whether a team of ``specs`` gets the implicit orchestrator: no entry chosen, two or
    more roles, and not one of them delegates."""
    return entry is None and len(specs) >= 2 and not any(s.delegates for s in specs.values())


def implicit_orchestrator(specs: Mapping[str, AgentSpec]) -> AgentSpec:
    """The implicit orchestrator of ``specs``: delegates to every role, by name order."""
    name, number = IMPLICIT_NAME, 2
    while name in specs:
        name, number = f"{IMPLICIT_NAME}-{number}", number + 1
    return AgentSpec(
        name=name,
        description="The implicit orchestrator: delegates each task to the fitting role.",
        system=IMPLICIT_SYSTEM,
        delegates=tuple(sorted(specs)),
    )

"""Small pieces of the text swarm prints: counts with the right plural, costs that say
when they are not known. Used by the command and by the reports the library renders."""

from __future__ import annotations

__all__ = ["cost_text", "plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 role``, ``2 roles``, ``0 roles``: the count and the noun in the form it takes;
    ``many`` is the plural when adding ``s`` is wrong (``1 entry``/``2 entries``)."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {many or noun + 's'}"


def cost_text(cost: float | None, *, failed: bool = False) -> str:
    """A cost in dollars (``$0.0123``), or ``cost unknown`` when the model's prices are
    not known or the run failed before its usage could be counted (never ``$0.0000`` for
    a run that says nothing of what it cost)."""
    if cost is None or (failed and cost == 0):
        return "cost unknown"
    return f"${cost:.4f}"

"""ScriptedModel: a transport that plays each role's scripted turns, for offline runs.

Each role has a queue of turns; every model call made by an agent of that role (found from
the run scope's path, ``orchestrator/developer#2`` → ``developer``) takes the next one.
Instances of one role share the queue, in the order they ask, unless the script gives an
instance its own turns: a key ``developer#2`` is the queue of the agents whose path ends in
``developer#2`` (the caller's second delegation to ``developer``), and wins over the
``developer`` key for them, so a parallel fan-out plays the same way every time. Usage is
estimated from the size of what was sent and said (about four characters a token), so token
budgets and compaction behave as they would with a real model. A compaction request (the
summariser's system prompt) is answered with the script's ``summary`` or a short digest of
the transcript.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from swarm.context.compaction import DEFAULT_SUMMARY_PROMPT
from swarm.errors import TransportError
from swarm.events import IterationEnd, StreamEvent, TextDelta, ToolInputDelta, ToolUseStart
from swarm.messages import Message, block_to_dict
from swarm.scenario.spec import ScriptTurn
from swarm.scope import current_scope, role_of
from swarm.tools import Tool
from swarm.types import StopReason, Usage

__all__ = [
    "PlaysScript",
    "ScriptedModel",
    "estimate_tokens",
    "role_of",
    "script_key",
    "turn_call_id",
]

CHARS_PER_TOKEN = 4


def script_key(path: str, keys: Collection[str]) -> str:
    """The script queue of the agent at ``path``: its instance (``developer#2``) when
    ``keys`` has one for it, else its role."""
    instance = path.rsplit("/", 1)[-1]
    return instance if instance in keys else role_of(path)


def estimate_tokens(messages: Sequence[Message], tools: Sequence[Tool[Any]], system: str) -> int:
    """About how many tokens a request holds (four characters a token)."""
    size = len(system)
    for message in messages:
        size += len(json.dumps([block_to_dict(b) for b in message.content]))
    for tool in tools:
        size += len(tool.name) + len(tool.description) + len(json.dumps(tool.input_schema))
    return max(1, size // CHARS_PER_TOKEN)


@runtime_checkable
class PlaysScript(Protocol):
    """A transport that plays a script of turns (``ScriptedModel``, or a user's own) and
    lets a run record keep its place in it, so a resumed run goes on from the next turn.

    ``used[key]`` counts the turns of each script key handed out (the record writes it as
    ``script_used``); ``on_turn(key, index, calls)``, set by the record, is called as turn
    ``index`` (making ``calls`` calls) is handed out; ``replay[key]`` lists turns to hand
    out again first (turns a crash lost before they were stored, found by their calls'
    ids, which ``turn_call_id`` names). A transport without these
    attributes is not followed: its turns are not journaled and a resume asks it afresh.
    """

    used: dict[str, int]
    replay: dict[str, list[int]]
    on_turn: Callable[[str, int, int], None] | None


class ScriptedModel:
    """Plays ``turns[role]`` in order (``turns["role#n"]`` for that instance when given).
    Raises ``TransportError`` when a role's script has no turn left, naming the role and
    how many turns it had. ``on_turn(role, index, calls)``, when set, is called as each
    turn is handed out (a run record journals it, so a resumed run goes on from the next
    turn; ``role`` is the script key, an instance's when it has one); ``replay[role]``
    lists turns to hand out again first (turns a crash lost before they were stored). Call
    ids name the turn (``turn_call_id``: ``call_developer_2_1``), so they stay unique when
    a run resumes."""

    model = "scripted"
    context_window = 128_000

    def __init__(
        self,
        turns: Mapping[str, Sequence[ScriptTurn]],
        *,
        summary: str | None = None,
        context_window: int | None = None,
    ) -> None:
        self.turns = {role: list(script) for role, script in turns.items()}
        self.used = {role: 0 for role in turns}
        self.summary = summary
        if context_window is not None:
            self.context_window = context_window
        self.on_turn: Callable[[str, int, int], None] | None = None
        self.replay: dict[str, list[int]] = {}

    def copy(self, **overrides: Any) -> ScriptedModel:
        """The same script (scripted runs ignore per-role models)."""
        return self

    @property
    def exhausted(self) -> bool:
        """True when every role's script was played to its end."""
        return all(self.used[role] >= len(script) for role, script in self.turns.items())

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        input_tokens = estimate_tokens(messages, tools, system)
        if system == DEFAULT_SUMMARY_PROMPT or system.startswith("You are a conversation summar"):
            text = self.summary or _digest(messages)
            yield TextDelta(0, text)
            yield IterationEnd(1, StopReason.end_turn, Usage(input_tokens, _tokens(text)))
            return
        path = current_scope().path
        role = script_key(path, self.turns) or "agent"
        script = self.turns.get(role)
        if script is None:
            known = ", ".join(sorted(self.turns)) or "none"
            instance = path.rsplit("/", 1)[-1]
            also = f" nor for its instance '{instance}'" if "#" in instance else ""
            raise TransportError(
                f"the script has no turns for role '{role}'{also} (scripted: {known})"
            )
        replay = self.replay.get(role)
        number = replay.pop(0) if replay else self.used[role]
        if number >= len(script):
            raise TransportError(
                f"the script for role '{role}' has {len(script)} turns and the agent asked"
                f" for turn {number + 1}"
            )
        if not replay:
            self.used[role] = number + 1
        turn = script[number]
        if self.on_turn is not None:
            self.on_turn(role, number, len(turn.all_calls))
        output = 0
        index = 0
        if turn.text:
            yield TextDelta(index, turn.text)
            output += _tokens(turn.text)
            index += 1
        for k, call in enumerate(turn.all_calls, start=1):
            # unique in a run, also across resumes: the turn names it
            call_id = turn_call_id(role, number, k)
            arguments = json.dumps(call.args)
            yield ToolUseStart(index, call_id, call.tool)
            yield ToolInputDelta(index, call_id, arguments)
            output += _tokens(call.tool + arguments)
            index += 1
        stop = StopReason.tool_use if turn.all_calls else StopReason(turn.stop)
        yield IterationEnd(1, stop, Usage(input_tokens, output))


def turn_call_id(role: str, turn: int, number: int) -> str:
    """The id of call ``number`` (from 1) of turn ``turn`` (from 0) of ``role``'s script.

    ``role`` is a script key: a role (``call_developer_2_1``) or an instance
    (``developer#2`` → ``call-developer-2_2_1``). The two forms differ in their fifth
    character, so no role name makes one equal the other; providers accept only
    ``[A-Za-z0-9_-]`` in ids, so ``#`` is not kept."""
    name, sep, instance = role.partition("#")
    if sep:
        return f"call-{name}-{instance}_{turn + 1}_{number}"
    return f"call_{role}_{turn + 1}_{number}"


def _tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def _digest(messages: Sequence[Message]) -> str:
    request = messages[-1].text if messages else ""
    lines = [line.strip() for line in request.splitlines() if line.strip()]
    head = " / ".join(lines[:6])
    return f"Summary (scripted): {head[:600]}"

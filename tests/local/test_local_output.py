"""Typed answers from the real small model: llama.cpp's JSON Schema grammar keeps
SmolLM2-135M to the role's ``output`` schema (the structured output mode of the
OpenAI-compatible transport)."""

from __future__ import annotations

import anyio
import pytest

from swarm import Agent, MemoryContextStore, SessionEndEvent, StopReason
from swarm.local import LocalServer

pytestmark = [pytest.mark.local_model, pytest.mark.anyio]

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "sunny": {"type": "boolean"},
        "degrees": {"type": "integer"},
    },
    "required": ["city", "sunny", "degrees"],
}
CITIES = ["Oslo", "Lima", "Cairo", "Perth", "Quito", "Riga", "Seoul", "Dakar", "Hanoi", "Bern"]


async def test_smollm2_answers_the_output_schema_at_least_nine_runs_in_ten(
    server: LocalServer,
) -> None:
    transport = server.openai_transport(max_tokens=120)
    ends: list[SessionEndEvent] = []
    try:
        for city in CITIES:
            agent = Agent(
                "You report the weather as JSON.", transport, output=SCHEMA, output_retries=0
            )
            with anyio.fail_after(120):  # a hang guard, not a timing assertion
                async with agent.run_stream(
                    f"What is the weather in {city}?", MemoryContextStore()
                ) as stream:
                    ends.append(await stream.get_session_end())
    finally:
        await transport.aclose()
    valid = [e for e in ends if e.stop_reason == StopReason.end_turn]
    assert len(valid) >= 9, [str(e.error) for e in ends if e not in valid]
    for end in valid:  # each accepted answer is the schema's data, not free text
        assert set(end.output) == {"city", "sunny", "degrees"}
        assert isinstance(end.output["sunny"], bool) and isinstance(end.output["degrees"], int)

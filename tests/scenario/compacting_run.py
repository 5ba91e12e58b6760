"""A scenario run as its own process by the kill tests, stopped for good in a compaction.

``python compacting_run.py SCENARIO RUNS_DIR WORKSPACE``: runs the scenario's script, but
the summariser's call prints ``COMPACTING`` and never returns, so the test can kill the
process while a compaction is under way.
"""

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from swarm.context.compaction import DEFAULT_SUMMARY_PROMPT
from swarm.events import StreamEvent
from swarm.messages import Message
from swarm.scenario import ScriptedModel, load_scenario, run_scenario
from swarm.scenario.spec import Script
from swarm.tools import Tool


class StuckSummariser(ScriptedModel):
    """The scenario's script, with a summariser that never answers."""

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        if system == DEFAULT_SUMMARY_PROMPT:
            print("COMPACTING", flush=True)
            await anyio.sleep_forever()
        async for event in super().stream(messages, tools, system):
            yield event


async def main() -> None:
    scenario = load_scenario(sys.argv[1])
    assert isinstance(scenario.model, Script)
    model = StuckSummariser(scenario.model.script)
    await run_scenario(
        scenario, model=model, runs_dir=Path(sys.argv[2]), workspace=Path(sys.argv[3])
    )


anyio.run(main)

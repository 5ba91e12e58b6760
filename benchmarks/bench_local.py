"""Framework overhead against a real model (not part of the test run).

    python benchmarks/bench_local.py     (needs: pip install -e '.[local]' && swarm local install)

An agent runs a 10-turn tool loop against SmolLM2-135M on llama.cpp's server (every turn
is a forced tool call, so each iteration is a model call, a tool call and a result). The
server reports its own prompt and generation time for each call (``timings`` in the last
chunk of the stream); the same ten requests are sent again straight with httpx to read
them. Overhead = the agent's wall time minus the server's reported time.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import anyio
import httpx

from swarm import Agent, MemoryContextStore, Tool
from swarm.local import LocalServer

TURNS = 10


async def lookup(key: str) -> str:
    """Look up a key."""
    return f"{key} = 42"


async def server_time(base_url: str, bodies: list[dict[str, Any]]) -> float:
    """The server's own prompt + generation time for these requests, in seconds."""
    total = 0.0
    for body in bodies:
        # a fresh connection each time: the server drops idle keep-alive connections
        async with (
            httpx.AsyncClient(timeout=120) as client,
            client.stream("POST", base_url + "/v1/chat/completions", json=body) as response,
        ):
            timings = None
            async for line in response.aiter_lines():
                if line.startswith("data: {") and '"timings"' in line:
                    timings = json.loads(line[6:])["timings"]
            assert timings is not None, "the server reported no timings"
            total += (timings["prompt_ms"] + timings["predicted_ms"]) / 1000
    return total


async def one_round(server: LocalServer) -> tuple[float, float]:
    bodies: list[dict[str, Any]] = []

    async def capture(request: httpx.Request) -> None:
        bodies.append(json.loads(request.content))

    client = httpx.AsyncClient(event_hooks={"request": [capture]}, timeout=120)
    transport = server.openai_transport(
        client=client, tool_choice="required", prefill="<tool_call>\n", max_tokens=60
    )
    agent = Agent("Look things up.", transport, [Tool("lookup", lookup)], max_iterations=TURNS)
    started = time.perf_counter()
    async with agent.run_stream("Look up alpha.", MemoryContextStore()) as stream:
        async for _ in stream:
            pass
    wall = time.perf_counter() - started
    await client.aclose()
    unique = [b for i, b in enumerate(bodies) if i == 0 or b != bodies[i - 1]]  # retries
    assert len(unique) == TURNS, len(unique)
    return wall, await server_time(server.base_url, unique)


async def main() -> None:
    async with LocalServer() as server:
        await one_round(server)  # warm up
        rounds = [await one_round(server) for _ in range(3)]
    walls = [w for w, _ in rounds]
    servers = [s for _, s in rounds]
    overheads = [w - s for w, s in rounds]
    print(
        f"{TURNS}-turn tool loop against SmolLM2-135M (llama.cpp, 1 thread):"
        f" wall {statistics.median(walls):.2f} s, server-reported time"
        f" {statistics.median(servers):.2f} s, framework overhead"
        f" {statistics.median(overheads) * 1000:.0f} ms"
        f" ({statistics.median(overheads) / TURNS * 1000:.1f} ms per turn: HTTP, SSE parsing,"
        " the loop, the tool)"
    )


if __name__ == "__main__":
    anyio.run(main)

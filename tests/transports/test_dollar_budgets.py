"""Dollar budgets: per-agent and per-subtree dollars that add up, and a ``budget.usd`` on
a middle agent that stops its subtree before the request that would cross it. The model
is a fake OpenAI-dialect provider on 127.0.0.1 that counts the requests it gets."""

import json
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, BudgetLimits, MemoryContextStore, StopReason, Team, run_team
from swarm.events import SessionEndEvent, SubAgentEvent
from swarm.transports import OpenAITransport

from .server import LLMServer, Received, Reply

PROMPT, COMPLETION = 400, 200
# the team's prices (team.yaml): $1 per million input tokens, $10 per million output
CALL_COST = (PROMPT * 1.0 + COMPLETION * 10.0) / 1_000_000  # $0.0024 a request


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "model": "house-model"}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return f"data: {json.dumps(body)}\n\n"


def reply(*, text: str = "", call: tuple[str, str] | None = None) -> Reply:
    out = chunk({"role": "assistant", "content": text})
    if call is not None:
        name, task = call
        arguments = json.dumps({"task": task})
        piece = {"index": 0, "id": f"call_{task}", "function": {"name": name, "arguments": ""}}
        out += chunk({"tool_calls": [{**piece, "type": "function"}]})
        out += chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})
    out += chunk({}, "tool_calls" if call else "stop")
    usage = {"prompt_tokens": PROMPT, "completion_tokens": COMPLETION}
    out += "data: " + json.dumps({"id": "chatcmpl-x", "choices": [], "usage": usage}) + "\n\n"
    return Reply.sse(out + "data: [DONE]\n\n")


def role_of(received: Received) -> str:
    system = received.body["messages"][0]["content"]
    return system.split()[2].rstrip(".")  # "You are <role>."


def results(received: Received) -> int:
    return sum(1 for m in received.body["messages"] if m["role"] == "tool")


def respond(received: Received) -> Reply:
    """lead: delegate to the manager, then answer; manager: delegate to the worker twice,
    then answer; worker: answer."""
    role, done = role_of(received), results(received)
    if role == "lead":
        return reply(call=("manager", "plan")) if done == 0 else reply(text="Lead done.")
    if role == "manager":
        tasks = ["part-one", "part-two"]
        return reply(call=("worker", tasks[done])) if done < 2 else reply(text="Manager done.")
    return reply(text="Worker done.")


def write_team(directory: Path, manager_budget: str) -> Team:
    directory.mkdir()
    (directory / "team.yaml").write_text(
        "models:\n  house-model: {input: 1.0, output: 10.0}\n", encoding="utf-8"
    )
    roles = {
        "lead": "delegates: [manager]",
        "manager": f"delegates: [worker]\n{manager_budget}",
        "worker": "",
    }
    for name, extra in roles.items():
        text = f"description: The {name}.\nsystem: You are {name}.\n{extra}\n"
        (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    return Team.load(directory, entry="lead")


async def run(team: Team, server: LLMServer) -> SessionEndEvent:
    transport = OpenAITransport(
        "house-model", base_url=server.url + "/v1", api_key="", max_tokens=1000
    )
    async with transport, run_team(team, "Do the job.", transport=transport) as stream:
        return await stream.get_session_end()


@pytest.mark.anyio
async def test_per_agent_and_subtree_dollars_add_up(tmp_path: Path) -> None:
    team = write_team(tmp_path / "team", "")
    with LLMServer(responder=respond) as server:
        end = await run(team, server)
    assert end.stop_reason == StopReason.end_turn
    assert len(server.requests) == 2 + 3 + 2  # lead, manager, two workers
    tree = end.usage_tree
    assert tree is not None
    manager = tree.children[0]
    workers = manager.children
    assert [w.cost_usd for w in workers] == [pytest.approx(CALL_COST)] * 2
    assert manager.cost_usd == pytest.approx(3 * CALL_COST)
    assert manager.total_cost_usd == pytest.approx(
        manager.cost_usd + sum(w.total_cost_usd or 0 for w in workers)
    )
    assert tree.cost_usd == pytest.approx(2 * CALL_COST)
    assert tree.total_cost_usd == pytest.approx(tree.cost_usd + manager.total_cost_usd)
    assert end.cost_usd == pytest.approx(7 * CALL_COST)
    assert "subtree $0.0120" in tree.render(cost=True)  # the manager's line: 5 calls


@pytest.mark.anyio
async def test_a_dollar_budget_on_a_middle_agent_stops_its_subtree_before_crossing(
    tmp_path: Path,
) -> None:
    # Each request holds its worst case first: its input (~100 tokens) at $1/M plus
    # max_tokens=1000 at $10/M, about $0.0101. After the manager's first call, the first
    # worker's and the manager's second ($0.0072 spent), the second worker's request
    # would need about $0.0173 of the $0.016: it is never sent.
    team = write_team(tmp_path / "team", "budget: {usd: 0.016}")
    with LLMServer(responder=respond) as server:
        events: list[Any] = []
        transport = OpenAITransport(
            "house-model", base_url=server.url + "/v1", api_key="", max_tokens=1000
        )
        async with transport, run_team(team, "Do the job.", transport=transport) as stream:
            events = [event async for event in stream]
    sent = [role_of(r) for r in server.requests]
    assert sent == ["lead", "manager", "worker", "manager", "lead"]
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert end.stop_reason == StopReason.end_turn  # the lead is outside the budget: it goes on
    tree = end.usage_tree
    assert tree is not None
    manager = tree.children[0]
    assert manager.stop_reason == StopReason.budget
    assert [w.stop_reason for w in manager.children] == [StopReason.end_turn, StopReason.budget]
    assert manager.total_cost_usd == pytest.approx(3 * CALL_COST)  # within its $0.016
    # the refused worker says which budget and by how much
    ends = [
        e.event
        for e in events
        if isinstance(e, SubAgentEvent) and isinstance(e.event, SessionEndEvent)
    ]
    refused = [e for e in ends if e.error is not None and "dollar budget" in str(e.error)]
    assert refused, ends
    message = str(refused[0].error)
    assert "dollar budget of $0.016 for 'lead/manager#1' would be exceeded by $0.00" in message


@pytest.mark.anyio
async def test_an_agent_dollar_budget_holds_the_worst_case_before_each_request() -> None:
    with LLMServer(responder=lambda r: reply(text="Hello.")) as server:
        transport = OpenAITransport("gpt-4.1", base_url=server.url + "/v1", api_key="")
        # gpt-4.1 lists at $8/M output: 32,768 tokens of output may cost $0.262
        agent = Agent("Greet.", transport, budget=BudgetLimits(usd=0.25))
        async with transport, agent.run_stream("Hi", MemoryContextStore()) as stream:
            end = await stream.get_session_end()
        assert server.requests == []  # refused before it was sent
    assert end.stop_reason == StopReason.budget
    assert "dollar budget of $0.25 for 'agent' would be exceeded" in str(end.error)


@pytest.mark.anyio
async def test_an_unpriced_model_under_a_dollar_budget_is_an_error_at_start() -> None:
    with LLMServer(responder=lambda r: reply(text="Hello.")) as server:
        transport = OpenAITransport("house-model", base_url=server.url + "/v1", api_key="")
        agent = Agent("Greet.", transport, budget=BudgetLimits(usd=1.0))
        async with transport, agent.run_stream("Hi", MemoryContextStore()) as stream:
            end = await stream.get_session_end()
        assert server.requests == []
    assert end.stop_reason == StopReason.error
    assert "model 'house-model' of 'agent' has no price" in str(end.error)

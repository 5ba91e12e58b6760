"""The terminal's answers to approval requests: allow once, allow for the run, deny with
a reason, edit the arguments; several requests waiting at once."""

from __future__ import annotations

import io
import sys
from typing import Any

import anyio
import pytest

from swarm.cli.prompt import TerminalPrompt
from swarm.scope import ApprovalDecision, ApprovalRequest


def _request(path: str = "boss/lead#1/worker#1", command: str = "make") -> ApprovalRequest:
    return ApprovalRequest(
        tool="shell",
        arguments={"command": command},
        path=path,
        call_id=f"c-{path}-{command}",
        reason="a person must agree",
        guard="policy:careful",
    )


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Any:
    def typed(text: str) -> io.StringIO:
        shown = io.StringIO()
        monkeypatch.setattr(sys, "stderr", shown)
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        return shown

    return typed


def test_deny_with_a_reason_gives_the_model_that_reason(terminal: Any) -> None:
    terminal("n not on a Friday\n")
    decision = anyio.run(TerminalPrompt().approve, _request())
    assert not decision.approved
    assert decision.reason == "not on a Friday"
    assert decision.via == "terminal" and decision.who


def test_edit_gives_new_arguments_and_bad_json_is_asked_again(terminal: Any) -> None:
    shown = terminal('e {"command": oops}\ne {"command": "make test"}\n')
    decision = anyio.run(TerminalPrompt().approve, _request())
    assert decision.approved
    assert decision.arguments == {"command": "make test"}
    assert "the new arguments are not JSON" in shown.getvalue()


def test_allow_for_the_run_answers_that_agents_later_calls_of_the_tool(terminal: Any) -> None:
    shown = terminal("a\nn\n")
    prompt = TerminalPrompt()

    async def three() -> list[ApprovalDecision]:
        first = await prompt.approve(_request(command="make"))
        again = await prompt.approve(_request(command="make test"))  # not asked
        other = await prompt.approve(_request(path="boss/lead#1/worker#2"))  # asked: "n"
        return [first, again, other]

    first, again, other = anyio.run(three)
    assert first.approved and again.approved and not other.approved
    assert "for the rest of the run" in again.reason
    assert shown.getvalue().count("allow? [y/a/e/N]") == 2


def test_each_question_says_how_many_more_wait(terminal: Any) -> None:
    shown = terminal("y\ny\ny\n")
    prompt = TerminalPrompt()
    answers: list[bool] = []

    async def several() -> None:
        async def one(n: int) -> None:
            decision = await prompt.approve(_request(path=f"boss/worker#{n}"))
            answers.append(decision.approved)

        async with anyio.create_task_group() as group:
            for n in range(3):
                group.start_soon(one, n)

    anyio.run(several)
    assert answers == [True, True, True]
    assert "(2 more requests wait)" in shown.getvalue()
    assert "(1 more request waits)" in shown.getvalue()

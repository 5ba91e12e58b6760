from swarm import Message, TextBlock, ToolResultBlock, ToolUseBlock
from swarm.testing import history_problems

USE = Message("assistant", [ToolUseBlock("c1", "t", {})])
RESULT = Message("user", [ToolResultBlock("c1", "ok")])


def test_a_valid_history_has_no_problems() -> None:
    assert history_problems([Message.user("go"), USE, RESULT, Message.assistant("done")]) == []


def test_an_unanswered_tool_use_is_a_problem() -> None:
    assert history_problems([Message.user("go"), USE]) == [
        "the tool uses of message 1 are not all answered next"
    ]


def test_a_result_for_no_call_is_a_problem() -> None:
    assert history_problems([Message.user("go"), Message.assistant("hi"), RESULT]) == [
        "message 2 has results for calls the message before did not make"
    ]


def test_two_messages_of_one_role_in_a_row() -> None:
    history = [Message.user("a"), Message("user", [TextBlock("b")])]
    assert history_problems(history) == ["messages 0 and 1 are both user"]
    assert history_problems(history, alternating=False) == []

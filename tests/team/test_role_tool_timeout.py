"""``tool_timeout`` and ``max_result_chars`` in role files reach the role's agent."""

from collections.abc import Callable
from pathlib import Path

import pytest

from swarm import DEFAULT_TOOL_TIMEOUT, ConfigError
from swarm.team import MultiFormatLoader

WriteRole = Callable[[str, str], Path]


def test_a_role_file_sets_its_tool_timeout_and_result_limit(write_role: WriteRole) -> None:
    path = write_role("builder.yaml", "system: x\ntool_timeout: 45\nmax_result_chars: 5000\n")
    agent = MultiFormatLoader().load_file(path).to_agent()
    assert (agent.tool_timeout, agent.max_result_chars) == (45, 5000)


def test_a_role_without_tool_timeout_gets_the_ten_minute_default(write_role: WriteRole) -> None:
    agent = MultiFormatLoader().load_file(write_role("a.yaml", "system: x\n")).to_agent()
    assert agent.tool_timeout == DEFAULT_TOOL_TIMEOUT == 600


def test_a_zero_tool_timeout_names_file_line_and_field(write_role: WriteRole) -> None:
    path = write_role("a.yaml", "system: x\ntool_timeout: 0\n")
    with pytest.raises(ConfigError) as caught:
        MultiFormatLoader().load_file(path)
    assert (caught.value.line, caught.value.field) == (2, "tool_timeout")

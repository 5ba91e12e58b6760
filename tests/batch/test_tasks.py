from pathlib import Path

import pytest

from swarm.batch import load_tasks
from swarm.errors import ConfigError


def test_a_task_file_gives_ids_seed_files_and_expectations(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        '{"id": "a", "task": "do a", "files": {"x.txt": "1"},'
        ' "expect": {"stop_reason": "end_turn"}}\n'
        "\n"
        '{"task": "do b"}\n'
    )
    first, second = load_tasks(path)
    assert (first.id, first.task, first.files) == ("a", "do a", {"x.txt": "1"})
    assert first.expect is not None and first.expect.stop_reason == "end_turn"
    assert (second.id, second.task) == ("line-3", "do b")


def test_a_bad_line_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"task": "ok"}\n{"task": "x", "expect": {"stop_reason": "done"}}\n')
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    assert caught.value.line == 2
    assert caught.value.field == "expect.stop_reason"
    assert str(caught.value).startswith(f"{path}:2:")


def test_a_line_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"task": "ok"}\n{"task": \n')
    with pytest.raises(ConfigError, match="not a JSON object") as caught:
        load_tasks(path)
    assert caught.value.line == 2


def test_two_tasks_with_one_id_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a", "task": "x"}\n{"id": "a", "task": "y"}\n')
    with pytest.raises(ConfigError, match="also on line 1") as caught:
        load_tasks(path)
    assert (caught.value.line, caught.value.field) == (2, "id")

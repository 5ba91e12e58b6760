"""``swarm validate`` checks each role's ``output:`` schema and names file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_swarm_validate_reports_a_bad_schema_with_file_and_line(tmp_path: Path, swarm: Any) -> None:
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "lead.yaml").write_text("system: s\ndelegates: [reviewer]\n")
    (roles / "reviewer.yaml").write_text(
        "system: s\noutput:\n  type: object\n  required: verdict\n"
    )
    done = swarm("validate", roles)
    assert done.returncode == 2
    assert f"{roles / 'reviewer.yaml'}:4: field 'output.required'" in done.stderr
    assert "Traceback" not in done.stderr

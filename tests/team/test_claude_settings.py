"""A Claude Code project's ``.claude/settings.json`` and ``settings.local.json`` loaded
with its roles: what each ``permissions`` entry becomes, the precedence of the two files,
the modes, and what does not map (said once, with file and line)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from swarm.errors import ConfigError, GuardError
from swarm.scope import ApprovalRequest, RunScope, use_scope
from swarm.team import Team
from swarm.team.claude_settings import project_settings
from swarm.toolbox import make_toolbox

PROJECTS = Path(__file__).parent / "corpus" / "projects"

AGENT = "---\nname: worker\ndescription: Works.\n{front}---\nWork.\n"


def _project(
    tmp_path: Path,
    settings: Any,
    local: Any = None,
    front: str = "tools: Bash, Read, Write, Edit\n",
) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "worker.md").write_text(AGENT.format(front=front))
    for name, data in (("settings.json", settings), ("settings.local.json", local)):
        if data is not None:
            text = data if isinstance(data, str) else json.dumps(data, indent=2)
            (root / ".claude" / name).write_text(text)
    return root


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    ws.mkdir()
    return ws


async def _call(root: Path, ws: Path, tool: str, approver: Any = None, **args: Any) -> Any:
    team = Team.load(root)
    agent = team.specs["worker"].to_agent(make_toolbox(ws))
    found = next(t for t in agent.tools if t.name == tool)
    with use_scope(RunScope(approver=approver)):
        return await found(**args)


def test_the_corpus_project_settings_map_with_their_lines() -> None:
    settings = project_settings(PROJECTS / "data-pipeline")
    assert settings is not None
    shown = {(r.action, r.shown, r.source) for r in settings.rules}
    assert ("deny", "shell 'rm -rf' …", ".claude/settings.json:20") in shown
    assert ("ask", "shell 'git push' …", ".claude/settings.json:15") in shown
    assert ("allow", "shell 'git status'", ".claude/settings.json:7") in shown  # exact
    assert ("ask", "write_file migrations/**", ".claude/settings.json:16") in shown
    assert ("deny", "read_file secrets/**", ".claude/settings.json:24") in shown
    assert ("deny", "shell 'docker compose down -v' …", ".claude/settings.local.json:8") in shown
    assert settings.removed == {"mcp:filesystem/write_file"}
    assert settings.mode == "default"  # the local file's mode wins over acceptEdits
    said = "\n".join(settings.warnings)
    for line, fragment in (
        ("settings.json:10:", "'Read(//data/warehouse/**)' is outside the workspace"),
        ("settings.json:11:", "'WebFetch(domain:docs.python.org)': Claude Code's 'WebFetch'"),
        ("settings.json:28:", "'permissions.additionalDirectories': swarm's tools reach only"),
        ("settings.json:34:", "'hooks': swarm never runs Claude Code's hooks"),
        ("settings.local.json:12:", "'enableAllProjectMcpServers': means nothing to swarm"),
    ):
        assert any(line in w and fragment in w for w in settings.warnings), (fragment, said)
    assert len(settings.warnings) == len(set(settings.warnings))


def test_every_role_of_the_project_gets_the_settings_and_the_warnings_once() -> None:
    team = Team.load(PROJECTS / "data-pipeline")
    for name in ("etl-engineer", "notebook-reviewer", "sql-analyst"):
        permissions = team.specs[name].permissions
        assert permissions is not None and len(permissions.rules) > 10
    said = [w for w in team.warnings if "'hooks': swarm never runs" in w]
    assert len(said) == 1


@pytest.mark.anyio
async def test_a_denied_path_is_never_read(tmp_path: Path, ws: Path) -> None:
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text("hunter2\n")
    (ws / "notes.txt").write_text("public\n")
    root = _project(tmp_path, {"permissions": {"deny": ["Read(./secrets/**)"]}})
    with pytest.raises(
        GuardError, match=r"deny read_file secrets/\*\* \(\.claude/settings\.json:4\)"
    ):
        await _call(root, ws, "read_file", path="secrets/key.txt")
    # every other way of naming the file that the tool accepts is refused too
    (ws / "sub").mkdir()
    for other in (
        "./secrets/../secrets/key.txt",
        "sub/../secrets/key.txt",
        "secrets//key.txt",
        str(ws / "secrets" / "key.txt"),
        f"../{ws.name}/secrets/key.txt",
    ):
        with pytest.raises(GuardError):
            await _call(root, ws, "read_file", path=other)
    assert "public" in str(await _call(root, ws, "read_file", path="notes.txt"))


@pytest.mark.anyio
async def test_an_allowed_path_named_from_outside_is_still_asked(tmp_path: Path, ws: Path) -> None:
    root = _project(tmp_path, {"permissions": {"allow": ["Edit(src/**)"]}})
    await _call(root, ws, "write_file", path="src/a.py", content="x")
    with pytest.raises(GuardError, match="allow only"):
        await _call(root, ws, "write_file", path=str(ws / "src" / "b.py"), content="x")
    assert not (ws / "src" / "b.py").exists()


@pytest.mark.anyio
async def test_a_whole_tool_deny_takes_it_from_every_role(tmp_path: Path) -> None:
    root = _project(tmp_path, {"permissions": {"deny": ["Write", "Bash"]}})
    assert Team.load(root).specs["worker"].tools == ("read_file", "edit_file")


@pytest.mark.anyio
async def test_exact_commands_are_exact_and_prefixes_are_words(tmp_path: Path, ws: Path) -> None:
    root = _project(tmp_path, {"permissions": {"allow": ["Bash(touch one)", "Bash(touch two:*)"]}})
    await _call(root, ws, "shell", command="touch one")
    await _call(root, ws, "shell", command="touch two three")
    for command in ("touch one four", "touch twofold"):  # not allowed: asked, nobody to ask
        with pytest.raises(GuardError, match="allow only"):
            await _call(root, ws, "shell", command=command)
    made = sorted(p.name for p in os.scandir(ws) if not p.name.startswith("."))
    assert made == ["one", "three", "two"]  # never 'four' nor 'twofold'


@pytest.mark.anyio
async def test_a_deny_refuses_a_command_whose_word_is_only_known_at_run_time(
    tmp_path: Path, ws: Path
) -> None:
    root = _project(tmp_path, {"permissions": {"deny": ["Bash(touch secret:*)"]}})
    with pytest.raises(GuardError):
        await _call(root, ws, "shell", command="touch $(echo secret)")
    assert not (ws / "secret").exists()


@pytest.mark.anyio
async def test_dont_ask_denies_what_would_be_asked(tmp_path: Path, ws: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    settings = {"permissions": {"ask": ["Bash(touch a:*)"], "defaultMode": "dontAsk"}}
    root = _project(tmp_path, settings)
    with pytest.raises(GuardError, match="'dontAsk' denies it"):
        await _call(root, ws, "shell", approver=approver, command="touch a")
    assert asked == [] and not (ws / "a").exists()


@pytest.mark.anyio
async def test_accept_edits_stops_asking_about_edits(tmp_path: Path, ws: Path) -> None:
    settings = {"permissions": {"allow": ["Edit(src/**)"], "defaultMode": "acceptEdits"}}
    root = _project(tmp_path, settings)
    await _call(root, ws, "write_file", path="docs/a.md", content="x")
    assert (ws / "docs" / "a.md").read_text() == "x"
    root_asking = _project(tmp_path / "2", {"permissions": {"allow": ["Edit(src/**)"]}})
    with pytest.raises(GuardError, match="allow only"):
        await _call(root_asking, ws, "write_file", path="docs/b.md", content="x")
    await _call(root_asking, ws, "write_file", path="src/c.py", content="x")
    assert not (ws / "docs" / "b.md").exists() and (ws / "src" / "c.py").exists()


def test_plan_mode_gives_the_readonly_policy_and_bypass_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, {"permissions": {"defaultMode": "plan"}})
    assert Team.load(root).specs["worker"].policy == "readonly"
    bypass = _project(tmp_path / "2", {"permissions": {"defaultMode": "bypassPermissions"}})
    settings = project_settings(bypass)
    assert settings is not None and settings.mode is None
    assert any("'bypassPermissions' is refused" in w for w in settings.warnings)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"permissions": {"allow": "Bash(ls)"}}', "field 'permissions.allow'"),
        ('{"permissions": ["Bash(ls)"]}', "field 'permissions'"),
        ('{"permissions": {\n  "allow": [\n', "settings.json:"),
        ("[1, 2]", "settings.json:1"),
        ("permissions:\n  allow: [Bash]\n", "settings.json:1: invalid JSON"),  # YAML is not
    ],
)
def test_a_bad_settings_file_is_an_error_naming_it(tmp_path: Path, text: str, where: str) -> None:
    root = _project(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        Team.load(root)
    assert where in str(caught.value)


def test_a_project_without_settings_is_unchanged(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    assert project_settings(root) is None
    assert Team.load(root).specs["worker"].permissions is None


@pytest.mark.anyio
@pytest.mark.parametrize(
    "command",
    [
        "touch keep && touch x",
        "/usr/bin/touch x",
        "env touch x",
        "bash -c 'touch x'",
        "echo hi | touch x",
        "true; touch x",
    ],
)
async def test_denied_and_asked_commands_are_found_however_they_are_written(
    tmp_path: Path, ws: Path, command: str
) -> None:
    for kind in ("deny", "ask"):
        root = _project(tmp_path / kind, {"permissions": {kind: ["Bash(touch x:*)"]}})
        with pytest.raises(GuardError):
            await _call(root, ws, "shell", command=command)
        assert not (ws / "x").exists()


def test_a_quoted_command_pattern_is_read_as_the_shell_reads_it(tmp_path: Path) -> None:
    settings = project_settings(
        _project(tmp_path, {"permissions": {"allow": ['Bash(git commit -m "wip":*)']}})
    )
    assert settings is not None
    assert settings.rules[0].words == ("git", "commit", "-m", "wip")


def test_the_settings_files_pin_a_run_of_the_project(tmp_path: Path) -> None:
    from swarm.record.pinning import defining_files
    from swarm.scenario import Scenario

    root = _project(tmp_path, {"permissions": {}}, {"permissions": {}})
    pinned = defining_files(Scenario(name="s", task="t", team=root), [])
    real = Path(os.path.realpath(root))
    for name in ("settings.json", "settings.local.json"):
        assert str(real / ".claude" / name) in pinned


@pytest.mark.anyio
async def test_a_glued_star_denies_every_word_it_begins(tmp_path: Path, ws: Path) -> None:
    root = _project(tmp_path, {"permissions": {"deny": ["Bash(mkd*)"]}})
    for command in ("mkdir made", "/usr/bin/mkdir made", "mkdirx"):
        with pytest.raises(GuardError):
            await _call(root, ws, "shell", command=command)
    assert not (ws / "made").exists()
    await _call(root, ws, "shell", command="touch fine")
    assert (ws / "fine").exists()

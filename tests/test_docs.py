"""Every example in ``docs/`` runs: the convention is described in ``docs/README.md``.

Each document gets a fresh directory. Its fenced blocks, in order:

- a ``yaml``/``toml``/``json``/``markdown`` block opens with a marker line naming a file
  (``# file: team/lead.yaml``, ``// file: x.json``, ``<!-- file: team/r.md -->``); the
  block is written there (without the marker when it is not a ``#`` comment);
- a ``console`` block holds ``$ swarm ...`` commands, each followed by lines of what it
  prints (each must appear in its output; ``...`` stands for anything); a command exits 0
  unless the line ends with ``# exit N``; ``NAME=value`` words before ``swarm`` set
  environment variables for that command only;
- a ``python`` block runs with the directory as its working directory and must exit 0,
  unless its first line is ``# file: x.py``: then it is a file like the ones above;
- a block with no language or ``text`` is plain text (output, layouts), not an example.

Any other block fails the test, and so does a file that no later command or file names
(it would be an example nothing checks).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from swarm_command import run_swarm

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"^(?:#|//|<!--)\s*file:\s*(\S+?)\s*(?:-->)?\s*$")
FILE_LANGUAGES = frozenset({"yaml", "toml", "json", "markdown", "md"})
PLAIN = frozenset({"", "text"})
EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$")


@dataclass
class Block:
    language: str
    text: str
    line: int


def blocks_of(document: Path) -> list[Block]:
    text = document.read_text()
    return [
        Block(m.group(1).lower(), m.group(2), text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]


def python(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run this Python in ``cwd`` as a user's shell would: no API keys (but ``env``), no input."""
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    clean["COLUMNS"] = "200"
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        stdin=subprocess.DEVNULL,
    )


def swarm_command(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``swarm ARGS`` as ``python`` would run it (see ``swarm_command.run_swarm``)."""
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    clean["COLUMNS"] = "200"
    clean.update(env or {})
    return run_swarm(args, cwd=cwd, env=clean)


def run_console(block: Block, cwd: Path, where: str) -> list[str]:
    """Run each ``$ swarm`` line and check what it prints; the commands run."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
        elif line.strip():
            pytest.fail(f"{where}: console text before the first '$ ' command: {line!r}")
    assert commands, f"{where}: a console block without a '$ ' command"
    for command, expected in commands:
        code = 0
        found = EXIT.search(command)
        if found:
            code = int(found.group(1))
            command = command[: found.start()]
        words = command.split()
        env: dict[str, str] = {}
        while words and (assignment := ASSIGNMENT.match(words[0])):
            env[assignment.group(1)] = assignment.group(2)
            words.pop(0)
        assert words and words[0] == "swarm", (
            f"{where}: only swarm commands run in docs: {command!r}"
        )
        done = swarm_command(words[1:], cwd=cwd, env=env)
        output = done.stdout + done.stderr
        assert done.returncode == code, f"{where}: `{command}` exited {done.returncode}:\n{output}"
        assert "Traceback" not in output, f"{where}: `{command}`:\n{output}"
        printed = output.splitlines()
        for want in (w for w in expected if w.strip()):
            pattern = re.compile(".*".join(re.escape(p) for p in want.strip().split("...")))
            assert any(pattern.search(line) for line in printed), (
                f"{where}: `{command}` did not print {want.strip()!r}; it printed:\n{output}"
            )
    return [command for command, _ in commands]


def run_document(document: Path, cwd: Path) -> None:
    written: list[tuple[str, str, int]] = []  # (path, where, how much of `later` came before)
    later: list[str] = []  # the text of every file, command and script, in order
    cwd.mkdir(parents=True, exist_ok=True)
    name = document.relative_to(ROOT) if document.is_relative_to(ROOT) else document.name
    for block in blocks_of(document):
        where = f"{name}:{block.line}"
        if block.language in PLAIN:
            continue
        first, _, rest = block.text.partition("\n")
        if block.language in FILE_LANGUAGES or (block.language == "python" and MARKER.match(first)):
            found = MARKER.match(first)
            assert found, f"{where}: a {block.language} block needs a first line like `# file: x`"
            target = cwd / found.group(1)
            target.parent.mkdir(parents=True, exist_ok=True)
            # A '#' marker is a comment of the file (YAML, TOML) and stays, so the line
            # numbers a command prints match the block as the reader sees it.
            target.write_text(block.text if first.startswith("#") else rest)
            later.append(rest)
            written.append((found.group(1), where, len(later)))
        elif block.language == "console":
            later += run_console(block, cwd, where)
        elif block.language == "python":
            done = python("-c", block.text, cwd=cwd)
            assert done.returncode == 0, f"{where}: the python block failed:\n{done.stderr}"
            later.append(block.text)
        else:
            pytest.fail(f"{where}: a ```{block.language} block is no kind docs/README.md knows")
    _each_file_is_used(written, later)


def _each_file_is_used(written: list[tuple[str, str, int]], later: list[str]) -> None:
    """Each written file is named (it, or a directory holding it) by something after it."""
    for path, where, position in written:
        names = [path, *(str(parent) for parent in Path(path).parents if str(parent) != ".")]
        if path.endswith(".py"):  # a module is used by its name: `weather_tools:forecast`
            names.append(path.removesuffix(".py").replace("/", "."))
        after = "\n".join(later[position:])
        assert any(name in after for name in names), (
            f"{where}: nothing after this example uses {path} (validate or run it)"
        )


DOCUMENTS = sorted(DOCS.glob("*.md"))


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_every_example_of_the_document_runs(document: Path, tmp_path: Path) -> None:
    run_document(document, tmp_path)


def test_the_index_links_every_document_and_the_readme_links_the_index() -> None:
    index = (DOCS / "README.md").read_text()
    for document in DOCUMENTS:
        if document.name != "README.md":
            assert f"({document.name})" in index, f"docs/README.md does not link {document.name}"
    readme = (ROOT / "README.md").read_text()
    assert "(docs/README.md)" in readme
    assert "(roles/README.md)" in readme


BROKEN = {
    "a role that does not validate": (
        "```yaml\n# file: team/lead.yaml\nsystem: x\ntools: [nope]\n```\n\n"
        "```console\n$ swarm validate team\n```\n",
        "exited 2",
    ),
    "output that is not printed": (
        "```yaml\n# file: team/lead.yaml\nsystem: x\n```\n\n"
        "```console\n$ swarm validate team\nok: team: 9 roles\n```\n",
        "did not print",
    ),
    "a file nothing checks": (
        "```yaml\n# file: team/lead.yaml\nsystem: x\n```\n",
        "nothing after this example uses",
    ),
    "a python block that fails": (
        "```python\nraise SystemExit(3)\n```\n",
        "the python block failed",
    ),
    "a file block without a marker": ("```yaml\nsystem: x\n```\n", "needs a first line"),
    "a kind of block the convention lacks": ("```bash\nls\n```\n", "no kind"),
    "a variable set for one command only": (  # the run's records are where it said only
        "```yaml\n# file: team/lead.yaml\nsystem: x\n```\n\n"
        "```yaml\n# file: s.yaml\nteam: team\ntask: hi\nmodel:\n  script:\n    lead:\n"
        "      - text: done\n```\n\n"
        "```console\n$ XDG_STATE_HOME=state swarm run s.yaml\n```\n\n"
        "```console\n$ swarm runs show last\n```\n",
        "`swarm runs show last` exited 2",
    ),
    "a shell command that is not swarm": ("```console\n$ X=1 ls\n```\n", "only swarm"),
    "a python file nothing checks": ("```python\n# file: tool.py\nx = 1\n```\n", "nothing"),
}


@pytest.mark.parametrize(("text", "says"), BROKEN.values(), ids=list(BROKEN))
def test_an_example_that_fails_fails_the_test(text: str, says: str, tmp_path: Path) -> None:
    """The checker is not a test that cannot fail."""
    document = tmp_path / "doc.md"
    document.write_text(text)
    with pytest.raises(pytest.fail.Exception if says == "no kind" else AssertionError) as caught:
        run_document(document, tmp_path / "run")
    assert says in str(caught.value)


def test_tools_md_documents_every_built_in_tool_and_argument(tmp_path: Path) -> None:
    from swarm.toolbox import make_toolbox

    text = (DOCS / "tools.md").read_text()
    sections = {s.split("\n", 1)[0].strip(): s for s in re.split(r"^## ", text, flags=re.M)[1:]}
    for name, tool in make_toolbox(tmp_path).items():
        assert name in sections, f"docs/tools.md has no section for {name}"
        for argument in tool.input_schema["properties"]:
            assert f"| `{argument}` |" in sections[name], f"{name}: `{argument}` undocumented"

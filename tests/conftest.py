"""Shared fixtures: every async test runs on asyncio through anyio's pytest plugin, and no
test writes run records into the real home (``XDG_STATE_HOME`` points into a temporary
directory).

The suite runs in parallel (``pytest -n auto --dist loadgroup``), so tests share nothing:
each has its own directories and ports. What is costly to start is shared within one
worker: the tests on the local model's session server (the ``server`` fixture) and the
tests on Ray run in one group each, so one such server and one Ray run at a time, as in a
serial run. A test that starts a model of its own (a whole ``swarm run --model local``)
runs where it falls, beside the others. Those tests, with the other end-to-end ones, are
``slow``: ``-m "not slow"`` is the fast layer.
"""

import compileall
import importlib.util
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

_SLOW = ("local_model", "ray")
"""The markers of tests that are ``slow`` by what they start."""


def _group(item: pytest.Item) -> str | None:
    """The group of tests that must share ``item``'s worker, if any."""
    if item.get_closest_marker("ray") is not None:
        return "ray"
    if "server" in getattr(item, "fixturenames", ()) and item.get_closest_marker("local_model"):
        return "local_model"  # the session's one llama.cpp server
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests on the local model or on Ray are slow; those that share what they start run
    in their group's worker."""
    grouped = config.pluginmanager.hasplugin("xdist")  # `-p no:xdist` knows no groups
    for item in items:
        if any(item.get_closest_marker(marker) for marker in _SLOW):
            item.add_marker(pytest.mark.slow)
        group = _group(item)
        if grouped and group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_configure(config: pytest.Config) -> None:
    """Refuse ``--dist loadgroup`` where it does not group: from pytest 9.2 on it gives
    no error and distributes the local model's and Ray's tests as any others, each
    worker starting its own server or cluster (pytest-xdist#1386). Then, once per run
    (not in each worker), compile swarm's modules (``_compile_swarm``)."""
    if config.getoption("dist", "no") == "loadgroup" and pytest.version_tuple >= (9, 2):
        raise pytest.UsageError(
            f"pytest {pytest.__version__} breaks pytest-xdist's --dist loadgroup"
            " (pytest-xdist#1386): install the test extra again, it asks for pytest<9.2"
        )
    if not hasattr(config, "workerinput"):  # xdist's workers start after this
        _compile_swarm()


def _compile_swarm() -> None:
    """Write the bytecode of swarm's modules beside them, as Python does on import
    unless ``PYTHONDONTWRITEBYTECODE`` is set (CI machines often set it). Then the
    Pythons the suite starts (workers, fork servers, ``swarm`` commands, Ray workers,
    MCP servers) load swarm instead of compiling each module they import, about half a
    second of CPU each; compiling all of it takes less than a second, once. Changed
    modules are compiled again, as on import. A checkout that cannot be written is
    left as it is."""
    spec = importlib.util.find_spec("swarm")
    if spec is None or not spec.submodule_search_locations:
        return
    for package in spec.submodule_search_locations:
        compileall.compile_dir(package, quiet=2)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: three workers for two cores. With one per core, the cores of a 2-core
    machine were busy 1.6 of 2 on average: a test waits on what it started (a sandboxed
    command, a server, a killed run's resume), and another worker runs in those waits.
    With two per core they were busy all the time, but each worker collects the whole
    suite (17 s of CPU on that machine) and the tests' processes contended more: the
    suite took 60 s of CPU more, and longer, than with three."""
    cores = len(os.sched_getaffinity(0))
    return cores + (cores + 1) // 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _python_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}


@pytest.fixture(autouse=True)
def _interpreter_variables_kept() -> Iterator[None]:
    """Every test leaves the interpreter's own variables (``PYTHON...``) of this process
    as it found them. One left changed (``ray.init`` sets ``PYTHONBREAKPOINT``) makes
    every later ``swarm`` run of this worker a process of its own instead of a fork
    (``tests/swarm_command.py``): slower, and a test of the fork itself fails."""
    before = _python_variables()
    yield
    after = _python_variables()
    assert after == before, f"the test left the interpreter's variables changed: {after}"


_PF_KTHREAD = 0x00200000


def _running(marker: str, *, in_exec: bool = False) -> list[int]:
    """PIDs of this machine's running processes whose command line holds ``marker``
    (zombies left out: they have no command line).

    ``in_exec``: also every live process (not a kernel thread) whose command line is
    empty. A process in the middle of an execve shows none until its new program's
    arguments are written, which on a busy machine takes a while, so its marker cannot
    be read yet. Each process is read once: two passes, one for the marker and one for
    the empty line, would miss a process that finished its execve between them."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ")
            if marker.encode() in cmdline:
                found.append(int(entry.name))
            elif in_exec and not cmdline:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] not in "ZX" and not int(fields[6]) & _PF_KTHREAD:
                    found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.fixture
def running() -> Callable[..., list[int]]:
    """Find running processes by a unique marker in their command line, as the host sees
    them (PIDs inside a sandbox's PID namespace mean nothing outside it)."""
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to see processes")
    return _running


@pytest.fixture
def marker() -> str:
    """A unique number to put in a command line, e.g. ``sleep {marker}``."""
    return f"300.{uuid.uuid4().int % 10**12:012d}"


@pytest.fixture(scope="session")
def _state_homes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("states", numbered=False)


@pytest.fixture(autouse=True)
def state_home(_state_homes: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``XDG_STATE_HOME``: run records go to ``<it>/swarm/runs``.

    Made by ``mkdtemp`` in a directory of their own: ``tmp_path_factory.mktemp`` lists
    every directory made before it in the session's temporary directory to number the
    next, which over the thousand tests of a worker came to seconds of CPU."""
    state = Path(tempfile.mkdtemp(prefix="state", dir=_state_homes))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state

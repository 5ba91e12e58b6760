"""shell: a command run by bash in the workspace, in a sandbox, with a timeout, an output
cap, and a clean kill of everything it started.

The command runs as ``bash -c <command>`` through the sandbox tier in force (see
``swarm.sandbox``): the settings bound to the tool (its context, a ``ToolSandbox``: the
policy's ``sandbox:`` settings once ``apply_policy`` guarded it, else the toolbox's),
under the call's network ceiling. It runs in its own session (so its own process group),
with the workspace as working directory, stdin closed and an environment built from
scratch. When it ends, times out or the call is cancelled, the sandbox's process
namespace is killed and the whole group gets SIGTERM, then SIGKILL: background jobs it
left behind go with it. In a sandbox, the settings' resource limits apply; a command one
of them killed is an error naming it.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import anyio.abc
import anyio.to_thread

from swarm._log import logger
from swarm.errors import ToolError
from swarm.guards.protect import PROTECTED_RULE, Fingerprint, ProtectedPaths
from swarm.sandbox import (
    Confinement,
    Launch,
    ResourceLimits,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
    command_environment,
)
from swarm.sandbox.select import ToolSandbox
from swarm.scope import CallRecord, OverlayCapture, current_call, current_scope
from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Progress, Tool, ToolContext, ToolOutput

if TYPE_CHECKING:  # the cgroup budget and the egress proxy load with the first command
    from swarm.sandbox.cgroup import CommandBudget
    from swarm.sandbox.proxy import ConnectionRecord

__all__ = ["OutputCap", "safe_environment", "shell_tool"]

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL, and how long to wait for output after the kill."""
MAX_STREAMED = 1_000_000
"""Characters of output streamed as progress at most; the rest is only counted."""
MAX_PENDING = 8192
"""Characters of an unfinished line held back from progress at most."""
LIMIT_OUTPUT = 2000
"""Characters of output, at most, in the error of a command a resource limit killed."""

_log = logger("swarm.sandbox")


class OutputCap:
    """Keeps the head and the tail of a stream of text, ``limit`` characters in all, and
    counts what it dropped; memory stays bounded however much comes in."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._head: list[str] = []
        self._head_room = limit // 2
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self._tail_room = limit - limit // 2

    def add(self, text: str) -> None:
        """Take the next piece of the stream."""
        self.total += len(text)
        if self._head_room > 0:
            taken = text[: self._head_room]
            self._head.append(taken)
            self._head_room -= len(taken)
            text = text[len(taken) :]
        if text:
            self._tail.append(text)
            self._tail_size += len(text)
            while self._tail and self._tail_size - len(self._tail[0]) >= self._tail_room:
                self._tail_size -= len(self._tail.popleft())

    @property
    def cut(self) -> bool:
        """Whether some of the stream was dropped."""
        return self.total > self.limit

    def text(self) -> str:
        """What was kept; when something was dropped, a marker says how much, in between."""
        head, tail = "".join(self._head), "".join(self._tail)
        if not self.cut:
            return head + tail
        tail = tail[len(tail) - self._tail_room :]
        # Cut at line breaks when there are some, so no half lines are shown.
        if (newline := head.rfind("\n")) > len(head) // 2:
            head = head[: newline + 1]
        if 0 <= (newline := tail.find("\n")) < len(tail) // 2:
            tail = tail[newline + 1 :]
        dropped = self.total - len(head) - len(tail)
        gap = "" if head.endswith("\n") else "\n"
        return f"{head}{gap}[… {dropped:,} characters of output cut …]\n{tail}"


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_exists(pgid: int) -> bool:
    """Whether group ``pgid`` has a process this one may signal (zombies included)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs; zombies (dead, waiting to be
    reaped) do not count. Reads ``/proc`` where there is one."""
    if not _group_exists(pgid):
        return False
    if not os.path.isdir("/proc"):
        return True
    with os.scandir("/proc") as entries:
        pids = [entry.name for entry in entries if entry.name.isdigit()]
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
                state, _ppid, group, *_ = handle.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            continue
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False


async def _group_ended(pgid: int) -> None:
    if not _group_exists(pgid):  # the usual case: nothing was left behind
        return
    # Nothing tells us when a grandchild dies (it is not ours to wait for): poll.
    while await anyio.to_thread.run_sync(_group_running, pgid):  # noqa: ASYNC110
        await anyio.sleep(0.01)


async def _stop(process: anyio.abc.Process, sandbox_stop: Callable[[], None] | None) -> None:
    """End the command's sandbox (``sandbox_stop``: its processes may have left the group)
    and its whole process group: SIGTERM, a grace period for everything in it to exit,
    then SIGKILL; returns once nothing of the group runs (or after another grace period,
    should a process not die)."""
    pgid = process.pid
    if sandbox_stop is not None:
        sandbox_stop()
    _signal_group(pgid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE):
        await process.wait()
        await _group_ended(pgid)
    _signal_group(pgid, signal.SIGKILL)
    await process.wait()
    with anyio.move_on_after(KILL_GRACE):
        await _group_ended(pgid)


def _killed_by_limit(code: int | None, limits: ResourceLimits) -> str | None:
    """What resource limit killed the command, when one did (its signal comes as a
    negative code, or from a launcher or bash as 128 + N)."""
    if code is None:
        return None
    signum = -code if code < 0 else code - 128 if 128 < code < 128 + signal.NSIG else 0
    return limits.killed_by(signum) if signum else None


def _status(code: int | None, timed_out: bool, limit: float) -> str:
    if timed_out:
        return f"timed out after {limit:g}s; the command and everything it started were killed"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    if code is not None and 128 < code < 128 + signal.NSIG:
        # A sandbox's launcher (like bash for its own children) says "killed by signal N"
        # as exit code 128 + N.
        with contextlib.suppress(ValueError):
            return f"exit code {code}: killed by {signal.Signals(code - 128).name}"
    return f"exit code {code}"


class _NotBegun(Exception):
    """The sandbox's launcher failed in its set-up, before the command began (its message
    in ``args[0]``): nothing of the command ran."""


LAUNCH_ATTEMPTS = 3
"""How many times a command is launched when its sandbox fails in its set-up before the
command begins: a file of ``/etc`` hidden by mode that is removed between the listing and
the mount (a lock file of ``useradd``) fails one set-up, and the next one no longer lists
it. The command never runs twice: a set-up that failed ran nothing of it. A set-up that
fails every time (a mount the machine refuses) is the call's error, with bubblewrap's
words."""


async def _run(
    launch: Launch,
    sandbox: str,
    limit: float,
    progress: Progress,
    output_limit: int,
    limits: ResourceLimits | None = None,
    *,
    budget: CommandBudget | None = None,
) -> ToolOutput:
    """Start ``launch``, stream and cap its output, stop it all at its end or after
    ``limit`` seconds (or when cancelled), and say how it went. A command killed by one
    of ``limits`` (the sandbox's resource limits), or by the kernel at its memory
    ``budget``, is an error saying which; a process it started killed at the budget is
    said in the status."""
    captured = OutputCap(output_limit)
    process = await anyio.open_process(
        launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        pass_fds=launch.pass_fds,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, killed as a whole
    )
    drained = anyio.Event()
    stopped = False

    async def read_output() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending, streamed = "", 0
        # Until the command began, what comes is the launcher's own words: a set-up that
        # failed is launched again, and what it said is not the command's output, so it
        # is held (and never shown when the command does not begin).
        began, held = launch.began, ""

        def stream(text: str) -> None:
            nonlocal streamed, began, held
            if began is not None:
                if not began():  # (its tail only: it is never more than a few lines)
                    held = (held + text)[-MAX_STREAMED:]
                    return
                began, text, held = None, held + text, ""
            if streamed < MAX_STREAMED:
                progress(text, "output")
                streamed += len(text)
                if streamed >= MAX_STREAMED:
                    progress("\n[… output no longer streamed …]\n", "output")

        assert process.stdout is not None
        try:
            async for data in process.stdout:
                text = decoder.decode(data)
                captured.add(text)
                pending += text
                lines, newline, rest = pending.rpartition("\n")
                if newline:
                    stream(lines + newline)
                    pending = rest
                if len(pending) > MAX_PENDING:
                    stream(pending)
                    pending = ""
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            rest = pending + decoder.decode(b"", final=True)
            if rest:
                captured.add(rest[len(pending) :])
                stream(rest)
            drained.set()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(read_output)
            with anyio.move_on_after(limit) as deadline:
                await process.wait()
            # Whatever the command left running goes with it, and its output pipe then
            # closes. A process that left the group may hold the pipe open: reading
            # stops after a grace period.
            await _stop(process, launch.stop)
            stopped = True
            with anyio.move_on_after(KILL_GRACE):
                await drained.wait()
            group.cancel_scope.cancel()
        timed_out = deadline.cancelled_caught
    finally:
        # Cancelled or failed midway: the group must still go, whatever cancels us.
        with anyio.CancelScope(shield=True):
            if not stopped:
                await _stop(process, launch.stop)
            await process.aclose()
    code = process.returncode
    output = captured.text().rstrip()
    if code != 0 and not timed_out and launch.began is not None and not launch.began():
        raise _NotBegun(output or f"the sandbox's launcher ended with exit code {code}")
    status = _status(code, timed_out, limit)
    hit = None if limits is None or timed_out else _killed_by_limit(code, limits)
    over = None if budget is None or timed_out else budget.killed()
    if over is not None and code in (-signal.SIGKILL, 128 + signal.SIGKILL):
        hit = over  # the command itself was killed at the memory budget
    elif over is not None:
        status += f"; a process it started was {over}"
    if hit is not None:
        # An error, so the audit log's finish record says it too; the output's end helps.
        tail = output[-LIMIT_OUTPUT:]
        raise ToolError(f"[{hit}; exit code {code}]" + (f"\n{tail}" if tail else ""))
    text = f"{output}\n[{status}]" if output else f"[{status}, no output]"
    details = {
        "exit_code": code,
        "timed_out": timed_out,
        "output_chars": captured.total,
        "output_cut": captured.cut,
        "sandbox": sandbox,
    }
    if budget is not None:
        details["limits"] = budget.describe()
        details["memory_peak"] = budget.peak()
    return ToolOutput(text, details=details)


async def _settle(
    capture: OverlayCapture | None,
    guarded: ProtectedPaths | None,
    before: Mapping[Path, Fingerprint],
    evidence: Path | None,
    call: CallRecord | None,
) -> list[str]:
    """Once a command has ended, whatever ended it: its changes moved from the overlay
    into the workspace (``capture``), then what it did to protected paths taken away;
    the lines saying so, also noted on the call for the audit log."""
    with anyio.CancelScope(shield=True):
        if capture is not None:
            await anyio.to_thread.run_sync(capture.apply)
        if guarded is None:
            return []
        swept = await anyio.to_thread.run_sync(guarded.sweep, before, evidence)
    lines = [f"[{PROTECTED_RULE}] {item.describe()}" for item in swept]
    if lines and call is not None:
        call.protected = (*call.protected, *lines)
    return lines


def safe_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's environment) without what looks like a
    secret: variables named like one (``OPENAI_API_KEY``, ``GITHUB_TOKEN``,
    ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``) or holding a credential (a provider key, a
    password in a URL). For commands, prefer ``command_environment``, which copies only
    what is named."""
    from swarm.audit.redact import holds_credential, secret_key

    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if not secret_key(name)
        and "PASSWORD" not in name.upper()  # PGPASSWORD: one word
        and not holds_credential(value)
    }


@contextlib.contextmanager
def _launching(
    sandbox: Sandbox, argv: tuple[str, ...], confinement: Confinement
) -> Iterator[Launch]:
    """``sandbox.launch``, a tier that cannot meet the confinement (an allow-list where
    no network namespace can be made) said as the tool's error."""
    with contextlib.ExitStack() as stack:
        try:
            launch = stack.enter_context(sandbox.launch(argv, confinement))
        except SandboxUnavailable as exc:
            raise ToolError(str(exc)) from None
        yield launch


def _connection_recorder() -> Callable[[ConnectionRecord], None]:
    """What receives each connection a command makes through the egress proxy: the
    run's observers that record them (the audit log's ``on_connection``)."""
    sinks = [
        sink
        for observer in current_scope().observers
        if callable(sink := getattr(observer, "on_connection", None))
    ]

    def record(connection: ConnectionRecord) -> None:
        for sink in sinks:
            sink(connection)

    return record


def shell_tool(
    workspace: Workspace,
    *,
    timeout: float,
    output_limit: int,
    env: Mapping[str, str] | None = None,
    sandbox: ToolSandbox | None = None,
    protected: tuple[Path, ...] = (),
    evidence: Path | None = None,
) -> Tool[ToolSandbox]:
    """The ``shell`` tool of ``workspace``.

    ``timeout`` (seconds) is the longest a command may run; ``output_limit`` caps the
    characters of output in the result (head and tail kept); ``env`` is the commands'
    whole environment (``None``: built from scratch, see ``command_environment``, with
    the variables the sandbox settings name). ``sandbox`` is the tool's context: the
    settings commands run under until a policy applied to the tool binds its own, and
    how the tier is found; ``protected`` paths
    are hidden from commands. The workspace's ``readonly`` paths (with the ``protect``
    globs noted on the call) are read-only to commands; what a command changed there all
    the same (a path that did not exist when it started, a parent directory swapped) is
    taken away when it ends, into ``evidence`` when given, and the result says so (rule
    ``protected-path``). A call whose settings require a sandbox that does not work is an
    error result saying how to get one; nothing runs.
    """
    given = dict(env) if env is not None else None
    own = sandbox or ToolSandbox()
    warned: set[str] = set()
    state = workspace.root / ".swarm"

    def choose(bound: ToolSandbox, call: CallRecord | None) -> tuple[Sandbox, SandboxSettings]:
        # the ceiling is the call's: see ToolSandbox.in_force
        settings = bound.in_force(call.network_ceiling if call is not None else None)
        try:
            chosen = bound.find(settings)
        except SandboxUnavailable as exc:
            raise ToolError(str(exc)) from None
        run_id = current_scope().run_id
        if chosen.tier == "none" and settings.mode == "auto" and run_id not in warned:
            warned.add(run_id)
            _log.warning("shell commands run unconfined", sandbox=chosen.describe("host"))
        return chosen, settings

    async def shell(
        progress: Progress,
        bound: Annotated[ToolSandbox, ToolContext],
        command: Annotated[
            str,
            Field(description="The command line, run by bash (pipes, && and redirections work)."),
        ],
        timeout_seconds: Annotated[
            float | None,
            Field(
                description="Stop the command after this many seconds (default, and at"
                " most: the limit in the tool's description).",
                ge=1,
            ),
        ] = None,
    ) -> ToolOutput:
        if not command.strip():
            raise ToolError("command is empty; give the command line to run")
        limit = timeout if timeout_seconds is None else min(timeout_seconds, timeout)
        call = current_call()
        chosen, settings = choose(bound, call)
        state.mkdir(exist_ok=True)  # so a command cannot make swarm's state dir its own
        guarded = workspace.readonly
        if guarded is not None and call is not None and call.protect:
            guarded = guarded.widened(call.protect)
        before: Mapping[Path, Fingerprint] = {}
        readonly: tuple[Path, ...] = ()
        if guarded is not None:
            before, readonly = await anyio.to_thread.run_sync(guarded.before_command)
        described = chosen.describe(settings.network)
        capture = call.overlay if call is not None else None
        if capture is not None and not getattr(chosen, "overlays", False):
            raise ToolError(
                f"the call was to run over a workspace overlay, which {described} cannot"
                " mount; nothing ran"
            )
        from swarm.sandbox.cgroup import command_budget, in_budget
        from swarm.sandbox.proxy_door import door_for, proxy_environment

        undone: list[str] = []
        try:
            door = door_for(
                settings.egress if chosen.tier != "none" else None,
                path=call.path if call is not None else current_scope().path,
                resolver=bound.resolver,
                on_connection=_connection_recorder(),
                over_tcp=getattr(chosen, "proxy_over_tcp", False),
            )
            async with door as proxy:
                with command_budget(settings.limits) as budget:
                    env = given if given is not None else command_environment(settings.env)
                    if proxy is not None:
                        env = {**env, **proxy_environment(proxy.port)}
                    confinement = Confinement(
                        workspace.root,
                        network=settings.network,
                        env=env,
                        readonly=(state, *readonly),
                        hidden=protected,
                        limits=budget.per_process,
                        read=settings.read,
                        tmpfs_size=settings.tmpfs_size,
                        proxy=proxy,
                        cgroup=budget.join,
                        overlay=capture.overlay if capture is not None else None,
                    )
                    limits = None if chosen.tier == "none" else budget.per_process
                    # every attempt counts against the one time limit: a command that
                    # passed for a failed set-up gains no time by it
                    deadline = anyio.current_time() + limit
                    for attempt in range(1, LAUNCH_ATTEMPTS + 1):
                        left = max(deadline - anyio.current_time(), 0.1)
                        try:
                            with _launching(chosen, ("bash", "-c", command), confinement) as launch:
                                output = await _run(
                                    in_budget(launch, budget),
                                    described,
                                    left if attempt > 1 else limit,
                                    progress,
                                    output_limit,
                                    limits,
                                    budget=budget,
                                )
                            break
                        except _NotBegun as exc:
                            if attempt == LAUNCH_ATTEMPTS:
                                raise ToolError(
                                    f"the sandbox ({described}) could not be set up, so the"
                                    f" command did not run:\n{exc.args[0]}"
                                ) from None
        except ToolError as exc:
            undone = await _settle(capture, guarded, before, evidence, call)
            if capture is not None and (dropped := capture.apply()):
                undone.append(dropped)
            if undone:
                raise ToolError(f"{exc}\n" + "\n".join(undone)) from None
            raise
        except BaseException:  # cancelled: still leave nothing at a protected path
            await _settle(capture, guarded, before, evidence, call)
            raise
        undone = await _settle(capture, guarded, before, evidence, call)
        if capture is not None and (dropped := capture.apply()):
            raise ToolError(f"{output.content}\n{dropped}")
        if undone:
            text = output.content if isinstance(output.content, str) else ""
            output = ToolOutput(text + "\n" + "\n".join(undone), details=output.details)
        return output

    return Tool(
        "shell",
        shell,
        "Run a command with bash in the workspace directory (pipes, && and redirections"
        " work). stdin is closed, so interactive programs get no input. stdout and stderr"
        " come back together, then the exit code; long output keeps its start and end."
        f" A command is stopped after {timeout:g}s (or timeout_seconds), and anything it"
        " started in the background is killed when it ends. Commands run in a sandbox:"
        " they may write only in the workspace and /tmp, see an empty home, and usually"
        " have no network.",
        context=own,
        idempotent=False,
    )

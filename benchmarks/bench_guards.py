"""Guard and audit benchmarks (not part of the test run).

    python benchmarks/bench_guards.py          # all three
    python benchmarks/bench_guards.py chain    # 1 and 2 only (a few seconds)

1. Guard chain overhead per call: the chain ``apply_policy`` builds from the shipped
   ``default`` policy for the role ``developer`` on the built-in tools (``make_toolbox``:
   CeilingGuard-free chain of PolicyGuard with its sandbox step, PathGuard, AuditGuard),
   through ``tool.check`` on validated arguments. Target: a 7-program pipeline under
   50 µs, reported as a ratio of the target. A repeated command is parsed and decided
   once (both are cached by the command's text), so the 7-program commands are also
   measured "cold": a command never seen before on every call, which is what the target
   is about. Two 7-program commands: ``LONG`` (a list with a pipeline and a
   substitution) and ``PIPE7`` (one pipeline of seven programs ending the line).
2. The shell parser alone (``parse_command``) on those commands, cold, and tree-sitter's
   own parse of the same text (the floor under the parser).
3. Audit log throughput: 100 concurrent writers (tasks) each writing decision and finish
   records into one log, durable (the default: fsynced before each call goes on, one
   fsync shared by the writers waiting for it) and without fsync; records per second,
   the chain verified afterwards.

Figures 1 and 2 are the CPU time of this process (``time.process_time``: on a shared
machine, wall time also counts the time other processes held the CPU), medians of
``ROUNDS`` rounds; compare before and after in one sitting.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio

from swarm.audit import AuditLog, verify_log
from swarm.guards import apply_policy, load_policy, parse_command
from swarm.messages import ToolResultBlock
from swarm.sandbox.select import Unconfined
from swarm.scope import CallRecord, RunScope, use_call, use_scope
from swarm.toolbox import make_toolbox
from swarm.tools import Tool

CALLS = 10_000
COLD_CALLS = 2_000
ROUNDS = 5
WRITERS = 100
RECORDS_PER_WRITER = 100  # 50 calls: a decision and a finish record each
TARGET_US = 50.0

SHORT = "git status && ls -la src"
LONG = "cd src && grep -rn 'TODO' . | sort | uniq -c | head -20 > ../todo.txt; echo $(date)"
PIPE7 = "git log --oneline | grep -i fix | cut -c1-7 | sort | uniq | head -20 | wc -l"


def fresh(command: str, n: int) -> str:
    """``command`` made new, running the same programs: its ``-20`` becomes ``-N`` (a
    command without one gets ``N`` appended to its last word)."""
    return command.replace("-20", f"-{n + 21}") if "-20" in command else f"{command}{n}"


def against_target(micros: float) -> str:
    verdict = "ok" if micros < TARGET_US else "OVER TARGET"
    return f"{micros:7.1f} µs  {micros / TARGET_US:5.2f}x the {TARGET_US:.0f} µs target ({verdict})"


async def per_call(check: Callable[[], Awaitable[Any]], calls: int) -> float:
    """The median over ``ROUNDS`` of the mean CPU time of one awaited ``check()``, in µs."""
    rounds = []
    for _ in range(ROUNDS):
        started = time.process_time()
        for _ in range(calls):
            await check()
        rounds.append((time.process_time() - started) / calls * 1e6)
    return statistics.median(rounds)


async def chain_overhead(workspace: Path, log: AuditLog) -> None:
    policy = load_policy("default")
    # the tier finder stands in for bubblewrap, which this machine may lack: the
    # sandbox step still runs on every shell call
    toolbox = make_toolbox(workspace, find=lambda settings: Unconfined("benchmark"))
    tools = apply_policy(
        [toolbox["read_file"], toolbox["shell"]], policy, role="developer", workspace=workspace
    )
    file_tool, shell_tool = tools
    guards = ", ".join(type(g).__name__ for g in shell_tool.guards)
    print(f"guard chain, default policy ({len(policy.rules)} rules; shell: {guards}), per call:")
    cases: list[tuple[str, Tool[Any], dict[str, Any]]] = [
        ("read_file src/main.py", file_tool, {"path": "src/main.py"}),
        (f"shell {SHORT!r}", shell_tool, {"command": SHORT}),
        ("shell LONG (7 programs), repeated", shell_tool, {"command": LONG}),
        ("shell PIPE7 (7 programs), repeated", shell_tool, {"command": PIPE7}),
    ]
    with use_scope(RunScope(path="lead/developer#1", run_id="bench", observers=(log,))):
        for label, tool, arguments in cases:
            validated = tool.validate(arguments)
            call = CallRecord("call", tool.name, "lead/developer#1", arguments)
            with use_call(call):
                await tool.check(validated)  # warm caches (rules per tool, path arguments)
                micros = await per_call(lambda t=tool, a=validated: t.check(a), CALLS)  # type: ignore[misc]
            print(f"  {label:<40} {against_target(micros)}")
        # every call a command never seen before: no parse or decision cache helps
        for name, command in (("LONG", LONG), ("PIPE7", PIPE7)):
            commands: Iterator[dict[str, Any]] = iter(
                [
                    shell_tool.validate({"command": fresh(command, n)})
                    for n in range(COLD_CALLS * (ROUNDS + 1))
                ]
            )
            call = CallRecord("call", "shell", "lead/developer#1", {"command": command})
            with use_call(call):
                await shell_tool.check(next(commands))
                micros = await per_call(
                    lambda c=commands: shell_tool.check(next(c)),  # type: ignore[misc]
                    COLD_CALLS,
                )
            label = f"shell {name} (7 programs), cold"
            print(f"  {label:<40} {against_target(micros)}")


def _median_us(run: Callable[[list[str]], object], make: Callable[[int, int], str]) -> float:
    rounds = []
    for r in range(ROUNDS):
        texts = [make(r, n) for n in range(COLD_CALLS)]
        started = time.process_time()
        run(texts)
        rounds.append((time.process_time() - started) / COLD_CALLS * 1e6)
    return statistics.median(rounds)


def parser_speed() -> None:
    from tree_sitter import Language, Parser
    from tree_sitter_bash import language

    tree_sitter = Parser(Language(language()))

    def parse_all(texts: list[str]) -> None:
        for text in texts:
            parse_command(text)

    def tree_sitter_all(texts: list[str]) -> None:
        for text in texts:
            tree_sitter.parse(text.encode())

    def tree_sitter_newline(texts: list[str]) -> None:
        for text in texts:
            tree_sitter.parse(text.encode() + b"\n")

    print("shell parser alone, per command never seen before:")
    for name, command in (("SHORT", SHORT), ("LONG", LONG), ("PIPE7", PIPE7)):
        programs = len(parse_command(command))
        made = [
            lambda r, n, c=command, k=k: fresh(c, 100_000 + (r * 3 + k) * COLD_CALLS + n)
            for k in range(3)
        ]
        ours = _median_us(parse_all, made[0])
        floor = _median_us(tree_sitter_all, made[1])
        newline = _median_us(tree_sitter_newline, made[2])
        print(
            f"  {name:<6} {programs} programs, {len(command)} chars: parse_command {ours:6.1f} µs"
            f"  (tree-sitter's own parse: {floor:5.1f} µs; with a final newline {newline:5.1f} µs)"
        )


async def audit_throughput(directory: Path, *, fsync: bool) -> None:
    path = directory / f"audit-{'fsync' if fsync else 'nofsync'}.jsonl"
    arguments = {"command": "ls -la src", "api_key": "sk-not-a-real-key-0123456789abcdef"}
    result = ToolResultBlock("call", "ok")

    async def writer(log: AuditLog, n: int) -> None:
        for i in range(RECORDS_PER_WRITER // 2):
            call = CallRecord(f"call_{n}_{i}", "shell", f"lead/agent#{n}", arguments)
            call.decision, call.arguments = "allow", arguments
            call.guard, call.rule, call.policy = "policy:default", "default", "default"
            await log.on_decision(call)
            await log.on_finish(call, result, 0.001)

    with AuditLog(path, fsync=fsync) as log:
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for n in range(WRITERS):
                group.start_soon(writer, log, n)
        elapsed = time.perf_counter() - started
    report = verify_log(path)
    total = WRITERS * RECORDS_PER_WRITER
    assert report.ok and report.records == total, report
    label = "durable (group fsync)" if fsync else "no fsync"
    print(
        f"  {WRITERS} writers, {total:,} records, {label:<22} {total / elapsed:9,.0f} records/s"
        f"   ({elapsed:.2f}s; chain verified, {path.stat().st_size / total:.0f} bytes/record)"
    )


async def main() -> None:
    only_chain = sys.argv[1:] == ["chain"]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        workspace = directory / "workspace"
        workspace.mkdir()
        with AuditLog(directory / "scope.jsonl", fsync=False) as log:
            await chain_overhead(workspace, log)
        parser_speed()
        if only_chain:
            return
        print("audit log throughput:")
        await audit_throughput(directory, fsync=True)
        await audit_throughput(directory, fsync=False)


if __name__ == "__main__":
    anyio.run(main)

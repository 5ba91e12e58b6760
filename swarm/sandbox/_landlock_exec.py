"""The Landlock launcher: confine one command, run it, and leave nothing behind.

Started by ``swarm.sandbox.landlock``, which imports it from this directory under
``python -I -S -c`` (its cached bytecode then saves compiling it each time) and calls
``main`` with ``--name=value... -- ARGV...``; run by path (``python -I -S
_landlock_exec.py ...``) it does the same. Stdlib and ctypes only (with
``_landlock_kernel`` beside it), so it starts fast and never imports the rest of swarm.
The launcher itself stays unconfined and outside the command's Landlock domain, so with
Landlock ABI 6 or later the command can neither signal nor ptrace the launcher that cleans
up after it.

Its child enters new namespaces when ``--namespaces`` says they can be made (``plain`` as
root, ``user`` inside a new user namespace): mount, PID, and for network none an empty
network namespace. There it forks the namespace's init, which mounts a fresh /proc (the
command sees no other process), binds the writable directories onto themselves,
bind-mounts read-only paths inside them read-only, covers hidden ones with an empty tmpfs,
remounts every other mount read-only, gives a private /dev/shm, then applies Landlock, the
seccomp filter against ``socket(AF_UNIX, ...)`` and drops every capability, forks the
command, waits for it, kills what is left in the namespace and exits with its status.
Without namespaces the child confines itself the same way (network none becomes Landlock
rules that block TCP only) and execs the command. Child and init die with their parent
(``PR_SET_PDEATHSIG``), and the kernel kills a PID namespace whose init dies: with
namespaces nothing survives even a SIGKILLed launcher.

The launcher ends as for SIGTERM when the process that started it dies, even SIGKILLed
(``PR_SET_PDEATHSIG``). It is a child subreaper: once the command is done it SIGKILLs every
remaining descendant (orphans of ``setsid cmd &`` and double forks are reparented to it) and reaps
them, and exits with the command's status (128+N for signal N). SIGTERM, SIGINT and SIGHUP
do the same at once. Exit status 126 with a ``swarm-landlock:`` message means the
confinement could not be set up; the command did not run.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own costs an import; type checkers treat this name as True
if TYPE_CHECKING:
    import signal
else:  # the C module: `signal` wraps it in enums, a third of the launcher's start-up
    import _signal as signal

if __package__:
    from swarm.sandbox import _landlock_kernel as kernel, _limits_exec as limits
else:  # run by path: the kernel module sits beside this file, outside any package
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    import _landlock_kernel as kernel  # type: ignore[import-not-found, no-redef]
    import _limits_exec as limits  # type: ignore[import-not-found, no-redef]

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
SetupError = kernel.SetupError


def _confine(options: Options, abi: int, last_cap: int) -> None:
    """Mounts (with namespaces), Landlock, the unix-socket filter, no capabilities, and
    the workspace as working directory."""
    deny, more = kernel.mount_confinement(
        options.namespaces,
        write=options.write,
        deny=options.deny,
        readonly=options.readonly,
        shm_size=options.tmpfs_size,
        read=options.read,
    )
    block_tcp = options.network == "none" and options.namespaces == "none"
    write = options.write + more
    ports = (int(options.connect_port),) if options.connect_port else ()
    kernel.restrict(
        abi, read=options.read, write=write, deny=deny, block_tcp=block_tcp, connect_ports=ports
    )
    kernel.deny_shared_kernel_state()
    kernel.drop_capabilities(last_cap)
    os.chdir(options.workspace)


def _fail(message: str, status: int = 126) -> None:
    print(f"swarm-landlock: {message}", file=sys.stderr, flush=True)
    os._exit(status)


def _exec(argv: list[str], env: dict[str, str], options: Options) -> None:
    try:
        limits.apply(options.limits())
    except (OSError, ValueError) as error:
        _fail(f"cannot set the resource limits: {error}")
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        _fail(f"{argv[0]}: command not found", 127)
    except OSError as error:
        _fail(f"{argv[0]}: {error.strerror}")


def exit_code(status: int) -> int:
    """A wait status as a shell reports it: the exit code, or 128+N for signal N."""
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _child(options: Options, env: dict[str, str], argv: list[str], launcher: int) -> None:
    """In the forked child: enter the namespaces, then confine and exec the command, or,
    with a new PID namespace, start its init and wait for it; never returns."""
    # If the launcher is SIGKILLed, the command dies with it rather than run on unwatched.
    kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != launcher:
        os._exit(126)
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    for sig in stops:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
    try:
        abi = kernel.abi_version()
        if abi < 1:
            raise SetupError("Landlock is not available")
        last_cap = int(kernel.read_text("/proc/sys/kernel/cap_last_cap"))  # before /proc may hide
        kernel.unshare(options.namespaces, options.network)
        if options.loopback == "up":  # the egress proxy's door listens there
            kernel.loopback_up()
        if options.namespaces == "none":
            _confine(options, abi, last_cap)
    except (SetupError, OSError) as error:
        _fail(str(error))
    if options.namespaces == "none":
        _exec(argv, env, options)
    init = os.fork()
    if init == 0:
        _init(options, env, argv, abi, last_cap)
    os._exit(exit_code(os.waitpid(init, 0)[1]))


def _init(options: Options, env: dict[str, str], argv: list[str], abi: int, cap: int) -> None:
    """PID 1 of the command's PID namespace: a fresh /proc, the confinement, then the
    command as its child; when the command ends, everything else in the namespace is
    killed (the kernel kills it anyway once this process exits). Never returns."""
    kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    # Same Landlock domain as the command, so only this keeps the command from ptracing
    # its init (a stopped init would never reap it and the call would hang).
    kernel.prctl(_PR_SET_DUMPABLE, 0)
    try:
        kernel.mount_proc()
        processes = options.limits().get("nproc", -1)
        if processes >= 0:
            try:  # noqa: SIM105 (contextlib would add to every command's start-up)
                limits.cap_processes(processes)
            except OSError:
                pass  # a kernel before 6.14: RLIMIT_NPROC alone (describe() says so)
        _confine(options, abi, cap)
    except (SetupError, OSError) as error:
        _fail(str(error))
    command = os.fork()
    if command == 0:
        _exec(argv, env, options)
    status = 0
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == command:
            break
    try:  # noqa: SIM105 (contextlib would add to every command's start-up)
        os.kill(-1, signal.SIGKILL)  # in a PID namespace: every process in it but this one
    except ProcessLookupError:
        pass  # none left
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    os._exit(exit_code(status))


def _descendants() -> list[int]:
    """Every live process below this one, from each thread's ``children`` file in /proc:
    reading the few files of the tree, not the stat file of every process on the machine.
    A file that is gone is a process that ended; its children are now this subreaper's,
    and ``_kill_all`` looks again. Without those files (a kernel built without
    ``CONFIG_PROC_CHILDREN``), from the parent ids of every process."""
    if not os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
        return _descendants_by_scan()
    found: list[int] = []
    pending = [os.getpid()]
    while pending:
        pid = pending.pop()
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for thread in threads:
            try:
                children = kernel.read_text(f"/proc/{pid}/task/{thread}/children").split()
            except OSError:
                continue
            found += map(int, children)
            pending += map(int, children)
    return found


def _descendants_by_scan() -> list[int]:
    """Every live process below this one, found from the parent ids in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = kernel.read_text(f"/proc/{entry}/stat")
        except OSError:
            continue  # gone meanwhile
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    pending = [os.getpid()]
    while pending:
        for pid in children.get(pending.pop(), []):
            found.append(pid)
            pending.append(pid)
    return found


def _kill_all() -> None:
    """SIGKILL every descendant and reap them all, until none is left."""
    while True:
        remaining = _descendants()
        if not remaining:
            return
        for pid in remaining:
            try:  # noqa: SIM105 (contextlib would add to the start-up of every command)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # already gone
        try:
            os.waitpid(-1, 0)
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _stop(signum: int, _frame: object) -> None:
    raise _Stopped(signum)


class Options:
    """The launcher's options, each given as ``--name=value``."""

    __slots__ = (
        "cgroup",
        "connect_port",
        "deny",
        "env_file",
        "limit",
        "loopback",
        "namespaces",
        "network",
        "parent",
        "read",
        "readonly",
        "tmpfs_size",
        "workspace",
        "write",
    )

    def __init__(self) -> None:
        self.workspace = ""
        self.env_file = ""
        self.network = "none"
        self.namespaces = "none"
        self.read: list[str] = []
        self.write: list[str] = []
        self.deny: list[str] = []
        self.readonly: list[str] = []
        self.limit: list[str] = []
        self.parent = ""
        self.tmpfs_size = ""
        self.loopback = ""
        self.connect_port = ""
        self.cgroup: list[str] = []

    def limits(self) -> dict[str, int]:
        """The resource limits (``--limit=cpu=600``...), by ``_limits_exec``'s names."""
        return limits.parse([f"--{item}" for item in self.limit] + ["-"])[0]


_CHOICES = {
    "network": ("none", "host"),
    "namespaces": ("plain", "user", "none"),
    "loopback": ("up", ""),
}


def parse(args: list[str]) -> tuple[Options, list[str]]:
    """``--name=value`` options up to ``--``, then the command. (No argparse: it costs a
    tenth of the launcher's start-up.)"""
    if "--" not in args:
        raise SetupError("usage: _landlock_exec.py --name=value... -- ARGV...")
    split = args.index("--")
    options = Options()
    for arg in args[:split]:
        name, equals, value = arg.removeprefix("--").partition("=")
        name = name.replace("-", "_")
        if not arg.startswith("--") or not equals or name not in Options.__slots__:
            raise SetupError(f"bad option {arg!r}")
        if name in _CHOICES and value not in _CHOICES[name]:
            raise SetupError(f"bad option {arg!r}: choose from {', '.join(_CHOICES[name])}")
        current = getattr(options, name)
        if isinstance(current, list):
            current.append(value)
        else:
            setattr(options, name, value)
    argv = args[split + 1 :]
    if not argv:
        raise SetupError("no command given after --")
    if not options.workspace or not options.env_file:
        raise SetupError("--workspace and --env-file are required")
    return options, argv


def read_env(path: str) -> dict[str, str]:
    """The command's environment from ``path`` (``NAME=value`` entries, each ended by a NUL
    byte: values may hold newlines, never NUL), and remove the file."""
    with open(path, "rb") as file:
        data = file.read()
    os.unlink(path)
    env = {}
    for entry in data.split(b"\0")[:-1]:
        name, equals, value = entry.partition(b"=")
        if not equals:
            raise SetupError(f"bad entry in {path}: {entry[:40]!r}")
        env[os.fsdecode(name)] = os.fsdecode(value)
    return env


def _join(files: list[str]) -> None:
    """Move this process (one thread here) into the command's cgroup, by each of
    ``files``: ``0`` to a v1 ``tasks`` file (the writing thread, without the lock that
    waits for an RCU grace period), its PID to a v2 ``cgroup.procs``. Everything it
    starts is then in the cgroup from its first instruction."""
    for path in files:
        who = "0" if os.path.basename(path) == "tasks" else str(os.getpid())
        try:
            with open(path, "w") as file:
                file.write(who)
        except OSError as error:
            raise SetupError(f"cannot join the command's cgroup ({path}): {error}") from None


def probe() -> dict[str, int]:
    """What this machine allows: the Landlock ABI and which namespaces can be made."""
    found = {"abi": kernel.abi_version()}
    for namespaces in ("plain", "user"):
        pid = os.fork()
        if pid == 0:
            try:
                kernel.unshare(namespaces, "none")
            except (SetupError, OSError):
                os._exit(1)
            os._exit(0)
        found[namespaces] = int(os.waitpid(pid, 0)[1] == 0)
    return found


def main(args: list[str]) -> int:
    """Run ``args`` (launcher options, ``--``, the command); return the exit status."""
    parent = os.getppid()
    if args == ["--probe"]:
        print(" ".join(f"{key}={value}" for key, value in probe().items()))
        return 0
    try:
        options, argv = parse(args)
        _join(options.cgroup)
        if options.parent:
            # swarm's pid, given by swarm: a wrapper that ran first (the cgroup's sh) may
            # have been orphaned already, and then getppid() above named init.
            parent = int(options.parent)
        options.limits()  # a bad limit fails here, before anything starts
        env = read_env(options.env_file)
    except (SetupError, OSError, ValueError) as error:
        print(f"swarm-landlock: {error}", file=sys.stderr, flush=True)
        return 126
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    for sig in stops:
        signal.signal(sig, _stop)
    try:
        kernel.check(kernel.prctl(_PR_SET_CHILD_SUBREAPER, 1), "prctl(CHILD_SUBREAPER)")
        # When swarm dies (even SIGKILLed), clean up as for SIGTERM: without this the
        # launcher and the command ran on, orphaned.
        kernel.check(kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM), "prctl(PDEATHSIG)")
        if os.getppid() != parent:
            raise _Stopped(signal.SIGTERM)  # swarm was gone before the line above
        # Blocked across the fork so the child never runs this process's handlers.
        signal.pthread_sigmask(signal.SIG_BLOCK, stops)
        launcher = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(options, env, argv, launcher)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        result = exit_code(os.waitpid(pid, 0)[1])
    except _Stopped as stopped:
        result = 128 + stopped.signum
    except SetupError as error:
        print(f"swarm-landlock: {error}", file=sys.stderr, flush=True)
        result = 126
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # cleanup runs to the end once started
    _kill_all()
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The ``swarm`` command run as a user runs it, without paying Python's start and swarm's
imports for each run: ``run_swarm`` is ``subprocess.run([python, "-m", "swarm", ...])``
with the same arguments and result, served by a fork server.

Each test process starts one server the first time it runs ``swarm``: a Python that has
imported the command line and what its commands load, and then only forks. A run is a
fork of it in its own process, with the test's arguments, working directory, whole
environment and standard streams (passed as file descriptors), run as ``python -m
swarm`` runs (``runpy``, ``__main__``, interpreter exit with atexit handlers and the exit
code or signal). What it skips is what every run would repeat: the interpreter's start
and about a second of imports. Nothing of one run reaches another: each is forked from
the server, which never runs a command itself, and the server holds no thread.

``start_swarm`` starts a run the same way without waiting for it, for a test that
signals it while it runs (``ForkedRun``: ``poll``, ``wait``, ``send_signal``).

What a fork cannot show is the start itself (an import that fails, what ``import
swarm`` costs, the hint of a missing extra): those tests start a real process
(``tests/test_startup.py``, ``tests/test_install_hints.py``), as do tests that read a
running command's output as it comes. A run whose environment sets the interpreter's own
variables (``PYTHONPATH``, ``PYTHONSAFEPATH``...) otherwise than the test process is a
real process too. ``SWARM_TEST_FORK=0`` runs every command as a real process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

SERVER = r"""
import atexit, gc, importlib, json, os, pkgutil, runpy, select, socket, sys, threading
import traceback

import swarm

for module in pkgutil.walk_packages(swarm.__path__, "swarm."):
    if module.name != "swarm.__main__":
        try:  # what any command may load (an extra that is not installed stays out)
            importlib.import_module(module.name)
        except BaseException:
            pass
if threading.active_count() > 1:
    sys.exit("swarm's modules started a thread on import: a fork server cannot serve")

gc.freeze()  # no collection in a fork walks (and so copies) the imported heap
listener, parent = socket.socket(fileno=int(sys.argv[1])), int(sys.argv[2])


def serve(conn):
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    request = json.loads(data)
    worker = os.fork()
    if worker == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["swarm", *request["args"]]
        code = 0
        try:
            runpy.run_module("swarm", run_name="__main__", alter_sys=True)
        except SystemExit as stop:
            code = stop.code
        except BaseException:
            traceback.print_exc()
            code = 1
        # As the interpreter's exit, less tearing down the imported heap: the atexit
        # handlers (weakref.finalize ones too), the streams flushed, the code or message.
        atexit._run_exitfuncs()
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        os._exit(code or 0)
    for fd in fds:
        os.close(fd)
    try:
        conn.send(json.dumps({"pid": worker}).encode())
        _, status = os.waitpid(worker, 0)
        conn.send(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode())
    finally:  # the test may have stopped waiting (a time-out)
        os._exit(0)


while True:
    ready, _, _ = select.select([listener, parent], [], [])
    while True:  # the finished servers of earlier runs
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    if parent in ready:  # the test process ended
        os._exit(0)
    conn, _ = listener.accept()
    if os.fork() == 0:
        listener.close()
        serve(conn)
    conn.close()
"""

_lock = threading.Lock()
_server: tuple[subprocess.Popen[bytes], str, int] | None = None
_started_with = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
"""The interpreter's own variables the server starts with (this process's, at import)."""


def _address() -> str | None:
    """The server's socket, started the first time (``None`` when it could not serve)."""
    global _server
    with _lock:
        if _server is not None:
            return _server[1] if _server[0].poll() is None else None
        folder = tempfile.mkdtemp(prefix="swarm-fork-")
        path = os.path.join(folder, "server")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(path)
        listener.listen(64)
        alive_read, alive_write = os.pipe()  # ends when this process does
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(listener.fileno()), str(alive_read)],
            pass_fds=(listener.fileno(), alive_read),
            stdin=subprocess.DEVNULL,
            env={**_clear_of_python(os.environ), **_started_with, "PYTHONUNBUFFERED": "1"},
        )
        listener.close()
        os.close(alive_read)
        _server = (server, path, alive_write)
        atexit.register(_stop, server, alive_write)
        return path


def _stop(server: subprocess.Popen[bytes], alive: int) -> None:
    os.close(alive)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()


def _clear_of_python(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith("PYTHON")}


def _starts_alike(env: Mapping[str, str]) -> bool:
    """Whether Python started with ``env`` starts as the server did: a ``PYTHONPATH``,
    ``PYTHONSAFEPATH`` or other variable of the interpreter's own that differs needs a
    process of its own (the server has imported swarm already, from its own path)."""
    python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    python.pop("PYTHONUNBUFFERED", None)
    started = dict(_started_with)
    started.pop("PYTHONUNBUFFERED", None)
    return python == started


def forking() -> bool:
    """Whether runs are forked (``SWARM_TEST_FORK=0``: real processes)."""
    return os.environ.get("SWARM_TEST_FORK", "1") != "0"


def run_swarm(
    args: Sequence[str | Path],
    *,
    cwd: str | Path,
    env: Mapping[str, str],
    timeout: float = 120,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """``swarm ARGS`` run in ``cwd`` with the whole environment ``env``, its output
    captured as text: what ``subprocess.run([sys.executable, "-m", "swarm", *args],
    capture_output=True, text=True, ...)`` gives, ``TimeoutExpired`` included."""
    argv = [str(a) for a in args]
    address = _address() if forking() and _starts_alike(env) else None
    if address is not None:
        try:
            return _forked(address, argv, cwd, env, timeout, stdin)
        except _Unserved:
            pass
    return subprocess.run(
        [sys.executable, "-m", "swarm", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(env),
        stdin=stdin,
    )


class ForkedRun:
    """A ``swarm`` run started by the fork server and not waited for: the part of
    ``subprocess.Popen`` that tests which signal a running command use (``pid``,
    ``poll``, ``wait``, ``send_signal``, ``kill``, ``returncode``)."""

    def __init__(self, conn: socket.socket, pid: int, argv: list[str]) -> None:
        self._conn = conn
        self.pid = pid
        self.args = ["swarm", *argv]
        self.returncode: int | None = None

    def _receive(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                data = self._conn.recv(4096)
            except (BlockingIOError, TimeoutError):
                return None
            # the server sends the code once the run's process is waited for
            self.returncode = json.loads(data)["code"] if data else -signal.SIGKILL
            self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        return self._receive(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._receive(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # not yet waited for: the PID is still the run's
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_swarm(
    args: Sequence[str | Path], *, cwd: str | Path, env: Mapping[str, str]
) -> ForkedRun | subprocess.Popen[bytes]:
    """``swarm ARGS`` started in ``cwd`` with the whole environment ``env``, its input
    and output ``/dev/null``, and not waited for: what ``subprocess.Popen([sys.executable,
    "-m", "swarm", *args], ...)`` starts, forked from the server when it can be."""
    argv = [str(a) for a in args]
    address = _address() if forking() and _starts_alike(env) else None
    if address is not None:
        null = os.open(os.devnull, os.O_RDWR)
        try:
            return ForkedRun(*_request(address, argv, cwd, env, [null, null, null]), argv)
        except _Unserved:
            pass
        finally:
            os.close(null)
    return subprocess.Popen(
        [sys.executable, "-m", "swarm", *argv],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


class _Unserved(Exception):
    """The server did not take the run (it ended): nothing of it started."""


def _forked(
    address: str,
    argv: list[str],
    cwd: str | Path,
    env: Mapping[str, str],
    timeout: float,
    stdin: int | None,
) -> subprocess.CompletedProcess[str]:
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY) if stdin == subprocess.DEVNULL else None
    given = null if null is not None else (stdin if stdin is not None else 0)
    try:
        conn, pid = _request(address, argv, cwd, env, [given, out_write, err_write])
    except _Unserved:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        for fd in (out_write, err_write, *([] if null is None else [null])):
            os.close(fd)
    with conn:
        deadline = time.monotonic() + timeout
        streams = {out_read: bytearray(), err_read: bytearray()}
        reading = set(streams)
        try:
            while reading:
                left = deadline - time.monotonic()
                ready, _, _ = select.select(list(reading), [], [], max(left, 0))
                if not ready and left <= 0:
                    _kill(pid)
                    raise subprocess.TimeoutExpired(
                        ["swarm", *argv], timeout, output=_text(streams[out_read])
                    )
                for fd in ready:
                    data = os.read(fd, 65536)
                    if data:
                        streams[fd] += data
                    else:
                        reading.discard(fd)
            conn.settimeout(max(deadline - time.monotonic(), 1))
            code = json.loads(conn.recv(4096))["code"]
        finally:
            for fd in streams:
                os.close(fd)
    return subprocess.CompletedProcess(
        ["swarm", *argv], code, _text(streams[out_read]), _text(streams[err_read])
    )


def _request(
    address: str, argv: list[str], cwd: str | Path, env: Mapping[str, str], fds: list[int]
) -> tuple[socket.socket, int]:
    """Ask the server for a run with ``fds`` as its standard streams: the connection its
    exit code will come on, and the run's PID; ``_Unserved`` when it did not take it."""
    request = json.dumps({"args": argv, "cwd": str(cwd), "env": dict(env)}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(address)
        socket.send_fds(conn, [request], fds)
        pid = json.loads(conn.recv(4096) or b"null")["pid"]
    except (OSError, TypeError) as exc:
        conn.close()
        raise _Unserved from exc
    return conn, pid


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _text(data: bytearray) -> str:
    """As ``text=True`` decodes: the locale's encoding, universal newlines."""
    return data.decode(errors="strict").replace("\r\n", "\n").replace("\r", "\n")

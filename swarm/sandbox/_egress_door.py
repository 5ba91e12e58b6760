"""The door out of a sandbox with a network allow-list, run inside it in front of the command.

``python -I -S _egress_door.py FD PORT -- COMMAND...``: listens on ``127.0.0.1:PORT`` of
the sandbox's own (empty) network namespace, then forks: the child accepts connections
and hands each accepted socket to swarm's proxy over ``FD`` (one end of a socket pair
swarm made; ``SCM_RIGHTS``), and the parent closes both and becomes the command. The
door never makes a socket that could reach anything (the seccomp filter still refuses
unix sockets): the proxy outside reads and writes the sockets it is handed, so bytes
leave the sandbox only through it. When swarm's end closes, the door exits; when the
command ends, the sandbox kills it with everything else.

Stdlib only, run by path without importing swarm (as ``_landlock_exec`` is).
"""

from __future__ import annotations

import os
import socket
import sys

__all__ = ["main"]


def _serve(listener: socket.socket, control: socket.socket) -> None:
    """Hand every accepted connection to the proxy until the proxy's end closes."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the command's output must end when the command does
        os.dup2(null, fd)
    while True:
        connection, _peer = listener.accept()
        try:
            socket.send_fds(control, [b"c"], [connection.fileno()])
        except OSError:
            os._exit(0)
        finally:
            connection.close()


def main(argv: list[str]) -> None:
    """Open the door and run the command (see the module docstring)."""
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: _egress_door.py FD:PORT -- COMMAND...\n")
        raise SystemExit(2)
    fd, port = (int(part) for part in argv[1].split(":"))
    control = socket.socket(fileno=fd)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() == 0:
        try:
            _serve(listener, control)
        finally:
            os._exit(0)
    listener.close()
    control.close()
    os.execvp(argv[3], argv[3:])


if __name__ == "__main__":
    main(sys.argv)

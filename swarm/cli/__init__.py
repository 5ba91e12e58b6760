"""The ``swarm`` command.

Exit codes: 0 success; 1 the run, a scenario test or a verification failed; 2 bad input
(files, arguments, no model configured); 130 interrupted (Ctrl-C), with the run record
written and resumable.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import logging
import os
import re
import sys
from collections.abc import MutableMapping, Sequence
from typing import Any

from swarm import _log as swarm_log
from swarm._visible import visible
from swarm.cli.commands import Later, add_commands  # arguments only: no command's code
from swarm.cli.exits import BAD_INPUT, FAILED, INTERRUPTED, OK
from swarm.errors import ConfigError, SwarmError

__all__ = ["main"]


def _visible_event(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """A structlog processor: a log line's message made ``visible`` (it may quote a path
    or an error a model chose, and the console renderer prints it as it is; the other
    values it prints with ``repr``, which escapes them already)."""
    if isinstance(event.get("event"), str):
        event["event"] = visible(event["event"])
    return event


def _configure_logging(verbose: bool) -> None:
    """Log lines to stderr, warnings and up (debug with ``-v``); structlog (and the rich
    it imports) is loaded only when a line is first logged (``swarm._log``)."""

    def setup() -> None:
        import structlog

        structlog.configure(
            # sys.stderr as it is at each line, not at start: the live view redirects it to
            # print log lines above its region instead of into the tree
            logger_factory=lambda *args: structlog.PrintLogger(sys.stderr),
            wrapper_class=structlog.make_filtering_bound_logger(
                logging.DEBUG if verbose else logging.WARNING
            ),
            processors=[
                swarm_log.once,
                structlog.processors.add_log_level,
                _visible_event,
                structlog.dev.ConsoleRenderer(colors=False),
            ],
        )

    swarm_log.configure(setup)


class _Parser(argparse.ArgumentParser):
    """Exit 2 with a suggestion for a misspelt flag or command; ``-v`` is accepted by every
    command, before or after it (``swarm -v run ...`` and ``swarm run ... -v``)."""

    argv: Sequence[str] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SUPPRESS: a command that is not given -v keeps what the top level parsed
        self.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=_VERBOSE
        )

    def error(self, message: str) -> None:  # type: ignore[override]
        # extra words are found by the top level: show the usage of the command they follow
        where = _chosen(self, self.argv) if "unrecognized" in message else self
        where.print_usage(sys.stderr)
        sys.stderr.write(f"{where.prog}: error: {message}{_suggestion(where, message)}\n")
        raise SystemExit(BAD_INPUT)


_VERBOSE = "log debug details"


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """`` (did you mean --model?)`` for an unknown flag or choice close to a known one."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        known = re.findall(r"'([^']*)'", choice[2])
        close = difflib.get_close_matches(choice[1], known, n=1)
        return f" (did you mean '{close[0]}'?)" if close else ""
    unknown = re.match(r"unrecognized arguments: (.*)", message)
    if not unknown:
        return ""
    flags = _flags_of(parser)
    hints = {}
    for word in unknown[1].split():
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=")[0], flags, n=1)
            hints.update({word: close[0]} if close else {})
    if len(hints) == 1:
        return f" (did you mean {next(iter(hints.values()))}?)"
    return (
        f" (did you mean {', '.join(f'{v} for {k}' for k, v in hints.items())}?)" if hints else ""
    )


def _chosen(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The deepest (sub)command parser that the words of ``argv`` name."""
    for word in argv:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) and word in action.choices:
                return _chosen(action.choices[word], argv[argv.index(word) + 1 :])
    return parser


def _flags_of(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings]


def _version() -> str:
    from swarm._dist import version

    return version()


class _Version(argparse.Action):
    """``--version``: argparse's own action, but the version is looked up when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        sys.stdout.write(f"swarm {_version()}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="swarm",
        description="Run teams of agents defined in files, and inspect what they did.",
    )
    parser.set_defaults(verbose=False)
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="show program's version number and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    _Parser.argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        handler = args.handler
        if isinstance(handler, Later):
            handler = handler.load()
        if argv is None:
            # The command's own process: everything imported so far (the command's module
            # and what it needs) lives until exit, so take it out of the garbage
            # collector's full passes (over this import heap each pass costs tens of
            # milliseconds, and a large fan-out triggers several).
            gc.freeze()
        code: int = handler(args)
        return code
    except ConfigError as exc:
        sys.stderr.write(f"error: {visible(str(exc), multiline=True)}\n")
        return BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return INTERRUPTED
    except SwarmError as exc:
        sys.stderr.write(f"error: {visible(str(exc), multiline=True)}\n")
        return FAILED
    except BrokenPipeError:
        # the reader of stdout left (`| head`): nothing more can be shown, and Python's
        # last flush at exit must not fail either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK


def entry_point() -> None:
    """The console script."""
    raise SystemExit(main())

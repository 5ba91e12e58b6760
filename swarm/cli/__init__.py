"""The ``swarm`` command.

Exit codes: 0 success; 1 the run, a scenario test or a verification failed; 2 bad input
(files, arguments, no model configured); 130 interrupted (Ctrl-C), with the run record
written and resumable.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import logging
import sys
from collections.abc import Sequence

import structlog

from swarm.cli.exits import BAD_INPUT, FAILED, INTERRUPTED, OK
from swarm.errors import ConfigError, SwarmError

__all__ = ["main"]


def _configure_logging(verbose: bool) -> None:
    structlog.configure(
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.WARNING
        ),
        processors=[
            structlog.processors.add_log_level,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(BAD_INPUT)


def _version() -> str:
    try:
        return importlib.metadata.version("swarm")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    from swarm.cli.batch import add_commands as add_batch
    from swarm.cli.inspect import add_commands as add_inspect
    from swarm.cli.local import add_commands as add_local
    from swarm.cli.records import add_commands as add_records
    from swarm.cli.running import add_commands as add_running

    parser = _Parser(
        prog="swarm",
        description="Run teams of agents defined in files, and inspect what they did.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("--version", action="version", version=f"swarm {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_running(sub)
    add_batch(sub)
    add_inspect(sub)
    add_records(sub)
    add_local(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    if argv is None:
        # The command's own process: everything imported so far lives until exit, so take
        # it out of the garbage collector's full passes (over this import heap each pass
        # costs tens of milliseconds, and a large fan-out triggers several).
        gc.freeze()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        code: int = args.handler(args)
        return code
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return INTERRUPTED
    except SwarmError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return FAILED
    except BrokenPipeError:
        return OK


def entry_point() -> None:
    """The console script."""
    raise SystemExit(main())

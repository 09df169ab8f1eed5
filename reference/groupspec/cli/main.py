"""Entry point of the ``groupspec`` command.

Each command group lives in its own module under ``groupspec.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a handler taking the
parsed arguments and returning the exit code. Add a module to ``COMMAND_MODULES`` to add
a command.

Exit status, for every command (groupspec.cli.inputs): 0 done and nothing found, 1 a
protocol finding, 2 bad input (``error: FILE: PLACE: what`` or ``error: --option: what``
on stderr), 130 interrupted (Ctrl-C), without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from groupspec.cli.inputs import EXIT_INPUT, EXIT_INTERRUPTED, InputError, Parser, report

COMMAND_MODULES: tuple[str, ...] = (
    "groupspec.cli.coordinator_partition",
    "groupspec.cli.states",
    "groupspec.cli.assign",
    "groupspec.cli.simulate",
    "groupspec.cli.broker",
    "groupspec.cli.record",
    "groupspec.cli.pipeline",
    "groupspec.cli.spec",
    "groupspec.cli.validate",
    "groupspec.cli.conformance",
    "groupspec.cli.crosscheck",
    "groupspec.cli.check",
    "groupspec.cli.trace",
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="groupspec",
        description="The formal reference for Apache Kafka's consumer-group rebalance protocol.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _exit_code(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return EXIT_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    # The one place that turns an interrupt into exit status 130 and bad input raised in
    # any command into the house error message.
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help, or an argument error (already printed)
            return _exit_code(e)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return EXIT_INPUT
        try:
            code: int = func(args)
        except BrokenPipeError:  # e.g. `groupspec simulate | head`
            return 0
        except InputError as e:
            return report(e)
        return code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

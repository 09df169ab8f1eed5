"""Entry point of the ``groupspec`` command.

Each command group lives in its own module under ``groupspec.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a handler taking the
parsed arguments and returning the exit code. Add a module to ``COMMAND_MODULES`` to add
a command.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

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
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groupspec",
        description="The formal reference for Apache Kafka's consumer-group rebalance protocol.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        code: int = func(args)
    except BrokenPipeError:  # e.g. `groupspec simulate | head`
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())

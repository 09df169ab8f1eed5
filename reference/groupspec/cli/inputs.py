"""One input-error discipline for every command (docs/cli.md, "Bad input").

Every command checks its arguments and files before it starts the work, and reports bad
input in one format on stderr, with exit status 2::

    error: FILE: PLACE: what          (a file's content: PLACE is a line, a JSON path)
    error: --option: what             (an argument)

Exit status 1 means a protocol finding (a violation, an invariant failed, a model not as
expected) and nothing else; 130 means interrupted (Ctrl-C). :func:`groupspec.cli.main.main`
turns an :class:`InputError` raised anywhere in a command into that message, so commands
raise it instead of printing.

The limits below bound the work any input can ask for; each is documented in docs/cli.md.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

EXIT_OK, EXIT_FINDING, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

#: the largest JSON/TOML input file read whole (assign input, scenarios, sweep configs)
MAX_INPUT_FILE_BYTES = 64 * 1024 * 1024
#: partitions of all topics together in `assign` (keeps a run within memory; scenarios have their own
#: limits in groupspec.sim.scenario)
MAX_PARTITIONS = 1_000_000
#: members of a group in `assign`
MAX_MEMBERS = 100_000
#: seeds of a sweep
MAX_SEEDS = 10_000


class InputError(Exception):
    """Bad input: ``where`` (``FILE: PLACE`` or ``--option``) and ``what`` is wrong."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)
        self.where = where
        self.what = what


def report(message: object) -> int:
    """Print ``error: MESSAGE`` on stderr; the exit status of bad input."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INPUT


def fail(where: str, what: str) -> int:
    return report(InputError(where, what))


# ------------------------------------------------------------------ argument types
def int_in(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [lo, hi] (either bound may be open)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo:,}, got {_short(value)}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:,}, got {_short(value)}")
        return value

    parse.__name__ = "integer"
    return parse


def float_in(lo: float, hi: float, lo_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number in [lo, hi] ((lo, hi] when ``lo_open``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if value < lo or (lo_open and value == lo):
            raise argparse.ArgumentTypeError(f"must be {'more than' if lo_open else 'at least'} {lo:g}, got {text}")
        if value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def _short(n: int) -> str:
    text = str(n) if n.bit_length() < 3000 else "a number of more than 900 digits"
    return text if len(text) <= 30 else f"{text[:12]}... ({len(text)} digits)"


# ------------------------------------------------------------------ files
def read_text(path: str, limit: int = MAX_INPUT_FILE_BYTES) -> str:
    """A UTF-8 text file's content; :class:`InputError` naming the file if it is missing,
    not a regular file, larger than ``limit`` or not UTF-8 (with the byte offset)."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(path, "is a directory, not a file")
        size = p.stat().st_size
        if size > limit:
            raise InputError(path, f"{size:,} bytes; the limit is {limit:,}")
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise InputError(path, f"line {line}: not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})") from None


def output_file(path: str | Path, option: str) -> Path:
    """Check, before any work, that ``path`` can be written as a file: not a directory, its
    directory exists and is writable. Creates nothing."""
    p = Path(path)
    if p.is_dir():
        raise InputError(option, f"{p} is a directory; expected a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(option, f"{p}: directory {parent} does not exist")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(option, f"{p}: not writable")
    if not p.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(option, f"{p}: directory {parent} is not writable")
    return p


def output_dir(path: str | Path, option: str) -> Path:
    """Check, before any work, that ``path`` can be used as an output directory: an
    existing writable directory, or a missing one whose parent exists and is writable (only
    the last component is created, later, by the command). Creates nothing."""
    p = Path(path)
    if p.exists():
        if not p.is_dir():
            raise InputError(option, f"{p} exists and is not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise InputError(option, f"{p}: not writable")
        return p
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(option, f"{p}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(option, f"{p}: directory {parent} is not writable")
    return p


def spark_master(url: str | None, option: str = "--master") -> str | None:
    """A Spark master URL of a form Spark accepts (checked before a session is started)."""
    if url is None:
        return None
    import re

    forms = (r"local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?", r"local-cluster\[\d+,\s*\d+,\s*\d+\]",
             r"(spark|mesos|k8s)://\S+", r"yarn")
    if not any(re.fullmatch(f, url) for f in forms):
        raise InputError(option, f"{url!r} is not a Spark master URL "
                                 "(local, local[N], local[*], spark://HOST:PORT, yarn, k8s://..., mesos://...)")
    return url


# ------------------------------------------------------------------ the parser
class Parser(argparse.ArgumentParser):
    """argparse with the house error format: ``error: --option: what`` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):
            name, _, what = message[len("argument "):].partition(": ")
            message = f"{name.split('/')[-1]}: {what}"
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"error: {message}\n")


def broker_config_arg(text: str) -> tuple[str, str]:
    """An argparse type: ``NAME=VALUE``, a broker setting the reference models, its value
    an integer (checked alone here; together, as a configuration, where they are used)."""
    from groupspec.coordinator.config import broker_setting

    try:
        return broker_setting(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


broker_config_arg.__name__ = "broker setting"

"""``groupspec trace``: trace files themselves.

``groupspec trace convert IN OUT`` copies a trace between JSON Lines and Parquet, both
ways. JSON Lines -> Parquet writes the columnar layout (docs/validator.md, "Parquet
traces"); Parquet -> JSON Lines gives back the exact bytes a columnar file was made from,
bad lines, a missing final newline and all, and the lines of an older text-layout file.
The output format is told by OUT's suffix (``.parquet``, ``.jsonl``) or ``--to``; the
input's by its content (Parquet's magic bytes; gzip-compressed JSON Lines is read too).
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from groupspec.cli.inputs import EXIT_OK, InputError

#: rows between progress lines (and the size from which they are shown)
PROGRESS_ROWS = 65_536

_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "trace", help="trace files: convert between JSON Lines and Parquet",
        description="Work on trace files themselves (the trace format is docs/validator.md's).",
    )
    tsub = p.add_subparsers(dest="trace_command", metavar="SUBCOMMAND", required=True)
    c: argparse.ArgumentParser = tsub.add_parser(
        "convert", help="copy a trace between JSON Lines and (columnar) Parquet, losslessly",
        description=(
            "Copy the trace IN to OUT in the other format. JSON Lines -> Parquet writes the "
            "columnar layout, which keeps every byte of IN (lines that do not parse included); "
            "Parquet -> JSON Lines writes those bytes back. The output format comes from OUT's "
            "suffix (.parquet, .jsonl) or --to."
        ),
    )
    c.add_argument("input", metavar="IN", help="a trace: JSON Lines (optionally gzip-compressed) or Parquet")
    c.add_argument("output", metavar="OUT", help="the file to write (replaced if it exists)")
    c.add_argument("--to", choices=("jsonl", "parquet"), help="OUT's format (default: from OUT's suffix)")
    c.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")
    c.set_defaults(func=run_convert)


def _target(args: argparse.Namespace) -> str:
    if args.to:
        return str(args.to)
    suffix = Path(args.output).suffix.lower()
    fmt = _SUFFIXES.get(suffix)
    if fmt is None:
        raise InputError("--to", f"cannot tell the format of {args.output} from its suffix "
                                 f"{suffix or '(none)'}: name it .parquet or .jsonl, or give --to jsonl|parquet")
    return fmt


def _read_input(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None
    if raw.startswith(b"\x1f\x8b"):
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(path, f"not a readable gzip file: {e}") from None
    return raw


def _write(path: str, write: Any) -> None:
    """Write through a temporary file beside ``path``, renamed when complete."""
    out = Path(path)
    tmp = out.with_name(f".{out.name}.partial")
    try:
        write(tmp)
        os.replace(tmp, out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(path, f"cannot write: {e.strerror or e}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def run_convert(args: argparse.Namespace) -> int:
    target = _target(args)
    src, dst = str(args.input), str(args.output)
    if os.path.abspath(src) == os.path.abspath(dst):
        raise InputError(dst, "OUT is IN: give another file")
    raw = _read_input(src)
    is_parquet = raw.startswith(b"PAR1")
    t0 = time.perf_counter()

    def say(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    try:
        from groupspec.trace import columnar, parquet
        if target == "parquet":
            if is_parquet:
                raise InputError(src, "already a Parquet trace (convert it to JSON Lines with --to jsonl)")
            lines = list(columnar.split_lines(raw))
            total = len(lines)

            def progress(done: int) -> None:
                if total > PROGRESS_ROWS:
                    say(f"{src}: {done:,} of {total:,} lines ({time.perf_counter() - t0:.1f} s)")

            rows = [0]

            def write(tmp: Path) -> None:
                rows[0] = columnar.write_lines(lines, tmp, progress)

            _write(dst, write)
            raw_rows = _raw_rows(dst)
            say(f"{src} -> {dst}: {rows[0]:,} lines as columnar Parquet, {raw_rows:,} kept as raw text "
                f"(not an event in canonical form) ({time.perf_counter() - t0:.1f} s)")
            return EXIT_OK
        if not is_parquet:
            raise InputError(src, "not a Parquet trace (it is read as JSON Lines; convert it with --to parquet)")
        try:
            data = parquet.parquet_to_jsonl_bytes(src)
        except parquet.ParquetUnavailable as e:
            raise InputError(src, str(e)) from None
        except (columnar.ColumnarError, parquet.LostBytes) as e:
            raise InputError(src, str(e)) from None

        def write_jsonl(tmp: Path) -> None:
            tmp.write_bytes(data)

        _write(dst, write_jsonl)
        n = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        say(f"{src} -> {dst}: {n:,} lines of JSON Lines ({time.perf_counter() - t0:.1f} s)")
        return EXIT_OK
    except InputError:
        raise
    except ImportError as e:
        raise InputError(src, f"Parquet needs pyarrow: pip install 'groupspec[spark]' ({e})") from None
    except Exception as e:  # pyarrow's errors for a damaged file have no common base
        raise InputError(src, f"not a readable Parquet trace: {e}") from None


def _raw_rows(path: str) -> int:
    import pyarrow.parquet as pq

    col = pq.read_table(path, columns=["raw"]).column("raw")
    return int(len(col) - col.null_count)

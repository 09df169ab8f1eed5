"""Trace files as Parquet: one row per line of the JSON Lines form.

Each row keeps the original line number and the event's JSON text, so a Parquet copy of
a trace reads back exactly as the JSON Lines file did (bad lines included) and the
validator gives identical verdicts on both. Typed columns beside the text (``kind``,
``seq``, ``group_id``, ``api``, ``connection``, ``sent_ms``, ``received_ms``) let Spark or
DuckDB query a trace without parsing JSON; they are null where the line does not parse.

pyarrow is optional (``pip install groupspec[spark]``); without it these functions raise
:class:`ParquetUnavailable` saying so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from groupspec.trace.events import Event
from groupspec.trace.jsonl import event_to_json

#: Parquet files start (and end) with these four bytes.
MAGIC = b"PAR1"

COLUMNS: tuple[tuple[str, str], ...] = (
    ("line", "int64"),
    ("text", "string"),
    ("kind", "string"),
    ("seq", "int64"),
    ("group_id", "string"),
    ("api", "string"),
    ("connection", "string"),
    ("sent_ms", "float64"),
    ("received_ms", "float64"),
    ("ended", "bool_"),
)


class ParquetUnavailable(RuntimeError):
    """pyarrow is not installed."""


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ParquetUnavailable(
            "reading or writing Parquet traces needs pyarrow: pip install 'groupspec[spark]' "
            f"(or pip install pyarrow) ({e})"
        ) from None
    return pa, pq


def is_parquet(path: str | Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def _row(line: int, text: str | None, ended: bool) -> dict[str, Any]:
    row: dict[str, Any] = {name: None for name, _ in COLUMNS}
    row["line"], row["text"], row["ended"] = line, text, ended
    if text is None:
        return row
    try:
        obj = json.loads(text)
    except ValueError:
        return row
    if not isinstance(obj, dict):
        return row

    def pick(key: str, tp: type | tuple[type, ...]) -> Any:
        v = obj.get(key)
        return v if isinstance(v, tp) and not isinstance(v, bool) else None

    row["kind"] = pick("kind", str)
    row["seq"] = pick("seq", int)
    row["api"] = pick("api", str)
    row["connection"] = pick("connection", str)
    row["sent_ms"] = pick("sent_ms", (int, float))
    row["received_ms"] = pick("received_ms", (int, float))
    gid = pick("group_id", str)
    rec = obj.get("record")
    if gid is None and isinstance(rec, dict) and isinstance(rec.get("group_id"), str):
        gid = rec["group_id"]
    row["group_id"] = gid
    for key in ("seq",):
        if isinstance(row[key], int) and not -(2**63) <= row[key] < 2**63:
            row[key] = None
    for key in ("sent_ms", "received_ms"):
        if row[key] is not None:
            row[key] = float(row[key])
    return row


def write_lines(lines: Iterable[tuple[int, str | None, bool]], path: str | Path) -> int:
    """Write (line number, JSON text, whether a newline ended it) as a Parquet trace;
    returns the row count. A text of None stands for a line that was not UTF-8; a line not
    ended by a newline is the cut-off end of a truncated file."""
    pa, pq = _pyarrow()
    rows = [_row(no, text, ended) for no, text, ended in lines]
    schema = pa.schema([(name, getattr(pa, tp)()) for name, tp in COLUMNS])
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, str(path))
    return len(rows)


def write_events(events: Iterable[Event], path: str | Path) -> int:
    """Write events (the header first, as in JSON Lines) as a Parquet trace."""
    texts = (json.dumps(event_to_json(e), separators=(",", ":")) for e in events)
    return write_lines(((i, t, True) for i, t in enumerate(texts, start=1)), path)


def jsonl_to_parquet(src: str | Path, dst: str | Path) -> int:
    """Copy a JSON Lines trace to Parquet, line numbers and unreadable lines included."""
    with open(src, "rb") as fh:
        raw = fh.read()
    rows: list[tuple[int, str | None, bool]] = []
    chunks = raw.split(b"\n")
    for no, chunk in enumerate(chunks, start=1):
        if not chunk.strip():
            continue
        ended = no < len(chunks)
        try:
            rows.append((no, chunk.decode("utf-8").rstrip("\r"), ended))
        except UnicodeDecodeError:
            rows.append((no, None, ended))  # kept as a row so that the reader reports it too
    return write_lines(rows, dst)


def read_lines(path: str | Path) -> Iterator[tuple[int, str | None, bool]]:
    """(line number, JSON text, whether a newline ended it) of a Parquet trace, in line
    order (text None: the line was not UTF-8)."""
    _, pq = _pyarrow()
    table = pq.read_table(str(path), columns=["line", "text", "ended"])
    lines = table.column("line").to_pylist()
    texts = table.column("text").to_pylist()
    ended = table.column("ended").to_pylist()
    rows = sorted(zip(lines, texts, ended, strict=True), key=lambda p: p[0] if isinstance(p[0], int) else 0)
    for no, text, end in rows:
        if isinstance(no, int):
            yield no, text if isinstance(text, str) else None, end is not False

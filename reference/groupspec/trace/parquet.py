"""Trace files as Parquet: one row per line of the JSON Lines form, in one of two layouts.

The *columnar* layout (:mod:`groupspec.trace.columnar`, schema metadata
``groupspec.layout`` = ``columnar-v1``) is what the writers here produce: the decoded event
in typed columns and Arrow structs, the line's bytes only where they are not the canonical
JSON of its event, so the validator decodes it in bulk and it converts back to the exact
JSON Lines bytes (:func:`parquet_to_jsonl`).

The older *text* layout (no ``groupspec.layout`` metadata; :func:`write_text_lines`) keeps
each line's number and JSON text, with typed columns beside the text (``kind``, ``seq``,
``group_id``, ``api``, ``connection``, ``sent_ms``, ``received_ms``), null where the line
does not parse. Files of both layouts are read (:func:`read_lines`, and the validator's
:func:`groupspec.validate.load.load_path`).

pyarrow is optional (``pip install groupspec[spark]``); without it these functions raise
:class:`ParquetUnavailable` saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
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


class LostBytes(ValueError):
    """A text-layout line that was not UTF-8: that layout did not keep its bytes."""


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


#: the layouts :func:`layout_of` names
COLUMNAR, TEXT = "columnar", "text"
#: the text layout's columns a reader needs (the typed ones beside them are for queries)
TEXT_LINE_COLUMNS = ("line", "text", "ended")
#: the schema metadata key of the columnar layout, as an error message names it
LAYOUT_KEY_TEXT = "groupspec.layout"


def layout_of(path: str | Path) -> str:
    """The layout of a Parquet trace: :data:`COLUMNAR` or :data:`TEXT` (no layout metadata)."""
    _, pq = _pyarrow()
    from groupspec.trace import columnar

    return COLUMNAR if columnar.is_columnar_schema(pq.read_schema(str(path))) else TEXT


def check_text_layout(names: Sequence[str]) -> None:
    """Raise ValueError when a Parquet file of no columnar-layout metadata, with columns
    ``names``, lacks a column the text layout needs: the message names what the layouts
    need, what it lacks and the columns it has."""
    missing = [c for c in TEXT_LINE_COLUMNS if c not in names]
    if missing:
        raise ValueError(
            f"neither the columnar layout's {LAYOUT_KEY_TEXT} metadata nor the text layout's "
            f"column{'s' if len(missing) > 1 else ''} {', '.join(missing)} (it needs {', '.join(TEXT_LINE_COLUMNS)}); "
            f"the file's columns: {', '.join(names[:12])}{' ...' if len(names) > 12 else ''}")


def write_lines(lines: Iterable[tuple[int, str | None, bool]], path: str | Path, layout: str = COLUMNAR) -> int:
    """Write (line number, JSON text, whether a newline ended it) as a Parquet trace;
    returns the row count. A text of None stands for a line that was not UTF-8 (its bytes
    unknown: the columnar layout keeps it as the single byte 0xff); a line not ended by a
    newline is the cut-off end of a truncated file."""
    if layout == TEXT:
        return write_text_lines(lines, path)
    _pyarrow()
    from groupspec.trace import columnar

    return columnar.write_lines(
        ((no, b"\xff" if text is None else text.encode("utf-8", "surrogatepass"), ended)
         for no, text, ended in lines), path)


def write_text_lines(lines: Iterable[tuple[int, str | None, bool]], path: str | Path) -> int:
    """Write (line number, JSON text, whether a newline ended it) in the older text layout."""
    pa, pq = _pyarrow()
    rows = [_row(no, text, ended) for no, text, ended in lines]
    schema = pa.schema([(name, getattr(pa, tp)()) for name, tp in COLUMNS])
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, str(path))
    return len(rows)


def write_events(events: Iterable[Event], path: str | Path, layout: str = COLUMNAR) -> int:
    """Write events (the header first, as in JSON Lines) as a Parquet trace."""
    if layout == COLUMNAR:
        _pyarrow()
        from groupspec.trace import columnar

        return columnar.write_events(events, path)
    texts = (json.dumps(event_to_json(e), separators=(",", ":")) for e in events)
    return write_text_lines(((i, t, True) for i, t in enumerate(texts, start=1)), path)


def jsonl_to_parquet(src: str | Path, dst: str | Path, layout: str = COLUMNAR,
                     progress: Callable[[int], None] | None = None) -> int:
    """Copy a JSON Lines trace to Parquet, line numbers and unreadable lines included (the
    columnar layout keeps every byte: :func:`parquet_to_jsonl` gives the file back); the
    row count. ``progress`` is called with the rows written so far."""
    with open(src, "rb") as fh:
        raw = fh.read()
    if layout == COLUMNAR:
        _pyarrow()
        from groupspec.trace import columnar

        return columnar.write_lines(columnar.split_lines(raw), dst, progress)
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
    return write_text_lines(rows, dst)


def parquet_to_jsonl_bytes(src: str | Path) -> bytes:
    """The JSON Lines form of a Parquet trace. From the columnar layout these are the bytes
    it was made from; from the text layout, its lines (blank lines, which that layout drops,
    come back empty); :class:`LostBytes` if a text-layout line was not UTF-8 (its bytes are lost)."""
    if layout_of(src) == COLUMNAR:
        from groupspec.trace import columnar

        return columnar.to_jsonl_bytes(src)
    out: list[bytes] = []
    last = 0
    end = True
    for no, text, ended in read_lines(src):
        if text is None:
            raise LostBytes(f"line {no} was not UTF-8; the text layout did not keep its bytes")
        out += [b""] * max(0, no - last - 1)
        out.append(text.encode("utf-8", "surrogatepass"))
        last, end = no, ended
    return b"\n".join(out) + (b"\n" if out and end else b"")


def parquet_to_jsonl(src: str | Path, dst: str | Path) -> int:
    """Copy a Parquet trace to JSON Lines (:func:`parquet_to_jsonl_bytes`); the byte count."""
    data = parquet_to_jsonl_bytes(src)
    with open(dst, "wb") as fh:
        fh.write(data)
    return len(data)


def read_lines(path: str | Path) -> Iterator[tuple[int, str | None, bool]]:
    """(line number, JSON text, whether a newline ended it) of a Parquet trace of either
    layout, in line order (text None: the line was not UTF-8), blank lines left out, as
    :func:`groupspec.validate.load.read_lines` gives a JSON Lines file's lines."""
    _, pq = _pyarrow()
    if layout_of(path) == COLUMNAR:
        from groupspec.trace import columnar

        for no, chunk, ended in columnar.read_rows(path):
            try:
                text = chunk.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError:
                yield no, None, ended
                continue
            if text.strip():  # blank lines are no line of the trace, as in JSON Lines
                yield no, text, ended
        return
    check_text_layout(pq.read_schema(str(path)).names)
    table = pq.read_table(str(path), columns=list(TEXT_LINE_COLUMNS))
    lines = table.column("line").to_pylist()
    texts = table.column("text").to_pylist()
    ended = table.column("ended").to_pylist()
    rows = sorted(zip(lines, texts, ended, strict=True), key=lambda p: p[0] if isinstance(p[0], int) else 0)
    for no, text, end in rows:
        if isinstance(no, int):
            yield no, text if isinstance(text, str) else None, end is not False

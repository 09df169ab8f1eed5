"""Reading a trace file (JSON Lines or Parquet) into events that remember their line.

Unlike :func:`groupspec.trace.jsonl.read_events`, which yields events alone, the validator
needs each event's line number (verdicts and problems cite it) and needs to know, for a
line that does not parse, which group it probably belonged to. Every line either becomes a
:class:`Located` event or an :class:`InputProblem`; nothing here raises on content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from groupspec.gc_pause import paused_gc
from groupspec.trace.codec import CodecError
from groupspec.trace.events import Event, RecordEvent
from groupspec.trace.jsonl import event_from_json, parse_line
from groupspec.validate.problems import InputProblem, TraceInputError


class Located(NamedTuple):
    """An event and the line it was read from. A named tuple: a trace has hundreds of
    thousands, made in bulk (:func:`loaded_from_arrow`) at a third of a frozen
    dataclass's cost, and freed at a quarter."""

    line: int
    event: Event


@dataclass(frozen=True)
class EventColumns:
    """The events of a :class:`LoadedTrace` as the lists a bulk decoder already holds, in
    the order of its ``events``: each event's line, the event, its seq, and for a record
    event (of class ``RecordEvent``) its record's group id (the very object the record
    holds), None for other kinds. Grouping reads these lists instead of visiting each event
    (hundreds of thousands of objects spread over memory) for them."""

    lines: list[int]
    events: list[Event]
    seqs: list[int]
    record_groups: list[str | None]

    @staticmethod
    def of(located: list[Located]) -> EventColumns:
        """The columns read off the events themselves."""
        evs = [loc.event for loc in located]
        return EventColumns([loc.line for loc in located], evs, [e.seq for e in evs],
                            [e.record.group_id if type(e) is RecordEvent else None for e in evs])


@dataclass
class LoadedTrace:
    source: str
    events: list[Located] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    lines: int = 0
    #: the events' columns when the loader had them (Parquet), else None; not compared
    #: (they follow from ``events``) and to be set only together with ``events``
    columns: EventColumns | None = field(default=None, compare=False, repr=False)

    def event_columns(self) -> EventColumns:
        """The events' :class:`EventColumns`, the loader's or read off the events."""
        cols = self.columns
        if cols is None or len(cols.seqs) != len(self.events):
            cols = EventColumns.of(self.events)
        return cols


_SEQ_RE = re.compile(r'"seq"\s*:\s*(\d{1,18})\b')
_GROUP_RE = re.compile(r'"group_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def guess_group(text: str) -> str | None:
    """The group a line names, read from its text (for a line that does not parse)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        obj = None
    if isinstance(obj, dict):
        for holder in (obj, obj.get("record"), obj.get("request")):
            if isinstance(holder, dict) and isinstance(holder.get("group_id"), str):
                return str(holder["group_id"])
    m = _GROUP_RE.search(text)
    if m is None:
        return None
    try:
        value = json.loads(f'"{m.group(1)}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def guess_seq(text: str) -> int | None:
    """The seq a line that does not parse was probably written with."""
    m = _SEQ_RE.search(text)
    return int(m.group(1)) if m else None


def _classify(e: CodecError) -> str:
    return "unknown_api" if e.path in ("api", "api_key") else "bad_event"


@paused_gc()
def parse_lines(lines: Iterable[tuple[int, str | None, bool]], source: str) -> LoadedTrace:
    """``lines``: (line number, text or None when not UTF-8, whether a newline ended it)."""
    out = LoadedTrace(source)
    for no, text, ended in lines:
        out.lines = max(out.lines, no)
        if text is None:
            out.problems.append(InputProblem("malformed_json", source, no, "the line is not UTF-8"))
            continue
        if not text.strip():
            continue
        try:
            obj = parse_line(text)
        except (ValueError, RecursionError) as e:
            msg = getattr(e, "msg", str(e))
            if not ended:
                out.problems.append(
                    InputProblem(
                        "truncated", source, no,
                        f"the last line is cut short (not valid JSON: {msg})", guess_group(text),
                        guess_seq(text),
                    )
                )
            else:
                out.problems.append(
                    InputProblem("malformed_json", source, no, f"not valid JSON: {msg}",
                                 guess_group(text), guess_seq(text))
                )
            continue
        try:
            event = event_from_json(obj)
        except CodecError as e:
            out.problems.append(
                InputProblem(_classify(e), source, no, str(e), guess_group(text), guess_seq(text))
            )
            continue
        except (TypeError, ValueError, RecursionError) as e:  # a value the codec let through
            out.problems.append(
                InputProblem("bad_event", source, no, str(e), guess_group(text), guess_seq(text))
            )
            continue
        out.events.append(Located(no, event))
    return out


def _jsonl_lines(raw: bytes) -> list[tuple[int, str | None, bool]]:
    chunks = raw.split(b"\n")
    out: list[tuple[int, str | None, bool]] = []
    for i, chunk in enumerate(chunks):
        ended = i < len(chunks) - 1
        try:
            text: str | None = chunk.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            text = None
        if text is not None and not text.strip():
            continue
        out.append((i + 1, text, ended))
    return out


def load_bytes(raw: bytes, source: str = "<trace>") -> LoadedTrace:
    """Parse a JSON Lines trace held in memory."""
    return parse_lines(_jsonl_lines(raw), source)


def _text(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError:
        return None


#: a Located from a (line, event) pair, as ``Located._make`` without its Python frame
_LOCATED: Callable[[tuple[int, Event]], Located] = partial(tuple.__new__, Located)


@paused_gc()
def loaded_from_arrow(batches: Any, source: str = "<trace>") -> LoadedTrace:
    """The :class:`LoadedTrace` of a trace of the columnar Parquet layout
    (:mod:`groupspec.trace.columnar`) held as Arrow: a ``pyarrow.Table``, a ``RecordBatch``
    or an iterable of record batches (all of one file, in any order; extra columns, such as
    Spark's ``source``, are ignored). Equal to what :func:`load_bytes` gives on the file's
    JSON Lines form: the typed rows are decoded column by column, the rows kept as raw text
    (lines that are no event) as :func:`parse_lines` reads them. Raises
    :class:`~groupspec.trace.columnar.ColumnarError` (a ValueError) on rows this layout's
    writer does not produce."""
    from groupspec.trace import columnar

    if hasattr(batches, "to_batches"):
        batches = batches.to_batches()
    elif hasattr(batches, "num_rows"):
        batches = [batches]
    got = columnar.decode_batches(batches)
    lines: list[tuple[int, str | None, bool]] = []
    for no, raw, ended in got.undecoded:
        text = _text(raw)
        if text is not None and not text.strip():
            continue
        lines.append((no, text, ended))
    out = parse_lines(lines, source)
    events: list[Located] = list(map(_LOCATED, zip(got.lines, got.events, strict=True)))
    if out.events:  # only from a file not written by this version (a row it could decode)
        events = sorted(events + out.events, key=lambda x: x.line)
    else:
        out.columns = EventColumns(got.lines, got.events, got.seqs, got.record_groups)
    out.events = events
    if events:
        out.lines = max(out.lines, events[-1].line)
    return out


def _parquet_file(path: str | Path) -> Any:
    """The pyarrow ParquetFile of a columnar-layout trace, or None for the text layout."""
    from groupspec.trace import columnar

    pf = columnar.open_file(path)
    return pf if columnar.is_columnar_schema(pf.schema_arrow) else None


def read_lines(path: str | Path) -> list[tuple[int, str | None, bool]]:
    """A trace file's lines, JSON Lines or Parquet (told apart by the Parquet magic bytes),
    as :func:`parse_lines` takes them; :class:`TraceInputError` if it cannot be read."""
    source = str(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise TraceInputError(f"{source}: cannot read: {e.strerror or e}") from None
    if raw.startswith(b"PAR1"):
        from groupspec.trace import parquet

        try:
            return list(parquet.read_lines(path))
        except parquet.ParquetUnavailable as e:
            raise TraceInputError(f"{source}: {e}") from None
        except Exception as e:  # pyarrow's errors for a damaged file have no common base
            raise TraceInputError(f"{source}: not a readable Parquet trace: {e}") from None
    return _jsonl_lines(raw)


def load_path(path: str | Path) -> LoadedTrace:
    """Read a trace file, JSON Lines or Parquet (told apart by the Parquet magic bytes; a
    Parquet trace of the columnar layout is decoded in bulk, :func:`loaded_from_arrow`, one
    of the older text layout line by line)."""
    source = str(path)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as e:
        raise TraceInputError(f"{source}: cannot read: {e.strerror or e}") from None
    if magic == b"PAR1":
        try:
            pf = _parquet_file(path)
            if pf is not None:
                from groupspec.trace.columnar import BATCH_ROWS, needed_columns

                batches = pf.iter_batches(batch_size=BATCH_ROWS, columns=needed_columns(pf))
                return loaded_from_arrow(batches, source)
        except ImportError as e:
            raise TraceInputError(f"{source}: reading Parquet traces needs pyarrow: "
                                  f"pip install 'groupspec[spark]' ({e})") from None
        except Exception as e:  # pyarrow's errors for a damaged file have no common base
            raise TraceInputError(f"{source}: not a readable Parquet trace: {e}") from None
    return parse_lines(read_lines(path), source)

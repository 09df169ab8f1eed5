"""The executor side of ``groupspec pipeline validate``: a trace file in, result rows out, no Spark.

A trace file is decoded once, into the validator's
:class:`~groupspec.validate.load.LoadedTrace`, and judged exactly as ``groupspec validate``
judges it (:func:`~groupspec.validate.validator.validate_loaded`): the file is split by group
with :func:`~groupspec.validate.grouping.group_trace`, which decides what needs the whole
file (seq holes, duplicates, lines whose group cannot be told, undecodable frames on a
connection a group used, Fetch events attributed by client id, coordinator-wide records,
the header's broker settings and the metadata images), and every group is checked with
:func:`~groupspec.validate.validator.validate_group` under the file's configuration. A
group's verdict can depend on lines of other groups, so the file, not the group, is the
unit a task decodes; nothing is written between decoding and checking.

Where the lines come from:

- :func:`validate_parquet_buffer` takes a Parquet trace's bytes, as Spark's ``binaryFile``
  reader hands them to ``mapInArrow``, and decodes them as
  :func:`~groupspec.validate.load.load_path` decodes the file (the columnar layout in bulk);
- :func:`rows_of_arrow` takes a file's rows as Arrow batches, as Spark's own Parquet reader
  hands them to ``mapInArrow`` (a ``source`` column names the file): the columnar layout
  (:mod:`groupspec.trace.columnar`) decodes in bulk with
  :func:`~groupspec.validate.load.loaded_from_arrow`, as ``groupspec validate`` decodes the
  file; the older text layout (``line``, ``text``, ``ended``) as
  :func:`groupspec.trace.parquet.read_lines` reads it;
- :func:`scan_file` reads a path (JSON Lines, any Parquet trace, or a file that cannot be
  read) with :func:`~groupspec.validate.load.read_lines`, as ``groupspec validate`` does.

Both yield *result rows* (:data:`RESULT_COLUMNS`), distinguished by ``role``: one ``file``
row per file (events, lines, groups, problems, or the error that made it unreadable), a
``problem`` row per input problem with the line's text and the reason (the quarantine), and
a ``group`` row per group: the verdict (and its full JSON, equal to ``groupspec validate
--format json``'s), the violation, and the group's rebalances
(:mod:`groupspec.pipeline.validate_metrics`).

A trace file is one recording; its ``cluster`` is the header's ``cluster`` or, without
one, the file's path. Groups are told apart by (cluster, source, group id), as
``groupspec validate`` tells them apart per file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from groupspec.gc_pause import paused_gc
from groupspec.pipeline.validate_metrics import rebalance_metrics
from groupspec.trace.parquet import TEXT_LINE_COLUMNS, check_text_layout
from groupspec.validate.grouping import group_trace
from groupspec.validate.load import LoadedTrace, loaded_from_arrow, parse_lines, read_lines
from groupspec.validate.problems import InputProblem, TraceInputError
from groupspec.validate.replay import ReplayConfig
from groupspec.validate.validator import file_config, validate_group
from groupspec.validate.verdict import GroupVerdict

#: (column, arrow type name) of a group's verdict
GROUP_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cluster", "string"),
    ("source", "string"),
    ("group_id", "string"),
    ("verdict", "string"),
    ("exchanges", "int64"),
    ("records", "int64"),
    ("violation_seq", "int64"),
    ("violation_line", "int64"),
    ("violation_rule", "string"),
    ("violation_api", "string"),
    ("violation_connection", "string"),
    ("broker_answered", "string"),
    ("protocol_allows", "string"),
    ("violation_detail", "string"),
    ("kafka_source", "string"),
    ("missing", "string"),
    ("notes", "string"),
    ("alternatives_explored", "int64"),
    ("rebalances", "int64"),
    ("verdict_json", "string"),
    ("rebalances_json", "string"),
)

#: (column, arrow type name) of a file row's counts
FILE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("events", "int64"),
    ("lines", "int64"),
    ("groups", "int64"),
    ("problems", "int64"),
    ("error", "string"),
)

#: (column, arrow type name) of a problem row (beside role, cluster, source, group_id)
PROBLEM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("line", "int64"),
    ("seq", "int64"),
    ("text", "string"),
    ("kind", "string"),
    ("reason", "string"),
    ("dropped", "bool"),
)

#: (column, arrow type name) of a result row: the union of the three roles' columns
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("role", "string"),
    *GROUP_COLUMNS[:3],
    *PROBLEM_COLUMNS,
    *FILE_COLUMNS,
    *GROUP_COLUMNS[3:],
)
#: the name the first version of the job gave its rows (still read by tests of bad inputs)
SCAN_COLUMNS = RESULT_COLUMNS

#: problem kinds whose line is not validated (the event is unreadable or ignored)
DROPPED_KINDS = frozenset({"malformed_json", "truncated", "unknown_api", "bad_event", "duplicate_event",
                           "bad_interval"})

#: a file that could not be read at all (quarantined with line null)
UNREADABLE = "unreadable_file"

#: the Parquet trace layouts the job reads with Spark's reader (groupspec.trace.parquet):
#: the columnar one (typed columns and structs) and the older text one (a line's JSON text)
COLUMNAR, TEXT = "columnar", "text"
#: the columns of the text layout the job decodes from Arrow
TEXT_COLUMNS = TEXT_LINE_COLUMNS

Row = dict[str, Any]
#: called with each group's number of exchanges once it is checked (progress)
OnGroup = Callable[[int], None]


def _row(role: str, cluster: str, source: str, **values: Any) -> Row:
    row: Row = dict.fromkeys(_NAMES)
    row.update(role=role, cluster=cluster, source=source, **values)
    return row


_NAMES = tuple(name for name, _ in RESULT_COLUMNS)


def _dropped(p: InputProblem) -> bool:
    return p.kind in DROPPED_KINDS or (p.kind == "out_of_order" and p.message.endswith("ignored"))


def group_row(cluster: str, source: str, verdict: GroupVerdict, rebalances: list[Row]) -> Row:
    v = verdict.violation
    return {
        "cluster": cluster,
        "source": source,
        "group_id": verdict.group_id,
        "verdict": verdict.verdict,
        "exchanges": verdict.exchanges,
        "records": verdict.records,
        "violation_seq": v.seq if v else None,
        "violation_line": v.line if v else None,
        "violation_rule": v.rule if v else None,
        "violation_api": v.api if v else None,
        "violation_connection": v.connection if v else None,
        "broker_answered": v.broker_answered if v else None,
        "protocol_allows": " | ".join(v.protocol_allows) if v else None,
        "violation_detail": v.detail if v else None,
        "kafka_source": v.kafka_source if v else None,
        "missing": json.dumps([{"line": x.line, "what": x.what} for x in verdict.missing]),
        "notes": json.dumps(list(verdict.notes)),
        "alternatives_explored": verdict.alternatives_explored,
        "rebalances": len(rebalances),
        "verdict_json": json.dumps(verdict.to_json(), sort_keys=True),
        "rebalances_json": json.dumps(rebalances),
    }


def validate_file(loaded: LoadedTrace, text_of: Callable[[int], str | None],
                  config: ReplayConfig | None = None, on_group: OnGroup | None = None) -> Iterator[Row]:
    """The result rows of one decoded trace file: its file row, a problem row per input
    problem (``text_of(line)``: the line's text, for the quarantine) and a group row per
    group, judged as :func:`~groupspec.validate.validator.validate_loaded` judges them.
    Each group is judged with the cycle collector paused, as ``groupspec validate`` judges
    it (a generator cannot hold the pause across its yields)."""
    with paused_gc():
        rows = list(_file_rows(loaded, text_of, config, on_group))
    yield from rows


def _file_rows(loaded: LoadedTrace, text_of: Callable[[int], str | None],
               config: ReplayConfig | None, on_group: OnGroup | None) -> Iterator[Row]:
    source = loaded.source
    config = file_config(loaded, config)
    grouped = group_trace(loaded)
    cluster = grouped.header.cluster if grouped.header is not None and grouped.header.cluster else source
    yield _row("file", cluster, source, events=grouped.events, lines=loaded.lines, groups=len(grouped.groups),
               problems=len(grouped.problems))
    for p in grouped.problems:
        yield _row("problem", cluster, source, group_id=p.group_id, line=p.line, seq=p.seq,
                   text=text_of(p.line) if p.line is not None else None, kind=p.kind, reason=p.message,
                   dropped=_dropped(p))
    for gid, g in sorted(grouped.groups.items()):
        verdict = validate_group(g, config)
        row = _row("group", cluster, source)
        row.update(group_row(cluster, source, verdict, rebalance_metrics(g.exchanges)), group_id=gid)
        if on_group is not None:
            on_group(len(g.exchanges))
        yield row


def validate_lines(lines: list[tuple[int, str | None, bool]], source: str, config: ReplayConfig | None = None,
                   on_group: OnGroup | None = None) -> Iterator[Row]:
    """The result rows of a file's lines (line number, text or None when not UTF-8, whether
    a newline ended it), as :func:`~groupspec.validate.load.read_lines` gives them."""
    texts = {no: text for no, text, _ in lines}
    yield from validate_file(parse_lines(lines, source), texts.get, config, on_group)


def unreadable(source: str, error: str) -> Iterator[Row]:
    """The rows of a file that cannot be read: its file row and one problem row."""
    yield _row("file", source, source, events=0, lines=0, groups=0, problems=1, error=error)
    yield _row("problem", source, source, kind=UNREADABLE, reason=error, dropped=True)


def scan_file(source: str, config: ReplayConfig | None = None, on_group: OnGroup | None = None) -> Iterator[Row]:
    """The result rows of the trace file at ``source`` (any format ``groupspec validate``
    reads; a file that cannot be read is quarantined whole)."""
    try:
        lines = read_lines(source)
    except TraceInputError as e:
        yield from unreadable(source, str(e))
        return
    yield from validate_lines(lines, source, config, on_group)


def lines_of_arrow(batches: Iterable[Any]) -> list[tuple[int, str | None, bool]]:
    """A line-per-row Parquet trace's lines from its Arrow batches (any order), as
    :func:`groupspec.trace.parquet.read_lines` reads them: in line order, a row without a
    line number skipped, a text that is not a string read as a line that was not UTF-8."""
    rows: list[tuple[Any, Any, Any]] = []
    for b in batches:
        rows += zip(b.column("line").to_pylist(), b.column("text").to_pylist(), b.column("ended").to_pylist(),
                    strict=True)
    rows.sort(key=lambda p: p[0] if isinstance(p[0], int) else 0)
    return [(no, text if isinstance(text, str) else None, end is not False)
            for no, text, end in rows if isinstance(no, int)]


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError:
        return None


def validate_columnar(batches: list[Any], source: str, config: ReplayConfig | None = None,
                      on_group: OnGroup | None = None) -> Iterator[Row]:
    """The result rows of a columnar-layout trace held as Arrow batches (all of one file),
    decoded in bulk (:func:`~groupspec.validate.load.loaded_from_arrow`) as
    :func:`~groupspec.validate.load.load_path` decodes the file. A problem's text is the
    line's bytes where the file kept them, else its event's canonical line (the same bytes)."""
    try:
        loaded = loaded_from_arrow(batches, source)
    except Exception as e:  # as load_path: rows this layout's writer does not produce
        yield from unreadable(source, f"{source}: not a readable Parquet trace: {e}")
        return
    from groupspec.trace.columnar import canonical

    kept: dict[int, str | None] = {}
    for b in batches:
        raw = b.column("raw")
        if raw.null_count < b.num_rows:
            kept.update((no, _utf8(r)) for no, r in zip(b.column("line").to_pylist(), raw.to_pylist(), strict=True)
                        if r is not None)
    events: dict[int, Any] = {}

    def text_of(line: int) -> str | None:
        if line in kept:
            return kept[line]
        if not events:
            events.update((x.line, x.event) for x in loaded.events)
        event = events.get(line)
        return canonical(event).decode("utf-8") if event is not None else None

    yield from validate_file(loaded, text_of, config, on_group)


def validate_parquet_buffer(buf: Any, source: str, config: ReplayConfig | None = None,
                            on_group: OnGroup | None = None) -> Iterator[Row]:
    """The result rows of a Parquet trace held in memory (its bytes, as Spark's binaryFile
    reader hands them over): the columnar layout decoded in bulk as
    :func:`~groupspec.validate.load.load_path` decodes it, the text layout line by line."""
    import pyarrow as pa

    from groupspec.trace.columnar import BATCH_ROWS, is_columnar_schema, needed_columns, open_file

    try:
        # opened as load_path opens a file, so both decode it the same way
        pf = open_file(pa.BufferReader(buf))
        if is_columnar_schema(pf.schema_arrow):
            # only the columns decoding needs, as load_path reads a file (most of the layout's
            # ~400 leaf columns are null in any one trace, and reading one costs per chunk)
            batches = list(pf.iter_batches(batch_size=BATCH_ROWS, columns=needed_columns(pf)))
            text: list[Any] | None = None
        else:
            check_text_layout(pf.schema_arrow.names)
            batches, text = [], pf.read(columns=list(TEXT_COLUMNS)).to_batches()
    except Exception as e:  # pyarrow's errors for a damaged file have no common base
        yield from unreadable(source, f"{source}: not a readable Parquet trace: {e}")
        return
    if text is None:
        yield from validate_columnar(batches, source, config, on_group)
    else:
        yield from validate_lines(lines_of_arrow(text), source, config, on_group)


def rows_of_arrow(batches: Iterable[Any], sources: Mapping[str, str], config: ReplayConfig | None = None,
                  on_group: OnGroup | None = None, on_file: Callable[[], None] | None = None,
                  layout: str = COLUMNAR) -> Iterator[Row]:
    """The result rows of the trace files whose rows ``batches`` hold (Arrow record batches
    of ``layout`` with a ``source`` column, each file's rows together, as one Spark task
    reads them); ``sources`` maps the reader's file name to the name the file was given as."""
    current: str | None = None
    held: list[Any] = []
    done: set[str] = set()

    def finish() -> Iterator[Row]:
        if current is not None:
            done.add(current)
            name = sources.get(current, current)
            if layout == COLUMNAR:
                yield from validate_columnar(held, name, config, on_group)
            else:
                yield from validate_lines(lines_of_arrow(held), name, config, on_group)
            if on_file is not None:
                on_file()

    for batch in batches:
        col = batch.column("source")
        names = col.to_pylist()
        start = 0
        for i in range(1, len(names) + 1):
            if i == len(names) or names[i] != names[start]:
                if names[start] != current:
                    yield from finish()
                    if names[start] in done:  # a file's verdicts need all of its lines at once
                        raise ValueError(f"{names[start]}: the file's rows are not together in one task")
                    current, held = names[start], []
                held.append(batch.slice(start, i - start))
                start = i
    yield from finish()


def check_rows(rows: Iterable[Row]) -> list[Row]:
    """The group rows among result rows (any order), as the job writes them to groups.parquet."""
    return sorted(({name: r[name] for name, _ in GROUP_COLUMNS} for r in rows if r["role"] == "group"),
                  key=lambda r: (r["cluster"], r["source"], r["group_id"]))

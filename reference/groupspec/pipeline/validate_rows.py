"""The executor side of ``groupspec pipeline validate``: rows in, rows out, no Spark.

Two steps, both the in-process validator's own code (:mod:`groupspec.validate`):

1. :func:`scan_file` (one task per trace file): reads the file as ``groupspec validate``
   does (:func:`~groupspec.validate.load.read_lines`, :func:`~groupspec.validate.load.parse_lines`)
   and splits it by group with :func:`~groupspec.validate.grouping.group_trace`. What needs
   the whole file (seq holes, duplicates, lines whose group cannot be told, undecodable
   frames on a connection) is decided there, as in process. It emits *scan rows*: per
   group a ``group`` row, its ``gap`` rows (what is missing that may explain a divergence,
   the file's gaps included), its ``exchange`` and ``record`` rows (the line's JSON text),
   each with an ``ord`` that keeps the validator's order; per file a ``file`` row; and a
   ``problem`` row for every input problem, with the line's text and the reason
   (the quarantine).
2. :class:`GroupChecker` (after Spark repartitions the rows by (cluster, source, group) and
   sorts them by ``ord``): streams each group's rows through
   :func:`~groupspec.validate.validator.validate_group_events` and emits one *group row*:
   the verdict (and its full JSON, equal to ``groupspec validate --format json``'s), the
   violation, and the group's rebalances (:mod:`groupspec.pipeline.validate_metrics`).

A trace file is one recording; its ``cluster`` is the header's ``cluster`` or, without
one, the file's path. Groups are told apart by (cluster, source, group id), as
``groupspec validate`` tells them apart per file.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from groupspec.trace.events import (
    RECORDER_SOURCE,
    FetchEvent,
    MetadataEvent,
    RecordEvent,
    WireExchange,
)
from groupspec.trace.jsonl import event_from_json, event_to_json, parse_line
from groupspec.validate.grouping import Exchange, Gap, group_trace
from groupspec.validate.load import parse_lines, read_lines
from groupspec.validate.problems import InputProblem, TraceInputError
from groupspec.validate.replay import ReplayConfig
from groupspec.validate.validator import validate_group_events, with_broker_config
from groupspec.validate.verdict import GroupVerdict

#: (column, arrow type name) of a scan row
SCAN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("role", "string"),
    ("cluster", "string"),
    ("source", "string"),
    ("group_id", "string"),
    ("ord", "int64"),
    ("line", "int64"),
    ("seq", "int64"),
    ("text", "string"),
    ("kind", "string"),
    ("reason", "string"),
    ("dropped", "bool"),
)

#: (column, arrow type name) of a group row
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

#: problem kinds whose line is not validated (the event is unreadable or ignored)
DROPPED_KINDS = frozenset({"malformed_json", "truncated", "unknown_api", "bad_event", "duplicate_event",
                           "bad_interval"})

#: a file that could not be read at all (quarantined with line null)
UNREADABLE = "unreadable_file"

_SECTION = 1 << 40
GROUP_ORD, GAP_ORD, EXCHANGE_ORD, RECORD_ORD, FETCH_ORD = (
    0, _SECTION, 2 * _SECTION, 3 * _SECTION, 4 * _SECTION
)

Row = dict[str, Any]


def _row(role: str, cluster: str, source: str, **values: Any) -> Row:
    row: Row = {name: None for name, _ in SCAN_COLUMNS}
    row.update(role=role, cluster=cluster, source=source, **values)
    return row


def _gap_json(gap: Gap) -> str:
    p = gap.problem
    return json.dumps({"kind": p.kind, "source": p.source, "line": p.line, "message": p.message,
                       "group_id": p.group_id, "seq": p.seq, "at_ms": gap.at_ms})


def _gap_from_json(text: str) -> Gap:
    d = json.loads(text)
    return Gap(InputProblem(d["kind"], d["source"], d["line"], d["message"], d["group_id"], d["seq"]),
               d["at_ms"])


def _dropped(p: InputProblem) -> bool:
    return p.kind in DROPPED_KINDS or (p.kind == "out_of_order" and p.message.endswith("ignored"))


def scan_file(source: str) -> Iterator[Row]:
    """The scan rows of one trace file (see the module docstring)."""
    try:
        lines = read_lines(source)
    except TraceInputError as e:
        yield _row("file", source, source, text=json.dumps({"events": 0, "lines": 0, "groups": 0,
                                                            "problems": 1, "error": str(e)}))
        yield _row("problem", source, source, kind=UNREADABLE, reason=str(e), dropped=True)
        return
    loaded = parse_lines(lines, source)
    grouped = group_trace(loaded)
    cluster = grouped.header.cluster if grouped.header is not None and grouped.header.cluster else source
    # recorded over TCP: judged as the in-process validator judges it (validate_loaded)
    reliable = grouped.header is not None and grouped.header.source == RECORDER_SOURCE
    texts = {no: text for no, text, _ in lines}
    # KIP-848: the broker settings and metadata images every group of the file is judged with
    broker = dict(grouped.header.broker_config) if grouped.header is not None else {}
    metadata = [event_to_json(x.event) for x in loaded.events if isinstance(x.event, MetadataEvent)]
    yield _row("file", cluster, source, text=json.dumps({
        "events": grouped.events, "lines": loaded.lines, "groups": len(grouped.groups),
        "problems": len(grouped.problems), "error": None}))
    for p in grouped.problems:
        yield _row("problem", cluster, source, group_id=p.group_id, line=p.line, seq=p.seq,
                   text=texts.get(p.line), kind=p.kind, reason=p.message, dropped=_dropped(p))
    for gid, g in grouped.groups.items():
        yield _row("group", cluster, source, group_id=gid, ord=GROUP_ORD,
                   text=json.dumps({"other": g.other, "reliable": reliable, "broker_config": broker,
                                    "metadata": metadata}))
        for i, gap in enumerate(g.gaps):
            yield _row("gap", cluster, source, group_id=gid, ord=GAP_ORD + i, line=gap.problem.line,
                       seq=gap.problem.seq, text=_gap_json(gap), kind=gap.problem.kind)
        for i, x in enumerate(g.exchanges):
            yield _row("exchange", cluster, source, group_id=gid, ord=EXCHANGE_ORD + i, line=x.line,
                       seq=x.seq, text=texts[x.line])
        for i, (line, rec) in enumerate(g.records):
            yield _row("record", cluster, source, group_id=gid, ord=RECORD_ORD + i, line=line,
                       seq=rec.seq, text=texts[line])
        for i, (line, fe) in enumerate(g.fetches):
            yield _row("fetch", cluster, source, group_id=gid, ord=FETCH_ORD + i, line=line,
                       seq=fe.seq, text=texts[line])


# ---------------------------------------------------------------- step 2: per group
@dataclass
class _Group:
    cluster: str
    source: str
    group_id: str
    other: int = 0

    def __post_init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.records: list[tuple[int, RecordEvent]] = []
        self.gaps: list[Gap] = []
        self.fetches: list[tuple[int, FetchEvent]] = []
        self.reliable = False
        self.broker_config: dict[str, int] = {}
        self.metadata: tuple[MetadataEvent, ...] = ()


def _event(text: str) -> Any:
    return event_from_json(parse_line(text))


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


class GroupChecker:
    """Feeds rows sorted by (cluster, source, group_id, ord) and yields a group row each
    time a group's rows end. ``checked`` counts groups and exchanges for progress."""

    def __init__(self, config: ReplayConfig | None = None) -> None:
        self.config = config
        self.current: _Group | None = None
        self.groups = 0
        self.exchanges = 0

    def _finish(self) -> Row | None:
        g, self.current = self.current, None
        if g is None:
            return None
        from groupspec.pipeline.validate_metrics import rebalance_metrics

        config = self.config
        if g.reliable and not (config is not None and config.reliable_connections):
            config = dataclasses.replace(config or ReplayConfig(), reliable_connections=True)
        if g.broker_config:
            config = with_broker_config(config or ReplayConfig(), g.broker_config)
        if g.metadata:
            config = dataclasses.replace(config or ReplayConfig(), metadata=g.metadata)
        verdict = validate_group_events(
            g.group_id, g.exchanges, g.records, g.gaps, g.other, config, g.fetches
        )
        self.groups += 1
        self.exchanges += len(g.exchanges)
        return group_row(g.cluster, g.source, verdict, rebalance_metrics(g.exchanges))

    def feed(self, rows: Iterable[Row]) -> Iterator[Row]:
        for r in rows:
            key = (r["cluster"], r["source"], r["group_id"])
            cur = self.current
            if cur is None or (cur.cluster, cur.source, cur.group_id) != key:
                done = self._finish()
                if done is not None:
                    yield done
                cur = self.current = _Group(*key)
            role = r["role"]
            if role == "exchange":
                e = _event(r["text"])
                assert isinstance(e, WireExchange)
                cur.exchanges.append(Exchange(r["line"], e))
            elif role == "record":
                e = _event(r["text"])
                assert isinstance(e, RecordEvent)
                cur.records.append((r["line"], e))
            elif role == "gap":
                cur.gaps.append(_gap_from_json(r["text"]))
            elif role == "fetch":
                e = _event(r["text"])
                assert isinstance(e, FetchEvent)
                cur.fetches.append((r["line"], e))
            elif role == "group":
                head = json.loads(r["text"])
                cur.other = int(head["other"])
                cur.reliable = bool(head.get("reliable", False))
                cur.broker_config = {str(k): int(v) for k, v in head.get("broker_config", {}).items()}
                cur.metadata = tuple(sorted(
                    (e for e in map(event_from_json, head.get("metadata", [])) if isinstance(e, MetadataEvent)),
                    key=lambda e: (e.at_ms, e.seq)))

    def close(self) -> Iterator[Row]:
        done = self._finish()
        if done is not None:
            yield done


def check_rows(rows: Iterable[Row], config: ReplayConfig | None = None) -> list[Row]:
    """The group rows of scan rows (any order: sorted here), without Spark."""
    order = sorted((r for r in rows if r["role"] in ("group", "gap", "exchange", "record", "fetch")),
                   key=lambda r: (r["cluster"], r["source"], r["group_id"], r["ord"]))
    checker = GroupChecker(config)
    return [*checker.feed(order), *checker.close()]

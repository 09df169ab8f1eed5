"""Reading and writing trace files as JSON Lines.

The reader never stops at a bad line: each line that is not valid JSON, has an unknown
``kind``, an unknown API or record type, or fields of the wrong type becomes a
:class:`TraceLineError` naming the file, line number and JSON path, and every other line
is still read. A truncated last line (no newline, cut inside the JSON) is reported the
same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import IO, Any

from groupspec.trace.codec import CodecError, from_json, to_json
from groupspec.trace.events import (
    APIS,
    FORMAT,
    KINDS,
    RECORD_TYPES,
    VERSION,
    DecodeErrorEvent,
    Event,
    ExpiryEvent,
    Header,
    RecordEvent,
    WireExchange,
)


@dataclass(frozen=True)
class TraceLineError:
    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


def event_to_json(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": KINDS[type(event)]}
    for f in fields(event):
        value = getattr(event, f.name)
        if f.name == "record":
            body = to_json(value)
            out["record"] = {"type": type(value).__name__, **body}
        else:
            out[f.name] = to_json(value)
    return out


def event_from_json(obj: Any) -> Event:
    if not isinstance(obj, dict):
        raise CodecError("", "an event must be a JSON object")
    kind = obj.get("kind")
    body = {k: v for k, v in obj.items() if k != "kind"}
    if kind == "header":
        h = from_json(Header, body)
        if h.format != FORMAT:
            raise CodecError("format", f"expected {FORMAT!r}, got {h.format!r}")
        if h.version != VERSION:
            raise CodecError("version", f"unsupported trace version {h.version} (this reads {VERSION})")
        return h  # type: ignore[no-any-return]
    if kind == "exchange":
        api = body.get("api")
        if api not in APIS:
            raise CodecError("api", f"unknown api {api!r} (known: {', '.join(sorted(APIS))})")
        key, req_cls, resp_cls = APIS[api]
        if body.get("api_key") != key:
            raise CodecError("api_key", f"{api} has api key {key}, the line says {body.get('api_key')!r}")
        req = from_json(req_cls, body.pop("request", None), "request")
        raw_resp = body.pop("response", None)
        resp = None if raw_resp is None else from_json(resp_cls, raw_resp, "response")
        rest = from_json(_WireHead, {k: v for k, v in body.items()}, "")
        return WireExchange(request=req, response=resp, **{f.name: getattr(rest, f.name) for f in fields(_WireHead)})
    if kind == "decode_error":
        return from_json(DecodeErrorEvent, body)  # type: ignore[no-any-return]
    if kind == "record":
        rec = body.pop("record", None)
        if not isinstance(rec, dict) or rec.get("type") not in RECORD_TYPES:
            name = rec.get("type") if isinstance(rec, dict) else None
            raise CodecError("record.type", f"unknown record type {name!r}")
        cls = RECORD_TYPES[rec["type"]]
        record = from_json(cls, {k: v for k, v in rec.items() if k != "type"}, "record")
        seq_at = from_json(_RecordHead, body, "")
        return RecordEvent(seq=seq_at.seq, at_ms=seq_at.at_ms, record=record, cluster=seq_at.cluster)
    if kind == "expiry":
        return from_json(ExpiryEvent, body)  # type: ignore[no-any-return]
    raise CodecError("kind", f"unknown event kind {kind!r} (known: {', '.join(sorted(KINDS.values()))})")


@dataclass(frozen=True)
class _WireHead:
    seq: int
    connection: str
    client_id: str
    api: str
    api_key: int
    api_version: int
    correlation_id: int
    group_id: str
    sent_ms: float
    received_ms: float | None
    cluster: str | None = None
    rewritten: bool = False


@dataclass(frozen=True)
class _RecordHead:
    seq: int
    at_ms: int
    cluster: str | None = None


def read_events(
    lines: Iterable[str], source: str = "<trace>"
) -> Iterator[Event | TraceLineError]:
    """Parse a trace, yielding events and, in their place, errors for bad lines."""
    for no, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            cut = "" if line.endswith("\n") else " (the line is cut short: truncated file?)"
            yield TraceLineError(source, no, f"not valid JSON: {e.msg} at column {e.colno}{cut}")
            continue
        try:
            yield event_from_json(obj)
        except CodecError as e:
            yield TraceLineError(source, no, str(e))


class TraceWriter:
    """Writes events as JSON Lines, numbering them; the header first."""

    def __init__(self, stream: IO[str], source: str, cluster: str | None = None, note: str | None = None) -> None:
        self._stream = stream
        self._seq = 0
        self.write_raw(event_to_json(Header(source=source, cluster=cluster, note=note)))

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def write(self, event: Event) -> None:
        self.write_raw(event_to_json(event))

    def write_raw(self, obj: dict[str, Any]) -> None:
        self._stream.write(json.dumps(obj, separators=(",", ":"), sort_keys=False) + "\n")

    def flush(self) -> None:
        self._stream.flush()


def record_event(seq: int, at_ms: int, record: Any, cluster: str | None = None) -> RecordEvent:
    return RecordEvent(seq=seq, at_ms=at_ms, record=record, cluster=cluster)


def expiry_event(seq: int, at_ms: int, timer: str, group_id: str, member_id: str = "") -> ExpiryEvent:
    return ExpiryEvent(seq=seq, at_ms=at_ms, timer=timer, group_id=group_id, member_id=member_id)

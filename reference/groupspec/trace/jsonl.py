"""Reading and writing trace files as JSON Lines.

The reader never stops at a bad line: each line that is not valid JSON, has an unknown
``kind``, an unknown API or record type, or fields of the wrong type becomes a
:class:`TraceLineError` naming the file, line number and JSON path, and every other line
is still read. A truncated last line (no newline, cut inside the JSON) is reported the
same way.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from groupspec.trace.codec import (
    CodecError,
    Decoder,
    compile_encoder,
    dataclass_decoder,
    decoder_for,
    field_names,
    fields_encoder,
    to_json,
)
from groupspec.trace.events import (
    APIS,
    FORMAT,
    KINDS,
    MINOR,
    RECORD_TYPES,
    VERSION,
    ApiVersionsEvent,
    ClosedEvent,
    DecodeErrorEvent,
    Event,
    ExpiryEvent,
    FetchEvent,
    Header,
    MetadataEvent,
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


#: the json module's own C scanner, called on a line directly: json.loads adds two
#: whitespace matches and a few calls around it, a quarter of its time on a trace line
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: context typed as the scanner


def parse_line(text: str) -> Any:
    """One line's JSON value, exactly as :func:`json.loads` reads it, errors included (a
    line the scanner does not read whole, whitespace around it or an error, is left to
    json.loads, which words the error)."""
    try:
        value, end = _scan(text, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


def event_to_json(event: Event) -> dict[str, Any]:
    t: type = type(event)
    enc = _EVENT_ENCODERS.get(t)
    if enc is None:
        enc = _EVENT_ENCODERS[t] = _event_encoder(t)
    out: dict[str, Any] = enc(event)
    return out


#: event class -> its :func:`event_to_json` (:func:`_event_encoder`)
_EVENT_ENCODERS: dict[type, Callable[[Any], Any]] = {}


def _record_json(record: Any) -> dict[str, Any]:
    return {"type": type(record).__name__, **to_json(record)}


def _event_encoder(t: type) -> Callable[[Any], Any]:
    """An event's JSON object: ``kind``, then each field's :func:`to_json` value in order,
    ``record`` as an object naming its ``type`` first; written out once per class (one
    function reading the fields, instead of a loop of ``getattr`` and calls per event)."""
    body = fields_encoder(field_names(t), f"{'kind'!r}: {KINDS[t]!r}, ",
                          {"record": "_record_json({x})"})
    return compile_encoder(body, _record_json=_record_json)


#: decoders of the event objects, which carry ``kind`` beside their fields
_HEADER = dataclass_decoder(Header, extra=("kind",))
_DECODE_ERROR = dataclass_decoder(DecodeErrorEvent, extra=("kind",))
_EXPIRY = dataclass_decoder(ExpiryEvent, extra=("kind",))
_FETCH = dataclass_decoder(FetchEvent, extra=("kind",))
_API_VERSIONS = dataclass_decoder(ApiVersionsEvent, extra=("kind",))
_METADATA = dataclass_decoder(MetadataEvent, extra=("kind",))
_CLOSED = dataclass_decoder(ClosedEvent, extra=("kind",))
#: an exchange's fields other than its bodies, which the caller decodes by ``api``
_EXCHANGE = dataclass_decoder(WireExchange, given=("request", "response"), extra=("kind",))
#: a record event's fields other than its record, which the caller decodes by ``type``
_RECORD_EVENT = dataclass_decoder(RecordEvent, given=("record",), extra=("kind",))
#: api -> (api key, request decoder, response decoder)
_BODIES: dict[str, tuple[int, Decoder, Decoder]] = {
    api: (key, decoder_for(req), decoder_for(resp)) for api, (key, req, resp) in APIS.items()
}
#: record type name -> its decoder (the object names its ``type``)
_RECORDS: dict[str, Decoder] = {
    name: dataclass_decoder(cls, extra=("type",)) for name, cls in RECORD_TYPES.items()
}


#: the most partitions a metadata event's topic may have: a negative count is no topic, and
#: the reference's server-side assignors enumerate a subscribed topic's partitions on every
#: heartbeat that changes the group (a count near Kafka's int32 limit takes all memory)
MAX_METADATA_PARTITIONS = 10_000
#: an exchange's ``api_version``: the request header's int16, never negative on the wire
MAX_API_VERSION = 32_767


def event_from_json(obj: Any) -> Event:
    if not isinstance(obj, dict):
        raise CodecError("", "an event must be a JSON object")
    kind = obj.get("kind")
    if kind == "exchange":
        api = obj.get("api")
        bodies = _BODIES.get(api) if isinstance(api, str) else None
        if bodies is None:
            raise CodecError("api", f"unknown api {api!r} (known: {', '.join(sorted(APIS))})")
        key, request, response = bodies
        if obj.get("api_key") != key:
            raise CodecError("api_key", f"{api} has api key {key}, the line says {obj.get('api_key')!r}")
        version = obj.get("api_version")
        if type(version) is int and not 0 <= version <= MAX_API_VERSION:
            # (another type is refused by the exchange's decoder, naming the field)
            raise CodecError("api_version", f"an API version is a non-negative int16 (0..{MAX_API_VERSION}), "
                                            f"got {version}")
        req = request(obj.get("request"), "request")
        raw_resp = obj.get("response")
        resp = None if raw_resp is None else response(raw_resp, "response")
        return _EXCHANGE(obj, "", req, resp)  # type: ignore[no-any-return]
    if kind == "record":
        rec = obj.get("record")
        decode = _RECORDS.get(rec.get("type")) if isinstance(rec, dict) else None  # type: ignore[arg-type]
        if decode is None:
            name = rec.get("type") if isinstance(rec, dict) else None
            raise CodecError("record.type", f"unknown record type {name!r}")
        return _RECORD_EVENT(obj, "", decode(rec, "record"))  # type: ignore[no-any-return]
    if kind == "header":
        h = _HEADER(obj, "")
        if h.format != FORMAT:
            raise CodecError("format", f"expected {FORMAT!r}, got {h.format!r}")
        if h.version != VERSION:
            raise CodecError("version", f"unsupported trace version {h.version} (this reads {VERSION}.x)")
        return h  # type: ignore[no-any-return]
    if kind == "decode_error":
        return _DECODE_ERROR(obj, "")  # type: ignore[no-any-return]
    if kind == "expiry":
        return _EXPIRY(obj, "")  # type: ignore[no-any-return]
    if kind == "fetch":
        return _FETCH(obj, "")  # type: ignore[no-any-return]
    if kind == "api_versions":
        return _API_VERSIONS(obj, "")  # type: ignore[no-any-return]
    if kind == "closed":
        return _CLOSED(obj, "")  # type: ignore[no-any-return]
    if kind == "metadata":
        meta: MetadataEvent = _METADATA(obj, "")
        names: set[str] = set()
        ids: set[int] = set()
        for i, topic in enumerate(meta.topics):
            if not 0 <= topic.partitions <= MAX_METADATA_PARTITIONS:
                raise CodecError(f"topics[{i}].partitions",
                                 f"topic {topic.name!r} with {topic.partitions} partitions: a count from 0 to "
                                 f"{MAX_METADATA_PARTITIONS} is expected (the reference's assignors enumerate "
                                 "every partition of a topic)")
            # the image names each topic once, and a topic id is one topic's
            if topic.name in names:
                raise CodecError(f"topics[{i}].name", f"topic {topic.name!r} listed twice")
            if int(topic.topic_id) in ids:
                raise CodecError(f"topics[{i}].topic_id",
                                 f"topic {topic.name!r}: topic id {topic.topic_id} is another topic's")
            names.add(topic.name)
            ids.add(int(topic.topic_id))
        return meta
    raise CodecError("kind", f"unknown event kind {kind!r} (known: {', '.join(sorted(KINDS.values()))})")


def read_events(
    lines: Iterable[str], source: str = "<trace>"
) -> Iterator[Event | TraceLineError]:
    """Parse a trace, yielding events and, in their place, errors for bad lines."""
    for no, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            obj = parse_line(text)
        except json.JSONDecodeError as e:
            cut = "" if line.endswith("\n") else " (the line is cut short: truncated file?)"
            yield TraceLineError(source, no, f"not valid JSON: {e.msg} at column {e.colno}{cut}")
            continue
        except (ValueError, RecursionError) as e:
            # JSON the parser refuses otherwise: an integer of more digits than Python
            # converts, nesting deeper than it recurses (as groupspec.validate.load reads it)
            yield TraceLineError(source, no, f"not valid JSON: {e}")
            continue
        try:
            event = event_from_json(obj)
        except CodecError as e:
            yield TraceLineError(source, no, str(e))
            continue
        except (TypeError, ValueError, RecursionError) as e:  # a value the codec let through
            yield TraceLineError(source, no, str(e))
            continue
        yield event


class TraceWriter:
    """Writes events as JSON Lines, numbering them; the header first."""

    def __init__(self, stream: IO[str], source: str, cluster: str | None = None, note: str | None = None,
                 broker_config: dict[str, int] | None = None) -> None:
        self._stream = stream
        self._seq = 0
        self.write_raw(event_to_json(Header(source=source, cluster=cluster, note=note, minor=MINOR,
                                            broker_config=dict(broker_config or {}))))

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

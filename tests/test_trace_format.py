"""Trace format v1: round trips, the committed JSON Schema, and bad lines."""

from __future__ import annotations

import io
import json
from importlib import resources

import jsonschema
import pytest

from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.trace.events import MINOR, Event, Header, RecordEvent, WireExchange
from groupspec.trace.jsonl import TraceLineError, TraceWriter, event_to_json, read_events
from groupspec.trace.schema import trace_schema

JOIN = WireExchange(
    seq=1,
    connection="conn-1",
    client_id="consumer-1",
    api="JoinGroup",
    api_key=11,
    api_version=9,
    correlation_id=4,
    group_id="g",
    sent_ms=10.5,
    received_ms=3012.0,
    request=m.JoinGroupRequest(
        group_id="g", protocols=(m.JoinGroupProtocol("range", b"\x00\x03\xff"),)
    ),
    response=m.JoinGroupResponse(error=Error.MEMBER_ID_REQUIRED, member_id="consumer-1-x"),
)
EVENTS: list[Event] = [
    JOIN,
    RecordEvent(2, 3012, r.StateChanged("g", GroupState.PreparingRebalance, 3012)),
    RecordEvent(3, 3013, r.MemberRemoved("g", "consumer-1-x", "left")),
]


def _write(events: list[Event]) -> str:
    buf = io.StringIO()
    w = TraceWriter(buf, source="test")
    for e in events:
        w.write(e)
    return buf.getvalue()


def test_round_trip() -> None:
    back = list(read_events(io.StringIO(_write(EVENTS)).readlines()))
    assert back == [Header(source="test", minor=MINOR), *EVENTS]


def test_committed_schema_is_generated_schema() -> None:
    text = (resources.files("groupspec.trace") / "schema" / "trace-v1.schema.json").read_text()
    assert json.loads(text) == trace_schema(), (
        "regenerate: json.dumps(groupspec.trace.schema.trace_schema(), indent=2)")


def test_written_lines_match_schema() -> None:
    validator = jsonschema.Draft202012Validator(trace_schema())
    for line in _write(EVENTS).splitlines():
        errors = list(validator.iter_errors(json.loads(line)))
        assert errors == [], errors[0].message


def test_schema_rejects_what_the_reader_rejects() -> None:
    validator = jsonschema.Draft202012Validator(trace_schema())
    bad = event_to_json(JOIN)
    bad["response"]["error"] = "NOT_AN_ERROR"
    assert not validator.is_valid(bad)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('{"kind": "gossip"}', "unknown event kind 'gossip'"),
        ('{"kind": "exchange", "api": "Produce"}', "unknown api 'Produce'"),
        ('{"kind": "record", "seq": 1, "at_ms": 0, "record": {"type": "Nope"}}', "unknown record type"),
    ],
)
def test_bad_lines_are_named_and_the_rest_is_read(line: str, expected: str) -> None:
    text = _write(EVENTS[:1]) + line + "\n" + _write(EVENTS[1:]).split("\n", 1)[1]
    out = list(read_events(io.StringIO(text).readlines(), source="t.jsonl"))
    errors = [e for e in out if isinstance(e, TraceLineError)]
    assert len(errors) == 1 and errors[0].line == 3 and expected in errors[0].message
    assert [e for e in out if not isinstance(e, TraceLineError | Header)] == EVENTS


def test_wrong_field_type_names_the_path() -> None:
    obj = event_to_json(JOIN)
    obj["request"]["protocols"][0]["metadata"] = 17
    (err,) = list(read_events([json.dumps(obj) + "\n"], source="t.jsonl"))
    assert isinstance(err, TraceLineError)
    assert "request.protocols[0].metadata" in err.message


def test_truncated_last_line() -> None:
    text = _write(EVENTS)
    cut = text[: len(text) - 20]
    out = list(read_events(io.StringIO(cut).readlines(), source="t.jsonl"))
    assert isinstance(out[-1], TraceLineError) and "truncated" in out[-1].message
    assert out[:-1] == [Header(source="test", minor=MINOR), *EVENTS[:2]]

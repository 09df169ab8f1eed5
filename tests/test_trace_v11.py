"""Trace format v1.1: Fetch and ApiVersions events and process identity (``peer``), written
by the recorder (fetch sessions and topic ids followed) and the simulator; v1 traces still
read unchanged."""

from __future__ import annotations

import io
import json
import socket
import struct
import threading
import time
from pathlib import Path

import jsonschema

from groupspec.recorder import BackgroundRecorder
from groupspec.recorder.client_apis import FetchSession, TopicNames, next_offset
from groupspec.recorder.schema import encode_body, spec_for
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import load_scenario_text
from groupspec.trace.events import (
    MINOR,
    ApiVersionRange,
    ApiVersionsEvent,
    FetchEvent,
    FetchPartition,
    Header,
    WireExchange,
)
from groupspec.trace.jsonl import TraceLineError, TraceWriter, event_to_json, read_events
from groupspec.trace.schema import trace_schema
from groupspec.validate import validate_bytes
from groupspec.validate.grouping import group_trace
from groupspec.validate.load import load_bytes, load_path

ROOT = Path(__file__).resolve().parent.parent
V1_TRACE = ROOT / "examples" / "validator-false-positives" / "kafka-leader-reelection.jsonl"

FETCH = FetchEvent(
    seq=1, connection="c3", client_id="consumer-1", api_version=11, correlation_id=9,
    sent_ms=5.0, received_ms=6.5,
    partitions=(FetchPartition("t", 0, 40, 0, 100, 60), FetchPartition("t", 1, 7)),
    peer="127.0.0.1:50123",
)
VERSIONS = ApiVersionsEvent(
    seq=2, connection="c3", client_id="consumer-1", api_version=3, correlation_id=1,
    sent_ms=1.0, received_ms=1.2, client_software_name="apache-kafka-java",
    client_software_version="4.1.2", error_code=0, api_keys=(ApiVersionRange(1, 4, 17),),
)


def _write(events: list[FetchEvent | ApiVersionsEvent]) -> str:
    buf = io.StringIO()
    w = TraceWriter(buf, source="test")
    for e in events:
        w.write(e)
    return buf.getvalue()


def test_v11_events_round_trip_and_match_the_schema() -> None:
    text = _write([FETCH, VERSIONS])
    back = list(read_events(text.splitlines(keepends=True)))
    assert back == [Header(source="test", minor=MINOR), FETCH, VERSIONS]
    validator = jsonschema.Draft202012Validator(trace_schema())
    for line in text.splitlines():
        errors = list(validator.iter_errors(json.loads(line)))
        assert errors == [], errors[0].message


def test_a_v1_trace_reads_unchanged() -> None:
    lines = V1_TRACE.read_text(encoding="utf-8").splitlines(keepends=True)
    events = list(read_events(lines, str(V1_TRACE)))
    assert not [e for e in events if isinstance(e, TraceLineError)]
    head = events[0]
    assert isinstance(head, Header) and head.version == 1 and head.minor == 0
    # every line re-encodes to exactly the object it was read from: no field added
    for line, event in zip(lines, events, strict=True):
        obj = json.loads(line)
        assert isinstance(event, Header | WireExchange) or event is not None
        again = event_to_json(event)  # type: ignore[arg-type]
        if isinstance(event, Header):
            again.pop("minor")
            assert again.pop("broker_config") == {}  # v1.2
        if isinstance(event, WireExchange):
            assert again.pop("peer") is None
            if event.api == "OffsetFetch":  # v1.2: OffsetFetch v9's member fields
                assert again["request"].pop("member_id") is None
                assert again["request"].pop("member_epoch") == -1
            # v1.2's committed leader epochs (KIP-320) and retention times are written only
            # when set (protocol/added_fields.py): a line without them is as it was
        assert again == obj


def test_a_bad_fetch_line_names_the_field() -> None:
    obj = event_to_json(FETCH)
    obj["partitions"][0]["fetch_offset"] = "forty"
    (err,) = read_events([json.dumps(obj) + "\n"], "t.jsonl")
    assert isinstance(err, TraceLineError) and "partitions[0].fetch_offset" in err.message


def test_fetch_sessions_and_topic_ids_are_followed() -> None:
    names = TopicNames()
    tid = bytes(range(16))
    names.learn_metadata({"topics": [{"name": "orders", "topic_id": tid}]})
    s = FetchSession()
    full = {"session_epoch": 0, "topics": [
        {"topic_id": tid, "partitions": [{"partition": 0, "fetch_offset": 5}, {"partition": 1, "fetch_offset": 9}]}]}
    assert s.request(full, names) == {("orders", 0): 5, ("orders", 1): 9}
    incremental = {"session_epoch": 1,
                   "topics": [{"topic_id": tid, "partitions": [{"partition": 0, "fetch_offset": 8}]}],
                   "forgotten_topics_data": [{"topic_id": tid, "partitions": [1]}]}
    assert s.request(incremental, names) == {("orders", 0): 8}
    unknown = {"session_epoch": 0, "topics": [{"topic_id": b"\x01" * 16, "partitions": [
        {"partition": 2, "fetch_offset": 0}]}]}
    assert s.request(unknown, names) == {("01" * 16, 2): 0}


def _batch(base: int, last_delta: int) -> bytes:
    body = struct.pack(">iBih", 0, 2, 0, 0) + struct.pack(">i", last_delta) + b"\x00" * 20
    return struct.pack(">qi", base, len(body)) + body


def test_next_offset_reads_the_last_complete_batch() -> None:
    assert next_offset(None) is None and next_offset(b"") is None
    assert next_offset(_batch(10, 4)) == 15
    assert next_offset(_batch(10, 4) + _batch(15, 2)) == 18
    assert next_offset(_batch(10, 4) + _batch(15, 2)[:-3]) == 15  # a batch cut short


# -- the proxy, against a fake broker ----------------------------------------------------
def _request(api_key: int, version: int, cid: int, client_id: str, body: dict[str, object]) -> bytes:
    spec = spec_for(api_key, "request")
    assert spec is not None
    payload = struct.pack(">hhih", api_key, version, cid, len(client_id)) + client_id.encode()
    payload += encode_body(spec, version, body)
    return struct.pack(">i", len(payload)) + payload


def _response(api_key: int, version: int, cid: int, body: dict[str, object]) -> bytes:
    spec = spec_for(api_key, "response")
    assert spec is not None
    payload = struct.pack(">i", cid) + encode_body(spec, version, body)
    return struct.pack(">i", len(payload)) + payload


def test_the_recorder_writes_fetch_and_api_versions_with_the_connection() -> None:
    fetch_resp = {
        "throttle_time_ms": 0, "error_code": 0, "session_id": 7,
        "responses": [{"topic": "orders", "partitions": [{
            "partition_index": 0, "error_code": 0, "high_watermark": 50, "last_stable_offset": 50,
            "log_start_offset": 0, "aborted_transactions": [], "preferred_read_replica": -1,
            "records": _batch(20, 9)}]}],
    }
    answers = {
        1: _response(18, 2, 1, {"error_code": 0, "throttle_time_ms": 0,
                                "api_keys": [{"api_key": 1, "min_version": 4, "max_version": 11}]}),
        2: _response(1, 11, 2, fetch_resp),
    }
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        buf = b""
        with conn:
            while chunk := conn.recv(65536):
                buf += chunk
                while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
                    size = struct.unpack_from(">i", buf)[0]
                    frame, buf = buf[4:4 + size], buf[4 + size:]
                    conn.sendall(answers[struct.unpack_from(">i", frame, 4)[0]])

    threading.Thread(target=serve, daemon=True).start()
    out = io.StringIO()
    fetch = {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1 << 20,
             "isolation_level": 0, "session_id": 0, "session_epoch": 0,
             "topics": [{"topic": "orders", "partitions": [
                 {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 20,
                  "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
             "forgotten_topics_data": [], "rack_id": ""}
    with BackgroundRecorder(server.getsockname()[:2], out) as rec:
        with socket.create_connection(rec.recorder.listen, timeout=5) as sock:
            sock.sendall(_request(18, 2, 1, "consumer-7", {}) + _request(1, 11, 2, "consumer-7", fetch))
            want = len(answers[1]) + len(answers[2])
            got = b""
            while len(got) < want:
                got += sock.recv(65536)
            assert got == answers[1] + answers[2]
            host, port = sock.getsockname()[:2]
            local = f"{host}:{port}"
        deadline = time.monotonic() + 5
        while out.getvalue().count("\n") < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    server.close()
    events = [e for e in read_events(out.getvalue().splitlines(keepends=True)) if not isinstance(e, TraceLineError)]
    head, versions, fe = events
    assert isinstance(head, Header) and head.minor == MINOR
    assert isinstance(versions, ApiVersionsEvent) and versions.api_keys == (ApiVersionRange(1, 4, 11),)
    assert isinstance(fe, FetchEvent)
    assert (fe.connection, fe.client_id, fe.peer) == ("c1", "consumer-7", local)
    assert fe.partitions == (FetchPartition("orders", 0, 20, 0, 50, 30),)


# -- the simulator -----------------------------------------------------------------------
EAGER = {
    "name": "eager", "group_id": "g", "until_ms": 20000, "topics": {"t": 2},
    "defaults": {"assignors": ["range"]},
    "members": [{"name": "a", "start_ms": 0}, {"name": "b", "start_ms": 100}],
}


def test_the_simulator_emits_fetches_that_group_by_group_id() -> None:
    res = simulate(load_scenario_text(json.dumps(EAGER), "eager.json"))
    fetches = [e for e in res.trace if isinstance(e, FetchEvent)]
    assert fetches and all(f.group_id == "g" and f.member_id for f in fetches)
    assert {f.connection for f in fetches} <= {"a#1", "b#1"}
    buf = io.StringIO()
    w = TraceWriter(buf, source="simulator")
    for e in res.trace:
        w.write(e)
    raw = buf.getvalue().encode()
    grouped = group_trace(load_bytes(raw, "sim"))
    assert len(grouped.groups["g"].fetches) == len(fetches)
    assert validate_bytes(raw, "sim").worst() == "conforming"


def test_v11_traces_read_the_same_from_parquet(tmp_path: Path) -> None:
    from groupspec.trace.parquet import jsonl_to_parquet
    from groupspec.validate import validate_path

    src = ROOT / "examples" / "conformance" / "kafka-4.1.2" / "cooperative-sticky--kafka-python.jsonl"
    dst = tmp_path / "t.parquet"
    jsonl_to_parquet(src, dst)
    a, b = group_trace(load_bytes(src.read_bytes(), "j")), group_trace(load_path(dst))
    assert {k: len(g.fetches) for k, g in a.groups.items()} == {k: len(g.fetches) for k, g in b.groups.items()}
    assert sum(len(g.fetches) for g in a.groups.values()) > 0
    assert validate_path(dst).worst() == validate_path(src).worst() == "conforming"


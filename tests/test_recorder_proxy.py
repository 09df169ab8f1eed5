"""The recording proxy against a scripted fake broker: bytes pass unchanged both ways
(undecodable frames included, each reported as a decode_error), group exchanges are
recorded with connection, client id and interval, advertised addresses are rewritten,
and a stream that is not Kafka at all is still forwarded."""

from __future__ import annotations

import io
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kafka.protocol.consumer.group import HeartbeatRequest, HeartbeatResponse, JoinGroupRequest
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.recorder import BackgroundRecorder
from groupspec.recorder.frames import decode_response
from groupspec.trace.events import DecodeErrorEvent, Event, Header, WireExchange
from groupspec.trace.jsonl import TraceLineError, read_events

Handler = Callable[[bytes], list[bytes]]


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def request(msg: Any, correlation_id: int, client_id: str = "client-a") -> bytes:
    msg.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(msg.encode(header=True, framed=True))


def response(msg: Any, correlation_id: int) -> bytes:
    msg.with_header(correlation_id=correlation_id)
    return bytes(msg.encode(header=True, framed=True))


def recv_exact(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError(f"closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


class FakeBroker:
    """Accepts connections; for every complete frame it receives, sends what ``handler``
    returns (already framed, or deliberately not). Keeps every byte it received."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.received = bytearray()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address: tuple[str, int] = self.sock.getsockname()[:2]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = bytearray()
        with conn:
            while chunk := conn.recv(65536):
                self.received += chunk
                buf += chunk
                while len(buf) >= 4:
                    (size,) = struct.unpack_from(">i", buf)
                    if size < 0 or len(buf) < 4 + size:
                        break
                    frame = bytes(buf[4 : 4 + size])
                    del buf[: 4 + size]
                    for out in self.handler(frame):
                        conn.sendall(out)

    def close(self) -> None:
        self.sock.close()


def events_of(out: io.StringIO) -> list[Event]:
    parsed = list(read_events(out.getvalue().splitlines(keepends=True), "recording"))
    assert not [e for e in parsed if isinstance(e, TraceLineError)]
    return [e for e in parsed if not isinstance(e, TraceLineError)]


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def proxied() -> Iterator[Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]]]:
    started: list[tuple[FakeBroker, BackgroundRecorder]] = []

    def start(handler: Handler) -> tuple[FakeBroker, BackgroundRecorder, io.StringIO]:
        broker = FakeBroker(handler)
        out = io.StringIO()
        rec = BackgroundRecorder(broker.address, out).start()
        started.append((broker, rec))
        return broker, rec, out

    yield start
    for broker, rec in started:
        rec.stop()
        broker.close()


def connect(rec: BackgroundRecorder) -> socket.socket:
    sock = socket.create_connection(rec.recorder.listen, timeout=5)
    return sock


def test_undecodable_frames_pass_unchanged_and_traffic_continues(
    proxied: Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]],
) -> None:
    # correlation id -> the exact bytes the fake broker answers with
    garbage_response = framed(struct.pack(">i", 2) + b"\x07not a JoinGroup response")
    answers = {
        1: framed(struct.pack(">i", 1) + b"whatever api 777 says"),
        2: garbage_response,
        3: framed(struct.pack(">i", 3) + b"\xff\xff"),  # a Heartbeat response cut short
        4: response(HeartbeatResponse(throttle_time_ms=0, error_code=27, version=4), 4),
    }

    def handler(frame: bytes) -> list[bytes]:
        if len(frame) < 8:
            return []
        (cid,) = struct.unpack_from(">i", frame, 4)
        return [answers[cid]] if cid in answers else []

    broker, rec, out = proxied(handler)
    unknown_api = framed(struct.pack(">hhih", 777, 0, 1, 1) + b"x" + b"\x00\x01\x02garbage")
    proto = JoinGroupRequest.JoinGroupRequestProtocol
    join = request(
        JoinGroupRequest(group_id="g", session_timeout_ms=1000, rebalance_timeout_ms=1000,
                         member_id="", protocol_type="consumer",
                         protocols=[proto(name="range", metadata=b"")], version=5),
        correlation_id=2,
    )
    truncated_join = framed(join[4:-6])  # header intact, body cut short
    heartbeat = request(HeartbeatRequest(group_id="g", generation_id=1, member_id="m", version=4), 3)
    too_short = framed(b"\x00\x0c\x00")
    heartbeat_ok = request(
        HeartbeatRequest(group_id="g", generation_id=2, member_id="m", version=4), 4, client_id="client-b"
    )
    sent = unknown_api + truncated_join + heartbeat + too_short + heartbeat_ok

    with connect(rec) as sock:
        sock.sendall(sent)
        expected = answers[1] + garbage_response + answers[3] + answers[4]
        assert recv_exact(sock, len(expected)) == expected
    wait_for(lambda: bytes(broker.received) == sent)
    wait_for(lambda: rec.recorder.stats.exchanges == 1)
    rec.stop()

    events = events_of(out)
    assert isinstance(events[0], Header) and events[0].source == "recorder"
    errors = [e for e in events if isinstance(e, DecodeErrorEvent)]
    assert [(e.direction, e.api_key, e.correlation_id) for e in errors] == [
        ("request", 11, 2),   # the truncated JoinGroup
        ("request", 12, None),  # too short for a request header
        ("response", 12, 3),  # the Heartbeat response cut short
    ]
    assert all(e.connection == "c1" for e in errors)
    assert errors[0].size == len(truncated_join) - 4
    (exchange,) = [e for e in events if isinstance(e, WireExchange)]
    assert exchange.api == "Heartbeat" and exchange.api_version == 4
    assert (exchange.connection, exchange.client_id, exchange.correlation_id) == ("c1", "client-b", 4)
    assert exchange.request == m.HeartbeatRequest(group_id="g", generation_id=2, member_id="m")
    assert exchange.response == m.HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS)
    assert exchange.received_ms is not None and exchange.sent_ms <= exchange.received_ms
    assert [e.seq for e in events] == list(range(len(events)))


def test_advertised_upstream_address_is_rewritten_to_the_proxy(
    proxied: Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]],
) -> None:
    upstream: list[tuple[str, int]] = []
    mbroker = MetadataResponse.MetadataResponseBroker
    coordinator = FindCoordinatorResponse.Coordinator

    def handler(frame: bytes) -> list[bytes]:
        api_key, version, cid = struct.unpack_from(">hhi", frame)
        host, port = upstream[0]
        if api_key == 3:
            return [response(MetadataResponse(
                throttle_time_ms=0, cluster_id="c", controller_id=1, topics=[],
                brokers=[mbroker(node_id=1, host=host, port=port, rack=None),
                         mbroker(node_id=2, host="elsewhere", port=port, rack=None)],
                version=version), cid)]
        return [response(FindCoordinatorResponse(
            throttle_time_ms=0,
            coordinators=[coordinator(key="g", node_id=1, host=host, port=port, error_code=0,
                                      error_message=None)],
            version=version), cid)]

    broker, rec, out = proxied(handler)
    upstream.append(broker.address)
    proxy = rec.recorder.listen
    metadata = request(MetadataRequest(topics=None, allow_auto_topic_creation=False, version=12), 1)
    find = request(FindCoordinatorRequest(key_type=0, coordinator_keys=["g"], version=4), 2)
    with connect(rec) as sock:
        sock.sendall(metadata)
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        body = decode_response(recv_exact(sock, size), 3, 12)
        assert [(b["host"], b["port"]) for b in body["brokers"]] == [
            proxy, ("elsewhere", broker.address[1])
        ]
        sock.sendall(find)
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        body = decode_response(recv_exact(sock, size), 10, 4)
        assert [(c["host"], c["port"]) for c in body["coordinators"]] == [proxy]
    wait_for(lambda: rec.recorder.stats.exchanges == 1)
    rec.stop()
    assert rec.recorder.stats.rewritten == 2
    (exchange,) = [e for e in events_of(out) if isinstance(e, WireExchange)]
    assert exchange.api == "FindCoordinator" and exchange.rewritten
    assert exchange.response == m.FindCoordinatorResponse(
        error=Error.NONE, node_id=1, host=proxy[0], port=proxy[1]
    )


def test_a_stream_that_is_not_kafka_is_forwarded_raw(
    proxied: Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]],
) -> None:
    broker, rec, out = proxied(lambda frame: [])
    noise = b"\xff\xff\xff\xfe" + bytes(range(256)) * 4
    with connect(rec) as sock:
        sock.sendall(noise)
        wait_for(lambda: bytes(broker.received) == noise)
    rec.stop()
    (error,) = [e for e in events_of(out) if isinstance(e, DecodeErrorEvent)]
    assert error.direction == "request" and "forwarded unparsed" in error.error


def test_a_request_left_unanswered_is_recorded_without_response(
    proxied: Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]],
) -> None:
    broker, rec, out = proxied(lambda frame: [])
    heartbeat = request(HeartbeatRequest(group_id="g", generation_id=1, member_id="m", version=2), 9)
    with connect(rec) as sock:
        sock.sendall(heartbeat)
        wait_for(lambda: bytes(broker.received) == heartbeat)
    rec.stop()
    (exchange,) = [e for e in events_of(out) if isinstance(e, WireExchange)]
    assert exchange.response is None and exchange.received_ms is None
    assert exchange.correlation_id == 9 and exchange.group_id == "g"


def test_a_frame_cut_off_by_a_disconnect_leaves_an_event(
    proxied: Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]],
) -> None:
    broker, rec, out = proxied(lambda frame: [])
    heartbeat = request(HeartbeatRequest(group_id="g", generation_id=1, member_id="m", version=2), 7)
    cut = heartbeat[: len(heartbeat) - 5]
    with connect(rec) as sock:
        sock.sendall(cut)  # and the client goes away inside the frame
    wait_for(lambda: bytes(broker.received) == cut)  # forwarded as it came
    wait_for(lambda: '"decode_error"' in out.getvalue())
    rec.stop()
    (error,) = [e for e in events_of(out) if isinstance(e, DecodeErrorEvent)]
    assert error.direction == "request" and error.size == len(cut)
    assert "cut off" in error.error and "api key 12, correlation id 7" in error.error
    assert not [e for e in events_of(out) if isinstance(e, WireExchange)]


def test_jitter_delays_requests_on_their_way_and_keeps_their_order() -> None:
    """With ``jitter_ms`` each request waits a random time (seeded) before the broker gets
    it; one connection's requests arrive in the order sent, the bytes unchanged, and each
    is stamped when the proxy read it, so the recorded interval holds the broker's turn."""
    arrivals: list[float] = []

    def answer(frame: bytes) -> list[bytes]:
        arrivals.append(time.time() * 1000.0)
        cid = struct.unpack_from(">i", frame, 4)[0]
        return [response(HeartbeatResponse[2](throttle_time_ms=0, error_code=0), cid)]

    broker = FakeBroker(answer)
    out = io.StringIO()
    rec = BackgroundRecorder(broker.address, out, jitter_ms=40.0, jitter_seed=7).start()
    beats = [request(HeartbeatRequest(group_id="g", generation_id=1, member_id="m", version=2), i)
             for i in range(1, 6)]
    try:
        with connect(rec) as sock:
            start = time.time() * 1000.0
            sock.sendall(b"".join(beats))
            wait_for(lambda: len(arrivals) == len(beats))
            for _ in beats:
                (size,) = struct.unpack(">i", recv_exact(sock, 4))
                recv_exact(sock, size)
    finally:
        rec.stop()
        broker.close()
    assert bytes(broker.received) == b"".join(beats)
    seeded = random.Random(7)
    waits = [seeded.uniform(0.0, 40.0) for _ in beats]
    # the pump waits before each request in turn: the last reached the broker no earlier
    # than the sum of the waits after the first was sent
    assert arrivals[-1] - start >= sum(waits) - 1.0
    exchanges = [e for e in events_of(out) if isinstance(e, WireExchange)]
    assert [e.correlation_id for e in exchanges] == [1, 2, 3, 4, 5]
    for e, at in zip(exchanges, arrivals, strict=True):
        assert e.received_ms is not None and e.sent_ms <= at <= e.received_ms


def test_offset_delete_and_txn_offset_commit_are_recorded(
    proxied: Callable[[Handler], tuple[FakeBroker, BackgroundRecorder, io.StringIO]],
) -> None:
    # both change a group's committed offsets: the recorder used to drop them silently, so
    # the validator judged later OffsetFetch answers against offsets the broker had changed
    from kafka.protocol.consumer.group import OffsetDeleteRequest, OffsetDeleteResponse
    from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse

    dtopic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    delete = request(OffsetDeleteRequest(group_id="g", topics=[
        dtopic(name="t", partitions=[dtopic.OffsetDeleteRequestPartition(partition_index=0)])], version=0), 3)
    ttopic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    txn = request(TxnOffsetCommitRequest(
        transactional_id="tx", group_id="g", producer_id=5, producer_epoch=0, generation_id=-1,
        member_id="", group_instance_id=None,
        topics=[ttopic(name="t", partitions=[ttopic.TxnOffsetCommitRequestPartition(
            partition_index=1, committed_offset=10, committed_leader_epoch=-1, committed_metadata="")])],
        version=3), 4)
    rd = OffsetDeleteResponse.OffsetDeleteResponseTopic
    rt = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic

    def answer(frame: bytes) -> list[bytes]:
        (key, _, cid) = struct.unpack_from(">hhi", frame)
        if key == 47:
            return [response(OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=[
                rd(name="t", partitions=[rd.OffsetDeleteResponsePartition(partition_index=0, error_code=0)])],
                version=0), cid)]
        return [response(TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
            rt(name="t", partitions=[rt.TxnOffsetCommitResponsePartition(partition_index=1, error_code=0)])],
            version=3), cid)]

    _broker, rec, out = proxied(answer)
    with connect(rec) as sock:
        sock.sendall(delete)
        sock.recv(65536)
        sock.sendall(txn)
        sock.recv(65536)
    wait_for(lambda: len([e for e in events_of(out) if isinstance(e, WireExchange)]) == 2)
    rec.stop()
    first, second = [e for e in events_of(out) if isinstance(e, WireExchange)]
    assert (first.api, first.api_key, first.group_id) == ("OffsetDelete", 47, "g")
    assert first.request == m.OffsetDeleteRequest(group_id="g", partitions=(("t", 0),))
    assert first.response == m.OffsetDeleteResponse(
        error=Error.NONE, partitions=(m.OffsetDeletePartitionResponse("t", 0, Error.NONE),))
    assert (second.api, second.api_key, second.group_id) == ("TxnOffsetCommit", 28, "g")
    assert isinstance(second.request, m.TxnOffsetCommitRequest)
    assert second.request.partitions == (m.TxnOffsetCommitPartition("t", 1, 10, ""),)
    assert second.response == m.TxnOffsetCommitResponse(
        partitions=(m.TxnOffsetCommitPartitionResponse("t", 1, 0),))

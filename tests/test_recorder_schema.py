"""The recorder's wire decoding, checked against kafka-python's own encoder (a separate
implementation of the same schemas): every version of the group APIs decodes to the
values that were encoded, re-encodes to the same bytes, and maps onto groupspec's
messages; malformed bodies fail with the field that is wrong."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.metadata.metadata import MetadataResponse

from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.recorder.convert import NotRepresentable, to_request, to_response
from groupspec.recorder.frames import (
    decode_request,
    decode_response,
    parse_request_header,
    rewrite_addresses,
)
from groupspec.recorder.schema import (
    UNKNOWN_TAGGED,
    SchemaError,
    decode_body,
    encode_body,
    snake,
    spec_for,
    uvarint,
)


def request_frame(msg: Any, correlation_id: int = 7, client_id: str = "cli") -> bytes:
    """A request as kafka-python puts it on the wire, without the size prefix."""
    msg.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(msg.encode(header=True, framed=True))[4:]


def response_frame(msg: Any, correlation_id: int = 7) -> bytes:
    msg.with_header(correlation_id=correlation_id)
    return bytes(msg.encode(header=True, framed=True))[4:]


SUB = Subscription(("t1", "t2"), owned_partitions={"t1": (0,)}, generation_id=4).encode()


@pytest.mark.parametrize("version", range(10))
def test_join_group_request_every_version(version: int) -> None:
    proto = JoinGroupRequest.JoinGroupRequestProtocol
    wire = request_frame(
        JoinGroupRequest(
            group_id="g", session_timeout_ms=10_000, rebalance_timeout_ms=30_000, member_id="m-1",
            group_instance_id="static-1" if version >= 5 else None, protocol_type="consumer",
            protocols=[proto(name="cooperative-sticky", metadata=SUB), proto(name="range", metadata=SUB)],
            reason="rejoin" if version >= 8 else None, version=version,
        ),
        client_id="consumer-7",
    )
    header = parse_request_header(wire)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        11, version, 7, "consumer-7"
    )
    body = decode_request(wire, header)
    spec = spec_for(11, "request")
    assert spec is not None
    assert header.body_offset is not None
    assert encode_body(spec, version, body) == wire[header.body_offset :]
    req = to_request(11, version, body, "consumer-7", "/127.0.0.1")
    assert isinstance(req, m.JoinGroupRequest)
    assert req.group_id == "g" and req.member_id == "m-1" and req.version == version
    assert req.protocol_names() == ("cooperative-sticky", "range")
    assert Subscription.decode(req.protocols[0].metadata).topics == ("t1", "t2")
    assert req.session_timeout_ms == 10_000
    # v0 has no rebalance timeout: the session timeout stands in for it
    assert req.rebalance_timeout_ms == (10_000 if version == 0 else 30_000)
    assert req.group_instance_id == ("static-1" if version >= 5 else None)
    assert req.reason == ("rejoin" if version >= 8 else None)
    assert (req.client_id, req.client_host) == ("consumer-7", "/127.0.0.1")


@pytest.mark.parametrize("version", range(10))
def test_join_group_response_every_version(version: int) -> None:
    member = JoinGroupResponse.JoinGroupResponseMember
    wire = response_frame(
        JoinGroupResponse(
            throttle_time_ms=0, error_code=0, generation_id=5,
            protocol_type="consumer" if version >= 7 else None, protocol_name="range",
            leader="m-1", skip_assignment=False, member_id="m-2",
            members=[member(member_id="m-1", group_instance_id=None, metadata=SUB)],
            version=version,
        )
    )
    resp = to_response(11, version, decode_response(wire, 11, version))
    assert isinstance(resp, m.JoinGroupResponse)
    assert resp.error is Error.NONE and resp.generation_id == 5
    assert (resp.leader, resp.member_id, resp.protocol_name) == ("m-1", "m-2", "range")
    assert [x.member_id for x in resp.members] == ["m-1"]
    assert resp.members[0].metadata == SUB


@pytest.mark.parametrize("version", range(6))
def test_sync_group_both_ways(version: int) -> None:
    assignment = Assignment({"t1": (0, 2)}).encode()
    sync = SyncGroupRequest.SyncGroupRequestAssignment
    wire = request_frame(
        SyncGroupRequest(
            group_id="g", generation_id=5, member_id="m-1", group_instance_id=None,
            protocol_type="consumer", protocol_name="range",
            assignments=[sync(member_id="m-1", assignment=assignment)], version=version,
        )
    )
    header = parse_request_header(wire)
    req = to_request(14, version, decode_request(wire, header), "cli", "/h")
    assert isinstance(req, m.SyncGroupRequest)
    assert (req.generation_id, req.member_id) == (5, "m-1")
    assert req.assignments == (m.SyncGroupAssignment("m-1", assignment),)
    assert req.protocol_name == ("range" if version >= 5 else None)

    wire = response_frame(
        SyncGroupResponse(throttle_time_ms=0, error_code=27, protocol_type="consumer",
                          protocol_name="range", assignment=assignment, version=version)
    )
    resp = to_response(14, version, decode_response(wire, 14, version))
    assert isinstance(resp, m.SyncGroupResponse)
    assert resp.error is Error.REBALANCE_IN_PROGRESS
    assert Assignment.decode(resp.assignment).partitions == {"t1": (0, 2)}


@pytest.mark.parametrize("version", range(6))
def test_leave_group_old_and_batched_forms(version: int) -> None:
    identity = LeaveGroupRequest.MemberIdentity
    wire = request_frame(
        LeaveGroupRequest(
            group_id="g", member_id="m-1",
            members=[identity(member_id="m-1", group_instance_id="s-1", reason="bye")],
            version=version,
        )
    )
    req = to_request(13, version, decode_request(wire, parse_request_header(wire)), "c", "/h")
    assert isinstance(req, m.LeaveGroupRequest)
    expected = (
        m.MemberIdentity("m-1") if version < 3
        else m.MemberIdentity("m-1", "s-1", "bye" if version >= 5 else None)
    )
    assert req.members == (expected,)


@pytest.mark.parametrize("version", [2, 5, 7, 8, 9])
def test_offset_commit_request(version: int) -> None:
    topic = OffsetCommitRequest.OffsetCommitRequestTopic
    part = topic.OffsetCommitRequestPartition
    wire = request_frame(
        OffsetCommitRequest(
            group_id="g", generation_id_or_member_epoch=3, member_id="m-1", group_instance_id=None,
            retention_time_ms=-1,
            topics=[topic(name="t1", partitions=[
                part(partition_index=0, committed_offset=17, committed_leader_epoch=-1,
                     committed_metadata="meta"),
            ])],
            version=version,
        )
    )
    req = to_request(8, version, decode_request(wire, parse_request_header(wire)), "c", "/h")
    assert req == m.OffsetCommitRequest(
        group_id="g", generation_id=3, member_id="m-1",
        partitions=(m.OffsetCommitPartition("t1", 0, 17, "meta"),), version=version,
    )


def test_offset_fetch_old_and_batched_forms() -> None:
    topic = OffsetFetchRequest.OffsetFetchRequestTopic
    wire = request_frame(
        OffsetFetchRequest(group_id="g", topics=[topic(name="t1", partition_indexes=[0, 1])],
                           require_stable=True, version=7)
    )
    req = to_request(9, 7, decode_request(wire, parse_request_header(wire)), "c", "/h")
    assert req == m.OffsetFetchRequest(group_id="g", partitions=(("t1", 0), ("t1", 1)), require_stable=True)

    group = OffsetFetchRequest.OffsetFetchRequestGroup
    wire = request_frame(
        OffsetFetchRequest(groups=[group(group_id="g", member_id=None, member_epoch=-1, topics=None)],
                           require_stable=False, version=9)
    )
    req = to_request(9, 9, decode_request(wire, parse_request_header(wire)), "c", "/h")
    assert req == m.OffsetFetchRequest(group_id="g", partitions=None)

    two = request_frame(
        OffsetFetchRequest(groups=[group(group_id="a", topics=None), group(group_id="b", topics=None)],
                           version=8)
    )
    with pytest.raises(NotRepresentable, match="batched request for 2 groups"):
        to_request(9, 8, decode_request(two, parse_request_header(two)), "c", "/h")

    rtopic = OffsetFetchResponse.OffsetFetchResponseTopic
    rpart = rtopic.OffsetFetchResponsePartition
    wire = response_frame(
        OffsetFetchResponse(throttle_time_ms=0, error_code=0, topics=[rtopic(name="t1", partitions=[
            rpart(partition_index=1, committed_offset=9, committed_leader_epoch=-1, metadata="",
                  error_code=0)])], version=5)
    )
    assert to_response(9, 5, decode_response(wire, 9, 5)) == m.OffsetFetchResponse(
        error=Error.NONE, partitions=(m.OffsetFetchPartitionResponse("t1", 1, 9, "", Error.NONE),)
    )


@pytest.mark.parametrize("version", range(7))
def test_find_coordinator_single_and_batched_forms(version: int) -> None:
    wire = request_frame(
        FindCoordinatorRequest(key="g", key_type=0, coordinator_keys=["g"], version=version)
    )
    req = to_request(10, version, decode_request(wire, parse_request_header(wire)), "c", "/h")
    assert req == m.FindCoordinatorRequest(key="g")
    coordinator = FindCoordinatorResponse.Coordinator
    wire = response_frame(
        FindCoordinatorResponse(
            throttle_time_ms=0, error_code=0, error_message=None, node_id=1, host="broker", port=9092,
            coordinators=[coordinator(key="g", node_id=1, host="broker", port=9092, error_code=0,
                                      error_message=None)],
            version=version,
        )
    )
    assert to_response(10, version, decode_response(wire, 10, version)) == m.FindCoordinatorResponse(
        error=Error.NONE, node_id=1, host="broker", port=9092
    )


def test_heartbeat_unknown_error_code_is_not_representable() -> None:
    wire = request_frame(HeartbeatRequest(group_id="g", generation_id=1, member_id="m", version=4))
    body = decode_request(wire, parse_request_header(wire))
    assert to_request(12, 4, body, "c", "/h") == m.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
    with pytest.raises(NotRepresentable, match="unknown Kafka error code 9999"):
        to_response(12, 4, {"throttle_time_ms": 0, "error_code": 9999})


def test_unknown_tagged_fields_survive_a_round_trip() -> None:
    spec = spec_for(12, "request")
    assert spec is not None
    plain = encode_body(spec, 4, {"group_id": "g", "generation_id": 1, "member_id": "m",
                                  "group_instance_id": None})
    # replace the empty tagged section (0) with two fields the schema does not know
    tagged = plain[:-1] + uvarint(2) + uvarint(5) + uvarint(2) + b"hi" + uvarint(300) + uvarint(0)
    body = decode_body(spec, 4, tagged)
    assert body[UNKNOWN_TAGGED] == [[5, b"hi"], [300, b""]]
    assert encode_body(spec, 4, body) == tagged


def test_malformed_bodies_name_the_field() -> None:
    spec = spec_for(11, "request")
    assert spec is not None
    wire = request_frame(
        JoinGroupRequest(group_id="g", session_timeout_ms=1, rebalance_timeout_ms=1, member_id="",
                         protocol_type="consumer", protocols=[], version=5)
    )
    header = parse_request_header(wire)
    assert header.body_offset is not None
    with pytest.raises(SchemaError, match="truncated"):
        decode_body(spec, 5, wire[:-3], header.body_offset)
    with pytest.raises(SchemaError, match="2 bytes left after the last field"):
        decode_body(spec, 5, wire + b"\x00\x00", header.body_offset)
    with pytest.raises(SchemaError, match="not described"):
        decode_body(spec, 10, wire, header.body_offset)


def test_metadata_rewrite_changes_only_the_matching_broker() -> None:
    broker = MetadataResponse.MetadataResponseBroker
    for version in (1, 8, 12):
        wire = response_frame(
            MetadataResponse(
                throttle_time_ms=0,
                brokers=[broker(node_id=1, host="127.0.0.1", port=9093, rack=None),
                         broker(node_id=2, host="other", port=9093, rack="r")],
                cluster_id="c", controller_id=1, topics=[], version=version,
            )
        )

        def to_proxy(host: str, port: int) -> tuple[str, int] | None:
            return ("127.0.0.1", 19092) if (host, port) == ("127.0.0.1", 9093) else None

        out = rewrite_addresses(wire, 3, version, to_proxy)
        assert out is not None
        brokers = decode_response(out, 3, version)["brokers"]
        assert [(b["host"], b["port"]) for b in brokers] == [("127.0.0.1", 19092), ("other", 9093)]
        # the same frame but for the address is what the broker sent
        assert out.replace((19092).to_bytes(4, "big"), (9093).to_bytes(4, "big")) == wire
        assert rewrite_addresses(wire, 3, version, lambda h, p: None) is None


def test_snake_case_names() -> None:
    assert snake("GenerationIdOrMemberEpoch") == "generation_id_or_member_epoch"
    assert snake("ThrottleTimeMs") == "throttle_time_ms"
    assert snake("IsrNodes") == "isr_nodes"


def test_offset_delete_both_ways() -> None:
    # OffsetDelete (47, v0 only in Kafka 4.1.2): recorded as an exchange of its group, the
    # partitions flattened as OffsetCommit's are
    from kafka.protocol.consumer.group import OffsetDeleteRequest, OffsetDeleteResponse

    topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    wire = request_frame(OffsetDeleteRequest(group_id="g", topics=[
        topic(name="t1", partitions=[topic.OffsetDeleteRequestPartition(partition_index=0),
                                     topic.OffsetDeleteRequestPartition(partition_index=2)]),
        topic(name="t2", partitions=[topic.OffsetDeleteRequestPartition(partition_index=1)]),
    ], version=0))
    header = parse_request_header(wire)
    assert header.api_key == 47
    req = to_request(47, 0, decode_request(wire, header), "c", "/h")
    assert req == m.OffsetDeleteRequest(group_id="g", partitions=(("t1", 0), ("t1", 2), ("t2", 1)))
    rtopic = OffsetDeleteResponse.OffsetDeleteResponseTopic
    rpart = rtopic.OffsetDeleteResponsePartition
    wire = response_frame(OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=[
        rtopic(name="t1", partitions=[rpart(partition_index=0, error_code=0),
                                      rpart(partition_index=2, error_code=86)]),
    ], version=0))
    resp = to_response(47, 0, decode_response(wire, 47, 0))
    assert resp == m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("t1", 0, Error.NONE),
        m.OffsetDeletePartitionResponse("t1", 2, Error.GROUP_SUBSCRIBED_TO_TOPIC),
    ))
    wire = response_frame(OffsetDeleteResponse(error_code=69, throttle_time_ms=0, topics=[], version=0))
    assert to_response(47, 0, decode_response(wire, 47, 0)) == m.OffsetDeleteResponse(
        error=Error.GROUP_ID_NOT_FOUND)


@pytest.mark.parametrize("version", [0, 2, 3, 4, 5])
def test_txn_offset_commit_both_ways(version: int) -> None:
    # TxnOffsetCommit (28) is recorded, not modelled: its group, the partitions and offsets
    # it names, and the response's error codes as numbers (transaction errors included)
    from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse

    topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    part = topic.TxnOffsetCommitRequestPartition
    fields: dict[str, Any] = {}
    if version >= 3:
        fields = {"generation_id": 4, "member_id": "m-1", "group_instance_id": None}
    wire = request_frame(TxnOffsetCommitRequest(
        transactional_id="tx", group_id="g", producer_id=9, producer_epoch=1, **fields,
        topics=[topic(name="t1", partitions=[part(partition_index=0, committed_offset=42,
                                                  committed_leader_epoch=-1, committed_metadata=None)])],
        version=version))
    header = parse_request_header(wire)
    assert header.api_key == 28
    req = to_request(28, version, decode_request(wire, header), "c", "/h")
    assert req == m.TxnOffsetCommitRequest(
        group_id="g", transactional_id="tx", producer_id=9, producer_epoch=1,
        generation_id=4 if version >= 3 else -1, member_id="m-1" if version >= 3 else "",
        partitions=(m.TxnOffsetCommitPartition("t1", 0, 42, None),))
    rtopic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
    wire = response_frame(TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        rtopic(name="t1", partitions=[rtopic.TxnOffsetCommitResponsePartition(partition_index=0, error_code=47)]),
    ], version=version))
    resp = to_response(28, version, decode_response(wire, 28, version))
    # 47 INVALID_PRODUCER_EPOCH: outside groupspec's Error, kept as its code
    assert resp == m.TxnOffsetCommitResponse(partitions=(m.TxnOffsetCommitPartitionResponse("t1", 0, 47),))

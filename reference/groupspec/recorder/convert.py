"""Decoded wire bodies (plain dicts, :mod:`groupspec.recorder.schema`) -> the protocol
values of :mod:`groupspec.protocol.messages`, for the group APIs that trace v1 records.

The messages model the classic group protocol with one group per request. A wire body
that cannot be said in those terms — a batched FindCoordinator or OffsetFetch naming
several groups, an OffsetCommit by topic id (v10), an error code groupspec does not know —
raises :class:`NotRepresentable`, and the recorder writes a ``decode_error`` for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from groupspec.protocol import consumer_group_messages as cgm
from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId


class NotRepresentable(ValueError):
    """A body that decodes but has no faithful value in groupspec's message vocabulary."""


def _error(code: Any) -> Error:
    try:
        return Error.from_code(int(code))
    except ValueError as e:
        raise NotRepresentable(str(e)) from None


def _topic_name(topic: Mapping[str, Any]) -> str:
    if "name" not in topic:
        raise NotRepresentable("topics named by topic id (v10+) are not modelled")
    return str(topic["name"])


def _single(items: list[Any], what: str) -> Any:
    if len(items) != 1:
        raise NotRepresentable(f"a batched request for {len(items)} {what} is not modelled")
    return items[0]


# -- requests ----------------------------------------------------------------------------


def _join_group_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.JoinGroupRequest(
        group_id=b["group_id"],
        member_id=b["member_id"],
        group_instance_id=b.get("group_instance_id"),
        protocol_type=b["protocol_type"],
        protocols=tuple(m.JoinGroupProtocol(p["name"], bytes(p["metadata"])) for p in b["protocols"]),
        session_timeout_ms=b["session_timeout_ms"],
        # v0 has none; the message substitutes the session timeout (KAFKA-8653)
        rebalance_timeout_ms=b.get("rebalance_timeout_ms", -1),
        client_id=client_id,
        client_host=client_host,
        version=v,
        reason=b.get("reason"),
    )


def _sync_group_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.SyncGroupRequest(
        group_id=b["group_id"],
        generation_id=b["generation_id"],
        member_id=b["member_id"],
        group_instance_id=b.get("group_instance_id"),
        protocol_type=b.get("protocol_type"),
        protocol_name=b.get("protocol_name"),
        assignments=tuple(
            m.SyncGroupAssignment(a["member_id"], bytes(a["assignment"])) for a in b["assignments"]
        ),
    )


def _heartbeat_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.HeartbeatRequest(
        group_id=b["group_id"],
        generation_id=b["generation_id"],
        member_id=b["member_id"],
        group_instance_id=b.get("group_instance_id"),
    )


def _leave_group_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    if "members" in b:
        members = tuple(
            m.MemberIdentity(x["member_id"], x.get("group_instance_id"), x.get("reason"))
            for x in b["members"]
        )
    else:
        members = (m.MemberIdentity(b["member_id"]),)
    return m.LeaveGroupRequest(group_id=b["group_id"], members=members)


def _offset_commit_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    if v > m.OFFSET_COMMIT_MAX_VERSION:
        raise NotRepresentable(f"OffsetCommit v{v} (topic ids) is not modelled")
    return m.OffsetCommitRequest(
        group_id=b["group_id"],
        generation_id=b.get("generation_id_or_member_epoch", m.UNKNOWN_GENERATION_ID),
        member_id=b.get("member_id", m.UNKNOWN_MEMBER_ID),
        group_instance_id=b.get("group_instance_id"),
        partitions=tuple(
            m.OffsetCommitPartition(
                _topic_name(t), p["partition_index"], p["committed_offset"], p.get("committed_metadata"),
                p.get("committed_leader_epoch", -1),  # v6+ (absent before: none)
            )
            for t in b["topics"]
            for p in t["partitions"]
        ),
        version=v,
        # v2-v4 (absent otherwise: the broker's retention)
        retention_time_ms=b.get("retention_time_ms", m.DEFAULT_RETENTION_TIME),
    )


def _offset_fetch_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    if "groups" in b:
        group = _single(b["groups"], "groups")
        group_id, topics = group["group_id"], group["topics"]
    else:
        group_id, topics = b["group_id"], b["topics"]
    partitions = None
    if topics is not None:
        partitions = tuple(
            (_topic_name(t), int(p)) for t in topics for p in t["partition_indexes"]
        )
    member: dict[str, Any] = {}
    if "groups" in b and "member_id" in group:
        # v9 (KIP-848): the member asking, checked by a consumer group
        member = {"member_id": group.get("member_id"), "member_epoch": group.get("member_epoch", -1)}
    return m.OffsetFetchRequest(
        group_id=group_id, partitions=partitions, require_stable=bool(b.get("require_stable", False)),
        **member,
    )


def _find_coordinator_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    key = _single(b["coordinator_keys"], "keys") if "coordinator_keys" in b else b["key"]
    return m.FindCoordinatorRequest(key=key, key_type=b.get("key_type", 0))


def _describe_groups_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.DescribeGroupsRequest(groups=tuple(b["groups"]), version=min(v, m.DESCRIBE_GROUPS_MAX_VERSION))


def _list_groups_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.ListGroupsRequest(states_filter=tuple(b.get("states_filter", ())),
                               types_filter=tuple(b.get("types_filter", ())) if v >= 5 else None)


def _delete_groups_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.DeleteGroupsRequest(groups_names=tuple(b["groups_names"]))


# -- responses ---------------------------------------------------------------------------


def _join_group_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.JoinGroupResponse(
        error=_error(b["error_code"]),
        generation_id=b["generation_id"],
        protocol_type=b.get("protocol_type"),
        protocol_name=b["protocol_name"],
        leader=b["leader"],
        skip_assignment=bool(b.get("skip_assignment", False)),
        member_id=b["member_id"],
        members=tuple(
            m.JoinGroupResponseMember(x["member_id"], x.get("group_instance_id"), bytes(x["metadata"]))
            for x in b["members"]
        ),
    )


def _sync_group_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.SyncGroupResponse(
        error=_error(b["error_code"]),
        protocol_type=b.get("protocol_type"),
        protocol_name=b.get("protocol_name"),
        assignment=bytes(b["assignment"]),
    )


def _heartbeat_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.HeartbeatResponse(error=_error(b["error_code"]))


def _leave_group_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.LeaveGroupResponse(
        error=_error(b["error_code"]),
        members=tuple(
            m.LeaveGroupMemberResponse(x["member_id"], x.get("group_instance_id"), _error(x["error_code"]))
            for x in b.get("members", ())
        ),
    )


def _offset_commit_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.OffsetCommitResponse(
        partitions=tuple(
            m.OffsetCommitPartitionResponse(_topic_name(t), p["partition_index"], _error(p["error_code"]))
            for t in b["topics"]
            for p in t["partitions"]
        )
    )


def _offset_fetch_response(b: Mapping[str, Any], v: int) -> m.Response:
    if "groups" in b:
        group = _single(b["groups"], "groups")
        topics, error = group["topics"], group["error_code"]
    else:
        topics, error = b["topics"], b.get("error_code", 0)
    return m.OffsetFetchResponse(
        error=_error(error),
        partitions=tuple(
            m.OffsetFetchPartitionResponse(
                _topic_name(t), p["partition_index"], p["committed_offset"], p["metadata"],
                _error(p["error_code"]), p.get("committed_leader_epoch", -1),  # v5+ (absent before: none)
            )
            for t in topics
            for p in t["partitions"]
        ),
    )


def _find_coordinator_response(b: Mapping[str, Any], v: int) -> m.Response:
    c = _single(b["coordinators"], "keys") if "coordinators" in b else b
    return m.FindCoordinatorResponse(
        error=_error(c["error_code"]), node_id=c["node_id"], host=c["host"], port=c["port"]
    )


def _describe_groups_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.DescribeGroupsResponse(
        groups=tuple(
            m.DescribedGroup(
                error=_error(g["error_code"]),
                group_id=g["group_id"],
                group_state=g["group_state"],
                protocol_type=g["protocol_type"],
                protocol_data=g["protocol_data"],
                members=tuple(
                    m.DescribedGroupMember(
                        x["member_id"], x.get("group_instance_id"), x["client_id"], x["client_host"],
                        bytes(x["member_metadata"]), bytes(x["member_assignment"]),
                    )
                    for x in g["members"]
                ),
            )
            for g in b["groups"]
        )
    )


def _list_groups_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.ListGroupsResponse(
        error=_error(b["error_code"]),
        groups=tuple(
            m.ListedGroup(g["group_id"], g["protocol_type"], g.get("group_state", ""),
                          g.get("group_type") if v >= 5 else None)
            for g in b["groups"]
        ),
    )


def _delete_groups_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.DeleteGroupsResponse(
        results=tuple(m.DeletableGroupResult(r["group_id"], _error(r["error_code"])) for r in b["results"])
    )


def _topic_id(raw: Any) -> TopicId:
    if isinstance(raw, bytes | bytearray) and len(raw) == 16:
        return TopicId(int.from_bytes(raw, "big"))
    if isinstance(raw, str):
        return TopicId.parse(raw)
    raise NotRepresentable(f"not a topic id: {raw!r}")


def _heartbeat_partitions(items: Any) -> tuple[cgm.HeartbeatTopicPartitions, ...] | None:
    if items is None:
        return None
    return tuple(cgm.HeartbeatTopicPartitions(_topic_id(t["topic_id"]), tuple(t["partitions"]))
                 for t in items)


def _consumer_group_heartbeat_request(b: Mapping[str, Any], v: int, client_id: str,
                                      client_host: str) -> m.Request:
    names = b.get("subscribed_topic_names")
    return cgm.ConsumerGroupHeartbeatRequest(
        group_id=b["group_id"],
        member_id=b["member_id"],
        member_epoch=b["member_epoch"],
        instance_id=b.get("instance_id"),
        rack_id=b.get("rack_id"),
        rebalance_timeout_ms=b.get("rebalance_timeout_ms", -1),
        subscribed_topic_names=tuple(names) if names is not None else None,
        subscribed_topic_regex=b.get("subscribed_topic_regex"),
        server_assignor=b.get("server_assignor"),
        topic_partitions=_heartbeat_partitions(b.get("topic_partitions")),
        version=v,
        client_id=client_id,
        client_host=client_host,
    )


def _consumer_group_heartbeat_response(b: Mapping[str, Any], v: int) -> m.Response:
    a = b.get("assignment")
    parts = _heartbeat_partitions(a["topic_partitions"]) if a is not None else None
    return cgm.ConsumerGroupHeartbeatResponse(
        error=_error(b["error_code"]),
        error_message=b.get("error_message"),
        member_id=b.get("member_id"),
        member_epoch=b["member_epoch"],
        heartbeat_interval_ms=b["heartbeat_interval_ms"],
        assignment=cgm.HeartbeatAssignment(parts or ()) if a is not None else None,
        throttle_time_ms=b.get("throttle_time_ms", 0),
    )


def _consumer_group_describe_request(b: Mapping[str, Any], v: int, client_id: str,
                                     client_host: str) -> m.Request:
    return cgm.ConsumerGroupDescribeRequest(
        group_ids=tuple(b["group_ids"]),
        include_authorized_operations=bool(b.get("include_authorized_operations", False)),
        version=v,
    )


def _described_assignment(a: Mapping[str, Any]) -> cgm.DescribedAssignment:
    return cgm.DescribedAssignment(tuple(
        cgm.DescribedTopicPartitions(_topic_id(t["topic_id"]), t["topic_name"], tuple(t["partitions"]))
        for t in a["topic_partitions"]))


def _consumer_group_describe_response(b: Mapping[str, Any], v: int) -> m.Response:
    return cgm.ConsumerGroupDescribeResponse(
        groups=tuple(
            cgm.DescribedGroup(
                error=_error(g["error_code"]),
                error_message=g.get("error_message"),
                group_id=g["group_id"],
                group_state=g["group_state"],
                group_epoch=g["group_epoch"],
                assignment_epoch=g["assignment_epoch"],
                assignor_name=g["assignor_name"],
                members=tuple(
                    cgm.DescribedMember(
                        member_id=x["member_id"], instance_id=x.get("instance_id"),
                        rack_id=x.get("rack_id"), member_epoch=x["member_epoch"],
                        client_id=x["client_id"], client_host=x["client_host"],
                        subscribed_topic_names=tuple(x["subscribed_topic_names"]),
                        subscribed_topic_regex=x.get("subscribed_topic_regex"),
                        assignment=_described_assignment(x["assignment"]),
                        target_assignment=_described_assignment(x["target_assignment"]),
                        member_type=x.get("member_type", cgm.MEMBER_TYPE_UNKNOWN),
                    )
                    for x in g["members"]
                ),
                authorized_operations=g.get("authorized_operations", cgm.AUTHORIZED_OPERATIONS_OMITTED),
            )
            for g in b["groups"]
        ),
        throttle_time_ms=b.get("throttle_time_ms", 0),
    )


def _offset_delete_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    return m.OffsetDeleteRequest(
        group_id=b["group_id"],
        partitions=tuple((_topic_name(t), int(p["partition_index"])) for t in b["topics"] for p in t["partitions"]),
    )


def _offset_delete_response(b: Mapping[str, Any], v: int) -> m.Response:
    return m.OffsetDeleteResponse(
        error=_error(b["error_code"]),
        partitions=tuple(
            m.OffsetDeletePartitionResponse(_topic_name(t), p["partition_index"], _error(p["error_code"]))
            for t in b["topics"]
            for p in t["partitions"]
        ),
    )


def _txn_offset_commit_request(b: Mapping[str, Any], v: int, client_id: str, client_host: str) -> m.Request:
    # replayed for the group's check of it (v3+ carry the member's generation and ids); the
    # offsets become committed when the transaction commits (not modelled)
    return m.TxnOffsetCommitRequest(
        group_id=b["group_id"],
        transactional_id=b["transactional_id"],
        producer_id=b["producer_id"],
        producer_epoch=b["producer_epoch"],
        generation_id=b.get("generation_id", m.UNKNOWN_GENERATION_ID),
        member_id=b.get("member_id", m.UNKNOWN_MEMBER_ID),
        group_instance_id=b.get("group_instance_id"),
        partitions=tuple(
            m.TxnOffsetCommitPartition(_topic_name(t), p["partition_index"], p["committed_offset"],
                                       p.get("committed_metadata"), p.get("committed_leader_epoch", -1))
            for t in b["topics"]
            for p in t["partitions"]
        ),
    )


def _txn_offset_commit_response(b: Mapping[str, Any], v: int) -> m.Response:
    # error codes kept as numbers: the transaction errors are not in the group vocabulary
    return m.TxnOffsetCommitResponse(
        partitions=tuple(
            m.TxnOffsetCommitPartitionResponse(_topic_name(t), p["partition_index"], int(p["error_code"]))
            for t in b["topics"]
            for p in t["partitions"]
        ),
    )


RequestConverter = Callable[[Mapping[str, Any], int, str, str], m.Request]
ResponseConverter = Callable[[Mapping[str, Any], int], m.Response]

#: api key -> (request converter, response converter)
CONVERTERS: dict[int, tuple[RequestConverter, ResponseConverter]] = {
    8: (_offset_commit_request, _offset_commit_response),
    9: (_offset_fetch_request, _offset_fetch_response),
    10: (_find_coordinator_request, _find_coordinator_response),
    11: (_join_group_request, _join_group_response),
    12: (_heartbeat_request, _heartbeat_response),
    13: (_leave_group_request, _leave_group_response),
    14: (_sync_group_request, _sync_group_response),
    15: (_describe_groups_request, _describe_groups_response),
    16: (_list_groups_request, _list_groups_response),
    42: (_delete_groups_request, _delete_groups_response),
    47: (_offset_delete_request, _offset_delete_response),
    28: (_txn_offset_commit_request, _txn_offset_commit_response),
    cgm.CONSUMER_GROUP_HEARTBEAT_API_KEY: (_consumer_group_heartbeat_request,
                                           _consumer_group_heartbeat_response),
    cgm.CONSUMER_GROUP_DESCRIBE_API_KEY: (_consumer_group_describe_request,
                                          _consumer_group_describe_response),
}


def to_request(
    api_key: int, version: int, body: Mapping[str, Any], client_id: str, client_host: str
) -> m.Request:
    try:
        return CONVERTERS[api_key][0](body, version, client_id, client_host)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, NotRepresentable):
            raise
        raise NotRepresentable(f"{type(e).__name__}: {e}") from None


def to_response(api_key: int, version: int, body: Mapping[str, Any]) -> m.Response:
    try:
        return CONVERTERS[api_key][1](body, version)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, NotRepresentable):
            raise
        raise NotRepresentable(f"{type(e).__name__}: {e}") from None

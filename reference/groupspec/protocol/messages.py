"""Requests and responses of the classic group protocol, as decoded values.

Field names follow Kafka's message JSON (clients/src/main/resources/common/message/*.json)
in snake_case, so a recorded wire exchange maps onto these one-to-one. Protocol metadata
and assignments stay opaque ``bytes`` here, exactly as the coordinator sees them; the
consumer-protocol payload inside them is :mod:`groupspec.protocol.consumer_protocol`.

Constructors refuse only a version outside the range modelled. Whatever else Kafka's
request parser takes reaches the coordinator, odd values included (a negative session or
rebalance timeout, a LeaveGroup naming no member), and is answered as Kafka's service and
shard answer it (INVALID_SESSION_TIMEOUT for the first, for instance).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from groupspec.protocol.added_fields import added
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.errors import Error

#: The member id a new member sends (JoinGroupRequest.UNKNOWN_MEMBER_ID).
UNKNOWN_MEMBER_ID = ""
#: The generation of a member that has none (JoinGroupRequest.UNKNOWN_GENERATION_ID).
UNKNOWN_GENERATION_ID = -1
#: Highest JoinGroup version modelled (KIP-814 skipAssignment is v9).
JOIN_GROUP_MAX_VERSION = 9


@dataclass(frozen=True)
class JoinGroupProtocol:
    name: str
    metadata: bytes


@dataclass(frozen=True, kw_only=True)
class JoinGroupRequest:
    group_id: str
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None
    protocol_type: str = "consumer"
    protocols: tuple[JoinGroupProtocol, ...]
    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"
    version: int = JOIN_GROUP_MAX_VERSION
    reason: str | None = None

    def __post_init__(self) -> None:
        # (a negative session timeout is a request Kafka parses and answers: the service's
        # bounds check refuses it, INVALID_SESSION_TIMEOUT)
        if not 0 <= self.version <= JOIN_GROUP_MAX_VERSION:
            raise ValueError(f"JoinGroup version {self.version} not in 0..{JOIN_GROUP_MAX_VERSION}")
        if self.version == 0:
            # JoinGroupRequest.maybeOverrideRebalanceTimeout (KAFKA-8653): v0 has no
            # rebalance timeout, the session timeout stands in for it. Only v0: a later
            # version's value reaches the group as sent, a negative one too (its join and
            # sync timers then fall due at once; checked against Kafka's shard,
            # tests/test_coordinator_kafka_jar.py)
            object.__setattr__(self, "rebalance_timeout_ms", self.session_timeout_ms)

    def protocol_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.protocols)


@dataclass(frozen=True)
class JoinGroupResponseMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, kw_only=True)
class JoinGroupResponse:
    error: Error
    generation_id: int = UNKNOWN_GENERATION_ID
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    member_id: str = UNKNOWN_MEMBER_ID
    members: tuple[JoinGroupResponseMember, ...] = ()


@dataclass(frozen=True)
class SyncGroupAssignment:
    member_id: str
    assignment: bytes


@dataclass(frozen=True, kw_only=True)
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[SyncGroupAssignment, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SyncGroupResponse:
    error: Error
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True, kw_only=True)
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class HeartbeatResponse:
    error: Error


@dataclass(frozen=True)
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class LeaveGroupRequest:
    group_id: str
    #: v0-2 carry one member id (KafkaApis normalizes it into one identity); v3+ a list,
    #: which may be empty (Kafka parses it and answers NONE with no member: nobody leaves)
    members: tuple[MemberIdentity, ...]


@dataclass(frozen=True)
class LeaveGroupMemberResponse:
    member_id: str
    group_instance_id: str | None
    error: Error


@dataclass(frozen=True, kw_only=True)
class LeaveGroupResponse:
    error: Error
    members: tuple[LeaveGroupMemberResponse, ...] = ()


@dataclass(frozen=True)
class OffsetCommitPartition:
    topic: str
    partition: int
    committed_offset: int
    committed_metadata: str | None = ""
    #: v6+ (KIP-320): the leader epoch of the committed offset's record, -1 for none (an
    #: older version, a client that does not know it); stored and answered by OffsetFetch v5+
    committed_leader_epoch: int = added(-1)


#: OffsetCommit v9 is the first version answering GROUP_ID_NOT_FOUND for an unknown group
#: (OffsetMetadataManager.validateOffsetCommit); the default stays below it.
OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION = 9
OFFSET_COMMIT_MAX_VERSION = 9
#: OffsetCommit's retention_time_ms: none, the broker's offsets.retention.ms applies
DEFAULT_RETENTION_TIME = -1


@dataclass(frozen=True, kw_only=True)
class OffsetCommitRequest:
    group_id: str
    generation_id: int = UNKNOWN_GENERATION_ID
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None
    partitions: tuple[OffsetCommitPartition, ...] = ()
    version: int = 8
    #: v2-v4: how long the committed offsets are kept, overriding offsets.retention.ms;
    #: -1 (OffsetCommitRequest.DEFAULT_RETENTION_TIME, and every other version) for the
    #: broker's retention. Kafka stores now + this as the offsets' expire timestamp
    #: (OffsetMetadataManager.expireTimestampMs)
    retention_time_ms: int = added(DEFAULT_RETENTION_TIME)

    def __post_init__(self) -> None:
        if not 0 <= self.version <= OFFSET_COMMIT_MAX_VERSION:
            raise ValueError(
                f"OffsetCommit version {self.version} not in 0..{OFFSET_COMMIT_MAX_VERSION}"
            )


@dataclass(frozen=True)
class OffsetCommitPartitionResponse:
    topic: str
    partition: int
    error: Error


@dataclass(frozen=True, kw_only=True)
class OffsetCommitResponse:
    partitions: tuple[OffsetCommitPartitionResponse, ...]

    def errors(self) -> set[Error]:
        return {p.error for p in self.partitions}


@dataclass(frozen=True, kw_only=True)
class OffsetFetchRequest:
    group_id: str
    #: None asks for every committed offset of the group.
    partitions: tuple[tuple[str, int], ...] | None = None
    require_stable: bool = False
    #: v9 (KIP-848): the member asking, checked by a consumer group (None and -1: anyone)
    member_id: str | None = None
    member_epoch: int = -1


@dataclass(frozen=True)
class OffsetFetchPartitionResponse:
    topic: str
    partition: int
    committed_offset: int
    metadata: str | None
    error: Error
    #: v5+ (KIP-320): the committed leader epoch, -1 for none (older versions carry none)
    committed_leader_epoch: int = added(-1)


#: the first OffsetFetch version whose answer carries each partition's committed leader epoch
#: (OffsetFetchResponse.json), and the first OffsetCommit version whose request carries it
OFFSET_FETCH_LEADER_EPOCH_MIN_VERSION = 5
OFFSET_COMMIT_LEADER_EPOCH_MIN_VERSION = 6


@dataclass(frozen=True, kw_only=True)
class OffsetFetchResponse:
    error: Error
    partitions: tuple[OffsetFetchPartitionResponse, ...] = ()


#: OffsetDelete versions Kafka 4.1.2 accepts (OffsetDeleteRequest.json: "validVersions": "0")
OFFSET_DELETE_MAX_VERSION = 0


@dataclass(frozen=True, kw_only=True)
class OffsetDeleteRequest:
    """OffsetDelete (api key 47, KIP-496: the admin client's deleteConsumerGroupOffsets):
    remove a group's committed offsets of these partitions."""

    group_id: str
    partitions: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class OffsetDeletePartitionResponse:
    topic: str
    partition: int
    error: Error


@dataclass(frozen=True, kw_only=True)
class OffsetDeleteResponse:
    #: a top-level error answers no partition (OffsetDeleteRequest.getErrorResponse)
    error: Error
    partitions: tuple[OffsetDeletePartitionResponse, ...] = ()


@dataclass(frozen=True)
class TxnOffsetCommitPartition:
    topic: str
    partition: int
    committed_offset: int
    committed_metadata: str | None = ""
    #: v2+ (KIP-320): the leader epoch of the committed offset's record, -1 for none; kept
    #: with the pending offset
    committed_leader_epoch: int = added(-1)


@dataclass(frozen=True, kw_only=True)
class TxnOffsetCommitRequest:
    """TxnOffsetCommit (api key 28): a transactional producer's offsets for a group, which
    become committed only when its transaction commits (markers the group protocol never
    shows). The coordinator answers the group's part (coordinator/offsets.py,
    handle_txn_offset_commit); the transaction is not modelled, so the validator takes its
    partitions' committed offsets as unknown from its time on."""

    group_id: str
    transactional_id: str = ""
    producer_id: int = -1
    producer_epoch: int = -1
    generation_id: int = UNKNOWN_GENERATION_ID
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None
    partitions: tuple[TxnOffsetCommitPartition, ...] = ()


@dataclass(frozen=True)
class TxnOffsetCommitPartitionResponse:
    topic: str
    partition: int
    #: Kafka's error code, kept as a number: the transaction errors (INVALID_PRODUCER_EPOCH,
    #: CONCURRENT_TRANSACTIONS, ...) are outside the group protocol's vocabulary
    error_code: int


@dataclass(frozen=True, kw_only=True)
class TxnOffsetCommitResponse:
    partitions: tuple[TxnOffsetCommitPartitionResponse, ...] = ()


@dataclass(frozen=True, kw_only=True)
class FindCoordinatorRequest:
    key: str
    key_type: int = 0  # 0 = group


@dataclass(frozen=True, kw_only=True)
class FindCoordinatorResponse:
    error: Error
    node_id: int = -1
    host: str = ""
    port: int = -1


@dataclass(frozen=True, kw_only=True)
class ListGroupsRequest:
    states_filter: tuple[str, ...] = ()
    #: v5 (KIP-848): the group types to list ("classic", "consumer", ...; any case). None:
    #: not recorded (a trace written before the field; the v5 filter is unknown)
    types_filter: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    group_state: str
    #: v5: the group's type, "classic" or "consumer" (Group.GroupType); None: not on the
    #: wire (before v5) or not recorded
    group_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class ListGroupsResponse:
    error: Error
    groups: tuple[ListedGroup, ...] = ()


#: DescribeGroups v6 is the first version answering GROUP_ID_NOT_FOUND for an
#: unknown group (GroupMetadataManager.describeGroups); the default stays below it.
DESCRIBE_GROUPS_GROUP_ID_NOT_FOUND_MIN_VERSION = 6
DESCRIBE_GROUPS_MAX_VERSION = 6


@dataclass(frozen=True, kw_only=True)
class DescribeGroupsRequest:
    groups: tuple[str, ...]
    version: int = 5

    def __post_init__(self) -> None:
        if not 0 <= self.version <= DESCRIBE_GROUPS_MAX_VERSION:
            raise ValueError(
                f"DescribeGroups version {self.version} not in 0..{DESCRIBE_GROUPS_MAX_VERSION}"
            )


@dataclass(frozen=True)
class DescribedGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


@dataclass(frozen=True)
class DescribedGroup:
    error: Error
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: tuple[DescribedGroupMember, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DescribeGroupsResponse:
    groups: tuple[DescribedGroup, ...]


@dataclass(frozen=True, kw_only=True)
class DeleteGroupsRequest:
    groups_names: tuple[str, ...]


@dataclass(frozen=True)
class DeletableGroupResult:
    group_id: str
    error: Error


@dataclass(frozen=True, kw_only=True)
class DeleteGroupsResponse:
    results: tuple[DeletableGroupResult, ...] = field(default_factory=tuple)


Request: TypeAlias = (
    JoinGroupRequest
    | SyncGroupRequest
    | HeartbeatRequest
    | LeaveGroupRequest
    | OffsetCommitRequest
    | OffsetFetchRequest
    | FindCoordinatorRequest
    | ListGroupsRequest
    | DescribeGroupsRequest
    | DeleteGroupsRequest
    | OffsetDeleteRequest
    | TxnOffsetCommitRequest
    | ConsumerGroupHeartbeatRequest
    | ConsumerGroupDescribeRequest
)
Response: TypeAlias = (
    JoinGroupResponse
    | SyncGroupResponse
    | HeartbeatResponse
    | LeaveGroupResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | FindCoordinatorResponse
    | ListGroupsResponse
    | DescribeGroupsResponse
    | DeleteGroupsResponse
    | OffsetDeleteResponse
    | TxnOffsetCommitResponse
    | ConsumerGroupHeartbeatResponse
    | ConsumerGroupDescribeResponse
)

#: The request name used in traces and in the TLA+ spec (Kafka's API name).
def api_name(message: Request | Response) -> str:
    name = type(message).__name__
    for suffix in ("Request", "Response"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name

"""Requests and responses of the consumer group protocol (KIP-848), as decoded values.

Handled by :mod:`groupspec.coordinator.consumer.heartbeat`. Field names
follow Kafka's message JSON in snake_case, as :mod:`groupspec.protocol.messages` does for
the classic protocol; a test checks them against the schemas in kafka-clients 4.1.2:

- ``ConsumerGroupHeartbeatRequest.json`` / ``...Response.json``: API key 68, versions 0-1
  (v1 adds ``SubscribedTopicRegex`` and has the consumer generate its own member id,
  KIP-1082);
- ``ConsumerGroupDescribeRequest.json`` / ``...Response.json``: API key 69, versions 0-1
  (v1 adds the member's ``MemberType``, KIP-1099).

The member-epoch constants are those of clients/.../requests/ConsumerGroupHeartbeatRequest.java.
A field documented as "null if it didn't change since the last heartbeat" is ``None`` here.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId

CONSUMER_GROUP_HEARTBEAT_API_KEY = 68
CONSUMER_GROUP_HEARTBEAT_MAX_VERSION = 1
CONSUMER_GROUP_DESCRIBE_API_KEY = 69
CONSUMER_GROUP_DESCRIBE_MAX_VERSION = 1

#: The epoch a member sends to join (``JOIN_GROUP_MEMBER_EPOCH``).
JOIN_GROUP_MEMBER_EPOCH = 0
#: The epoch a member sends to leave (``LEAVE_GROUP_MEMBER_EPOCH``).
LEAVE_GROUP_MEMBER_EPOCH = -1
#: The epoch a static member sends to leave for a while and come back
#: (``LEAVE_GROUP_STATIC_MEMBER_EPOCH``).
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
#: From this version the consumer generates its own member id
#: (``CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION``).
CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1
#: ``AuthorizedOperations`` when they were not asked for (``Integer.MIN_VALUE``).
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
#: ``MemberType`` values (ConsumerGroupMember.asConsumerGroupDescribeMember: 0 for a member
#: still on the classic protocol, 1 for a consumer-protocol member; -1 the default).
MEMBER_TYPE_UNKNOWN = -1
MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1


def _check_version(api: str, version: int, top: int) -> None:
    if not 0 <= version <= top:
        raise ValueError(f"{api} version {version} not in 0..{top}")


@dataclass(frozen=True)
class HeartbeatTopicPartitions:
    """``TopicPartitions`` of the heartbeat request and response: a topic id and partitions."""

    topic_id: TopicId
    partitions: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupHeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: tuple[HeartbeatTopicPartitions, ...] | None = None
    version: int = CONSUMER_GROUP_HEARTBEAT_MAX_VERSION
    #: from the request header and the connection, not the body (the member's
    #: ``ClientId`` / ``ClientHost``, as the classic JoinGroupRequest here)
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"

    def __post_init__(self) -> None:
        _check_version("ConsumerGroupHeartbeat", self.version, CONSUMER_GROUP_HEARTBEAT_MAX_VERSION)
        if self.version == 0 and self.subscribed_topic_regex is not None:
            # ConsumerGroupHeartbeatRequest.Builder.build refuses to send it in v0.
            raise ValueError("ConsumerGroupHeartbeat v0 has no subscribed_topic_regex")


@dataclass(frozen=True)
class HeartbeatAssignment:
    """The response's ``Assignment``: the member's whole target, sent when it changed."""

    topic_partitions: tuple[HeartbeatTopicPartitions, ...]


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupHeartbeatResponse:
    error: Error
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: HeartbeatAssignment | None = None
    throttle_time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupDescribeRequest:
    group_ids: tuple[str, ...]
    include_authorized_operations: bool = False
    version: int = CONSUMER_GROUP_DESCRIBE_MAX_VERSION

    def __post_init__(self) -> None:
        _check_version("ConsumerGroupDescribe", self.version, CONSUMER_GROUP_DESCRIBE_MAX_VERSION)


@dataclass(frozen=True)
class DescribedTopicPartitions:
    """The describe response's ``TopicPartitions``: with the topic's name too."""

    topic_id: TopicId
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedAssignment:
    topic_partitions: tuple[DescribedTopicPartitions, ...]


@dataclass(frozen=True, kw_only=True)
class DescribedMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None = None
    assignment: DescribedAssignment
    target_assignment: DescribedAssignment
    member_type: int = MEMBER_TYPE_UNKNOWN


@dataclass(frozen=True, kw_only=True)
class DescribedGroup:
    error: Error
    error_message: str | None = None
    group_id: str
    group_state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[DescribedMember, ...]
    authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupDescribeResponse:
    groups: tuple[DescribedGroup, ...]
    throttle_time_ms: int = 0

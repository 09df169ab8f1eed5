"""The records a consumer group (KIP-848) persists in ``__consumer_offsets``, as values.

One key and one value dataclass per record, fields in
snake_case as in the message schemas of kafka-group-coordinator 4.1.2
(``common/message/ConsumerGroup*Key.json`` / ``*Value.json``; a test checks them against
the jar). The record type is the key's version in the log (``RECORD_TYPE``); a tombstone
is a key with no value. What writes them: group-coordinator/.../
GroupCoordinatorRecordHelpers.java (``newConsumerGroupEpochRecord``,
``newConsumerGroupMemberSubscriptionRecord``, ``newConsumerGroupTargetAssignmentRecord``,
``newConsumerGroupTargetAssignmentEpochRecord``, ``newConsumerGroupCurrentAssignmentRecord``,
``newConsumerGroupRegularExpressionRecord`` and their tombstones).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from groupspec.protocol.records import Record
from groupspec.protocol.topic_id import TopicId


class MemberState(Enum):
    """A member's reconciliation state (group-coordinator/.../modern/MemberState.java), as
    the byte ``ConsumerGroupCurrentMemberAssignmentValue.State`` stores."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


@dataclass(frozen=True)
class RecordTopicPartitions:
    """A topic id and partitions (the ``TopicPartitions`` / ``TopicPartition`` structs)."""

    topic_id: TopicId
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class ConsumerGroupMetadataKey:
    RECORD_TYPE: ClassVar[int] = 3
    group_id: str


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupMetadataValue:
    """The group epoch, and the hash of the subscribed topics' metadata (tagged, 4.1)."""

    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True)
class ConsumerGroupPartitionMetadataKey:
    RECORD_TYPE: ClassVar[int] = 4
    group_id: str


@dataclass(frozen=True)
class PartitionMetadata:
    partition: int
    racks: tuple[str, ...]


@dataclass(frozen=True)
class TopicMetadata:
    topic_id: TopicId
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionMetadata, ...]


@dataclass(frozen=True)
class ConsumerGroupPartitionMetadataValue:
    """The subscribed topics' metadata (replaced by ``metadata_hash`` in 4.1; still read)."""

    topics: tuple[TopicMetadata, ...]


@dataclass(frozen=True)
class ConsumerGroupMemberMetadataKey:
    RECORD_TYPE: ClassVar[int] = 5
    group_id: str
    member_id: str


@dataclass(frozen=True)
class ClassicProtocol:
    name: str
    metadata: bytes


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """Set for a member that still speaks the classic protocol in a consumer group."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...]


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupMemberMetadataValue:
    """A member's subscription (``newConsumerGroupMemberSubscriptionRecord``)."""

    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None
    classic_member_metadata: ClassicMemberMetadata | None = None


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMetadataKey:
    RECORD_TYPE: ClassVar[int] = 6
    group_id: str


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMetadataValue:
    """The epoch of the target assignment (``newConsumerGroupTargetAssignmentEpochRecord``)."""

    assignment_epoch: int


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMemberKey:
    RECORD_TYPE: ClassVar[int] = 7
    group_id: str
    member_id: str


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMemberValue:
    """One member's target assignment (``newConsumerGroupTargetAssignmentRecord``)."""

    topic_partitions: tuple[RecordTopicPartitions, ...]


@dataclass(frozen=True)
class ConsumerGroupCurrentMemberAssignmentKey:
    RECORD_TYPE: ClassVar[int] = 8
    group_id: str
    member_id: str


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupCurrentMemberAssignmentValue:
    """Where a member's reconciliation stands (``newConsumerGroupCurrentAssignmentRecord``)."""

    member_epoch: int
    previous_member_epoch: int
    state: MemberState
    assigned_partitions: tuple[RecordTopicPartitions, ...]
    partitions_pending_revocation: tuple[RecordTopicPartitions, ...]


@dataclass(frozen=True)
class ConsumerGroupRegularExpressionKey:
    RECORD_TYPE: ClassVar[int] = 16
    group_id: str
    regular_expression: str


@dataclass(frozen=True, kw_only=True)
class ConsumerGroupRegularExpressionValue:
    """The topics a subscribed regular expression resolved to, at a metadata version."""

    topics: tuple[str, ...]
    version: int
    timestamp: int


# ---------------------------------------------------------------- as coordinator records
# The reference coordinator writes a consumer group's changes as these records (each holds
# a key's fields and the value, ``None`` for a tombstone), and replays them into state as
# GroupMetadataManager.replay does (coordinator/consumer/replay.py). Persisted ones survive a
# failover; the timers are in memory only, as Kafka's CoordinatorTimer.


@dataclass(frozen=True)
class ConsumerGroupEpochRecord(Record):
    """``newConsumerGroupEpochRecord`` (``ConsumerGroupMetadataKey``); ``None``: the group
    is deleted (``newConsumerGroupEpochTombstoneRecord``)."""

    persisted: ClassVar[bool] = True
    value: ConsumerGroupMetadataValue | None


@dataclass(frozen=True)
class ConsumerGroupMemberSubscriptionRecord(Record):
    """``newConsumerGroupMemberSubscriptionRecord`` (``ConsumerGroupMemberMetadataKey``)."""

    persisted: ClassVar[bool] = True
    member_id: str
    value: ConsumerGroupMemberMetadataValue | None


@dataclass(frozen=True)
class ConsumerGroupSubscriptionMetadataRecord(Record):
    """The deprecated subscription-metadata record (``ConsumerGroupPartitionMetadataKey``):
    4.1 writes no value any more, only the tombstone (``None``,
    ``newConsumerGroupSubscriptionMetadataTombstoneRecord``) when it deletes a group and
    when it refreshes the metadata of a group whose log still holds a value from an older
    version; replaying a value marks the group as holding one."""

    persisted: ClassVar[bool] = True
    value: ConsumerGroupPartitionMetadataValue | None


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentRecord(Record):
    """``newConsumerGroupTargetAssignmentRecord`` (``ConsumerGroupTargetAssignmentMemberKey``)."""

    persisted: ClassVar[bool] = True
    member_id: str
    value: ConsumerGroupTargetAssignmentMemberValue | None


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentEpochRecord(Record):
    """``newConsumerGroupTargetAssignmentEpochRecord`` (``...TargetAssignmentMetadataKey``)."""

    persisted: ClassVar[bool] = True
    value: ConsumerGroupTargetAssignmentMetadataValue | None


@dataclass(frozen=True)
class ConsumerGroupCurrentAssignmentRecord(Record):
    """``newConsumerGroupCurrentAssignmentRecord`` (``...CurrentMemberAssignmentKey``)."""

    persisted: ClassVar[bool] = True
    member_id: str
    value: ConsumerGroupCurrentMemberAssignmentValue | None


@dataclass(frozen=True)
class ConsumerSessionTimerSet(Record):
    """The member's session timeout armed (``deadline_ms``) or cancelled (``None``):
    ``scheduleConsumerGroupSessionTimeout`` / ``cancelGroupSessionTimeout``."""

    member_id: str
    deadline_ms: int | None


@dataclass(frozen=True)
class ConsumerRebalanceTimerSet(Record):
    """The member's rebalance timeout, bound to the epoch it must leave in time
    (``scheduleConsumerGroupRebalanceTimeout``), or cancelled (``None``)."""

    member_id: str
    deadline_ms: int | None
    member_epoch: int = 0


@dataclass(frozen=True)
class ConsumerClassicJoinTimerSet(Record):
    """A classic member's join timeout (``scheduleConsumerGroupJoinTimeoutIfAbsent``: it was
    told to rejoin and must within its rebalance timeout) armed, or cancelled (``None``)."""

    member_id: str
    deadline_ms: int | None


@dataclass(frozen=True)
class ConsumerClassicSyncTimerSet(Record):
    """A classic member's sync timeout (``scheduleConsumerGroupSyncTimeout``: after its
    JoinGroup it must send SyncGroup within its rebalance timeout) armed, or cancelled
    (``None``)."""

    member_id: str
    deadline_ms: int | None


@dataclass(frozen=True)
class ConsumerGroupRegularExpressionRecord(Record):
    """``newConsumerGroupRegularExpressionRecord`` (``ConsumerGroupRegularExpressionKey``):
    the topics a subscribed regular expression resolved to; ``None``: the regex is no
    longer subscribed (``newConsumerGroupRegularExpressionTombstone``)."""

    persisted: ClassVar[bool] = True
    regular_expression: str
    value: ConsumerGroupRegularExpressionValue | None


@dataclass(frozen=True)
class ConsumerRegexResolutionScheduled(Record):
    """The group's regex resolution handed to the executor (in memory, as Kafka's
    ``CoordinatorExecutor`` task keyed ``<group>-regex``): the regexes to resolve, the
    member whose heartbeat scheduled it and when; ``regexes`` ``None``: the task completed
    or was cancelled. The driver runs it: ``Coordinator.complete_regex_resolution``."""

    member_id: str
    regexes: tuple[str, ...] | None
    scheduled_ms: int = 0


CONSUMER_GROUP_RECORDS: tuple[type[Record], ...] = (
    ConsumerGroupEpochRecord,
    ConsumerGroupMemberSubscriptionRecord,
    ConsumerGroupSubscriptionMetadataRecord,
    ConsumerGroupTargetAssignmentRecord,
    ConsumerGroupTargetAssignmentEpochRecord,
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerSessionTimerSet,
    ConsumerRebalanceTimerSet,
    ConsumerClassicJoinTimerSet,
    ConsumerClassicSyncTimerSet,
    ConsumerGroupRegularExpressionRecord,
    ConsumerRegexResolutionScheduled,
)

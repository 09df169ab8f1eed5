"""Records: every change to coordinator state, as a value.

The coordinator's handlers never mutate state directly: they emit records, and
``groupspec.coordinator.replay.apply_record`` is the only function that changes state.
Replaying a run's records on a fresh coordinator state reproduces that state exactly, and a
trace is a sequence of requests, responses and these records.

Two kinds:

- *persisted* records (``persisted = True``) are what Kafka appends to ``__consumer_offsets``
  (GroupCoordinatorRecordHelpers.newGroupMetadataRecord / newOffsetCommitRecord and their
  tombstones). A coordinator failover rebuilds a group from these alone.
- every other record is an in-memory change (a member parked in JoinGroup, a timer armed, a
  state transition) that Kafka keeps only in memory and loses on failover.

Names follow Kafka where it has one (``MemberAdded`` mirrors ``ClassicGroup.add``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from groupspec.protocol.added_fields import added
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import JoinGroupProtocol


@dataclass(frozen=True)
class MemberInfo:
    """The part of a member that does not change while it is in the group."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    protocol_type: str


@dataclass(frozen=True)
class JoinTimer:
    """The group's join timer: DelayedJoin, or InitialDelayedJoin when ``initial``."""

    deadline_ms: int
    initial: bool
    delay_ms: int = 0
    remaining_ms: int = 0


@dataclass(frozen=True)
class SyncTimer:
    """DelayedSync (KAFKA-12890), bound to the generation it was armed for."""

    deadline_ms: int
    generation_id: int


@dataclass(frozen=True)
class PersistedMember:
    info: MemberInfo
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocols: tuple[JoinGroupProtocol, ...]
    assignment: bytes


@dataclass(frozen=True)
class GroupSnapshot:
    """GroupMetadataValue: what Kafka persists of a classic group."""

    protocol_type: str | None
    generation_id: int
    protocol_name: str | None
    leader_id: str | None
    state_timestamp_ms: int
    members: tuple[PersistedMember, ...]


@dataclass(frozen=True)
class Record:
    group_id: str
    persisted: ClassVar[bool] = False


@dataclass(frozen=True)
class GroupCreated(Record):
    now_ms: int


@dataclass(frozen=True)
class StateChanged(Record):
    state: GroupState
    now_ms: int


@dataclass(frozen=True)
class ProtocolTypeSet(Record):
    protocol_type: str | None


@dataclass(frozen=True)
class MemberAdded(Record):
    info: MemberInfo
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocols: tuple[JoinGroupProtocol, ...]
    #: the JoinGroup request parked for this member (None: not awaiting join)
    join_request: int | None


@dataclass(frozen=True)
class MemberUpdated(Record):
    """ClassicGroup.updateMember: new protocols and timeouts, and the parked JoinGroup."""

    member_id: str
    protocols: tuple[JoinGroupProtocol, ...]
    rebalance_timeout_ms: int
    session_timeout_ms: int
    join_request: int | None


@dataclass(frozen=True)
class JoinAnswered(Record):
    """The member's parked JoinGroup was answered; it no longer awaits join."""

    member_id: str


@dataclass(frozen=True)
class SyncParked(Record):
    member_id: str
    request_id: int


@dataclass(frozen=True)
class SyncAnswered(Record):
    member_id: str


@dataclass(frozen=True)
class MemberRemoved(Record):
    member_id: str
    reason: str


@dataclass(frozen=True)
class PendingMemberAdded(Record):
    """KIP-394: a member id handed out with MEMBER_ID_REQUIRED, not yet a member."""

    member_id: str
    deadline_ms: int


@dataclass(frozen=True)
class PendingMemberRemoved(Record):
    member_id: str
    reason: str


@dataclass(frozen=True)
class StaticMemberReplaced(Record):
    """KIP-345: the instance id now maps to a fresh member id; the old id is fenced."""

    group_instance_id: str
    old_member_id: str
    new_member_id: str


@dataclass(frozen=True)
class LeaderChanged(Record):
    leader_id: str | None


@dataclass(frozen=True)
class GenerationStarted(Record):
    """ClassicGroup.initNextGeneration: generation + 1 and the selected protocol."""

    generation_id: int
    protocol_name: str | None


@dataclass(frozen=True)
class MembersMarkedJoined(Record):
    """Join completion: every member stops being "new" (ClassicGroupMember.isNew)."""


@dataclass(frozen=True)
class PendingSyncSet(Record):
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class PendingSyncRemoved(Record):
    member_id: str


@dataclass(frozen=True)
class AssignmentsSet(Record):
    """Every member's assignment (empty bytes = none); members not listed get empty."""

    generation_id: int
    assignments: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class HeartbeatScheduled(Record):
    """The member's session timer; ``deadline_ms`` None cancels it."""

    member_id: str
    deadline_ms: int | None


@dataclass(frozen=True)
class JoinTimerSet(Record):
    timer: JoinTimer | None


@dataclass(frozen=True)
class SyncTimerSet(Record):
    timer: SyncTimer | None


@dataclass(frozen=True)
class NewMemberAddedSet(Record):
    value: bool


@dataclass(frozen=True)
class CoordinatorUnloaded(Record):
    """The coordinator lost its partition: every in-memory group is gone (``group_id`` is
    empty). The GroupLoaded records that follow rebuild groups from persisted records."""


@dataclass(frozen=True)
class GroupLoaded(Record):
    """A group rebuilt from its persisted records after a coordinator failover: Stable if
    it has members, else Empty (GroupMetadataManager replay of GroupMetadataValue)."""

    snapshot: GroupSnapshot | None
    offsets: tuple[tuple[str, int, int, str | None, int], ...]
    now_ms: int
    #: (topic, partition, leader epoch) of the offsets committed with a leader epoch (the
    #: others have none, -1): a field of its own, so that ``offsets`` keeps its shape for
    #: traces written before it
    leader_epochs: tuple[tuple[str, int, int], ...] = added(())
    #: (topic, partition, expire timestamp) of the offsets committed with an expire
    #: timestamp (OffsetCommit v2-v4's retention_time_ms), as the log holds them
    #: (OffsetCommitValue.expireTimestamp); the others expire by offsets.retention.ms
    expire_timestamps: tuple[tuple[str, int, int], ...] = added(())


@dataclass(frozen=True)
class ClassicGroupConverted(Record):
    """A consumer group converted to this classic group (the online downgrade:
    ClassicGroup.fromConsumerGroup, put into the groups map directly, not replayed from its
    record): Stable at ``generation_id`` (the consumer group's epoch), protocol type
    "consumer", ``protocol_name`` selected, the members with their whole protocol lists and
    assignments (the first one leads), the offsets kept by the group id."""

    generation_id: int
    protocol_name: str
    members: tuple[PersistedMember, ...]
    now_ms: int


@dataclass(frozen=True)
class GroupRemoved(Record):
    """The group object is gone from the coordinator (deleted, or expired when Dead)."""


@dataclass(frozen=True)
class GroupMetadataPersisted(Record):
    """The group record appended to __consumer_offsets (newGroupMetadataRecord)."""

    persisted: ClassVar[bool] = True
    snapshot: GroupSnapshot


@dataclass(frozen=True)
class GroupTombstoned(Record):
    persisted: ClassVar[bool] = True


@dataclass(frozen=True)
class OffsetCommitted(Record):
    persisted: ClassVar[bool] = True
    topic: str
    partition: int
    committed_offset: int
    metadata: str | None
    commit_timestamp_ms: int
    #: the generation the committing member reported (-1 for simple commits); kept so that
    #: invariants can check that no stale generation's commit was stored.
    generation_id: int
    member_id: str
    #: the committed leader epoch (OffsetCommitValue.leaderEpoch), -1 for none; a trace
    #: written before the field reads as -1
    leader_epoch: int = added(-1)
    #: the offset's explicit expire timestamp (OffsetAndMetadata.expireTimestampMs: the
    #: commit's time plus an OffsetCommit v2-v4 retention_time_ms), None for none (the
    #: broker's offsets.retention.ms applies); a trace written before the field reads None
    expire_timestamp_ms: int | None = added(None)
    #: -1: a plain commit. Otherwise the producer id of a TxnOffsetCommit's transaction: the
    #: record is written in that transaction, and the offset is pending (OffsetFetch does not
    #: see it, the group and the partition's committed offset are kept at the expiry check)
    #: until the transaction's marker, which the group protocol never shows
    #: (OffsetMetadataManager.replay with a producer id; docs/deviations.md)
    producer_id: int = added(-1)


@dataclass(frozen=True)
class OffsetsDeleted(Record):
    persisted: ClassVar[bool] = True
    partitions: tuple[tuple[str, int], ...]
    reason: str


GroupRecord: TypeAlias = Record


def record_name(record: Record) -> str:
    return type(record).__name__

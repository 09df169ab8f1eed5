"""The coordinator's state: every group it hosts, and the metadata image.

The group kinds live with their protocol: :mod:`groupspec.coordinator.classic.group` for
the classic protocol, :mod:`groupspec.coordinator.consumer.group` for KIP-848's; committed
offsets in :mod:`groupspec.coordinator.committed_offset`. Changed only by
:func:`groupspec.coordinator.replay.apply_record`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from groupspec.coordinator.committed_offset import CommittedOffset
from groupspec.coordinator.errors import NotModelled, ReplayError
from groupspec.coordinator.group_order import GroupOrder
from groupspec.coordinator.offset_order import OffsetOrder

if TYPE_CHECKING:
    from groupspec.assignors.server_spec import TopicMetadata
    from groupspec.coordinator.classic.group import Group
    from groupspec.coordinator.consumer.group import ConsumerGroup, ConsumerTimers
    from groupspec.protocol.records import JoinTimer


__all__ = ["CommittedOffset", "CoordinatorState", "NotModelled", "RegexTask", "ReplayError"]


@dataclass
class CoordinatorState:
    #: classic groups
    groups: dict[str, Group] = field(default_factory=dict)
    #: consumer groups (KIP-848); a group id is in at most one of the two maps
    consumer_groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    #: the order Kafka's shards keep the ids of both kinds in (their ``groups`` maps), kept
    #: as groups are created, loaded and removed: the order ListGroups answers in
    group_order: GroupOrder = field(default_factory=GroupOrder)
    #: offsets of a group id whose group was removed while they stayed (an empty classic
    #: group converted to a consumer group); the next group of that id takes them
    detached_offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = field(
        default_factory=dict
    )
    #: group id -> the timers of its consumer group, gone (a downgrade, a deletion) while
    #: they run: Kafka's timer keeps them by group and member id, apart from the group; a
    #: classic group of the id does not see them, the next consumer group of the id takes
    #: them (ConsumerTimers)
    detached_consumer_timers: dict[str, ConsumerTimers] = field(default_factory=dict)
    #: group id -> the join timer (DelayedJoin) of its classic group, removed (an upgrade)
    #: while it ran: Kafka's timer keeps it under classicGroupJoinKey(groupId), which
    #: convertToConsumerGroup does not cancel; its callback (completeClassicGroupJoin by group
    #: id) does nothing while the group is a consumer group, and completes the join phase of
    #: a classic group made by a downgrade (ClassicGroupConverted takes it) unless that
    #: group's own join timer replaces it first. The classic group's other timers cannot act
    #: on a later classic group (its members' heartbeat timers are rescheduled by the
    #: downgrade or name members it does not have; DelayedSync's generation and pending-sync
    #: members never match), so they are not kept
    detached_classic_join_timers: dict[str, JoinTimer] = field(default_factory=dict)
    #: group id -> the order Kafka's maps keep its committed offsets in (OffsetMetadataManager
    #: keeps offsets by group id, apart from the group): the order OffsetFetch of all offsets
    #: answers in; kept as offsets are committed and tombstoned
    offset_order: dict[str, OffsetOrder] = field(default_factory=dict)
    #: group id -> partition -> producer id -> the pending transactional offset a
    #: TxnOffsetCommit wrote in that producer's transaction (OffsetMetadataManager's
    #: pendingTransactionalOffsets and openTransactions, kept by group id as Kafka keeps
    #: them). Never committed or dropped here: the transaction's marker is not on the wire
    #: (docs/deviations.md); a tombstone of the partition drops them, as Kafka's replay does
    pending_offsets: dict[str, dict[tuple[str, int], dict[int, CommittedOffset]]] = field(default_factory=dict)
    #: group id -> the order Kafka's open-transactions maps keep the partitions of
    #: ``pending_offsets`` in (OpenTransactions, coordinator/offset_order.py): the order a
    #: group's deletion tombstones its partitions with only pending offsets in
    pending_order: dict[str, OffsetOrder] = field(default_factory=dict)
    #: the metadata image's topics by name (what a consumer group's assignor sees); an
    #: input, set by ``Coordinator.set_topics``
    topics: dict[str, TopicMetadata] = field(default_factory=dict)
    #: the metadata image's version (Kafka: ``image.provenance().lastContainedOffset()``),
    #: moved on by ``Coordinator.set_topics``
    metadata_version: int = 0
    #: the last image version that created topics (GroupMetadataManager's
    #: ``lastMetadataImageWithNewTopics``): a group whose regexes were resolved against an
    #: older image refreshes them at its next heartbeat
    metadata_version_with_new_topics: int = -1
    #: group id -> the regex resolution waiting in the executor (in memory, lost on unload)
    regex_tasks: dict[str, RegexTask] = field(default_factory=dict)


@dataclass(frozen=True)
class RegexTask:
    """A pending ``<group>-regex`` executor task: refreshRegularExpressions over
    ``regexes``, scheduled by ``member_id``'s heartbeat at ``scheduled_ms``."""

    member_id: str
    regexes: tuple[str, ...]
    scheduled_ms: int

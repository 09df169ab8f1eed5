"""The consumer group's state (KIP-848) and the read-only rules over it.

Mirrors group-coordinator/.../modern/consumer/ConsumerGroup.java and ModernGroup.java: the
members, the static members by instance id, the group epoch, the target assignment and its
epoch, the partition epochs (who holds each partition, at which epoch), and the state
derived from them (``maybeUpdateGroupState``). Changed only by
:mod:`groupspec.coordinator.consumer.replay`; timers are data (deadlines), as for classic
groups.

Deliberate differences from Kafka: the metadata hash (``ModernGroup.computeMetadataHash``,
a Murmur3 digest of the subscribed topics' names, ids, partition counts and racks) is a
deterministic hash of the same facts here; it is compared, never shown, so only its
changes matter and those are the same. Regular-expression subscriptions resolve at once
against the metadata image (Kafka resolves them asynchronously, off the request path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from groupspec.assignors.server_spec import SubscriptionType
from groupspec.coordinator.committed_offset import CommittedOffset
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.coordinator.consumer.timeline_order import TimelineOrder
from groupspec.coordinator.find_coordinator import java_string_hash
from groupspec.protocol.topic_id import TopicId


class ConsumerGroupState(Enum):
    """ConsumerGroup.ConsumerGroupState, with the names ListGroups and describe show."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class RebalanceTimer:
    deadline_ms: int
    member_epoch: int


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    metadata_hash: int = 0
    #: the target assignment's epoch (``targetAssignmentEpoch``)
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    #: instance id -> member id
    static_members: dict[str, str] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    #: (topic, partition) -> epoch of the member holding it (assigned or being revoked)
    partition_epochs: dict[tuple[TopicId, int], int] = field(default_factory=dict)
    #: member id -> session deadline (in memory; a replaced member's timer may outlive it)
    session_deadlines: dict[str, int] = field(default_factory=dict)
    rebalance_timers: dict[str, RebalanceTimer] = field(default_factory=dict)
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    #: the order Kafka's members map (a TimelineHashMap) iterates the members in, kept
    #: with every put and remove of a member as the records are replayed
    member_order: TimelineOrder = field(default_factory=TimelineOrder)

    # ------------------------------------------------------------------ derived
    @property
    def state(self) -> ConsumerGroupState:
        """maybeUpdateGroupState."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def current_partition_epoch(self, topic: TopicId, partition: int) -> int:
        return self.partition_epochs.get((topic, partition), -1)

    def static_member(self, instance_id: str | None) -> ConsumerMember | None:
        if instance_id is None:
            return None
        mid = self.static_members.get(instance_id)
        return None if mid is None else self.members.get(mid)

    def target_of(self, member_id: str, instance_id: str | None) -> Assignment:
        """ConsumerGroup.targetAssignment(memberId, instanceId): a static member's target is
        that of the member id its instance id maps to."""
        if instance_id is None:
            return self.target.get(member_id, {})
        previous = self.static_members.get(instance_id)
        return self.target.get(previous, {}) if previous is not None else {}


def subscribed_topic_names(members: Iterable[ConsumerMember]) -> dict[str, int]:
    """Topic name -> number of members subscribing to it by name."""
    counts: dict[str, int] = {}
    for m in members:
        for t in m.subscribed_topic_names:
            counts[t] = counts.get(t, 0) + 1
    return counts


def subscription_type(counts: Mapping[str, int], num_members: int) -> SubscriptionType:
    """ConsumerGroup.subscriptionType without regular expressions: HOMOGENEOUS when every
    subscribed topic has every member as a subscriber."""
    if all(c == num_members for c in counts.values()):
        return SubscriptionType.HOMOGENEOUS
    return SubscriptionType.HETEROGENEOUS


def preferred_assignor(members: Iterable[ConsumerMember]) -> str | None:
    """ConsumerGroup.computePreferredServerAssignor: the assignor most members name; on a
    tie the first in the iteration order of Kafka's ``HashMap`` of counts (bucket order of
    ``String.hashCode``, at most a handful of names: the default table of 16)."""
    counts: dict[str, int] = {}
    for m in members:
        if m.server_assignor is not None:
            counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
    if not counts:
        return None

    def bucket(name: str) -> int:
        h = java_string_hash(name) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & 15

    ordered = sorted(counts, key=bucket)
    best = ordered[0]
    for name in ordered[1:]:
        if counts[name] > counts[best]:
            best = name
    return best


def java_hash_order(keys: Iterable[str]) -> list[str]:
    """Iteration order of a ``HashMap<String, ?>`` filled with ``keys`` in this order
    (Java 17: table 16, doubling past 3/4 full; buckets in index order, a bucket in
    insertion order). Not reproduced: buckets of eight or more colliding keys (trees)."""
    ks = list(dict.fromkeys(keys))
    cap = 16
    while len(ks) > cap * 3 // 4:
        cap *= 2
    pos = {k: i for i, k in enumerate(ks)}

    def bucket(k: str) -> tuple[int, int]:
        h = java_string_hash(k) & 0xFFFFFFFF
        return ((h ^ (h >> 16)) & (cap - 1), pos[k])

    return sorted(ks, key=bucket)

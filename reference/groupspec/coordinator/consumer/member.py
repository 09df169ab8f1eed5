"""A consumer group member (KIP-848) and its assignments, as values.

Mirrors group-coordinator/.../modern/consumer/ConsumerGroupMember.java (its Builder's
defaults and ``updateMemberEpoch``) and modern/ModernGroupMember.isReconciledTo. A member is
immutable: the coordinator builds a new one and writes it as records; replay puts it in the
group. Subscribed topic names are a set, as Kafka's ``HashSet``: order never matters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from groupspec.assignors.server_spec import replayed_assignment_order
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from groupspec.protocol.consumer_protocol import ASSIGNMENT_VERSION, assignment_as_given
from groupspec.protocol.topic_id import TopicId

#: topic id -> partitions; topics with no partition are left out.
Assignment = Mapping[TopicId, frozenset[int]]

EMPTY: Assignment = {}


def assignment_of(pairs: Iterable[tuple[TopicId, Iterable[int]]]) -> dict[TopicId, frozenset[int]]:
    """An assignment from (topic, partitions) pairs, merging repeats and dropping empties."""
    out: dict[TopicId, set[int]] = {}
    for t, ps in pairs:
        out.setdefault(t, set()).update(ps)
    return {t: frozenset(ps) for t, ps in out.items() if ps}


def from_record(parts: Iterable[cr.RecordTopicPartitions]) -> dict[TopicId, frozenset[int]]:
    return assignment_of((p.topic_id, p.partitions) for p in parts)


def to_record(a: Assignment) -> tuple[cr.RecordTopicPartitions, ...]:
    return tuple(cr.RecordTopicPartitions(t, tuple(sorted(ps))) for t, ps in a.items() if ps)


def to_heartbeat(a: Assignment) -> tuple[HeartbeatTopicPartitions, ...]:
    return tuple(HeartbeatTopicPartitions(t, tuple(sorted(ps))) for t, ps in a.items() if ps)


def to_classic_assignment(a: Assignment, names: Mapping[TopicId, str], metadata: bytes) -> bytes:
    """The assignment as Kafka's coordinator serializes one for a classic member
    (toConsumerProtocolAssignment, ConsumerProtocol.serializeAssignment): topics named by
    ``names`` (others left out) in the order Kafka's replayed map iterates them, no user
    data, in the version of the subscription ``metadata`` (deserializeVersion; at most the
    highest assignment version)."""
    version = min(int.from_bytes(metadata[:2], "big", signed=True), ASSIGNMENT_VERSION)
    order = replayed_assignment_order([(p.topic_id, p.partitions) for p in to_record(a)])
    return assignment_as_given({names[t]: ps for t, ps in order.items() if t in names}, version)


def from_heartbeat(parts: Iterable[HeartbeatTopicPartitions]) -> dict[TopicId, frozenset[int]]:
    return assignment_of((p.topic_id, p.partitions) for p in parts)


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    #: ConsumerGroupMember.Builder's defaults: epoch 0, previous epoch -1, STABLE
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: cr.MemberState = cr.MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    #: "" when the member has no regex (the Builder's default), as Kafka keeps it
    subscribed_topic_regex: str = ""
    server_assignor: str | None = None
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    #: ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: set for a member that joined
    #: with the classic protocol (JoinGroup to a consumer group): its session timeout and
    #: the protocols of its JoinGroup, in the request's order
    classic: cr.ClassicMemberMetadata | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        """ConsumerGroupMember.useClassicProtocol."""
        return self.classic is not None

    def is_reconciled_to(self, target_epoch: int) -> bool:
        """ModernGroupMember.isReconciledTo."""
        return self.state is cr.MemberState.STABLE and self.member_epoch == target_epoch

    def with_epoch(self, epoch: int) -> ConsumerMember:
        """Builder.updateMemberEpoch: the current epoch becomes the previous one, even when
        the new epoch equals it."""
        return dataclasses.replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch)

    # ------------------------------------------------------------------ record values
    def subscription_value(self) -> cr.ConsumerGroupMemberMetadataValue:
        return cr.ConsumerGroupMemberMetadataValue(
            instance_id=self.instance_id,
            rack_id=self.rack_id,
            client_id=self.client_id,
            client_host=self.client_host,
            subscribed_topic_names=tuple(sorted(self.subscribed_topic_names)),
            subscribed_topic_regex=self.subscribed_topic_regex,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            server_assignor=self.server_assignor,
            classic_member_metadata=self.classic,
        )

    def current_assignment_value(self) -> cr.ConsumerGroupCurrentMemberAssignmentValue:
        return cr.ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=self.member_epoch,
            previous_member_epoch=self.previous_member_epoch,
            state=self.state,
            assigned_partitions=to_record(self.assigned),
            partitions_pending_revocation=to_record(self.pending_revocation),
        )

    def with_subscription(self, v: cr.ConsumerGroupMemberMetadataValue) -> ConsumerMember:
        """Builder.updateWith(ConsumerGroupMemberMetadataValue)."""
        return dataclasses.replace(
            self,
            instance_id=v.instance_id,
            rack_id=v.rack_id,
            client_id=v.client_id,
            client_host=v.client_host,
            subscribed_topic_names=frozenset(v.subscribed_topic_names),
            subscribed_topic_regex=v.subscribed_topic_regex or "",
            rebalance_timeout_ms=v.rebalance_timeout_ms,
            server_assignor=v.server_assignor,
            classic=v.classic_member_metadata,
        )

    def with_current_assignment(self, v: cr.ConsumerGroupCurrentMemberAssignmentValue) -> ConsumerMember:
        """Builder.updateWith(ConsumerGroupCurrentMemberAssignmentValue)."""
        return dataclasses.replace(
            self,
            member_epoch=v.member_epoch,
            previous_member_epoch=v.previous_member_epoch,
            state=v.state,
            assigned=from_record(v.assigned_partitions),
            pending_revocation=from_record(v.partitions_pending_revocation),
        )


def is_subset(owned: Iterable[HeartbeatTopicPartitions] | None, assigned: Assignment) -> bool:
    """GroupMetadataManager.isSubset: every owned partition is assigned (a null list is not
    a subset, nor is a listed topic the member has no partition of)."""
    if owned is None:
        return False
    for tp in owned:
        have = assigned.get(tp.topic_id)
        if have is None or any(p not in have for p in tp.partitions):
            return False
    return True

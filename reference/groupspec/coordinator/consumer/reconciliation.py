"""A member's next step towards the target assignment: incremental reconciliation.

Mirrors group-coordinator/.../modern/consumer/CurrentAssignmentBuilder.java (``build``,
``ownsRevokedPartitions``, ``computeNextAssignment``). The guarantee it gives: a partition
is added to a member's assignment only once no other member holds it at any epoch (the
group's partition epochs, ``ConsumerGroup.currentPartitionEpoch``), and a member that must
give partitions up stays in its epoch, in UNREVOKED_PARTITIONS, until its heartbeat no
longer reports them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from groupspec.protocol.consumer_group_records import MemberState
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId

#: (topic id, partition) -> the epoch of the member holding it, or -1
PartitionEpoch = Callable[[TopicId, int], int]


class FencedMemberEpoch(Exception):
    """``FencedMemberEpochException``: the member must drop everything and rejoin."""

    error = Error.FENCED_MEMBER_EPOCH


def _owns_any(owned: Sequence[HeartbeatTopicPartitions] | None, revoking: Assignment) -> bool:
    """ownsRevokedPartitions: a heartbeat without owned partitions (null) still owns them."""
    if owned is None:
        return True
    for tp in owned:
        pending = revoking.get(tp.topic_id, frozenset())
        if any(p in pending for p in tp.partitions):
            return True
    return False


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: Sequence[HeartbeatTopicPartitions] | None,
) -> ConsumerMember:
    """CurrentAssignmentBuilder.build: the member after this heartbeat."""
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, member.assigned, target_epoch, target,
                         partition_epoch, owned)
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, member.assigned, target_epoch, target,
                     partition_epoch, owned)
    if member.state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, member.assigned, target_epoch, target,
                     partition_epoch, owned)
    # UNKNOWN: only after a downgrade of the coordinator; fence unless it owns nothing.
    if owned is None or len(owned) > 0:
        raise FencedMemberEpoch(
            "The consumer group member is in a unknown state. "
            "The member must abandon all its partitions and rejoin."
        )
    return _next(member, target_epoch, member.assigned, target_epoch, target, partition_epoch, owned)


def _next(
    member: ConsumerMember,
    member_epoch: int,
    assigned_now: Assignment,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: Sequence[HeartbeatTopicPartitions] | None,
) -> ConsumerMember:
    """computeNextAssignment."""
    unreleased = False
    new_assigned: dict[TopicId, frozenset[int]] = {}
    new_revoking: dict[TopicId, frozenset[int]] = {}
    new_pending: dict[TopicId, frozenset[int]] = {}
    for topic in set(target) | set(assigned_now):
        want = target.get(topic, frozenset())
        have = assigned_now.get(topic, frozenset())
        keep = have & want
        revoke = have - keep
        pending = set(want - keep)
        mine = member.pending_revocation.get(topic, frozenset())
        # A partition still held at some epoch is unreleased, unless this very member holds
        # it pending revocation (one owner at a time makes that safe).
        held = {p for p in pending if partition_epoch(topic, p) != -1 and p not in mine}
        if held:
            pending -= held
            unreleased = True
        if keep:
            new_assigned[topic] = keep
        if revoke:
            new_revoking[topic] = revoke
        if pending:
            new_pending[topic] = frozenset(pending)

    if new_revoking and _owns_any(owned, new_revoking):
        # Stay in the current epoch until the client acknowledges the revocation.
        return dataclasses.replace(
            member.with_epoch(member_epoch),
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=new_assigned,
            pending_revocation=new_revoking,
        )
    if new_pending:
        for topic, ps in new_pending.items():
            new_assigned[topic] = new_assigned.get(topic, frozenset()) | ps
        return dataclasses.replace(
            member.with_epoch(target_epoch),
            state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
            assigned=new_assigned,
            pending_revocation={},
        )
    return dataclasses.replace(
        member.with_epoch(target_epoch),
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned=new_assigned,
        pending_revocation={},
    )

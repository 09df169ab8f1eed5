"""Seeded bugs in the reference's consumer protocol (KIP-848), to prove the cross-check
bites.

Each mutant patches one rule of the reference for the duration of a check (and restores
it on exit); `groupspec crosscheck --group-protocol consumer --mutants` and
tests/test_crosscheck_consumer.py run them through both directions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import groupspec.coordinator.consumer.heartbeat as heartbeat
import groupspec.coordinator.offsets as offsets
from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.coordinator.consumer.reconciliation import PartitionEpoch, _next, reconcile
from groupspec.crosscheck.mutants import Mutant, _setattr
from groupspec.protocol import messages as msg
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from groupspec.protocol.consumer_group_records import MemberState
from groupspec.protocol.errors import Error


def _stale_commit_accepted() -> contextlib.AbstractContextManager[None]:
    original = offsets.validate_consumer_offset_commit

    def validate(group: ConsumerGroup, req: msg.OffsetCommitRequest) -> Error:
        error = original(group, req)
        return Error.NONE if error is Error.STALE_MEMBER_EPOCH else error

    return _setattr(offsets, "validate_consumer_offset_commit", validate)


def _revocation_not_awaited() -> contextlib.AbstractContextManager[None]:
    def mutated(member: ConsumerMember, target_epoch: int, target: Assignment,
                partition_epoch: PartitionEpoch,
                owned: Sequence[HeartbeatTopicPartitions] | None) -> ConsumerMember:
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            # moves on without waiting for a heartbeat that no longer reports them
            return _next(member, member.member_epoch + 1, member.assigned, target_epoch,
                         target, partition_epoch, owned)
        return reconcile(member, target_epoch, target, partition_epoch, owned)

    return _setattr(heartbeat, "reconcile", mutated)


def _assign_before_release() -> contextlib.AbstractContextManager[None]:
    def mutated(member: ConsumerMember, target_epoch: int, target: Assignment,
                partition_epoch: PartitionEpoch,
                owned: Sequence[HeartbeatTopicPartitions] | None) -> ConsumerMember:
        # every partition looks free: no UNRELEASED_PARTITIONS
        return reconcile(member, target_epoch, target, lambda t, p: -1, owned)

    return _setattr(heartbeat, "reconcile", mutated)


MUTANTS: dict[str, Mutant] = {
    x.name: x
    for x in (
        Mutant("consumer-stale-commit-accepted",
               "OffsetCommit at an older member epoch accepted (no STALE_MEMBER_EPOCH)",
               "ConsumerGroup.validateOffsetCommit (coordinator/offsets.py)",
               _stale_commit_accepted, True),
        Mutant("consumer-revocation-not-awaited",
               "a member in UNREVOKED_PARTITIONS moves to the next epoch although its "
               "heartbeat still reports partitions it must revoke",
               "CurrentAssignmentBuilder.build (coordinator/consumer/reconciliation.py)",
               _revocation_not_awaited, True),
        Mutant("consumer-assign-before-release",
               "a partition is given to a member while another member still holds it",
               "CurrentAssignmentBuilder.computeNextAssignment (coordinator/consumer/"
               "reconciliation.py)",
               _assign_before_release, True),
    )
}

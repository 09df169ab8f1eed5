"""Ported from Apache Kafka 4.1.2's unit test ``CurrentAssignmentBuilderTest`` (group-coordinator,
``modern/consumer``, KIP-848 consumer protocol), run against :func:`reconcile`.

Facts taken, not code copied: each test below restates one Java ``@Test`` -- the member before
the heartbeat, the target epoch and assignment, the partition epochs, the owned partitions the
heartbeat reports -- and asserts the exact member Kafka's test expects (epoch, previous epoch,
state, assigned partitions, partitions pending revocation). Kafka's random topic ids are fixed,
distinct ``TopicId`` values here; a builder never given owned partitions passes ``None``
(Kafka's null).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from groupspec.coordinator.consumer.member import ConsumerMember
from groupspec.coordinator.consumer.reconciliation import FencedMemberEpoch, reconcile
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from groupspec.protocol.consumer_group_records import MemberState
from groupspec.protocol.topic_id import TopicId

T1 = TopicId(0x1111)
T2 = TopicId(0x2222)

Parts = dict[TopicId, frozenset[int]]
PartitionEpochFn = Callable[[TopicId, int], int]


def parts(*pairs: tuple[TopicId, Iterable[int]]) -> Parts:
    """An assignment written as (topic, partitions) pairs."""
    return {topic: frozenset(ps) for topic, ps in pairs}


def owned(*pairs: tuple[TopicId, Iterable[int]]) -> tuple[HeartbeatTopicPartitions, ...]:
    """The owned partitions a heartbeat reports."""
    return tuple(HeartbeatTopicPartitions(topic, tuple(ps)) for topic, ps in pairs)


def member(
    state: MemberState,
    epoch: int,
    previous: int,
    assigned: Parts,
    pending: Parts | None = None,
    subscribed: frozenset[str] = frozenset(),
) -> ConsumerMember:
    return ConsumerMember(
        member_id="member",
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=state,
        subscribed_topic_names=subscribed,
        assigned=assigned,
        pending_revocation=pending if pending is not None else {},
    )


def at_epoch(epoch: int) -> PartitionEpochFn:
    """Every partition held at ``epoch`` (-1: every partition is free)."""

    def fn(topic: TopicId, partition: int) -> int:
        return epoch

    return fn


# ----------------------------------------------------------------------------- STABLE


def test_stable_to_stable() -> None:
    before = member(MemberState.STABLE, 10, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])))
    after = reconcile(before, 11, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])), at_epoch(10), None)
    assert after == member(MemberState.STABLE, 11, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])))


def test_stable_to_stable_with_new_partitions() -> None:
    before = member(MemberState.STABLE, 10, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])))
    after = reconcile(
        before, 11, parts((T1, [1, 2, 3, 4]), (T2, [4, 5, 6, 7])), at_epoch(-1), None
    )
    assert after == member(
        MemberState.STABLE, 11, 10, parts((T1, [1, 2, 3, 4]), (T2, [4, 5, 6, 7]))
    )


def test_stable_to_unrevoked_partitions() -> None:
    before = member(MemberState.STABLE, 10, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])))
    after = reconcile(before, 11, parts((T1, [2, 3, 4]), (T2, [5, 6, 7])), at_epoch(-1), None)
    assert after == member(
        MemberState.UNREVOKED_PARTITIONS,
        10,
        10,
        parts((T1, [2, 3]), (T2, [5, 6])),
        pending=parts((T1, [1]), (T2, [4])),
    )


def test_stable_to_unreleased_partitions() -> None:
    before = member(MemberState.STABLE, 10, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])))
    after = reconcile(
        before, 11, parts((T1, [1, 2, 3, 4]), (T2, [4, 5, 6, 7])), at_epoch(10), None
    )
    assert after == member(
        MemberState.UNRELEASED_PARTITIONS, 11, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6]))
    )


def test_stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions() -> None:
    before = member(MemberState.STABLE, 10, 10, parts((T1, [1, 2, 3]), (T2, [4, 5, 6])))

    def epoch(topic: TopicId, partition: int) -> int:
        return 10 if topic == T2 else -1

    after = reconcile(before, 11, parts((T1, [1, 2, 3]), (T2, [4, 5, 7])), epoch, ())
    assert after == member(
        MemberState.UNRELEASED_PARTITIONS, 11, 10, parts((T1, [1, 2, 3]), (T2, [4, 5]))
    )


# ----------------------------------------------------------------------------- UNREVOKED_PARTITIONS


def test_unrevoked_partitions_to_stable() -> None:
    before = member(
        MemberState.UNREVOKED_PARTITIONS,
        10,
        10,
        parts((T1, [2, 3]), (T2, [5, 6])),
        pending=parts((T1, [1]), (T2, [4])),
    )
    after = reconcile(
        before,
        11,
        parts((T1, [2, 3]), (T2, [5, 6])),
        at_epoch(-1),
        owned((T1, [2, 3]), (T2, [5, 6])),
    )
    assert after == member(MemberState.STABLE, 11, 10, parts((T1, [2, 3]), (T2, [5, 6])))


def test_remains_in_unrevoked_partitions() -> None:
    before = member(
        MemberState.UNREVOKED_PARTITIONS,
        10,
        10,
        parts((T1, [2, 3]), (T2, [5, 6])),
        pending=parts((T1, [1]), (T2, [4])),
    )
    target = parts((T1, [3]), (T2, [6]))
    # No owned partitions reported (null): the revocation is not acknowledged.
    assert reconcile(before, 12, target, at_epoch(-1), None) == before
    # Still owns partition 1 of topic 1, pending revocation.
    assert (
        reconcile(before, 12, target, at_epoch(-1), owned((T1, [1, 2, 3]), (T2, [5, 6])))
        == before
    )
    # Still owns partition 4 of topic 2, pending revocation.
    assert (
        reconcile(before, 12, target, at_epoch(-1), owned((T1, [2, 3]), (T2, [4, 5, 6])))
        == before
    )


def test_unrevoked_partitions_to_unrevoked_partitions() -> None:
    before = member(
        MemberState.UNREVOKED_PARTITIONS,
        10,
        10,
        parts((T1, [2, 3]), (T2, [5, 6])),
        pending=parts((T1, [1]), (T2, [4])),
    )
    after = reconcile(
        before,
        12,
        parts((T1, [3]), (T2, [6])),
        at_epoch(-1),
        owned((T1, [2, 3]), (T2, [5, 6])),
    )
    assert after == member(
        MemberState.UNREVOKED_PARTITIONS,
        11,
        10,
        parts((T1, [3]), (T2, [6])),
        pending=parts((T1, [2]), (T2, [5])),
    )


def test_unrevoked_partitions_to_unreleased_partitions() -> None:
    before = member(MemberState.UNREVOKED_PARTITIONS, 11, 10, parts((T1, [2, 3]), (T2, [5, 6])))
    after = reconcile(
        before,
        11,
        parts((T1, [2, 3, 4]), (T2, [5, 6, 7])),
        at_epoch(10),
        owned((T1, [2, 3]), (T2, [5, 6])),
    )
    assert after == member(
        MemberState.UNRELEASED_PARTITIONS, 11, 11, parts((T1, [2, 3]), (T2, [5, 6]))
    )


def test_unrevoked_partitions_to_stable_with_returned_partitions_pending_revocation() -> None:
    topics = frozenset({"topic1", "topic2"})
    # Partition 4 of topic 1 is pending revocation but is back in the latest target.
    before = member(
        MemberState.UNREVOKED_PARTITIONS,
        10,
        10,
        parts((T1, [2, 3]), (T2, [5, 6])),
        pending=parts((T1, [4])),
        subscribed=topics,
    )

    def epoch(topic: TopicId, partition: int) -> int:
        if topic == T1 and partition in (2, 3, 4):
            return 10
        if topic == T2 and partition in (5, 6):
            return 10
        return -1

    after = reconcile(
        before,
        12,
        parts((T1, [2, 3, 4]), (T2, [5, 6, 7])),
        epoch,
        owned((T1, [2, 3]), (T2, [5, 6])),
    )
    assert after == member(
        MemberState.STABLE,
        12,
        10,
        parts((T1, [2, 3, 4]), (T2, [5, 6, 7])),
        subscribed=topics,
    )


# ----------------------------------------------------------------------------- UNRELEASED_PARTITIONS


def test_unreleased_partitions_to_stable() -> None:
    before = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, parts((T1, [2, 3]), (T2, [5, 6])))
    after = reconcile(before, 12, parts((T1, [2, 3]), (T2, [5, 6])), at_epoch(10), None)
    assert after == member(MemberState.STABLE, 12, 11, parts((T1, [2, 3]), (T2, [5, 6])))


def test_unreleased_partitions_to_stable_with_new_partitions() -> None:
    before = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, parts((T1, [2, 3]), (T2, [5, 6])))
    after = reconcile(
        before, 11, parts((T1, [2, 3, 4]), (T2, [5, 6, 7])), at_epoch(-1), None
    )
    assert after == member(
        MemberState.STABLE, 11, 11, parts((T1, [2, 3, 4]), (T2, [5, 6, 7]))
    )


def test_unreleased_partitions_to_unreleased_partitions() -> None:
    before = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, parts((T1, [2, 3]), (T2, [5, 6])))
    after = reconcile(
        before, 11, parts((T1, [2, 3, 4]), (T2, [5, 6, 7])), at_epoch(10), None
    )
    assert after == before


def test_unreleased_partitions_to_unrevoked_partitions() -> None:
    before = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, parts((T1, [2, 3]), (T2, [5, 6])))
    after = reconcile(before, 12, parts((T1, [3]), (T2, [6])), at_epoch(10), None)
    assert after == member(
        MemberState.UNREVOKED_PARTITIONS,
        11,
        11,
        parts((T1, [3]), (T2, [6])),
        pending=parts((T1, [2]), (T2, [5])),
    )


# ----------------------------------------------------------------------------- UNKNOWN


def test_unknown_state() -> None:
    before = member(
        MemberState.UNKNOWN,
        11,
        11,
        parts((T1, [3]), (T2, [6])),
        pending=parts((T1, [2]), (T2, [5])),
    )
    target = parts((T1, [3]), (T2, [6]))
    # A member in an unknown state is first fenced, to reset its client-side state...
    with pytest.raises(FencedMemberEpoch):
        reconcile(before, 12, target, at_epoch(10), None)
    # ...then it rejoins owning no partitions and is reconciled from scratch.
    after = reconcile(before, 12, target, at_epoch(11), ())
    assert after == member(MemberState.STABLE, 12, 11, parts((T1, [3]), (T2, [6])))

"""Kafka 4.1.2's server-side RangeAssignorTest (group-coordinator/src/test/java/org/apache/
kafka/coordinator/group/assignor/RangeAssignorTest.java) restated against the reference's
KIP-848 range assignor (:class:`groupspec.assignors.server_range.ServerRangeAssignor`).

Kafka's test draws random topic ids and keeps members in a ``TreeMap``, so the results do
not depend on the ids and members come in member-id order, as here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from groupspec.assignors.server_range import ServerRangeAssignor
from groupspec.assignors.server_spec import (
    GroupSpec,
    MemberSpec,
    PartitionAssignorError,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicMetadata,
)
from groupspec.protocol.topic_id import TopicId

T1, T2, T3 = TopicId(0x1111), TopicId(0x2222), TopicId(0x3333)
NAMES = {T1: "topic1", T2: "topic2", T3: "topic3"}
Target = dict[str, dict[TopicId, tuple[int, ...]]]


def metadata(sizes: Mapping[TopicId, int]) -> SubscribedTopicMetadata:
    return SubscribedTopicMetadata.of(TopicMetadata(t, NAMES[t], n) for t, n in sizes.items())


def m(mid: str, topics: Sequence[TopicId], current: Mapping[TopicId, Sequence[int]] | None = None,
      instance: str | None = None) -> MemberSpec:
    return MemberSpec(mid, tuple(topics), {t: tuple(ps) for t, ps in (current or {}).items()},
                      None, instance)


def assign(sizes: Mapping[TopicId, int], members: Sequence[MemberSpec],
           kind: SubscriptionType | None = None) -> Target:
    spec = GroupSpec(tuple(sorted(members, key=lambda x: x.member_id)), kind)
    out = ServerRangeAssignor().assign(spec, metadata(sizes))
    return {mid: {t: tuple(sorted(ps)) for t, ps in a.items() if ps} for mid, a in out.items()}


def test_one_member_without_topics_gets_nothing() -> None:
    # RangeAssignorTest.testOneMemberNoTopic
    assert assign({T1: 3}, [m("A", ())]) == {"A": {}}


def test_a_subscribed_topic_missing_from_the_metadata_fails() -> None:
    # RangeAssignorTest.testOneMemberSubscribedToNonExistentTopic
    with pytest.raises(PartitionAssignorError):
        assign({T1: 3}, [m("A", (T2,))])


def test_first_assignment_two_members_same_subscriptions() -> None:
    # RangeAssignorTest.testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions
    got = assign({T1: 3, T3: 2}, [m("A", (T1, T3)), m("B", (T1, T3))],
                 SubscriptionType.HOMOGENEOUS)
    assert got == {"A": {T1: (0, 1), T3: (0,)}, "B": {T1: (2,), T3: (1,)}}


def test_first_assignment_three_members_different_subscriptions() -> None:
    # RangeAssignorTest.testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions
    got = assign({T1: 3, T2: 3, T3: 2}, [m("A", (T1, T2)), m("B", (T3,)), m("C", (T2, T3))],
                 SubscriptionType.HETEROGENEOUS)
    assert got == {"A": {T1: (0, 1, 2), T2: (0, 1)}, "B": {T3: (0,)}, "C": {T2: (2,), T3: (1,)}}


def test_first_assignment_more_members_than_partitions() -> None:
    # RangeAssignorTest.testFirstAssignmentNumMembersGreaterThanNumPartitions
    both = (T1, T3)
    got = assign({T1: 3, T3: 2}, [m("A", both), m("B", both), m("C", both)])
    assert got == {"A": {T1: (0,), T3: (0,)}, "B": {T1: (1,), T3: (1,)}, "C": {T1: (2,)}}


def test_static_member_rejoining_with_a_new_member_id_keeps_its_partitions() -> None:
    # RangeAssignorTest.testStaticMembership
    first = assign({T1: 3}, [m("A", (T1,), instance="instanceA"),
                             m("B", (T1,), instance="instanceB")])
    again = assign({T1: 3}, [m("memberA1", (T1,), instance="instanceA"),
                             m("B", (T1,), instance="instanceB")])
    assert again["memberA1"] == first["A"]
    assert again["B"] == first["B"]


def test_mixed_static_and_dynamic_members_keep_their_partitions() -> None:
    # RangeAssignorTest.testMixedStaticMembership
    first = assign({T1: 5}, [m("A", (T1,), instance="instanceA"), m("B", (T1,)),
                             m("C", (T1,), instance="instanceC")])
    again = assign({T1: 5}, [m("memberA1", (T1,), instance="instanceA"), m("B", (T1,)),
                             m("C", (T1,), instance="instanceC")])
    assert again["memberA1"] == first["A"]
    assert again["B"] == first["B"]
    assert again["C"] == first["C"]


def test_member_added_when_members_outnumber_partitions_gets_nothing() -> None:
    # RangeAssignorTest.testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded
    both = (T1, T2)
    got = assign({T1: 2, T2: 2}, [m("A", both, {T1: [0], T2: [0]}),
                                  m("B", both, {T1: [1], T2: [1]}), m("C", both)])
    assert got == {"A": {T1: (0,), T2: (0,)}, "B": {T1: (1,), T2: (1,)}, "C": {}}


def test_partition_added_to_two_topics_goes_to_the_member_below_quota() -> None:
    # RangeAssignorTest.testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics
    both = (T1, T2)
    got = assign({T1: 4, T2: 4}, [m("A", both, {T1: [0, 1], T2: [0, 1]}),
                                  m("B", both, {T1: [2], T2: [2]})])
    assert got == {"A": {T1: (0, 1), T2: (0, 1)}, "B": {T1: (2, 3), T2: (2, 3)}}


def test_member_added_after_initial_assignment() -> None:
    # RangeAssignorTest.testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics
    both = (T1, T2)
    got = assign({T1: 3, T2: 3}, [m("A", both, {T1: [0, 1], T2: [0, 1]}),
                                  m("B", both, {T1: [2], T2: [2]}), m("C", both)])
    assert got == {"A": {T1: (0,), T2: (0,)}, "B": {T1: (1,), T2: (1,)},
                   "C": {T1: (2,), T2: (2,)}}


def test_member_and_partition_added_after_initial_assignment() -> None:
    # RangeAssignorTest.testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignment
    # WithTwoMembersTwoTopics
    both = (T1, T2)
    got = assign({T1: 4, T2: 3}, [m("A", both, {T1: [0, 1], T2: [0, 1]}),
                                  m("B", both, {T1: [2], T2: [2]}), m("C", (T1,))],
                 SubscriptionType.HETEROGENEOUS)
    assert got == {"A": {T1: (0, 1), T2: (0, 1)}, "B": {T1: (2,), T2: (2,)}, "C": {T1: (3,)}}


def test_member_removed_after_initial_assignment() -> None:
    # RangeAssignorTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics
    got = assign({T1: 3, T2: 3}, [m("B", (T1, T2), {T1: [2], T2: [2]})])
    assert got == {"B": {T1: (0, 1, 2), T2: (0, 1, 2)}}


def test_subscriptions_changed_after_initial_assignment() -> None:
    # RangeAssignorTest.testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignment
    # WithThreeMembersTwoTopics: A: T1, T2 -> T1; B: T2 -> T1, T2, T3; C: T2, T3 -> T2
    got = assign({T1: 3, T2: 3, T3: 2}, [
        m("A", (T1,), {T1: [0, 1, 2], T2: [0]}),
        m("B", (T1, T2, T3), {T2: [1]}),
        m("C", (T2,), {T2: [2], T3: [0, 1]}),
    ], SubscriptionType.HETEROGENEOUS)
    assert got == {"A": {T1: (0, 1)}, "B": {T1: (2,), T2: (0, 1), T3: (0, 1)}, "C": {T2: (2,)}}

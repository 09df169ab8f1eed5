"""Kafka's server-side assignor unit tests (group-coordinator/src/test/java/org/apache/kafka/
coordinator/group/assignor/): RangeAssignorTest, UniformHomogeneousAssignmentBuilderTest and
UniformHeterogeneousAssignmentBuilderTest, restated against the reference's KIP-848
assignors (:class:`~groupspec.assignors.server_range.ServerRangeAssignor`,
:class:`~groupspec.assignors.uniform.UniformAssignor`).

RangeAssignorTest draws random topic ids, so its results do not depend on them; the uniform
tests fix three ids (``T1-A4s3VTwiI5CTbEp6POw`` ...), which the uniform assignor's topic
order depends on, so they are used here too. Members come in member-id order (Kafka's
``TreeMap`` / sorted ``memberIds()``). The uniform cases are data (:data:`UNIFORM_CASES`) so
that tests/test_server_assignors_jvm.py can check them against the 4.1.2 jar as well.
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
from groupspec.assignors.uniform import UniformAssignor
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


# --------------------------------------------------------------------------- uniform

U1, U2, U3, U4 = (
    TopicId.parse(s)
    for s in ("T1-A4s3VTwiI5CTbEp6POw", "T2-B4s3VTwiI5YHbPp6YUe", "T3-CU8fVTLCz5YMkLoDQsa",
              "T4-Tw9fVTLCz5HbPp6YQsa")
)
UNAMES = {U1: "topic1", U2: "topic2", U3: "topic3", U4: "topic4"}
HOMOGENEOUS, HETEROGENEOUS = SubscriptionType.HOMOGENEOUS, SubscriptionType.HETEROGENEOUS


def um(mid: str, topics: Sequence[TopicId],
       current: Mapping[TopicId, Sequence[int]] | None = None) -> MemberSpec:
    return MemberSpec(mid, tuple(topics), {t: tuple(ps) for t, ps in (current or {}).items()})


#: (Kafka test, partitions per topic, members, subscription type, expected target or None
#: for PartitionAssignorException).
UNIFORM_CASES: list[tuple[str, dict[TopicId, int], list[MemberSpec], SubscriptionType,
                          dict[str, dict[TopicId, tuple[int, ...]]] | None]] = [
    ("UniformHomogeneousAssignmentBuilderTest.testOneMemberNoTopicSubscription",
     {U1: 3}, [um("A", ())], HOMOGENEOUS, {}),
    ("UniformHomogeneousAssignmentBuilderTest.testOneMemberSubscribedToNonexistentTopic",
     {U1: 3}, [um("A", (U2,))], HOMOGENEOUS, None),
    ("UniformHomogeneousAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks",
     {U1: 3, U3: 2}, [um("A", (U1, U3)), um("B", (U1, U3))], HOMOGENEOUS,
     {"A": {U3: (0, 1)}, "B": {U1: (0, 1, 2)}}),
    ("UniformHomogeneousAssignmentBuilderTest.testFirstAssignmentNumMembersGreaterThanTotalNumPartitions",
     {U3: 2}, [um("A", (U3,)), um("B", (U3,)), um("C", (U3,))], HOMOGENEOUS,
     {"A": {}, "B": {U3: (0,)}, "C": {U3: (1,)}}),
    ("UniformHomogeneousAssignmentBuilderTest.testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment",
     {U1: 3, U2: 3},
     [um("A", (U1, U2), {U1: [0, 1], U2: [0, 1]}), um("B", (U1, U2), {U1: [2], U2: [2]})],
     HOMOGENEOUS, {"A": {U1: (0, 1), U2: (0,)}, "B": {U1: (2,), U2: (1, 2)}}),
    ("UniformHomogeneousAssignmentBuilderTest.testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics",
     {U1: 6, U2: 5},
     [um("A", (U1, U2), {U1: [0, 2], U2: [0]}), um("B", (U1, U2), {U1: [1], U2: [1, 2]})],
     HOMOGENEOUS, {"A": {U1: (0, 2), U2: (0, 3, 4)}, "B": {U1: (1, 3, 4, 5), U2: (1, 2)}}),
    ("UniformHomogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics",
     {U1: 3, U2: 3},
     [um("A", (U1, U2), {U1: [0, 2], U2: [0]}), um("B", (U1, U2), {U1: [1], U2: [1, 2]}),
      um("C", (U1, U2))],
     HOMOGENEOUS, {"A": {U1: (0, 2)}, "B": {U1: (1,), U2: (1,)}, "C": {U2: (0, 2)}}),
    ("UniformHomogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics",
     {U1: 3, U2: 3},
     [um("A", (U1, U2), {U1: [0], U2: [0]}), um("B", (U1, U2), {U1: [1], U2: [1]})],
     HOMOGENEOUS, {"A": {U1: (0,), U2: (0, 2)}, "B": {U1: (1, 2), U2: (1,)}}),
    ("UniformHomogeneousAssignmentBuilderTest.testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics",
     {U1: 2, U2: 2},
     [um("A", (U2,), {U1: [0], U2: [0]}), um("B", (U2,), {U1: [1], U2: [1]})],
     HOMOGENEOUS, {"A": {U2: (0,)}, "B": {U2: (1,)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testTwoMembersNoTopicSubscription",
     {U1: 3}, [um("A", ()), um("B", ())], HETEROGENEOUS, {}),
    ("UniformHeterogeneousAssignmentBuilderTest.testTwoMembersSubscribedToNonexistentTopics",
     {U1: 3}, [um("A", (U3,)), um("B", (U2,))], HETEROGENEOUS, None),
    ("UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopics",
     {U1: 3, U3: 6}, [um("A", (U1, U3)), um("B", (U3,))], HETEROGENEOUS,
     {"A": {U1: (0, 1, 2), U3: (4,)}, "B": {U3: (0, 1, 2, 3, 5)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentNumMembersGreaterThanTotalNumPartitions",
     {U3: 1, U1: 2}, [um("A", (U3,)), um("B", (U3,)), um("C", (U1,))], HETEROGENEOUS,
     {"A": {U3: (0,)}, "B": {}, "C": {U1: (0, 1)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment",
     {U1: 6, U2: 4, U3: 4},
     [um("A", (U1,), {U1: [0, 1, 2]}), um("B", (U1, U2), {U1: [3], U2: [0]}),
      um("C", (U1, U2, U3), {U1: [4, 5], U2: [1, 2, 3], U3: [0, 1, 2, 3]})],
     HETEROGENEOUS,
     {"A": {U1: (0, 1, 2, 5)}, "B": {U1: (3,), U2: (0, 1, 2, 3)}, "C": {U1: (4,), U3: (0, 1, 2, 3)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenPartitionsAreAddedForTwoMembers",
     {U1: 6, U2: 5, U3: 3, U4: 3},
     [um("A", (U1, U3), {U1: [0, 1, 2, 3], U3: [0, 1]}),
      um("B", (U1, U2, U3, U4), {U2: [0, 1, 2], U4: [0, 1, 2]})],
     HETEROGENEOUS,
     {"A": {U1: (0, 1, 2, 3, 4, 5), U3: (0, 1, 2)}, "B": {U2: (0, 1, 2, 3, 4), U4: (0, 1, 2)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics",
     {U1: 6, U2: 7},
     [um("A", (U1,), {U1: [0, 2], U2: [0]}), um("B", (U1, U2), {U1: [1], U2: [1, 2]}),
      um("C", (U1, U2))],
     HETEROGENEOUS,
     {"A": {U1: (0, 2, 3, 4, 5)}, "B": {U1: (1,), U2: (1, 2, 6)}, "C": {U2: (0, 3, 4, 5)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics",
     {U1: 3, U2: 8, U3: 3},
     [um("A", (U1, U3), {U1: [0, 1, 2], U3: [0, 1]}), um("B", (U2,), {U2: [3, 4, 5, 6]})],
     HETEROGENEOUS,
     {"A": {U1: (0, 1, 2), U3: (0, 1, 2)}, "B": {U2: (0, 1, 2, 3, 4, 5, 6, 7)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics",
     {U1: 3, U2: 5},
     [um("A", (U1,), {U1: [0, 2], U2: [1, 3]}), um("B", (U1, U2), {U1: [1], U2: [0, 2, 4]})],
     HETEROGENEOUS, {"A": {U1: (0, 1, 2)}, "B": {U2: (0, 1, 2, 3, 4)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions",
     {U1: 2, U2: 2, U3: 2},
     [um("A", (U1, U2, U3), {U1: [0, 1], U2: [0, 1], U3: [0, 1]}), um("B", (U1, U2, U3))],
     HETEROGENEOUS, {"A": {U2: (0,), U3: (0, 1)}, "B": {U1: (0, 1), U2: (1,)}}),
    ("UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions",
     {U1: 3}, [um("A", (U1,)), um("B", ())], HETEROGENEOUS, {"A": {U1: (0, 1, 2)}, "B": {}}),
]


def uniform_input(sizes: Mapping[TopicId, int], members: Sequence[MemberSpec],
                  kind: SubscriptionType) -> tuple[GroupSpec, SubscribedTopicMetadata]:
    topics = SubscribedTopicMetadata.of(TopicMetadata(t, UNAMES[t], n) for t, n in sizes.items())
    return GroupSpec(tuple(sorted(members, key=lambda x: x.member_id)), kind), topics


def non_empty(target: Mapping[str, Mapping[TopicId, Sequence[int]]]) -> Target:
    return {mid: {t: tuple(sorted(ps)) for t, ps in a.items() if ps} for mid, a in target.items()}


@pytest.mark.parametrize(
    ("sizes", "members", "kind", "expected"),
    [case[1:] for case in UNIFORM_CASES],
    ids=[case[0].split(".")[1] for case in UNIFORM_CASES],
)
def test_uniform_assignor_matches_kafkas_unit_tests(
    sizes: dict[TopicId, int], members: list[MemberSpec], kind: SubscriptionType,
    expected: dict[str, dict[TopicId, tuple[int, ...]]] | None,
) -> None:
    spec, topics = uniform_input(sizes, members, kind)
    if expected is None:
        with pytest.raises(PartitionAssignorError):
            UniformAssignor().assign(spec, topics)
        return
    got = UniformAssignor().assign(spec, topics)
    # AssignmentTestUtil.assertAssignment: the same members, each with exactly these
    # partitions (members given nothing are listed, with an empty map).
    assert non_empty(got) == expected
    uniform_validity_and_balance(spec, got)


def uniform_validity_and_balance(spec: GroupSpec, got: Mapping[str, Mapping[TopicId, Sequence[int]]]) -> None:
    """``checkValidityAndBalance``: members get only subscribed topics, no partition twice,
    and (for homogeneous groups) sizes differ by at most one."""
    subs = {m.member_id: set(m.subscribed_topic_ids) for m in spec.members}
    seen: set[tuple[TopicId, int]] = set()
    for mid, parts in got.items():
        for t, ps in parts.items():
            assert not ps or t in subs[mid], (mid, t)
            for p in ps:
                assert (t, p) not in seen, (t, p)
                seen.add((t, p))
    if spec.kind is HOMOGENEOUS and got:
        sizes = [sum(len(ps) for ps in got.get(m.member_id, {}).values()) for m in spec.members]
        assert max(sizes) - min(sizes) <= 1


def test_uniform_large_homogeneous_sample_is_valid_and_balanced() -> None:
    # UniformHomogeneousAssignmentBuilderTest.testValidityAndBalanceForLargeSampleSet: 100
    # topics of 3 partitions, 49 members subscribed to all.
    ids = [TopicId(0x5EED0000 + i) for i in range(1, 101)]
    topics = SubscribedTopicMetadata.of(TopicMetadata(t, f"topic-{i}", 3) for i, t in enumerate(ids, 1))
    spec = GroupSpec(tuple(sorted((MemberSpec(f"member{i}", tuple(ids)) for i in range(1, 50)),
                                  key=lambda x: x.member_id)), HOMOGENEOUS)
    got = UniformAssignor().assign(spec, topics)
    uniform_validity_and_balance(spec, got)
    assert sum(len(ps) for a in got.values() for ps in a.values()) == 300


@pytest.mark.parametrize("kind", [HOMOGENEOUS, HETEROGENEOUS])
@pytest.mark.parametrize("rack_aware", [False, True])
def test_uniform_reassignment_does_not_depend_on_member_order(
    kind: SubscriptionType, rack_aware: bool
) -> None:
    # CommonAssignorTests.testReassignmentStickiness: fed its own result, the assignor keeps
    # it whatever order the members come in.
    three = (U1, U2, U3)
    sizes = {U1: 2, U2: 5, U3: 7}
    racks = {"B": "rack1"} if rack_aware else {}
    members = [MemberSpec(mid, three, {}, racks.get(mid)) for mid in ("A", "B", "C")]
    spec, topics = uniform_input(sizes, members, kind)
    first = UniformAssignor().assign(spec, topics)
    for order in (("A", "B", "C"), ("A", "C", "B"), ("B", "A", "C"),
                  ("B", "C", "A"), ("C", "A", "B"), ("C", "B", "A")):
        again = GroupSpec(tuple(
            MemberSpec(mid, three, dict(first.get(mid, {})), racks.get(mid)) for mid in order
        ), kind)
        assert non_empty(UniformAssignor().assign(again, topics)) == non_empty(first)

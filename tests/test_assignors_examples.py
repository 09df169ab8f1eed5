"""Exact outputs taken from Kafka's own assignor unit tests (clients/src/test/java/org/
apache/kafka/clients/consumer/...), each test naming the Kafka test it restates.

Kafka's tests put members into a ``HashMap`` in the order written; we pass them in that
order, which is what the sticky assignors' HashMap emulation needs.
"""

from __future__ import annotations

import struct

import pytest

from groupspec.assignors.base import MemberSubscription
from groupspec.assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
    member_generation,
)
from groupspec.assignors.cooperative_sticky import encode_user_data as coop_user_data
from groupspec.assignors.moves import count_moves, minimum_moves, minimum_moves_from
from groupspec.assignors.range import RangeAssignor
from groupspec.assignors.registry import ASSIGNOR_NAMES, get_assignor
from groupspec.assignors.roundrobin import RoundRobinAssignor
from groupspec.assignors.sticky import StickyAssignor, decode_user_data, encode_user_data
from groupspec.protocol.consumer_protocol import Assignment, Subscription

Parts = dict[str, tuple[int, ...]]


def plain(result: dict[str, Assignment]) -> dict[str, Parts]:
    return {mid: dict(a.partitions) for mid, a in result.items()}


def member(mid: str, topics: tuple[str, ...], instance: str | None = None) -> MemberSubscription:
    return MemberSubscription(mid, Subscription(topics), instance)


def v2_above(name: str, mid: str, topics: tuple[str, ...], owned: Parts, gen: int) -> MemberSubscription:
    """Kafka's ``buildSubscriptionV2Above`` for the assignor under test."""
    if name == "sticky":
        return MemberSubscription(mid, Subscription(topics, encode_user_data(owned, gen), {}, gen))
    return MemberSubscription(mid, Subscription(topics, coop_user_data(gen), owned, gen))


# --------------------------------------------------------------------------- Range


def test_range_multiple_consumers_mixed_topics() -> None:
    # RangeAssignorTest.testMultipleConsumersMixedTopics
    out = RangeAssignor().assign(
        {"topic1": 3, "topic2": 2},
        [
            member("consumer1", ("topic1",)),
            member("consumer2", ("topic1", "topic2")),
            member("consumer3", ("topic1",)),
        ],
    )
    assert plain(out) == {
        "consumer1": {"topic1": (0,)},
        "consumer2": {"topic1": (1,), "topic2": (0, 1)},
        "consumer3": {"topic1": (2,)},
    }


def test_range_two_consumers_two_topics_six_partitions() -> None:
    # RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions
    ms = [member("consumer1", ("topic1", "topic2")), member("consumer2", ("topic1", "topic2"))]
    out = RangeAssignor().assign({"topic1": 3, "topic2": 3}, ms)
    assert plain(out) == {
        "consumer1": {"topic1": (0, 1), "topic2": (0, 1)},
        "consumer2": {"topic1": (2,), "topic2": (2,)},
    }


def test_range_static_members_persistent() -> None:
    # RangeAssignorTest.testStaticMemberRangeAssignmentPersistent
    both = ("topic1", "topic2")
    static = [member(f"consumer{i}", both, f"instance{i}") for i in (1, 2, 3)]
    expected = {
        "consumer1": {"topic1": (0, 1), "topic2": (0,)},
        "consumer2": {"topic1": (2,), "topic2": (1,)},
        "consumer3": {"topic1": (3,), "topic2": (2,)},
    }
    sizes = {"topic1": 5, "topic2": 4}
    out = RangeAssignor().assign(sizes, [*static, member("consumer4", both)])
    assert plain(out) == {**expected, "consumer4": {"topic1": (4,), "topic2": (3,)}}
    out = RangeAssignor().assign(sizes, [*static, member("consumer5", both)])
    assert plain(out) == {**expected, "consumer5": {"topic1": (4,), "topic2": (3,)}}


def test_range_skips_unknown_and_empty_topics() -> None:
    # RangeAssignorTest.testOneConsumerNonexistentTopic
    out = RangeAssignor().assign({"topic": 0}, [member("consumer", ("topic", "missing"))])
    assert plain(out) == {"consumer": {}}


# --------------------------------------------------------------------------- RoundRobin


def test_roundrobin_multiple_consumers_mixed_topics() -> None:
    # RoundRobinAssignorTest.testMultipleConsumersMixedTopics
    out = RoundRobinAssignor().assign(
        {"topic1": 3, "topic2": 2},
        [
            member("consumer1", ("topic1",)),
            member("consumer2", ("topic1", "topic2")),
            member("consumer3", ("topic1",)),
        ],
    )
    assert plain(out) == {
        "consumer1": {"topic1": (0,)},
        "consumer2": {"topic1": (1,), "topic2": (0, 1)},
        "consumer3": {"topic1": (2,)},
    }


def test_roundrobin_static_members_order_by_instance_id() -> None:
    # RoundRobinAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions
    both = ("topic1", "topic2")
    out = RoundRobinAssignor().assign(
        {"topic1": 3, "topic2": 3},
        [member("consumer-b", both, "instance1"), member("consumer-a", both, "instance2")],
    )
    assert plain(out) == {
        "consumer-b": {"topic1": (0, 2), "topic2": (1,)},
        "consumer-a": {"topic1": (1,), "topic2": (0, 2)},
    }


def test_roundrobin_static_members_persistent() -> None:
    # RoundRobinAssignorTest.testStaticMemberRoundRobinAssignmentPersistent
    both = ("topic1", "topic2")
    static = [member(f"consumer{i}", both, f"instance{i}") for i in (1, 2, 3)]
    expected = {
        "consumer1": {"topic1": (0,), "topic2": (1,)},
        "consumer2": {"topic1": (1,), "topic2": (2,)},
        "consumer3": {"topic1": (2,)},
    }
    sizes = {"topic1": 3, "topic2": 3}
    out = RoundRobinAssignor().assign(sizes, [*static, member("consumer4", both)])
    assert plain(out) == {**expected, "consumer4": {"topic2": (0,)}}
    out = RoundRobinAssignor().assign(sizes, [*static, member("consumer5", both)])
    assert plain(out) == {**expected, "consumer5": {"topic2": (0,)}}


# --------------------------------------------------------------------------- Sticky


def test_sticky_javadoc_example_with_different_subscriptions() -> None:
    # StickyAssignor's class Javadoc (C0: t0; C1: t0, t1; C2: t0, t1, t2).
    ms = [member("C0", ("t0",)), member("C1", ("t0", "t1")), member("C2", ("t0", "t1", "t2"))]
    out = StickyAssignor().assign({"t0": 1, "t1": 2, "t2": 3}, ms)
    assert plain(out) == {"C0": {"t0": (0,)}, "C1": {"t1": (0, 1)}, "C2": {"t2": (0, 1, 2)}}


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
def test_same_generation_double_claim_is_invalidated_equal_shares(name: str) -> None:
    # StickyAssignorTest / CooperativeStickyAssignorTest.testAllConsumersHaveOwnedPartition
    # InvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer
    ms = [
        v2_above(name, "consumer1", ("topic",), {"topic": (0, 1)}, 1),
        v2_above(name, "consumer2", ("topic",), {"topic": (0, 2)}, 1),
        v2_above(name, "consumer3", ("topic",), {}, 1),
    ]
    out = plain(get_assignor(name).assign({"topic": 3}, ms))
    # The cooperative assignor holds topic-0 back until both claimers have revoked it.
    third = {"topic": (0,)} if name == "sticky" else {}
    assert out == {"consumer1": {"topic": (1,)}, "consumer2": {"topic": (2,)}, "consumer3": third}


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
def test_same_generation_double_claim_is_invalidated_unequal_shares(name: str) -> None:
    # ...WithUnequalPartitionsPerConsumer: the spare partition goes to consumer1, the first
    # member at minQuota in member-id order.
    ms = [
        v2_above(name, "consumer1", ("topic",), {"topic": (0, 1)}, 1),
        v2_above(name, "consumer2", ("topic",), {"topic": (0, 2)}, 1),
        v2_above(name, "consumer3", ("topic",), {}, 1),
    ]
    out = plain(get_assignor(name).assign({"topic": 4}, ms))
    third = {"topic": (0,)} if name == "sticky" else {}
    assert out == {
        "consumer1": {"topic": (1, 3)},
        "consumer2": {"topic": (2,)},
        "consumer3": third,
    }


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("stale", [9, -1])
def test_stale_generation_claims_lose(name: str, stale: int) -> None:
    # AbstractStickyAssignorTest.testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration
    # and ...WithNoGeneration
    both = ("topic", "topic2")
    claim = {"topic": (0, 2), "topic2": (1,)}
    ms = [v2_above(name, "consumer1", both, claim, 10), v2_above(name, "consumer2", both, claim, stale)]
    out = plain(get_assignor(name).assign({"topic": 3, "topic2": 3}, ms))
    assert out == {
        "consumer1": {"topic": (0, 2), "topic2": (1,)},
        "consumer2": {"topic": (1,), "topic2": (0, 2)},
    }


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
def test_partitions_go_to_the_highest_generation(name: str) -> None:
    # AbstractStickyAssignorTest.testEnsurePartitionsAssignedToHighestGeneration
    three = ("topic", "topic2", "topic3")
    ms = [
        v2_above(name, "consumer1", three, {"topic": (0,), "topic2": (0,), "topic3": (0,)}, 10),
        v2_above(name, "consumer2", three, {"topic": (1,), "topic2": (1,), "topic3": (1,)}, 9),
        v2_above(name, "consumer3", three, {"topic2": (1,), "topic3": (0, 2)}, 8),
    ]
    out = plain(get_assignor(name).assign({"topic": 3, "topic2": 3, "topic3": 3}, ms))
    assert out == {
        "consumer1": {"topic": (0,), "topic2": (0,), "topic3": (0,)},
        "consumer2": {"topic": (1,), "topic2": (1,), "topic3": (1,)},
        "consumer3": {"topic": (2,), "topic2": (2,), "topic3": (2,)},
    }


def test_deleted_topic_partitions_are_dropped() -> None:
    # AbstractStickyAssignorTest.testAssignmentUpdatedForDeletedTopic: a claim on a topic the
    # metadata no longer has is ignored, the rest is assigned as usual.
    ms = [v2_above("sticky", "consumer", ("topic1", "topic2", "topic3"), {"topic2": (0,)}, 1)]
    out = plain(StickyAssignor().assign({"topic1": 1, "topic3": 100}, ms))
    assert out == {"consumer": {"topic1": (0,), "topic3": tuple(range(100))}}


def test_cooperative_transfers_are_withheld_then_handed_over() -> None:
    # CooperativeStickyAssignorTest.testUniformSubscriptionTransferOwnershipListIsRight
    # (without racks): c0 owns 0, 1 and c1 owns 2, 3; a new member c2 makes one of them move,
    # which is withheld from c2 in this generation and handed over in the next.
    coop = CooperativeStickyAssignor()
    first = [
        v2_above("cooperative-sticky", "c0", ("topic1",), {"topic1": (0, 1)}, 1),
        v2_above("cooperative-sticky", "c1", ("topic1",), {"topic1": (2, 3)}, 1),
        v2_above("cooperative-sticky", "c2", ("topic1",), {}, 1),
    ]
    out = plain(coop.assign({"topic1": 4}, first))
    assert out["c2"] == {}
    assert sorted(len(ps.get("topic1", ())) for ps in out.values()) == [0, 1, 2]
    second = [v2_above("cooperative-sticky", mid, ("topic1",), parts, 2) for mid, parts in out.items()]
    settled = plain(coop.assign({"topic1": 4}, second))
    assert sorted(len(ps.get("topic1", ())) for ps in settled.values()) == [1, 1, 2]
    assert len(settled["c2"].get("topic1", ())) == 1


# --------------------------------------------------------------------------- user data


def test_sticky_user_data_bytes() -> None:
    # STICKY_ASSIGNOR_USER_DATA_V1 written by hand: one topic "t" with partitions 0 and 2,
    # generation 7.
    expected = (
        struct.pack(">i", 1)
        + struct.pack(">h", 1) + b"t"
        + struct.pack(">iii", 2, 0, 2)
        + struct.pack(">i", 7)
    )
    assert encode_user_data({"t": (0, 2)}, 7) == expected
    assert decode_user_data(expected) == ({"t": (0, 2)}, 7)


def test_sticky_user_data_v0_and_garbage() -> None:
    # StickyAssignorTest.testSchemaBackwardCompatibility (V0 has no generation) and
    # StickyAssignor.deserializeTopicPartitionAssignment's fallback for unparsable data.
    v0 = encode_user_data({"topic": (1,)}, None)
    assert decode_user_data(v0) == ({"topic": (1,)}, None)
    assert decode_user_data(b"\x00\x00") == ({}, -1)
    assert decode_user_data(None) == ({}, None)
    assert StickyAssignor().subscription_user_data(("t",), {}, -1) is None


def test_cooperative_generation_sources() -> None:
    # CooperativeStickyAssignorTest.testEncodeAndDecodeGeneration, testDecodeGeneration and
    # testMemberDataWithEmptyPartitionsAndHigherGeneration: the v2+ field wins, else user data.
    assert member_generation(Subscription(("t",), coop_user_data(5), {}, -1)) == 5
    assert member_generation(Subscription(("t",), coop_user_data(5), {}, 6)) == 6
    assert member_generation(Subscription(("t",), None, {}, -1)) == -1
    assert member_generation(Subscription(("t",), b"\x01", {}, -1)) == -1
    assert coop_user_data(5) == b"\x00\x00\x00\x05"


# --------------------------------------------------------------------------- moves, registry


def test_count_moves() -> None:
    before: dict[str, Parts] = {"a": {"t": (0, 1)}, "b": {"t": (2,)}, "gone": {"t": (3,)}}
    after: dict[str, Parts] = {"a": {"t": (0,)}, "b": {"t": (1, 2, 3)}, "c": {"t": (4,)}}
    assert count_moves(before, after) == 2  # t-1 from a to b, t-3 from a departed member
    with pytest.raises(ValueError, match=r"previous\['b'\]\['t'\]: partition 0"):
        count_moves({"a": {"t": (0,)}, "b": {"t": (0,)}}, after)


def test_minimum_moves_closed_form() -> None:
    # 7 partitions over 3 members: quotas 2, 2, 3. Owned 4, 3, 0: keep 3 + 2, move 2.
    assert minimum_moves(7, [4, 3, 0]) == 2
    # One member leaves 2 partitions behind: they move whatever happens.
    assert minimum_moves(6, [2, 2], orphaned=2) == 2
    assert minimum_moves_from({"t": 6}, ["a", "b"], {"a": {"t": (0, 1, 2, 3, 4, 5)}}) == 3


def test_registry() -> None:
    assert ASSIGNOR_NAMES == ("range", "roundrobin", "sticky", "cooperative-sticky")
    for name in ASSIGNOR_NAMES:
        assert get_assignor(name).name == name
    with pytest.raises(ValueError, match="known: range, roundrobin, sticky, cooperative-sticky"):
        get_assignor("stickyy")


def test_duplicate_member_ids_are_a_caller_bug() -> None:
    with pytest.raises(ValueError, match=r"members\[1\]: duplicate member_id 'a'"):
        RangeAssignor().assign({"t": 1}, [member("a", ("t",)), member("a", ("t",))])


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("equal", [True, False])
def test_conflicting_previous_generations(name: str, equal: bool) -> None:
    # StickyAssignorTest.testAssignmentWithConflictingPreviousGenerations: consumer1 claims
    # in generation 1 what consumers 2 and 3 claim in generation 2; they keep only their
    # own claims, and the group ends balanced (4/4/4) after the cooperative follow-up.
    all3 = ("topic", "topic2", "topic3")
    c1_topics = all3 if equal else ("topic",)
    c2_topics = all3 if equal else ("topic", "topic2")
    c1: Parts = (
        {"topic": (0, 1, 2), "topic2": (2, 3), "topic3": (0,)} if equal else {"topic": (0, 1, 2, 3)}
    )
    c2 = {"topic": (0, 1), "topic2": (0, 1, 2, 3)}
    c3 = {"topic": (2, 3), "topic3": (0, 1, 2, 3)}
    sizes = {"topic": 4, "topic2": 4, "topic3": 4}
    ms = [
        v2_above(name, "consumer1", c1_topics, c1, 1),
        v2_above(name, "consumer2", c2_topics, c2, 2),
        v2_above(name, "consumer3", all3, c3, 2),
    ]
    out = plain(get_assignor(name).assign(sizes, ms))
    for mid, claim in (("consumer2", c2), ("consumer3", c3)):
        got = {(t, p) for t, ps in out[mid].items() for p in ps}
        assert got <= {(t, p) for t, ps in claim.items() for p in ps}, mid
    if name == "cooperative-sticky":
        ms = [v2_above(name, mid, m.subscription.topics, out[mid], 3) for mid, m in zip(out, ms, strict=True)]
        out = plain(get_assignor(name).assign(sizes, ms))
    assert sorted(sum(map(len, parts.values())) for parts in out.values()) == [4, 4, 4]


def test_new_partitions_are_spread() -> None:
    # AbstractStickyAssignorTest.testAddRemoveTopicTwoConsumers, in spirit: a topic grows
    # from 2 to 6 partitions; the old ones stay put and the new ones are shared out.
    ms = [
        v2_above("sticky", "consumer1", ("topic",), {"topic": (0,)}, 1),
        v2_above("sticky", "consumer2", ("topic",), {"topic": (1,)}, 1),
    ]
    out = plain(StickyAssignor().assign({"topic": 6}, ms))
    assert out == {"consumer1": {"topic": (0, 2, 4)}, "consumer2": {"topic": (1, 3, 5)}}


def test_member_ids_compare_as_java_strings() -> None:
    # String.compareTo compares UTF-16 code units: U+10000 (surrogates D800 DC00) sorts
    # before U+FFFF in Java, after it in Python. MemberInfo.compareTo uses Java's order.
    high, bmp = "\U00010000", "\uffff"
    out = RangeAssignor().assign({"t": 3}, [member(bmp, ("t",)), member(high, ("t",))])
    assert plain(out) == {high: {"t": (0, 1)}, bmp: {"t": (2,)}}

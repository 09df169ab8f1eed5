"""Kafka's client-side assignor unit tests restated against the reference: Range-,
RoundRobin-, Sticky-, CooperativeSticky-, AbstractSticky- and AbstractPartitionAssignorTest
(clients/src/test/java/org/apache/kafka/clients/consumer/ and .../internals/, as of apache/
kafka 02387cc, the newest sources at hand; every input these tests assign with
preferRackAwareLogic off, or where it changes nothing, was also given to the 4.1.2 jar,
which agreed). Each test names the Kafka test
method it restates; inputs and expected outputs are Kafka's. The ones already restated in
tests/test_assignors_examples.py are not repeated here.

Kafka builds replica placements from broker racks (``AbstractPartitionAssignorTest.
partitionInfos``); :func:`replica_racks` computes the same racks per partition. Kafka's
``RackConfig`` (no broker racks / no consumer racks / both) parametrizes most tests, as here.
Members go in the order Kafka's tests put them into their ``HashMap``; the sticky assignors
emulate that map's iteration order from the member ids.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from enum import Enum

import pytest

from groupspec.assignors.base import Assignor, MemberSubscription, PartitionRacks
from groupspec.assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
    kafka_member_data,
    member_generation,
)
from groupspec.assignors.cooperative_sticky import encode_user_data as coop_user_data
from groupspec.assignors.kafka_sticky import KafkaMember, RackInfo
from groupspec.assignors.ordering import member_info_order
from groupspec.assignors.range import RangeAssignor, _TopicState
from groupspec.assignors.registry import get_assignor
from groupspec.assignors.roundrobin import RoundRobinAssignor
from groupspec.assignors.sticky import StickyAssignor, decode_user_data
from groupspec.assignors.sticky import encode_user_data as sticky_user_data
from groupspec.protocol.consumer_protocol import DEFAULT_GENERATION, Assignment, Subscription

Parts = dict[str, tuple[int, ...]]
ALL_RACKS = ("a", "b", "c", "d", "e", "f")


class RackConfig(Enum):
    """``AbstractPartitionAssignorTest.RackConfig``."""

    NO_BROKER_RACK = "no-broker-rack"
    NO_CONSUMER_RACK = "no-consumer-rack"
    BROKER_AND_CONSUMER_RACK = "broker-and-consumer-rack"


RACK_CONFIGS = list(RackConfig)


def racks(n: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    return [None] * n


def replica_racks(
    n: int, replication_factor: int, broker_racks: Sequence[str | None], first_node: int = 0
) -> list[list[str | None]]:
    """The racks of each partition's replicas: partition i lives on brokers
    (i + j + first_node) mod #brokers for j < replication_factor."""
    nodes = len(broker_racks)
    return [
        [broker_racks[(i + j + first_node) % nodes] for j in range(replication_factor)]
        for i in range(n)
    ]


def brokers_for(replication_factor: int, num_broker_racks: int) -> list[str | None]:
    """The broker racks ``partitionInfos(topic, n, rf, numBrokerRacks, next)`` lays out."""
    if num_broker_racks <= 0:
        return [None] * replication_factor
    return [ALL_RACKS[i % num_broker_racks] for i in range(num_broker_racks * replication_factor)]


def parse(expected: str) -> Parts:
    """"t1-0, t1-3, t2-1" as topic -> partitions."""
    out: dict[str, list[int]] = {}
    for item in filter(None, (s.strip() for s in expected.split(","))):
        t, _, p = item.rpartition("-")
        out.setdefault(t, []).append(int(p))
    return {t: tuple(sorted(ps)) for t, ps in sorted(out.items())}


def plain(result: Mapping[str, Assignment]) -> dict[str, Parts]:
    return {mid: {t: tuple(sorted(ps)) for t, ps in a.partitions.items() if ps}
            for mid, a in result.items()}


def member(
    mid: str, topics: Sequence[str], instance: str | None = None, rack: str | None = None,
    owned: Parts | None = None, generation: int = DEFAULT_GENERATION,
) -> MemberSubscription:
    return MemberSubscription(
        mid, Subscription(tuple(topics), None, owned or {}, generation, rack), instance
    )


def verify_rack_assignment(
    assignor: Assignor,
    partitions_per_topic: Mapping[str, int],
    replication_factor: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    expected: Sequence[str],
    mismatches: int,
    owned: Sequence[str] = (),
) -> None:
    """``AbstractPartitionAssignorTest.verifyRackAssignment``: consumers ``consumer<i>``; the
    topics' replicas laid out one after the other over the brokers (in the map's order); the
    exact assignment, and (when ``mismatches`` >= 0) how many assigned partitions have no
    replica on their consumer's rack."""
    racks_of: dict[str, list[list[str | None]]] = {}
    first = 0
    for t, n in partitions_per_topic.items():
        racks_of[t] = replica_racks(n, replication_factor, broker_racks, first)
        first += n
    members = [
        member(f"consumer{i}", ts, rack=consumer_racks[i],
               owned=parse(owned[i]) if i < len(owned) else None)
        for i, ts in enumerate(consumer_topics)
    ]
    got = plain(assignor.assign(partitions_per_topic, members, racks_of))
    assert got == {f"consumer{i}": parse(e) for i, e in enumerate(expected)}
    if mismatches >= 0:
        wrong = [
            (t, p)
            for i, rack in enumerate(consumer_racks)
            if rack is not None
            for t, ps in got[f"consumer{i}"].items()
            for p in ps
            if rack not in racks_of[t][p]
        ]
        assert len(wrong) == mismatches, wrong


# --------------------------------------------------------------------------- MemberInfo order


def test_member_info_order_without_instance_ids_is_by_member_id() -> None:
    # AbstractPartitionAssignorTest.testMemberInfoSortingWithoutGroupInstanceId
    ms = [member(m, ()) for m in ("a", "b", "c")]
    assert [m.member_id for m in member_info_order(ms)] == ["a", "b", "c"]


def test_member_info_order_with_all_instance_ids_is_by_instance_id() -> None:
    # AbstractPartitionAssignorTest.testMemberInfoSortingWithAllGroupInstanceId
    ms = [member("a", (), "y"), member("b", (), "z"), member("c", (), "x")]
    assert [m.member_id for m in member_info_order(ms)] == ["c", "a", "b"]


def test_member_info_order_puts_static_members_first() -> None:
    # AbstractPartitionAssignorTest.testMemberInfoSortingSomeGroupInstanceId
    ms = [member("a", ()), member("b", (), "y"), member("c", (), "x")]
    assert [m.member_id for m in member_info_order(ms)] == ["c", "b", "a"]


def test_member_info_order_of_many_shuffled_members() -> None:
    # AbstractPartitionAssignorTest.testMergeSortManyMemberInfo (seeded here)
    rng = random.Random(4_1_2)
    ms = [member(str(i + 100), (), str(i + 100) if rng.random() < 0.5 else None)
          for i in range(100)]
    expected = [m.member_id for m in ms if m.group_instance_id] + [
        m.member_id for m in ms if not m.group_instance_id
    ]
    rng.shuffle(ms)
    assert [m.member_id for m in member_info_order(ms)] == expected


USE_RACK_CASES: list[tuple[frozenset[str], str, bool, bool]] = [
    # (consumer racks, replica layout, Kafka's answer, answer with preferRackAwareLogic)
    (frozenset(), "all", False, False),
    (frozenset({"a", "b", "c"}), "none", False, False),
    (frozenset({"d"}), "all", False, False),
    (frozenset({"a", "b", "c"}), "all", False, True),
    (frozenset({"a", "b"}), "all", False, True),
    (frozenset({"a", "d"}), "all", False, True),
    (frozenset({"a", "b", "c"}), "subset", True, True),
    (frozenset({"a", "b"}), "subset", True, True),
    (frozenset({"a", "d"}), "subset", True, True),
]


@pytest.mark.parametrize("prefer", [False, True])
@pytest.mark.parametrize(("consumer_racks", "layout", "plain_answer", "preferred_answer"),
                         USE_RACK_CASES)
def test_use_rack_aware_assignment(
    consumer_racks: frozenset[str], layout: str, plain_answer: bool, preferred_answer: bool,
    prefer: bool,
) -> None:
    # AbstractPartitionAssignorTest.testUseRackAwareAssignment: 10 partitions of "topic" with
    # replicas on all of a, b, c ("all"), on one of them each ("subset"), or none known;
    # asked of the sticky assignors' RackInfo and of the range assignor's topic state. (The
    # case "{a, d} on all racks with preferRackAwareLogic", not asserted by Kafka, follows
    # the same rule: some consumer rack holds replicas.)
    n = 0 if layout == "none" else 10
    per: list[list[str | None]] = [
        ["a", "b", "c"] if layout == "all" else [("a", "b", "c")[i % 3]] for i in range(n)
    ]
    ms = [KafkaMember(f"m{i}", ("topic",), rack=r) for i, r in enumerate(sorted(consumer_racks))]
    expected = preferred_answer if prefer else plain_answer
    info = RackInfo({"topic": n}, {"topic": per}, ms, list(range(len(ms))), prefer)
    assert bool(info.consumer_racks) is expected
    state = _TopicState("topic", n, [(m.member_id, m.rack) for m in ms] or [("x", None)], per, prefer)
    assert state.needs_racks is expected


# --------------------------------------------------------------------------- Range


def range_assignor() -> RangeAssignor:
    # RangeAssignorTest.initializeRacks turns preferRackAwareLogic on for every test.
    a = RangeAssignor()
    a.prefer_rack_aware_logic = True
    return a


class RangeSetup:
    """``RangeAssignorTest.initializeRacks`` and its ``subscription``/``partitionInfos``."""

    def __init__(self, config: RackConfig, max_consumers: int = 3) -> None:
        self.replication_factor = max_consumers
        self.num_broker_racks = 0 if config is RackConfig.NO_BROKER_RACK else max_consumers
        self.consumer_rack = config is not RackConfig.NO_CONSUMER_RACK

    def rack(self, index: int) -> str | None:
        n = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        return ALL_RACKS[index % n] if self.consumer_rack else None

    def sub(self, mid: str, topics: Sequence[str], index: int,
            instance: str | None = None) -> MemberSubscription:
        return member(mid, topics, instance, self.rack(index))

    def racks(self, sizes: Mapping[str, int]) -> PartitionRacks:
        brokers = brokers_for(self.replication_factor, self.num_broker_racks)
        return {t: replica_racks(n, self.replication_factor, brokers) for t, n in sizes.items()}

    def assign(self, sizes: Mapping[str, int], ms: Sequence[MemberSubscription]) -> dict[str, Parts]:
        return plain(range_assignor().assign(sizes, ms, self.racks(sizes)))


@pytest.mark.parametrize("consumer_rack", [True, False])
def test_range_one_consumer_no_topic(consumer_rack: bool) -> None:
    # RangeAssignorTest.testOneConsumerNoTopic
    s = RangeSetup(RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack else RackConfig.NO_CONSUMER_RACK)
    assert s.assign({}, [s.sub("consumer1", (), 0)]) == {"consumer1": {}}


@pytest.mark.parametrize("consumer_rack", [True, False])
def test_range_one_consumer_nonexistent_topic(consumer_rack: bool) -> None:
    # RangeAssignorTest.testOneConsumerNonexistentTopic
    s = RangeSetup(RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack else RackConfig.NO_CONSUMER_RACK)
    assert s.assign({}, [s.sub("consumer1", ("topic1",), 0)]) == {"consumer1": {}}


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_one_consumer_one_topic(config: RackConfig) -> None:
    # RangeAssignorTest.testOneConsumerOneTopic
    s = RangeSetup(config)
    got = s.assign({"topic1": 3}, [s.sub("consumer1", ("topic1",), 0)])
    assert got == {"consumer1": {"topic1": (0, 1, 2)}}


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_only_assigns_subscribed_topics(config: RackConfig) -> None:
    # RangeAssignorTest.testOnlyAssignsPartitionsFromSubscribedTopics
    s = RangeSetup(config)
    got = s.assign({"topic1": 3, "other": 3}, [s.sub("consumer1", ("topic1",), 0)])
    assert got == {"consumer1": {"topic1": (0, 1, 2)}}


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_one_consumer_multiple_topics(config: RackConfig) -> None:
    # RangeAssignorTest.testOneConsumerMultipleTopics
    s = RangeSetup(config)
    got = s.assign({"topic1": 1, "topic2": 2}, [s.sub("consumer1", ("topic1", "topic2"), 0)])
    assert got == {"consumer1": {"topic1": (0,), "topic2": (0, 1)}}


@pytest.mark.parametrize("config", RACK_CONFIGS)
@pytest.mark.parametrize(("n", "second"), [(1, {}), (2, {"topic1": (1,)})])
def test_range_two_consumers_one_topic(config: RackConfig, n: int, second: Parts) -> None:
    # RangeAssignorTest.testTwoConsumersOneTopicOnePartition and ...OneTopicTwoPartitions
    s = RangeSetup(config)
    ms = [s.sub("consumer1", ("topic1",), 0), s.sub("consumer2", ("topic1",), 1)]
    assert s.assign({"topic1": n}, ms) == {"consumer1": {"topic1": (0,)}, "consumer2": second}


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_multiple_consumers_mixed_topics_with_racks(config: RackConfig) -> None:
    # RangeAssignorTest.testMultipleConsumersMixedTopics (every rack config)
    s = RangeSetup(config)
    ms = [
        s.sub("consumer1", ("topic1",), 0),
        s.sub("consumer2", ("topic1", "topic2"), 1),
        s.sub("consumer3", ("topic1",), 2),
    ]
    assert s.assign({"topic1": 3, "topic2": 2}, ms) == {
        "consumer1": {"topic1": (0,)},
        "consumer2": {"topic1": (1,), "topic2": (0, 1)},
        "consumer3": {"topic1": (2,)},
    }


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_two_consumers_two_topics_six_partitions_with_racks(config: RackConfig) -> None:
    # RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions (every rack config)
    s = RangeSetup(config)
    both = ("topic1", "topic2")
    ms = [s.sub("consumer1", both, 0), s.sub("consumer2", both, 1)]
    assert s.assign({"topic1": 3, "topic2": 3}, ms) == {
        "consumer1": {"topic1": (0, 1), "topic2": (0, 1)},
        "consumer2": {"topic1": (2,), "topic2": (2,)},
    }


@pytest.mark.parametrize("config", RACK_CONFIGS)
@pytest.mark.parametrize("second_static", [True, False])
def test_range_static_members_rank_by_instance_id(config: RackConfig, second_static: bool) -> None:
    # RangeAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions and
    # testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions: consumer-b sorts first
    # (by instance id, or as the only static member) although consumer-a is smaller.
    s = RangeSetup(config)
    both = ("topic1", "topic2")
    ms = [
        s.sub("consumer-b", both, 0, "instance1"),
        s.sub("consumer-a", both, 1, "instance2" if second_static else None),
    ]
    assert s.assign({"topic1": 3, "topic2": 3}, ms) == {
        "consumer-b": {"topic1": (0, 1), "topic2": (0, 1)},
        "consumer-a": {"topic1": (2,), "topic2": (2,)},
    }


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_static_members_persist_across_dynamic_member_changes(config: RackConfig) -> None:
    # RangeAssignorTest.testStaticMemberRangeAssignmentPersistent (every rack config, with
    # initializeRacks(rackConfig, 5))
    s = RangeSetup(config, 5)
    both = ("topic1", "topic2")
    static = [s.sub(f"consumer{i}", both, i - 1, f"instance{i}") for i in (1, 2, 3)]
    sizes = {"topic1": 5, "topic2": 4}
    expected = {
        "consumer1": {"topic1": (0, 1), "topic2": (0,)},
        "consumer2": {"topic1": (2,), "topic2": (1,)},
        "consumer3": {"topic1": (3,), "topic2": (2,)},
    }
    got = s.assign(sizes, [*static, s.sub("consumer4", both, 3)])
    assert got == {**expected, "consumer4": {"topic1": (4,), "topic2": (3,)}}
    got = s.assign(sizes, [*static, s.sub("consumer5", both, 4)])
    assert got == {**expected, "consumer5": {"topic1": (4,), "topic2": (3,)}}


def by_instance(result: dict[str, Parts], ms: Sequence[MemberSubscription]) -> dict[str, Parts]:
    """``checkStaticAssignment``: the assignment keyed by group instance id."""
    return {m.group_instance_id: result[m.member_id] for m in ms if m.group_instance_id}


def renamed(ms: Sequence[MemberSubscription]) -> list[MemberSubscription]:
    """consumer3's subscription now arrives as consumer4, consumer2's as consumer5."""
    new = {"consumer3": "consumer4", "consumer2": "consumer5"}
    return [MemberSubscription(new.get(m.member_id, m.member_id), m.subscription,
                               m.group_instance_id) for m in ms]


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_range_static_assignment_survives_member_id_changes(config: RackConfig) -> None:
    # RangeAssignorTest.testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges
    s = RangeSetup(config)
    both = ("topic1", "topic2")
    ms = [s.sub(f"consumer{i}", both, i - 1, f"instance{i}") for i in (1, 2, 3)]
    sizes = {"topic1": 5, "topic2": 5}
    first = by_instance(s.assign(sizes, ms), ms)
    assert first == {
        "instance1": {"topic1": (0, 1), "topic2": (0, 1)},
        "instance2": {"topic1": (2, 3), "topic2": (2, 3)},
        "instance3": {"topic1": (4,), "topic2": (4,)},
    }
    again = renamed(ms)
    assert by_instance(s.assign(sizes, again), again) == first


def test_range_rack_aware_static_assignment_survives_member_id_changes() -> None:
    # RangeAssignorTest.testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges:
    # replication factor 2 over 3 broker racks, consumers on racks a, b, c.
    both = ("topic1", "topic2")
    ms = [member(f"consumer{i}", both, f"instance{i}", ALL_RACKS[i - 1]) for i in (1, 2, 3)]
    sizes = {"topic1": 5, "topic2": 5}
    brokers = brokers_for(2, 3)
    pr = {t: replica_racks(5, 2, brokers) for t in sizes}

    def run(members: list[MemberSubscription]) -> dict[str, Parts]:
        return by_instance(plain(range_assignor().assign(sizes, members, pr)), members)

    first = run(ms)
    assert first == {
        "instance1": {"topic1": (0, 2), "topic2": (0, 2)},
        "instance2": {"topic1": (1, 3), "topic2": (1, 3)},
        "instance3": {"topic1": (4,), "topic2": (4,)},
    }
    assert run(renamed(ms)) == first


def verify_non_rack_aware(
    topics: Mapping[str, int], consumer_topics: Sequence[Sequence[str]], expected: Sequence[str]
) -> None:
    """``RangeAssignorTest.verifyNonRackAwareAssignment``: the layouts where the rack-aware
    pass does not change the plain range assignment (preferRackAwareLogic off, then on for
    the last one)."""
    a = RangeAssignor()
    verify_rack_assignment(a, topics, 3, null_racks(3), racks(3), consumer_topics, expected, -1)
    verify_rack_assignment(a, topics, 3, racks(3), null_racks(3), consumer_topics, expected, -1)
    verify_rack_assignment(a, topics, 3, racks(3), racks(3), consumer_topics, expected, 0)
    verify_rack_assignment(a, topics, 4, racks(4), racks(3), consumer_topics, expected, 0)
    verify_rack_assignment(a, topics, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1)
    verify_rack_assignment(a, topics, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1)
    verify_rack_assignment(
        range_assignor(), topics, 3, racks(3), racks(3), consumer_topics, expected, 0
    )


ALL3 = ("t1", "t2", "t3")


def test_range_rack_aware_uniform_subscription() -> None:
    # RangeAssignorTest.testRackAwareAssignmentWithUniformSubscription
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [ALL3, ALL3, ALL3]
    verify_non_rack_aware(topics, ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"])
    a = RangeAssignor()  # preferRackAwareLogic is off here
    verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, [
        "t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"], 0)
    verify_rack_assignment(a, topics, 2, racks(3), racks(3), ct, [
        "t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"], 1)
    verify_rack_assignment(a, topics, 3, racks(2), racks(3), ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"], 4)


def test_range_rack_aware_non_equal_subscription() -> None:
    # RangeAssignorTest.testRackAwareAssignmentWithNonEqualSubscription
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [ALL3, ALL3, ("t1", "t3")]
    verify_non_rack_aware(topics, ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"])
    a = RangeAssignor()  # preferRackAwareLogic is off here
    verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, [
        "t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"], 2)
    verify_rack_assignment(a, topics, 2, racks(3), racks(3), ct, [
        "t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"], 0)
    verify_rack_assignment(a, topics, 3, racks(2), racks(3), ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"], 2)


def test_range_rack_aware_keeps_co_partitioning_over_rack_alignment() -> None:
    # RangeAssignorTest.testRackAwareAssignmentWithUniformPartitions
    topics = {"t1": 5, "t2": 5, "t3": 5}
    ct = [ALL3, ALL3, ALL3]
    expected = ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
                "t1-4, t2-4, t3-4"]
    verify_non_rack_aware(topics, ct, expected)
    a = RangeAssignor()  # preferRackAwareLogic is off here
    verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, expected, 10)
    verify_rack_assignment(a, topics, 2, racks(3), racks(3), ct, expected, 5)
    verify_rack_assignment(a, topics, 3, racks(2), racks(3), ct, expected, 3)


def test_range_rack_aware_uniform_partitions_non_equal_subscription() -> None:
    # RangeAssignorTest.testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription
    topics = {"t1": 5, "t2": 5, "t3": 5}
    ct = [ALL3, ALL3, ("t1", "t3")]
    verify_non_rack_aware(topics, ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"])
    a = RangeAssignor()  # preferRackAwareLogic is off here
    verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"], 9)
    verify_rack_assignment(a, topics, 2, racks(3), racks(3), ct, [
        "t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"], 0)
    verify_rack_assignment(a, topics, 3, racks(2), racks(3), ct, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"], 2)


def test_range_rack_aware_with_co_partitioning() -> None:
    # RangeAssignorTest.testRackAwareAssignmentWithCoPartitioning
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    cr: list[str | None] = ["a", "b", "b", "a"]
    ct: list[Sequence[str]] = [("t1", "t2"), ("t1", "t2"), ("t3", "t4"), ("t3", "t4")]
    base = ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
            "t3-0, t4-0", "t3-1, t4-1"]
    a = RangeAssignor()  # preferRackAwareLogic is off here
    verify_rack_assignment(a, topics, 3, racks(2), cr, ct, base, -1)
    verify_rack_assignment(a, topics, 2, racks(2), cr, ct, base, 0)
    verify_rack_assignment(a, topics, 1, racks(2), cr, ct, [
        "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
        "t3-1, t4-1", "t3-0, t4-0"], 0)
    all4 = ("t1", "t2", "t3", "t4")
    ct = [all4] * 4
    base = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
            "t1-4, t2-4", "t1-5, t2-5"]
    verify_rack_assignment(a, topics, 3, racks(2), cr, ct, base, -1)
    verify_rack_assignment(a, topics, 2, racks(2), cr, ct, base, 0)
    verify_rack_assignment(a, topics, 1, racks(2), cr, ct, [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
        "t1-5, t2-5", "t1-4, t2-4"], 0)
    verify_rack_assignment(a, topics, 1, racks(3), cr, ct, [
        "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
        "t1-2, t2-2", "t1-5, t2-5"], 6)


def test_range_co_partitioned_assignment_with_same_subscription() -> None:
    # RangeAssignorTest.testCoPartitionedAssignmentWithSameSubscription (t7..t9 have no
    # metadata)
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    ct = [tuple(f"t{i}" for i in range(1, 10))] * 3
    cr = racks(3)
    base = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3"]
    verify_rack_assignment(RangeAssignor(), topics, 3, null_racks(3), cr, ct, base, -1)
    a = range_assignor()
    verify_rack_assignment(a, topics, 3, racks(3), cr, ct, base, 0)
    verify_rack_assignment(a, topics, 2, racks(3), cr, ct, [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
        "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3"], 0)


# --------------------------------------------------------------------------- RoundRobin


def rr(sizes: Mapping[str, int], ms: Sequence[MemberSubscription]) -> dict[str, Parts]:
    return plain(RoundRobinAssignor().assign(sizes, ms))


def test_roundrobin_one_consumer_no_topic() -> None:
    # RoundRobinAssignorTest.testOneConsumerNoTopic
    assert rr({}, [member("consumer", ())]) == {"consumer": {}}


def test_roundrobin_one_consumer_nonexistent_topic() -> None:
    # RoundRobinAssignorTest.testOneConsumerNonexistentTopic
    assert rr({}, [member("consumer", ("topic",))]) == {"consumer": {}}


def test_roundrobin_one_consumer_one_topic() -> None:
    # RoundRobinAssignorTest.testOneConsumerOneTopic
    assert rr({"topic": 3}, [member("consumer", ("topic",))]) == {"consumer": {"topic": (0, 1, 2)}}


def test_roundrobin_only_assigns_subscribed_topics() -> None:
    # RoundRobinAssignorTest.testOnlyAssignsPartitionsFromSubscribedTopics
    got = rr({"topic": 3, "other": 3}, [member("consumer", ("topic",))])
    assert got == {"consumer": {"topic": (0, 1, 2)}}


def test_roundrobin_one_consumer_multiple_topics() -> None:
    # RoundRobinAssignorTest.testOneConsumerMultipleTopics
    got = rr({"topic1": 1, "topic2": 2}, [member("consumer", ("topic1", "topic2"))])
    assert got == {"consumer": {"topic1": (0,), "topic2": (0, 1)}}


@pytest.mark.parametrize(("n", "second"), [(1, {}), (2, {"topic": (1,)})])
def test_roundrobin_two_consumers_one_topic(n: int, second: Parts) -> None:
    # RoundRobinAssignorTest.testTwoConsumersOneTopicOnePartition and ...TwoPartitions
    got = rr({"topic": n}, [member("consumer1", ("topic",)), member("consumer2", ("topic",))])
    assert got == {"consumer1": {"topic": (0,)}, "consumer2": second}


def test_roundrobin_two_dynamic_consumers_two_topics() -> None:
    # RoundRobinAssignorTest.testTwoDynamicConsumersTwoTopicsSixPartitions
    both = ("topic1", "topic2")
    got = rr({"topic1": 3, "topic2": 3}, [member("consumer1", both), member("consumer2", both)])
    assert got == {
        "consumer1": {"topic1": (0, 2), "topic2": (1,)},
        "consumer2": {"topic1": (1,), "topic2": (0, 2)},
    }


def test_roundrobin_static_member_outranks_dynamic_one() -> None:
    # RoundRobinAssignorTest.testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions
    both = ("topic1", "topic2")
    got = rr({"topic1": 3, "topic2": 3},
             [member("consumer-b", both, "instance1"), member("consumer-a", both)])
    assert got == {
        "consumer-b": {"topic1": (0, 2), "topic2": (1,)},
        "consumer-a": {"topic1": (1,), "topic2": (0, 2)},
    }


def test_roundrobin_static_assignment_survives_member_id_changes() -> None:
    # RoundRobinAssignorTest.testStaticMemberRoundRobinAssignmentPersistentAfterMemberIdChanges
    both = ("topic1", "topic2")
    ms = [member(f"consumer{i}", both, f"instance{i}") for i in (1, 2, 3)]
    sizes = {"topic1": 5, "topic2": 5}
    first = by_instance(rr(sizes, ms), ms)
    assert first == {
        "instance1": {"topic1": (0, 3), "topic2": (1, 4)},
        "instance2": {"topic1": (1, 4), "topic2": (2,)},
        "instance3": {"topic1": (2,), "topic2": (0, 3)},
    }
    again = renamed(ms)
    assert by_instance(rr(sizes, again), again) == first


# --------------------------------------------------------------------------- AbstractSticky

STICKY = ["sticky", "cooperative-sticky"]


class StickySetup:
    """``AbstractStickyAssignorTest.initializeRacks``, ``subscription``, ``partitionInfos``
    (each topic's replicas start one broker further than the previous topic's) and the
    subclasses' ``buildSubscriptionV2Above``. preferRackAwareLogic is on, as there."""

    def __init__(self, name: str, config: RackConfig) -> None:
        self.name = name
        self.num_broker_racks = 0 if config is RackConfig.NO_BROKER_RACK else 3
        self.consumer_rack = config is not RackConfig.NO_CONSUMER_RACK
        self.racks: dict[str, list[list[str | None]]] = {}
        self.assignor = get_assignor(name)
        self.assignor.prefer_rack_aware_logic = True
        self.final: dict[str, Parts] = {}

    def rack(self, index: int) -> str | None:
        n = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        return ALL_RACKS[index % n] if self.consumer_rack else None

    def topic(self, name: str, n: int) -> None:
        brokers = brokers_for(3, self.num_broker_racks)
        self.racks[name] = replica_racks(n, 3, brokers, len(self.racks))

    def sub(self, mid: str, topics: Sequence[str], index: int) -> MemberSubscription:
        return member(mid, topics, rack=self.rack(index))

    def v2(self, mid: str, topics: Sequence[str], owned: Mapping[str, tuple[int, ...]], index: int,
           generation: int = 1) -> MemberSubscription:
        if self.name == "sticky":  # StickyAssignorTest: user data, the field, no rack
            return MemberSubscription(mid, Subscription(
                tuple(topics), sticky_user_data(owned, generation), dict(owned), generation))
        return MemberSubscription(mid, Subscription(
            tuple(topics), coop_user_data(DEFAULT_GENERATION), owned, generation,
            self.rack(index)))

    def assign(self, sizes: Mapping[str, int], ms: Sequence[MemberSubscription]) -> dict[str, Parts]:
        """One rebalance; then ``verifyValidityAndBalance``, which for the cooperative
        assignor first runs the follow-up rebalances (CooperativeStickyAssignorTest's
        override) and leaves their result in :attr:`final`."""
        out = self._once(sizes, ms)
        self.final = out
        if self.name == "cooperative-sticky":
            self.final = self._settle(sizes, ms, out)
        verify_validity_and_balance(ms, self.final)
        return out

    def _once(self, sizes: Mapping[str, int], ms: Sequence[MemberSubscription]) -> dict[str, Parts]:
        pr = {t: self.racks[t] for t in sizes}
        return plain(self.assignor.assign(sizes, ms, pr))

    def _settle(self, sizes: Mapping[str, int], ms: Sequence[MemberSubscription],
                out: dict[str, Parts]) -> dict[str, Parts]:
        """``CooperativeStickyAssignorTest.verifyValidityAndBalance``: while the assignment
        revokes something, no revoked partition may be handed to another member in the same
        rebalance; members report what they now own and the group rebalances again (at
        most four times)."""
        for _ in range(5):
            added: set[tuple[str, int]] = set()
            revoked: set[tuple[str, int]] = set()
            for m in ms:
                owned = {(t, p) for t, ps in m.subscription.owned_partitions.items() for p in ps}
                now = {(t, p) for t, ps in out[m.member_id].items() for p in ps}
                added |= now - owned
                revoked |= owned - now
            assert not added & revoked, added & revoked
            if not revoked:
                return out
            ms = [MemberSubscription(m.member_id, Subscription(
                m.subscription.topics, coop_user_data(DEFAULT_GENERATION), out[m.member_id], 1,
                m.subscription.rack_id)) for m in ms]
            out = self._once(sizes, ms)
        raise AssertionError("still revoking after four follow-up rebalances")

    def expect(self, raw: Mapping[str, Mapping[str, tuple[int, ...]]], transferring: Sequence[tuple[str, int]] = ()
               ) -> dict[str, Parts]:
        """Kafka's tests check assignPartitions; CooperativeStickyAssignor.assign then holds
        back the partitions changing owner (adjustAssignment)."""
        if self.name == "sticky" or not transferring:
            return {mid: dict(parts) for mid, parts in raw.items()}
        held = set(transferring)
        return {mid: {t: kept for t, ps in parts.items()
                      if (kept := tuple(p for p in ps if (t, p) not in held))}
                for mid, parts in raw.items()}


def verify_validity_and_balance(ms: Sequence[MemberSubscription], out: Mapping[str, Parts]) -> None:
    """``AbstractStickyAssignorTest.verifyValidityAndBalance``: every partition goes to a
    subscriber of its topic, to one consumer only, and two consumers whose counts differ by
    2+ share no topic (else a partition could move to the lighter one)."""
    subs = {m.member_id: set(m.subscription.topics) for m in ms}
    assert set(out) == set(subs)
    owner: dict[tuple[str, int], str] = {}
    for mid, parts in out.items():
        for t, ps in parts.items():
            assert t in subs[mid], (mid, t)
            for p in ps:
                assert owner.setdefault((t, p), mid) == mid, (t, p)
    ids = sorted(out)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            na, nb = (sum(map(len, out[x].values())) for x in (a, b))
            if abs(na - nb) > 1:
                assert not set(out[a]) & set(out[b]), (a, b)


def is_sticky(before: Mapping[str, Parts], after: Mapping[str, Parts]) -> bool:
    """``AbstractStickyAssignor.isSticky`` (``PartitionMovements``): among members present in
    both rounds, the moves of each topic's partitions form no cycle (no partition went from
    X to Y while another of the same topic went, directly or through others, from Y to X)."""
    owner = {(t, p): mid for mid, parts in before.items() for t, ps in parts.items() for p in ps}
    edges: dict[str, dict[str, set[str]]] = {}
    for mid, parts in after.items():
        for t, ps in parts.items():
            for p in ps:
                src = owner.get((t, p))
                if src is not None and src != mid and src in after:
                    edges.setdefault(t, {}).setdefault(src, set()).add(mid)
    for graph in edges.values():
        for start in graph:
            seen, todo = set(), list(graph[start])
            while todo:
                node = todo.pop()
                if node == start:
                    return False
                if node not in seen:
                    seen.add(node)
                    todo.extend(graph.get(node, ()))
    return True


def is_fully_balanced(out: Mapping[str, Parts]) -> bool:
    sizes = [sum(map(len, parts.values())) for parts in out.values()]
    return max(sizes) - min(sizes) <= 1


def test_sticky_member_data_from_every_subscription_version() -> None:
    # AbstractStickyAssignorTest.testMemberData (StickyAssignor: V0 and V1 carry it in user
    # data; CooperativeStickyAssignor reads V1+ owned partitions and generation)
    owned: Parts = {"topic1": (0,), "topic2": (1,)}
    assert decode_user_data(sticky_user_data(owned, 1)) == (owned, 1)
    v2 = Subscription(("topic",), coop_user_data(DEFAULT_GENERATION), owned, 1)
    assert member_generation(v2) == 1
    assert kafka_member_data(v2) == ((("topic1", 0), ("topic2", 1)), 1)


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("consumer_rack", [True, False])
def test_sticky_one_consumer_no_topic_or_nonexistent_topic(name: str, consumer_rack: bool) -> None:
    # AbstractStickyAssignorTest.testOneConsumerNoTopic and testOneConsumerNonexistentTopic
    s = StickySetup(name, RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack
                    else RackConfig.NO_CONSUMER_RACK)
    assert s.assign({}, [s.sub("consumer", (), 0)]) == {"consumer": {}}
    s.topic("topic", 0)
    assert s.assign({"topic": 0}, [s.sub("consumer", ("topic",), 0)]) == {"consumer": {}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_single_consumer_cases(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testOneConsumerOneTopic,
    # testOnlyAssignsPartitionsFromSubscribedTopics and testOneConsumerMultipleTopics
    s = StickySetup(name, config)
    s.topic("topic", 3)
    assert s.assign({"topic": 3}, [s.sub("consumer", ("topic",), 0)]) == {
        "consumer": {"topic": (0, 1, 2)}}
    s = StickySetup(name, config)
    s.topic("topic", 2)
    claim = {"topic": (0, 1), "other": (0, 1)}
    assert s.assign({"topic": 2}, [s.v2("consumer", ("topic",), claim, 0)]) == {
        "consumer": {"topic": (0, 1)}}
    s = StickySetup(name, config)
    s.topic("topic1", 1)
    s.topic("topic2", 2)
    got = s.assign({"topic1": 1, "topic2": 2}, [s.sub("consumer", ("topic1", "topic2"), 0)])
    assert got == {"consumer": {"topic1": (0,), "topic2": (0, 1)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_two_consumers_one_topic(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testTwoConsumersOneTopicOnePartition and ...TwoPartitions
    s = StickySetup(name, config)
    s.topic("topic", 1)
    ms = [s.sub("consumer1", ("topic",), 0), s.sub("consumer2", ("topic",), 1)]
    assert is_fully_balanced(s.assign({"topic": 1}, ms))
    s = StickySetup(name, config)
    s.topic("topic", 2)
    assert s.assign({"topic": 2}, ms) == {
        "consumer1": {"topic": (0,)}, "consumer2": {"topic": (1,)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_multiple_consumers_mixed_subscriptions(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testMultipleConsumersMixedTopicSubscriptions
    s = StickySetup(name, config)
    s.topic("topic1", 3)
    s.topic("topic2", 2)
    ms = [s.sub("consumer1", ("topic1",), 0), s.sub("consumer2", ("topic1", "topic2"), 1),
          s.sub("consumer3", ("topic1",), 2)]
    got = s.assign({"topic1": 3, "topic2": 2}, ms)
    assert got == {"consumer1": {"topic1": (0, 2)}, "consumer2": {"topic2": (0, 1)},
                   "consumer3": {"topic1": (1,)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_two_consumers_two_topics_six_partitions(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testTwoConsumersTwoTopicsSixPartitions
    s = StickySetup(name, config)
    s.topic("topic1", 3)
    s.topic("topic2", 3)
    both = ("topic1", "topic2")
    got = s.assign({"topic1": 3, "topic2": 3}, [s.sub("consumer1", both, 0), s.sub("consumer2", both, 1)])
    assert got == {"consumer1": {"topic1": (0, 2), "topic2": (1,)},
                   "consumer2": {"topic1": (1,), "topic2": (0, 2)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_owner_of_min_quota_gets_max_quota(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testConsumerOwningMinQuotaExpectedMaxQuota
    s = StickySetup(name, config)
    s.topic("topic1", 2)
    s.topic("topic2", 3)
    both = ("topic1", "topic2")
    ms = [s.v2("consumer1", both, {"topic1": (0,), "topic2": (1,)}, 0),
          s.v2("consumer2", both, {"topic1": (1,), "topic2": (2,)}, 1)]
    assert s.assign({"topic1": 2, "topic2": 3}, ms) == {
        "consumer1": {"topic1": (0,), "topic2": (0, 1)},
        "consumer2": {"topic1": (1,), "topic2": (2,)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_more_max_quota_owners_than_max_quota_slots(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers
    s = StickySetup(name, config)
    s.topic("topic1", 2)
    s.topic("topic2", 2)
    both = ("topic1", "topic2")
    ms = [s.v2("consumer1", both, {"topic1": (0,), "topic2": (0,)}, 0),
          s.v2("consumer2", both, {"topic1": (1,), "topic2": (1,)}, 1),
          s.v2("consumer3", both, {}, 2)]
    raw = {"consumer1": {"topic1": (0,)}, "consumer2": {"topic1": (1,), "topic2": (1,)},
           "consumer3": {"topic2": (0,)}}
    # partitionsTransferringOwnership = {topic2-0: consumer3}: the cooperative assignor holds
    # it back this round; the settled assignment is the expected one for both.
    assert s.assign({"topic1": 2, "topic2": 2}, ms) == s.expect(raw, [("topic2", 0)])
    assert s.final == raw


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_all_consumers_under_min_quota(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testAllConsumersAreUnderMinQuota
    s = StickySetup(name, config)
    s.topic("topic1", 2)
    s.topic("topic2", 3)
    both = ("topic1", "topic2")
    ms = [s.v2("consumer1", both, {"topic1": (0,)}, 0),
          s.v2("consumer2", both, {"topic1": (1,)}, 1),
          s.v2("consumer3", both, {}, 2)]
    assert s.assign({"topic1": 2, "topic2": 3}, ms) == {
        "consumer1": {"topic1": (0,), "topic2": (1,)},
        "consumer2": {"topic1": (1,), "topic2": (2,)},
        "consumer3": {"topic2": (0,)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_add_and_remove_consumer_one_topic(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testAddRemoveConsumerOneTopic
    s = StickySetup(name, config)
    s.topic("topic", 3)
    sizes = {"topic": 3}
    got = s.assign(sizes, [s.sub("consumer1", ("topic",), 0)])
    assert got == {"consumer1": {"topic": (0, 1, 2)}}
    ms = [s.v2("consumer1", ("topic",), got["consumer1"], 0), s.v2("consumer2", ("topic",), {}, 1)]
    got = s.assign(sizes, ms)
    raw: dict[str, Parts] = {"consumer1": {"topic": (0, 1)}, "consumer2": {"topic": (2,)}}
    assert got == s.expect(raw, [("topic", 2)])
    assert s.final == raw
    got = s.assign(sizes, [s.v2("consumer2", ("topic",), raw["consumer2"], 1)])
    assert got == {"consumer2": {"topic": (0, 1, 2)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_topic_balance_after_reassignments(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testTopicBalanceAfterReassignment: 12 + 12 partitions, 1, 2,
    # 4 then 2 consumers; every consumer holds the same share of each topic (once settled).
    s = StickySetup(name, config)
    s.topic("topic1", 12)
    s.topic("topic2", 12)
    both = ("topic1", "topic2")
    sizes = {"topic1": 12, "topic2": 12}
    s.assign(sizes, [s.sub("consumer1", both, 0)])
    got = s.final
    members = ["consumer1"]
    for added, removed, share in (
        (["consumer2"], [], 6), (["consumer3", "consumer4"], [], 3),
        ([], ["consumer1", "consumer2"], 6),
    ):
        members = [m for m in members if m not in removed] + added
        s.assign(sizes, [s.v2(m, both, got.get(m, {}), int(m[-1]) - 1) for m in members])
        got = s.final
        assert all(len(parts.get(t, ())) == share for parts in got.values() for t in both), got
        assert is_fully_balanced(got)


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_add_and_remove_two_consumers_two_topics(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testAddRemoveTwoConsumersTwoTopics
    s = StickySetup(name, config)
    s.topic("topic1", 3)
    s.topic("topic2", 4)
    both = ("topic1", "topic2")
    sizes = {"topic1": 3, "topic2": 4}
    got = s.assign(sizes, [s.sub("consumer1", both, 0), s.sub("consumer2", both, 1)])
    assert got == {"consumer1": {"topic1": (0, 2), "topic2": (1, 3)},
                   "consumer2": {"topic1": (1,), "topic2": (0, 2)}}
    ms = [s.v2("consumer1", both, got["consumer1"], 0), s.v2("consumer2", both, got["consumer2"], 1),
          s.v2("consumer3", both, {}, 2), s.v2("consumer4", both, {}, 3)]
    raw = {"consumer1": {"topic1": (0,), "topic2": (1,)}, "consumer2": {"topic1": (1,), "topic2": (0,)},
           "consumer3": {"topic1": (2,), "topic2": (3,)}, "consumer4": {"topic2": (2,)}}
    got = s.assign(sizes, ms)
    assert got == s.expect(raw, [("topic1", 2), ("topic2", 3), ("topic2", 2)])
    assert s.final == raw
    ms = [s.v2("consumer3", both, raw["consumer3"], 2), s.v2("consumer4", both, raw["consumer4"], 3)]
    assert s.assign(sizes, ms) == {"consumer3": {"topic1": (0, 2), "topic2": (1, 3)},
                                   "consumer4": {"topic1": (1,), "topic2": (0, 2)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_poor_round_robin_scenario_is_valid_and_balanced(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testPoorRoundRobinAssignmentScenario
    s = StickySetup(name, config)
    sizes = {f"topic{i}": i % 2 + 1 for i in range(1, 6)}
    for t, n in sizes.items():
        s.topic(t, n)
    five = tuple(sizes)
    odd = ("topic1", "topic3", "topic5")
    s.assign(sizes, [s.sub("consumer1", five, 0), s.sub("consumer2", odd, 1),
                     s.sub("consumer3", odd, 2), s.sub("consumer4", five, 3)])


def padded(prefix: str, i: int, most: int) -> str:
    return f"{prefix}{i:0{len(str(most))}d}"


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_reassignment_after_one_consumer_leaves(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testReassignmentAfterOneConsumerLeaves: consumer i subscribes
    # to topics 1..i; the survivors keep what they had (isSticky).
    s = StickySetup(name, config)
    sizes = {padded("t", i, 20): i for i in range(1, 20)}
    for t, n in sizes.items():
        s.topic(t, n)
    names = list(sizes)
    ms = [s.sub(padded("c", i, 20), names[:i], i) for i in range(1, 20)]
    got = s.assign(sizes, ms)
    ms = [s.v2(m.member_id, m.subscription.topics, got[m.member_id], i + 1)
          for i, m in enumerate(ms) if m.member_id != "c10"]
    assert is_sticky(got, s.assign(sizes, ms))


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_reassignment_after_one_consumer_added(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testReassignmentAfterOneConsumerAdded (no owned partitions
    # reported: nothing changes owner)
    s = StickySetup(name, config)
    s.topic("topic", 20)
    ms = [s.sub(padded("consumer", i, 10), ("topic",), i) for i in range(1, 10)]
    s.assign({"topic": 20}, ms)
    s.assign({"topic": 20}, [*ms, s.sub(padded("consumer", 10, 10), ("topic",), 10)])


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_same_subscriptions_after_one_leaves(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testSameSubscriptions
    s = StickySetup(name, config)
    sizes = {padded("t", i, 15): i for i in range(1, 15)}
    for t, n in sizes.items():
        s.topic(t, n)
    ms = [s.sub(padded("c", i, 9), tuple(sizes), i) for i in range(1, 9)]
    got = s.assign(sizes, ms)
    ms = [s.v2(m.member_id, m.subscription.topics, got[m.member_id], i + 1)
          for i, m in enumerate(ms) if m.member_id != "c5"]
    again = s.assign(sizes, ms)
    # partitionsTransferringOwnership is empty: everyone keeps what it had.
    for m in ms:
        for t, ps in got[m.member_id].items():
            assert set(ps) <= set(again[m.member_id].get(t, ())), m.member_id


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_all_consumers_reach_quota(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testAllConsumersReachExpectedQuotaAndAreConsideredFilled
    s = StickySetup(name, config)
    s.topic("topic", 4)
    ms = [s.v2("consumer1", ("topic",), {"topic": (0, 1)}, 0),
          s.v2("consumer2", ("topic",), {"topic": (2,)}, 1), s.v2("consumer3", ("topic",), {}, 2)]
    assert s.assign({"topic": 4}, ms) == {
        "consumer1": {"topic": (0, 1)}, "consumer2": {"topic": (2,)}, "consumer3": {"topic": (3,)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_partition_claimed_twice_in_one_generation_is_transferred(
    name: str, config: RackConfig
) -> None:
    # AbstractStickyAssignorTest.testPartitionsTransferringOwnershipIncludeThePartitionClaimed
    # ByMultipleConsumersInSameGeneration: transferring = {topic-0: consumer3}
    s = StickySetup(name, config)
    s.topic("topic", 3)
    ms = [s.v2("consumer1", ("topic",), {"topic": (0, 1)}, 0),
          s.v2("consumer2", ("topic",), {"topic": (0, 2)}, 1), s.v2("consumer3", ("topic",), {}, 2)]
    raw: dict[str, Parts] = {"consumer1": {"topic": (1,)}, "consumer2": {"topic": (2,)},
                             "consumer3": {"topic": (0,)}}
    assert s.assign({"topic": 3}, ms) == s.expect(raw, [("topic", 0)])
    assert s.final == raw


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_no_reassignment_of_current_members(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testNoReassignmentOnCurrentMembers: consumer1 (no generation,
    # nothing owned) gets exactly the partitions nobody holds.
    s = StickySetup(name, config)
    four = ("topic", "topic2", "topic3", "topic1")
    sizes = {"topic": 3, "topic1": 3, "topic2": 3, "topic3": 3}
    for t in ("topic", "topic1", "topic2", "topic3"):
        s.topic(t, 3)
    ms = [s.v2("consumer1", four, {}, 0, DEFAULT_GENERATION),
          s.v2("consumer2", four, {"topic": (0,), "topic2": (0,), "topic1": (0,)}, 1, 9),
          s.v2("consumer3", four, {"topic3": (2,), "topic2": (2,), "topic1": (1,)}, 2, 8),
          s.v2("consumer4", four, {"topic3": (1,), "topic": (1, 2)}, 3, 7)]
    got = s.assign(sizes, ms)
    assert got["consumer1"] == {"topic1": (2,), "topic2": (1,), "topic3": (0,)}
    assert is_fully_balanced(got)
    assert s.final == got  # nothing changes owner


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_claims_of_an_older_generation_lose(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration
    s = StickySetup(name, config)
    s.topic("topic", 3)
    s.topic("topic2", 3)
    both = ("topic", "topic2")
    ms = [s.v2("consumer1", both, {"topic": (0, 1), "topic2": (1,)}, 0, 10),
          s.v2("consumer2", both, {"topic": (0,), "topic2": (1, 2)}, 1, 8)]
    assert s.assign({"topic": 3, "topic2": 3}, ms) == {
        "consumer1": {"topic": (0, 1), "topic2": (1,)},
        "consumer2": {"topic": (2,), "topic2": (0, 2)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_deleted_topics_are_dropped(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testAssignmentUpdatedForDeletedTopic and
    # testNoExceptionThrownWhenOnlySubscribedTopicDeleted
    s = StickySetup(name, config)
    s.topic("topic1", 1)
    s.topic("topic3", 100)
    got = s.assign({"topic1": 1, "topic3": 100}, [s.sub("consumer", ("topic1", "topic2", "topic3"), 0)])
    assert got == {"consumer": {"topic1": (0,), "topic3": tuple(range(100))}}
    s = StickySetup(name, config)
    s.topic("topic", 3)
    got = s.assign({"topic": 3}, [s.sub("consumer", ("topic",), 0)])
    ms = [s.v2("consumer", ("topic",), got["consumer"], 0)]
    assert plain(s.assignor.assign({}, ms)) == {"consumer": {}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_add_and_remove_topic_two_consumers(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testAddRemoveTopicTwoConsumers
    s = StickySetup(name, config)
    s.topic("topic", 3)
    one = s.assign({"topic": 3}, [s.sub("consumer1", ("topic",), 0), s.sub("consumer2", ("topic",), 1)])
    assert sorted(sum(map(len, a.values())) for a in one.values()) == [1, 2]
    s.topic("topic2", 3)
    both = ("topic", "topic2")
    sizes = {"topic": 3, "topic2": 3}
    two = s.assign(sizes, [s.v2("consumer1", both, one["consumer1"], 0),
                           s.v2("consumer2", both, one["consumer2"], 1)])
    assert s.final == two  # nothing changes owner
    for mid in two:
        assert sum(map(len, two[mid].values())) == 3
        assert set(one[mid]["topic"]) <= set(two[mid].get("topic", ()))
    three = s.assign({"topic2": 3}, [s.v2("consumer1", ("topic2",), two["consumer1"], 0),
                                     s.v2("consumer2", ("topic2",), two["consumer2"], 1)])
    assert sorted(sum(map(len, a.values())) for a in three.values()) == [1, 2]
    for mid in three:
        assert set(three[mid].get("topic2", ())) <= set(two[mid].get("topic2", ()))


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_new_subscription_stays_sticky(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testNewSubscription: c0 subscribes to nothing, then to t1.
    s = StickySetup(name, config)
    sizes = {f"t{i}": 1 for i in range(1, 5)}
    for t in sizes:
        s.topic(t, 1)
    subs = [[f"t{j}" for j in range(i, 3 * i - 1)] for i in range(3)]
    got = s.assign(sizes, [s.sub(f"c{i}", subs[i], i) for i in range(3)])
    subs[0].append("t1")
    assert is_sticky(got, s.assign(sizes, [s.sub(f"c{i}", subs[i], i) for i in range(3)]))


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_move_existing_assignments(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testMoveExistingAssignments (general path: valid and balanced)
    s = StickySetup(name, config)
    sizes = {f"topic{i}": 1 for i in range(1, 7)}
    for t in sizes:
        s.topic(t, 1)
    s.assign(sizes, [
        s.v2("consumer1", ("topic1", "topic2"), {"topic1": (0,)}, 0),
        s.v2("consumer2", ("topic1", "topic2", "topic3", "topic4"), {"topic2": (0,), "topic3": (0,)}, 1),
        s.v2("consumer3", ("topic2", "topic3", "topic4", "topic5", "topic6"),
             {"topic4": (0,), "topic5": (0,), "topic6": (0,)}, 2),
    ])


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_stickiness_when_the_leader_leaves(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testStickiness: 4 consumers on 3 partitions; consumer1 leaves
    # and everyone who had a partition keeps it.
    s = StickySetup(name, config)
    s.topic("topic1", 3)
    ms = [s.sub(f"consumer{i}", ("topic1",), i - 1) for i in range(1, 5)]
    first = s.assign({"topic1": 3}, ms)
    assert all(sum(map(len, a.values())) <= 1 for a in first.values())
    ms = [s.v2(f"consumer{i}", ("topic1",), first[f"consumer{i}"], i - 1) for i in (2, 3, 4)]
    again = s.assign({"topic1": 3}, ms)
    for mid, parts in again.items():
        assert sum(map(len, parts.values())) == 1
        assert set(first[mid].get("topic1", ())) <= set(parts["topic1"])


@pytest.mark.parametrize("name", STICKY)
def test_sticky_three_generations_claiming_one_partition(name: str) -> None:
    # AbstractStickyAssignorTest.testSubscriptionNotEqualAndAssignSamePartitionWith3Generation:
    # topic-2 is claimed in generations 1, 2 and 3 in every order; no partition is given
    # twice and every consumer gets one or two.
    s = StickySetup(name, RackConfig.NO_CONSUMER_RACK)
    s.assignor.prefer_rack_aware_logic = False
    s.num_broker_racks = 0
    s.topic("topic", 6)
    s.topic("topic1", 1)
    for g1, g2, g3 in ((1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)):
        ms = [s.v2("consumer1", ("topic",), {"topic": (0, 2)}, 0, g1),
              s.v2("consumer2", ("topic",), {"topic": (1, 2, 3)}, 1, g2),
              s.v2("consumer3", ("topic",), {"topic": (2, 4, 5)}, 2, g3),
              s.v2("consumer4", ("topic1",), {"topic1": (0,)}, 3, 2)]
        got = s._once({"topic": 6, "topic1": 1}, ms)
        tps = [(t, p) for a in got.values() for t, ps in a.items() for p in ps]
        assert len(tps) == len(set(tps))
        assert all(1 <= sum(map(len, a.values())) <= 2 for a in got.values())


def random_sublist(rng: random.Random, items: Sequence[str]) -> list[str]:
    """``getRandomSublist`` (then sorted, as the test does): drop a random number of items."""
    keep = list(items)
    for _ in range(rng.randrange(len(items))):
        keep.pop(rng.randrange(len(keep)))
    return sorted(keep)


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_random_subscriptions_and_changes(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testReassignmentWithRandomSubscriptionsAndChanges (seeded, 10
    # rounds instead of 100)
    rng = random.Random(f"{name}-{config.value}")
    for _ in range(10):
        s = StickySetup(name, config)
        topics = [padded("t", i, 20) for i in range(10 + rng.randrange(10))]
        sizes = {t: i + 1 for i, t in enumerate(topics)}
        for t, n in sizes.items():
            s.topic(t, n)
        consumers = [padded("c", i, 40) for i in range(20 + rng.randrange(20))]

        got = s.assign(sizes, [s.sub(c, random_sublist(rng, topics), i)
                               for i, c in enumerate(consumers)])
        again = s.assign(sizes, [s.v2(c, random_sublist(rng, topics), got[c], i)
                                 for i, c in enumerate(consumers)])
        assert is_sticky(got, again)


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("consumer_rack", [True, False])
def test_sticky_many_consumers_leaving_with_random_subscriptions(name: str, consumer_rack: bool) -> None:
    # AbstractStickyAssignorTest.testLargeAssignmentWithMultipleConsumersLeavingAndRandomSubscription
    # (seeded)
    rng = random.Random(f"{name}-{consumer_rack}")
    s = StickySetup(name, RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack
                    else RackConfig.NO_CONSUMER_RACK)
    sizes = {padded("t", i, 40): rng.randrange(10) + 1 for i in range(40)}
    for t, n in sizes.items():
        s.topic(t, n)
    subs = {padded("c", i, 200): [padded("t", rng.randrange(40), 40) for _ in range(rng.randrange(20))]
            for i in range(200)}
    got = s.assign(sizes, [s.sub(c, ts, i) for i, (c, ts) in enumerate(subs.items())])
    gone = {padded("c", rng.randrange(200), 200) for _ in range(50)}
    ms = [s.v2(c, ts, got[c], i) for i, (c, ts) in enumerate(subs.items()) if c not in gone]
    assert is_sticky(got, s.assign(sizes, ms))


@pytest.mark.slow
@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("consumer_rack", [True, False])
def test_sticky_non_equal_subscription_with_many_consumers(name: str, consumer_rack: bool) -> None:
    # AbstractStickyAssignorTest.testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout:
    # 500 consumers, a quarter on the first half of the topics, the rest on the second half.
    s = StickySetup(name, RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack
                    else RackConfig.NO_CONSUMER_RACK)
    n_topics = 50 if consumer_rack else 100
    topics = [padded("t", i, n_topics) for i in range(n_topics)]
    sizes = dict.fromkeys(topics, 200)
    for t in topics:
        s.topic(t, 200)
    half = n_topics // 2

    def subscribed(i: int) -> list[str]:
        return topics[:half] if i % 4 == 0 else topics[half:]

    consumers = [padded("c", i, 500) for i in range(500)]
    got = s._once(sizes, [s.sub(c, subscribed(i), i) for i, c in enumerate(consumers)])
    ms = [s.v2(c, subscribed(i), got[c], i) if i else s.sub(c, subscribed(i), i)
          for i, c in enumerate(consumers)]
    s._once(sizes, ms)


def sticky_rack_check(
    a: Assignor, topics: Mapping[str, int], rf: int, brokers: Sequence[str | None],
    consumer_racks: Sequence[str | None], ct: Sequence[Sequence[str]], expected: Sequence[str],
    mismatches: int,
) -> None:
    """``verifyUniformSubscription`` / ``verifyNonEqualSubscription``: from scratch, then
    again with the expected assignment owned (it must stay)."""
    verify_rack_assignment(a, topics, rf, brokers, consumer_racks, ct, expected, mismatches)
    verify_rack_assignment(a, topics, rf, brokers, consumer_racks, ct, expected, mismatches,
                           owned=expected)


@pytest.mark.parametrize("name", STICKY)
def test_sticky_rack_aware_uniform_subscription(name: str) -> None:
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithUniformSubscription
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [ALL3, ALL3, ALL3]
    base = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0",
            "t1-2, t1-5, t2-2, t2-5, t3-1"]
    a = get_assignor(name)
    sticky_rack_check(a, topics, 3, null_racks(3), racks(3), ct, base, -1)
    sticky_rack_check(a, topics, 3, racks(3), null_racks(3), ct, base, -1)
    a.prefer_rack_aware_logic = True
    sticky_rack_check(a, topics, 3, racks(3), racks(3), ct, base, 0)
    sticky_rack_check(a, topics, 4, racks(4), racks(3), ct, base, 0)
    a.prefer_rack_aware_logic = False
    sticky_rack_check(a, topics, 3, racks(3), racks(3), ct, base, 0)
    sticky_rack_check(a, topics, 3, racks(3), ["d", "e", "f"], ct, base, -1)
    sticky_rack_check(a, topics, 3, racks(3), [None, "e", "f"], ct, base, -1)
    # replicas on a subset of the racks: the assignment is rack-aligned
    sticky_rack_check(a, topics, 1, racks(3), racks(3), ct, base, 0)
    sticky_rack_check(a, topics, 2, racks(3), racks(3), ct, base, 0)
    # a consumer on a rack without replicas still gets its share
    sticky_rack_check(a, topics, 3, racks(2), racks(3), ct, base, 5)
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3",
             "t2-4, t2-5, t2-6, t3-0, t3-1"]
    if name == "cooperative-sticky":
        # misaligned owned partitions move towards their racks (the moving ones held back)
        verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct,
                               ["t1-0, t1-3", "t2-1", "t2-5, t3-1"], 0, owned=owned)
    else:
        verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, base, 0, owned=owned)
    a.prefer_rack_aware_logic = True
    verify_rack_assignment(a, topics, 3, racks(3), racks(3), ct, base, 0, owned=base)


@pytest.mark.parametrize("name", STICKY)
def test_sticky_rack_aware_non_equal_subscription(name: str) -> None:
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithNonEqualSubscription
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [ALL3, ALL3, ("t1", "t3")]
    base = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0",
            "t1-0, t1-1, t1-2, t1-4, t3-1"]
    a = get_assignor(name)
    sticky_rack_check(a, topics, 3, null_racks(3), racks(3), ct, base, -1)
    sticky_rack_check(a, topics, 3, racks(3), null_racks(3), ct, base, -1)
    a.prefer_rack_aware_logic = True
    sticky_rack_check(a, topics, 3, racks(3), racks(3), ct, base, 0)
    sticky_rack_check(a, topics, 4, racks(4), racks(3), ct, base, 0)
    a.prefer_rack_aware_logic = False
    sticky_rack_check(a, topics, 3, racks(3), racks(3), ct, base, 0)
    sticky_rack_check(a, topics, 3, racks(3), ["d", "e", "f"], ct, base, -1)
    sticky_rack_check(a, topics, 3, racks(3), [None, "e", "f"], ct, base, -1)
    aligned1 = ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0",
                "t1-0, t1-1, t1-2, t1-5, t3-1"]
    sticky_rack_check(a, topics, 1, racks(3), racks(3), ct, aligned1, 4)
    sticky_rack_check(a, topics, 2, racks(3), racks(3), ct, [
        "t1-3, t2-0, t2-2, t2-5, t2-6", "t1-0, t2-1, t2-3, t2-4, t3-0",
        "t1-1, t1-2, t1-4, t1-5, t3-1"], 0)
    sticky_rack_check(a, topics, 3, racks(2), racks(3), ct, base, 5)
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3",
             "t2-4, t2-5, t2-6, t3-0, t3-1"]
    if name == "sticky":
        verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, aligned1, 4, owned=owned)
        a.prefer_rack_aware_logic = False
        verify_rack_assignment(a, topics, 3, racks(3), racks(3), ct, base, 0, owned=owned)
        a.prefer_rack_aware_logic = True
        verify_rack_assignment(a, topics, 3, racks(3), racks(3), ct, base, 0, owned=owned)
    else:
        step = ["t1-3", "t2-1", "t3-1"]
        verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, step, 0, owned=owned)
        verify_rack_assignment(a, topics, 1, racks(3), racks(3), ct, aligned1, 4, owned=step)
        final = ["t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6",
                 "t1-0, t1-1, t1-5, t3-0, t3-1"]
        step = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
        for prefer in (False, True):
            a.prefer_rack_aware_logic = prefer
            verify_rack_assignment(a, topics, 3, racks(3), racks(3), ct, step, 0, owned=owned)
            verify_rack_assignment(a, topics, 3, racks(3), racks(3), ct, final, 0, owned=step)


# --------------------------------------------------------------------------- Sticky / CooperativeSticky


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
@pytest.mark.parametrize("n", [3, 4])
def test_double_claim_in_one_generation_with_racks(name: str, config: RackConfig, n: int) -> None:
    # StickyAssignorTest / CooperativeStickyAssignorTest.testAllConsumersHaveOwnedPartition
    # InvalidatedWhenClaimedByMultipleConsumersInSameGenerationWith{Equal,Unequal}Partitions
    # PerConsumer, every rack config: topic-0 goes to consumer3 (sticky) or is held back
    # until both claimers have revoked it (cooperative).
    s = StickySetup(name, config)
    s.topic("topic", n)
    ms = [s.v2("consumer1", ("topic",), {"topic": (0, 1)}, 0),
          s.v2("consumer2", ("topic",), {"topic": (0, 2)}, 1), s.v2("consumer3", ("topic",), {}, 2)]
    got = s.assign({"topic": n}, ms)
    assert got["consumer1"] == {"topic": (1, 3) if n == 4 else (1,)}
    assert got["consumer2"] == {"topic": (2,)}
    assert got["consumer3"] == ({"topic": (0,)} if name == "sticky" else {})
    assert is_fully_balanced(s.final)


def generation_combinations() -> list[tuple[RackConfig, bool]]:
    """``StickyAssignorTest.rackAndSubscriptionCombinations``."""
    return [(c, equal) for equal in (True, False) for c in RACK_CONFIGS]


def size(parts: Parts) -> int:
    return sum(map(len, parts.values()))


def tps(parts: Parts) -> set[tuple[str, int]]:
    return {(t, p) for t, ps in parts.items() for p in ps}


@pytest.mark.parametrize(("config", "equal"), generation_combinations())
def test_sticky_multiple_generations_1(config: RackConfig, equal: bool) -> None:
    # StickyAssignorTest.testAssignmentWithMultipleGenerations1
    s = StickySetup("sticky", config)
    s.topic("topic", 6)
    s.topic("topic2", 6)
    both = ("topic", "topic2")
    c2_topics = both if equal else ("topic",)
    sizes = {"topic": 6, "topic2": 6}
    r1 = s.assign(sizes, [s.sub("consumer1", both, 0), s.sub("consumer2", c2_topics, 1),
                          s.sub("consumer3", both, 2)])
    assert [size(r1[c]) for c in ("consumer1", "consumer2", "consumer3")] == [4, 4, 4]
    r2 = s.assign(sizes, [s.v2("consumer1", both, r1["consumer1"], 0),
                          s.v2("consumer2", c2_topics, r1["consumer2"], 1)])
    assert size(r2["consumer1"]) == size(r2["consumer2"]) == 6
    if equal:
        assert tps(r1["consumer1"]) <= tps(r2["consumer1"])
    assert tps(r1["consumer2"]) <= tps(r2["consumer2"])
    assert tps(r2["consumer2"]) & tps(r1["consumer3"])
    r3 = s.assign(sizes, [s.v2("consumer2", c2_topics, r2["consumer2"], 1, 2),
                          s.v2("consumer3", both, r1["consumer3"], 2, 1)])
    assert size(r3["consumer2"]) == size(r3["consumer3"]) == 6
    assert not tps(r3["consumer2"]) & tps(r3["consumer3"])


@pytest.mark.parametrize(("config", "equal"), generation_combinations())
def test_sticky_multiple_generations_2(config: RackConfig, equal: bool) -> None:
    # StickyAssignorTest.testAssignmentWithMultipleGenerations2
    s = StickySetup("sticky", config)
    three = ("topic", "topic2", "topic3")
    for t in three:
        s.topic(t, 4)
    sizes = dict.fromkeys(three, 4)
    c1_topics = three if equal else ("topic",)
    c3_topics = three if equal else ("topic", "topic2")
    r1 = s.assign(sizes, [s.sub("consumer1", c1_topics, 0), s.sub("consumer2", three, 1),
                          s.sub("consumer3", c3_topics, 2)])
    assert [size(r1[c]) for c in ("consumer1", "consumer2", "consumer3")] == [4, 4, 4]
    r2 = s.assign(sizes, [s.v2("consumer2", three, r1["consumer2"], 1, 1)])
    assert size(r2["consumer2"]) == 12
    assert tps(r1["consumer2"]) <= tps(r2["consumer2"])
    r3 = s.assign(sizes, [s.v2("consumer1", c1_topics, r1["consumer1"], 0, 1),
                          s.v2("consumer2", three, r2["consumer2"], 1, 2),
                          s.v2("consumer3", c3_topics, r1["consumer3"], 2, 1)])
    assert [size(r3[c]) for c in ("consumer1", "consumer2", "consumer3")] == [4, 4, 4]


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize(("config", "equal"), generation_combinations())
def test_conflicting_previous_generations_with_racks(
    name: str, config: RackConfig, equal: bool
) -> None:
    # StickyAssignorTest.testAssignmentWithConflictingPreviousGenerations, every rack and
    # subscription combination (the cooperative assignor settled as its test settles it)
    s = StickySetup(name, config)
    three = ("topic", "topic2", "topic3")
    for t in three:
        s.topic(t, 4)
    sizes = dict.fromkeys(three, 4)
    c1_topics = three if equal else ("topic",)
    c2_topics = three if equal else ("topic", "topic2")
    c1: Parts = ({"topic": (0, 1, 2), "topic2": (2, 3), "topic3": (0,)} if equal
                 else {"topic": (0, 1, 2, 3)})
    c2: Parts = {"topic": (0, 1), "topic2": (0, 1, 2, 3)}
    c3: Parts = {"topic": (2, 3), "topic3": (0, 1, 2, 3)}
    got = s.assign(sizes, [s.v2("consumer1", c1_topics, c1, 0, 1),
                           s.v2("consumer2", c2_topics, c2, 1, 2),
                           s.v2("consumer3", three, c3, 2, 2)])
    if name == "sticky":
        assert [size(got[c]) for c in ("consumer1", "consumer2", "consumer3")] == [4, 4, 4]
    assert tps(got["consumer2"]) <= tps(c2)
    assert tps(got["consumer3"]) <= tps(c3)
    assert is_fully_balanced(s.final)


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_sticky_reads_version_0_user_data(config: RackConfig) -> None:
    # StickyAssignorTest.testSchemaBackwardCompatibility: consumer2's user data is
    # STICKY_ASSIGNOR_USER_DATA_V0 (no generation).
    s = StickySetup("sticky", config)
    s.topic("topic", 3)
    old = MemberSubscription("consumer2", Subscription(
        ("topic",), sticky_user_data({"topic": (1,)}, None), {}, DEFAULT_GENERATION, s.rack(1)))
    got = s.assign({"topic": 3}, [s.v2("consumer1", ("topic",), {"topic": (0, 2)}, 0),
                                  old, s.sub("consumer3", ("topic",), 2)])
    assert [size(got[c]) for c in ("consumer1", "consumer2", "consumer3")] == [1, 1, 1]
    assert tps(got["consumer1"]) <= {("topic", 0), ("topic", 2)}
    assert tps(got["consumer2"]) <= {("topic", 1)}


def test_sticky_member_data_comes_from_user_data() -> None:
    # StickyAssignorTest.testMemberDataWithInconsistentData and testMemberDataWillHonorUserData:
    # the eager assignor reads owned partitions and generation from its user data only.
    user_data = StickyAssignor().subscription_user_data(("topic",), {"topic": (1,)}, 1)
    assert user_data is not None
    assert decode_user_data(Subscription(("topic",), user_data, {"topic": (0,)}).user_data) == (
        {"topic": (1,)}, 1)
    owned: Parts = {"topic1": (0,), "topic2": (1,)}
    sub = Subscription(("topic",), sticky_user_data(owned, 0), {}, 1)
    assert decode_user_data(sub.user_data) == (owned, 0)


def test_cooperative_member_data_owned_from_the_subscription() -> None:
    # CooperativeStickyAssignorTest.testMemberDataWithInconsistentData,
    # testMemberDataWithEmptyPartitionsAndEqualGeneration and ...AndHigherGeneration: owned
    # partitions come from the subscription; the generation from its field, else user data.
    user_data = CooperativeStickyAssignor().subscription_user_data(("topic",), {"topic": (1,)}, 1)
    assert kafka_member_data(Subscription(("topic",), user_data, {"topic": (0,)})) == (
        (("topic", 0),), 1)
    assert kafka_member_data(Subscription(("topic",), coop_user_data(1), {}, 1)) == ((), 1)
    assert kafka_member_data(Subscription(("topic",), coop_user_data(0), {}, 1)) == ((), 1)


@pytest.mark.parametrize("name", STICKY)
def test_old_subscription_versions_keep_their_partitions(name: str) -> None:
    # StickyAssignorTest / CooperativeStickyAssignorTest.testAssignorWithOldVersionSubscriptions:
    # V0 (sticky only; user data), V1 (owned partitions, no generation field) and V2.
    s = StickySetup(name, RackConfig.NO_CONSUMER_RACK)
    s.assignor.prefer_rack_aware_logic = False
    s.num_broker_racks = 0
    s.topic("topic1", 3)
    if name == "sticky":
        first = MemberSubscription("consumer1", Subscription(
            ("topic1",), sticky_user_data({"topic1": (0,)}, 1), {}, DEFAULT_GENERATION))
        second = MemberSubscription("consumer2", Subscription(
            ("topic1",), sticky_user_data({"topic1": (1,)}, 1), {"topic1": (1,)}, DEFAULT_GENERATION))
    else:
        first, second = (
            MemberSubscription(mid, Subscription(
                ("topic1",), coop_user_data(1), {"topic1": (p,)}, DEFAULT_GENERATION))
            for mid, p in (("consumer1", 0), ("consumer2", 1))
        )
    got = s.assign({"topic1": 3}, [first, second, s.v2("consumer3", ("topic1",), {}, 2)])
    assert got == {"consumer1": {"topic1": (0,)}, "consumer2": {"topic1": (1,)},
                   "consumer3": {"topic1": (2,)}}


def test_cooperative_rack_swap_transfers_two_partitions() -> None:
    # CooperativeStickyAssignorTest.testUniformSubscriptionTransferOwnershipListIsRight: one
    # replica per partition on racks a, b, a, b; c0 (rack a) owns 0, 1 and c1 (rack b) owns
    # 2, 3: partitions 1 and 2 change owner (held back this round), 0 and 3 stay.
    s = StickySetup("cooperative-sticky", RackConfig.BROKER_AND_CONSUMER_RACK)
    s.assignor.prefer_rack_aware_logic = False
    s.num_broker_racks = 2
    s.racks["topic1"] = replica_racks(4, 1, ["a", "b"])
    ms = [s.v2("c0", ("topic1",), {"topic1": (0, 1)}, 0), s.v2("c1", ("topic1",), {"topic1": (2, 3)}, 1)]
    assert s.assign({"topic1": 4}, ms) == {"c0": {"topic1": (0,)}, "c1": {"topic1": (3,)}}
    assert s.final == {"c0": {"topic1": (0, 2)}, "c1": {"topic1": (1, 3)}}


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
@pytest.mark.parametrize("stale", [9, DEFAULT_GENERATION])
def test_stale_or_missing_generation_claims_lose_with_racks(
    name: str, config: RackConfig, stale: int
) -> None:
    # AbstractStickyAssignorTest.testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration
    # and ...WithNoGeneration, every rack config (tests/test_assignors_examples.py has them
    # without racks)
    s = StickySetup(name, config)
    s.topic("topic", 3)
    s.topic("topic2", 3)
    both = ("topic", "topic2")
    claim: Parts = {"topic": (0, 2), "topic2": (1,)}
    ms = [s.v2("consumer1", both, claim, 0, 10), s.v2("consumer2", both, claim, 1, stale)]
    got = s.assign({"topic": 3, "topic2": 3}, ms)
    assert got == {"consumer1": claim, "consumer2": {"topic": (1,), "topic2": (0, 2)}}
    assert s.final == got


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_partitions_go_to_the_highest_generation_with_racks(name: str, config: RackConfig) -> None:
    # AbstractStickyAssignorTest.testEnsurePartitionsAssignedToHighestGeneration, every rack
    # config (consumer3 reuses consumer2's rack index, as in Kafka's test)
    s = StickySetup(name, config)
    three = ("topic", "topic2", "topic3")
    for t in three:
        s.topic(t, 3)
    ms = [s.v2("consumer1", three, {"topic": (0,), "topic2": (0,), "topic3": (0,)}, 0, 10),
          s.v2("consumer2", three, {"topic": (1,), "topic2": (1,), "topic3": (1,)}, 1, 9),
          s.v2("consumer3", three, {"topic2": (1,), "topic3": (0, 2)}, 1, 8)]
    got = s.assign(dict.fromkeys(three, 3), ms)
    assert got == {"consumer1": dict.fromkeys(three, (0,)), "consumer2": dict.fromkeys(three, (1,)),
                   "consumer3": dict.fromkeys(three, (2,))}
    assert s.final == got

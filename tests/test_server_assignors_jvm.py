"""Differential test of the server-side assignors against Kafka 4.1.2's own UniformAssignor
and RangeAssignor (kafka-group-coordinator jar, run by the JVM oracle): random groups with
the same and different subscriptions, static members, racks, current assignments in
arbitrary orders, missing topics, and chains of rebalances fed their own targets. Java is
required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.assignors.registry import SERVER_ASSIGNOR_NAMES, get_server_assignor
from groupspec.assignors.server_range import ServerRangeAssignor
from groupspec.assignors.server_spec import (
    GroupSpec,
    MemberSpec,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicId,
    TopicMetadata,
    java_hash_set_order,
    replayed_assignment_order,
    topic_id_str,
)
from groupspec.jvm import JvmOracle
from properties import server_assignors as props
from tests import test_assignors_kafka_unit_server as unit_server
from tests.test_assignors_kafka_unit_server import UNIFORM_CASES, non_empty, uniform_input

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


@pytest.mark.parametrize("name", SERVER_ASSIGNOR_NAMES)
def test_one_rebalance_matches_kafka(jvm: JvmOracle, name: str) -> None:
    props.same_as_kafka_property(jvm.call, name)()


@pytest.mark.parametrize("name", SERVER_ASSIGNOR_NAMES)
def test_larger_groups_match_kafka(jvm: JvmOracle, name: str) -> None:
    props.same_as_kafka_property(jvm.call, name, large=True)()


@pytest.mark.parametrize("name", SERVER_ASSIGNOR_NAMES)
def test_chained_rebalances_match_kafka(jvm: JvmOracle, name: str) -> None:
    props.rounds_same_as_kafka_property(jvm.call, name)()


def test_topic_order_follows_javas_hash_set(jvm: JvmOracle) -> None:
    # 40 topics with colliding buckets: the queue of unassigned partitions follows the
    # HashSet's order, so with one partition per topic and members wanting one each, who
    # gets which topic shows the order Kafka iterated.
    ids = [TopicId((k % 5) << 64 | k * 64) for k in range(40)]
    topics = SubscribedTopicMetadata.of(TopicMetadata(t, f"t{k}", 1) for k, t in enumerate(ids))
    members = tuple(MemberSpec(f"m{k:02d}", tuple(ids)) for k in range(40))
    spec = GroupSpec(members, SubscriptionType.HOMOGENEOUS)
    ours = props.ours_or_error(get_server_assignor("uniform"), spec, topics)
    assert ours == props.kafkas_or_error(jvm.call, "uniform", spec, topics)
    assert isinstance(ours, dict)
    got = [next(iter(ours[m.member_id])) for m in members]
    assert got == java_hash_set_order(ids) != ids


def test_a_missing_topic_fails_on_both_sides(jvm: JvmOracle) -> None:
    t = TopicId(5)
    spec = GroupSpec((MemberSpec("a", (t,)), MemberSpec("b", ())))
    topics = SubscribedTopicMetadata.of([])
    for name in SERVER_ASSIGNOR_NAMES:
        assert props.kafkas_or_error(jvm.call, name, spec, topics) == "PartitionAssignorException"
        assert props.ours_or_error(get_server_assignor(name), spec, topics) == (
            "PartitionAssignorException"
        )


_records = st.lists(
    st.tuples(
        st.integers(0, 300).map(lambda n: TopicId((n % 7) << 64 | n << 3))
        | st.integers(0, (1 << 128) - 1).map(TopicId),
        st.lists(st.integers(0, 70_000), unique=True, max_size=40),
    ),
    max_size=30,
    unique_by=lambda pair: int(pair[0]),
)


@settings(deadline=None)
@given(record=_records)
def test_replayed_assignment_order_is_kafkas(
    jvm: JvmOracle, record: list[tuple[TopicId, list[int]]]
) -> None:
    # The order the coordinator hands the assignor after replaying a target-assignment
    # record: partitions above the table size and colliding topic buckets included.
    java = jvm.call("ReplayedAssignmentOrder", [[topic_id_str(t), ps] for t, ps in record])
    ours = replayed_assignment_order(record)
    assert [[topic_id_str(t), list(ps)] for t, ps in ours.items()] == java


# The consumer differential's case (topic ids are TopicId.for_name of "t", "u", "v", as
# properties/consumer_kafka_diff.py names its topics): c0 on t holds t-0..2 and c1 joins
# on t, u, v; the heterogeneous builder gives c1 u and v on a fresh HashMap where the two
# ids share bucket 0 (computeIfAbsent links the later one, v, in front). Replayed, c1's
# target lists v first, so when c2 joins and every member subscribes to t, u, v, c1 keeps
# v-0 and u-0 and gives up u-1 (Kafka 4.1.2); listing u first, it gave up v-0.
ORDER_T, ORDER_U, ORDER_V = (
    TopicId.parse(s)
    for s in ("iD5gmgXYXBh6AZytk8EiNw", "E9ZQaTsZSCrXBh2jC0W_vA", "Uy9L0gmXnYFtUuz7Oy0m3w")
)
ORDER_TOPICS = SubscribedTopicMetadata.of(
    [TopicMetadata(ORDER_T, "t", 3), TopicMetadata(ORDER_U, "u", 2), TopicMetadata(ORDER_V, "v", 1)]
)


def _listed(call_output: Any, member: str) -> list[str]:
    """A member's topics in the order the ServerAssignor tool listed them."""
    return [str(t) for t, _ in call_output["members"][member]]


def test_a_heterogeneous_target_lists_its_topics_in_kafkas_order(jvm: JvmOracle) -> None:
    tuv = tuple(java_hash_set_order([ORDER_T, ORDER_U, ORDER_V]))
    spec = GroupSpec(
        (MemberSpec("c0", (ORDER_T,), {ORDER_T: (0, 1, 2)}), MemberSpec("c1", tuv)),
        SubscriptionType.HETEROGENEOUS,
    )
    kafka = jvm.call("ServerAssignor", props.oracle_input("uniform", spec, ORDER_TOPICS))
    ours = get_server_assignor("uniform").assign(spec, ORDER_TOPICS)
    assert _listed(kafka, "c1") == [topic_id_str(ORDER_V), topic_id_str(ORDER_U)]
    assert [topic_id_str(t) for t in ours["c1"]] == _listed(kafka, "c1")


@pytest.mark.parametrize(
    ("c1_record", "c1_keeps", "c2_gets"),
    [
        ((ORDER_V, ORDER_U), {ORDER_V: (0,), ORDER_U: (0,)}, {ORDER_U: (1,), ORDER_T: (2,)}),
        ((ORDER_U, ORDER_V), {ORDER_U: (0, 1)}, {ORDER_V: (0,), ORDER_T: (2,)}),
    ],
)
def test_an_over_quota_member_gives_up_what_kafka_does(
    jvm: JvmOracle,
    c1_record: tuple[TopicId, TopicId],
    c1_keeps: dict[TopicId, tuple[int, ...]],
    c2_gets: dict[TopicId, tuple[int, ...]],
) -> None:
    # c1's target as replayed from a record listing its topics in the given order (the
    # first is Kafka's, see above; both ids fall in bucket 0 of the replayed 16-slot
    # HashMap, so the record's order stands); three members on t, u, v: a quota of two
    # each, and c1 keeps its topics in that order.
    tuv = tuple(java_hash_set_order([ORDER_T, ORDER_U, ORDER_V]))
    held = {ORDER_U: (0, 1), ORDER_V: (0,)}
    spec = GroupSpec(
        (
            MemberSpec("c1", tuv, {t: held[t] for t in c1_record}),
            MemberSpec("c0", tuv, {ORDER_T: (0, 1, 2)}),
            MemberSpec("c2", tuv),
        ),
        SubscriptionType.HOMOGENEOUS,
    )
    assert list(replayed_assignment_order(list(spec.members[0].assignment.items()))) == list(c1_record)
    out = jvm.call("ServerAssignor", {**props.oracle_input("uniform", spec, ORDER_TOPICS), "replayed": True})
    kafka = props.from_oracle(out)
    ours = props.canonical(
        get_server_assignor("uniform").assign(props.replayed(spec), ORDER_TOPICS)
    )
    assert ours == kafka
    assert props.topic_orders(ours) == props.topic_orders(kafka)
    assert ours["c1"] == c1_keeps
    assert ours["c2"] == c2_gets


def test_a_second_partition_of_a_new_topic_can_grow_the_map(jvm: JvmOracle) -> None:
    # One member, nothing held: a gets a's partition on a fresh map (one slot), b's first
    # partition grows it to two (b links in front of a) and b's second, a lookup of a key
    # already there, grows it to four, where a and b part: Kafka lists a, then b.
    a, b = TopicId(1 << 127), TopicId(2)
    topics = SubscribedTopicMetadata.of([TopicMetadata(a, "a", 1), TopicMetadata(b, "b", 2)])
    spec = GroupSpec((MemberSpec("m", (a, b)),))
    kafka = jvm.call("ServerAssignor", props.oracle_input("uniform", spec, topics))
    ours = get_server_assignor("uniform").assign(spec, topics)
    assert _listed(kafka, "m") == [topic_id_str(a), topic_id_str(b)]
    assert [topic_id_str(t) for t in ours["m"]] == _listed(kafka, "m")


@pytest.mark.parametrize("case", UNIFORM_CASES, ids=[c[0].split(".")[1] for c in UNIFORM_CASES])
def test_ported_uniform_unit_tests_hold_for_the_jar(jvm: JvmOracle, case: Any) -> None:
    # The uniform cases of tests/test_assignors_kafka_unit_server.py (taken from Kafka's test
    # sources) give the same target when 4.1.2's own UniformAssignor computes them, so the
    # ported expectations are 4.1.2's.
    _, sizes, members, kind, expected = case
    spec, topics = uniform_input(sizes, members, kind)
    kafka = props.kafkas_or_error(jvm.call, "uniform", spec, topics)
    if expected is None:
        assert kafka == "PartitionAssignorException"
    else:
        assert isinstance(kafka, dict)
        assert non_empty(kafka) == expected


def test_ported_range_unit_tests_hold_for_the_jar(jvm: JvmOracle, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every group the ported server-side RangeAssignorTest cases assign (recorded while they
    # run) gets the same target, or the same PartitionAssignorException, from 4.1.2's own
    # RangeAssignor.
    seen: list[tuple[GroupSpec, SubscribedTopicMetadata]] = []
    assign = ServerRangeAssignor.assign

    def recording(self: ServerRangeAssignor, spec: GroupSpec, topics: SubscribedTopicMetadata) -> Any:
        seen.append((spec, topics))
        return assign(self, spec, topics)

    monkeypatch.setattr(ServerRangeAssignor, "assign", recording)
    for name, test in vars(unit_server).items():
        if name.startswith("test_") and "uniform" not in name and callable(test):
            test()
    monkeypatch.undo()
    assert len(seen) >= 15
    for spec, topics in seen:
        ours = props.ours_or_error(ServerRangeAssignor(), spec, topics)
        assert ours == props.kafkas_or_error(jvm.call, "range", spec, topics)

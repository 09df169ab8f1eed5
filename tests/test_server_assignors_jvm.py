"""Differential test of the server-side assignors against Kafka 4.1.2's own UniformAssignor
and RangeAssignor (kafka-group-coordinator jar, run by the JVM oracle): random groups with
the same and different subscriptions, static members, racks, current assignments in
arbitrary orders, missing topics, and chains of rebalances fed their own targets. Java is
required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.assignors.registry import SERVER_ASSIGNOR_NAMES, get_server_assignor
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

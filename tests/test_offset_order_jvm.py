"""The order OffsetFetch of all offsets lists a group's offsets in
(coordinator/offset_order.py) against Kafka 4.1.2's own TimelineHashMap
(kafka-server-common, run by the JVM oracle) nested as OffsetMetadataManager nests it (topic
-> partition): random commits and tombstones of a few topics and partitions, as a model and
through the reference coordinator (commits, OffsetDelete, then OffsetFetch of all offsets).
Java is required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.offset_order import OffsetOrder
from groupspec.jvm import JvmOracle
from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error

pytestmark = pytest.mark.java

TOPICS = st.sampled_from(["t", "u", "orders", "payments", "a-b", "topic-7", "x"])
OPS = st.lists(st.tuples(st.sampled_from(["put", "put", "remove"]), TOPICS,
                         st.integers(min_value=0, max_value=24)), max_size=60)


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _kafka(jvm: JvmOracle, ops: list[tuple[str, str, int]]) -> list[tuple[str, int]]:
    return [(t, p) for t, p in jvm.call("OffsetOrder", {"ops": [list(o) for o in ops]})]


def test_the_offset_order_is_kafkas_nested_timeline_hash_maps(jvm: JvmOracle) -> None:
    @settings(deadline=None)
    # negative partitions too: Integer.hashCode is sign-extended into findSlot's product
    @given(ops=st.lists(st.tuples(st.sampled_from(["put", "put", "remove"]), TOPICS,
                                  st.integers(min_value=-8, max_value=24)), max_size=60))
    def run(ops: list[tuple[str, str, int]]) -> None:
        ours = OffsetOrder()
        for op, topic, partition in ops:
            if op == "put":
                ours.put(topic, partition)
            else:
                ours.remove(topic, partition)
        assert ours.order() == _kafka(jvm, ops)

    run()


def test_offset_fetch_of_all_offsets_answers_in_kafkas_order(jvm: JvmOracle) -> None:
    @settings(deadline=None)
    @given(ops=OPS)
    def run(ops: list[tuple[str, str, int]]) -> None:
        c = Coordinator()
        kafka_ops: list[tuple[str, str, int]] = []
        rid = 0
        for op, topic, partition in ops:
            rid += 1
            if op == "put":
                # every commit puts its partition, present or not (Offsets.put)
                kafka_ops.append((op, topic, partition))
                out = c.handle(rid, m.OffsetCommitRequest(
                    group_id="g", generation_id=-1, member_id="", version=8,
                    partitions=(m.OffsetCommitPartition(topic, partition, rid),)), 0)
            else:
                # a simple group subscribes to nothing: OffsetDelete tombstones what is there
                if ("g" in c.state.groups and (topic, partition) in c.state.groups["g"].offsets):
                    kafka_ops.append((op, topic, partition))
                out = c.handle(rid, m.OffsetDeleteRequest(group_id="g", partitions=((topic, partition),)), 0)
            assert out.response_to(rid) is not None
        resp = c.handle(rid + 1, m.OffsetFetchRequest(group_id="g", partitions=None), 0).response_to(rid + 1)
        assert isinstance(resp, m.OffsetFetchResponse) and resp.error is Error.NONE
        assert [(p.topic, p.partition) for p in resp.partitions] == _kafka(jvm, kafka_ops)

    run()


def test_kafkas_own_example(jvm: JvmOracle) -> None:
    # OffsetMetadataManagerTest testFetchAllOffsetsAtDifferentCommittedOffset: foo-0, foo-1,
    # bar-0, foo-1 again and bar-1 committed; all offsets are answered bar (0, 1), foo (0, 1)
    ops = [("put", "foo", 0), ("put", "foo", 1), ("put", "bar", 0), ("put", "foo", 1), ("put", "bar", 1)]
    ours = OffsetOrder()
    for _, topic, partition in ops:
        ours.put(topic, partition)
    assert ours.order() == _kafka(jvm, ops) == [("bar", 0), ("bar", 1), ("foo", 0), ("foo", 1)]

"""The order ListGroups lists groups in (coordinator/group_order.py) against the
collections Kafka 4.1.2 keeps them in, run by the JVM oracle: one TimelineHashMap of group
ids per __consumer_offsets partition (kafka-server-common) and the runtime's
ConcurrentHashMap of those partitions. Random group ids, created and deleted in random
orders, over a few partition counts and partition load orders; and the reference
coordinator's own ListGroups answers after commits (simple groups) and DeleteGroups.
Java is required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.group_order import GroupOrder
from groupspec.coordinator.service_order import runtime_partition_order
from groupspec.jvm import JvmOracle
from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error

pytestmark = pytest.mark.java

# a small pool, so that ids share shards and slots and come back after deletion
IDS = st.sampled_from([f"g{k}" for k in range(16)] + ["group-id-1", "group-id-2", "", "x"])
OPS = st.lists(st.tuples(st.sampled_from(["put", "put", "remove"]), IDS), max_size=60)


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def test_the_group_order_is_kafkas_collections_order(jvm: JvmOracle) -> None:
    @settings(deadline=None)
    @given(ops=OPS, partitions=st.sampled_from([1, 3, 50]), data=st.data())
    def run(ops: list[tuple[str, str]], partitions: int, data: st.DataObject) -> None:
        load = data.draw(st.permutations(range(partitions)))
        ours = GroupOrder(partitions)
        for op, gid in ops:
            # Kafka puts a group that is already there only on load; the reference's
            # GroupOrder is told of a group's creation and removal, once each
            if op == "put":
                ours.put(gid)
            else:
                ours.remove(gid)
        kafka = jvm.call("ListGroupsOrder", {"partitions": partitions, "load": list(load),
                                             "ops": [list(o) for o in ops]})
        assert ours.order() == kafka

    run()


def test_the_shard_order_does_not_depend_on_the_load_order(jvm: JvmOracle) -> None:
    # one group per shard: the concatenation shows the runtime map's order alone
    for partitions in (1, 5, 11, 12, 13, 24, 48, 50, 97, 200):
        ids: dict[int, str] = {}
        k = 0
        while len(ids) < partitions:
            gid = f"p{k}"
            k += 1
            ids.setdefault(GroupOrder(partitions).shard_of(gid), gid)
        ops = [["put", gid] for gid in ids.values()]
        expected = [ids[p] for p in runtime_partition_order(partitions)]
        for load in (list(range(partitions)), list(reversed(range(partitions)))):
            assert jvm.call("ListGroupsOrder",
                            {"partitions": partitions, "load": load, "ops": ops}) == expected


def _list(c: Coordinator, rid: int) -> list[str]:
    resp = c.handle(rid, m.ListGroupsRequest(), 0).response_to(rid)
    assert isinstance(resp, m.ListGroupsResponse) and resp.error is Error.NONE
    return [g.group_id for g in resp.groups]


def test_list_groups_answers_in_kafkas_order(jvm: JvmOracle) -> None:
    @settings(deadline=None)
    @given(ops=OPS, partitions=st.sampled_from([1, 3, 50]))
    def run(ops: list[tuple[str, str]], partitions: int) -> None:
        c = Coordinator(CoordinatorConfig(offsets_topic_num_partitions=partitions))
        kafka_ops: list[list[str]] = []
        rid = 0
        for op, gid in ops:
            rid += 1
            if op == "put":
                # a commit outside any generation creates a simple classic group
                # (getOrMaybeCreateClassicGroup puts it only when absent)
                if gid not in c.state.groups:
                    kafka_ops.append(["put", gid])
                c.handle(rid, m.OffsetCommitRequest(
                    group_id=gid, generation_id=-1, member_id="", version=8,
                    partitions=(m.OffsetCommitPartition("t", 0, 1),)), 0)
            else:
                # DeleteGroups: the group's tombstone removes it (removeGroup)
                if gid in c.state.groups:
                    kafka_ops.append(["remove", gid])
                c.handle(rid, m.DeleteGroupsRequest(groups_names=(gid,)), 0)
        kafka = jvm.call("ListGroupsOrder", {"partitions": partitions, "ops": kafka_ops})
        assert _list(c, rid + 1) == kafka

    run()

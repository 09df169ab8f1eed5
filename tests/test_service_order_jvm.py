"""The order GroupCoordinatorService answers a DescribeGroups, DeleteGroups or
ConsumerGroupDescribe naming several groups (coordinator/service_order.py) against Java's
own HashMap keyed by Kafka's TopicPartition (kafka-clients 4.1.2, run by the JVM oracle):
random lists of group ids, with repeats, over a few partition counts. ConsumerGroupDescribe
used its own approximation of this order until it was found to disagree with Java in most
lists of more than a few groups. Java is required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.service_order import service_order
from groupspec.jvm import JvmOracle

pytestmark = pytest.mark.java

GROUPS = st.lists(st.text(alphabet="abcdefgh0123456789-", min_size=1, max_size=8), max_size=60)


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def test_the_service_order_is_javas_hash_map_order(jvm: JvmOracle) -> None:
    @settings(deadline=None)
    @given(groups=GROUPS, partitions=st.sampled_from([1, 3, 50, 200]), hash_set=st.booleans())
    def run(groups: list[str], partitions: int, hash_set: bool) -> None:
        # (hash_set: each partition's ids through a new HashSet, as deleteGroups hands them
        # to the shard; the ids distinct, as KafkaApis hands them to the service)
        ids = list(dict.fromkeys(groups)) if hash_set else groups
        ours = service_order(tuple(ids), partitions, hash_set=hash_set)
        assert ours == jvm.call("ServiceOrder", {"groups": ids, "partitions": partitions, "hash_set": hash_set})

    run()


def test_a_hash_set_of_many_colliding_ids_is_javas(jvm: JvmOracle) -> None:
    """new_hash_set_order's table sizes: exactly 12, 13, 24 and 25 ids (where
    ``(int) (n / .75f) + 1`` crosses a power of two), and ids that collide in one bucket
    of 16 nine times and more (the ninth doubles the table to 32, the tenth again to 64:
    treeifyBin below 64), short of a tree bin (not modelled)."""
    from groupspec.coordinator.find_coordinator import java_string_hash

    def spread(k: str) -> int:
        h = java_string_hash(k) & 0xFFFFFFFF
        return h ^ (h >> 16)

    colliding = [f"g{i}" for i in range(4000) if spread(f"g{i}") & 15 == 5][:20]
    assert len(colliding) == 20
    cases = [[f"group-{i}" for i in range(n)] for n in (12, 13, 24, 25)] + [
        colliding[:9], colliding[:10], colliding[:12], colliding[11::-1]]
    for ids in cases:
        assert service_order(tuple(ids), 1, hash_set=True) == jvm.call(
            "ServiceOrder", {"groups": ids, "partitions": 1, "hash_set": True}), ids


def test_kafkas_own_example(jvm: JvmOracle) -> None:
    # GroupCoordinatorServiceTest testDeleteGroups: groups on partitions 2, 0, 1 (of 3)
    # are answered partition 0, 1, 2
    groups = ["group-id-1", "group-id-2", "group-id-3"]
    assert service_order(tuple(groups), 3) == jvm.call("ServiceOrder", {"groups": groups, "partitions": 3})

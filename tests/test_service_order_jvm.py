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
    @given(groups=GROUPS, partitions=st.sampled_from([1, 3, 50, 200]))
    def run(groups: list[str], partitions: int) -> None:
        ours = service_order(tuple(groups), partitions)
        assert ours == jvm.call("ServiceOrder", {"groups": groups, "partitions": partitions})

    run()


def test_kafkas_own_example(jvm: JvmOracle) -> None:
    # GroupCoordinatorServiceTest testDeleteGroups: groups on partitions 2, 0, 1 (of 3)
    # are answered partition 0, 1, 2
    groups = ["group-id-1", "group-id-2", "group-id-3"]
    assert service_order(tuple(groups), 3) == jvm.call("ServiceOrder", {"groups": groups, "partitions": 3})

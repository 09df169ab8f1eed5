"""The order in which GroupCoordinatorService lists the answers of a request naming several
groups (DescribeGroups, DeleteGroups, ConsumerGroupDescribe).

Each of those service methods puts every group id (``computeIfAbsent``) in a ``new
HashMap<TopicPartition, List<String>>`` under its ``__consumer_offsets`` partition,
schedules one read or write operation per partition in that map's iteration order, and
concatenates the per-partition answers in that order (FutureUtils.combineFutures); within a
partition the request's order is kept. So the answer lists the groups partition by
partition, in Java ``HashMap`` order, not in the request's order (GroupCoordinatorServiceTest
testDeleteGroups: partitions 2, 0, 1 asked, answered 0, 1, 2).
"""

from __future__ import annotations

from groupspec.assignors.java_collections import bucket, topic_partition_hash
from groupspec.coordinator.find_coordinator import coordinator_partition

#: ``Topic.GROUP_METADATA_TOPIC_NAME``, whose ``TopicPartition`` keys the service's maps
OFFSETS_TOPIC = "__consumer_offsets"


def service_order(group_ids: tuple[str, ...], num_partitions: int) -> list[str]:
    """``group_ids`` in the order the service answers them. The map is simulated as Java
    17's HashMap runs ``computeIfAbsent``: a table of 16 buckets made at the first call and
    doubled at the start of a call once the size exceeds three quarters of it (a resize
    splits each bucket keeping its order), a new key put at the head of its bucket, a bucket
    reaching eight keys doubling a table smaller than 64 (``treeifyBin``; a tree bin,
    possible only above 48 partitions, is not modelled)."""
    by_partition: dict[int, list[str]] = {}
    table: list[list[int]] = []

    def slot(partition: int, size: int) -> int:
        return bucket(topic_partition_hash((OFFSETS_TOPIC, partition)), size)

    def resize() -> list[list[int]]:
        bigger: list[list[int]] = [[] for _ in range(2 * len(table) if table else 16)]
        for chain in table:
            for partition in chain:
                bigger[slot(partition, len(bigger))].append(partition)
        return bigger

    for gid in group_ids:
        if not table or len(by_partition) > len(table) * 3 // 4:
            table = resize()
        partition = coordinator_partition(gid, num_partitions)
        if partition in by_partition:
            by_partition[partition].append(gid)
            continue
        chain = table[slot(partition, len(table))]
        chain.insert(0, partition)
        by_partition[partition] = [gid]
        if len(chain) >= 8 and len(table) < 64:
            table = resize()
    return [gid for chain in table for partition in chain for gid in by_partition[partition]]

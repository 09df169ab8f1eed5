"""The order in which GroupCoordinatorService lists the answers of a request naming several
groups (DescribeGroups, DeleteGroups, ConsumerGroupDescribe).

Each of those service methods puts every group id (``computeIfAbsent``) in a ``new
HashMap<TopicPartition, List<String>>`` under its ``__consumer_offsets`` partition,
schedules one read or write operation per partition in that map's iteration order, and
concatenates the per-partition answers in that order (FutureUtils.combineFutures). So the
answer lists the groups partition by partition, in Java ``HashMap`` order, not in the
request's order (GroupCoordinatorServiceTest testDeleteGroups: partitions 2, 0, 1 asked,
answered 0, 1, 2). Within a partition DescribeGroups and ConsumerGroupDescribe keep the
request's order; DeleteGroups hands the shard each partition's ids through a ``new
HashSet<>(groupList)`` (updateResponseAndGetNonErrorGroupList, after the share-group step),
so they are deleted and answered in that set's order (:func:`new_hash_set_order`).
"""

from __future__ import annotations

from functools import lru_cache

from groupspec.assignors.java_collections import (
    JavaHashSet,
    bucket,
    collection_capacity,
    topic_partition_hash,
)
from groupspec.coordinator.find_coordinator import coordinator_partition, java_string_hash

#: ``Topic.GROUP_METADATA_TOPIC_NAME``, whose ``TopicPartition`` keys the service's maps
OFFSETS_TOPIC = "__consumer_offsets"


def service_order(group_ids: tuple[str, ...], num_partitions: int, hash_set: bool = False) -> list[str]:
    """``group_ids`` in the order the service answers them (each partition's ids in
    :func:`new_hash_set_order` with ``hash_set``, as DeleteGroups). The map is simulated as Java
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
    if hash_set:
        return [gid for chain in table for partition in chain for gid in new_hash_set_order(by_partition[partition])]
    return [gid for chain in table for partition in chain for gid in by_partition[partition]]


def new_hash_set_order(keys: list[str]) -> list[str]:
    """The iteration order of Java 17's ``new HashSet<>(keys)`` of strings
    (:class:`~groupspec.assignors.java_collections.JavaHashSet` of
    :func:`~groupspec.assignors.java_collections.collection_capacity` slots, each key added
    in turn). Not modelled, as there: a tree bin (a ninth key in one bucket of a table of
    64), which takes nine ids of one request in one ``__consumer_offsets`` partition whose
    hashes agree in six bits."""
    ids = JavaHashSet(java_string_hash, collection_capacity(len(keys)))
    for k in keys:
        ids.add(k)
    return ids.order()


def runtime_capacity(keys: int) -> int:
    """The table length of a ``new ConcurrentHashMap<>()`` after ``keys`` puts (Java 17:
    16 slots at the first put; after a put that brings the count to three quarters of the
    length, ``addCount`` doubles it)."""
    capacity = 16
    while keys >= capacity - (capacity >> 2):
        capacity *= 2
    return capacity


@lru_cache(maxsize=8)
def runtime_partition_order(num_partitions: int) -> tuple[int, ...]:
    """The order CoordinatorRuntime.scheduleReadAllOperation visits its shards in, when this
    broker hosts all ``num_partitions`` partitions of ``__consumer_offsets``: it maps the
    keys of its ``coordinators`` map (a ``ConcurrentHashMap<TopicPartition, ...>``, one key
    per hosted partition) to one read each, and the service (GroupCoordinatorService.
    listGroups) concatenates the answers in that order. A ConcurrentHashMap iterates its
    table upwards, and at the table length ``num_partitions`` keys leave no two of these
    partitions share a slot (checked for every count up to 1000, tests/
    test_list_groups_order_jvm.py against Java), so the order is the slot order alone,
    whatever order the partitions were loaded in."""
    capacity = runtime_capacity(num_partitions)
    return tuple(sorted(range(num_partitions),
                        key=lambda p: bucket(topic_partition_hash((OFFSETS_TOPIC, p)), capacity)))

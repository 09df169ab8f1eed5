"""The order an OffsetFetch of all offsets lists a group's committed offsets in (Kafka
4.1.2).

OffsetMetadataManager keeps committed offsets in nested TimelineHashMaps, every level
created with expected size 0 (its private ``Offsets`` class): group id -> topic -> partition.
fetchAllOffsets walks the group's topic map, and for each topic its partition map, so the
answer lists topic by topic in the topic map's order, each topic's partitions in its
partition map's order (consumer/timeline_order.py). How the maps change (``Offsets.put`` and
``Offsets.remove``, called as each offset commit or tombstone is replayed):

- a commit takes the topic's partition map (computeIfAbsent: the topic is put only when it
  has none) and puts the partition in it, also when it is already there, which may grow
  that map's table (BaseHashTable.baseAddOrReplace);
- a tombstone removes the partition; a partition map left empty is removed from the
  topic map, and a topic map left empty from the group's entry, so a later commit starts
  from new, smallest tables.

Offsets are kept by group id, apart from the group itself (a group removed while its
offsets stay, as when an empty classic group makes way for a consumer group, leaves them,
and their order, in place). The same nesting orders the offset tombstones of a group being
deleted (OffsetMetadataManager.deleteAllOffsets).

The partitions with pending transactional offsets are kept in the same nesting
(OffsetMetadataManager.OpenTransactions: group id -> topic -> partition, its inner maps
created with expected size 1, which BaseHashTable.expectedSizeToCapacity turns into the same
2-slot table as expected size 0), but a partition is put only when it has none
(computeIfAbsent): :meth:`OffsetOrder.add`. deleteAllOffsets writes the tombstones of
partitions with only pending offsets in that map's order.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from groupspec.coordinator.consumer.timeline_order import TimelineOrder


@dataclass
class OffsetOrder:
    """One group's topic map and partition maps."""

    topics: TimelineOrder[str] = field(default_factory=TimelineOrder)
    partitions: dict[str, TimelineOrder[int]] = field(default_factory=dict)

    def put(self, topic: str, partition: int) -> None:
        by_partition = self.partitions.get(topic)
        if by_partition is None:
            self.topics.put(topic)
            by_partition = self.partitions[topic] = TimelineOrder()
        by_partition.put(partition)

    def add(self, topic: str, partition: int) -> None:
        """``computeIfAbsent`` on every level (OffsetMetadataManager.OpenTransactions.add):
        a partition already there is not put again, so its map's table does not grow."""
        by_partition = self.partitions.get(topic)
        if by_partition is None or partition not in by_partition:
            self.put(topic, partition)

    def inserted(self) -> list[tuple[str, int]]:
        """The (topic, partition) pairs in the order they were first put (and not removed
        since): the order a log replays them in."""
        return [(t, p) for t in self.topics.inserted() for p in self.partitions[t].inserted()]

    def remove(self, topic: str, partition: int) -> None:
        by_partition = self.partitions.get(topic)
        if by_partition is None:
            return
        by_partition.remove(partition)
        if not by_partition:
            del self.partitions[topic]
            self.topics.remove(topic)

    def __len__(self) -> int:
        return len(self.topics)

    def order(self) -> list[tuple[str, int]]:
        """The group's (topic, partition) pairs as fetchAllOffsets lists them."""
        return [(t, p) for t in self.topics.order() for p in self.partitions[t].order()]


def note_commit(orders: dict[str, OffsetOrder], group_id: str, topic: str, partition: int) -> None:
    """A commit of ``group_id``'s offset of ``topic``-``partition`` replayed
    (``CoordinatorState.offset_order``)."""
    order = orders.get(group_id)
    if order is None:
        order = orders[group_id] = OffsetOrder()
    order.put(topic, partition)


def listed(orders: dict[str, OffsetOrder], group_id: str,
           offsets: Collection[tuple[str, int]]) -> list[tuple[str, int]]:
    """``offsets`` (a group's committed offsets, or some of them) in the order Kafka's maps
    list them; sorted when no order is kept (offsets put into a state without records, as
    crosscheck builds its states)."""
    order = orders.get(group_id) if offsets else None
    if order is None:
        return sorted(offsets)
    return [tp for tp in order.order() if tp in offsets]

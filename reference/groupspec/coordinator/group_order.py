"""The order a ListGroups answer lists the groups in (Kafka 4.1.2).

GroupCoordinatorService.listGroups asks every shard of the runtime
(CoordinatorRuntime.scheduleReadAllOperation: one read per key of its ``coordinators``
ConcurrentHashMap; service_order.runtime_partition_order) and concatenates their lists in
that order (FutureUtils.combineFutures). Each shard (GroupMetadataManager.listGroups) streams
the values of its ``groups`` map, a TimelineHashMap created with expected size 0, filtered
by state and type, so within a shard the groups come in that map's iteration order
(consumer/timeline_order.py).

What changes the map, and so what :class:`GroupOrder` is told (the reference keeps classic
and consumer groups in two dicts; Kafka keeps them in one map per shard):

- a classic group is put when GroupMetadataManager.getOrMaybeCreateClassicGroup creates it
  (a JoinGroup, or a commit creating a simple group), and on load once per GroupMetadata
  record replayed (``replay(GroupMetadataKey, GroupMetadataValue)``);
- a consumer group is put when the first of its records is replayed
  (getOrMaybeCreatePersistedConsumerGroup; later records find it there);
- a group is removed when its tombstone is replayed (removeGroup); an empty classic group
  making way for a consumer group (maybeDeleteEmptyClassicGroup) is removed, then the
  consumer group put anew;
- an unloaded shard takes its map with it; a reloaded one starts with a new map.

The reference reloads each group with one put, in its own order (failover.py), where Kafka
replays whatever its compacted log holds, so after a failover the order can differ
(docs/deviations.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from groupspec.coordinator.consumer.timeline_order import TimelineOrder
from groupspec.coordinator.find_coordinator import coordinator_partition
from groupspec.coordinator.service_order import runtime_partition_order

#: offsets.topic.num.partitions' default (GroupCoordinatorConfig)
DEFAULT_PARTITIONS = 50


@dataclass
class GroupOrder:
    """Each shard's ``groups`` map order, the shards' order of ``num_partitions``."""

    num_partitions: int = DEFAULT_PARTITIONS
    shards: dict[int, TimelineOrder[str]] = field(default_factory=dict)

    def shard_of(self, group_id: str) -> int:
        return coordinator_partition(group_id, self.num_partitions)

    def _shard(self, group_id: str) -> TimelineOrder[str]:
        partition = self.shard_of(group_id)
        shard = self.shards.get(partition)
        if shard is None:
            shard = self.shards[partition] = TimelineOrder()
        return shard

    def put(self, group_id: str) -> None:
        self._shard(group_id).put(group_id)

    def remove(self, group_id: str) -> None:
        self._shard(group_id).remove(group_id)

    def order(self) -> list[str]:
        """Every group id, in the order ListGroups lists them."""
        out: list[str] = []
        for partition in runtime_partition_order(self.num_partitions):
            shard = self.shards.get(partition)
            if shard is not None:
                out.extend(shard.order())
        return out

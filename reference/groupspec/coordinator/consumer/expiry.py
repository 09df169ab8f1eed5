"""The periodic offset-expiry job for consumer groups (KIP-848).

Sources, Apache Kafka 4.1.2 group-coordinator: GroupCoordinatorShard.cleanupGroupMetadata
(every ``offsets.retention.check.interval.ms``, over every group, classic or consumer),
OffsetMetadataManager.cleanupExpiredOffsets, ConsumerGroup.offsetExpirationCondition (an
offset expires ``offsets.retention.ms`` after its commit timestamp, or at its own expire
timestamp: CommittedOffset.expired), ModernGroup.isSubscribedToTopic and
GroupMetadataManager.maybeDeleteGroup with ConsumerGroup.createGroupTombstoneRecords.

The rule: an offset of a topic the group no longer subscribes to (by name or through a
resolved regex) is deleted once it is older than the retention; when every offset of the
group is gone that way (or it had none) and the group is empty, the group is deleted.
"""

from __future__ import annotations

from groupspec.coordinator.consumer.group import (
    ConsumerGroup,
    group_tombstones,
    subscription_counts,
)
from groupspec.coordinator.context import Txn
from groupspec.coordinator.offset_order import listed
from groupspec.protocol import records as r


def expire_consumer_offsets(txn: Txn, group: ConsumerGroup) -> None:
    """cleanupExpiredOffsets for one consumer group, then maybeDeleteGroup."""
    subscribed = subscription_counts(group.members.values(), group.resolved_regexes.values())
    retention = txn.config.offsets_retention_ms
    expired: list[tuple[str, int]] = []
    # a partition with a pending transactional offset keeps its committed one, and a group
    # with an open transaction is not deleted (cleanupExpiredOffsets)
    pending = txn.state.pending_offsets.get(group.group_id, {})
    all_expired = not pending
    for (topic, partition), c in group.offsets.items():
        if topic not in subscribed and c.expired(c.commit_timestamp_ms, txn.now_ms, retention) \
                and (topic, partition) not in pending:
            expired.append((topic, partition))
        else:
            all_expired = False
    if expired:
        # in the order cleanupExpiredOffsets walks the group's offset maps
        txn.emit(r.OffsetsDeleted(group.group_id, tuple(
            listed(txn.state.offset_order, group.group_id, set(expired))), "retention"))
    if all_expired and not group.members:
        delete_empty_consumer_group(txn, group)


def delete_empty_consumer_group(txn: Txn, group: ConsumerGroup) -> None:
    """ConsumerGroup.createGroupTombstoneRecords (group.group_tombstones) for a group without
    members: the target assignment's epoch, each resolved regex, then the group's epoch."""
    for rec in group_tombstones(group):
        txn.emit(rec)


__all__ = ["delete_empty_consumer_group", "expire_consumer_offsets"]

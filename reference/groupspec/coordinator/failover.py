"""Coordinator failover: the ``__consumer_offsets`` partition moves to another broker.

The old coordinator unloads every group (GroupMetadataManager.onUnloaded: the group goes
Dead; parked JoinGroups are answered NOT_COORDINATOR if it was PreparingRebalance, parked
SyncGroups if it was CompletingRebalance or Stable). The new coordinator rebuilds each
group from its persisted records alone (onLoaded): Stable if it has members, else Empty,
every member's session timer armed. In-flight rebalances are lost; members learn it from
NOT_COORDINATOR, rediscover the coordinator and rejoin. A consumer group (KIP-848) keeps
everything but its timers: its state is all in persisted records, and its members simply
heartbeat the new coordinator.
"""

from __future__ import annotations

import dataclasses

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.committed_offset import CommittedOffset, expire_timestamp_from_log
from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.consumer.member import ConsumerMember, to_record
from groupspec.coordinator.context import Txn
from groupspec.coordinator.offset_order import OffsetOrder
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import JoinGroupResponse, SyncGroupResponse

S = GroupState


def unload_all(txn: Txn) -> None:
    for group in list(txn.state.groups.values()):
        if group.state is S.Dead:
            continue
        before = group.state
        rb.transition(txn, group, S.Dead)
        for m in list(group.members.values()):
            if before is S.PreparingRebalance:
                rb.complete_join_future(
                    txn, group, m, JoinGroupResponse(error=Error.NOT_COORDINATOR, member_id=m.member_id)
                )
            elif before in (S.CompletingRebalance, S.Stable):
                rb.complete_sync_future(txn, group, m, SyncGroupResponse(error=Error.NOT_COORDINATOR))


def load_all(old: dict[str, Group], txn: Txn) -> None:
    """Emit a GroupLoaded record per group of ``old`` into the (empty) state of ``txn``."""
    for group in old.values():
        if group.persisted is None and not group.offsets and not group.offsets_in_log:
            continue
        committed = sorted(group.offsets.items())
        offsets = tuple((t, p, c.committed_offset, c.metadata, c.commit_timestamp_ms) for (t, p), c in committed)
        epochs = tuple((t, p, c.leader_epoch) for (t, p), c in committed if c.leader_epoch != -1)
        expires = tuple((t, p, c.expire_timestamp_ms) for (t, p), c in committed if c.expire_timestamp_ms is not None)
        txn.emit(r.GroupLoaded(group.group_id, group.persisted, offsets, txn.now_ms, epochs, expires))
        loaded = txn.state.groups[group.group_id]
        for m in list(loaded.members.values()):
            rb.reschedule_heartbeat(txn, loaded, m.member_id, m.session_timeout_ms)
        if len(loaded.members) > txn.config.group_max_size:
            rb.prepare_rebalance(txn, loaded, "freshly loaded group is over group.max.size")


def load_pending_offsets(old: dict[str, dict[tuple[str, int], dict[int, CommittedOffset]]],
                         old_order: dict[str, OffsetOrder], txn: Txn) -> None:
    """The pending transactional offsets, replayed from the log by the next shard (their
    transactions' markers are not in it: not on the wire), after the groups they belong
    to, each group's partitions in the order they first became pending, as the log has
    them (a partition tombstoned and pending again in between is replayed once, from its
    last start: the open transactions' tables may be smaller than Kafka's after it replays
    the whole log)."""
    for gid, partitions in old.items():
        order = old_order.get(gid)
        listed = [tp for tp in order.inserted() if tp in partitions] if order is not None else []
        # (partitions no order knows, as in a state built without records: sorted, after)
        listed += sorted(set(partitions) - set(listed))
        for t, p in listed:
            by_producer = partitions[(t, p)]
            for pid, c in sorted(by_producer.items()):
                txn.emit(r.OffsetCommitted(gid, t, p, c.committed_offset, c.metadata, c.commit_timestamp_ms,
                                           -1, "", c.leader_epoch, c.expire_timestamp_ms, producer_id=pid))


def _emit_stale_instance_ids(g: ConsumerGroup, txn: Txn) -> None:
    """The instance ids still mapped to a member that since took another one or left:
    ConsumerGroup.updateStaticMember adds a mapping, removeStaticMember drops the member's
    current one only, and Kafka's reload replays the member's older subscription records
    too, so such a mapping survives a failover (until compaction). Re-emitted as those
    records: the member under that instance id, and for a member gone, its removal after it
    dropped its instance id (so the removal leaves the mapping)."""
    for iid, mid in g.static_members.items():
        member = g.members.get(mid)
        if member is not None and member.instance_id == iid:
            continue
        value = dataclasses.replace((member or ConsumerMember(mid)).subscription_value(), instance_id=iid)
        txn.emit(cr.ConsumerGroupMemberSubscriptionRecord(g.group_id, mid, value))
        if member is None:
            txn.emit(cr.ConsumerGroupMemberSubscriptionRecord(
                g.group_id, mid, dataclasses.replace(value, instance_id=None)))
            txn.emit(cr.ConsumerGroupCurrentAssignmentRecord(g.group_id, mid, None))
            txn.emit(cr.ConsumerGroupMemberSubscriptionRecord(g.group_id, mid, None))


def load_consumer_groups(old: dict[str, ConsumerGroup], txn: Txn) -> None:
    """Rebuild each consumer group from its persisted facts, as replaying its records in
    ``__consumer_offsets`` does, then GroupMetadataManager.onLoaded: every member's session
    timeout armed afresh, and the rebalance timeout of each member still revoking. Resolved
regexes come back from their records; a pending resolution does not (the executor's
tasks are cancelled on unload), the next heartbeat schedules it again."""
    for g in old.values():
        gid = g.group_id
        txn.emit(cr.ConsumerGroupEpochRecord(
            gid, cr.ConsumerGroupMetadataValue(epoch=g.group_epoch, metadata_hash=g.metadata_hash)))
        _emit_stale_instance_ids(g, txn)
        for mid, m in g.members.items():
            txn.emit(cr.ConsumerGroupMemberSubscriptionRecord(gid, mid, m.subscription_value()))
        for rx, rr in g.resolved_regexes.items():
            txn.emit(cr.ConsumerGroupRegularExpressionRecord(gid, rx, cr.ConsumerGroupRegularExpressionValue(
                topics=tuple(sorted(rr.topics)), version=rr.version, timestamp=rr.timestamp_ms)))
        for mid, a in g.target.items():
            txn.emit(cr.ConsumerGroupTargetAssignmentRecord(
                gid, mid, cr.ConsumerGroupTargetAssignmentMemberValue(to_record(a))))
        txn.emit(cr.ConsumerGroupTargetAssignmentEpochRecord(
            gid, cr.ConsumerGroupTargetAssignmentMetadataValue(g.assignment_epoch)))
        for mid, m in g.members.items():
            txn.emit(cr.ConsumerGroupCurrentAssignmentRecord(gid, mid, m.current_assignment_value()))
        for (t, p), c in sorted(g.offsets.items()):
            txn.emit(r.OffsetCommitted(gid, t, p, c.committed_offset, c.metadata,
                                       c.commit_timestamp_ms, -1, "", c.leader_epoch,
                                       expire_timestamp_from_log(c.expire_timestamp_ms)))
        for mid, m in g.members.items():
            txn.emit(cr.ConsumerSessionTimerSet(
                gid, mid, txn.now_ms + txn.config.consumer_session_timeout_ms_of(gid)))
            if m.state is cr.MemberState.UNREVOKED_PARTITIONS:
                txn.emit(cr.ConsumerRebalanceTimerSet(
                    gid, mid, txn.now_ms + m.rebalance_timeout_ms, m.member_epoch))
        # the members map is rebuilt from the records above, as from a compacted log: one
        # subscription and one assignment record per member. Kafka replays whatever of the
        # member's history the log still holds, so the order the reloaded map iterates in
        # (coordinator/consumer/timeline_order.py) can differ from the reference's here
        # (docs/deviations.md)

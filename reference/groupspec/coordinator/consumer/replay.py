"""Applying a consumer group's records to the coordinator state.

Mirrors the ``replay`` overloads of GroupMetadataManager.java for ConsumerGroupMetadata,
ConsumerGroupMemberMetadata, ConsumerGroupTargetAssignmentMember,
ConsumerGroupTargetAssignmentMetadata, ConsumerGroupCurrentMemberAssignment and
ConsumerGroupRegularExpression (ConsumerGroup.updateResolvedRegularExpression /
removeResolvedRegularExpression), and
ConsumerGroup.updateMember / removeMember (partition epochs, static members). A value
creates the group if needed; a tombstone for a group or member that does not exist is
ignored; a tombstone out of Kafka's order (a member deleted before its current assignment)
is a :class:`ReplayError`, as Kafka's IllegalStateException.
"""

from __future__ import annotations

import dataclasses

from groupspec.coordinator.consumer.group import (
    ConsumerGroup,
    ConsumerTimers,
    RebalanceTimer,
    ResolvedRegex,
    adopt_timers,
    assignor_counts,
    subscribed_regexes,
    subscription_counts,
    subscription_type,
)
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember, from_record
from groupspec.coordinator.state import CoordinatorState, RegexTask, ReplayError
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol.consumer_group_messages import LEAVE_GROUP_MEMBER_EPOCH
from groupspec.protocol.records import Record


class ConsumerReplayError(ReplayError):
    """A consumer-group record that does not fit the state."""


def _group(state: CoordinatorState, group_id: str, create: bool) -> ConsumerGroup | None:
    g = state.consumer_groups.get(group_id)
    if g is None and create:
        if group_id in state.groups:
            raise ConsumerReplayError(f"group {group_id!r} is a classic group")
        g = state.consumer_groups[group_id] = ConsumerGroup(group_id)
        g.offsets = state.detached_offsets.pop(group_id, {})
        adopt_timers(g, state.detached_consumer_timers.pop(group_id, None))
        state.group_order.put(group_id)
    return g


def _add_epochs(g: ConsumerGroup, a: Assignment, epoch: int) -> None:
    for t, ps in a.items():
        for p in ps:
            prev = g.partition_epochs.get((t, p))
            if prev is not None and prev >= epoch:
                # ConsumerGroup.addPartitionEpochs: IllegalStateException
                raise ConsumerReplayError(
                    f"group {g.group_id!r}: cannot set the epoch of {t}-{p} to {epoch}: "
                    f"still owned at epoch {prev}"
                )
            g.partition_epochs[(t, p)] = epoch


def _remove_epochs(g: ConsumerGroup, a: Assignment, epoch: int) -> None:
    for t, ps in a.items():
        for p in ps:
            if g.partition_epochs.get((t, p)) == epoch:
                del g.partition_epochs[(t, p)]


def _count_assignor(g: ConsumerGroup, name: str | None, delta: int, counts: dict[str, int]) -> None:
    """ConsumerGroup.maybeUpdateServerAssignors on its TimelineHashMap: Map.compute puts
    the new count (a key already there keeps its place) or removes the key at 0."""
    if name is None:
        return
    counts[name] = counts.get(name, 0) + delta
    if counts[name] <= 0:
        counts.pop(name)
        g.assignor_order.remove(name)
    else:
        g.assignor_order.put(name)


def _update_subscription_kind(g: ConsumerGroup) -> None:
    """ConsumerGroup.maybeUpdateGroupSubscriptionType, run by updateMember and removeMember:
    the type from the group's subscribed topic names (by name and through the regexes
    resolved now) and its regexes, in their map's order (the first one's count decides)."""
    counts = subscribed_regexes(g.members.values())
    ordered = {rx: counts[rx] for rx in g.regex_order.order() if rx in counts}
    g.subscription_kind = subscription_type(
        subscription_counts(g.members.values(), g.resolved_regexes.values()), len(g.members), ordered)


def _count_regex(g: ConsumerGroup, regex: str, delta: int, counts: dict[str, int]) -> None:
    """ConsumerGroup.maybeUpdateSubscribedRegularExpression on its TimelineHashMap."""
    if not regex:
        return
    counts[regex] = counts.get(regex, 0) + delta
    if counts[regex] <= 0:
        counts.pop(regex)
        g.regex_order.remove(regex)
    else:
        g.regex_order.put(regex)


def _update_member(g: ConsumerGroup, new: ConsumerMember) -> None:
    old = g.members.get(new.member_id)
    counts = assignor_counts(g.members.values())
    regexes = subscribed_regexes(g.members.values())
    g.members[new.member_id] = new
    g.member_order.put(new.member_id)
    # ConsumerGroup.updateMember: the old member's assignor counted down, the new one's up
    _count_assignor(g, old.server_assignor if old is not None else None, -1, counts)
    _count_assignor(g, new.server_assignor, +1, counts)
    # and its regex (maybeUpdateSubscribedRegularExpression; "" is none)
    _count_regex(g, old.subscribed_topic_regex if old is not None else "", -1, regexes)
    _count_regex(g, new.subscribed_topic_regex, +1, regexes)
    _update_subscription_kind(g)
    if old is not None:
        _remove_epochs(g, old.assigned, old.member_epoch)
        _remove_epochs(g, old.pending_revocation, old.member_epoch)
    _add_epochs(g, new.assigned, new.member_epoch)
    _add_epochs(g, new.pending_revocation, new.member_epoch)
    if new.instance_id is not None:
        g.static_members[new.instance_id] = new.member_id


def _remove_member(g: ConsumerGroup, member_id: str) -> None:
    old = g.members.pop(member_id)
    g.member_order.remove(member_id)
    _count_assignor(g, old.server_assignor, -1, assignor_counts([*g.members.values(), old]))
    _count_regex(g, old.subscribed_topic_regex, -1, subscribed_regexes([*g.members.values(), old]))
    _update_subscription_kind(g)
    _remove_epochs(g, old.assigned, old.member_epoch)
    _remove_epochs(g, old.pending_revocation, old.member_epoch)
    if old.instance_id is not None and g.static_members.get(old.instance_id) == member_id:
        # ConsumerGroup.removeStaticMember drops the mapping of the member's current instance
        # id (unconditionally: it always maps to this member); mappings of instance ids the
        # member had before stay (heartbeat._static_member reads them as unknown members)
        del g.static_members[old.instance_id]


def apply_consumer_record(state: CoordinatorState, rec: Record) -> None:
    gid = rec.group_id
    match rec:
        case cr.ConsumerGroupEpochRecord(value=v):
            if v is not None:
                g = _group(state, gid, True)
                assert g is not None
                g.group_epoch, g.metadata_hash = v.epoch, v.metadata_hash
                return
            g = _group(state, gid, False)
            if g is None:
                return
            if g.members or g.target or g.assignment_epoch != -1:
                raise ConsumerReplayError(
                    f"ConsumerGroupEpochRecord tombstone: group {gid!r} still has members, "
                    "a target assignment or its epoch"
                )
            del state.consumer_groups[gid]
            state.group_order.remove(gid)
            if g.offsets:
                # a group that gives way to the other protocol keeps its offsets by id
                state.detached_offsets[gid] = g.offsets
            # and its timers run on (ConsumerTimers)
            timers = ConsumerTimers(g.session_deadlines, g.rebalance_timers, g.classic_join_deadlines,
                                    g.classic_sync_deadlines)
            if timers.running():
                state.detached_consumer_timers[gid] = timers
        case cr.ConsumerGroupMemberSubscriptionRecord(member_id=mid, value=v):
            g = _group(state, gid, v is not None)
            if g is None:
                return
            if v is not None:
                old = g.members.get(mid) or ConsumerMember(mid)
                _update_member(g, old.with_subscription(v))
                return
            m = g.members.get(mid)
            if m is None:
                return
            if m.member_epoch != LEAVE_GROUP_MEMBER_EPOCH or mid in g.target:
                raise ConsumerReplayError(
                    f"member {mid!r} of {gid!r} deleted before its current and target "
                    "assignments were"
                )
            _remove_member(g, mid)
        case cr.ConsumerGroupSubscriptionMetadataRecord(value=v):
            # replay(ConsumerGroupPartitionMetadataKey, ...): a value creates the group; a
            # tombstone for a group that does not exist is ignored (GroupIdNotFoundException)
            g = _group(state, gid, v is not None)
            if g is not None:
                g.has_subscription_metadata_record = v is not None
        case cr.ConsumerGroupTargetAssignmentRecord(member_id=mid, value=v):
            g = _group(state, gid, v is not None)
            if g is None:
                return
            if v is not None:
                g.target[mid] = from_record(v.topic_partitions)
            else:
                g.target.pop(mid, None)
        case cr.ConsumerGroupTargetAssignmentEpochRecord(value=v):
            g = _group(state, gid, v is not None)
            if g is None:
                return
            if v is not None:
                g.assignment_epoch = v.assignment_epoch
            else:
                if g.target:
                    raise ConsumerReplayError(
                        f"target assignment epoch of {gid!r} deleted while members have targets"
                    )
                g.assignment_epoch = -1
        case cr.ConsumerGroupCurrentAssignmentRecord(member_id=mid, value=v):
            g = _group(state, gid, v is not None)
            if g is None:
                return
            if v is not None:
                old = g.members.get(mid) or ConsumerMember(mid)
                _update_member(g, old.with_current_assignment(v))
                return
            m = g.members.get(mid)
            if m is None:
                return
            _update_member(g, dataclasses.replace(
                m, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH, assigned={},
                pending_revocation={},
            ))
        case cr.ConsumerSessionTimerSet(member_id=mid, deadline_ms=d):
            _set_deadline(_timer_tables(state, gid, rec).session_deadlines, mid, d)
            _drop_spent(state, gid)
        case cr.ConsumerRebalanceTimerSet(member_id=mid, deadline_ms=d, member_epoch=e):
            tables = _timer_tables(state, gid, rec)
            if d is None:
                tables.rebalance_timers.pop(mid, None)
            else:
                tables.rebalance_timers[mid] = RebalanceTimer(d, e)
            _drop_spent(state, gid)
        case cr.ConsumerClassicJoinTimerSet(member_id=mid, deadline_ms=d):
            _set_deadline(_timer_tables(state, gid, rec).classic_join_deadlines, mid, d)
            _drop_spent(state, gid)
        case cr.ConsumerClassicSyncTimerSet(member_id=mid, deadline_ms=d):
            _set_deadline(_timer_tables(state, gid, rec).classic_sync_deadlines, mid, d)
            _drop_spent(state, gid)
        case cr.ConsumerGroupRegularExpressionRecord(regular_expression=rx, value=v):
            # GroupMetadataManager.replay(ConsumerGroupRegularExpressionKey, ...): a value
            # creates the group; a tombstone for a missing group is ignored
            g = _group(state, gid, v is not None)
            if g is None:
                return
            # ConsumerGroup.updateResolvedRegularExpression: the old resolution is removed
            # from the map, a new one put (so it goes last in its slot)
            g.resolved_regexes.pop(rx, None)
            g.resolved_regex_order.remove(rx)
            if v is not None:
                g.resolved_regexes[rx] = ResolvedRegex(frozenset(v.topics), v.version, v.timestamp)
                g.resolved_regex_order.put(rx)
        case cr.ConsumerRegexResolutionScheduled(member_id=mid, regexes=rxs, scheduled_ms=at):
            if rxs is None:
                state.regex_tasks.pop(gid, None)
            elif gid in state.regex_tasks:
                raise ConsumerReplayError(f"a regex resolution of {gid!r} is already scheduled")
            else:
                state.regex_tasks[gid] = RegexTask(mid, rxs, at)
        case _:
            raise ConsumerReplayError(f"not a consumer-group record: {type(rec).__name__}")


def _timer_tables(state: CoordinatorState, gid: str, rec: Record) -> ConsumerGroup | ConsumerTimers:
    """The tables a timer record changes: the consumer group's, or, with the group gone, its
    detached timers' (only a timer that fires or is cancelled then; none is armed)."""
    g = _group(state, gid, False)
    if g is not None:
        return g
    detached = state.detached_consumer_timers.get(gid)
    if detached is None or getattr(rec, "deadline_ms", None) is not None:
        raise ConsumerReplayError(f"{type(rec).__name__}: no consumer group {gid!r}")
    return detached


def _drop_spent(state: CoordinatorState, gid: str) -> None:
    detached = state.detached_consumer_timers.get(gid)
    if detached is not None and not detached.running():
        del state.detached_consumer_timers[gid]


def _set_deadline(table: dict[str, int], member_id: str, deadline_ms: int | None) -> None:
    if deadline_ms is None:
        table.pop(member_id, None)
    else:
        table[member_id] = deadline_ms

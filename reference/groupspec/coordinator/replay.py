"""The only function that changes coordinator state: applying one record.

Replaying the records of a run, in order, on a fresh :class:`CoordinatorState` reproduces
the state the run ended in. ``apply_record`` holds no protocol rule beyond the
valid-previous-state table: it does exactly what the record says, and raises
:class:`ReplayError` (a bug in the emitting handler, or a corrupt trace) when a record does
not fit the state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from groupspec.coordinator.classic.group import (
    CONSUMER_PROTOCOL_TYPE,
    Group,
    Member,
    compute_subscribed_topics,
    member_from,
)
from groupspec.coordinator.committed_offset import expire_timestamp_from_log
from groupspec.coordinator.consumer.replay import apply_consumer_record
from groupspec.coordinator.group_order import GroupOrder
from groupspec.coordinator.offset_order import OffsetOrder, note_commit
from groupspec.coordinator.state import CommittedOffset, CoordinatorState, ReplayError
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_records import CONSUMER_GROUP_RECORDS
from groupspec.protocol.group_state import GroupState, is_valid_transition

__all__ = ["ReplayError", "apply_record"]


def _group(state: CoordinatorState, rec: r.Record) -> Group:
    g = state.groups.get(rec.group_id)
    if g is None:
        raise ReplayError(f"{r.record_name(rec)}: group {rec.group_id!r} does not exist")
    return g


def _member(g: Group, member_id: str, rec: r.Record) -> Member:
    m = g.members.get(member_id)
    if m is None:
        raise ReplayError(
            f"{r.record_name(rec)}: {member_id!r} is not a member of group {g.group_id!r}"
        )
    return m


def apply_record(state: CoordinatorState, rec: r.Record) -> None:
    # the two most frequent records (a Stable group's heartbeats and commits) first: what
    # the cases below do for them, without testing every other kind before; then the other
    # records of a classic group, looked up by their class (_GROUP_RECORDS)
    cls = type(rec)
    if cls is r.HeartbeatScheduled:
        assert isinstance(rec, r.HeartbeatScheduled)
        # a member's session deadline moved (the most frequent record): set at once when
        # the group has it as a member, not pending; otherwise (a pending member, or an
        # error to raise) through _heartbeat_scheduled
        g = state.groups.get(rec.group_id)
        if g is not None and rec.member_id not in g.pending_members:
            member = g.members.get(rec.member_id)
            if member is not None:
                member.heartbeat_deadline_ms = rec.deadline_ms
                return
        _heartbeat_scheduled(_group(state, rec), rec)
        return
    if cls is r.OffsetCommitted:
        assert isinstance(rec, r.OffsetCommitted)
        if rec.producer_id != -1:
            _pending_offset(state, rec)
            return
        cg = state.consumer_groups.get(rec.group_id)
        if cg is not None:
            _commit_offset(state, cg.offsets, rec)
        else:
            g = _group(state, rec)
            g.offsets_in_log = True
            _commit_offset(state, g.offsets, rec)
        return
    if cls is r.JoinTimerSet and rec.group_id not in state.groups:
        assert isinstance(rec, r.JoinTimerSet)
        # the join timer of a classic group removed by an upgrade, spent (it fired while the
        # group is not classic)
        if rec.timer is not None or state.detached_classic_join_timers.pop(rec.group_id, None) is None:
            raise ReplayError(f"JoinTimerSet: no classic group {rec.group_id!r}")
        return
    apply = _GROUP_RECORDS.get(cls)
    if apply is not None:
        apply(_group(state, rec), rec)
        return
    if isinstance(rec, CONSUMER_GROUP_RECORDS):
        apply_consumer_record(state, rec)
        return
    if isinstance(rec, r.CoordinatorUnloaded):
        state.groups = {}
        state.consumer_groups = {}
        state.group_order = GroupOrder(state.group_order.num_partitions)
        state.offset_order = {}
        # (the next shard replays the pending transactional offsets from the log too: the
        # failover re-emits them after each group's load)
        state.pending_offsets = {}
        state.pending_order = {}
        # the executor's tasks are cancelled with the shard (CoordinatorExecutor.cancelAll)
        state.regex_tasks = {}
        # and the timers of gone consumer groups with its timer (the next shard schedules
        # only its loaded groups' session and rebalance timeouts)
        state.detached_consumer_timers = {}
        state.detached_classic_join_timers = {}
        # the next coordinator's GroupMetadataManager starts with no image seen: onLoaded
        # hands it the current one (GroupCoordinatorShard.onLoaded, onNewMetadataImage), which
        # it takes as the last image with new topics, so a group whose regexes were resolved
        # against an older image refreshes them at its next heartbeat. (Applied with the
        # unload record, so that replaying a run's records reproduces it.)
        state.metadata_version_with_new_topics = state.metadata_version
        return
    if isinstance(rec, r.GroupLoaded):
        _load(state, rec)
        return
    if isinstance(rec, r.ClassicGroupConverted):
        _converted(state, rec)
        return
    if isinstance(rec, r.GroupCreated):
        if rec.group_id in state.groups or rec.group_id in state.consumer_groups:
            raise ReplayError(f"GroupCreated: group {rec.group_id!r} already exists")
        state.groups[rec.group_id] = Group(rec.group_id, state_timestamp_ms=rec.now_ms)
        state.groups[rec.group_id].offsets = state.detached_offsets.pop(rec.group_id, {})
        # a join timer an upgraded classic group of the id left running would fire on this
        # Empty group, where Kafka's completeClassicGroupJoin throws (docs/deviations.md):
        # not kept
        state.detached_classic_join_timers.pop(rec.group_id, None)
        state.group_order.put(rec.group_id)
        return
    if isinstance(rec, r.OffsetCommitted | r.OffsetsDeleted) and rec.group_id in state.consumer_groups:
        _apply_offsets(state, state.consumer_groups[rec.group_id].offsets, rec)
        return
    g = _group(state, rec)
    match rec:
        case r.GroupRemoved():
            if g.state is not GroupState.Dead:
                raise ReplayError(f"GroupRemoved: group {g.group_id!r} is {g.state.value}, not Dead")
            del state.groups[g.group_id]
            state.group_order.remove(g.group_id)
            if g.offsets:
                # a group that gives way to the other protocol keeps its offsets by id
                state.detached_offsets[g.group_id] = g.offsets
            if g.join_timer is not None:
                # and its join timer runs on (CoordinatorState.detached_classic_join_timers)
                state.detached_classic_join_timers[g.group_id] = g.join_timer
        case r.OffsetCommitted() | r.OffsetsDeleted():
            _apply_offsets(state, g.offsets, rec)
        case _:
            raise ReplayError(f"unknown record type {r.record_name(rec)}")


#: what a record of one classic group does to it, by the record's class (the records that
#: need nothing but their group; apply_record looks the class up instead of testing it
#: against every kind in turn)
_GROUP_RECORDS: dict[type[r.Record], Callable[[Group, Any], None]] = {}

_R = TypeVar("_R", bound=r.Record)


def _on(cls: type[_R]) -> Callable[[Callable[[Group, _R], None]], Callable[[Group, _R], None]]:
    def register(fn: Callable[[Group, _R], None]) -> Callable[[Group, _R], None]:
        _GROUP_RECORDS[cls] = fn
        return fn
    return register


@_on(r.StateChanged)
def _state_changed(g: Group, rec: r.StateChanged) -> None:
    target, now = rec.state, rec.now_ms
    if not is_valid_transition(g.state, target):
        raise ReplayError(
            f"StateChanged: group {g.group_id!r} cannot go {g.state.value} -> {target.value}"
        )
    g.previous_state = g.state
    g.state = target
    g.state_timestamp_ms = now


@_on(r.ProtocolTypeSet)
def _protocol_type_set(g: Group, rec: r.ProtocolTypeSet) -> None:
    g.protocol_type = rec.protocol_type


@_on(r.MemberAdded)
def _member_added(g: Group, rec: r.MemberAdded) -> None:
    mid = rec.info.member_id
    if mid in g.members:
        raise ReplayError(f"MemberAdded: {mid!r} is already a member of {g.group_id!r}")
    iid = rec.info.group_instance_id
    if iid is not None:
        if iid in g.static_members:
            raise ReplayError(f"MemberAdded: instance {iid!r} already maps to a member")
        g.static_members[iid] = mid
    g.members[mid] = Member(
        info=rec.info,
        rebalance_timeout_ms=rec.rebalance_timeout_ms,
        session_timeout_ms=rec.session_timeout_ms,
        protocols=rec.protocols,
        join_request=rec.join_request,
        is_new=True,
    )
    g.pending_members.pop(mid, None)


@_on(r.MemberUpdated)
def _member_updated(g: Group, rec: r.MemberUpdated) -> None:
    m = _member(g, rec.member_id, rec)
    m.protocols = rec.protocols
    m.rebalance_timeout_ms = rec.rebalance_timeout_ms
    m.session_timeout_ms = rec.session_timeout_ms
    m.join_request = rec.join_request


@_on(r.JoinAnswered)
def _join_answered(g: Group, rec: r.JoinAnswered) -> None:
    _member(g, rec.member_id, rec).join_request = None


@_on(r.SyncParked)
def _sync_parked(g: Group, rec: r.SyncParked) -> None:
    _member(g, rec.member_id, rec).sync_request = rec.request_id


@_on(r.SyncAnswered)
def _sync_answered(g: Group, rec: r.SyncAnswered) -> None:
    _member(g, rec.member_id, rec).sync_request = None


@_on(r.MemberRemoved)
def _member_removed(g: Group, rec: r.MemberRemoved) -> None:
    mid = rec.member_id
    m = _member(g, mid, rec)
    del g.members[mid]
    if m.group_instance_id is not None:
        g.static_members.pop(m.group_instance_id, None)
    g.pending_sync_members.pop(mid, None)


@_on(r.PendingMemberAdded)
def _pending_member_added(g: Group, rec: r.PendingMemberAdded) -> None:
    # ClassicGroup.addPendingMember refuses a member id the group already has
    if rec.member_id in g.members:
        raise ReplayError(f"PendingMemberAdded: {rec.member_id!r} is already a member of {g.group_id!r}")
    g.pending_members[rec.member_id] = rec.deadline_ms


@_on(r.PendingMemberRemoved)
def _pending_member_removed(g: Group, rec: r.PendingMemberRemoved) -> None:
    mid = rec.member_id
    if mid not in g.pending_members:
        raise ReplayError(f"PendingMemberRemoved: {mid!r} is not pending in {g.group_id!r}")
    del g.pending_members[mid]


@_on(r.StaticMemberReplaced)
def _static_member_replaced(g: Group, rec: r.StaticMemberReplaced) -> None:
    old = _member(g, rec.old_member_id, rec)
    if g.static_members.get(rec.group_instance_id) != rec.old_member_id:
        raise ReplayError(
            f"StaticMemberReplaced: instance {rec.group_instance_id!r} does not map to "
            f"{rec.old_member_id!r}"
        )
    if old.is_awaiting_join or old.is_awaiting_sync:
        raise ReplayError("StaticMemberReplaced: the old member still has parked requests")
    del g.members[rec.old_member_id]
    info = r.MemberInfo(
        rec.new_member_id,
        old.info.group_instance_id,
        old.info.client_id,
        old.info.client_host,
        old.info.protocol_type,
    )
    g.members[rec.new_member_id] = Member(
        info=info,
        rebalance_timeout_ms=old.rebalance_timeout_ms,
        session_timeout_ms=old.session_timeout_ms,
        protocols=old.protocols,
        assignment=old.assignment,
    )
    g.static_members[rec.group_instance_id] = rec.new_member_id


@_on(r.LeaderChanged)
def _leader_changed(g: Group, rec: r.LeaderChanged) -> None:
    lid = rec.leader_id
    if lid is not None and lid not in g.members:
        raise ReplayError(f"LeaderChanged: {lid!r} is not a member of {g.group_id!r}")
    g.leader_id = lid


@_on(r.GenerationStarted)
def _generation_started(g: Group, rec: r.GenerationStarted) -> None:
    gen = rec.generation_id
    if gen != g.generation_id + 1:
        raise ReplayError(
            f"GenerationStarted: generation {gen} does not follow {g.generation_id}"
        )
    g.generation_id = gen
    g.protocol_name = rec.protocol_name
    # ClassicGroup.initNextGeneration recomputes the subscribed topics (OffsetDelete's)
    g.subscribed_topics = compute_subscribed_topics(g, rec.protocol_name)
    g.pending_sync_members.clear()


@_on(r.MembersMarkedJoined)
def _members_marked_joined(g: Group, rec: r.MembersMarkedJoined) -> None:
    for m in g.members.values():
        m.is_new = False


@_on(r.PendingSyncSet)
def _pending_sync_set(g: Group, rec: r.PendingSyncSet) -> None:
    # ClassicGroup.addPendingSyncMember and removePendingSyncMember refuse a member id the
    # group does not have
    for mid in rec.member_ids:
        _member(g, mid, rec)
    g.pending_sync_members = dict.fromkeys(rec.member_ids)


@_on(r.PendingSyncRemoved)
def _pending_sync_removed(g: Group, rec: r.PendingSyncRemoved) -> None:
    _member(g, rec.member_id, rec)
    g.pending_sync_members.pop(rec.member_id, None)


@_on(r.AssignmentsSet)
def _assignments_set(g: Group, rec: r.AssignmentsSet) -> None:
    by_id = dict(rec.assignments)
    for mid, m in g.members.items():
        m.assignment = by_id.get(mid, b"")


@_on(r.JoinTimerSet)
def _join_timer_set(g: Group, rec: r.JoinTimerSet) -> None:
    g.join_timer = rec.timer


@_on(r.SyncTimerSet)
def _sync_timer_set(g: Group, rec: r.SyncTimerSet) -> None:
    g.sync_timer = rec.timer


@_on(r.NewMemberAddedSet)
def _new_member_added_set(g: Group, rec: r.NewMemberAddedSet) -> None:
    g.new_member_added = rec.value


@_on(r.GroupMetadataPersisted)
def _group_metadata_persisted(g: Group, rec: r.GroupMetadataPersisted) -> None:
    g.persisted = rec.snapshot


@_on(r.GroupTombstoned)
def _group_tombstoned(g: Group, rec: r.GroupTombstoned) -> None:
    g.persisted = None


def _heartbeat_scheduled(g: Group, rec: r.HeartbeatScheduled) -> None:
    mid, deadline = rec.member_id, rec.deadline_ms
    if mid in g.pending_members:
        if deadline is None:
            raise ReplayError("HeartbeatScheduled: cannot cancel a pending member's timer")
        g.pending_members[mid] = deadline
    else:
        _member(g, mid, rec).heartbeat_deadline_ms = deadline


def _converted(state: CoordinatorState, rec: r.ClassicGroupConverted) -> None:
    if rec.group_id in state.groups or rec.group_id in state.consumer_groups:
        raise ReplayError(f"ClassicGroupConverted: group {rec.group_id!r} still exists")
    g = Group(rec.group_id, state=GroupState.Stable, state_timestamp_ms=rec.now_ms,
              generation_id=rec.generation_id, protocol_type=CONSUMER_PROTOCOL_TYPE,
              protocol_name=rec.protocol_name)
    for pm in rec.members:
        g.members[pm.info.member_id] = member_from(pm)
        if pm.info.group_instance_id is not None:
            g.static_members[pm.info.group_instance_id] = pm.info.member_id
    # ClassicGroup.add: the first member added leads
    g.leader_id = rec.members[0].info.member_id if rec.members else None
    g.subscribed_topics = compute_subscribed_topics(g, g.protocol_name)
    g.offsets = state.detached_offsets.pop(rec.group_id, {})
    g.offsets_in_log = bool(g.offsets)  # the consumer group's commits
    # the join timer of the classic group an earlier upgrade removed, if it still runs: the
    # same key (classicGroupJoinKey), so this group's own (the downgrade's rebalance) replaces it
    g.join_timer = state.detached_classic_join_timers.pop(rec.group_id, None)
    state.groups[rec.group_id] = g
    state.group_order.put(rec.group_id)


def _load(state: CoordinatorState, rec: r.GroupLoaded) -> None:
    if rec.group_id in state.groups:
        raise ReplayError(f"GroupLoaded: group {rec.group_id!r} is already loaded")
    g = Group(rec.group_id, state_timestamp_ms=rec.now_ms)
    snap = rec.snapshot
    if snap is not None:
        g.protocol_type = snap.protocol_type
        g.generation_id = snap.generation_id
        g.protocol_name = snap.protocol_name
        g.state_timestamp_ms = snap.state_timestamp_ms
        for pm in snap.members:
            # GroupMetadataValue keeps only each member's metadata for the selected protocol
            # (GroupCoordinatorRecordHelpers.newGroupMetadataRecord), and replay rebuilds the
            # member with that one protocol: after a failover a member no longer "matches"
            # its full protocol list, and the group supports only the selected protocol.
            selected = tuple(p for p in pm.protocols if p.name == snap.protocol_name)[:1]
            g.members[pm.info.member_id] = Member(
                info=pm.info,
                # a member written before rebalance timeouts existed (-1) takes its session
                # timeout (GroupMetadataManager.replay of a GroupMetadataValue)
                rebalance_timeout_ms=(pm.session_timeout_ms if pm.rebalance_timeout_ms == -1
                                      else pm.rebalance_timeout_ms),
                session_timeout_ms=pm.session_timeout_ms,
                protocols=selected,
                assignment=pm.assignment,
            )
            if pm.info.group_instance_id is not None:
                g.static_members[pm.info.group_instance_id] = pm.info.member_id
        g.leader_id = snap.leader_id if snap.leader_id in g.members else None
        g.state = GroupState.Stable if g.members else GroupState.Empty
        g.persisted = snap
        # GroupMetadataManager.replay of a GroupMetadataValue computes them on load
        g.subscribed_topics = compute_subscribed_topics(g, g.protocol_name)
    for topic, partition, offset, metadata, ts in rec.offsets:
        g.offsets[(topic, partition)] = CommittedOffset(offset, metadata, ts)
        note_commit(state.offset_order, rec.group_id, topic, partition)
    for topic, partition, epoch in rec.leader_epochs:
        c = g.offsets.get((topic, partition))
        if c is None:
            raise ReplayError(f"GroupLoaded: a leader epoch for {topic}-{partition}, an offset the group does not load")
        c.leader_epoch = epoch
    for topic, partition, expires in rec.expire_timestamps:
        c = g.offsets.get((topic, partition))
        if c is None:
            raise ReplayError(f"GroupLoaded: an expire timestamp for {topic}-{partition}, an offset the group does not load")
        c.expire_timestamp_ms = expire_timestamp_from_log(expires)
    # a group is loaded from what the log holds of it: its offset commits stay there (and
    # recreate it on the next load) whether or not an offset is left
    g.offsets_in_log = True
    state.groups[rec.group_id] = g
    state.group_order.put(rec.group_id)


def replay(records: list[r.Record], state: CoordinatorState | None = None) -> CoordinatorState:
    """Apply ``records`` in order to ``state`` (a fresh state by default) and return it."""
    st = state if state is not None else CoordinatorState()
    for rec in records:
        apply_record(st, rec)
    return st


def _apply_offsets(state: CoordinatorState, offsets: dict[tuple[str, int], CommittedOffset],
                   rec: r.Record) -> None:
    """Offsets are kept by group id whichever protocol the group speaks (Kafka keeps them
    apart from the group, in OffsetMetadataManager), and so is their order."""
    match rec:
        case r.OffsetCommitted():
            _commit_offset(state, offsets, rec)
        case r.OffsetsDeleted(partitions=parts):
            order = state.offset_order.get(rec.group_id)
            pending = state.pending_offsets.get(rec.group_id)
            pending_order = state.pending_order.get(rec.group_id)
            for tp in parts:
                offsets.pop(tp, None)
                if order is not None:
                    order.remove(*tp)
                if pending is not None:
                    # a tombstone drops the partition's pending transactional offsets too
                    # (OffsetMetadataManager.replay, openTransactions.clear)
                    pending.pop(tp, None)
                if pending_order is not None:
                    pending_order.remove(*tp)
            if order is not None and not order:
                del state.offset_order[rec.group_id]
            if pending is not None and not pending:
                del state.pending_offsets[rec.group_id]
            if pending_order is not None and not pending_order:
                del state.pending_order[rec.group_id]


def _pending_offset(state: CoordinatorState, rec: r.OffsetCommitted) -> None:
    """A transactional offset commit replayed: pending, kept by group id
    (OffsetMetadataManager.replay with a producer id). The group it names exists (the
    TxnOffsetCommit created a simple group if it had to); a classic group's offsets are
    then in the log (a failover reloads it)."""
    g = state.groups.get(rec.group_id)
    if g is not None:
        g.offsets_in_log = True
    elif rec.group_id not in state.consumer_groups:
        raise ReplayError(f"OffsetCommitted: no group {rec.group_id!r} for a transactional offset")
    state.pending_offsets.setdefault(rec.group_id, {}).setdefault((rec.topic, rec.partition), {})[
        rec.producer_id] = CommittedOffset(rec.committed_offset, rec.metadata, rec.commit_timestamp_ms,
                                           rec.leader_epoch, rec.expire_timestamp_ms)
    order = state.pending_order.get(rec.group_id)
    if order is None:
        order = state.pending_order[rec.group_id] = OffsetOrder()
    order.add(rec.topic, rec.partition)


def _commit_offset(state: CoordinatorState, offsets: dict[tuple[str, int], CommittedOffset],
                   rec: r.OffsetCommitted) -> None:
    """An offset commit replayed (see :func:`_apply_offsets`)."""
    offsets[(rec.topic, rec.partition)] = CommittedOffset(
        rec.committed_offset, rec.metadata, rec.commit_timestamp_ms, rec.leader_epoch,
        rec.expire_timestamp_ms,
    )
    note_commit(state.offset_order, rec.group_id, rec.topic, rec.partition)

"""Timer expiry as input: the coordinator never reads a clock.

Each deadline lives in state as data (a member's session deadline, a pending member's
deadline, the group's join and sync timers). :func:`due_timers` lists those at or before
``now_ms``; :func:`fire` runs one. Kafka's timers with equal deadlines fire in an arbitrary
order; here they fire by (deadline, kind, group, member), one of the orders the spec allows.

Sources: GroupMetadataManager.expireClassicGroupMemberHeartbeat, completeClassicGroupJoin
(DelayedJoin), tryCompleteInitialRebalanceElseSchedule (InitialDelayedJoin),
expirePendingSync (DelayedSync, KAFKA-12890) and OffsetMetadataManager.cleanupExpiredOffsets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.consumer import heartbeat as consumer
from groupspec.coordinator.consumer.group import ConsumerGroup, ConsumerTimers
from groupspec.coordinator.context import Txn
from groupspec.coordinator.offsets import expire_offsets
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import records as r
from groupspec.protocol.group_state import GroupState

S = GroupState


class TimerKind(Enum):
    """Timer inputs, named as the spec's actions."""

    ExpireHeartbeat = 0
    ExpirePendingMember = 1
    ExpireJoin = 2
    ExpireSync = 3
    ExpireOffsets = 4
    #: a consumer group (KIP-848) member's session timeout
    ExpireConsumerSession = 5
    #: a consumer group member's rebalance timeout (it did not revoke in time)
    ExpireConsumerRebalance = 6
    #: a classic member of a consumer group: its join and sync timeouts
    ExpireConsumerClassicJoin = 7
    ExpireConsumerClassicSync = 8


@dataclass(frozen=True, order=True)
class Expiry:
    deadline_ms: int
    kind: TimerKind
    group_id: str
    member_id: str = ""

    def describe(self) -> str:
        who = f" {self.member_id}" if self.member_id else ""
        return f"{self.kind.name} {self.group_id}{who}"


def _sort_key(e: Expiry) -> tuple[int, int, str, str]:
    return (e.deadline_ms, e.kind.value, e.group_id, e.member_id)


def _timers(state: CoordinatorState) -> Iterator[tuple[int, TimerKind, str, str]]:
    """Every timer running in ``state``: (deadline, kind, group, member), in no order."""
    for g in state.groups.values():
        for mid, m in g.members.items():
            if m.heartbeat_deadline_ms is not None:
                yield m.heartbeat_deadline_ms, TimerKind.ExpireHeartbeat, g.group_id, mid
        for mid, deadline in g.pending_members.items():
            yield deadline, TimerKind.ExpirePendingMember, g.group_id, mid
        if g.join_timer is not None:
            yield g.join_timer.deadline_ms, TimerKind.ExpireJoin, g.group_id, ""
        if g.sync_timer is not None:
            yield g.sync_timer.deadline_ms, TimerKind.ExpireSync, g.group_id, ""
    for gid, t in state.detached_classic_join_timers.items():
        yield t.deadline_ms, TimerKind.ExpireJoin, gid, ""
    # a consumer group's, and those of a consumer group gone (a downgrade, a deletion) that
    # still run (ConsumerTimers)
    tables: list[tuple[str, ConsumerGroup | ConsumerTimers]] = [*state.consumer_groups.items()]
    tables += state.detached_consumer_timers.items()
    for gid, cg in tables:
        for mid, deadline in cg.session_deadlines.items():
            yield deadline, TimerKind.ExpireConsumerSession, gid, mid
        for mid, rt in cg.rebalance_timers.items():
            yield rt.deadline_ms, TimerKind.ExpireConsumerRebalance, gid, mid
        for mid, deadline in cg.classic_join_deadlines.items():
            yield deadline, TimerKind.ExpireConsumerClassicJoin, gid, mid
        for mid, deadline in cg.classic_sync_deadlines.items():
            yield deadline, TimerKind.ExpireConsumerClassicSync, gid, mid


def deadlines(state: CoordinatorState) -> Iterator[int]:
    """The deadlines of the timers :func:`all_timers` lists, in no order (the replay asks
    many times per request whether one falls in a window)."""
    return (t[0] for t in _timers(state))


def earliest_deadline(state: CoordinatorState) -> int | None:
    """``min(deadlines(state), default=None)``: the earliest deadline of a running timer,
    None without one, read in the same order without a tuple per timer (a simulator asks
    after each input to the coordinator, and :meth:`Coordinator.advance` at each call;
    tests/test_generate_fast.py compares the two)."""
    best: int | None = None
    for g in state.groups.values():
        for m in g.members.values():
            d = m.heartbeat_deadline_ms
            if d is not None and (best is None or d < best):
                best = d
        for d in g.pending_members.values():
            if best is None or d < best:
                best = d
        if g.join_timer is not None:
            d = g.join_timer.deadline_ms
            if best is None or d < best:
                best = d
        if g.sync_timer is not None:
            d = g.sync_timer.deadline_ms
            if best is None or d < best:
                best = d
    for t in state.detached_classic_join_timers.values():
        if best is None or t.deadline_ms < best:
            best = t.deadline_ms
    tables: list[ConsumerGroup | ConsumerTimers] = [*state.consumer_groups.values()]
    tables += state.detached_consumer_timers.values()
    for cg in tables:
        for d in cg.session_deadlines.values():
            if best is None or d < best:
                best = d
        for rt in cg.rebalance_timers.values():
            d = rt.deadline_ms
            if best is None or d < best:
                best = d
        for d in cg.classic_join_deadlines.values():
            if best is None or d < best:
                best = d
        for d in cg.classic_sync_deadlines.values():
            if best is None or d < best:
                best = d
    return best


def all_timers(state: CoordinatorState) -> list[Expiry]:
    out = [Expiry(*t) for t in _timers(state)]
    out.sort(key=_sort_key)
    return out


def due_timers(state: CoordinatorState, now_ms: int) -> list[Expiry]:
    return [e for e in all_timers(state) if e.deadline_ms <= now_ms]


_CONSUMER_TIMERS = {
    TimerKind.ExpireConsumerSession: cr.ConsumerSessionTimerSet,
    TimerKind.ExpireConsumerRebalance: cr.ConsumerRebalanceTimerSet,
    TimerKind.ExpireConsumerClassicJoin: cr.ConsumerClassicJoinTimerSet,
    TimerKind.ExpireConsumerClassicSync: cr.ConsumerClassicSyncTimerSet,
}


def _consumer_deadline(cg: ConsumerGroup | ConsumerTimers, e: Expiry) -> int | None:
    if e.kind is TimerKind.ExpireConsumerSession:
        return cg.session_deadlines.get(e.member_id)
    if e.kind is TimerKind.ExpireConsumerRebalance:
        rt = cg.rebalance_timers.get(e.member_id)
        return None if rt is None else rt.deadline_ms
    table = cg.classic_sync_deadlines if e.kind is TimerKind.ExpireConsumerClassicSync else cg.classic_join_deadlines
    return table.get(e.member_id)


def _fire_consumer_timer(txn: Txn, e: Expiry) -> None:
    cg = txn.state.consumer_groups.get(e.group_id)
    if cg is None:
        # the timer of a consumer group gone (ConsumerTimers): its callback finds a classic
        # group or none (consumerGroup(groupId) throws GroupIdNotFoundException) and does
        # nothing; the timer is spent
        detached = txn.state.detached_consumer_timers.get(e.group_id)
        if detached is not None and _consumer_deadline(detached, e) == e.deadline_ms:
            txn.emit(_CONSUMER_TIMERS[e.kind](e.group_id, e.member_id, None))
        return
    if _consumer_deadline(cg, e) != e.deadline_ms:
        return
    if e.kind is TimerKind.ExpireConsumerSession:
        consumer.expire_session(txn, e.group_id, e.member_id)
    elif e.kind is TimerKind.ExpireConsumerRebalance:
        consumer.expire_rebalance(txn, e.group_id, e.member_id, cg.rebalance_timers[e.member_id].member_epoch)
    else:
        consumer.expire_classic_timer(txn, e.group_id, e.member_id, e.kind is TimerKind.ExpireConsumerClassicSync)


def fire(txn: Txn, e: Expiry) -> None:
    if e.kind in _CONSUMER_TIMERS:
        _fire_consumer_timer(txn, e)
        return
    group = txn.state.groups.get(e.group_id)
    if group is None:
        detached = txn.state.detached_classic_join_timers.get(e.group_id)
        if e.kind is TimerKind.ExpireJoin and detached is not None and detached.deadline_ms == e.deadline_ms:
            # the join timer of a classic group an upgrade removed: completeClassicGroupJoin
            # finds no classic group (GroupIdNotFoundException) and does nothing
            txn.emit(r.JoinTimerSet(e.group_id, None))
        return
    if e.kind is TimerKind.ExpireOffsets:
        expire_offsets(txn, group)
    elif e.kind is TimerKind.ExpirePendingMember:
        if group.pending_members.get(e.member_id) == e.deadline_ms:
            rb.remove_pending_member_and_update_group(
                txn, group, e.member_id, "pending member session expired"
            )
    elif e.kind is TimerKind.ExpireHeartbeat:
        m = group.members.get(e.member_id)
        if m is None or m.heartbeat_deadline_ms != e.deadline_ms:
            return
        txn.emit(r.HeartbeatScheduled(group.group_id, e.member_id, None))
        if group.state is not S.Dead and not m.has_satisfied_heartbeat():
            rb.remove_member_and_update_group(txn, group, m, "session timeout expired")
    elif e.kind is TimerKind.ExpireJoin:
        t = group.join_timer
        if t is None or t.deadline_ms != e.deadline_ms:
            return
        if t.initial:
            _initial_delay_expired(txn, e.group_id, t)
        else:
            rb.complete_join(txn, group)
    elif e.kind is TimerKind.ExpireSync:
        st = group.sync_timer
        if st is None or st.deadline_ms != e.deadline_ms:
            return
        txn.emit(r.SyncTimerSet(group.group_id, None))
        _expire_pending_sync(txn, e.group_id, st.generation_id)


def _initial_delay_expired(txn: Txn, group_id: str, t: r.JoinTimer) -> None:
    """tryCompleteInitialRebalanceElseSchedule: a member joined during the delay, so wait
    once more (at most the remaining rebalance timeout), else complete the join."""
    group = txn.state.groups[group_id]
    if group.new_member_added and t.remaining_ms != 0:
        txn.emit(r.NewMemberAddedSet(group_id, False))
        delay = min(txn.config.group_initial_rebalance_delay_ms, t.remaining_ms)
        remaining = max(t.remaining_ms - t.delay_ms, 0)
        txn.emit(r.JoinTimerSet(group_id, r.JoinTimer(txn.now_ms + delay, True, delay, remaining)))
    else:
        rb.complete_join(txn, group)


def _expire_pending_sync(txn: Txn, group_id: str, generation_id: int) -> None:
    """expirePendingSync: members that never sent SyncGroup for this generation are removed,
    leader or follower, static or dynamic, and a rebalance starts."""
    group = txn.state.groups[group_id]
    if generation_id != group.generation_id:
        return
    if group.state not in (S.CompletingRebalance, S.Stable):
        return
    if not group.pending_sync_members:
        return
    for mid in list(group.pending_sync_members):
        rb.cancel_heartbeat(txn, group, mid)
        rb.remove_member(txn, group, mid, "did not send SyncGroup before the rebalance timeout")
    rb.prepare_rebalance(txn, group, "pending SyncGroup expired")

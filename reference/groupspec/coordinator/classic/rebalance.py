"""The rebalance machinery shared by every request kind: starting a rebalance, completing the
join phase, removing members, timers and propagating assignments.

Each function mirrors one function of group-coordinator/.../GroupMetadataManager.java (named
in its docstring); where the older core/.../GroupCoordinator.scala behaves differently, the
Java behaviour (Kafka 4.x) is modelled and the difference is noted.
"""

from __future__ import annotations

from groupspec.coordinator.classic.group import Group, Member
from groupspec.coordinator.context import Txn
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState, can_rebalance
from groupspec.protocol.messages import (
    UNKNOWN_MEMBER_ID,
    JoinGroupResponse,
    SyncGroupResponse,
)

S = GroupState


def transition(txn: Txn, group: Group, target: GroupState) -> None:
    """ClassicGroup.transitionTo; the replay checks the valid-previous-state table."""
    txn.emit(r.StateChanged(group.group_id, target, txn.now_ms))


def snapshot(group: Group, assignments: dict[str, bytes] | None = None) -> r.GroupSnapshot:
    """GroupCoordinatorRecordHelpers.newGroupMetadataRecord: the persisted group record."""
    members = tuple(
        r.PersistedMember(
            info=m.info,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            session_timeout_ms=m.session_timeout_ms,
            protocols=m.protocols,
            assignment=m.assignment if assignments is None else assignments.get(m.member_id, b""),
        )
        for m in group.members.values()
    )
    return r.GroupSnapshot(
        protocol_type=group.protocol_type,
        generation_id=group.generation_id,
        protocol_name=group.protocol_name,
        leader_id=group.leader_id,
        state_timestamp_ms=group.state_timestamp_ms,
        members=members,
    )


def persist(txn: Txn, group: Group, assignments: dict[str, bytes] | None = None) -> None:
    txn.emit(r.GroupMetadataPersisted(group.group_id, snapshot(group, assignments)))


def reschedule_heartbeat(txn: Txn, group: Group, member_id: str, timeout_ms: int) -> None:
    """rescheduleClassicGroupMemberHeartbeat: (re)arm the member's session timer."""
    txn.emit(r.HeartbeatScheduled(group.group_id, member_id, txn.now_ms + timeout_ms))


def cancel_heartbeat(txn: Txn, group: Group, member_id: str) -> None:
    if member_id in group.members and group.members[member_id].heartbeat_deadline_ms is not None:
        txn.emit(r.HeartbeatScheduled(group.group_id, member_id, None))


def complete_join_future(txn: Txn, group: Group, member: Member, response: JoinGroupResponse) -> bool:
    """ClassicGroup.completeJoinFuture: answer the member's parked JoinGroup, if any."""
    if member.join_request is None:
        return False
    rid = member.join_request
    txn.emit(r.JoinAnswered(group.group_id, member.member_id))
    txn.respond(rid, response)
    return True


def complete_sync_future(txn: Txn, group: Group, member: Member, response: SyncGroupResponse) -> bool:
    if member.sync_request is None:
        return False
    rid = member.sync_request
    txn.emit(r.SyncAnswered(group.group_id, member.member_id))
    txn.respond(rid, response)
    return True


def remove_member(txn: Txn, group: Group, member_id: str, reason: str) -> None:
    """ClassicGroup.remove: drop the member; if it led, the first remaining member leads
    (Kafka: HashMap iteration order; the completion step re-elects among rejoined ones)."""
    was_leader = group.is_leader(member_id)
    if member_id in group.pending_members:
        txn.emit(r.PendingMemberRemoved(group.group_id, member_id, reason))
    if member_id in group.members:
        txn.emit(r.MemberRemoved(group.group_id, member_id, reason))
    if was_leader:
        txn.emit(r.LeaderChanged(group.group_id, next(iter(group.members), None)))


def remove_sync_expiration(txn: Txn, group: Group) -> None:
    """removeSyncExpiration: clear pending-sync members and cancel DelayedSync."""
    if group.pending_sync_members:
        txn.emit(r.PendingSyncSet(group.group_id, ()))
    if group.sync_timer is not None:
        txn.emit(r.SyncTimerSet(group.group_id, None))


def propagate_assignment(txn: Txn, group: Group, error: Error) -> None:
    """propagateAssignment: answer every parked SyncGroup; each answered member's session
    timer is rescheduled."""
    ok = error is Error.NONE
    for m in list(group.members.values()):
        resp = SyncGroupResponse(
            error=error,
            protocol_type=group.protocol_type if ok else None,
            protocol_name=group.protocol_name if ok else None,
            assignment=m.assignment,
        )
        if complete_sync_future(txn, group, m, resp):
            reschedule_heartbeat(txn, group, m.member_id, m.session_timeout_ms)


def reset_and_propagate_assignment_with_error(txn: Txn, group: Group, error: Error) -> None:
    """resetAndPropagateAssignmentWithError: clear assignments, fail parked SyncGroups."""
    assert group.state is S.CompletingRebalance, group.state
    txn.emit(r.AssignmentsSet(group.group_id, group.generation_id, ()))
    propagate_assignment(txn, group, error)


def prepare_rebalance(txn: Txn, group: Group, reason: str) -> None:
    """prepareRebalance: enter PreparingRebalance. From Empty the InitialDelayedJoin timer
    (group.initial.rebalance.delay.ms) is armed and the phase never completes early;
    otherwise the join may complete at once, or DelayedJoin waits the rebalance timeout."""
    if group.state is S.CompletingRebalance:
        reset_and_propagate_assignment_with_error(txn, group, Error.REBALANCE_IN_PROGRESS)
    remove_sync_expiration(txn, group)
    initial = group.state is S.Empty
    if initial:
        delay = txn.config.group_initial_rebalance_delay_ms
        remaining = max(group.rebalance_timeout_ms() - delay, 0)
        txn.emit(
            r.JoinTimerSet(
                group.group_id, r.JoinTimer(txn.now_ms + delay, True, delay, remaining)
            )
        )
    transition(txn, group, S.PreparingRebalance)
    if not initial:
        maybe_complete_join_else_schedule(txn, group)


def maybe_complete_join_else_schedule(txn: Txn, group: Group) -> None:
    if group.has_all_members_joined():
        complete_join(txn, group)
    else:
        arm_join_timer(txn, group)


def arm_join_timer(txn: Txn, group: Group) -> None:
    """DelayedJoin with the group's rebalance timeout, evaluated now."""
    txn.emit(
        r.JoinTimerSet(
            group.group_id, r.JoinTimer(txn.now_ms + group.rebalance_timeout_ms(), False)
        )
    )


def maybe_complete_join_phase(txn: Txn, group: Group) -> None:
    """maybeCompleteJoinPhase: complete when everyone joined, except when the rebalance
    started from Empty (the initial delay always runs out)."""
    if group.state is not S.PreparingRebalance:
        return
    if group.previous_state is S.Empty:
        return
    if not group.has_all_members_joined():
        return
    complete_join(txn, group)


def maybe_prepare_rebalance_or_complete_join(txn: Txn, group: Group, reason: str) -> None:
    if can_rebalance(group.state):
        prepare_rebalance(txn, group, reason)
    else:
        maybe_complete_join_phase(txn, group)


def maybe_elect_new_joined_leader(txn: Txn, group: Group) -> bool:
    """ClassicGroup.maybeElectNewJoinedLeader: keep a leader that rejoined, else pick the
    first member that did; False if no member rejoined (or there is no leader)."""
    if group.leader_id is None:
        return False
    leader = group.members.get(group.leader_id)
    if leader is not None and leader.is_awaiting_join:
        return True
    for m in group.members.values():
        if m.is_awaiting_join:
            txn.emit(r.LeaderChanged(group.group_id, m.member_id))
            return True
    return False


def complete_join(txn: Txn, group: Group) -> None:
    """completeClassicGroupJoin: end the join phase.

    Dynamic members that did not rejoin are removed; static ones stay with their old
    metadata (KAFKA-8220). If no member rejoined the timer is re-armed. Otherwise the
    generation grows by one and every parked JoinGroup is answered; the leader alone gets
    the member list. Every member becomes pending-sync and DelayedSync is armed.
    """
    if group.join_timer is not None:
        txn.emit(r.JoinTimerSet(group.group_id, None))
    for m in [m for m in group.not_yet_rejoined() if not m.is_static]:
        remove_member(txn, group, m.member_id, "did not rejoin before the join phase ended")
    if group.state is S.Dead:
        return
    if not maybe_elect_new_joined_leader(txn, group) and group.members:
        # Kafka re-arms DelayedJoin at the group's rebalance timeout, 0 when every member's
        # is 0 or negative: its timer then fires again at once, as often as its event loop
        # runs, until a member rejoins or a session expires. The model's clock moves 1 ms a
        # firing instead of standing still for ever (docs/deviations.md, "A join timer
        # re-armed with no delay"; the JVM harness's ManualShardRuntime.advance does the same)
        txn.emit(r.JoinTimerSet(
            group.group_id, r.JoinTimer(txn.now_ms + max(group.rebalance_timeout_ms(), 1), False)))
        return
    protocol = group.select_protocol() if group.members else None
    txn.emit(r.GenerationStarted(group.group_id, group.generation_id + 1, protocol))
    if not group.members:
        transition(txn, group, S.Empty)
        persist(txn, group, {})
        return
    transition(txn, group, S.CompletingRebalance)
    leader_members = group.current_member_metadata()
    for m in list(group.members.values()):
        complete_join_future(
            txn,
            group,
            m,
            JoinGroupResponse(
                error=Error.NONE,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=group.leader_id or "",
                skip_assignment=False,
                member_id=m.member_id,
                members=leader_members if group.is_leader(m.member_id) else (),
            ),
        )
        reschedule_heartbeat(txn, group, m.member_id, m.session_timeout_ms)
    txn.emit(r.MembersMarkedJoined(group.group_id))
    txn.emit(r.PendingSyncSet(group.group_id, tuple(group.members)))
    txn.emit(
        r.SyncTimerSet(
            group.group_id,
            r.SyncTimer(txn.now_ms + group.rebalance_timeout_ms(), group.generation_id),
        )
    )


def remove_member_and_update_group(txn: Txn, group: Group, member: Member, reason: str) -> None:
    """removeMemberAndUpdateClassicGroup (session expiry): fail its parked JoinGroup,
    remove it, and rebalance (Stable, CompletingRebalance) or re-check completion."""
    complete_join_future(
        txn, group, member, JoinGroupResponse(error=Error.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID)
    )
    remove_member(txn, group, member.member_id, reason)
    if group.state in (S.Stable, S.CompletingRebalance):
        maybe_prepare_rebalance_or_complete_join(txn, group, reason)
    elif group.state is S.PreparingRebalance and group.has_all_members_joined():
        complete_join(txn, group)


def remove_pending_member_and_update_group(txn: Txn, group: Group, member_id: str, reason: str) -> None:
    """removePendingMemberAndUpdateClassicGroup."""
    remove_member(txn, group, member_id, reason)
    if group.state is S.PreparingRebalance and group.has_all_members_joined():
        complete_join(txn, group)

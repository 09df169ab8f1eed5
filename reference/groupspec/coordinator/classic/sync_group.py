"""SyncGroup: the leader hands out the assignment; followers wait for it.

Mirrors GroupMetadataManager.classicGroupSync / classicGroupSyncToClassicGroup,
validateSyncGroup, setAndPropagateAssignment and removePendingSyncMember
(group-coordinator/.../GroupMetadataManager.java). Persisting the leader's assignment is
modelled as an append that succeeds at once; Kafka completes it asynchronously and
re-checks that the group is still CompletingRebalance in the same generation, which holds
trivially here.
"""

from __future__ import annotations

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic import to_consumer_group
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.classic.membership import validate_member
from groupspec.coordinator.context import Txn
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import SyncGroupRequest, SyncGroupResponse

S = GroupState


def _validate(group: Group, req: SyncGroupRequest) -> Error:
    """validateSyncGroup: Dead, member, generation, then protocol type and name (v5+)."""
    if group.state is S.Dead:
        return Error.COORDINATOR_NOT_AVAILABLE
    error = validate_member(group, req.member_id, req.group_instance_id)
    if error is not Error.NONE:
        return error
    if req.generation_id != group.generation_id:
        return Error.ILLEGAL_GENERATION
    if _inconsistent(req.protocol_type, group.protocol_type) or _inconsistent(
        req.protocol_name, group.protocol_name
    ):
        return Error.INCONSISTENT_GROUP_PROTOCOL
    return Error.NONE


def _inconsistent(from_request: str | None, from_group: str | None) -> bool:
    # isProtocolInconsistent (GroupMetadataManager.java): only when the request carries a
    # value (v5+) and the group has one too. A group rebalancing has no protocol name until
    # its join phase completes, so a SyncGroup naming any protocol then is not
    # INCONSISTENT_GROUP_PROTOCOL but goes on to REBALANCE_IN_PROGRESS.
    return from_request is not None and from_group is not None and from_request != from_group


def remove_pending_sync_member(txn: Txn, group: Group, member_id: str) -> None:
    """removePendingSyncMember: cancel DelayedSync once everyone has synced."""
    if member_id in group.pending_sync_members:
        txn.emit(r.PendingSyncRemoved(group.group_id, member_id))
    if group.sync_timer is None:
        return
    if group.state in (S.Dead, S.Empty, S.PreparingRebalance) or not group.pending_sync_members:
        txn.emit(r.SyncTimerSet(group.group_id, None))


def handle_sync_group(txn: Txn, request_id: int, req: SyncGroupRequest) -> None:
    def answer(error: Error) -> None:
        txn.respond(request_id, SyncGroupResponse(error=error))

    if req.group_id == "":
        # GroupCoordinatorService.syncGroup rejects an empty group id before the shard.
        return answer(Error.INVALID_GROUP_ID)
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        # classicGroupSync: an empty group is UNKNOWN_MEMBER_ID, else classicGroupSyncToConsumerGroup
        if not consumer_group.members:
            return answer(Error.UNKNOWN_MEMBER_ID)
        return txn.respond(request_id, to_consumer_group.sync(txn, consumer_group, req))
    group = txn.state.groups.get(req.group_id)
    if group is None or group.state is S.Empty:
        # Java answers an unknown or Empty group before any other check.
        return answer(Error.UNKNOWN_MEMBER_ID)
    error = _validate(group, req)
    if error is not Error.NONE:
        return answer(error)
    if group.state is S.PreparingRebalance:
        return answer(Error.REBALANCE_IN_PROGRESS)
    if group.state is S.CompletingRebalance:
        txn.emit(r.SyncParked(group.group_id, req.member_id, request_id))
        remove_pending_sync_member(txn, group, req.member_id)
        if group.is_leader(req.member_id):
            # Members the leader left out get an empty assignment; extra keys are ignored.
            # The coordinator stores opaque bytes: it checks nothing about their content.
            given = {a.member_id: a.assignment for a in req.assignments}
            assignments = {mid: given.get(mid, b"") for mid in group.members}
            rb.persist(txn, group, assignments)
            txn.emit(
                r.AssignmentsSet(group.group_id, group.generation_id, tuple(assignments.items()))
            )
            rb.propagate_assignment(txn, group, Error.NONE)
            rb.transition(txn, group, S.Stable)
        return None
    # Stable: hand out the stored assignment; an assignment map sent now is ignored.
    # (Scala also reset the session timer here; Java does not.)
    remove_pending_sync_member(txn, group, req.member_id)
    member = group.members[req.member_id]
    txn.respond(
        request_id,
        SyncGroupResponse(
            error=Error.NONE,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            assignment=member.assignment,
        ),
    )
    return None

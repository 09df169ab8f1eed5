"""LeaveGroup: dynamic members leaving, and batch removal of static members (KIP-345).

Mirrors GroupMetadataManager.classicGroupLeaveToClassicGroup and
removeCurrentMemberFromClassicGroup (group-coordinator/.../GroupMetadataManager.java). As in
Java, one rebalance decision is taken after the whole batch (Scala took it per member).
A LeaveGroup to a consumer group (KIP-848): classic/to_consumer_group.py.
"""

from __future__ import annotations

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic import to_consumer_group
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.classic.membership import validate_member
from groupspec.coordinator.context import Txn
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import (
    UNKNOWN_MEMBER_ID,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
)

S = GroupState


def _remove_current_member(txn: Txn, group: Group, member_id: str, reason: str) -> None:
    member = group.members[member_id]
    rb.cancel_heartbeat(txn, group, member_id)
    rb.complete_join_future(
        txn,
        group,
        member,
        JoinGroupResponse(error=Error.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID),
    )
    rb.remove_member(txn, group, member_id, reason)


def unknown_group_answer(req: LeaveGroupRequest) -> LeaveGroupResponse:
    """GroupCoordinatorService.leaveGroup (exceptionally: UNKNOWN_MEMBER_ID from the shard)."""
    return LeaveGroupResponse(
        error=Error.NONE,
        members=tuple(
            LeaveGroupMemberResponse(x.member_id, x.group_instance_id, Error.UNKNOWN_MEMBER_ID)
            for x in req.members
        ),
    )


def handle_leave_group(txn: Txn, request_id: int, req: LeaveGroupRequest) -> None:
    if req.group_id == "":
        # GroupCoordinatorService.leaveGroup rejects an empty group id before the shard.
        txn.respond(request_id, LeaveGroupResponse(error=Error.INVALID_GROUP_ID))
        return
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        txn.respond(request_id, to_consumer_group.leave(txn, consumer_group, req))
        return
    group = txn.state.groups.get(req.group_id)
    if group is None:
        # The shard (GroupMetadataManager.classicGroupLeave) throws UnknownMemberIdException,
        # but GroupCoordinatorService.leaveGroup turns that exception into top-level NONE and
        # UNKNOWN_MEMBER_ID for every identity of the request, echoing its member and instance
        # ids (GroupCoordinatorServiceTest.testLeaveGroupThrowsUnknownMemberIdException). The
        # wire carries the service's answer, so that is what the reference gives.
        txn.respond(request_id, unknown_group_answer(req))
        return
    if group.state is S.Dead:
        txn.respond(request_id, LeaveGroupResponse(error=Error.COORDINATOR_NOT_AVAILABLE))
        return
    results: list[LeaveGroupMemberResponse] = []
    for ident in req.members:
        reason = ident.reason or "not provided"
        if ident.member_id == UNKNOWN_MEMBER_ID:
            # Administrative removal of a static member by its instance id.
            mapped = (
                group.static_member_id(ident.group_instance_id)
                if ident.group_instance_id is not None
                else None
            )
            if mapped is not None:
                _remove_current_member(txn, group, mapped, reason)
                error = Error.NONE
            else:
                error = Error.UNKNOWN_MEMBER_ID
        elif group.is_pending_member(ident.member_id):
            rb.remove_member(txn, group, ident.member_id, reason)
            error = Error.NONE
        else:
            error = validate_member(group, ident.member_id, ident.group_instance_id)
            if error is Error.NONE:
                _remove_current_member(txn, group, ident.member_id, reason)
        results.append(LeaveGroupMemberResponse(ident.member_id, ident.group_instance_id, error))
    if any(x.error is Error.NONE for x in results):
        # Java counts every successful identity, a pending one included, as a reason to act.
        if group.state in (S.Stable, S.CompletingRebalance):
            rb.maybe_prepare_rebalance_or_complete_join(txn, group, "explicit LeaveGroup")
        elif group.state is S.PreparingRebalance:
            rb.maybe_complete_join_phase(txn, group)
    txn.respond(request_id, LeaveGroupResponse(error=Error.NONE, members=tuple(results)))

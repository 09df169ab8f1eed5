"""Heartbeat: how members stay alive and learn that a rebalance started.

Mirrors GroupMetadataManager.classicGroupHeartbeatToClassicGroup and
validateClassicGroupHeartbeat (group-coordinator/.../GroupMetadataManager.java).
"""

from __future__ import annotations

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic import to_consumer_group
from groupspec.coordinator.classic.membership import validate_member
from groupspec.coordinator.context import Txn
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import HeartbeatRequest, HeartbeatResponse

S = GroupState


def handle_heartbeat(txn: Txn, request_id: int, req: HeartbeatRequest) -> None:
    def answer(error: Error) -> None:
        txn.respond(request_id, HeartbeatResponse(error=error))

    if req.group_id == "":
        # GroupCoordinatorService.heartbeat rejects an empty group id before the shard.
        return answer(Error.INVALID_GROUP_ID)
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        # classicGroupHeartbeatToConsumerGroup
        return answer(to_consumer_group.heartbeat(txn, consumer_group, req.member_id,
                                                  req.group_instance_id, req.generation_id))
    group = txn.state.groups.get(req.group_id)
    if group is None:
        return answer(Error.UNKNOWN_MEMBER_ID)
    if group.state is S.Dead:
        return answer(Error.COORDINATOR_NOT_AVAILABLE)
    error = validate_member(group, req.member_id, req.group_instance_id)
    if error is not Error.NONE:
        return answer(error)
    if req.generation_id != group.generation_id:
        return answer(Error.ILLEGAL_GENERATION)
    if group.state is S.Empty:
        return answer(Error.UNKNOWN_MEMBER_ID)
    member = group.members[req.member_id]
    rb.reschedule_heartbeat(txn, group, req.member_id, member.session_timeout_ms)
    if group.state is S.PreparingRebalance:
        # This is how members learn that a rebalance started.
        return answer(Error.REBALANCE_IN_PROGRESS)
    # CompletingRebalance (NONE since KAFKA-10134) and Stable.
    return answer(Error.NONE)

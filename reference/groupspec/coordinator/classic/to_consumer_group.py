"""Classic-protocol requests to a consumer group (KIP-848): GroupMetadataManager's
classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup, for the groups the reference models,
which have no classic members (mixed groups, part of online migration, are not modelled:
docs/deviations.md).

Without classic members no such request succeeds: a member is found by its instance id or
member id (validateConsumerGroupMember: an unknown one is UNKNOWN_MEMBER_ID, a static
member's instance id named with another member id FENCED_INSTANCE_ID), and then it does not
use the classic protocol (throwIfMemberDoesNotUseClassicProtocol: UNKNOWN_MEMBER_ID).
A JoinGroup would make the member a classic member of the group: that raises NotModelled.
"""

from __future__ import annotations

from typing import NoReturn

from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.state import NotModelled
from groupspec.protocol.errors import Error
from groupspec.protocol.messages import (
    UNKNOWN_MEMBER_ID,
    JoinGroupRequest,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
)


def member_error(group: ConsumerGroup, member_id: str, instance_id: str | None) -> Error:
    """validateConsumerGroupMember, then throwIfMemberDoesNotUseClassicProtocol: the error of
    a Heartbeat or SyncGroup (classicGroup{Heartbeat,Sync}ToConsumerGroup) from this
    identity. (SyncGroup to an empty consumer group is UNKNOWN_MEMBER_ID before this.)"""
    if instance_id is not None:
        static = group.static_member(instance_id)
        if static is not None and static.member_id != member_id:
            return Error.FENCED_INSTANCE_ID
    return Error.UNKNOWN_MEMBER_ID


def leave(group: ConsumerGroup, req: LeaveGroupRequest) -> LeaveGroupResponse:
    """classicGroupLeaveToConsumerGroup: nobody leaves, nothing is written; NONE with each
    identity's error. An instance id with no member id is an administrative removal: the
    fencing check is skipped (the member found is still not a classic one)."""
    results = []
    for ident in req.members:
        error = Error.UNKNOWN_MEMBER_ID
        if ident.member_id != UNKNOWN_MEMBER_ID:
            error = member_error(group, ident.member_id, ident.group_instance_id)
        results.append(LeaveGroupMemberResponse(ident.member_id, ident.group_instance_id, error))
    return LeaveGroupResponse(error=Error.NONE, members=tuple(results))


def join(group: ConsumerGroup, req: JoinGroupRequest) -> NoReturn:
    """classicGroupJoinToConsumerGroup (a consumer group with members): not modelled."""
    raise NotModelled(
        f"JoinGroup to {group.group_id!r}, a consumer group with members: Kafka makes the "
        "classic member one of them (GroupMetadataManager.classicGroupJoinToConsumerGroup, "
        "KIP-848 mixed groups); the reference does not model mixed groups")

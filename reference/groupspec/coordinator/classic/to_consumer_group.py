"""Classic-protocol requests to a consumer group (KIP-848): GroupMetadataManager's
classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup, for the groups the reference models,
which have no classic members (mixed groups, part of online migration, are not modelled:
docs/deviations.md).

Without classic members no Heartbeat or SyncGroup succeeds: a member is found by its
instance id or member id (validateConsumerGroupMember: an unknown one is UNKNOWN_MEMBER_ID,
a static member's instance id named with another member id FENCED_INSTANCE_ID), and then it
does not use the classic protocol (throwIfMemberDoesNotUseClassicProtocol: UNKNOWN_MEMBER_ID).
LeaveGroup makes no such check in Kafka 4.1.2 (its bytecode; the trunk of October 2024 had
it): any member it names leaves, which is how an admin removes a consumer-protocol static
member by its instance id (checked against the 4.1.2 jar:
tests/test_consumer_coordinator_kafka_jar.py). A JoinGroup would make the member a classic
member of the group: that raises NotModelled.
"""

from __future__ import annotations

from typing import NoReturn

from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.consumer.heartbeat import fence_members
from groupspec.coordinator.consumer.member import ConsumerMember
from groupspec.coordinator.context import Txn
from groupspec.coordinator.state import NotModelled
from groupspec.protocol.errors import Error
from groupspec.protocol.messages import (
    UNKNOWN_MEMBER_ID,
    JoinGroupRequest,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
)
from groupspec.protocol.records import Record


def _named_member(group: ConsumerGroup, member_id: str, instance_id: str | None,
                  by_admin: bool = False) -> tuple[ConsumerMember | None, Error]:
    """validateConsumerGroupMember: the member an identity names (its instance id if it has
    one, else its member id), or why none: UNKNOWN_MEMBER_ID for an unknown one,
    FENCED_INSTANCE_ID for a static member's instance id named with another member id.
    ``by_admin``: LeaveGroup's removal by instance id alone (no member id) skips that
    fencing check."""
    if instance_id is None:
        member = group.members.get(member_id)
        return (member, Error.NONE) if member is not None else (None, Error.UNKNOWN_MEMBER_ID)
    member = group.static_member(instance_id)
    if member is None:
        return None, Error.UNKNOWN_MEMBER_ID
    if not (by_admin and member_id == UNKNOWN_MEMBER_ID) and member_id != member.member_id:
        return None, Error.FENCED_INSTANCE_ID
    return member, Error.NONE


def member_error(group: ConsumerGroup, member_id: str, instance_id: str | None) -> Error:
    """The error of a Heartbeat or SyncGroup from this identity
    (classicGroup{Heartbeat,Sync}ToConsumerGroup): validateConsumerGroupMember's, else
    UNKNOWN_MEMBER_ID from throwIfMemberDoesNotUseClassicProtocol (no member here uses it).
    (SyncGroup to an empty consumer group is UNKNOWN_MEMBER_ID before this.)"""
    member, error = _named_member(group, member_id, instance_id)
    return error if member is None else Error.UNKNOWN_MEMBER_ID


def leave(txn: Txn, group: ConsumerGroup, req: LeaveGroupRequest) -> LeaveGroupResponse:
    """classicGroupLeaveToConsumerGroup (4.1.2): each identity names a member
    (:func:`_named_member`, an admin's instance id alone allowed); the members named leave
    together (consumerGroupFenceMembers: their tombstones, one epoch bump, their timers
    cancelled). NONE, each identity echoed with its error. (Kafka collects the members in a
    HashSet; two or more leave here in request order.)"""
    results = []
    leaving: dict[str, ConsumerMember] = {}
    for ident in req.members:
        member, error = _named_member(group, ident.member_id, ident.group_instance_id, by_admin=True)
        if member is not None:
            leaving.setdefault(member.member_id, member)
        results.append(LeaveGroupMemberResponse(ident.member_id, ident.group_instance_id, error))
    records: list[Record] = []
    fence_members(txn, group, list(leaving.values()), records)
    for rec in records:
        txn.emit(rec)
    return LeaveGroupResponse(error=Error.NONE, members=tuple(results))


def join(group: ConsumerGroup, req: JoinGroupRequest) -> NoReturn:
    """classicGroupJoinToConsumerGroup (a consumer group with members): not modelled."""
    raise NotModelled(
        f"JoinGroup to {group.group_id!r}, a consumer group with members: Kafka makes the "
        "classic member one of them (GroupMetadataManager.classicGroupJoinToConsumerGroup, "
        "KIP-848 mixed groups); the reference does not model mixed groups")

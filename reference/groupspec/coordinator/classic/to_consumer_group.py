"""Classic-protocol requests to a consumer group (KIP-848 mixed groups): GroupMetadataManager's
classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup (Apache Kafka 4.1.2).

A classic JoinGroup to a consumer group with members makes the client a member of it, whatever
the migration policy: its subscription and owned partitions come from the first protocol's
embedded consumer subscription, the group epoch, target assignment and reconciliation are the
ConsumerGroupHeartbeat's (heartbeat.subscribe_and_reconcile), and the JoinGroup is answered at
once with the member epoch as its generation. The member then sends SyncGroup for its assigned
partitions (serialized as Kafka's coordinator serializes them) and Heartbeats, which answer
REBALANCE_IN_PROGRESS when it must rejoin to reconcile. Its session timeout is the one its
JoinGroup gave; it has join and sync timeouts instead of a rebalance timeout; a timeout
fences it.

A JoinGroup by which a classic static member replaces the group's last consumer-protocol
member downgrades the group when the policy allows it (validateOnlineDowngradeWithReplacedMember,
convertToClassicGroup with the joining member; the downgrade by members leaving is
heartbeat.fence_members').
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from groupspec.coordinator.classic.group import CONSUMER_PROTOCOL_TYPE
from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.consumer.heartbeat import (
    ApiError,
    _static_member,
    fence_members,
    known_static_member,
    replace_member,
    subscribe_and_reconcile,
)
from groupspec.coordinator.consumer.member import ConsumerMember, to_classic_assignment
from groupspec.coordinator.consumer.migration import convert_to_classic_group
from groupspec.coordinator.context import Txn
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from groupspec.protocol.consumer_protocol import (
    Subscription,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.messages import (
    UNKNOWN_MEMBER_ID,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from groupspec.protocol.wire import DecodeError

#: JoinGroupRequest.requiresKnownMemberId: from version 4 a dynamic member without a member
#: id is given one and asked to join again
MEMBER_ID_REQUIRED_MIN_VERSION = 4


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


def _classic_member(group: ConsumerGroup, member_id: str,
                    instance_id: str | None, generation_id: int) -> tuple[ConsumerMember | None, Error]:
    """The checks SyncGroup and Heartbeat share: validateConsumerGroupMember,
    throwIfMemberDoesNotUseClassicProtocol (UNKNOWN_MEMBER_ID) and
    throwIfGenerationIdUnmatched (ILLEGAL_GENERATION: the generation is the member epoch)."""
    member, error = _named_member(group, member_id, instance_id)
    if member is None:
        return None, error
    if not member.uses_classic_protocol:
        return None, Error.UNKNOWN_MEMBER_ID
    if generation_id != member.member_epoch:
        return None, Error.ILLEGAL_GENERATION
    return member, Error.NONE


def _arm_join_timeout(txn: Txn, group: ConsumerGroup, member: ConsumerMember) -> None:
    """scheduleConsumerGroupJoinTimeoutIfAbsent: the member was told to rejoin and must
    within its rebalance timeout."""
    if member.member_id not in group.classic_join_deadlines:
        txn.emit(cr.ConsumerClassicJoinTimerSet(
            group.group_id, member.member_id, txn.now_ms + member.rebalance_timeout_ms))


def _arm_session(txn: Txn, group: ConsumerGroup, member_id: str, session_timeout_ms: int) -> None:
    """scheduleConsumerGroupSessionTimeout with the classic member's own session timeout."""
    txn.emit(cr.ConsumerSessionTimerSet(group.group_id, member_id, txn.now_ms + session_timeout_ms))


# ---------------------------------------------------------------------------- JoinGroup
def _supports(group: ConsumerGroup, protocol_type: str, names: set[str]) -> bool:
    """ConsumerGroup.supportsClassicProtocols (the group has members here): the consumer
    protocol type, and a protocol every classic member of the group supports."""
    return group.supports_classic_protocols(protocol_type, names)


def _owned(txn: Txn, sub: Subscription) -> list[HeartbeatTopicPartitions]:
    """Utils.toTopicPartitions: the subscription's owned partitions by topic id, topics the
    metadata image does not have left out."""
    out = []
    for name, parts in sub.owned_partitions.items():
        topic = txn.state.topics.get(name)
        if topic is not None:
            out.append(HeartbeatTopicPartitions(topic.topic_id, tuple(parts)))
    return out


def join(txn: Txn, group: ConsumerGroup, req: JoinGroupRequest,
         new_member_id: Callable[[], str]) -> JoinGroupResponse:
    """classicGroupJoinToConsumerGroup for a group with members: the answer, with the
    records written (the group downgraded when a static member's replacement allows it)."""
    try:
        return _join(txn, group, req, new_member_id)
    except ApiError as e:
        # GroupCoordinatorService.joinGroup answers a failed operation with the error alone
        return JoinGroupResponse(error=e.error)


def _join(txn: Txn, group: ConsumerGroup, req: JoinGroupRequest,
          new_member_id: Callable[[], str]) -> JoinGroupResponse:
    cfg = txn.config
    instance_id = req.group_instance_id
    member_id = req.member_id
    is_unknown = member_id == UNKNOWN_MEMBER_ID
    if is_unknown:
        member_id = new_member_id()
    # throwIfConsumerGroupIsFull
    if len(group.members) >= cfg.consumer_group_max_size and (
            member_id == "" or member_id not in group.members):
        raise ApiError(Error.GROUP_MAX_SIZE_REACHED, "The consumer group has reached its maximum "
                       f"capacity of {cfg.consumer_group_max_size} members.")
    if not _supports(group, req.protocol_type, {p.name for p in req.protocols}):
        raise ApiError(Error.INCONSISTENT_GROUP_PROTOCOL,
                       f"Member {member_id}'s protocols are not supported.")
    if req.version >= MEMBER_ID_REQUIRED_MIN_VERSION and is_unknown and instance_id is None:
        return JoinGroupResponse(error=Error.MEMBER_ID_REQUIRED, member_id=member_id)

    records: list[r.Record] = []
    replaced: ConsumerMember | None = None
    if instance_id is None:
        # getOrMaybeSubscribeDynamicConsumerGroupMember(createIfNotExists=true): any member
        # id is taken, a new one made a member
        member = group.members.get(member_id) or ConsumerMember(member_id)
    else:
        existing = _static_member(group, instance_id)
        if is_unknown:
            if existing is None:
                member = group.members.get(member_id) or ConsumerMember(member_id)
            else:
                # a classic member replaces the static member at once, whichever protocol
                # that one used
                member = replace_member(group, existing, member_id, records)
                replaced = existing
        else:
            member = known_static_member(group, member_id, instance_id)
    previous_static = group.static_member(instance_id)
    downgrade = previous_static is not None and _downgrades_on_replacement(txn, group, previous_static)
    try:
        sub = Subscription.decode(req.protocols[0].metadata)
    except (DecodeError, IndexError):
        # deserializeSubscription: IllegalStateException, answered UNKNOWN_SERVER_ERROR
        raise ApiError(Error.UNKNOWN_SERVER_ERROR, "Malformed embedded consumer protocol in "
                       "subscription deserialization.") from None
    updated = dataclasses.replace(
        member,
        instance_id=instance_id if instance_id is not None else member.instance_id,
        rack_id=sub.rack_id if sub.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=(req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
                              else member.rebalance_timeout_ms),
        subscribed_topic_names=frozenset(sub.topics),
        subscribed_topic_regex="",  # not supported for classic members
        client_id=req.client_id,
        client_host=req.client_host,
        classic=cr.ClassicMemberMetadata(
            session_timeout_ms=req.session_timeout_ms,
            supported_protocols=tuple(cr.ClassicProtocol(p.name, p.metadata) for p in req.protocols)),
    )
    refreshed: list[int] = []
    changed: list[bool] = []
    # the group epoch is also bumped when this member replaces a static member that had a regex
    updated = subscribe_and_reconcile(txn, group, member, updated, replaced, _owned(txn, sub),
                                      records, refreshed,
                                      bump_anyway=member.subscribed_topic_regex != "",
                                      downgrade=downgrade, changed=changed)
    answer = JoinGroupResponse(
        error=Error.NONE, member_id=member_id, generation_id=updated.member_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=req.protocols[0].name)
    if downgrade:
        # convertToClassicGroup with the joining member: the group is a classic group from
        # here (its heartbeats armed there; no consumer session or sync timeout)
        assert previous_static is not None
        convert_to_classic_group(txn, group, set(), records, joining=updated,
                                 replaced=previous_static, subscription_changed=changed[0])
        return answer
    for rec in records:
        txn.emit(rec)
    if refreshed and txn.state.consumer_groups.get(group.group_id) is group:
        group.metadata_refresh_epoch = refreshed[0]
    # once written: the join timeout cancelled, the session and sync timeouts armed
    if member_id in group.classic_join_deadlines:
        txn.emit(cr.ConsumerClassicJoinTimerSet(group.group_id, member_id, None))
    _arm_session(txn, group, member_id, req.session_timeout_ms)
    txn.emit(cr.ConsumerClassicSyncTimerSet(group.group_id, member_id,
                                            txn.now_ms + req.rebalance_timeout_ms))
    return answer


def _downgrades_on_replacement(txn: Txn, group: ConsumerGroup, replaced: ConsumerMember) -> bool:
    """validateOnlineDowngradeWithReplacedMember: the replaced member is the group's only
    consumer-protocol member, the policy allows a downgrade and the group fits a classic
    group."""
    # allMembersUseClassicProtocolExcept(replacedMember)
    return (group.all_members_use_classic_protocol_except([replaced])
            and not replaced.uses_classic_protocol
            and txn.config.online_downgrade_enabled
            and len(group.members) <= txn.config.group_max_size)


# ---------------------------------------------------------------------------- SyncGroup
def sync(txn: Txn, group: ConsumerGroup, req: SyncGroupRequest) -> SyncGroupResponse:
    """classicGroupSyncToConsumerGroup."""
    member, error = _classic_member(group, req.member_id, req.group_instance_id, req.generation_id)
    if member is None:
        return SyncGroupResponse(error=error)
    assert member.classic is not None
    # throwIfClassicProtocolUnmatched
    if req.protocol_type is not None and req.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return SyncGroupResponse(error=Error.INCONSISTENT_GROUP_PROTOCOL)
    if req.protocol_name is not None and req.protocol_name != member.classic.supported_protocols[0].name:
        return SyncGroupResponse(error=Error.INCONSISTENT_GROUP_PROTOCOL)
    # throwIfRebalanceInProgress: a new epoch the member must rejoin for, unless it is still
    # revoking (it has rejoined already)
    if group.group_epoch > member.member_epoch and member.state is not cr.MemberState.UNREVOKED_PARTITIONS:
        _arm_join_timeout(txn, group, member)
        return SyncGroupResponse(error=Error.REBALANCE_IN_PROGRESS)
    if member.member_id in group.classic_sync_deadlines:
        txn.emit(cr.ConsumerClassicSyncTimerSet(group.group_id, member.member_id, None))
    _arm_session(txn, group, member.member_id, member.classic.session_timeout_ms)
    return SyncGroupResponse(error=Error.NONE, protocol_type=req.protocol_type,
                             protocol_name=req.protocol_name, assignment=to_classic_assignment(
                                 member.assigned, {t.topic_id: n for n, t in txn.state.topics.items()},
                                 member.classic.supported_protocols[0].metadata))


# ---------------------------------------------------------------------------- Heartbeat
def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """ConsumerGroup.waitingOnUnreleasedPartition: a partition of its target that it does not
    have yet is still held by another member."""
    if member.state is not cr.MemberState.UNRELEASED_PARTITIONS:
        return False
    for topic, parts in group.target.get(member.member_id, {}).items():
        have = member.assigned.get(topic, frozenset())
        if any(p not in have and group.current_partition_epoch(topic, p) != -1 for p in parts):
            return True
    return False


def heartbeat(txn: Txn, group: ConsumerGroup, member_id: str, instance_id: str | None,
              generation_id: int) -> Error:
    """classicGroupHeartbeatToConsumerGroup: the session renewed; REBALANCE_IN_PROGRESS (and
    the join timeout armed) when the member must rejoin: the group epoch moved past it, it
    has partitions to revoke, or the partitions it waits for are free."""
    member, error = _classic_member(group, member_id, instance_id, generation_id)
    if member is None:
        return error
    assert member.classic is not None
    _arm_session(txn, group, member.member_id, member.classic.session_timeout_ms)
    if (member.member_epoch < group.group_epoch
            or member.state is cr.MemberState.UNREVOKED_PARTITIONS
            or (member.state is cr.MemberState.UNRELEASED_PARTITIONS
                and not _waiting_on_unreleased(group, member))):
        _arm_join_timeout(txn, group, member)
        return Error.REBALANCE_IN_PROGRESS
    return Error.NONE


# ---------------------------------------------------------------------------- LeaveGroup
def leave(txn: Txn, group: ConsumerGroup, req: LeaveGroupRequest) -> LeaveGroupResponse:
    """classicGroupLeaveToConsumerGroup (4.1.2): each identity names a member
    (:func:`_named_member`, an admin's instance id alone allowed); the members named leave
    together (consumerGroupFenceMembers: their tombstones, one epoch bump, their timers
    cancelled). NONE, each identity echoed with its error. (Kafka collects the members in a
    HashSet; two or more leave here in request order.) 4.1.2 makes no classic-protocol check
    here: a consumer-protocol member named leaves too (checked against the 4.1.2 jar:
    tests/test_consumer_coordinator_kafka_jar.py)."""
    results = []
    leaving: dict[str, ConsumerMember] = {}
    for ident in req.members:
        member, error = _named_member(group, ident.member_id, ident.group_instance_id, by_admin=True)
        if member is not None:
            leaving.setdefault(member.member_id, member)
        results.append(LeaveGroupMemberResponse(ident.member_id, ident.group_instance_id, error))
    records: list[r.Record] = []
    fence_members(txn, group, list(leaving.values()), records)
    for rec in records:
        txn.emit(rec)
    return LeaveGroupResponse(error=Error.NONE, members=tuple(results))

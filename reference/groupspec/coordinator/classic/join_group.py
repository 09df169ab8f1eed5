"""JoinGroup: the join phase of a rebalance.

Mirrors GroupMetadataManager.classicGroupJoinToClassicGroup and the functions it calls
(classicGroupJoinNewMember, classicGroupJoinNewStaticMember,
classicGroupJoinNewDynamicMember, classicGroupJoinExistingMember,
updateStaticMemberThenRebalanceOrCompleteJoin, addMemberThenRebalanceOrCompleteJoin) in
group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java,
plus the request checks of GroupCoordinatorService.joinGroup.
"""

from __future__ import annotations

from collections.abc import Callable

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic import to_consumer_group
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.classic.membership import validate_member
from groupspec.coordinator.consumer.expiry import delete_empty_consumer_group
from groupspec.coordinator.context import Txn
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import (
    UNKNOWN_MEMBER_ID,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupResponse,
)

S = GroupState

#: (client_id, group_instance_id) -> a fresh member id (ClassicGroup.generateMemberId).
MemberIdGenerator = Callable[[str, str | None], str]

#: JoinGroup v4+ requires a known member id for dynamic members (KIP-394,
#: JoinGroupRequest.requiresKnownMemberId).
MEMBER_ID_REQUIRED_MIN_VERSION = 4
#: JoinGroup v9+ carries skipAssignment (KIP-814, JoinGroupRequest.supportsSkippingAssignment).
SKIP_ASSIGNMENT_MIN_VERSION = 9


def handle_join_group(
    txn: Txn, request_id: int, req: JoinGroupRequest, new_member_id: MemberIdGenerator,
    new_consumer_member_id: Callable[[], str] | None = None,
) -> None:
    """``new_consumer_member_id``: the id a classic member joining a consumer group is given
    (Kafka's ``Uuid.randomUuid()``; by default the classic generator's)."""
    def fail(error: Error, member_id: str = UNKNOWN_MEMBER_ID) -> None:
        txn.respond(request_id, JoinGroupResponse(error=error, member_id=member_id))

    # GroupCoordinatorService.joinGroup: request-level checks.
    if req.group_id == "":
        return fail(Error.INVALID_GROUP_ID, req.member_id)
    cfg = txn.config
    if not cfg.group_min_session_timeout_ms <= req.session_timeout_ms <= cfg.group_max_session_timeout_ms:
        return fail(Error.INVALID_SESSION_TIMEOUT, req.member_id)

    is_unknown = req.member_id == UNKNOWN_MEMBER_ID
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        if consumer_group.members:
            # classicGroupJoinToConsumerGroup, whatever the migration policy
            def consumer_id() -> str:
                return new_member_id(req.client_id, req.group_instance_id)

            txn.respond(request_id, to_consumer_group.join(
                txn, consumer_group, req, new_consumer_member_id or consumer_id))
            return
        if is_unknown:
            # classicGroupJoinToClassicGroup, maybeDeleteEmptyConsumerGroup: an empty consumer
            # group gives way (its tombstones), its offsets stay with the group id. (With a
            # known member id Kafka removes it in memory only and answers UNKNOWN_MEMBER_ID,
            # as below; the reference leaves it: docs/deviations.md.)
            delete_empty_consumer_group(txn, consumer_group)
    group = txn.state.groups.get(req.group_id)
    is_new_group = group is None
    if group is None:
        if not is_unknown:
            # getOrMaybeCreateClassicGroup(create=false) throws GroupIdNotFound (also for a
            # consumer group's id: "Group ... is not a classic group").
            return fail(Error.UNKNOWN_MEMBER_ID, req.member_id)
        txn.emit(r.GroupCreated(req.group_id, txn.now_ms))
        group = txn.state.groups[req.group_id]

    records_before = len(txn.out.records)
    if not _accept_joining_member(txn, group, req.member_id):
        # The member is removed and told the group is full (fatal on the client).
        if req.member_id in group.members or req.member_id in group.pending_members:
            rb.remove_member(txn, group, req.member_id, "group.max.size reached")
        fail(Error.GROUP_MAX_SIZE_REACHED)
    elif is_unknown:
        _join_new_member(txn, request_id, req, group, new_member_id)
    else:
        _join_existing_member(txn, request_id, req, group)

    if is_new_group and not any(
        isinstance(x, r.GroupMetadataPersisted) for x in txn.out.records[records_before:]
    ):
        # Java persists a group record for a group it just created, and it is the *empty*
        # record whatever the group now holds (GroupCoordinatorRecordHelpers.
        # newEmptyGroupMetadataRecord: no members, generation 0, no protocol, no leader), so
        # a failover during the first rebalance reloads an Empty group.
        txn.emit(
            r.GroupMetadataPersisted(
                group.group_id,
                r.GroupSnapshot(
                    protocol_type=None,
                    generation_id=0,
                    protocol_name=None,
                    leader_id=None,
                    state_timestamp_ms=group.state_timestamp_ms,
                    members=(),
                ),
            )
        )


def _accept_joining_member(txn: Txn, group: Group, member_id: str) -> bool:
    """acceptJoiningMember: the group.max.size check."""
    max_size = txn.config.group_max_size
    if group.state in (S.Empty, S.Dead):
        return True
    m = group.members.get(member_id)
    if group.state is S.PreparingRebalance:
        return (m is not None and m.is_awaiting_join) or group.num_awaiting_join() < max_size
    return m is not None or len(group.members) < max_size


def _join_new_member(
    txn: Txn, request_id: int, req: JoinGroupRequest, group: Group, new_member_id: MemberIdGenerator
) -> None:
    if group.state is S.Dead:
        txn.respond(request_id, JoinGroupResponse(error=Error.COORDINATOR_NOT_AVAILABLE))
        return
    if not group.supports_protocols(req.protocol_type, req.protocol_names()):
        txn.respond(request_id, JoinGroupResponse(error=Error.INCONSISTENT_GROUP_PROTOCOL))
        return
    member_id = new_member_id(req.client_id, req.group_instance_id)
    if req.group_instance_id is not None:
        existing = group.static_member_id(req.group_instance_id)
        if existing is not None:
            _replace_static_member(txn, request_id, req, group, existing, member_id)
        else:
            # A new static member skips the member-id round (KIP-345).
            _add_member_then_rebalance(txn, request_id, req, group, member_id)
    elif req.version >= MEMBER_ID_REQUIRED_MIN_VERSION:
        # KIP-394: hand out an id, remember it as pending, and ask the member to rejoin.
        txn.emit(
            r.PendingMemberAdded(group.group_id, member_id, txn.now_ms + req.session_timeout_ms)
        )
        txn.respond(
            request_id, JoinGroupResponse(error=Error.MEMBER_ID_REQUIRED, member_id=member_id)
        )
    else:
        _add_member_then_rebalance(txn, request_id, req, group, member_id)


def _join_existing_member(txn: Txn, request_id: int, req: JoinGroupRequest, group: Group) -> None:
    def fail(error: Error) -> None:
        txn.respond(request_id, JoinGroupResponse(error=error, member_id=req.member_id))

    if group.state is S.Dead:
        return fail(Error.COORDINATOR_NOT_AVAILABLE)
    if not group.supports_protocols(req.protocol_type, req.protocol_names()):
        return fail(Error.INCONSISTENT_GROUP_PROTOCOL)
    if group.is_pending_member(req.member_id):
        if req.group_instance_id is not None:
            # A pending member is never static: Kafka throws IllegalStateException here
            # (GroupMetadataManager.classicGroupJoinExistingMember), the write fails with
            # nothing changed, and GroupCoordinatorService.joinGroup answers the failed
            # operation UNKNOWN_SERVER_ERROR in an otherwise empty response (no member id;
            # CoordinatorOperationExceptionHelper.handleOperationException). A client can
            # send it (recorded against Kafka 4.1.2 by the wire fuzzer).
            txn.respond(request_id, JoinGroupResponse(error=Error.UNKNOWN_SERVER_ERROR))
            return None
        return _add_member_then_rebalance(txn, request_id, req, group, req.member_id)
    error = validate_member(group, req.member_id, req.group_instance_id)
    if error is not Error.NONE:
        return fail(error)
    member = group.members[req.member_id]
    if group.state is S.PreparingRebalance:
        _update_member_then_rebalance(txn, request_id, req, group)
    elif group.state is S.CompletingRebalance:
        if member.matches(req.protocols):
            # Same metadata: answer with the current generation at once.
            txn.respond(request_id, _current_generation_response(group, req.member_id, True))
        else:
            _update_member_then_rebalance(txn, request_id, req, group)
    elif group.state is S.Stable:
        if group.is_leader(req.member_id) or not member.matches(req.protocols):
            # The leader rejoining always rebalances: that is how it forces one.
            _update_member_then_rebalance(txn, request_id, req, group)
        else:
            txn.respond(request_id, _current_generation_response(group, req.member_id, False))
    else:  # Empty
        fail(Error.UNKNOWN_MEMBER_ID)


def _current_generation_response(group: Group, member_id: str, with_members: bool) -> JoinGroupResponse:
    return JoinGroupResponse(
        error=Error.NONE,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader=group.leader_id or "",
        skip_assignment=False,
        member_id=member_id,
        members=group.current_member_metadata()
        if with_members and group.is_leader(member_id)
        else (),
    )


def _update_member_then_rebalance(
    txn: Txn, request_id: int, req: JoinGroupRequest, group: Group
) -> None:
    """updateMemberThenRebalanceOrCompleteJoin."""
    txn.emit(
        r.MemberUpdated(
            group.group_id,
            req.member_id,
            req.protocols,
            req.rebalance_timeout_ms,
            req.session_timeout_ms,
            request_id,
        )
    )
    rb.maybe_prepare_rebalance_or_complete_join(
        txn, group, f"updating metadata of member {req.member_id}"
    )


def _add_member_then_rebalance(
    txn: Txn, request_id: int, req: JoinGroupRequest, group: Group, member_id: str
) -> None:
    """addMemberThenRebalanceOrCompleteJoin: the member is new (5-minute join timeout)."""
    if group.state is S.PreparingRebalance and group.previous_state is S.Empty:
        # Java sets newMemberAdded when the previous state was Empty; Scala checked
        # generationId == 0 instead (PROTOCOL.md section 11, item 1).
        txn.emit(r.NewMemberAddedSet(group.group_id, True))
    if not group.members:
        txn.emit(r.ProtocolTypeSet(group.group_id, req.protocol_type))
    txn.emit(
        r.MemberAdded(
            group.group_id,
            r.MemberInfo(
                member_id, req.group_instance_id, req.client_id, req.client_host, req.protocol_type
            ),
            req.rebalance_timeout_ms,
            req.session_timeout_ms,
            req.protocols,
            request_id,
        )
    )
    if group.leader_id is None:
        txn.emit(r.LeaderChanged(group.group_id, member_id))
    rb.reschedule_heartbeat(txn, group, member_id, txn.config.group_new_member_join_timeout_ms)
    rb.maybe_prepare_rebalance_or_complete_join(txn, group, f"adding new member {member_id}")


def _replace_static_member(
    txn: Txn, request_id: int, req: JoinGroupRequest, group: Group, old_id: str, new_id: str
) -> None:
    """updateStaticMemberThenRebalanceOrCompleteJoin (KIP-345, KAFKA-9801, KIP-814)."""
    assert req.group_instance_id is not None
    if group.state in (S.Empty, S.Dead):
        # Kafka's updateStaticMemberThenRebalanceOrCompleteJoin throws IllegalStateException
        # naming the group, its state and the instance, and the whole write is dropped: a
        # group with a static member is never Empty (GroupMetadataManagerTest
        # testStaticMemberReJoinWithIllegalStateAsUnknownMember forces it). Refused here
        # before any record, so nothing changes either.
        raise AssertionError(
            f"group {group.group_id} was not supposed to be {group.state.value} when the "
            f"unknown static member {req.group_instance_id} rejoins")
    current_leader = group.leader_id
    old = group.members[old_id]
    # ClassicGroup.replaceStaticMember: the old id's parked requests are fenced at once.
    rb.complete_join_future(
        txn, group, old, JoinGroupResponse(error=Error.FENCED_INSTANCE_ID, member_id=old_id)
    )
    rb.complete_sync_future(
        txn,
        group,
        old,
        SyncGroupResponse(error=Error.FENCED_INSTANCE_ID),
    )
    txn.emit(r.StaticMemberReplaced(group.group_id, req.group_instance_id, old_id, new_id))
    if current_leader == old_id:
        txn.emit(r.LeaderChanged(group.group_id, new_id))
    new = group.members[new_id]
    rb.reschedule_heartbeat(txn, group, new_id, new.session_timeout_ms)
    txn.emit(
        r.MemberUpdated(
            group.group_id,
            new_id,
            req.protocols,
            req.rebalance_timeout_ms,
            req.session_timeout_ms,
            request_id,
        )
    )
    if group.state is S.Stable:
        if group.protocol_name == group.select_protocol():
            # No rebalance: persist the new member id (KAFKA-10284) and answer with the
            # current generation. The append is modelled as succeeding.
            rb.persist(txn, group)
            if req.version >= SKIP_ASSIGNMENT_MIN_VERSION:
                is_leader = group.is_leader(new_id)
                resp = JoinGroupResponse(
                    error=Error.NONE,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=group.leader_id or "",
                    skip_assignment=is_leader,
                    member_id=new_id,
                    members=group.current_member_metadata() if is_leader else (),
                )
            else:
                # Before v9 the response names the old leader id, so a replaced leader
                # believes it is a follower (the root of KAFKA-13435).
                resp = JoinGroupResponse(
                    error=Error.NONE,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=current_leader or "",
                    skip_assignment=False,
                    member_id=new_id,
                )
            rb.complete_join_future(txn, group, group.members[new_id], resp)
        else:
            rb.maybe_prepare_rebalance_or_complete_join(
                txn, group, f"static member {req.group_instance_id} changed the selected protocol"
            )
    elif group.state is S.CompletingRebalance:
        # KAFKA-9801: otherwise the leader's assignment would be keyed by the old id.
        rb.prepare_rebalance(txn, group, f"static member {req.group_instance_id} rejoined")
    else:
        rb.maybe_complete_join_phase(txn, group)

"""Online migration between the protocols (KIP-848): a classic group converted to a consumer
group and back, as Apache Kafka 4.1.2's GroupMetadataManager does it
(convertToConsumerGroup with ConsumerGroup.fromClassicGroup and createConsumerGroupRecords;
convertToClassicGroup with ClassicGroup.fromConsumerGroup and createClassicGroupRecords).

The heartbeat handler calls them: an upgrade when a ConsumerGroupHeartbeat joins a classic
group with members and validateOnlineUpgrade allows it (heartbeat._get_or_create), a
downgrade when only classic members would remain and the policy allows it
(heartbeat.fence_members, validateOnlineDowngradeWithFencedMembers) or when a classic static
member's JoinGroup replaces the last consumer-protocol member
(classic/to_consumer_group.py, validateOnlineDowngradeWithReplacedMember).
"""

from __future__ import annotations

import dataclasses

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic.group import CONSUMER_PROTOCOL_TYPE, Group, member_from
from groupspec.coordinator.consumer.group import (
    ConsumerGroup,
    group_tombstones,
    java_hash_order,
    subscription_counts,
)
from groupspec.coordinator.consumer.heartbeat import ApiError, _classic_tombstones, _metadata_hash
from groupspec.coordinator.consumer.member import (
    ConsumerMember,
    assignment_of,
    to_classic_assignment,
    to_record,
)
from groupspec.coordinator.consumer.timeline_order import TimelineOrder
from groupspec.coordinator.context import Txn
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import records as r
from groupspec.protocol.consumer_protocol import Assignment as ProtocolAssignment
from groupspec.protocol.consumer_protocol import (
    Subscription,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.messages import JoinGroupProtocol, JoinGroupResponse, SyncGroupResponse
from groupspec.protocol.wire import DecodeError


def convert_to_consumer_group(txn: Txn, classic: Group, records: list[r.Record]) -> ConsumerGroup:
    """convertToConsumerGroup with ConsumerGroup.fromClassicGroup and
    createConsumerGroupRecords: the classic members' parked JoinGroup and SyncGroup answered
    REBALANCE_IN_PROGRESS; the classic group's tombstones; each member a classic member of
    the new consumer group at the generation as its epoch, Stable, its last assignment as its
    assignment and target (partitions of topics the image does not have left out), its
    subscription from its protocol's metadata; the group epoch and target epoch the
    generation; the members' session timeouts armed with their own session timeouts. A
    custom assignor's user data or a malformed embedded protocol refuses the upgrade
    (GROUP_ID_NOT_FOUND). Returns the group as the records build it (not yet in the state,
    as Kafka's is materialized by the replay)."""
    gid = classic.group_id
    for member in list(classic.members.values()):
        rb.complete_join_future(txn, classic, member, JoinGroupResponse(
            error=Error.REBALANCE_IN_PROGRESS, member_id=member.member_id))
    for member in list(classic.members.values()):
        rb.complete_sync_future(txn, classic, member, SyncGroupResponse(error=Error.REBALANCE_IN_PROGRESS))
    by_name = {name: t.topic_id for name, t in txn.state.topics.items()}
    members: list[ConsumerMember] = []
    classic_order = java_hash_order(classic.members)  # ClassicGroup.allMembers: a HashMap's
    for mid in classic_order:
        cm = classic.members[mid]
        try:
            if cm.assignment:
                given = ProtocolAssignment.decode(cm.assignment)
                if given.user_data:
                    raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {gid} to "
                                   "consumer group because an unsupported custom assignor is in "
                                   "use. Please refer to the documentation or switch to a default "
                                   "assignor before re-attempting the upgrade.")
                assigned = assignment_of((by_name[t], ps) for t, ps in given.partitions.items()
                                         if t in by_name)
            else:
                assigned = {}
            meta = next((p.metadata for p in cm.protocols if p.name == classic.protocol_name), None)
            if meta is None:
                # ClassicGroupMember.metadata(protocolName().get()): a group in its first join
                # phase has no protocol yet (NoSuchElementException), answered as an
                # unexpected exception
                raise ApiError(Error.UNKNOWN_SERVER_ERROR, None)
            sub = Subscription.decode(meta)
        except DecodeError:
            raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {gid} to consumer "
                           "group because the embedded consumer protocol is malformed.") from None
        members.append(ConsumerMember(
            mid, member_epoch=classic.generation_id, previous_member_epoch=classic.generation_id,
            state=cr.MemberState.STABLE, instance_id=cm.group_instance_id, rack_id=sub.rack_id,
            rebalance_timeout_ms=cm.rebalance_timeout_ms, client_id=cm.info.client_id,
            client_host=cm.info.client_host, subscribed_topic_names=frozenset(sub.topics),
            assigned=assigned,
            classic=cr.ClassicMemberMetadata(cm.session_timeout_ms, tuple(
                cr.ClassicProtocol(p.name, p.metadata) for p in cm.protocols))))
    records.extend(_classic_tombstones(gid, classic.state, txn.now_ms))
    # createConsumerGroupRecords walks the new group's members map (a TimelineHashMap the
    # members were put in, in the classic group's order)
    order: TimelineOrder[str] = TimelineOrder()
    for converted in members:
        order.put(converted.member_id)
    by_id = {converted.member_id: converted for converted in members}
    members = [by_id[mid] for mid in order.order()]
    metadata_hash = _metadata_hash(txn, subscription_counts(members, ()))
    created: list[r.Record] = [cr.ConsumerGroupMemberSubscriptionRecord(gid, m.member_id, m.subscription_value())
                               for m in members]
    created.append(cr.ConsumerGroupEpochRecord(gid, cr.ConsumerGroupMetadataValue(
        epoch=classic.generation_id, metadata_hash=metadata_hash)))
    created += [cr.ConsumerGroupTargetAssignmentRecord(gid, m.member_id, cr.ConsumerGroupTargetAssignmentMemberValue(
        to_record(m.assigned))) for m in members]
    created.append(cr.ConsumerGroupTargetAssignmentEpochRecord(
        gid, cr.ConsumerGroupTargetAssignmentMetadataValue(classic.generation_id)))
    created += [cr.ConsumerGroupCurrentAssignmentRecord(gid, m.member_id, m.current_assignment_value())
                for m in members]
    # the session timeouts, once the group exists (a failed conversion leaves them to find
    # a classic group, where they do nothing)
    created += [cr.ConsumerSessionTimerSet(gid, m.member_id, txn.now_ms + m.classic.session_timeout_ms)
                for m in members if m.classic is not None]
    records.extend(created)
    # the group this heartbeat goes on with: Kafka's fromClassicGroup object, its members put
    # in the classic group's order (the replay of the records then builds the group anew,
    # members in the records' order)
    from groupspec.coordinator.replay import apply_record  # (it imports this module's package)

    scratch = CoordinatorState()
    # the timers an earlier consumer group of the id left running (a downgrade cancels
    # none): the new group takes them, its session timeouts replacing theirs (ConsumerTimers)
    detached = txn.state.detached_consumer_timers.get(gid)
    if detached is not None:
        scratch.detached_consumer_timers[gid] = dataclasses.replace(detached)
    subscriptions = {x.member_id: x for x in created if isinstance(x, cr.ConsumerGroupMemberSubscriptionRecord)}
    for mid in classic_order:
        apply_record(scratch, subscriptions[mid])
    for rec in created:
        if not isinstance(rec, cr.ConsumerGroupMemberSubscriptionRecord):
            apply_record(scratch, rec)
    converted_group = scratch.consumer_groups[gid]
    # its members map as fromClassicGroup filled it: one put per member (the replay puts a
    # member once per record, which can grow the table and so change the order)
    converted_group.member_order = order
    return converted_group


def convert_to_classic_group(txn: Txn, group: ConsumerGroup, leaving: set[str],
                              records: list[r.Record], joining: ConsumerMember | None = None,
                              replaced: ConsumerMember | None = None,
                              subscription_changed: bool = False) -> None:
    """convertToClassicGroup for members leaving (GroupMetadataManager, with
    ConsumerGroup.createGroupTombstoneRecords, ClassicGroup.fromConsumerGroup and
    createClassicGroupRecords): the consumer group's tombstones; a Stable classic group at the
    group epoch whose members are the classic members that remain (in the consumer group's
    members order, the first leading), each with its target assignment serialized in its
    subscription's version; its record; the members' heartbeats; then a rebalance
    ("Downgrade group ... for member leaving"). Kafka puts the classic group in its map
    directly instead of replaying the records, and the rebalance runs on it: the records are
    written here at once (whatever ``records`` held first), then the rebalance.

    ``joining``: a classic member whose JoinGroup replaces the static member ``replaced``
    (classicGroupJoinToConsumerGroup): it takes the replaced one's place last in the classic
    group, with its target; the tombstones name it in the replaced one's place
    (createGroupTombstoneRecordsWithReplacedMember); a rebalance only if its subscription
    changed."""
    gid, epoch = group.group_id, group.group_epoch
    # the tombstones (ConsumerGroup.createGroupTombstoneRecords, or ...WithReplacedMember
    # naming the joining member in the replaced one's place), of the group as it is now
    tombstones = group_tombstones(group, (replaced.member_id, joining.member_id)
                                  if joining is not None and replaced is not None else None)
    targets = dict(group.target)
    staying = [group.members[mid] for mid in group.member_order.order() if mid not in leaving and not (
        joining is not None and group.members[mid].instance_id == joining.instance_id)]
    if joining is not None:
        staying.append(joining)
        if replaced is not None:
            targets[joining.member_id] = targets.get(replaced.member_id, {})
    for rec in records:
        txn.emit(rec)
    records.clear()
    by_name = {t.topic_id: name for name, t in txn.state.topics.items()}
    converted = []
    for m in staying:
        assert m.classic is not None
        converted.append(r.PersistedMember(
            r.MemberInfo(m.member_id, m.instance_id, m.client_id, m.client_host, CONSUMER_PROTOCOL_TYPE),
            rebalance_timeout_ms=m.rebalance_timeout_ms, session_timeout_ms=m.classic.session_timeout_ms,
            protocols=tuple(JoinGroupProtocol(p.name, p.metadata) for p in m.classic.supported_protocols),
            assignment=b""))
    # the classic group (selectProtocol over the members that remain), each member's
    # assignment its target, read before the tombstones below clear it
    probe = Group(gid, members={pm.info.member_id: member_from(pm) for pm in converted})
    protocol = probe.select_protocol()
    with_assignments = []
    for pm in converted:
        metadata = next(p.metadata for p in pm.protocols if p.name == protocol)
        with_assignments.append(dataclasses.replace(pm, assignment=to_classic_assignment(
            targets.get(pm.info.member_id, {}), by_name, metadata)))
    for rec in tombstones:
        txn.emit(rec)
    txn.emit(r.ClassicGroupConverted(gid, epoch, protocol, tuple(with_assignments), txn.now_ms))
    classic = txn.state.groups[gid]
    rb.persist(txn, classic)
    for member in list(classic.members.values()):
        rb.reschedule_heartbeat(txn, classic, member.member_id, member.session_timeout_ms)
    if joining is None:
        rb.prepare_rebalance(txn, classic, f"Downgrade group {gid} from consumer to classic for member leaving.")
    elif subscription_changed:
        rb.prepare_rebalance(txn, classic, f"Downgrade group {gid} from consumer to classic for static "
                             "member replacement with different subscription.")


__all__ = ["convert_to_classic_group", "convert_to_consumer_group"]

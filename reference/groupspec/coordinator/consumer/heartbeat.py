"""ConsumerGroupHeartbeat (KIP-848): joining, heartbeating, reconciling and leaving.

Sources, Apache Kafka 4.1.2 group-coordinator:

- GroupCoordinatorService.consumerGroupHeartbeat and
  throwIfConsumerGroupHeartbeatRequestIsInvalid: the request checks made before the shard
  (INVALID_REQUEST, UNSUPPORTED_ASSIGNOR), answered with no member id and epoch 0;
- GroupMetadataManager.consumerGroupHeartbeat (both overloads),
  getOrMaybeCreateConsumerGroup, throwIfConsumerGroupIsFull,
  getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember, throwIfConsumerGroupMemberEpochIsInvalid,
  hasMemberSubscriptionChanged, updateSubscriptionMetadata, updateTargetAssignment,
  maybeReconcile, consumerGroupLeave, consumerGroupStaticMemberGroupLeave,
  consumerGroupFenceMembers, replaceMember, removeMember and the session and rebalance
  timeouts (schedule/cancel, and what they do when they fire);
- modern/TargetAssignmentBuilder.build.

As in Kafka, the handler reads the state as it was before the request and writes its
changes as records at the end (the coordinator runtime replays a write operation's records
after it returns). Errors are Kafka's exceptions mapped to codes
(``ApiError.fromThrowable``): the response then carries only the error and its message.

Online migration (group.consumer.migration.policy): a classic group with members is upgraded
when validateOnlineUpgrade allows it, a mixed group whose last consumer-protocol member leaves
is downgraded when validateOnlineDowngradeWithFencedMembers allows it; the conversions are
coordinator/consumer/migration.py. An empty classic group gives way under any policy. Not modelled yet (docs/deviations.md): group configs (dynamic per-group session
timeout and heartbeat interval); authorization (a regex resolves to every matching topic).

Regular-expression subscriptions (maybeUpdateRegularExpressions,
handleRegularExpressionsResult, maybeDeleteResolvedRegularExpressions): a heartbeat
validates a new regex (INVALID_REGULAR_EXPRESSION) and may schedule the group's resolution
(a ConsumerRegexResolutionScheduled record: the executor task, in memory); the driver runs
it with ``Coordinator.complete_regex_resolution`` (:func:`complete_regex_resolution` here),
whose records persist the resolved topics and bump the group epoch when they changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence

from groupspec.assignors.registry import get_server_assignor
from groupspec.assignors.server_spec import (
    GroupSpec,
    MemberSpec,
    PartitionAssignorError,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicMetadata,
    replayed_assignment_order,
)
from groupspec.coordinator.classic.group import CONSUMER_PROTOCOL_TYPE
from groupspec.coordinator.consumer.group import (
    EMPTY_RESOLVED_REGEX,
    ConsumerGroup,
    adopt_timers,
    computed_preferred_assignor,
    hash_map_order,
    java_hash_order,
    regex_task_order,
    subscribed_regexes,
    subscription_counts,
    subscription_type,
)
from groupspec.coordinator.consumer.member import (
    Assignment,
    ConsumerMember,
    is_subset,
    to_heartbeat,
    to_record,
)
from groupspec.coordinator.consumer.reconciliation import FencedMemberEpoch, reconcile
from groupspec.coordinator.consumer.regex import invalid_regex_message, regex_error, resolve
from groupspec.coordinator.context import Txn
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatAssignment,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.topic_id import TopicId

#: GroupMetadataManager.REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: at most one refresh of a
#: group's regexes per 10 s
REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000

#: generates a member id for a v0 member that sent none (Kafka: ``Uuid.randomUuid()``)
MemberIdSource = Callable[[], str]


class ApiError(Exception):
    """A Kafka ``ApiException`` raised inside the handler: answered with its code and message
    (None for any UNKNOWN_SERVER_ERROR: the service's handleOperationException answers one
    without its message, whatever the exception said)."""

    def __init__(self, error: Error, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


# ---------------------------------------------------------------------------- validation
_JAVA_TRIM = "".join(chr(c) for c in range(33))


def _blank(value: str | None) -> bool:
    """Utils.throwIfEmptyString's test: non-null and empty after Java's ``trim``."""
    return value is not None and value.strip(_JAVA_TRIM) == ""


def request_error(req: ConsumerGroupHeartbeatRequest, assignors: Sequence[str]) -> ApiError | None:
    """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid."""
    bad = Error.INVALID_REQUEST
    if (req.version >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION or req.member_epoch > 0
            or req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH) and _blank(req.member_id):
        return ApiError(bad, "MemberId can't be empty.")
    if _blank(req.group_id):
        return ApiError(bad, "GroupId can't be empty.")
    if _blank(req.instance_id):
        return ApiError(bad, "InstanceId can't be empty.")
    if _blank(req.rack_id):
        return ApiError(bad, "RackId can't be empty.")
    if req.member_epoch == 0:
        if req.rebalance_timeout_ms == -1:
            return ApiError(bad, "RebalanceTimeoutMs must be provided in first request.")
        if req.topic_partitions is None or len(req.topic_partitions) > 0:
            return ApiError(bad, "TopicPartitions must be empty when (re-)joining.")
        if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
            return ApiError(bad, "Either SubscribedTopicNames or SubscribedTopicRegex must be "
                                 "non-null when (re-)joining.")
    elif req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            return ApiError(bad, "InstanceId can't be null.")
    elif req.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return ApiError(bad, "MemberEpoch is invalid.")
    if req.server_assignor is not None and req.server_assignor not in assignors:
        # the service keeps the assignor names in a HashSet (its constructor collects them
        # with Collectors.toSet()), so the message lists them in that set's order, not in
        # group.consumer.assignors' (GroupCoordinatorService.java)
        return ApiError(
            Error.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
            f"{', '.join(java_hash_order(assignors))}.",
        )
    return None


# ---------------------------------------------------------------------------- entry point
def handle_consumer_group_heartbeat(
    txn: Txn, request_id: int, req: ConsumerGroupHeartbeatRequest, member_ids: MemberIdSource
) -> None:
    error = request_error(req, txn.config.consumer_group_assignors)
    records: list[r.Record] = []
    refreshed: list[int] = []
    try:
        if error is not None:
            raise error
        if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            response = _leave(txn, req, records)
        else:
            response = _heartbeat(txn, req, member_ids, records, refreshed)
    except ApiError as e:
        # (the service answers any UNKNOWN_SERVER_ERROR without its message:
        # CoordinatorOperationExceptionHelper.handleOperationException)
        txn.respond(request_id, ConsumerGroupHeartbeatResponse(
            error=e.error, error_message=None if e.error is Error.UNKNOWN_SERVER_ERROR else e.message,
            member_epoch=0, heartbeat_interval_ms=0))
        return
    except FencedMemberEpoch as e:
        txn.respond(request_id, ConsumerGroupHeartbeatResponse(
            error=e.error, error_message=str(e), member_epoch=0, heartbeat_interval_ms=0))
        return
    group = txn.state.consumer_groups.get(req.group_id)
    for rec in records:
        txn.emit(rec)
    if refreshed and group is not None and txn.state.consumer_groups.get(req.group_id) is group:
        # setMetadataRefreshDeadline (GroupMetadataManager.updateSubscriptionMetadata), in
        # memory as in Kafka, on the group object that was in the groups map: a group this
        # heartbeat created is a throw-away object in Kafka (getOrMaybeCreateConsumerGroup)
        # and the one replay then builds was never refreshed
        group.metadata_refresh_epoch = refreshed[0]
    txn.respond(request_id, response)


# ---------------------------------------------------------------------------- the group
def _existing(txn: Txn, group_id: str) -> ConsumerGroup:
    """consumerGroup(groupId): GROUP_ID_NOT_FOUND unless it is a consumer group. A missing
    group is reported by GroupMetadataManager.group(groupId, committedOffset), whose message
    says "Group", not "Consumer group" (that one is getOrMaybeCreateConsumerGroup's, the
    heartbeat path's)."""
    g = txn.state.consumer_groups.get(group_id)
    if g is None:
        if group_id in txn.state.groups:
            raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    return g


def _get_or_create(txn: Txn, group_id: str, create: bool, records: list[r.Record]) -> ConsumerGroup:
    """getOrMaybeCreateConsumerGroup: a missing group is made, an empty classic group gives
    way, a classic group with members is upgraded if validateOnlineUpgrade allows it
    (convertToConsumerGroup)."""
    g = txn.state.consumer_groups.get(group_id)
    if g is not None:
        return g
    classic = txn.state.groups.get(group_id)
    if classic is None:
        if not create:
            raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        return _new_group(txn, group_id)
    if create and classic.state is GroupState.Empty and not classic.members:
        # maybeDeleteEmptyClassicGroup: an empty classic group gives way; its offsets stay
        # with the group id (replay hands them to the consumer group)
        records.extend(_classic_tombstones(classic.group_id, classic.state, txn.now_ms))
        return _new_group(txn, group_id)
    if not create:
        raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
    # validateOnlineUpgrade, its checks in Kafka's order
    why = None
    if not txn.config.online_upgrade_enabled:
        why = "online upgrade is disabled"
    elif classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        why = "the group does not use the consumer embedded protocol"
    elif len(classic.members) > txn.config.consumer_group_max_size:
        why = "the group size exceeds the consumer group maximum size"
    if why is not None:
        raise ApiError(Error.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to "
                       f"consumer group because {why}.")
    from groupspec.coordinator.consumer import migration  # (it imports this module)

    return migration.convert_to_consumer_group(txn, classic, records)


def _new_group(txn: Txn, group_id: str) -> ConsumerGroup:
    """A new consumer group, with the timers an earlier consumer group of the id left
    running (ConsumerTimers; the replay of its records hands them over in the state too)."""
    group = ConsumerGroup(group_id)
    adopt_timers(group, txn.state.detached_consumer_timers.get(group_id))
    return group


def _classic_tombstones(group_id: str, state: GroupState, now_ms: int) -> list[r.Record]:
    out: list[r.Record] = [r.GroupTombstoned(group_id)]
    if state is not GroupState.Dead:
        out.append(r.StateChanged(group_id, GroupState.Dead, now_ms))
    out.append(r.GroupRemoved(group_id))
    return out


def _member(g: ConsumerGroup, member_id: str, create: bool) -> ConsumerMember:
    """ConsumerGroup.getOrMaybeCreateMember."""
    m = g.members.get(member_id)
    if m is not None:
        return m
    if not create:
        raise ApiError(Error.UNKNOWN_MEMBER_ID,
                       f"Member {member_id} is not a member of group {g.group_id}.")
    return ConsumerMember(member_id)


def _static_member(g: ConsumerGroup, instance_id: str) -> ConsumerMember | None:
    """ConsumerGroup.staticMember (modern/consumer/ConsumerGroup.java): the member the
    instance id maps to, looked up with getOrMaybeCreateMember(memberId, false), so a mapping
    to a member no longer in the group raises UNKNOWN_MEMBER_ID ("Member <id> is not a
    member of group <group>.") instead of reading as "no static member". Such a mapping
    outlives its member when the member changed its instance id (a rejoin at epoch 0 with
    another one: ConsumerGroup.updateStaticMember adds the new mapping and keeps the old)
    and was then removed (removeStaticMember drops the mapping of its current instance id
    only). Found by the wire fuzzer (examples/validator-false-positives/kip848/
    static-rejoin-same-member-id-kafka-4.1.2.jsonl)."""
    mid = g.static_members.get(instance_id)
    return None if mid is None else _member(g, mid, False)


def known_static_member(g: ConsumerGroup, member_id: str, instance_id: str) -> ConsumerMember:
    """throwIfStaticMemberIsUnknown and throwIfInstanceIdIsFenced: the static member the
    instance id names (UNKNOWN_MEMBER_ID if none), which must be ``member_id``
    (FENCED_INSTANCE_ID)."""
    existing = _static_member(g, instance_id)
    if existing is None:
        raise ApiError(Error.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if existing.member_id != member_id:
        raise ApiError(
            Error.FENCED_INSTANCE_ID,
            f"Static member {member_id} with instance id {instance_id} was fenced by member "
            f"{existing.member_id}.")
    return existing


def _check_epoch(m: ConsumerMember, received: int, owned: Sequence[object] | None,
                 owned_ok: bool) -> None:
    """throwIfConsumerGroupMemberEpochIsInvalid."""
    if received > m.member_epoch:
        raise FencedMemberEpoch(
            f"The consumer group member has a greater member epoch ({received}) than the one "
            f"known by the group coordinator ({m.member_epoch}). The member must abandon all "
            "its partitions and rejoin.")
    if received < m.member_epoch and (received != m.previous_member_epoch or not owned_ok):
        # The previous epoch with a subset of the assignment is accepted: the response
        # that bumped the epoch may have been lost.
        raise FencedMemberEpoch(
            f"The consumer group member has a smaller member epoch ({received}) than the one "
            f"known by the group coordinator ({m.member_epoch}). The member must abandon all "
            "its partitions and rejoin.")


# ---------------------------------------------------------------------------- heartbeat
def _heartbeat(txn: Txn, req: ConsumerGroupHeartbeatRequest, member_ids: MemberIdSource,
               records: list[r.Record], refreshed: list[int]) -> ConsumerGroupHeartbeatResponse:
    cfg = txn.config
    create = req.member_epoch == 0
    group = _get_or_create(txn, req.group_id, create, records)
    member_id = req.member_id
    if len(group.members) >= cfg.consumer_group_max_size and (
            member_id == "" or member_id not in group.members):
        raise ApiError(Error.GROUP_MAX_SIZE_REACHED,
                       "The consumer group has reached its maximum capacity of "
                       f"{cfg.consumer_group_max_size} members.")
    if member_id == "":
        member_id = member_ids()
    owned = req.topic_partitions
    replaced: ConsumerMember | None = None
    if req.instance_id is None:
        member = _member(group, member_id, create)
        _check_epoch(member, req.member_epoch, owned, is_subset(owned, member.assigned))
    else:
        existing = _static_member(group, req.instance_id)
        if create:
            if existing is None:
                member = _member(group, member_id, True)
            else:
                if (not existing.uses_classic_protocol
                        and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                    # throwIfInstanceIdIsUnreleased: only between two consumer-protocol
                    # members (a classic one is replaced at once)
                    raise ApiError(
                        Error.UNRELEASED_INSTANCE_ID,
                        f"Static member {member_id} with instance id {req.instance_id} cannot "
                        f"join the group because the instance id is owned by "
                        f"{existing.member_id} member.")
                member = replace_member(group, existing, member_id, records)
                replaced = existing
        else:
            member = known_static_member(group, member_id, req.instance_id)
            _check_epoch(member, req.member_epoch, owned, is_subset(owned, member.assigned))

    updated = dataclasses.replace(
        member,
        instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
        rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=(req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
                              else member.rebalance_timeout_ms),
        server_assignor=(req.server_assignor if req.server_assignor is not None
                         else member.server_assignor),
        subscribed_topic_names=(frozenset(req.subscribed_topic_names)
                                if req.subscribed_topic_names is not None
                                else member.subscribed_topic_names),
        subscribed_topic_regex=(req.subscribed_topic_regex
                                if req.subscribed_topic_regex is not None
                                else member.subscribed_topic_regex),
        client_id=req.client_id,
        client_host=req.client_host,
        classic=None,  # a member heartbeating with this protocol no longer uses the classic one
    )

    updated = subscribe_and_reconcile(txn, group, member, updated, replaced, owned, records,
                                      refreshed)

    records.append(cr.ConsumerSessionTimerSet(
        group.group_id, member_id, txn.now_ms + cfg.consumer_session_timeout_ms_of(group.group_id)))

    full = (req.rebalance_timeout_ms != -1
            and (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
            and owned is not None)
    send_assignment = req.member_epoch == 0 or full or updated.assigned != member.assigned
    return ConsumerGroupHeartbeatResponse(
        error=Error.NONE,
        member_id=member_id,
        member_epoch=updated.member_epoch,
        heartbeat_interval_ms=cfg.consumer_heartbeat_interval_ms_of(group.group_id),
        assignment=HeartbeatAssignment(to_heartbeat(updated.assigned)) if send_assignment else None,
    )


def subscribe_and_reconcile(txn: Txn, group: ConsumerGroup, member: ConsumerMember,
                            updated: ConsumerMember, replaced: ConsumerMember | None,
                            owned: Sequence[HeartbeatTopicPartitions] | None,
                            records: list[r.Record], refreshed: list[int],
                            bump_anyway: bool = False, downgrade: bool = False,
                            changed: list[bool] | None = None) -> ConsumerMember:
    """The steps a ConsumerGroupHeartbeat and a classic member's JoinGroup share
    (consumerGroupHeartbeat, classicGroupJoinToConsumerGroup): the member's subscription
    record and the group epoch (hasMemberSubscriptionChanged, maybeUpdateRegularExpressions,
    updateSubscriptionMetadata; ``bump_anyway``: a bump the caller decided), the target
    assignment (updateTargetAssignment) and the member's reconciliation (maybeReconcile,
    with the partitions it reports ``owned``). Returns the member as reconciled.
    ``downgrade``: the request downgrades the group (classicGroupJoinToConsumerGroup with a
    static member's replacement): no new target; the member reconciles with the group's
    target unless its subscription changed. ``changed`` receives whether it did (the bump
    the member itself asked for, before updateSubscriptionMetadata's)."""
    # 1. the member, the group epoch (hasMemberSubscriptionChanged,
    # maybeUpdateRegularExpressions, updateSubscriptionMetadata)
    member_id = updated.member_id
    bump = group.group_epoch == 0 or bump_anyway
    if updated != member:
        records.append(cr.ConsumerGroupMemberSubscriptionRecord(
            group.group_id, member_id, updated.subscription_value()))
        if updated.subscribed_topic_names != member.subscribed_topic_names:
            bump = True
    bump = _maybe_update_regexes(txn, group, member, updated, records) or bump
    asked = bump  # the member's own reasons, before the metadata's
    if changed is not None:
        changed.append(asked)
    members_after = _members_after(group, updated, replaced)
    group_epoch = group.group_epoch
    # the subscription type the target is computed with: the group's own
    # (group.subscriptionType(), the value ConsumerGroup.maybeUpdateGroupSubscriptionType last
    # set when a member was put or removed) unless updateSubscriptionMetadata runs
    kind = group.subscription_kind
    if bump or _metadata_expired(txn, group):
        # updateSubscriptionMetadata: the group's counts with ``member`` swapped for
        # ``updated`` (a delta, as Kafka computes it: ConsumerGroup.counts_with)
        counts = group.counts_with(member, updated)
        metadata_hash = _metadata_hash(txn, counts)
        kind = subscription_type(counts, group.num_members_with(updated),
                                 group.regexes_with(member, updated))
        if metadata_hash != group.metadata_hash:
            bump = True
        if bump:
            group_epoch += 1
            records.append(cr.ConsumerGroupEpochRecord(
                group.group_id, cr.ConsumerGroupMetadataValue(epoch=group_epoch,
                                                              metadata_hash=metadata_hash)))
        refreshed.append(group_epoch)
        if group.has_subscription_metadata_record:
            # updateSubscriptionMetadata, after setMetadataRefreshDeadline: an older version's
            # subscription-metadata value is tombstoned
            records.append(cr.ConsumerGroupSubscriptionMetadataRecord(group.group_id, None))

    # 2. the target assignment
    if downgrade:
        target_epoch = group.assignment_epoch
        target = group.target_of(updated.member_id, updated.instance_id)
        if asked:
            return updated  # a rebalance of the classic group follows
    elif group_epoch > group.assignment_epoch:
        target = _update_target(txn, group, group_epoch, members_after, updated, replaced, kind,
                                records)
        target_epoch = group_epoch
    else:
        target_epoch = group.assignment_epoch
        target = group.target_of(updated.member_id, updated.instance_id)

    # 3. reconciliation (maybeReconcile)
    before = updated
    if not updated.is_reconciled_to(target_epoch):
        updated = reconcile(updated, target_epoch, target, group.current_partition_epoch, owned)
        if updated != before:
            records.append(cr.ConsumerGroupCurrentAssignmentRecord(
                group.group_id, member_id, updated.current_assignment_value()))
            if updated.uses_classic_protocol:
                pass  # classic members have join and sync timers instead (maybeReconcile)
            elif updated.state is cr.MemberState.UNREVOKED_PARTITIONS:
                records.append(cr.ConsumerRebalanceTimerSet(
                    group.group_id, member_id, txn.now_ms + updated.rebalance_timeout_ms,
                    updated.member_epoch))
            elif member_id in group.rebalance_timers or _armed_in(records, member_id):
                records.append(cr.ConsumerRebalanceTimerSet(group.group_id, member_id, None))

    return updated


def _armed_in(records: Iterable[r.Record], member_id: str) -> bool:
    return any(isinstance(x, cr.ConsumerRebalanceTimerSet) and x.member_id == member_id
               and x.deadline_ms is not None for x in records)


def _members_after(group: ConsumerGroup, updated: ConsumerMember,
                   replaced: ConsumerMember | None) -> dict[str, ConsumerMember]:
    """The members once this request's records are applied (a replaced static member gone)."""
    out = dict(group.members)
    if replaced is not None:
        out.pop(replaced.member_id, None)
    out[updated.member_id] = updated
    return out


def _group_counts(group: ConsumerGroup) -> dict[str, tuple[int, int]]:
    """The group's subscribedTopicNames: members' names and its resolved regexes' topics."""
    return subscription_counts(group.members.values(), group.resolved_regexes.values())


def _metadata_expired(txn: Txn, group: ConsumerGroup) -> bool:
    """ModernGroup.hasMetadataExpired (its deadline is Integer.MAX_VALUE ms after a refresh,
    never reached here): a group object never refreshed since it was built (replayed into
    being, or reloaded by a failover), one whose epoch fell below the refreshed one
    (GroupMetadataManager.updateSubscriptionMetadata sets it), or one a new image asked to
    refresh (onNewMetadataImage, for the groups subscribed to a topic it changed:
    ``Coordinator.set_topics``). Not a difference of metadata hashes: a group whose
    subscribed topics changed without a refresh (a regex dropped before its replacement was
    resolved) keeps its old hash, as Kafka's does, until something refreshes it."""
    return group.metadata_refresh_epoch is None or group.group_epoch < group.metadata_refresh_epoch


# ---------------------------------------------------------------------------- regexes
def _maybe_update_regexes(txn: Txn, group: ConsumerGroup, member: ConsumerMember,
                          updated: ConsumerMember, records: list[r.Record]) -> bool:
    """GroupMetadataManager.maybeUpdateRegularExpressions: the tombstone of a regex its last
    member leaves, a new regex compiled (INVALID_REGULAR_EXPRESSION), the epoch bumped when
    the member moves to a regex already resolved or drops its regex; then the group's
    resolution scheduled when none is running, the last one is more than 10 s old and a
    regex is unresolved, topics were created since, or the refresh interval passed."""
    gid = group.group_id
    old, new = member.subscribed_topic_regex, updated.subscribed_topic_regex
    bump = require_refresh = False
    if old != new:
        if old and group.num_subscribed_members(old) == 1:
            records.append(cr.ConsumerGroupRegularExpressionRecord(gid, old, None))
        if new:
            if group.num_subscribed_members(new) == 0:
                description = regex_error(new)
                if description is not None:
                    raise ApiError(Error.INVALID_REGULAR_EXPRESSION,
                                   invalid_regex_message(new, description))
                require_refresh = True
            else:
                bump = new in group.resolved_regexes
        elif old:
            bump = True
    subscribed = group.subscribed_regexes()
    if not require_refresh and not subscribed:
        return bump
    if gid in txn.state.regex_tasks:  # executor.isScheduled(groupId + "-regex")
        return bump
    last_refresh_ms = group.last_regex_refresh_ms()
    if txn.now_ms <= last_refresh_ms + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
        return bump
    if old:
        subscribed[old] -= 1
        if subscribed[old] == 0:
            del subscribed[old]
    if new:
        subscribed[new] = subscribed.get(new, 0) + 1
    require_refresh |= len(subscribed) != len(group.resolved_regexes)
    require_refresh |= group.last_regex_version() < txn.state.metadata_version_with_new_topics
    require_refresh |= txn.now_ms > last_refresh_ms + txn.config.consumer_group_regex_refresh_interval_ms
    if require_refresh and subscribed:
        records.append(cr.ConsumerRegexResolutionScheduled(
            gid, updated.member_id, tuple(regex_task_order(group, old, new)), txn.now_ms))
    return bump


def complete_regex_resolution(txn: Txn, group_id: str) -> None:
    """The group's executor task runs now (refreshRegularExpressions, against the image as
    it is) and its result is written (handleRegularExpressionsResult): a record per regex
    still subscribed, and the group epoch bumped when a regex's topics or the metadata hash
    changed. Nothing but the task's end if the group is gone."""
    task = txn.state.regex_tasks.get(group_id)
    if task is None:
        raise ValueError(f"no regex resolution is pending for group {group_id!r}")
    txn.emit(cr.ConsumerRegexResolutionScheduled(group_id, task.member_id, None))
    result = resolve(task.regexes, txn.state.topics, txn.state.metadata_version, txn.now_ms)
    group = txn.state.consumer_groups.get(group_id)
    if group is None:
        return  # GroupIdNotFoundException: logged and ignored
    resolved = dict(group.resolved_regexes)
    bump = False
    records: list[r.Record] = []
    # refreshRegularExpressions fills a HashMap sized for the regexes in the task's order,
    # then copies it into another of that size, which handleRegularExpressionsResult walks
    for rx in hash_map_order(hash_map_order(result)):
        if group.num_subscribed_members(rx) == 0:
            continue
        new = result[rx]
        if resolved.get(rx, EMPTY_RESOLVED_REGEX).topics != new.topics:
            bump = True
        resolved[rx] = new
        records.append(cr.ConsumerGroupRegularExpressionRecord(
            group_id, rx, cr.ConsumerGroupRegularExpressionValue(
                topics=tuple(sorted(new.topics)), version=new.version, timestamp=new.timestamp_ms)))
    metadata_hash = _metadata_hash(txn, subscription_counts(group.members.values(), resolved.values()))
    if metadata_hash != group.metadata_hash:
        bump = True
    if bump:
        records.append(cr.ConsumerGroupEpochRecord(group_id, cr.ConsumerGroupMetadataValue(
            epoch=group.group_epoch + 1, metadata_hash=metadata_hash)))
    for rec in records:
        txn.emit(rec)
    if bump:
        # handleRegularExpressionsResult refreshes the group's metadata deadline with the bump
        group.metadata_refresh_epoch = group.group_epoch


def _metadata_hash(txn: Txn, names: Iterable[str]) -> int:
    """The subscribed topics' metadata digest (ModernGroup.computeMetadataHash: 0 when no
    subscribed topic exists). Same inputs as Kafka's (name, id, partitions, racks); a
    different digest, deterministic across runs."""
    facts = []
    for name in sorted(names):
        t = txn.state.topics.get(name)
        if t is not None:
            facts.append((name, int(t.topic_id), t.num_partitions,
                          tuple(tuple(sorted(rs)) for rs in t.partition_racks)))
    if not facts:
        return 0
    digest = hashlib.blake2b(repr(facts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True) or 1


# ---------------------------------------------------------------------------- target
def _member_spec(txn: Txn, group: ConsumerGroup, m: ConsumerMember, target: Assignment) -> MemberSpec:
    by_name = {name: t.topic_id for name, t in txn.state.topics.items()}
    names = sorted(m.subscribed_topic_names)  # a HashSet<String>: its order below
    ordered = java_hash_order(names)
    rr = group.resolved_regexes.get(m.subscribed_topic_regex) if m.subscribed_topic_regex else None
    if rr is not None:
        # ConsumerTargetAssignmentBuilder.newMemberSubscriptionAndAssignment: the regex's
        # topics alone, or a UnionSet (the larger set, then what the smaller adds)
        by_regex = java_hash_order(sorted(rr.topics))
        if not ordered:
            ordered = by_regex
        elif by_regex:
            large, small = (ordered, by_regex) if len(ordered) > len(by_regex) else (by_regex, ordered)
            seen = set(large)
            ordered = [*large, *(t for t in small if t not in seen)]
    ids = tuple(by_name[n] for n in ordered if n in by_name)
    assignment = replayed_assignment_order([(t, sorted(ps)) for t, ps in target.items()])
    return MemberSpec(m.member_id, ids, assignment, m.rack_id, m.instance_id)


def _update_target(txn: Txn, group: ConsumerGroup, group_epoch: int,
                   members_after: dict[str, ConsumerMember], updated: ConsumerMember,
                   replaced: ConsumerMember | None, kind: SubscriptionType,
                   records: list[r.Record]) -> Assignment:
    """updateTargetAssignment with TargetAssignmentBuilder.build."""
    # ConsumerGroup.computePreferredServerAssignor(member, updatedMember): the group's
    # counts with this member's change (its HashMap order breaks ties: group.py)
    # (the member before this request: the group's, or for a static member taking over an
    # instance id the departing one, whose state it starts from)
    before = replaced if replaced is not None else group.members.get(updated.member_id)
    name = computed_preferred_assignor(group, before, updated) or txn.config.consumer_group_assignors[0]
    specs: dict[str, MemberSpec] = {}
    # TargetAssignmentBuilder.build puts the group's members into a HashMap in the order
    # its members map (a TimelineHashMap) iterates them, then the updated member: members
    # that share a bucket of the HashMap keep that order, and the assignor sees it
    for mid in java_hash_order([*group.member_order.order(), updated.member_id]):
        m = members_after.get(mid)
        if m is None:
            continue
        target = group.target.get(mid, {})
        if mid == updated.member_id and replaced is not None:
            # a new static member takes over the departed one's target
            target = group.target.get(replaced.member_id, {})
        specs[mid] = _member_spec(txn, group, m, target)
    counts = subscription_counts(members_after.values(), group.resolved_regexes.values())
    topics = SubscribedTopicMetadata.of(
        t for n, t in txn.state.topics.items() if n in counts)
    # isPartitionAssigned reads the group's inverted target assignment as it was before this
    # request (TargetAssignmentBuilder.withInvertedTargetAssignment(group.
    # invertedTargetAssignment()), GroupSpecImpl.isPartitionAssigned): a member taking over a
    # replaced static member's target while the group held a target of its own (its member
    # id already in the group under another instance id) leaves its own partitions marked
    # assigned though no spec holds them, and Kafka's uniform assignor hands them to nobody
    assigned: dict[TopicId, set[int]] = {}
    for held in group.target.values():
        for t, ps in held.items():
            assigned.setdefault(t, set()).update(ps)
    try:
        result = get_server_assignor(name).assign(
            GroupSpec(tuple(specs.values()), kind,
                      assigned={t: frozenset(ps) for t, ps in assigned.items()}), topics)
    except PartitionAssignorError as e:
        raise ApiError(Error.UNKNOWN_SERVER_ERROR,
                       f"Failed to compute a new target assignment for epoch {group_epoch}: {e}.") from e
    new_targets: dict[str, Assignment] = {}
    for mid in specs:
        new = {t: frozenset(ps) for t, ps in result.get(mid, {}).items() if ps}
        new_targets[mid] = new
        old = group.target.get(mid)
        if old is None or new != old:
            records.append(cr.ConsumerGroupTargetAssignmentRecord(
                group.group_id, mid, cr.ConsumerGroupTargetAssignmentMemberValue(to_record(new))))
    records.append(cr.ConsumerGroupTargetAssignmentEpochRecord(
        group.group_id, cr.ConsumerGroupTargetAssignmentMetadataValue(group_epoch)))
    return new_targets.get(updated.member_id, {})


# ---------------------------------------------------------------------------- leaving
def _remove_member_records(group_id: str, member_id: str, records: list[r.Record]) -> None:
    """removeMember: current assignment, target and subscription tombstones, in that order."""
    records.append(cr.ConsumerGroupCurrentAssignmentRecord(group_id, member_id, None))
    records.append(cr.ConsumerGroupTargetAssignmentRecord(group_id, member_id, None))
    records.append(cr.ConsumerGroupMemberSubscriptionRecord(group_id, member_id, None))


def replace_member(group: ConsumerGroup, existing: ConsumerMember, member_id: str,
                   records: list[r.Record]) -> ConsumerMember:
    """A static member rejoining under a new member id (getOrMaybeSubscribeStatic-
    ConsumerGroupMember, replaceMember): the new member id takes over the old member's state
    at epoch 0; the old one's records are tombstoned and the new one's written."""
    member = dataclasses.replace(existing, member_id=member_id, member_epoch=0,
                                 previous_member_epoch=0)
    _remove_member_records(group.group_id, existing.member_id, records)
    records.append(cr.ConsumerGroupMemberSubscriptionRecord(
        group.group_id, member_id, member.subscription_value()))
    records.append(cr.ConsumerGroupTargetAssignmentRecord(
        group.group_id, member_id, cr.ConsumerGroupTargetAssignmentMemberValue(
            to_record(group.target.get(existing.member_id, {})))))
    records.append(cr.ConsumerGroupCurrentAssignmentRecord(
        group.group_id, member_id, member.current_assignment_value()))
    return member


def fence_members(txn: Txn, group: ConsumerGroup, members: Sequence[ConsumerMember],
                  records: list[r.Record]) -> None:
    """consumerGroupFenceMembers: remove them, bump the group epoch (with the metadata hash
    of the members that remain) and cancel their timers (cancelTimers: session, rebalance,
    a classic member's join and sync). When only classic members would remain and the
    policy allows a downgrade (validateOnlineDowngradeWithFencedMembers), the group is
    converted to a classic group instead (convertToClassicGroup), and no timer is cancelled,
    the fenced members' included (ConsumerTimers)."""
    if not members:
        return
    gone = {m.member_id for m in members}
    rest_count = len(group.members) - len(gone)
    if (group.all_members_use_classic_protocol_except(members) and rest_count > 0
            and txn.config.online_downgrade_enabled and rest_count <= txn.config.group_max_size):
        # validateOnlineDowngradeWithFencedMembers: only classic members would remain
        from groupspec.coordinator.consumer import migration  # (it imports this module)

        migration.convert_to_classic_group(txn, group, gone, records)
        return
    for m in members:
        _remove_member_records(group.group_id, m.member_id, records)
    # maybeDeleteResolvedRegularExpressions: the regexes only these members subscribed to
    leaving = subscribed_regexes(members)
    deleted = set()
    for rx in java_hash_order(leaving):
        if group.num_subscribed_members(rx) == leaving[rx]:
            records.append(cr.ConsumerGroupRegularExpressionRecord(group.group_id, rx, None))
            deleted.add(rx)
    # computeSubscribedTopicNamesWithoutDeletedMembers
    metadata_hash = _metadata_hash(txn, group.counts_without(members, deleted))
    records.append(cr.ConsumerGroupEpochRecord(group.group_id, cr.ConsumerGroupMetadataValue(
        epoch=group.group_epoch + 1, metadata_hash=metadata_hash)))
    for m in members:
        if m.member_id in group.session_deadlines:
            records.append(cr.ConsumerSessionTimerSet(group.group_id, m.member_id, None))
        if m.member_id in group.rebalance_timers:
            records.append(cr.ConsumerRebalanceTimerSet(group.group_id, m.member_id, None))
        if m.member_id in group.classic_join_deadlines:
            records.append(cr.ConsumerClassicJoinTimerSet(group.group_id, m.member_id, None))
        if m.member_id in group.classic_sync_deadlines:
            records.append(cr.ConsumerClassicSyncTimerSet(group.group_id, m.member_id, None))


def _leave(txn: Txn, req: ConsumerGroupHeartbeatRequest,
           records: list[r.Record]) -> ConsumerGroupHeartbeatResponse:
    """consumerGroupLeave."""
    group = _existing(txn, req.group_id)
    answer = ConsumerGroupHeartbeatResponse(
        error=Error.NONE, member_id=req.member_id, member_epoch=req.member_epoch,
        heartbeat_interval_ms=0)
    if req.instance_id is None:
        member = _member(group, req.member_id, False)
        fence_members(txn, group, [member], records)
        return answer
    member = known_static_member(group, req.member_id, req.instance_id)
    if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        # consumerGroupStaticMemberGroupLeave: epoch -2, nothing pending revocation; its
        # timers keep running (the session timeout removes it unless it comes back)
        leaving = dataclasses.replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                      pending_revocation={})
        records.append(cr.ConsumerGroupCurrentAssignmentRecord(
            group.group_id, member.member_id, leaving.current_assignment_value()))
        return dataclasses.replace(answer, member_id=member.member_id)
    fence_members(txn, group, [member], records)
    return answer


# ---------------------------------------------------------------------------- timers
def _fence_on_timeout(txn: Txn, group: ConsumerGroup, member: ConsumerMember,
                      cancelled: type[r.Record]) -> None:
    """consumerGroupFenceMemberOperation from a timer whose own cancellation (a record of
    kind ``cancelled``) is already written."""
    records: list[r.Record] = []
    fence_members(txn, group, [member], records)
    for rec in records:
        if not isinstance(rec, cancelled):
            txn.emit(rec)


def expire_session(txn: Txn, group_id: str, member_id: str) -> None:
    """The session timeout fired: consumerGroupFenceMemberOperation ("the member session
    expired"); nothing if the group or member is gone."""
    group = txn.state.consumer_groups.get(group_id)
    if group is None:
        return
    txn.emit(cr.ConsumerSessionTimerSet(group_id, member_id, None))
    member = group.members.get(member_id)
    if member is not None:
        _fence_on_timeout(txn, group, member, cr.ConsumerSessionTimerSet)


def expire_rebalance(txn: Txn, group_id: str, member_id: str, member_epoch: int) -> None:
    """The rebalance timeout fired: the member is fenced if it is still in the epoch it
    had to leave (it did not revoke in time)."""
    group = txn.state.consumer_groups.get(group_id)
    if group is None:
        return
    txn.emit(cr.ConsumerRebalanceTimerSet(group_id, member_id, None))
    member = group.members.get(member_id)
    if member is not None and member.member_epoch == member_epoch:
        _fence_on_timeout(txn, group, member, cr.ConsumerRebalanceTimerSet)


def expire_classic_timer(txn: Txn, group_id: str, member_id: str, sync: bool) -> None:
    """A classic member's join (``sync`` False) or sync timeout fired:
    consumerGroupFenceMemberOperation ("the classic member failed to join within the
    rebalance timeout", "the member failed to sync within timeout"); nothing if the group
    or member is gone."""
    group = txn.state.consumer_groups.get(group_id)
    if group is None:
        return
    kind = cr.ConsumerClassicSyncTimerSet if sync else cr.ConsumerClassicJoinTimerSet
    txn.emit(kind(group_id, member_id, None))
    member = group.members.get(member_id)
    if member is not None:
        _fence_on_timeout(txn, group, member, kind)


__all__ = [
    "ApiError",
    "TopicMetadata",
    "complete_regex_resolution",
    "expire_classic_timer",
    "expire_rebalance",
    "expire_session",
    "fence_members",
    "handle_consumer_group_heartbeat",
    "known_static_member",
    "replace_member",
    "request_error",
    "subscribe_and_reconcile",
]

"""OffsetCommit, OffsetFetch, OffsetDelete and offset expiry.

Sources: OffsetMetadataManager.validateOffsetCommit / commitOffset / fetchOffsets /
cleanupExpiredOffsets / deleteOffsets (group-coordinator/.../OffsetMetadataManager.java),
ClassicGroup.validateOffsetCommit, validateOffsetDelete, isSubscribedToTopic and
offsetExpirationCondition (group-coordinator/.../classic/ClassicGroup.java),
GroupCoordinatorService.deleteOffsets. The coordinator checks (member id,
group.instance.id, generation) and the group state, never which partitions a member owns.
"""

from __future__ import annotations

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic.group import CONSUMER_PROTOCOL_TYPE, Group
from groupspec.coordinator.classic.membership import validate_member
from groupspec.coordinator.committed_offset import CommittedOffset, expire_timestamp
from groupspec.coordinator.consumer.expiry import delete_empty_consumer_group
from groupspec.coordinator.consumer.group import ConsumerGroup, subscription_counts
from groupspec.coordinator.consumer.member import ConsumerMember
from groupspec.coordinator.context import Txn
from groupspec.coordinator.offset_order import listed
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import (
    OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION,
    UNKNOWN_GENERATION_ID,
    UNKNOWN_MEMBER_ID,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeletePartitionResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    TxnOffsetCommitPartitionResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

#: OffsetCommit from this version on for consumer-protocol members (KIP-848)
OFFSET_COMMIT_CONSUMER_PROTOCOL_MIN_VERSION = 9

S = GroupState


def validate_offset_commit(group: Group, req: OffsetCommitRequest | TxnOffsetCommitRequest) -> Error:
    """ClassicGroup.validateOffsetCommit, for an OffsetCommit or (``isTransactional``) a
    TxnOffsetCommit: a transactional commit that names no member, generation or instance
    is accepted whatever the group's state (the older TxnOffsetCommit versions carry none),
    and one from a current member is accepted between JoinGroup and SyncGroup too (the
    group's state is not enforced for transactions)."""
    transactional = isinstance(req, TxnOffsetCommitRequest)
    if group.state is S.Dead:
        return Error.COORDINATOR_NOT_AVAILABLE
    if req.generation_id < 0 and group.state is S.Empty:
        # "Simple" commits (admin tools, assign() consumers): member ids ignored (KAFKA-14201).
        return Error.NONE
    if req.generation_id >= 0 or req.member_id != "" or req.group_instance_id is not None:
        error = validate_member(group, req.member_id, req.group_instance_id)
        if error is not Error.NONE:
            return error
        if req.generation_id != group.generation_id:
            return Error.ILLEGAL_GENERATION
    elif not transactional and group.state is not S.Empty:
        # Only members may commit to an active group.
        return Error.UNKNOWN_MEMBER_ID
    if not transactional and group.state is S.CompletingRebalance:
        # Between JoinGroup and SyncGroup the new generation may not commit.
        return Error.REBALANCE_IN_PROGRESS
    return Error.NONE


def validate_consumer_offset_commit(group: ConsumerGroup, req: OffsetCommitRequest) -> Error:
    """ConsumerGroup.validateOffsetCommit (non-transactional): with epoch -1 only into an
    empty group; otherwise a member at its current member epoch (validateMemberEpoch); a
    consumer-protocol member with OffsetCommit v9 or later. A classic member of the group
    (a mixed group) commits as classic clients do, with any version, its generation being
    its member epoch, and a mismatch is ILLEGAL_GENERATION, as a classic group answers it;
    a consumer-protocol member's is STALE_MEMBER_EPOCH (KIP-848 fences by epoch)."""
    if req.generation_id < 0 and not group.members:
        return Error.NONE
    member = group.members.get(req.member_id)
    if member is None:
        return Error.UNKNOWN_MEMBER_ID
    if not member.uses_classic_protocol and req.version < OFFSET_COMMIT_CONSUMER_PROTOCOL_MIN_VERSION:
        return Error.UNSUPPORTED_VERSION
    return _member_epoch_error(member, req.generation_id)


def validate_consumer_txn_offset_commit(group: ConsumerGroup, req: TxnOffsetCommitRequest) -> Error:
    """ConsumerGroup.validateOffsetCommit for a TxnOffsetCommit (``isTransactional``), as
    OffsetMetadataManager.validateTransactionalOffsetCommit answers it: with epoch -1 into
    an empty group, or naming no member, epoch or instance, accepted; else a known member
    at its member epoch, whatever OffsetCommit version it would need, and a wrong epoch is
    ILLEGAL_GENERATION for every member (the STALE_MEMBER_EPOCH a consumer-protocol member
    would get is turned into it: a transactional producer knows generations only)."""
    if req.generation_id < 0 and not group.members:
        return Error.NONE
    if req.generation_id == UNKNOWN_GENERATION_ID and req.member_id == UNKNOWN_MEMBER_ID \
            and req.group_instance_id is None:
        return Error.NONE
    member = group.members.get(req.member_id)
    if member is None:
        return Error.UNKNOWN_MEMBER_ID  # (getOrMaybeCreateMember(memberId, false))
    return Error.NONE if req.generation_id == member.member_epoch else Error.ILLEGAL_GENERATION


def _member_epoch_error(member: ConsumerMember, received: int) -> Error:
    """ConsumerGroup.validateMemberEpoch: the epoch must be the member's; a classic member
    is told ILLEGAL_GENERATION, a consumer-protocol one STALE_MEMBER_EPOCH."""
    if received == member.member_epoch:
        return Error.NONE
    return Error.ILLEGAL_GENERATION if member.uses_classic_protocol else Error.STALE_MEMBER_EPOCH


def handle_offset_commit(txn: Txn, request_id: int, req: OffsetCommitRequest) -> None:
    def answer_all(error: Error) -> None:
        txn.respond(
            request_id,
            OffsetCommitResponse(
                partitions=tuple(
                    OffsetCommitPartitionResponse(p.topic, p.partition, error)
                    for p in req.partitions
                )
            ),
        )

    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        error = validate_consumer_offset_commit(consumer_group, req)
        if error is not Error.NONE:
            return answer_all(error)
        return _commit(txn, request_id, req.group_id, req)
    # GroupCoordinatorService.commitOffsets rejects only a null group id: the empty group id
    # is accepted "for backwards compatibility", so "" is an ordinary (simple) group here.
    group = txn.state.groups.get(req.group_id)
    if group is None:
        if req.generation_id >= 0:
            # OffsetMetadataManager.validateOffsetCommit: GROUP_ID_NOT_FOUND from v9 on,
            # ILLEGAL_GENERATION before (backward compatibility).
            if req.version >= OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION:
                return answer_all(Error.GROUP_ID_NOT_FOUND)
            return answer_all(Error.ILLEGAL_GENERATION)
        # A simple group is created for generation-less commits.
        txn.emit(r.GroupCreated(req.group_id, txn.now_ms))
        group = txn.state.groups[req.group_id]
    error = validate_offset_commit(group, req)
    if error is not Error.NONE:
        return answer_all(error)
    if group.state in (S.Stable, S.PreparingRebalance):
        # A commit counts as a heartbeat (KAFKA-3470).
        member = group.members[req.member_id]
        rb.reschedule_heartbeat(txn, group, req.member_id, member.session_timeout_ms)
    return _commit(txn, request_id, group.group_id, req)


def _commit(txn: Txn, request_id: int, group_id: str, req: OffsetCommitRequest) -> None:
    results = []
    # one expire timestamp for the request's offsets (commitOffset), or none
    expires = expire_timestamp(txn.now_ms, req.retention_time_ms)
    for p in req.partitions:
        meta = p.committed_metadata
        # OffsetMetadataManager.isMetadataInvalid compares String.length(), i.e. UTF-16 code
        # units, with offset.metadata.max.bytes (despite its name, not encoded bytes).
        if meta is not None and _utf16_length(meta) > txn.config.offset_metadata_max_bytes:
            results.append(
                OffsetCommitPartitionResponse(p.topic, p.partition, Error.OFFSET_METADATA_TOO_LARGE)
            )
            continue
        txn.emit(
            r.OffsetCommitted(
                group_id,
                p.topic,
                p.partition,
                p.committed_offset,
                # no metadata is stored as "" (OffsetAndMetadata.fromRequest, NO_METADATA), so
                # OffsetFetch answers "" for it
                "" if meta is None else meta,
                txn.now_ms,
                req.generation_id,
                req.member_id,
                p.committed_leader_epoch,
                expires,
            )
        )
        results.append(OffsetCommitPartitionResponse(p.topic, p.partition, Error.NONE))
    txn.respond(request_id, OffsetCommitResponse(partitions=tuple(results)))
    return None


def handle_txn_offset_commit(txn: Txn, request_id: int, req: TxnOffsetCommitRequest) -> None:
    """TxnOffsetCommit, as GroupCoordinatorService.commitTransactionalOffsets and
    OffsetMetadataManager.commitTransactionalOffset answer it (KIP-447's fencing of zombie
    producers by the consumer group's generation): an empty group id is INVALID_GROUP_ID
    before the shard; an unknown group is created as a simple group for a commit with a
    negative generation and is ILLEGAL_GENERATION otherwise (whatever the version, unlike
    OffsetCommit); then the group's check (:func:`validate_offset_commit`,
    :func:`validate_consumer_txn_offset_commit`), whose error answers every partition, and
    each partition's metadata size (OFFSET_METADATA_TOO_LARGE) as OffsetCommit checks it.
    Unlike OffsetCommit, the commit does not count as a heartbeat.

    Each offset accepted is written in the producer's transaction: an OffsetCommitted
    record with the producer id, pending (CoordinatorState.pending_offsets) until the
    transaction's marker commits or drops it. Not modelled (docs/deviations.md): the
    transaction. The broker verifies it before the shard (its errors, INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE and the like, are the transaction coordinator's to decide), and the
    markers are not on the group protocol's wire: a pending offset stays pending, and the
    offsets the group's OffsetFetch answers stay those of its OffsetCommits (the validator
    lets an OffsetFetch answer a transaction's offsets too)."""
    def answer_all(error: Error) -> None:
        txn.respond(request_id, TxnOffsetCommitResponse(partitions=tuple(
            TxnOffsetCommitPartitionResponse(p.topic, p.partition, error.code) for p in req.partitions)))

    if req.group_id == "":  # (isGroupIdNotEmpty)
        return answer_all(Error.INVALID_GROUP_ID)
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        error = validate_consumer_txn_offset_commit(consumer_group, req)
    else:
        group = txn.state.groups.get(req.group_id)
        if group is None:
            if req.generation_id >= 0:
                return answer_all(Error.ILLEGAL_GENERATION)  # (not GROUP_ID_NOT_FOUND, at any version)
            txn.emit(r.GroupCreated(req.group_id, txn.now_ms))
            group = txn.state.groups[req.group_id]
        error = validate_offset_commit(group, req)
    if error is not Error.NONE:
        return answer_all(error)
    limit = txn.config.offset_metadata_max_bytes
    results = []
    for p in req.partitions:
        if p.committed_metadata is not None and _utf16_length(p.committed_metadata) > limit:
            results.append(TxnOffsetCommitPartitionResponse(p.topic, p.partition, Error.OFFSET_METADATA_TOO_LARGE.code))
            continue
        # written in the producer's transaction: pending (OffsetAndMetadata.fromRequest: the
        # leader epoch, no expire timestamp)
        txn.emit(r.OffsetCommitted(
            req.group_id, p.topic, p.partition, p.committed_offset,
            "" if p.committed_metadata is None else p.committed_metadata, txn.now_ms,
            req.generation_id, req.member_id, p.committed_leader_epoch, producer_id=req.producer_id))
        results.append(TxnOffsetCommitPartitionResponse(p.topic, p.partition, Error.NONE.code))
    txn.respond(request_id, TxnOffsetCommitResponse(partitions=tuple(results)))
    return None


def all_offsets_tombstones(txn: Txn, group_id: str,
                           offsets: dict[tuple[str, int], CommittedOffset]) -> tuple[tuple[str, int], ...]:
    """OffsetMetadataManager.deleteAllOffsets: a tombstone for each committed offset, in the
    order of the group's offset maps, then one for each partition with only pending
    transactional offsets, in the order of the open transactions' maps
    (``CoordinatorState.pending_order``)."""
    committed = tuple(listed(txn.state.offset_order, group_id, offsets)) if offsets else ()
    pending = txn.state.pending_offsets.get(group_id, {})
    pending_only = [tp for tp in pending if tp not in offsets]
    return committed + tuple(listed(txn.state.pending_order, group_id, pending_only))


def _utf16_length(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def validate_consumer_offset_fetch(group: ConsumerGroup, req: OffsetFetchRequest) -> Error:
    """ConsumerGroup.validateOffsetFetch: no member id and a negative epoch (an admin
    client, or a client that does not send them) may fetch; else a member at its epoch
    (a mismatch as validateMemberEpoch answers it: ILLEGAL_GENERATION for a classic member;
    OffsetMetadataManagerTest testConsumerGroupOffsetFetchWithIllegalGenerationId)."""
    if req.member_id is None:
        if req.member_epoch < 0:
            return Error.NONE
        # Kafka looks the null member id up in the members map, a TimelineHashMap, which
        # hashes the key: the NullPointerException fails the read, answered
        # UNKNOWN_SERVER_ERROR (as the 4.1.2 jar answers it: tests/
        # test_consumer_coordinator_kafka_jar.py)
        return Error.UNKNOWN_SERVER_ERROR
    member = group.members.get(req.member_id)
    if member is None:
        return Error.UNKNOWN_MEMBER_ID
    return _member_epoch_error(member, req.member_epoch)


def handle_offset_fetch(txn: Txn, request_id: int, req: OffsetFetchRequest) -> None:
    """OffsetFetch: no member or generation check for classic groups. An unknown or Dead
    group (validateOffsetFetch throws GroupIdNotFoundException) is not an error:
    OffsetMetadataManager.fetchOffsets answers every asked partition with offset -1 and
    fetchAllOffsets answers an empty list. All offsets are listed in Kafka's order
    (coordinator/offset_order.py); asked partitions in the request's."""
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        error = validate_consumer_offset_fetch(consumer_group, req)
        if error is not Error.NONE:
            txn.respond(request_id, OffsetFetchResponse(error=error, partitions=()))
            return
        offsets = consumer_group.offsets
    else:
        group = txn.state.groups.get(req.group_id)
        if group is not None and group.state is S.Dead:
            group = None
        offsets = group.offsets if group is not None else {}
    if req.partitions is not None:
        wanted = list(req.partitions)
    else:
        # fetchAllOffsets: in the order of Kafka's offset maps (coordinator/offset_order.py)
        wanted = listed(txn.state.offset_order, req.group_id, offsets)
    parts = []
    # a require_stable fetch is answered UNSTABLE_OFFSET_COMMIT for a partition with a
    # pending transactional offset (fetchOffsets, fetchAllOffsets: openTransactions)
    pending = txn.state.pending_offsets.get(req.group_id, {}) if req.require_stable else {}
    for tp in wanted:
        c = offsets.get(tp)
        if tp in pending:
            parts.append(OffsetFetchPartitionResponse(tp[0], tp[1], -1, "", Error.UNSTABLE_OFFSET_COMMIT))
        elif c is None:
            parts.append(OffsetFetchPartitionResponse(tp[0], tp[1], -1, "", Error.NONE))
        else:
            # (OffsetMetadataManager.fetchOffsets: the leader epoch stored, else -1)
            parts.append(OffsetFetchPartitionResponse(tp[0], tp[1], c.committed_offset, c.metadata,
                                                      Error.NONE, c.leader_epoch))
    txn.respond(request_id, OffsetFetchResponse(error=Error.NONE, partitions=tuple(parts)))


def validate_offset_delete(group: Group) -> Error:
    """ClassicGroup.validateOffsetDelete: a Dead group is not found; a group with members
    (Stable, PreparingRebalance, CompletingRebalance) may have offsets deleted only when it
    speaks the consumer protocol type (its subscriptions are then known), else
    NON_EMPTY_GROUP. ConsumerGroup.validateOffsetDelete accepts every state."""
    if group.state is S.Dead:
        return Error.GROUP_ID_NOT_FOUND
    if group.state is not S.Empty and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return Error.NON_EMPTY_GROUP
    return Error.NONE


def handle_offset_delete(txn: Txn, request_id: int, req: OffsetDeleteRequest) -> None:
    """OffsetDelete (KIP-496), as GroupCoordinatorService.deleteOffsets and
    OffsetMetadataManager.deleteOffsets answer it: a null or empty group id is
    INVALID_GROUP_ID before the shard (unlike OffsetCommit, "" is refused here); an unknown
    group GROUP_ID_NOT_FOUND (GroupMetadataManager.group); an error at the top level
    answers no partition. Otherwise each partition of a topic the group is subscribed to is
    kept and answered GROUP_SUBSCRIBED_TO_TOPIC, every other partition answered NONE, and a
    tombstone written for those with a committed offset (a partition never committed is
    answered NONE too, with nothing written). The partitions the broker's API layer answers
    itself (a topic or partition its metadata cache does not have: UNKNOWN_TOPIC_OR_PARTITION,
    or one the client may not read: TOPIC_AUTHORIZATION_FAILED; KafkaApis.
    handleOffsetDeleteRequest) never reach the coordinator; the validator takes those from
    the broker's answer."""
    if not req.group_id:
        txn.respond(request_id, OffsetDeleteResponse(error=Error.INVALID_GROUP_ID))
        return
    consumer_group = txn.state.consumer_groups.get(req.group_id)
    offsets: dict[tuple[str, int], CommittedOffset]
    if consumer_group is not None:
        # ModernGroup.isSubscribedToTopic: a topic some member subscribes to by name, or
        # that a resolved regular expression of the group matched
        counts = subscription_counts(consumer_group.members.values(),
                                     consumer_group.resolved_regexes.values())

        def subscribed(topic: str) -> bool:
            return topic in counts

        offsets = consumer_group.offsets
    else:
        group = txn.state.groups.get(req.group_id)
        if group is None:
            txn.respond(request_id, OffsetDeleteResponse(error=Error.GROUP_ID_NOT_FOUND))
            return
        error = validate_offset_delete(group)
        if error is not Error.NONE:
            txn.respond(request_id, OffsetDeleteResponse(error=error))
            return
        subscribed = group.is_subscribed_to_topic
        offsets = group.offsets
    results: list[OffsetDeletePartitionResponse] = []
    tombstones: list[tuple[str, int]] = []
    pending = txn.state.pending_offsets.get(req.group_id, {})
    for topic, partition in req.partitions:
        if subscribed(topic):
            results.append(OffsetDeletePartitionResponse(topic, partition, Error.GROUP_SUBSCRIBED_TO_TOPIC))
            continue
        results.append(OffsetDeletePartitionResponse(topic, partition, Error.NONE))
        # a tombstone where an offset is committed or pending in a transaction, in the
        # request's order, one for each time the request names the partition
        # (OffsetMetadataManager.deleteOffsets asks hasCommittedOffset and
        # hasPendingTransactionalOffsets of the state before its records apply)
        if (topic, partition) in offsets or (topic, partition) in pending:
            tombstones.append((topic, partition))
    if tombstones:
        txn.emit(r.OffsetsDeleted(req.group_id, tuple(tombstones), "offset delete"))
    txn.respond(request_id, OffsetDeleteResponse(error=Error.NONE, partitions=tuple(results)))


def expire_offsets(txn: Txn, group: Group) -> None:
    """cleanupExpiredOffsets for one group, then delete it if it is Empty with no offsets."""
    retention = txn.config.offsets_retention_ms
    expired: list[tuple[str, int]] = []
    now = txn.now_ms
    # (ClassicGroup.offsetExpirationCondition; an offset with its own expire timestamp
    # expires at it whatever the base: CommittedOffset.expired)
    if group.protocol_type is None:
        # Simple group: by commit timestamp.
        expired = [tp for tp, c in group.offsets.items() if c.expired(c.commit_timestamp_ms, now, retention)]
    elif group.state is S.Empty:
        # Since the group became Empty.
        expired = [tp for tp, c in group.offsets.items() if c.expired(group.state_timestamp_ms, now, retention)]
    elif group.state is S.Stable and group.protocol_type == CONSUMER_PROTOCOL_TYPE:
        # the topics the group subscribed to when its generation started (or it loaded),
        # as ClassicGroup.computeSubscribedTopics made them then: a static member replaced
        # in Stable with another subscription does not change them
        subscribed = group.subscribed_topics
        if subscribed is not None:
            expired = [
                tp
                for tp, c in group.offsets.items()
                if tp[0] not in subscribed and c.expired(c.commit_timestamp_ms, now, retention)
            ]
    # PreparingRebalance and CompletingRebalance never expire offsets (KAFKA-13636).
    pending = txn.state.pending_offsets.get(group.group_id)
    if pending and expired:
        # a partition with a pending transactional offset keeps its committed one
        # (cleanupExpiredOffsets: hasPendingTransactionalOffsets)
        expired = [tp for tp in expired if tp not in pending]
    if expired:
        # in the order cleanupExpiredOffsets walks the group's offset maps
        txn.emit(r.OffsetsDeleted(group.group_id, tuple(
            listed(txn.state.offset_order, group.group_id, set(expired))), "retention"))
    if group.state is S.Empty and not group.offsets and not group.members and not pending:
        # (and no open transaction: cleanupExpiredOffsets, openTransactions.contains)
        delete_group(txn, group)


def delete_group(txn: Txn, group: Group) -> None:
    """Dead, tombstoned, and gone from the coordinator."""
    tombstones = all_offsets_tombstones(txn, group.group_id, group.offsets)
    if tombstones:
        txn.emit(r.OffsetsDeleted(group.group_id, tombstones, "group deleted"))
    rb.transition(txn, group, S.Dead)
    txn.emit(r.GroupTombstoned(group.group_id))
    txn.emit(r.GroupRemoved(group.group_id))


def delete_consumer_group(txn: Txn, group: ConsumerGroup) -> None:
    """An empty consumer group deleted by DeleteGroups (GroupCoordinatorShard.deleteGroups):
    its offsets' tombstones (OffsetMetadataManager.deleteAllOffsets, in the order of the
    group's offset maps), then the group's, as the offset expiry deletes an emptied group
    (ConsumerGroup.createGroupTombstoneRecords: consumer/expiry.py)."""
    tombstones = all_offsets_tombstones(txn, group.group_id, group.offsets)
    if tombstones:
        txn.emit(r.OffsetsDeleted(group.group_id, tombstones, "group deleted"))
    delete_empty_consumer_group(txn, group)

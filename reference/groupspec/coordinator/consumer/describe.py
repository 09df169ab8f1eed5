"""ConsumerGroupDescribe (KIP-848): a consumer group as ``kafka-consumer-groups.sh`` shows it.

Sources: GroupCoordinatorService.consumerGroupDescribe (an empty group id is answered
INVALID_GROUP_ID before any shard; the others are grouped by ``__consumer_offsets``
partition, in a ``HashMap<TopicPartition, List<String>>``, and the answers come back
empty ids first, then partition by partition in that map's order, each partition's groups
in request order), GroupMetadataManager.consumerGroupDescribe (GROUP_ID_NOT_FOUND for an
unknown or classic group), ConsumerGroup.asDescribedGroup and
ConsumerGroupMember.asConsumerGroupDescribeMember (topics missing from the metadata image
are left out of the assignments).
"""

from __future__ import annotations

import dataclasses

from groupspec.coordinator.consumer.group import (
    ConsumerGroup,
    current_preferred_assignor,
    java_hash_order,
)
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.coordinator.context import Txn
from groupspec.coordinator.service_order import service_order
from groupspec.protocol.consumer_group_messages import (
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedAssignment,
    DescribedGroup,
    DescribedMember,
    DescribedTopicPartitions,
)
from groupspec.protocol.errors import Error

#: the authorized operations of a group when every operation is allowed: READ (3), DELETE
#: (6), DESCRIBE (8), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11), the operations
#: AclEntry.supportedOperations lists for a group, as a bit field (Utils.to32BitField)
GROUP_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 6, 8, 10, 11))


def _not_found(group_id: str, message: str, error: Error = Error.GROUP_ID_NOT_FOUND) -> DescribedGroup:
    return DescribedGroup(error=error, error_message=message or None, group_id=group_id,
                          group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
                          members=())


def _partitions(txn: Txn, a: Assignment) -> DescribedAssignment:
    names = {int(t.topic_id): t.name for t in txn.state.topics.values()}
    out = []
    for topic, ps in a.items():
        name = names.get(int(topic))
        if name is not None:
            out.append(DescribedTopicPartitions(topic, name, tuple(sorted(ps))))
    return DescribedAssignment(tuple(out))


def _member(txn: Txn, g: ConsumerGroup, m: ConsumerMember) -> DescribedMember:
    return DescribedMember(
        member_id=m.member_id,
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        member_epoch=m.member_epoch,
        client_id=m.client_id,
        client_host=m.client_host,
        subscribed_topic_names=tuple(java_hash_order(sorted(m.subscribed_topic_names))),
        subscribed_topic_regex=m.subscribed_topic_regex,
        assignment=_partitions(txn, m.assigned),
        target_assignment=_partitions(txn, g.target.get(m.member_id, {})),
        member_type=MEMBER_TYPE_CLASSIC if m.uses_classic_protocol else MEMBER_TYPE_CONSUMER,
    )


def unknown_group(group_id: str) -> DescribedGroup:
    """ConsumerGroupDescribe's entry for a group the shard does not have.
    (GroupMetadataManager.consumerGroupDescribe looks the group up with
    consumerGroup(groupId, committedOffset): GroupMetadataManager.group's message.)"""
    return _not_found(group_id, f"Group {group_id} not found.")


def describe_group(txn: Txn, group_id: str) -> DescribedGroup:
    g = txn.state.consumer_groups.get(group_id)
    if g is None:
        if group_id in txn.state.groups:
            return _not_found(group_id, f"Group {group_id} is not a consumer group.")
        return unknown_group(group_id)
    return DescribedGroup(
        error=Error.NONE,
        group_id=group_id,
        group_state=g.state.value,
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
        # ConsumerGroup.preferredServerAssignor: ties go to the first name in its
        # serverAssignors map's order
        assignor_name=(current_preferred_assignor(g) or txn.config.consumer_group_assignors[0]),
        # ConsumerGroup.asDescribedGroup iterates the members map as of the committed
        # offset; with everything committed, in the map's own order (timeline_order.py)
        members=tuple(_member(txn, g, g.members[mid]) for mid in g.member_order.order()),
    )


def handle_consumer_group_describe(txn: Txn, request_id: int, req: ConsumerGroupDescribeRequest) -> None:
    # empty ids first (the service answers them before any shard), then the others partition
    # by partition in the service's HashMap order (service_order)
    answers = [_not_found("", "", Error.INVALID_GROUP_ID) for gid in req.group_ids if gid == ""]
    named = tuple(gid for gid in req.group_ids if gid != "")
    answers += [describe_group(txn, gid) for gid in service_order(named, txn.config.offsets_topic_num_partitions)]
    if req.include_authorized_operations:
        # KafkaApis.handleConsumerGroupDescribe fills them in on every group described
        # without error; every request is authorized here (docs/deviations.md), as by a
        # broker with no authorizer: AuthHelper.authorizedOperations gives every operation
        # a group supports
        answers = [dataclasses.replace(a, authorized_operations=GROUP_AUTHORIZED_OPERATIONS)
                   if a.error is Error.NONE else a for a in answers]
    txn.respond(request_id, ConsumerGroupDescribeResponse(groups=tuple(answers)))

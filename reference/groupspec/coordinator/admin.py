"""ListGroups, DescribeGroups and DeleteGroups, as kafka-consumer-groups.sh sees them.

Sources: ClassicGroup.asListedGroup / asDescribedGroup and GroupMetadataManager.
describeGroups / deleteGroups (group-coordinator/.../). Dead and unknown groups are described
as state "Dead" with no members; members' metadata is shown only when the group
is Stable (their assignment always); DeleteGroups needs an Empty group (NON_EMPTY_GROUP).
"""

from __future__ import annotations

from groupspec.coordinator.context import Txn
from groupspec.coordinator.find_coordinator import coordinator_partition, java_string_hash
from groupspec.coordinator.offsets import delete_consumer_group, delete_group
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import (
    DESCRIBE_GROUPS_GROUP_ID_NOT_FOUND_MIN_VERSION,
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
)

S = GroupState

#: ``Topic.GROUP_METADATA_TOPIC_NAME``, whose ``TopicPartition`` keys the service's maps
_OFFSETS_TOPIC_HASH = java_string_hash("__consumer_offsets")


def _partition_key_hash(partition: int) -> int:
    """``TopicPartition.hashCode`` of ``__consumer_offsets``-``partition`` (31 * (31 +
    partition) + the topic name's hash, as a wrapping int32), unsigned."""
    return (31 * (31 + partition) + _OFFSETS_TOPIC_HASH) & 0xFFFFFFFF


def service_order(group_ids: tuple[str, ...], num_partitions: int) -> list[str]:
    """The order in which GroupCoordinatorService.describeGroups and deleteGroups list the
    results of ``group_ids``: each id is put (``computeIfAbsent``) in a ``new
    HashMap<TopicPartition, List<String>>`` under its ``__consumer_offsets`` partition, one
    read or write operation is scheduled per partition in that map's iteration order, and
    the per-partition results are concatenated in that order (FutureUtils.combineFutures);
    within a partition the request's order is kept. So the answer lists the groups
    partition by partition, in Java ``HashMap`` order, not in the request's order
    (GroupCoordinatorServiceTest testDeleteGroups: partitions 2, 0, 1 asked, answered 0, 1,
    2). The map is simulated as Java 17's HashMap runs ``computeIfAbsent``: a table of 16
    buckets made at the first call and doubled at the start of a call once the size exceeds
    three quarters of it (a resize splits each bucket keeping its order), a new key put at
    the head of its bucket (``h ^ (h >>> 16)`` masked by the table size), a bucket reaching
    eight keys doubling a table smaller than 64 (``treeifyBin``; a tree bin, possible only
    above 48 partitions, is not modelled)."""
    by_partition: dict[int, list[str]] = {}
    table: list[list[int]] = []

    def bucket(partition: int, size: int) -> int:
        h = _partition_key_hash(partition)
        return (h ^ (h >> 16)) & (size - 1)

    def resize() -> list[list[int]]:
        bigger: list[list[int]] = [[] for _ in range(2 * len(table) if table else 16)]
        for chain in table:
            for partition in chain:
                bigger[bucket(partition, len(bigger))].append(partition)
        return bigger

    for gid in group_ids:
        if not table or len(by_partition) > len(table) * 3 // 4:
            table = resize()
        partition = coordinator_partition(gid, num_partitions)
        if partition in by_partition:
            by_partition[partition].append(gid)
            continue
        chain = table[bucket(partition, len(table))]
        chain.insert(0, partition)
        by_partition[partition] = [gid]
        if len(chain) >= 8 and len(table) < 64:
            table = resize()
    return [gid for chain in table for partition in chain for gid in by_partition[partition]]


def handle_list_groups(txn: Txn, request_id: int, req: ListGroupsRequest) -> None:
    # GroupMetadataManager.listGroups lower-cases and trims each filter.
    wanted = {s.strip().lower() for s in req.states_filter}
    listed = [
        ListedGroup(g.group_id, g.protocol_type or "", g.state.value)
        for g in txn.state.groups.values()
        if g.state is not S.Dead and (not wanted or g.state.value.lower() in wanted)
    ]
    # ConsumerGroup.asListedGroup: protocol type "consumer", the state's name
    listed.extend(
        ListedGroup(g.group_id, "consumer", g.state.value)
        for g in txn.state.consumer_groups.values()
        if not wanted or g.state.value.lower() in wanted
    )
    groups = tuple(sorted(listed, key=lambda g: g.group_id))
    txn.respond(request_id, ListGroupsResponse(error=Error.NONE, groups=groups))


def handle_describe_groups(txn: Txn, request_id: int, req: DescribeGroupsRequest) -> None:
    out = []
    for gid in service_order(req.groups, txn.config.offsets_topic_num_partitions):
        g = txn.state.groups.get(gid)
        if g is None or g.state is S.Dead:
            # GroupMetadataManager.describeGroups: an unknown group is described as Dead, and
            # from v6 on with GROUP_ID_NOT_FOUND; older versions carry no error.
            # (GroupCoordinatorService.describeGroups answers INVALID_GROUP_ID only for a null
            # id, which the wire cannot carry from a client; "" reaches the shard.)
            error = (
                Error.GROUP_ID_NOT_FOUND
                if req.version >= DESCRIBE_GROUPS_GROUP_ID_NOT_FOUND_MIN_VERSION
                else Error.NONE
            )
            out.append(DescribedGroup(error, gid, S.Dead.value, "", ""))
            continue
        stable = g.state is S.Stable
        members = tuple(
            DescribedGroupMember(
                m.member_id,
                m.group_instance_id,
                m.info.client_id,
                m.info.client_host,
                # Metadata only when Stable: ClassicGroupMember.describeNoMetadata keeps the
                # assignment (the Scala summaryNoMetadata blanked both; Java is the target).
                m.metadata(g.protocol_name) if stable else b"",
                m.assignment,
            )
            for m in g.members.values()
        )
        protocol = g.protocol_name if (stable and g.protocol_name is not None) else ""
        out.append(
            DescribedGroup(Error.NONE, gid, g.state.value, g.protocol_type or "", protocol, members)
        )
    txn.respond(request_id, DescribeGroupsResponse(groups=tuple(out)))


def handle_delete_groups(txn: Txn, request_id: int, req: DeleteGroupsRequest) -> None:
    results = []
    for gid in service_order(req.groups_names, txn.config.offsets_topic_num_partitions):
        cg = txn.state.consumer_groups.get(gid)
        if cg is not None:
            # ConsumerGroup.validateDeleteGroup, then createGroupTombstoneRecords
            if cg.members:
                results.append(DeletableGroupResult(gid, Error.NON_EMPTY_GROUP))
            else:
                delete_consumer_group(txn, cg)
                results.append(DeletableGroupResult(gid, Error.NONE))
            continue
        g = txn.state.groups.get(gid)
        if g is None or g.state is S.Dead:
            results.append(DeletableGroupResult(gid, Error.GROUP_ID_NOT_FOUND))
        elif g.state is not S.Empty:
            results.append(DeletableGroupResult(gid, Error.NON_EMPTY_GROUP))
        else:
            delete_group(txn, g)
            results.append(DeletableGroupResult(gid, Error.NONE))
    txn.respond(request_id, DeleteGroupsResponse(results=tuple(results)))

"""ListGroups, DescribeGroups and DeleteGroups, as kafka-consumer-groups.sh sees them.

Sources: ClassicGroup.asListedGroup / asDescribedGroup and GroupMetadataManager.
describeGroups / deleteGroups (group-coordinator/.../). Dead and unknown groups are described
as state "Dead" with no members; members' metadata is shown only when the group
is Stable (their assignment always); DeleteGroups needs an Empty group (NON_EMPTY_GROUP).
"""

from __future__ import annotations

from groupspec.coordinator.classic.group import Group as ClassicGroup
from groupspec.coordinator.context import Txn
from groupspec.coordinator.offsets import delete_consumer_group, delete_group
from groupspec.coordinator.service_order import service_order
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

def handle_list_groups(txn: Txn, request_id: int, req: ListGroupsRequest) -> None:
    """In Kafka's order (coordinator/group_order.py): shard by shard as the runtime holds
    them, each shard's groups in its groups map's order."""
    # GroupMetadataManager.listGroups lower-cases and trims each state filter, and parses
    # each type filter case-insensitively (Group.GroupType.parse: an unknown name is the
    # type UNKNOWN, which no group has)
    wanted = {s.strip().lower() for s in req.states_filter}
    types = {t.lower() for t in req.types_filter or ()}
    listed: list[ListedGroup] = []
    for gid in txn.state.group_order.order():
        cg = txn.state.consumer_groups.get(gid)
        if cg is not None:
            # ConsumerGroup.asListedGroup: protocol type "consumer", the state's name
            if (not wanted or cg.state.value.lower() in wanted) and (not types or "consumer" in types):
                listed.append(ListedGroup(gid, "consumer", cg.state.value, "consumer"))
            continue
        g = txn.state.groups[gid]
        if g.state is not S.Dead and (not wanted or g.state.value.lower() in wanted) \
                and (not types or "classic" in types):
            listed.append(ListedGroup(gid, g.protocol_type or "", g.state.value, "classic"))
    txn.respond(request_id, ListGroupsResponse(error=Error.NONE, groups=tuple(listed)))


def handle_describe_groups(txn: Txn, request_id: int, req: DescribeGroupsRequest) -> None:
    out = [described_group(txn.state.groups.get(gid), gid, req.version)
           for gid in service_order(req.groups, txn.config.offsets_topic_num_partitions)]
    txn.respond(request_id, DescribeGroupsResponse(groups=tuple(out)))


def described_group(g: ClassicGroup | None, gid: str, version: int) -> DescribedGroup:
    """GroupMetadataManager.describeGroups' entry for classic group ``gid`` (``g``; None:
    no such group) at DescribeGroups ``version``."""
    if g is None or g.state is S.Dead:
        # GroupMetadataManager.describeGroups: an unknown group is described as Dead, and
        # from v6 on with GROUP_ID_NOT_FOUND; older versions carry no error.
        # (GroupCoordinatorService.describeGroups answers INVALID_GROUP_ID only for a null
        # id, which the wire cannot carry from a client; "" reaches the shard.)
        error = (
            Error.GROUP_ID_NOT_FOUND
            if version >= DESCRIBE_GROUPS_GROUP_ID_NOT_FOUND_MIN_VERSION
            else Error.NONE
        )
        return DescribedGroup(error, gid, S.Dead.value, "", "")
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
    return DescribedGroup(Error.NONE, gid, g.state.value, g.protocol_type or "", protocol, members)


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

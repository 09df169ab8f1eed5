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

#: a ListGroups request's filters: the states lower-cased and trimmed, the types lower-cased
ListFilters = tuple[frozenset[str], frozenset[str]]


def list_filters(req: ListGroupsRequest) -> ListFilters:
    """GroupMetadataManager.listGroups lower-cases and trims each state filter, and parses
    each type filter case-insensitively (Group.GroupType.parse: an unknown name is the type
    UNKNOWN, which no group has)."""
    return (frozenset(s.strip().lower() for s in req.states_filter),
            frozenset(t.lower() for t in req.types_filter or ()))


def listed_group(gid: str, protocol_type: str, state: str, group_type: str,
                 filters: ListFilters) -> ListedGroup | None:
    """How ListGroups lists group ``gid`` (ClassicGroup / ConsumerGroup asListedGroup: a
    consumer group's protocol type is "consumer", its type "consumer", a classic group's
    "classic"), or None when ``filters`` leave it out (listGroups' isInStates and type
    check)."""
    states, types = filters
    if states and state.lower() not in states:
        return None
    if types and group_type not in types:
        return None
    return ListedGroup(gid, protocol_type, state, group_type)


def handle_list_groups(txn: Txn, request_id: int, req: ListGroupsRequest) -> None:
    """In Kafka's order (coordinator/group_order.py): shard by shard as the runtime holds
    them, each shard's groups in its groups map's order."""
    filters = list_filters(req)
    listed: list[ListedGroup] = []
    for gid in txn.state.group_order.order():
        cg = txn.state.consumer_groups.get(gid)
        if cg is not None:
            entry = listed_group(gid, "consumer", cg.state.value, "consumer", filters)
        else:
            g = txn.state.groups[gid]
            entry = None if g.state is S.Dead else \
                listed_group(gid, g.protocol_type or "", g.state.value, "classic", filters)
        if entry is not None:
            listed.append(entry)
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
    # (each partition's ids in a HashSet's order: GroupCoordinatorService.deleteGroups)
    for gid in service_order(req.groups_names, txn.config.offsets_topic_num_partitions, hash_set=True):
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

"""A request's response carrying one error and nothing else, in the response's own shape.

Who answers this way: a broker that no longer hosts the group's coordinator (NOT_COORDINATOR,
the simulator's moved coordinator) and GroupCoordinatorService while it is not active
(COORDINATOR_NOT_AVAILABLE, before any other check). The shapes follow Kafka's
``getErrorResponse`` of each request class: JoinGroup echoes the request's member id;
OffsetCommit answers every partition; DescribeGroups, DeleteGroups and ConsumerGroupDescribe
answer each group id, in the request's order, with nothing else set; OffsetFetch has the
group-level error (the form of OffsetFetch v2 and later); TxnOffsetCommit answers every
partition with the error's code; the others carry the error alone.
"""

from __future__ import annotations

from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    DescribedGroup,
)
from groupspec.protocol.errors import Error


def error_response(request: m.Request, error: Error) -> m.Response | None:
    """``request``'s response with ``error``; None for an object outside the vocabulary."""
    if isinstance(request, m.JoinGroupRequest):
        return m.JoinGroupResponse(error=error, member_id=request.member_id)
    if isinstance(request, m.SyncGroupRequest):
        return m.SyncGroupResponse(error=error)
    if isinstance(request, m.HeartbeatRequest):
        return m.HeartbeatResponse(error=error)
    if isinstance(request, m.LeaveGroupRequest):
        return m.LeaveGroupResponse(error=error)
    if isinstance(request, m.OffsetCommitRequest):
        return m.OffsetCommitResponse(partitions=tuple(
            m.OffsetCommitPartitionResponse(p.topic, p.partition, error) for p in request.partitions))
    if isinstance(request, m.TxnOffsetCommitRequest):
        # TxnOffsetCommitRequest.getErrorResponse: every partition, the error as its code
        return m.TxnOffsetCommitResponse(partitions=tuple(
            m.TxnOffsetCommitPartitionResponse(p.topic, p.partition, error.code) for p in request.partitions))
    if isinstance(request, m.OffsetFetchRequest):
        return m.OffsetFetchResponse(error=error)
    if isinstance(request, m.OffsetDeleteRequest):
        return m.OffsetDeleteResponse(error=error)
    if isinstance(request, m.ListGroupsRequest):
        return m.ListGroupsResponse(error=error)
    if isinstance(request, m.DescribeGroupsRequest):
        return m.DescribeGroupsResponse(groups=tuple(
            m.DescribedGroup(error, gid, "", "", "") for gid in request.groups))
    if isinstance(request, m.DeleteGroupsRequest):
        return m.DeleteGroupsResponse(results=tuple(
            m.DeletableGroupResult(gid, error) for gid in request.groups_names))
    if isinstance(request, m.FindCoordinatorRequest):
        return m.FindCoordinatorResponse(error=error)
    if isinstance(request, ConsumerGroupHeartbeatRequest):
        return ConsumerGroupHeartbeatResponse(error=error, member_epoch=0, heartbeat_interval_ms=0)
    if isinstance(request, ConsumerGroupDescribeRequest):
        return ConsumerGroupDescribeResponse(groups=tuple(
            DescribedGroup(error=error, group_id=gid, group_state="", group_epoch=0,
                           assignment_epoch=0, assignor_name="", members=())
            for gid in request.group_ids))
    return None

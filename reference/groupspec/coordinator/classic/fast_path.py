"""A shortcut for the two requests a classic group answers most: a Heartbeat and an
OffsetCommit from a current member at the current generation, while the group is Stable or
PreparingRebalance (members heartbeat and commit while the others rejoin).

This module holds no protocol rule of its own. It recognises, conservatively, the one case
of each handler whose answer is fixed, and produces exactly the responses and records that
handler would:

- :func:`groupspec.coordinator.classic.heartbeat.handle_heartbeat` (Kafka:
  GroupMetadataManager.classicGroupHeartbeatToClassicGroup) for a Stable or
  PreparingRebalance group, a known member, the right group.instance.id and generation:
  ``HeartbeatScheduled(now + session timeout)`` and NONE (Stable) or
  REBALANCE_IN_PROGRESS (PreparingRebalance);
- :func:`groupspec.coordinator.offsets.handle_offset_commit` (ClassicGroup.
  validateOffsetCommit, OffsetMetadataManager.commitOffset) for the same conditions and a
  generation >= 0: ``HeartbeatScheduled`` (a commit counts as a heartbeat), one
  ``OffsetCommitted`` per partition, and NONE for each; metadata that might exceed
  ``offset.metadata.max.bytes`` is left to the slow path.

Anything else (another state, an unknown or pending member, a generation or instance id
that does not match, a consumer group of the same id, an empty group id, a simple commit)
returns None, and the caller takes the slow path. Its equivalence with the handlers is
tested in tests/test_fast_path.py (a Hypothesis property over coordinator states reached by
real requests); a change to either handler's rules must keep that test passing, or narrow
the conditions here.

:data:`ENABLED` (environment ``GROUPSPEC_FAST_PATH=0`` turns it off) switches the shortcut
off for the coordinator and the trace validator's replay (validate/replay.py ``_fast``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from groupspec.coordinator import timers
from groupspec.coordinator.classic.group import Member
from groupspec.coordinator.committed_offset import CommittedOffset, expire_timestamp
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.context import Output
from groupspec.coordinator.offset_order import note_commit
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    Request,
    Response,
)

#: the shortcut is taken (tests and ``GROUPSPEC_FAST_PATH=0`` turn it off)
ENABLED: bool = os.environ.get("GROUPSPEC_FAST_PATH", "1") != "0"

_STABLE = GroupState.Stable
_PREPARING = GroupState.PreparingRebalance
_NONE = Error.NONE
_HEARTBEAT_NONE = HeartbeatResponse(error=Error.NONE)
_HEARTBEAT_REBALANCING = HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS)
_new = object.__new__
_setattr = object.__setattr__


def heartbeat_scheduled(group_id: str, member_id: str, deadline_ms: int) -> r.HeartbeatScheduled:
    """``r.HeartbeatScheduled(group_id, member_id, deadline_ms)`` as its generated
    ``__init__`` makes it, given its field dict at once instead of a frozen dataclass's
    ``object.__setattr__`` per field (the shortcut makes one per request; records hold no
    ``__post_init__``; tests/test_fast_path.py compares the two)."""
    rec = _new(r.HeartbeatScheduled)
    _setattr(rec, "__dict__", {"group_id": group_id, "member_id": member_id, "deadline_ms": deadline_ms})
    return rec


def offset_committed(group_id: str, topic: str, partition: int, committed_offset: int, metadata: str,
                     commit_timestamp_ms: int, generation_id: int, member_id: str,
                     leader_epoch: int, expire_timestamp_ms: int | None) -> r.OffsetCommitted:
    """``r.OffsetCommitted(...)`` (the same arguments in the same order) as
    :func:`heartbeat_scheduled` makes its record."""
    rec = _new(r.OffsetCommitted)
    _setattr(rec, "__dict__", {
        "group_id": group_id, "topic": topic, "partition": partition,
        "committed_offset": committed_offset, "metadata": metadata,
        "commit_timestamp_ms": commit_timestamp_ms, "generation_id": generation_id,
        "member_id": member_id, "leader_epoch": leader_epoch,
        "expire_timestamp_ms": expire_timestamp_ms, "producer_id": -1})
    return rec


def partition_committed(topic: str, partition: int) -> OffsetCommitPartitionResponse:
    """``OffsetCommitPartitionResponse(topic, partition, Error.NONE)`` as
    :func:`heartbeat_scheduled` makes its record (one per partition of each commit)."""
    resp = _new(OffsetCommitPartitionResponse)
    _setattr(resp, "__dict__", {"topic": topic, "partition": partition, "error": _NONE})
    return resp


@contextmanager
def enabled(on: bool) -> Iterator[None]:
    """Run a block with the fast path on or off."""
    global ENABLED
    before = ENABLED
    ENABLED = on
    try:
        yield
    finally:
        ENABLED = before


def plan(state: CoordinatorState, config: CoordinatorConfig, request_id: int,
         req: Request, now_ms: int) -> Output | None:
    """The output the slow handler gives ``req`` at ``now_ms``, when it is the shortcut's
    case; None otherwise. Changes nothing: :func:`commit` applies the records."""
    got = decide(state, config, req, now_ms)
    if got is None:
        return None
    _, deadline, resp = got
    assert isinstance(req, HeartbeatRequest | OffsetCommitRequest)
    gid, mid = req.group_id, req.member_id
    records: list[r.Record] = [heartbeat_scheduled(gid, mid, deadline)]
    if isinstance(req, OffsetCommitRequest):
        gen = req.generation_id
        expires = expire_timestamp(now_ms, req.retention_time_ms)
        for p in req.partitions:
            # no metadata is stored as "" (OffsetAndMetadata.fromRequest), as offsets._commit
            records.append(offset_committed(gid, p.topic, p.partition, p.committed_offset,
                                            p.committed_metadata or "", now_ms, gen, mid,
                                            p.committed_leader_epoch, expires))
    return Output([(request_id, resp)], records)


#: what :func:`decide` finds: the member whose session deadline moves, the new deadline,
#: and the answer
Decided = tuple[Member, int, Response]


def decide(state: CoordinatorState, config: CoordinatorConfig, req: Request,
           now_ms: int) -> Decided | None:
    """The shortcut's case, without the records :func:`plan` lists: the member, its new
    session deadline and the answer (:func:`take` makes the records' changes); None when
    ``req`` is not the shortcut's case. Changes nothing."""
    cls = type(req)
    if cls is HeartbeatRequest:
        assert isinstance(req, HeartbeatRequest)
        got = _member_deadline(state, req.group_id, req.member_id, req.group_instance_id,
                               req.generation_id, now_ms)
        if got is None:
            return None
        return got[0], got[1], _HEARTBEAT_NONE if got[2] else _HEARTBEAT_REBALANCING
    if cls is OffsetCommitRequest:
        assert isinstance(req, OffsetCommitRequest)
        if req.generation_id < 0 or req.group_id in state.consumer_groups:
            return None
        limit = config.offset_metadata_max_bytes
        for p in req.partitions:
            meta = p.committed_metadata
            # offsets._utf16_length(meta) <= 2 * len(meta): within the limit for sure
            if meta is not None and 2 * len(meta) > limit:
                return None
        got = _member_deadline(state, req.group_id, req.member_id, req.group_instance_id,
                               req.generation_id, now_ms)
        if got is None:
            return None
        return got[0], got[1], OffsetCommitResponse(partitions=tuple(
            [partition_committed(p.topic, p.partition) for p in req.partitions]))
    return None


def take(state: CoordinatorState, req: Request, decided: Decided, now_ms: int) -> None:
    """Make the changes of :func:`plan`'s records (what :func:`commit` does) for what
    :func:`decide` found in this state: the member's new session deadline and, for a
    commit, each partition's offset, in the request's order."""
    member, deadline, _ = decided
    member.heartbeat_deadline_ms = deadline
    if type(req) is OffsetCommitRequest:
        assert isinstance(req, OffsetCommitRequest)
        g = state.groups[req.group_id]
        g.offsets_in_log = True
        offsets = g.offsets
        expires = expire_timestamp(now_ms, req.retention_time_ms)
        for p in req.partitions:
            offsets[(p.topic, p.partition)] = CommittedOffset(
                p.committed_offset, p.committed_metadata or "", now_ms, p.committed_leader_epoch, expires)
            note_commit(state.offset_order, req.group_id, p.topic, p.partition)


def _member_deadline(state: CoordinatorState, group_id: str, member_id: str,
                     group_instance_id: str | None, generation_id: int,
                     now_ms: int) -> tuple[Member, int, bool] | None:
    """The member, its new session deadline and whether the group is Stable (else it is
    PreparingRebalance), when the group is in one of these states, the member is a member
    (not pending) carrying exactly ``group_instance_id`` (mapped to it, if static), and
    ``generation_id`` is the group's: validate_member and the generation check pass and
    the handler reschedules the heartbeat (rebalance.reschedule_heartbeat). None otherwise."""
    if not group_id:
        return None
    g = state.groups.get(group_id)
    if g is None or generation_id != g.generation_id:
        return None
    stable = g.state is _STABLE
    if not stable and g.state is not _PREPARING:
        return None
    m = g.members.get(member_id)
    if m is None or member_id in g.pending_members or m.info.group_instance_id != group_instance_id:
        return None
    if group_instance_id is not None and g.static_members.get(group_instance_id) != member_id:
        return None
    return m, now_ms + m.session_timeout_ms, stable


def commit(state: CoordinatorState, out: Output) -> None:
    """Apply a planned output's records, as :func:`groupspec.coordinator.replay.apply_record`
    does for these two record kinds in the state :func:`plan` checked (a classic group, a
    member that is not pending)."""
    for rec in out.records:
        g = state.groups[rec.group_id]
        if type(rec) is r.HeartbeatScheduled:
            g.members[rec.member_id].heartbeat_deadline_ms = rec.deadline_ms
        else:
            assert type(rec) is r.OffsetCommitted
            g.offsets_in_log = True
            g.offsets[(rec.topic, rec.partition)] = CommittedOffset(
                rec.committed_offset, rec.metadata, rec.commit_timestamp_ms, rec.leader_epoch,
                rec.expire_timestamp_ms)
            note_commit(state.offset_order, rec.group_id, rec.topic, rec.partition)


def earliest_deadline(state: CoordinatorState) -> float:
    """The earliest deadline of :func:`groupspec.coordinator.timers.deadlines` (inf: none),
    when the state has no consumer group (the caller takes the slow path then); the timers
    of groups converted away count (:func:`groupspec.coordinator.timers.earliest_deadline`)."""
    assert not state.consumer_groups
    best = timers.earliest_deadline(state)
    return float("inf") if best is None else float(best)

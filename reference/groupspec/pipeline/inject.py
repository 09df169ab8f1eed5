"""Protocol violations put into a generated group's events, at a known event (for
``groupspec pipeline generate --inject-violations``):

- ``stale_commit``: an OffsetCommit the broker accepted now carries the generation before
  the one the member had joined (a JoinGroup response of the newer generation was received
  before the commit was sent): StaleCommitAccepted. In a consumer group (KIP-848): the
  member epoch it held before the one a heartbeat answer had given it: CommitMemberEpoch.
- ``double_owner``: a member's SyncGroup result also holds a partition another member was
  handed in the same generation: OneOwnerPerGenerationInv (or, where the replay sees it
  first, SyncPropagatesLeaderAssignment). In a consumer group: a heartbeat answer's
  assignment also holds a partition another member was assigned and still holds:
  ConsumerReconciliation.

Each injector takes the group's events and the cluster's random source and returns (the
index of the changed event, the events with the violation, what changed), or None when the
group has no event of that kind to change. A classic group draws from the random source
exactly as it did before consumer groups had injections (the same seed, the same files).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from groupspec.coordinator.consumer.member import from_heartbeat, to_heartbeat
from groupspec.protocol import consumer_group_messages as cm
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, from_pairs, pairs
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.trace import events as ev

#: injected violation kind -> the rules a verdict may name for it
VIOLATION_KINDS: dict[str, tuple[str, ...]] = {
    "stale_commit": ("StaleCommitAccepted", "CommitGenerationCheck", "CommitMemberEpoch"),
    "double_owner": ("OneOwnerPerGenerationInv", "SyncPropagatesLeaderAssignment", "ConsumerReconciliation"),
}


def _ok_sync(e: ev.Event) -> bool:
    return (isinstance(e, ev.WireExchange) and isinstance(e.request, m.SyncGroupRequest)
            and isinstance(e.response, m.SyncGroupResponse) and e.response.error is Error.NONE)


def _ok_join(e: ev.Event) -> bool:
    return (isinstance(e, ev.WireExchange) and isinstance(e.response, m.JoinGroupResponse)
            and e.response.error is Error.NONE)


def _stale_commit(events: list[ev.Event], rng: random.Random) -> tuple[int, list[ev.Event], str] | None:
    joined: list[tuple[float, int]] = []  # (received, generation) of successful JoinGroups
    candidates: list[int] = []
    for i, e in enumerate(events):
        if _ok_join(e):
            assert isinstance(e, ev.WireExchange) and isinstance(e.response, m.JoinGroupResponse)
            joined.append((e.received_ms or 0.0, e.response.generation_id))
        if (isinstance(e, ev.WireExchange) and isinstance(e.request, m.OffsetCommitRequest)
                and isinstance(e.response, m.OffsetCommitResponse) and e.response.partitions
                and all(p.error is Error.NONE for p in e.response.partitions)
                and e.request.generation_id >= 2
                and any(r < e.sent_ms and g == e.request.generation_id for r, g in joined)):
            candidates.append(i)
    # (a consumer group's commits: a classic group has none of these, and draws as before)
    older = _consumer_older_epochs(events)
    candidates += older
    if not candidates:
        return None
    i = rng.choice(candidates)
    e = events[i]
    assert isinstance(e, ev.WireExchange) and isinstance(e.request, m.OffsetCommitRequest)
    g = e.request.generation_id
    was = older.get(i)
    if was is not None:
        new = dataclasses.replace(e, request=dataclasses.replace(e.request, generation_id=was))
        return i, [*events[:i], new, *events[i + 1:]], (
            f"accepted OffsetCommit from {e.request.member_id} now says member epoch {was} (was {g}), "
            "the epoch it held before")
    new = dataclasses.replace(e, request=dataclasses.replace(e.request, generation_id=g - 1))
    return i, [*events[:i], new, *events[i + 1:]], f"accepted OffsetCommit from {e.request.member_id} now says generation {g - 1} (was {g})"


def _consumer_older_epochs(events: list[ev.Event]) -> dict[int, int]:
    """A consumer group's accepted OffsetCommits (index -> the epoch to put in): each carries
    a member epoch a heartbeat answer had given its member before it was sent, and the
    member had held an older one before that (the greatest such is returned)."""
    given: dict[str, list[tuple[float, int]]] = {}  # member id -> (received, epoch) answered
    out: dict[int, int] = {}
    for i, e in enumerate(events):
        if type(e) is not ev.WireExchange:
            continue
        resp = e.response
        if isinstance(resp, cm.ConsumerGroupHeartbeatResponse):
            if resp.error is Error.NONE and resp.member_id and resp.member_epoch > 0:
                given.setdefault(resp.member_id, []).append((e.received_ms or 0.0, resp.member_epoch))
            continue
        req = e.request
        if (isinstance(req, m.OffsetCommitRequest) and isinstance(resp, m.OffsetCommitResponse)
                and resp.partitions and all(p.error is Error.NONE for p in resp.partitions)):
            held = [g for r, g in given.get(req.member_id, []) if r < e.sent_ms]
            if req.generation_id in held:
                before = [g for g in held if g < req.generation_id]
                if before:
                    out[i] = max(before)
    return out


def _double_owner(events: list[ev.Event], rng: random.Random) -> tuple[int, list[ev.Event], str] | None:
    seen: dict[int, list[tuple[str, set[tuple[str, int]]]]] = {}  # generation -> earlier results
    candidates: list[tuple[int, tuple[str, int], str]] = []
    for i, e in enumerate(events):
        if not _ok_sync(e):
            continue
        assert isinstance(e, ev.WireExchange) and isinstance(e.request, m.SyncGroupRequest)
        assert isinstance(e.response, m.SyncGroupResponse)
        gen = e.request.generation_id
        key = e.request.group_instance_id or e.request.member_id
        try:
            mine = pairs(Assignment.decode(e.response.assignment).partitions)
        except Exception:
            continue
        for other, theirs in seen.get(gen, []):
            extra = sorted(theirs - mine)
            if other != key and extra:
                candidates.append((i, extra[0], other))
        seen.setdefault(gen, []).append((key, mine))
    # (a consumer group's heartbeat answers: a classic group has none, and draws as before)
    consumer = _consumer_double_owners(events)
    if not candidates and not consumer:
        return None
    i, tp, other = rng.choice([*candidates, *consumer])
    e = events[i]
    if isinstance(e, ev.WireExchange) and isinstance(e.response, cm.ConsumerGroupHeartbeatResponse):
        return _give_consumer_partition(events, i, e, e.response, tp, other)
    assert isinstance(e, ev.WireExchange) and isinstance(e.response, m.SyncGroupResponse)
    assert isinstance(e.request, m.SyncGroupRequest)
    a = Assignment.decode(e.response.assignment)
    parts = from_pairs(pairs(a.partitions) | {tp})
    body = dataclasses.replace(a, partitions=parts).encode()
    new = dataclasses.replace(e, response=dataclasses.replace(e.response, assignment=body))
    return i, [*events[:i], new, *events[i + 1:]], (
        f"SyncGroup result of {e.request.member_id} (generation {e.request.generation_id}) also "
        f"holds {tp[0]}-{tp[1]}, handed to {other}")


#: a member's heartbeat answer ends its membership with these (the member is gone)
_CONSUMER_GONE = (Error.UNKNOWN_MEMBER_ID, Error.FENCED_MEMBER_EPOCH)


def _consumer_double_owners(events: list[ev.Event]) -> list[tuple[int, tuple[Any, int], str]]:
    """(index, partition, other member) for a consumer group's accepted heartbeat answers
    carrying an assignment: a partition the other member's last assignment holds and this
    one's does not (the other member still in the group: no leave, no fencing since)."""
    holds: dict[str, set[tuple[Any, int]]] = {}  # member id -> its last assignment
    out: list[tuple[int, tuple[Any, int], str]] = []
    for i, e in enumerate(events):
        if type(e) is not ev.WireExchange:
            continue
        req, resp = e.request, e.response
        if not isinstance(req, cm.ConsumerGroupHeartbeatRequest) or \
                not isinstance(resp, cm.ConsumerGroupHeartbeatResponse):
            continue
        member = resp.member_id or req.member_id
        if resp.error in _CONSUMER_GONE or (resp.error is Error.NONE and req.member_epoch < 0):
            holds.pop(member, None)
            continue
        if resp.error is not Error.NONE or resp.assignment is None:
            continue
        mine = {(tp.topic_id, p) for tp in resp.assignment.topic_partitions for p in tp.partitions}
        for other, theirs in holds.items():
            extra = sorted(theirs - mine)
            if other != member and extra:
                out.append((i, extra[0], other))
        holds[member] = mine
    return out


def _give_consumer_partition(events: list[ev.Event], i: int, e: ev.WireExchange,
                             resp: cm.ConsumerGroupHeartbeatResponse, tp: tuple[Any, int],
                             other: str) -> tuple[int, list[ev.Event], str]:
    """Event ``i`` (an accepted heartbeat answer with an assignment) with partition ``tp``
    added to the assignment."""
    assert resp.assignment is not None
    held = from_heartbeat(resp.assignment.topic_partitions)
    tid, p = tp
    held[tid] = held.get(tid, frozenset()) | {p}
    assignment = cm.HeartbeatAssignment(to_heartbeat(dict(sorted(held.items()))))
    new = dataclasses.replace(e, response=dataclasses.replace(resp, assignment=assignment))
    names = {TopicId.for_name(n): n for x in events if type(x) is ev.WireExchange
             and isinstance(x.request, cm.ConsumerGroupHeartbeatRequest)
             for n in x.request.subscribed_topic_names or ()}
    topic = names.get(tp[0], str(tp[0]))
    return i, [*events[:i], new, *events[i + 1:]], (
        f"ConsumerGroupHeartbeat answer to {resp.member_id} (epoch {resp.member_epoch}) also "
        f"holds {topic}-{tp[1]}, assigned to {other}")


_INJECTORS: dict[str, Callable[[list[ev.Event], random.Random], tuple[int, list[ev.Event], str] | None]] = {
    "stale_commit": _stale_commit,
    "double_owner": _double_owner,
}


def inject(kind: str, events: list[ev.Event], rng: random.Random) -> tuple[int, list[ev.Event], str] | None:
    """(index of the changed event, the events with the violation, what changed), or None
    when the group has no event this kind of violation can be put into."""
    return _INJECTORS[kind](events, rng)

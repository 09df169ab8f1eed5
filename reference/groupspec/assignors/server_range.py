"""The server-side ``range`` assignor of the consumer protocol.

Source: group-coordinator/.../assignor/RangeAssignor.java (``assign``,
``assignHomogeneousGroup``, ``assignHeterogeneousGroup``, ``sortMemberIds``,
``addPartitionsToAssignment``). Not the client-side assignor of the same name
(:mod:`groupspec.assignors.range`), though it deals the same ranges: members are sorted
static first (by instance id, in Java string order), then dynamic (by member id); for each
topic with P partitions and S subscribers, the subscribers in that order take contiguous
ranges of P // S, the first P % S of them one more. Members past the end get nothing of
that topic. The current assignment is not read (the range assignor is not sticky), nor are
racks.
"""

from __future__ import annotations

from typing import ClassVar

from groupspec.assignors.base import ServerAssignor
from groupspec.assignors.ordering import java_key
from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    MemberSpec,
    PartitionAssignorError,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicId,
)
from groupspec.gc_pause import paused_gc


def range_member_order(members: tuple[MemberSpec, ...]) -> list[MemberSpec]:
    """``sortMemberIds``: static members by instance id, then dynamic ones by member id
    (a stable sort, so equal keys keep ``memberIds()`` order)."""
    return sorted(
        members,
        key=lambda m: (0, java_key(m.instance_id))
        if m.instance_id is not None
        else (1, java_key(m.member_id)),
    )


def _ranges(n: int, subscribers: int) -> list[tuple[int, ...]]:
    """``addPartitionsToAssignment`` for every subscriber in turn: P // S partitions each,
    one more for the first P % S; the ranges run out at P."""
    quota, extra = divmod(n, subscribers)
    out: list[tuple[int, ...]] = []
    start = 0
    for k in range(subscribers):
        stop = min(start + quota + (1 if k < extra else 0), n)
        out.append(tuple(range(start, stop)))
        start = stop
    return out


class ServerRangeAssignor(ServerAssignor):
    name: ClassVar[str] = "range"

    @paused_gc()
    def assign(self, spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
        if not spec.members:
            return {}
        ordered = range_member_order(spec.members)
        homogeneous = spec.kind is SubscriptionType.HOMOGENEOUS
        # Subscribers per topic: everyone in a homogeneous group (the first member's topics
        # stand for all), else counted from each subscription.
        counts: dict[TopicId, int] = {}
        for m in ordered[:1] if homogeneous else ordered:
            for t in m.subscribed_topic_ids:
                if topics.num_partitions(t) == -1:
                    raise PartitionAssignorError(
                        f"member {m.member_id!r} is subscribed to topic {t}, "
                        "which the topic metadata does not have"
                    )
                counts[t] = len(ordered) if homogeneous else counts.get(t, 0) + 1
        # Per topic, the ranges its subscribers take in member order (topics with the same
        # partition and subscriber counts share one list).
        shared: dict[tuple[int, int], list[tuple[int, ...]]] = {}
        ranges: dict[TopicId, list[tuple[int, ...]]] = {}
        for t, subscribers in counts.items():
            n = topics.num_partitions(t)
            dealt = shared.get((n, subscribers))
            if dealt is None:
                dealt = shared[(n, subscribers)] = _ranges(n, subscribers)
            ranges[t] = dealt
        out: GroupAssignment = {}
        if homogeneous:
            if not ranges:
                return {m.member_id: {} for m in ordered}
            # Member k takes the k-th range of every topic (empty ones left out).
            names = list(ranges)
            rows = zip(*ranges.values(), strict=True)
            if all(n_s[0] >= n_s[1] for n_s in shared):  # nobody's range is empty
                for m, row in zip(ordered, rows, strict=True):
                    out[m.member_id] = dict(zip(names, row, strict=True))
            else:
                for m, row in zip(ordered, rows, strict=True):
                    out[m.member_id] = {t: r for t, r in zip(names, row, strict=True) if r}
            return out
        taken = dict.fromkeys(counts, 0)
        for m in ordered:
            mine: dict[TopicId, tuple[int, ...]] = {}
            for t in m.subscribed_topic_ids:
                k = taken[t]
                taken[t] = k + 1
                if ranges[t][k]:
                    mine[t] = ranges[t][k]
            out[m.member_id] = mine
        return out

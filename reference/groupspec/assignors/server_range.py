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
        # Per topic: (next start, base quota, members still owed an extra partition).
        state: dict[TopicId, list[int]] = {}
        for t, subscribers in counts.items():
            n = topics.num_partitions(t)
            state[t] = [0, n // subscribers, n % subscribers, n]
        first_topics = ordered[0].subscribed_topic_ids
        out: GroupAssignment = {}
        for m in ordered:
            mine: dict[TopicId, tuple[int, ...]] = {}
            for t in first_topics if homogeneous else m.subscribed_topic_ids:
                st = state[t]
                start, quota, extra, n = st
                if extra > 0:
                    quota += 1
                    st[2] = extra - 1
                stop = min(start + quota, n)
                st[0] = stop
                if start < stop:
                    mine[t] = tuple(range(start, stop))
            out[m.member_id] = mine
        return out

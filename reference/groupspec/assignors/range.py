"""RangeAssignor: contiguous ranges of each topic, topic by topic.

Source: clients/.../consumer/RangeAssignor.java (``assignPartitions``, ``assignRanges`` and
``TopicAssignmentState.maxAssignable``). For every topic independently, the members that
subscribe to it are sorted by ``MemberInfo.compareTo`` (static members by instance id first,
then dynamic ones by member id); with P partitions and C members each gets P // C
consecutive partitions and the first P % C members one more. Balance is per topic, so the
first members in that order are the heavier ones across many topics.

Kafka's rack-aware pass needs replica racks, which a partition count does not carry; with
counts only Kafka skips it (``assign(Map<String,Integer>, ...)`` builds partitions without
racks), and so do we.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from groupspec.assignors.base import (
    Assignor,
    MemberSubscription,
    PartitionRacks,
    RebalanceProtocol,
)
from groupspec.assignors.inputs import check_input, known_subscribed_topics
from groupspec.assignors.ordering import member_info_order
from groupspec.gc_pause import paused_gc
from groupspec.protocol.consumer_protocol import Assignment


class RangeAssignor(Assignor):
    name: ClassVar[str] = "range"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    @paused_gc()
    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSubscription],
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        check_input(partitions_per_topic, members)
        topics = known_subscribed_topics(partitions_per_topic, members)
        ordered = member_info_order(members)
        out: dict[str, dict[str, tuple[int, ...]]] = {m.member_id: {} for m in members}
        subscribers: dict[str, list[str]] = {t: [] for t in topics}
        for m in ordered:
            # A topic listed twice in one subscription counts once (the LinkedHashMap of
            # TopicAssignmentState.consumers keeps one entry per member).
            for t in dict.fromkeys(m.subscription.topics):
                if t in subscribers:
                    subscribers[t].append(m.member_id)
        for t in sorted(topics):
            n = topics[t]
            consumers = subscribers[t]
            per, extra = divmod(n, len(consumers))
            start = 0
            for i, member_id in enumerate(consumers):
                size = per + (1 if i < extra else 0)
                if size == 0:
                    break
                out[member_id][t] = tuple(range(start, start + size))
                start += size
        return {mid: Assignment(parts) for mid, parts in out.items()}

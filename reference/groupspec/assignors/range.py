"""RangeAssignor: contiguous ranges of each topic, topic by topic.

Source: clients/.../consumer/RangeAssignor.java (``assignPartitions``, ``assignRanges`` and
``TopicAssignmentState.maxAssignable``). For every topic independently, the members that
subscribe to it are sorted by ``MemberInfo.compareTo`` (static members by instance id first,
then dynamic ones by member id); with P partitions and C members each gets P // C
consecutive partitions and the first P % C members one more. Balance is per topic, so the
first members in that order are the heavier ones across many topics.

Rack-aware assignment (KIP-881, ``assignPartitions`` with ``assignWithRackMatching``): when
some member has a rack and, for some topic, the subscribers' racks meet the replica racks
and not every partition has the same racks, a first pass gives each member only partitions
with a replica in its rack (members without a rack take any), up to its range size; topics
with the same subscribers and the same number of partitions are matched together, partition
number by partition number, so co-partitioned topics stay aligned. The plain range pass then
fills up what is left. See :class:`_TopicState`.
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
from groupspec.assignors.inputs import check_input, check_racks, known_subscribed_topics
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
        check_racks(partitions_per_topic, partition_racks)
        topics = known_subscribed_topics(partitions_per_topic, members)
        ordered = member_info_order(members)
        if any(m.subscription.rack_id for m in members):
            rack_aware = _rack_aware(
                topics, ordered, partition_racks or {}, self.prefer_rack_aware_logic
            )
            if rack_aware is not None:
                return rack_aware
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


class _TopicState:
    """``RangeAssignor.TopicAssignmentState``: one topic's subscribers (in MemberInfo order,
    with their racks), the partitions left, and how many each member may still take."""

    def __init__(
        self,
        topic: str,
        n: int,
        consumers: list[tuple[str, str | None]],
        racks: Sequence[Sequence[str | None]] | None,
        prefer_rack_aware_logic: bool = False,
    ) -> None:
        self.topic = topic
        self.consumers = consumers
        self.rack_of = dict(consumers)
        self.unassigned: dict[int, None] = dict.fromkeys(range(n))
        self.assigned = dict.fromkeys(self.rack_of, 0)
        self.per, self.extra = divmod(n, len(consumers)) if consumers else (0, 0)
        consumer_racks = {r for _, r in consumers if r is not None}
        self.partition_racks: list[frozenset[str]] = []
        if consumer_racks:
            self.partition_racks = [
                frozenset(r for r in racks[p] if r is not None) if racks is not None else frozenset()
                for p in range(n)
            ]
        all_racks = frozenset().union(*self.partition_racks)
        # AbstractPartitionAssignor.useRackAwareAssignment
        self.needs_racks = (
            bool(consumer_racks)
            and not consumer_racks.isdisjoint(all_racks)
            and (prefer_rack_aware_logic or not all(rs == all_racks for rs in self.partition_racks))
        )

    def racks_match(self, consumer: str, p: int) -> bool:
        rack = self.rack_of[consumer]
        return rack is None or (p < len(self.partition_racks) and rack in self.partition_racks[p])

    def max_assignable(self, consumer: str) -> int:
        return max(0, self.per + (1 if self.extra > 0 else 0) - self.assigned[consumer])

    def on_assigned(self, consumer: str, ps: list[int], out: dict[str, list[int]]) -> None:
        out.setdefault(consumer, []).extend(ps)
        self.assigned[consumer] += len(ps)
        if self.assigned[consumer] > self.per:
            self.extra -= 1
        for p in ps:
            del self.unassigned[p]

    def assign_ranges(self, with_racks: bool, out: dict[str, list[int]]) -> None:
        """``assignRanges``: each member in order takes the first partitions left that it
        may take, up to its share."""
        for consumer, _ in self.consumers:
            if not self.unassigned:
                break
            limit = self.max_assignable(consumer)
            ps = [p for p in self.unassigned if not with_racks or self.racks_match(consumer, p)]
            ps = ps[:limit]
            if ps:
                self.on_assigned(consumer, ps, out)


def _rack_aware(
    topics: Mapping[str, int],
    ordered: Sequence[MemberSubscription],
    partition_racks: PartitionRacks,
    prefer_rack_aware_logic: bool = False,
) -> dict[str, Assignment] | None:
    """Kafka's rack-aware range assignment, or None when no topic needs it."""
    states: list[_TopicState] = []
    for t in sorted(topics):
        consumers: dict[str, str | None] = {}
        for m in ordered:
            if t in m.subscription.topics and m.member_id not in consumers:
                consumers[m.member_id] = m.subscription.rack_id or None
        states.append(
            _TopicState(
                t, topics[t], list(consumers.items()), partition_racks.get(t),
                prefer_rack_aware_logic,
            )
        )
    if not any(s.needs_racks for s in states):
        return None
    out: dict[str, dict[str, tuple[int, ...]]] = {m.member_id: {} for m in ordered}
    per_topic: dict[str, dict[str, list[int]]] = {s.topic: {} for s in states}
    # assignWithRackMatching: topics grouped by subscribers (with racks), then by the number
    # of partitions it knows racks for; several topics in a group are co-partitioned.
    groups: dict[tuple[tuple[tuple[str, str | None], ...], int], list[_TopicState]] = {}
    for s in states:
        groups.setdefault((tuple(s.consumers), len(s.partition_racks)), []).append(s)
    for (members, count), group in groups.items():
        if len(group) > 1:
            remaining = [c for c, _ in members]
            for p in range(count):
                match = next(
                    (
                        c
                        for c in remaining
                        if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in group)
                    ),
                    None,
                )
                if match is None:
                    continue
                for s in group:
                    s.on_assigned(match, [p], per_topic[s.topic])
                if not any(s.max_assignable(match) > 0 for s in group):
                    remaining.remove(match)
                    if not remaining:
                        break
        elif group[0].needs_racks:
            group[0].assign_ranges(True, per_topic[group[0].topic])
    for s in states:
        s.assign_ranges(False, per_topic[s.topic])
    for t, got in per_topic.items():
        for member_id, ps in got.items():
            out[member_id][t] = tuple(sorted(ps))
    return {mid: Assignment(dict(sorted(parts.items()))) for mid, parts in out.items()}

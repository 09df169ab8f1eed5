"""RoundRobinAssignor: deal every partition of every topic around the circle of members.

Source: clients/.../consumer/RoundRobinAssignor.java (``assign`` and
``allPartitionsSorted``). Members are sorted by ``MemberInfo.compareTo`` into a circular
iterator; partitions are sorted by topic name, then partition number. Each partition goes
to the next member in the circle that subscribes to its topic, and the circle advances
past the members it skipped. With identical subscriptions sizes differ by at most one;
with different subscriptions the result can be badly unbalanced, as Kafka's is.
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
from groupspec.assignors.inputs import check_input, known_subscribed_topics, topic_set
from groupspec.assignors.ordering import java_key, member_info_order
from groupspec.gc_pause import paused_gc
from groupspec.protocol.consumer_protocol import Assignment


class RoundRobinAssignor(Assignor):
    name: ClassVar[str] = "roundrobin"
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
        circle = member_info_order(members)
        size = len(circle)
        # Members usually share one subscription tuple: turn each distinct tuple into a set
        # once, and count a topic's subscribers from the sets, so a topic everyone
        # subscribes to is recognised without asking every member.
        sets: dict[tuple[str, ...], frozenset[str]] = {}
        member_sets = [topic_set(sets, m.subscription.topics) for m in circle]
        subscribers: dict[str, int] = dict.fromkeys(topics, 0)
        for s in member_sets:
            for t in s:
                if t in subscribers:
                    subscribers[t] += 1
        out: dict[str, dict[str, tuple[int, ...]]] = {m.member_id: {} for m in members}
        slots = [out[m.member_id] for m in circle]
        # One shared (p,) per partition number: with at least as many members as partitions
        # every member gets one partition of a topic, a million of them at Kafka's sizes.
        singles = [(p,) for p in range(min(size, max(topics.values(), default=0)))]
        pos = 0  # index in ``circle`` of the member the iterator points at
        for t in sorted(topics, key=java_key):
            n = topics[t]
            if subscribers[t] == size:
                # Fast path, same result: with nobody to skip, member (pos + k) % size gets
                # partitions k, k + size, k + 2 * size, ...
                for k in range(min(size, n)):
                    slots[(pos + k) % size][t] = (
                        singles[k] if k + size >= n else tuple(range(k, n, size))
                    )
                pos = (pos + n) % size
                continue
            subscribed = [t in s for s in member_sets]
            got: dict[int, list[int]] = {}
            for p in range(n):
                while not subscribed[pos]:
                    pos = (pos + 1) % size
                got.setdefault(pos, []).append(p)
                pos = (pos + 1) % size
            for i, ps in got.items():
                slots[i][t] = tuple(ps)
        return {mid: Assignment(dict(sorted(parts.items()))) for mid, parts in out.items()}

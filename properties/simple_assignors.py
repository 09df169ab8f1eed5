"""Deliberately simple, independent implementations of Kafka's Range and RoundRobin rules.

Written straight from the rule text in ``../shared/PROTOCOL.md`` section 9 (itself taken from
RangeAssignor.java and RoundRobinAssignor.java), one partition at a time, with no attempt
at speed, so that the real assignors can be checked against them. They use Python string
order, which is Java's for the ASCII ids the properties generate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def member_order(members: Sequence[tuple[str, str | None]]) -> list[str]:
    """(member_id, group_instance_id) pairs -> member ids: static members by instance id,
    then dynamic members by member id."""
    static = sorted((iid, mid) for mid, iid in members if iid is not None)
    dynamic = sorted(mid for mid, iid in members if iid is None)
    return [mid for _, mid in static] + dynamic


def simple_range(
    partitions_per_topic: Mapping[str, int],
    members: Sequence[tuple[str, str | None, Sequence[str]]],
) -> dict[str, set[tuple[str, int]]]:
    out: dict[str, set[tuple[str, int]]] = {mid: set() for mid, _, _ in members}
    ordered = member_order([(mid, iid) for mid, iid, _ in members])
    topics_of = {mid: set(ts) for mid, _, ts in members}
    for topic, count in partitions_per_topic.items():
        consumers = [mid for mid in ordered if topic in topics_of[mid]]
        if not consumers:
            continue
        each = count // len(consumers)
        extra = count % len(consumers)
        next_partition = 0
        for i, mid in enumerate(consumers):
            take = each + 1 if i < extra else each
            for _ in range(take):
                out[mid].add((topic, next_partition))
                next_partition += 1
    return out


def simple_roundrobin(
    partitions_per_topic: Mapping[str, int],
    members: Sequence[tuple[str, str | None, Sequence[str]]],
) -> dict[str, set[tuple[str, int]]]:
    out: dict[str, set[tuple[str, int]]] = {mid: set() for mid, _, _ in members}
    circle = member_order([(mid, iid) for mid, iid, _ in members])
    topics_of = {mid: set(ts) for mid, _, ts in members}
    subscribed = sorted({t for ts in topics_of.values() for t in ts})
    at = 0
    for topic in subscribed:
        for p in range(partitions_per_topic.get(topic, 0)):
            while topic not in topics_of[circle[at]]:
                at = (at + 1) % len(circle)
            out[circle[at]].add((topic, p))
            at = (at + 1) % len(circle)
    return out

"""Counting moves, and the fewest moves a balanced assignment can make.

A *move* is a partition that has an owner both before and after a rebalance, and not the
same one. Partitions that appear only on one side (new partitions, deleted topics) are not
moves; partitions whose previous owner left the group are, and they are unavoidable.

For identical subscriptions there is a closed form. With P partitions and C members, a
balanced assignment gives ``P % C`` members ``q + 1`` partitions and the others ``q = P // C``.
A member that owned ``o`` partitions keeps at most ``min(o, its size)``; giving the larger
sizes to the members that owned more than ``q`` maximises what stays::

    kept = sum(min(o_m, q) for m) + min(P % C, #{m : o_m > q})
    minimum moves = (partitions owned before by anyone, still existing) - kept
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groupspec.protocol.consumer_protocol import TopicPartitions


def count_moves(
    previous: Mapping[str, TopicPartitions], current: Mapping[str, TopicPartitions]
) -> int:
    """Partitions owned in both ``previous`` and ``current`` by different members.

    ValueError if ``previous`` gives a partition to two members (it is not an assignment).
    """
    before: dict[str, set[int]] = {}
    for member, parts in previous.items():
        for t, ps in parts.items():
            seen = before.setdefault(t, set())
            if not seen.isdisjoint(ps):
                dup = min(seen.intersection(ps))
                raise ValueError(
                    f"previous[{member!r}][{t!r}]: partition {dup} is owned by two members"
                )
            seen.update(ps)
    after: dict[str, set[int]] = {}
    stayed = 0
    prev_get = {m: parts for m, parts in previous.items()}
    for member, parts in current.items():
        mine = prev_get.get(member, {})
        for t, ps in parts.items():
            after.setdefault(t, set()).update(ps)
            old = mine.get(t)
            if old:
                stayed += len(set(old).intersection(ps))
    both = sum(len(s.intersection(after.get(t, ()))) for t, s in before.items())
    return both - stayed


def minimum_moves(total_partitions: int, owned_counts: Sequence[int], orphaned: int = 0) -> int:
    """The closed-form minimum for identical subscriptions.

    ``owned_counts``: per current member, how many still-existing partitions it owned (no
    partition counted twice); ``orphaned``: still-existing partitions owned by members that
    are gone.
    """
    members = len(owned_counts)
    if members == 0:
        return 0
    q, extra = divmod(total_partitions, members)
    kept = sum(min(o, q) for o in owned_counts) + min(extra, sum(1 for o in owned_counts if o > q))
    return orphaned + sum(owned_counts) - kept


def minimum_moves_from(
    partitions_per_topic: Mapping[str, int],
    members: Sequence[str],
    previous: Mapping[str, TopicPartitions],
) -> int:
    """:func:`minimum_moves` for members that all subscribe to every topic of
    ``partitions_per_topic``, given the previous assignment."""
    current = set(members)
    owned = dict.fromkeys(members, 0)
    orphaned = 0
    for member, parts in previous.items():
        n = 0
        for t, ps in parts.items():
            size = partitions_per_topic.get(t, 0)
            n += sum(1 for p in ps if 0 <= p < size)
        if member in current:
            owned[member] += n
        else:
            orphaned += n
    total = sum(partitions_per_topic.values())
    return minimum_moves(total, list(owned.values()), orphaned)

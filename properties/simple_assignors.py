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


def java_hash(s: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8) + data[i + 1]) % (1 << 32)
    return h


def hashmap_iteration(keys: Sequence[str]) -> list[str]:
    """Iteration order of a ``new HashMap<>()`` after putting ``keys`` in order."""
    capacity = 16
    while len(keys) > capacity * 0.75:
        capacity *= 2
    buckets: list[list[str]] = [[] for _ in range(capacity)]
    for k in keys:
        h = java_hash(k)
        buckets[(h ^ (h >> 16)) % capacity].append(k)
    return [k for bucket in buckets for k in bucket]


def simple_constrained_sticky(
    partitions_per_topic: Mapping[str, int],
    members: Sequence[tuple[str, int, Sequence[tuple[str, int]]]],
) -> tuple[dict[str, set[tuple[str, int]]], set[tuple[str, int]]]:
    """AbstractStickyAssignor for identical subscriptions, partition by partition.

    ``members``: (member id, generation, claimed partitions) in JoinGroup order. Returns
    the eager assignment and the partitions transferring ownership (which the cooperative
    assignor withholds). Claims outside the current partition counts are dropped.
    """
    order = hashmap_iteration([m for m, _, _ in members])
    generation = {m: g for m, g, _ in members}
    claims = {m: c for m, _, c in members}
    # allSubscriptionsEqual: resolve claims in HashMap order.
    owned: dict[str, list[tuple[str, int]]] = {}
    owner: dict[tuple[str, int], str] = {}
    multi: set[tuple[str, int]] = set()
    for m in order:
        owned[m] = []
        for tp in claims[m]:
            if tp[1] >= partitions_per_topic.get(tp[0], 0):
                continue
            other = owner.get(tp)
            if other is None:
                owned[m].append(tp)
                owner[tp] = m
            elif generation[m] == generation[other]:
                multi.add(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
                owner[tp] = m
            elif generation[m] > generation[other]:
                owned[m].append(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
                owner[tp] = m
    # ConstrainedAssignmentBuilder.
    total = sum(partitions_per_topic.values())
    min_quota = total // len(order)
    max_quota = -(-total // len(order))
    expected = total % len(order)
    current = 0
    assignment: dict[str, list[tuple[str, int]]] = {m: [] for m in order}
    under: list[str] = []
    at_min: list[str] = []
    maybe_revoked: dict[tuple[str, int], str] = {}
    for m in order:
        mine = sorted((tp for tp in owned[m] if tp not in multi), key=lambda tp: (tp[1], tp[0]))
        if len(mine) < min_quota:
            assignment[m] += mine
            under.append(m)
        elif len(mine) >= max_quota and current < expected:
            current += 1
            if current == expected:
                at_min.clear()
            assignment[m] += mine[:max_quota]
            for tp in mine[max_quota:]:
                maybe_revoked[tp] = m
        else:
            assignment[m] += mine[:min_quota]
            for tp in mine[min_quota:]:
                maybe_revoked[tp] = m
            if current < expected:
                at_min.append(m)
    taken = {tp for tps in assignment.values() for tp in tps}
    unassigned = [
        (t, p)
        for t in sorted(partitions_per_topic)
        for p in range(partitions_per_topic[t])
        if (t, p) not in taken
    ]
    under.sort()
    at_min.sort()
    transferring: set[tuple[str, int]] = set()
    nxt = 0  # the iterator over ``under``: index of the next member it returns
    for tp in unassigned:
        from_under = True
        if nxt < len(under):
            m = under[nxt]
            nxt += 1
        elif not under and not at_min:
            raise AssertionError("no unfilled member left")
        elif not under:
            m = at_min.pop(0)
            from_under = False
        else:
            m = under[0]
            nxt = 1
        assignment[m].append(tp)
        if (tp in maybe_revoked and maybe_revoked[tp] != m) or tp in multi:
            transferring.add(tp)
        if len(assignment[m]) == min_quota and from_under:
            nxt -= 1
            under.pop(nxt)
            at_min.append(m)
    return {m: set(tps) for m, tps in assignment.items()}, transferring

"""The uniform assignor's builder for groups whose members subscribe to different topics.

Source: group-coordinator/.../assignor/UniformHeterogeneousAssignmentBuilder.java (``build``,
``maybeRevokePartitions``, ``assignRemainingPartitions``, ``balance``, ``balanceTopics``,
``balanceTopic`` and the inner ``MemberAssignmentBalancer``). Members are numbered in
``memberIds()`` order; that number breaks every tie between equally loaded members.

1. Every member keeps its current partitions of the topics it still subscribes to.
2. Topics with partitions nobody holds are taken in *topic order* (partitions per
   subscriber descending, then subscriber count ascending, then topic id in ``Uuid`` order);
   within a topic, partitions in ascending order go one by one to the least loaded
   subscriber, by levels: the subscribers sorted by (load, number) are filled up to the
   lowest load, one partition each in that order, then the level rises by one and every
   subscriber now at that level joins the round.
3. Balancing: the topics with two or more subscribers, in topic order, are visited round
   after round (at most 16 rounds) until one full round moves nothing. A topic whose
   subscribers' loads differ by more than one gives partitions from its most loaded holders
   to its least loaded subscribers: the holders are taken by levels from the top (the
   highest level first, in reverse (load, number) order; a holder with no partition of the
   topic left is dropped), each gives the last of its partitions of the topic in
   ascending order, and the receivers are taken by levels from the bottom as in step 2;
   it stops when the giving and receiving levels are within one.

Output: a member whose assignment Kafka never copied gets its input mapping itself; any
other member's topics come in the order Kafka's copy (a ``HashMap``) iterates them
(:class:`~groupspec.assignors.server_spec.JavaAssignmentMap`). That order is the target
record's, and after replay it decides which partitions the next epoch's homogeneous builder
keeps when a member is over quota (it keeps topics in iteration order).

Racks are not read. For speed, the owner of each partition of a topic is only worked out
when the topic is balanced, and step 2 hands a topic's free partitions out a whole level at
a time (loads are only read outside the level being filled, so updating them at the end of
the topic changes nothing); the results are Kafka's.
"""

from __future__ import annotations

from collections.abc import Sequence

from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    JavaAssignmentMap,
    MemberAssignment,
    SubscribedTopicMetadata,
    TopicId,
    missing_topic_error,
    topic_id_key,
)

#: Rounds over the topics in the balancing step (``MAX_ITERATION_COUNT``).
MAX_ROUNDS = 16


class _Balancer:
    """``MemberAssignmentBalancer``: the least loaded and most loaded ranges of one topic's
    subscribers, sorted by (load, number), over the builder's live load array."""

    __slots__ = (
        "least_count",
        "least_end",
        "most_count",
        "most_end",
        "most_start",
        "next_least",
        "next_most",
        "order",
        "sizes",
    )

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.order: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        """Start over on ``members``; the spread between the most and least loaded."""
        if not members:
            raise ValueError("cannot balance a topic without subscribers")
        sizes = self.sizes
        # ``members`` ascend by number, and the sort is stable: (load, number) order.
        order = sorted(members, key=sizes.__getitem__)
        self.order = order
        low, high = sizes[order[0]], sizes[order[-1]]
        self.least_end = 0
        self.least_count = low - 1
        self.next_least = 0
        self.most_start = len(order)
        self.most_end = len(order)
        self.most_count = high + 1
        self.next_most = len(order) - 1
        return high - low

    def least_loaded(self) -> int:
        """The member to receive the next partition (its level is taken as one higher)."""
        if self.next_least >= self.least_end:
            # The level is full: raise it and let in the members now at it.
            self.least_count += 1
            sizes, order = self.sizes, self.order
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.order[self.next_least]
        self.next_least += 1
        return member

    def most_loaded(self) -> int:
        """The member to give up the next partition, or -1 when none is left."""
        if self.next_most < self.most_start:
            sizes, order = self.sizes, self.order
            if self.most_end <= self.most_start and self.most_start > 0:
                # Every member of the range was dropped: restart from the next one down.
                self.most_count = sizes[order[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.order[self.next_most]
        self.next_most -= 1
        return member

    def drop_most_loaded(self) -> None:
        """Take the member :meth:`most_loaded` just returned out of the giving range."""
        order = self.order
        k = self.next_most + 1
        order[k], order[self.most_end - 1] = order[self.most_end - 1], order[k]
        self.most_end -= 1

    def balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


#: A member's partitions of one topic while the builder works: the input's tuple until it
#: changes, a list while partitions are only added, a set once one is taken away.
_Parts = tuple[int, ...] | list[int] | set[int]


class _Builder:
    def __init__(self, spec: GroupSpec, topics: SubscribedTopicMetadata) -> None:
        self.members = spec.members
        self.num_partitions: dict[TopicId, int] = {}
        # Members with equal subscriptions are handled together; the subscriber lists are
        # then sorted, so they ascend by member number as Kafka builds them.
        classes: dict[tuple[TopicId, ...], list[int]] = {}
        for i, m in enumerate(self.members):
            classes.setdefault(m.subscribed_topic_ids, []).append(i)
        self.subscribers: dict[TopicId, list[int]] = {}
        for subscription, indexes in classes.items():
            for t in subscription:
                n = topics.num_partitions(t)
                if n == -1:
                    raise missing_topic_error(t)
                self.num_partitions[t] = n
                self.subscribers.setdefault(t, []).extend(indexes)
        if len(classes) > 1:
            for subs in self.subscribers.values():
                subs.sort()
        self.sizes = [0] * len(self.members)
        self.target: list[MemberAssignment] = [m.assignment for m in self.members]
        self.work: dict[int, dict[TopicId, _Parts]] = {}
        #: The topic order of each altered member's copy, as Kafka's HashMap iterates it.
        self.maps: dict[int, JavaAssignmentMap] = {}
        self.classes = classes
        #: Owner of each partition, for the topics being balanced (built when needed).
        self.owners: dict[TopicId, list[int]] = {}

    def topic_order(self, topic_ids: list[TopicId]) -> list[TopicId]:
        n, subs = self.num_partitions, self.subscribers
        return sorted(
            topic_ids, key=lambda t: (-(n[t] / len(subs[t])), len(subs[t]), topic_id_key(t))
        )

    def parts(self, i: int, t: TopicId) -> Sequence[int] | set[int]:
        work = self.work.get(i)
        got = (self.target[i] if work is None else work).get(t)
        return () if got is None else got

    def owner_array(self, t: TopicId) -> list[int]:
        own = self.owners.get(t)
        if own is None:
            own = self.owners[t] = [-1] * self.num_partitions[t]
            for i in self.subscribers[t]:
                for p in self.parts(i, t):
                    own[p] = i
        return own

    def _work(self, i: int) -> dict[TopicId, _Parts]:
        work = self.work.get(i)
        if work is None:
            work = self.work[i] = dict(self.target[i])
            if i not in self.maps:
                self.maps[i] = JavaAssignmentMap(self.target[i])
        return work

    def keep_subscribed(self) -> None:
        """``maybeRevokePartitions``: keep the subscribed topics, drop the others."""
        sizes, target = self.sizes, self.target
        for subscription, indexes in self.classes.items():
            subscribed = frozenset(subscription)
            for i in indexes:
                mine = target[i]
                if not subscribed.issuperset(mine):
                    # Kafka removes the topics from a deep copy of the map (its order:
                    # JavaAssignmentMap)
                    copy = self.maps[i] = JavaAssignmentMap(mine)
                    for t in mine:
                        if t not in subscribed:
                            copy.remove(t)
                    mine = target[i] = {t: ps for t, ps in mine.items() if t in subscribed}
                sizes[i] = sum(map(len, mine.values()))

    def free_partitions(self) -> dict[TopicId, list[int]]:
        """Partitions nobody keeps, by topic. No partition is held twice nor beyond its
        topic's count (preconditions), so counting finds the topics that have some."""
        if sum(self.sizes) == sum(self.num_partitions.values()):
            return {}
        held = dict.fromkeys(self.num_partitions, 0)
        for mine in self.target:
            for t, ps in mine.items():
                held[t] += len(ps)
        free: dict[TopicId, list[int]] = {}
        for t, n in self.num_partitions.items():
            if held[t] == 0:
                if n:
                    free[t] = list(range(n))
            elif held[t] != n:
                own = self.owner_array(t)
                free[t] = [p for p, o in enumerate(own) if o == -1]
        return free

    def assign_unassigned(self) -> None:
        """``assignRemainingPartitions``, a level at a time."""
        free = self.free_partitions()
        balancer = _Balancer(self.sizes)
        sizes = self.sizes
        for t in self.topic_order(list(free)):
            balancer.initialize(self.subscribers[t])
            order = balancer.order
            parts = free[t]
            gained: dict[int, list[int]] = {}
            pos = 0
            while pos < len(parts):
                if balancer.next_least >= balancer.least_end:
                    balancer.least_count += 1
                    while (
                        balancer.least_end < len(order)
                        and sizes[order[balancer.least_end]] == balancer.least_count
                    ):
                        balancer.least_end += 1
                    balancer.next_least = 0
                take = min(len(parts) - pos, balancer.least_end - balancer.next_least)
                start = balancer.next_least
                for m, p in zip(order[start : start + take], parts[pos : pos + take], strict=True):
                    got = gained.get(m)
                    if got is None:
                        gained[m] = [p]
                    else:
                        got.append(p)
                balancer.next_least += take
                pos += take
            for m, got in gained.items():
                sizes[m] += len(got)
                self._add(m, t, got)
            self.owners.pop(t, None)

    def _add(self, m: int, t: TopicId, parts: list[int]) -> None:
        work = self._work(m)
        # one computeIfAbsent per partition (addPartitionToTargetAssignment)
        self.maps[m].compute_if_absent(t, len(parts))
        mine = work.get(t)
        if mine is None:
            work[t] = parts
        elif isinstance(mine, tuple):
            work[t] = [*mine, *parts]
        elif isinstance(mine, list):
            mine.extend(parts)
        else:
            mine.update(parts)

    def move(self, t: TopicId, p: int, to: int) -> None:
        """``assignPartition`` during balancing: from its holder to ``to``."""
        own = self.owner_array(t)
        holder = own[p]
        work = self._work(holder)
        mine = work[t]
        if not isinstance(mine, set):
            mine = work[t] = set(mine)
        mine.discard(p)
        if not mine:
            del work[t]
            self.maps[holder].remove(t)
        self.sizes[holder] -= 1
        self._add(to, t, [p])
        self.sizes[to] += 1
        own[p] = to

    def balance(self) -> bool:
        """False if the round limit stopped it before a round without moves."""
        movable = [t for t in self.num_partitions if len(self.subscribers[t]) >= 2]
        if not movable:
            return True
        order = self.topic_order(movable)
        last = -1
        balancer = _Balancer(self.sizes)
        for _ in range(MAX_ROUNDS):
            for k, t in enumerate(order):
                if k == last:
                    return True  # a whole round since the last move
                moved = self.balance_topic(t, balancer)
                if moved > 0 or last == -1:
                    last = k
        return False

    def balance_topic(self, t: TopicId, balancer: _Balancer) -> int:
        if balancer.initialize(self.subscribers[t]) <= 1:
            return 0
        own = self.owner_array(t)
        # Partitions grouped by holder, each group ascending (a stable sort of 0..n-1);
        # each holder's slice of it.
        parts = sorted(range(self.num_partitions[t]), key=own.__getitem__)
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for k, p in enumerate(parts):
            o = own[p]
            if o not in start:
                start[o] = k
            end[o] = k + 1
        moved = 0
        while not balancer.balanced():
            giver = balancer.most_loaded()
            while giver != -1 and (giver not in end or end[giver] - start[giver] <= 0):
                balancer.drop_most_loaded()
                giver = balancer.most_loaded()
            if giver == -1:
                break
            end[giver] -= 1
            p = parts[end[giver]]
            receiver = balancer.least_loaded()
            if balancer.balanced():
                break
            self.move(t, p, receiver)
            moved += 1
        return moved

    def result(self) -> GroupAssignment:
        """Each member's assignment: the input mapping itself when Kafka never copied it,
        else its topics in the order Kafka's copy (a ``HashMap``) iterates them, which is
        the order the coordinator writes the target record in and so the order the next
        epoch's builders read it (AssignorHelpers.deepCopyAssignment, then ``remove`` and
        ``computeIfAbsent`` in maybeRevokePartitions, addPartitionToTargetAssignment and
        removePartitionFromTargetAssignment)."""
        out: GroupAssignment = {}
        for i, m in enumerate(self.members):
            copy = self.maps.get(i)
            if copy is None:
                out[m.member_id] = self.target[i]
                continue
            work = self.work.get(i)
            parts = self.target[i] if work is None else work
            out[m.member_id] = {
                t: ps if isinstance(ps, tuple) else tuple(ps)
                for t, ps in ((t, parts[t]) for t in copy.order())
            }
        return out


def assign_heterogeneous(spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
    """UniformHeterogeneousAssignmentBuilder.build."""
    return build_heterogeneous(spec, topics)[0]


def build_heterogeneous(
    spec: GroupSpec, topics: SubscribedTopicMetadata
) -> tuple[GroupAssignment, bool]:
    """The assignment, and whether balancing ended with a round without moves (rather than
    at the round limit): the balance property holds only then."""
    builder = _Builder(spec, topics)
    if not builder.num_partitions:
        return {}, True
    builder.keep_subscribed()
    builder.assign_unassigned()
    converged = builder.balance()
    return builder.result(), converged

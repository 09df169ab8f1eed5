"""The server-side ``uniform`` assignor (Kafka's default for consumer groups), and its
builder for groups whose members all subscribe to the same topics.

Source: group-coordinator/.../assignor/UniformAssignor.java (``assign``: an empty group gets
an empty assignment, a HOMOGENEOUS group the homogeneous builder, any other the
heterogeneous one, :mod:`groupspec.assignors.uniform_heterogeneous`) and
UniformHomogeneousAssignmentBuilder.java (``build``, ``maybeRevokePartitions``,
``assignRemainingPartitions``). Balance first: with P partitions and M members every member
ends with P // M or P // M + 1. Then stickiness: a member keeps what it had up to its quota.

The homogeneous builder, step by step:

1. The topics are those of the first member's subscription, in the iteration order of a
   ``HashSet`` built from it (:func:`~groupspec.assignors.server_spec.java_hash_set_order`).
   Topic by topic, partitions 0..n-1 that no member currently holds are queued as
   unassigned. A topic missing from the metadata is a ``PartitionAssignorError``.
2. Members in order: each gets quota P // M, plus one while members still owed an extra
   partition remain. It keeps its current partitions of subscribed topics in iteration
   order up to the quota; the rest are queued (after the never-assigned ones), and topics
   it no longer subscribes to are dropped. A member left below a quota that includes the
   extra partition gives the extra back, unless it is among the last members who must take
   one. Members still below quota wait, in order, for step 3.
3. The waiting members, in order, take their remaining quota from the head of the queue.

Output for a member whose assignment did not change is its input mapping itself. Any
other member's output lists its topics in the order Kafka's ``HashMap`` iterates them
(:class:`_JavaAssignmentMap`): the coordinator writes the target record in that order and
the next epoch's step 2 keeps partitions in it.
Racks are not read (4.1's uniform assignor is not rack aware).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from groupspec.assignors.base import ServerAssignor
from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorError,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicId,
    java_hash_set_order,
    missing_topic_error,
    topic_id_hash,
)
from groupspec.assignors.uniform_heterogeneous import assign_heterogeneous
from groupspec.gc_pause import paused_gc

#: A run of queued partitions of one topic, in queue order.
_Run = tuple[TopicId, Sequence[int]]


class _JavaAssignmentMap:
    """The topic order of the ``HashMap`` a member's new assignment is built in.

    UniformHomogeneousAssignmentBuilder (maybeRevokePartitions, assignRemainingPartitions)
    alters a member's assignment only on a copy (AssignorHelpers.deepCopyAssignment:
    ``new HashMap<>(size)``, then one ``put`` per topic in the old map's order), removes
    topics from it, and adds topics with ``computeIfAbsent``. Java 17's HashMap iterates
    its table's buckets in index order and a bucket along its chain; ``put`` appends a new
    key to its chain but ``computeIfAbsent`` links it in front, and growing the table
    (``new HashMap<>(n)`` starts at the power of two at or above n, 1 for 0; it doubles
    once more keys than 3/4 of it are held: after the insertion for ``put``, before it for
    ``computeIfAbsent``) keeps the relative order of keys that still share a bucket. So the
    final order is by bucket in the final table, then by ``rank`` (appends count up from
    0, links in front count down from -1).
    """

    __slots__ = ("cap", "created", "front", "parts", "rank")

    def __init__(self, old: MemberAssignment) -> None:
        self.parts: dict[TopicId, tuple[int, ...]] = {}
        self.rank: dict[TopicId, int] = {}
        self.front = 0
        n = len(old)
        self.cap = 1 if n <= 1 else 1 << (n - 1).bit_length()  # the table made at the first put
        self.created = n > 0
        for t, ps in old.items():  # put: append, then grow once past 3/4
            self.parts[t] = tuple(ps)
            self.rank[t] = len(self.rank)
            if len(self.parts) > self.cap * 3 // 4:
                self.cap *= 2

    def remove(self, t: TopicId) -> None:
        del self.parts[t]

    def set(self, t: TopicId, ps: tuple[int, ...]) -> None:
        """Replace the partitions of a topic already held (no change to the order)."""
        self.parts[t] = ps

    def add(self, t: TopicId, ps: tuple[int, ...]) -> None:
        """``computeIfAbsent(t, ...)`` then add ``ps`` to the topic's set (the table is
        made, or grown, before the key is looked up)."""
        if not self.created:
            self.created = True  # the table is made at its initial size
        elif len(self.parts) > self.cap * 3 // 4:
            self.cap *= 2
        prev = self.parts.get(t)
        if prev is not None:
            self.parts[t] = prev + ps
            return
        self.parts[t] = ps
        self.front -= 1
        self.rank[t] = self.front

    def result(self) -> dict[TopicId, tuple[int, ...]]:
        mask = self.cap - 1

        def key(t: TopicId) -> tuple[int, int]:
            h = topic_id_hash(t)
            return (h ^ (h >> 16)) & mask, self.rank[t]

        return {t: self.parts[t] for t in sorted(self.parts, key=key)}


class UniformAssignor(ServerAssignor):
    name: ClassVar[str] = "uniform"

    @paused_gc()
    def assign(self, spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
        if not spec.members:
            return {}
        if spec.kind is SubscriptionType.HOMOGENEOUS:
            return assign_homogeneous(spec, topics)
        return assign_heterogeneous(spec, topics)


def assign_homogeneous(spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
    """UniformHomogeneousAssignmentBuilder.build: every member is taken to subscribe to the
    first member's topics."""
    members = spec.members
    subscribed_order = java_hash_set_order(members[0].subscribed_topic_ids)
    if not subscribed_order:
        return {}
    subscribed = set(subscribed_order)

    # Step 1: never-assigned partitions, topic by topic (GroupSpec.isPartitionAssigned is
    # the union of the members' current assignments). No partition is held twice nor
    # beyond its topic's count (preconditions), so a topic whose holders list n partitions
    # is fully held, and only the others need a set.
    holdings: dict[TopicId, list[tuple[int, ...]]] = {}
    for m in members:
        for t, ps in m.assignment.items():
            if t in subscribed:
                holdings.setdefault(t, []).append(ps)
    queue: list[_Run] = []
    total = 0
    for t in subscribed_order:
        n = topics.num_partitions(t)
        if n == -1:
            raise missing_topic_error(t)
        total += n
        lists = holdings.get(t)
        if lists is None:
            if n:
                queue.append((t, range(n)))
        elif sum(map(len, lists)) != n:
            held = set().union(*lists)
            free = [p for p in range(n) if p not in held]
            if free:
                queue.append((t, free))

    # Step 2: keep up to the quota, queue the excess.
    count = len(members)
    min_quota, extra_left = divmod(total, count)
    target: GroupAssignment = {}
    copies: dict[str, _JavaAssignmentMap] = {}
    waiting: list[tuple[str, int]] = []
    for index, m in enumerate(members):
        quota = min_quota
        has_extra = extra_left > 0
        if has_extra:
            quota += 1
        old = m.assignment
        new: _JavaAssignmentMap | None = None
        for t, ps in old.items():
            if t not in subscribed:
                if new is None:
                    new = _JavaAssignmentMap(old)
                new.remove(t)
            elif len(ps) <= quota:
                quota -= len(ps)
            else:
                if new is None:
                    new = _JavaAssignmentMap(old)
                if quota:
                    new.set(t, tuple(ps[:quota]))
                else:
                    new.remove(t)
                queue.append((t, ps[quota:]))
                quota = 0
        if quota > 0 and has_extra and count - index > extra_left:
            quota -= 1
            has_extra = False
        if quota > 0:
            waiting.append((m.member_id, quota))
        if has_extra:
            extra_left -= 1
        if new is None:
            target[m.member_id] = old
        else:
            copies[m.member_id] = new
            target[m.member_id] = new.result()

    # Step 3: hand the queue out to the members below quota (on the copy made in step 2,
    # else on a fresh copy of the untouched assignment).
    run_index = 0
    offset = 0  # into queue[run_index]
    for member_id, want in waiting:
        mine_new = copies.get(member_id) or _JavaAssignmentMap(target[member_id])
        while want and run_index < len(queue):
            t, run = queue[run_index]
            take = run[offset : offset + want]
            got = len(take)
            mine_new.add(t, tuple(take))
            want -= got
            offset += got
            if offset >= len(run):
                run_index += 1
                offset = 0
        target[member_id] = mine_new.result()
    if run_index < len(queue):
        raise PartitionAssignorError("partitions were left unassigned")
    return target


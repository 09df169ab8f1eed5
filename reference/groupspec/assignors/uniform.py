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
   Topic by topic, partitions 0..n-1 that no member currently holds (or, when the
   coordinator gives ``GroupSpec.assigned``, that it does not mark assigned) are queued as
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
(:class:`~groupspec.assignors.server_spec.JavaAssignmentMap`): the coordinator writes the target record in that order and
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
    JavaAssignmentMap,
    PartitionAssignorError,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicId,
    java_hash_set_order,
    missing_topic_error,
)
from groupspec.assignors.uniform_heterogeneous import assign_heterogeneous
from groupspec.gc_pause import paused_gc

#: A run of queued partitions of one topic, in queue order.
_Run = tuple[TopicId, Sequence[int]]


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

    # Step 1: never-assigned partitions, topic by topic (GroupSpec.isPartitionAssigned:
    # GroupSpec.assigned when given, else the union of the members' current assignments). No partition is held twice nor
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
        if spec.assigned is not None:
            # the coordinator's inverted target assignment, which may mark partitions no
            # member holds any more (GroupSpec.assigned)
            marked = spec.assigned.get(t, frozenset())
            free = [p for p in range(n) if p not in marked]
            if free:
                queue.append((t, free))
            continue
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
    copies: dict[str, JavaAssignmentMap] = {}
    waiting: list[tuple[str, int]] = []
    for index, m in enumerate(members):
        quota = min_quota
        has_extra = extra_left > 0
        if has_extra:
            quota += 1
        old = m.assignment
        new: JavaAssignmentMap | None = None
        for t, ps in old.items():
            if t not in subscribed:
                if new is None:
                    new = JavaAssignmentMap(old)
                new.remove(t)
            elif len(ps) <= quota:
                quota -= len(ps)
            else:
                if new is None:
                    new = JavaAssignmentMap(old)
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
        mine_new = copies.get(member_id) or JavaAssignmentMap(target[member_id])
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


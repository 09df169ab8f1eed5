"""Kafka 4.1's sticky algorithm, step for step: the default behaviour of ``sticky`` and
``cooperative-sticky``.

Source: clients/.../consumer/internals/AbstractStickyAssignor.java (Kafka 4.1.2). This is a
reimplementation of its behaviour, not of its code; each step names the method it follows.
Everything that decides Kafka's answer is reproduced, including what looks accidental:

- The members are walked in the iteration order of the leader's ``HashMap`` of
  subscriptions (:func:`groupspec.assignors.ordering.hashmap_order`).
- Claims (``allSubscriptionsEqual``): a claim on a partition another member already
  claimed is compared with the *subscription's* generation field of that other member
  (``Subscription.generationId``), not with the generation in its member data. Claims on
  partition numbers beyond a topic's count are kept, as Kafka keeps them.
- Constrained path (all subscriptions equal, ``ConstrainedAssignmentBuilder``), with its
  rack-aware round robin (KIP-881) and its ``IllegalStateException`` when the quotas do not
  add up (which happens when a claim names a partition that does not exist).
- General path (``GeneralAssignmentBuilder``): partitions sorted by how many members can
  take them, the ``TreeSet`` of members by size, the rack-aware first pass, the balance
  loop (``performReassignments``) with its partition-movement bookkeeping
  (``PartitionMovements``, whose choice of the partition to move is the first element of a
  ``HashSet``), and the revert when the loop did not improve the balance score.

Where Kafka would throw, :class:`KafkaAssignorError` is raised with Kafka's exception.

Not reproduced (see docs/deviations.md): a member listing the same partition twice in its
claims (groupspec's decoded claims are sets), and ``HashMap`` tree bins (eight or more
member ids with one bucket).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush

from groupspec.assignors.java_collections import (
    TP,
    JavaHashSet,
    SortedMembers,
    topic_partition_hash,
)
from groupspec.assignors.ordering import hashmap_order, java_key

DEFAULT_GENERATION = -1


class KafkaAssignorError(RuntimeError):
    """Kafka's assignor throws on this input (the message names the Java exception)."""


@dataclass(frozen=True)
class KafkaMember:
    """One member as ``AbstractStickyAssignor`` reads it."""

    member_id: str
    #: ``Subscription.topics()``, as listed.
    topics: tuple[str, ...]
    #: ``memberData(subscription).partitions``, in order.
    claims: tuple[TP, ...] = ()
    #: ``memberData(subscription).generation`` (None when absent).
    generation: int | None = None
    #: ``Subscription.generationId()`` (None when absent): what other members' claims are
    #: compared with.
    subscription_generation: int | None = None
    #: ``Subscription.rackId()``.
    rack: str | None = None
    #: ``Subscription.ownedPartitions()`` (the cooperative adjustment reads it).
    owned: tuple[TP, ...] = ()


@dataclass
class KafkaStickyResult:
    #: member id -> assigned partitions (Kafka's list order).
    assignment: dict[str, list[TP]]
    #: ``partitionsTransferringOwnership``: set by the constrained path, None on the general.
    transferring: dict[TP, str] | None = field(default=None)


# ----------------------------------------------------------------------------- racks


class RackInfo:
    """``AbstractStickyAssignor.RackInfo``: consumer racks and replica racks, kept only when
    rack-aware assignment applies (``AbstractPartitionAssignor.useRackAwareAssignment``)."""

    def __init__(
        self,
        partitions: Mapping[str, int],
        partition_racks: Mapping[str, Sequence[Sequence[str | None]]],
        members: Sequence[KafkaMember],
        order: Sequence[int],
        prefer_rack_aware_logic: bool = False,
    ) -> None:
        by_rack: dict[str, int] = {}
        member_rack: dict[str, str] = {}
        for i in order:
            rack = members[i].rack
            if rack:  # an empty rack id counts as none
                by_rack[rack] = by_rack.get(rack, 0) + 1
                member_rack[members[i].member_id] = rack
        racks_of: dict[TP, frozenset[str]] = {}
        all_racks: set[str] = set()
        if by_rack:
            for t, n in partitions.items():
                per = partition_racks.get(t)
                for p in range(n):
                    rs = frozenset(r for r in per[p] if r is not None) if per is not None else frozenset()
                    racks_of[(t, p)] = rs
                    all_racks.update(rs)
        use = bool(by_rack) and not all_racks.isdisjoint(by_rack)
        if use and not prefer_rack_aware_logic:
            use = not all(rs == all_racks for rs in racks_of.values())
        self.consumer_racks: dict[str, str] = member_rack if use else {}
        self.partition_racks: dict[TP, frozenset[str]] = racks_of if use else {}
        #: Computed whenever some consumer has a rack, rack-aware or not (as Kafka does).
        self.consumers_by_partition: dict[TP, int] = {
            tp: sum(by_rack.get(r, 0) for r in rs) for tp, rs in racks_of.items()
        }

    def mismatch(self, consumer: str, tp: TP) -> bool:
        rack = self.consumer_racks.get(consumer)
        if rack is None:
            return False
        racks = self.partition_racks.get(tp)
        return racks is None or rack not in racks

    def sort_by_rack_consumers(self, tps: list[TP]) -> list[TP]:
        if not self.consumers_by_partition:
            return tps
        get = self.consumers_by_partition.get
        return sorted(tps, key=lambda tp: get(tp, 0))  # stable, as List.sort

    def next_rack_consumer(self, tp: TP, consumers: Sequence[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        n = len(consumers)
        for k in range(n):
            index = (first + k) % n
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


# ----------------------------------------------------------------------------- claims


def resolve_claims(
    topics: Mapping[str, int], members: Sequence[KafkaMember], order: Sequence[int]
) -> tuple[bool, dict[str, list[TP]], set[TP], int]:
    """``allSubscriptionsEqual``: (all equal?, member -> kept claims, partitions claimed
    twice in one generation, the highest generation seen)."""
    equal = True
    subscribed: set[str] = set()
    owner_of: dict[TP, str] = {}
    owned: dict[str, list[TP]] = {}
    multi: set[TP] = set()
    max_generation = DEFAULT_GENERATION
    sub_gen = {
        m.member_id: DEFAULT_GENERATION if m.subscription_generation is None else m.subscription_generation
        for m in members
    }
    for i in order:
        m = members[i]
        if not subscribed:
            subscribed.update(m.topics)
        elif equal and not (len(m.topics) == len(subscribed) and subscribed.issuperset(m.topics)):
            equal = False
        gen = DEFAULT_GENERATION if m.generation is None else m.generation
        max_generation = max(max_generation, gen)
        mine: list[TP] = []
        owned[m.member_id] = mine
        for tp in m.claims:
            if tp[0] not in topics:
                continue
            other = owner_of.get(tp)
            if other is None:
                mine.append(tp)
                owner_of[tp] = m.member_id
                continue
            other_gen = sub_gen[other]
            if gen == other_gen:
                multi.add(tp)
                _remove(owned[other], tp)
                owner_of[tp] = m.member_id
            elif gen > other_gen:
                mine.append(tp)
                _remove(owned[other], tp)
                owner_of[tp] = m.member_id
    return equal, owned, multi, max_generation


def _remove(lst: list[TP], tp: TP) -> None:
    """``List.remove(Object)``: the first occurrence, if any."""
    if tp in lst:
        lst.remove(tp)


def _sorted_topics(topics: Mapping[str, int]) -> list[str]:
    return sorted(topics, key=java_key)


# ----------------------------------------------------------------------------- constrained


def _constrained(
    topics: Mapping[str, int],
    rack: RackInfo,
    current: dict[str, list[TP]],
    member_order: list[str],
    multi: set[TP],
) -> KafkaStickyResult:
    """``ConstrainedAssignmentBuilder.build``."""
    total = sum(topics.values())
    num = len(current)
    min_q = total // num
    max_q = -(-total // num)
    expected_over = total % num
    over = 0
    assignment: dict[str, list[TP]] = {c: [] for c in member_order}
    assigned: list[TP] = []
    maybe_revoked: dict[TP, str] = {}
    under: list[str] = []
    at_min: list[str] = []
    transferring: dict[TP, str] = {}

    # assignOwnedPartitions
    for c in member_order:
        owned = []
        for tp in current[c]:
            if rack.mismatch(c, tp):
                maybe_revoked[tp] = c
            else:
                owned.append(tp)
        owned.sort(key=lambda tp: (tp[1], java_key(tp[0])))
        for tp in multi:
            if tp in owned:
                owned.remove(tp)
        mine = assignment[c]
        if len(owned) < min_q:
            mine.extend(owned)
            assigned.extend(owned)
            under.append(c)
        elif len(owned) >= max_q and over < expected_over:
            over += 1
            if over == expected_over:
                at_min.clear()
            mine.extend(owned[:max_q])
            assigned.extend(owned[:max_q])
            for tp in owned[max_q:]:
                maybe_revoked[tp] = c
        else:
            mine.extend(owned[:min_q])
            assigned.extend(owned[:min_q])
            for tp in owned[min_q:]:
                maybe_revoked[tp] = c
            if over < expected_over:
                at_min.append(c)

    # getUnassignedPartitions: a merge walk, which stops matching at a claim on a
    # partition that does not exist (everything after it counts as unassigned).
    unassigned: list[TP] = []
    names = _sorted_topics(topics)
    if not assigned:
        unassigned = [(t, p) for t in names for p in range(topics[t])]
    else:
        assigned.sort(key=lambda tp: (java_key(tp[0]), tp[1]))
        k = 0
        direct = False
        for t in names:
            for p in range(topics[t]):
                if direct or assigned[k] != (t, p):
                    unassigned.append((t, p))
                elif k + 1 < len(assigned):
                    k += 1
                else:
                    direct = True
    under.sort(key=java_key)
    at_min.sort(key=java_key)
    unassigned = rack.sort_by_rack_consumers(unassigned)

    def assign_new(tp: TP, c: str) -> int:
        mine = assignment[c]
        mine.append(tp)
        if (tp in maybe_revoked and maybe_revoked[tp] != c) or tp in multi:
            transferring[tp] = c
        return len(mine)

    # assignRackAwareRoundRobin
    if rack.consumer_racks:
        next_index = 0
        left: list[TP] = []
        for tp in unassigned:
            consumer: str | None = None
            index = rack.next_rack_consumer(tp, under, next_index)
            if index >= 0:
                consumer = under[index]
                count = len(assignment[consumer]) + 1
                if count >= min_q:
                    under.remove(consumer)
                    if count < max_q and over < expected_over:
                        at_min.append(consumer)
                else:
                    index += 1
                next_index = 0 if not under else index % len(under)
            elif at_min:
                first = rack.next_rack_consumer(tp, at_min, 0)
                if first >= 0:
                    consumer = at_min[first]
                    if len(assignment[consumer]) + 1 == max_q:
                        del at_min[first]
                        over += 1
                        if over == expected_over:
                            at_min.clear()
            if consumer is not None:
                assign_new(tp, consumer)
            else:
                left.append(tp)
        unassigned = left

    # assignRoundRobin: an iterator over `under` that removes members reaching minQuota
    pos = 0  # the iterator's next index into `under`
    last = -1  # the index it returned last (for remove)
    for tp in unassigned:
        if pos < len(under):
            consumer = under[pos]
            last = pos
            pos += 1
        elif not under and not at_min:
            raise KafkaAssignorError(
                "java.lang.IllegalStateException: No more unfilled consumers to be assigned."
            )
        elif not under:
            consumer = at_min.pop(0)
        else:
            pos = 0
            consumer = under[pos]
            last = pos
            pos += 1
        count = assign_new(tp, consumer)
        if count == min_q:
            # The iterator removes the member it returned last (even when this partition
            # went to a member polled from at_min), and throws when it has none.
            if last < 0:
                raise KafkaAssignorError("java.lang.IllegalStateException")
            del under[last]
            pos = last
            last = -1
            at_min.append(consumer)
        elif count == max_q:
            over += 1

    # verifyUnfilledMembers
    if under:
        if over != expected_over:
            raise KafkaAssignorError(
                "java.lang.IllegalStateException: We haven't reached the expected number of "
                "members with more than the minQuota partitions, but no more partitions to "
                "be assigned"
            )
        for c in under:
            if len(assignment[c]) != min_q:
                raise KafkaAssignorError(
                    f"java.lang.IllegalStateException: Consumer: [{c}] doesn't reach minQuota "
                    "partitions, and no more partitions to be assigned"
                )
    return KafkaStickyResult(assignment, transferring)


# ----------------------------------------------------------------------------- general


class _Movements:
    """``AbstractStickyAssignor.PartitionMovements``."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashSet[TP]]] = {}
        self.moves: dict[TP, tuple[str, str]] = {}

    def _remove_record(self, tp: TP) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        per = self.by_topic[tp[0]]
        per[pair].remove(tp)
        if not len(per[pair]):
            del per[pair]
        if not per:
            del self.by_topic[tp[0]]
        return pair

    def _add_record(self, tp: TP, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, JavaHashSet(topic_partition_hash)).add(tp)

    def move(self, tp: TP, old: str, new: str) -> None:
        if tp in self.moves:
            src, _ = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TP, old: str, new: str) -> TP:
        per = self.by_topic.get(tp[0])
        if per is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = per.get((new, old))
        if reverse is None:
            return tp
        return reverse.first()


class _General:
    """``GeneralAssignmentBuilder``."""

    def __init__(
        self,
        topics: Mapping[str, int],
        rack: RackInfo,
        current: dict[str, list[TP]],
        members: Sequence[KafkaMember],
        order: Sequence[int],
        max_generation: int,
    ) -> None:
        self.topics = topics
        self.total = sum(topics.values())
        self.rack = rack
        self.current = current
        self.members = members
        self.order = order
        self.max_generation = max_generation
        self.by_id = {m.member_id: m for m in members}
        self.potential_consumers: dict[str, list[str]] = {t: [] for t in topics}
        self.potential_topics: dict[str, list[str]] = {}
        for i in order:
            m = members[i]
            mine = [t for t in m.topics if t in topics]
            self.potential_topics[m.member_id] = mine
            for t in mine:
                self.potential_consumers[t].append(m.member_id)
            current.setdefault(m.member_id, [])
        self.partition_consumer: dict[TP, str] = {}
        for c, tps in current.items():
            for tp in tps:
                self.partition_consumer[tp] = c
        names = sorted(topics, key=lambda t: (len(self.potential_consumers[t]), java_key(t)))
        self.topic_rank = {t: k for k, t in enumerate(names)}
        self.sorted_all: list[TP] = [(t, p) for t in names for p in range(topics[t])]
        self.sorted_members = SortedMembers(lambda c: len(self.current[c]))
        self.revocation_required = False
        self.movements = _Movements()
        #: _owners_by_topic's answer until the assignment next changes.
        self._held: dict[str, dict[str, int]] | None = None
        #: per topic, the smallest size among its subscribers, until the assignment changes
        self._least: dict[str, int | None] = {}
        self._held_valid = False
        #: _is_balanced's answer until the assignment next changes.
        self._balanced: bool | None = None

    def _size(self, c: str | None) -> int:
        if c is None or c not in self.current:
            raise KafkaAssignorError("java.lang.NullPointerException")
        return len(self.current[c])

    def build(self) -> dict[str, list[TP]]:
        prev: dict[TP, tuple[str, int]] = {}
        self._prepopulate(prev)
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        for c in self.current:
            self.sorted_members.add(c)
        self._balance(prev, unassigned)
        return self.current

    def _prepopulate(self, prev: dict[TP, tuple[str, int]]) -> None:
        """``prepopulateCurrentAssignments``: for each partition, the member that claimed it
        with the highest generation below the top one (first such in HashMap order)."""
        for i in self.order:
            m = self.members[i]
            if m.generation is not None and m.generation < self.max_generation:
                gen = m.generation
            elif m.generation is None and self.max_generation > DEFAULT_GENERATION:
                gen = DEFAULT_GENERATION
            else:
                continue
            for tp in m.claims:
                old = prev.get(tp)
                if old is None or gen > old[1]:
                    prev[tp] = (m.member_id, gen)

    def _assign_owned(self) -> list[TP]:
        assigned: list[TP] = []
        for c, tps in self.current.items():
            subscribed = self.by_id[c].topics
            keep: list[TP] = []
            for tp in tps:
                if tp[0] not in self.potential_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp[0] not in subscribed or self.rack.mismatch(c, tp):
                    self.revocation_required = True
                else:
                    keep.append(tp)
                    assigned.append(tp)
            tps[:] = keep
        return assigned

    def _unassigned(self, assigned: list[TP]) -> list[TP]:
        if not assigned:
            return self.sorted_all
        rank = self.topic_rank
        assigned.sort(key=lambda tp: (rank[tp[0]], java_key(tp[0]), tp[1]))
        out: list[TP] = []
        k = 0
        direct = False
        for tp in self.sorted_all:
            if direct or assigned[k] != tp:
                out.append(tp)
            elif k + 1 < len(assigned):
                k += 1
            else:
                direct = True
        return out

    def _max_size(self, subscribed: list[str]) -> int:
        if len(subscribed) == len(self.topics):
            return self.total
        return sum(self.topics[t] for t in subscribed)

    def _changed(self) -> None:
        """The assignment changed: the cached holders and balance answer are void."""
        self._held_valid = False
        self._balanced = None
        self._least = {}

    def _least_subscriber_size(self, t: str) -> int | None:
        """The smallest assignment among the potential consumers of ``t``; None if one of
        them has no assignment entry (then the caller's own loop raises as Kafka does)."""
        if t in self._least:
            return self._least[t]
        current = self.current
        least: int | None = None
        for o in self.potential_consumers[t]:
            tps = current.get(o)
            if tps is None:
                least = None
                break
            if least is None or len(tps) < least:
                least = len(tps)
        self._least[t] = least
        return least

    def _is_balanced(self) -> bool:
        """``isBalanced``: sizes within one, or no member could take a partition of its
        topics from a member with two more than it has. The answer depends only on the
        assignment, so it is kept until the assignment changes (``performReassignments``
        asks before every partition, most often with nothing moved since)."""
        if self._balanced is None:
            self._balanced = self._compute_balanced()
        return self._balanced

    def _compute_balanced(self) -> bool:
        sm = self.sorted_members
        if self._size(sm.first()) >= self._size(sm.last()) - 1:
            return True
        by_topic = self._owners_by_topic()
        if by_topic is None:
            return self._is_balanced_scan()
        current = self.current
        # Per topic, the two largest holders: a member c can take a partition of t from a
        # holder other than itself iff the largest holder that is not c has more than
        # c's size + 1 (Kafka asks it partition by partition; the answer is the same).
        top: dict[str, tuple[int, str | None, int]] = {}
        for t, holders in by_topic.items():
            first, first_c, second = -1, None, -1
            for o in holders:
                n = len(current[o])
                if n > first:
                    first, first_c, second = n, o, first
                elif n > second:
                    second = n
            top[t] = (first, first_c, second)
        for c in sm:
            count = len(current[c])
            subscribed = self.potential_topics[c]
            if count == self._max_size(subscribed):
                continue
            for t in subscribed:
                first, first_c, second = top[t]
                if count + 1 < (second if first_c == c else first):
                    return False
        return True

    def _owners_by_topic(self) -> dict[str, dict[str, int]] | None:
        """topic -> the members holding its partitions (with how many), the same answer as
        Kafka's scan partition by partition when every partition has exactly one holder
        (None when not: then which partition the scan reaches first decides, and the scan
        runs). Kept up to date across moves by ``_move``."""
        if self._held_valid:
            return self._held
        held: dict[str, dict[str, int]] = {t: {} for t in self.topics}
        counts = dict.fromkeys(self.topics, 0)
        topics = self.topics
        for c, tps in self.current.items():
            for t, p in tps:
                n = topics.get(t)
                if n is None or not 0 <= p < n:
                    continue
                mine = held[t]
                mine[c] = mine.get(c, 0) + 1
                counts[t] += 1
        self._held_valid = True
        if any(counts[t] != n for t, n in topics.items()):
            self._held = None  # a partition held twice, or by nobody
        else:
            self._held = held
        return self._held

    def _is_balanced_scan(self) -> bool:
        sm = self.sorted_members
        owner: dict[TP, str] = {}
        for c, tps in self.current.items():
            for tp in tps:
                owner[tp] = c
        for c in sm:
            mine = self.current[c]
            count = len(mine)
            subscribed = self.potential_topics[c]
            if count == self._max_size(subscribed):
                continue
            mine_set = set(mine)
            for t in subscribed:
                for p in range(self.topics[t]):
                    tp = (t, p)
                    if tp not in mine_set and count + 1 < self._size(owner.get(tp)):
                        return False
        return True

    def _balance_score(self, assignment: Mapping[str, list[TP]]) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _maybe_assign_partition(self, tp: TP, with_racks: bool) -> bool:
        for c in self.sorted_members:
            if tp[0] in self.potential_topics[c] and not (with_racks and self.rack.mismatch(c, tp)):
                self.sorted_members.remove(c)
                self.current[c].append(tp)
                self._changed()
                self.partition_consumer[tp] = c
                self.sorted_members.add(c)
                return True
        return False

    def _maybe_assign(self, tps: list[TP], with_racks: bool, remove: bool) -> list[TP]:
        left: list[TP] = []
        if not with_racks:
            heaps = self._subscriber_heaps()
            for tp in tps:
                if not (self._assign_to_first_subscriber(tp, heaps) and remove):
                    left.append(tp)
            return left
        for tp in tps:
            if not self.potential_consumers[tp[0]]:
                left.append(tp)
                continue
            if not (self._maybe_assign_partition(tp, with_racks) and remove):
                left.append(tp)
        return left

    def _subscriber_heaps(self) -> dict[str, list[tuple[int, bytes, str]]]:
        """Per topic, a heap of the ``sorted_members`` entries of its subscribers. Its
        smallest live entry is the member ``_maybe_assign_partition`` would find first when
        scanning the whole TreeSet in order (entries are the TreeSet's own keys), found
        without the scan that makes Kafka's loop O(partitions x members) on different
        subscriptions. Entries replaced in ``sorted_members`` go stale and are dropped lazily."""
        heaps: dict[str, list[tuple[int, bytes, str]]] = {t: [] for t in self.potential_consumers}
        at = self.sorted_members.entries()
        for c, entry in at.items():
            for t in self.potential_topics.get(c, ()):
                heaps[t].append(entry)
        for h in heaps.values():
            heapify(h)
        return heaps

    def _assign_to_first_subscriber(
        self, tp: TP, heaps: dict[str, list[tuple[int, bytes, str]]]
    ) -> bool:
        """``_maybe_assign_partition`` without racks, by the heaps of ``_subscriber_heaps``."""
        heap = heaps[tp[0]]
        at = self.sorted_members.entries()
        while heap and at.get(heap[0][2]) is not heap[0]:
            heappop(heap)
        if not heap:
            return False
        c = heap[0][2]
        self.sorted_members.remove(c)
        self.current[c].append(tp)
        self._changed()
        self.partition_consumer[tp] = c
        self.sorted_members.add(c)
        entry = at[c]
        for t in self.potential_topics[c]:
            heappush(heaps[t], entry)
        return True

    def _can_topic_move(self, t: str) -> bool:
        return len(self.potential_consumers[t]) >= 2

    def _can_consumer_move(self, c: str) -> bool:
        tps = self.current[c]
        if len(tps) < self._max_size(self.potential_topics[c]):
            return True
        return any(self._can_topic_move(tp[0]) for tp in tps)

    def _balance(self, prev: dict[TP, tuple[str, int]], unassigned: list[TP]) -> None:
        initializing = not self.current[self.sorted_members.last()]
        to_assign = unassigned
        if self.rack.consumer_racks:
            to_assign = self._maybe_assign(list(unassigned), True, True)
        self._maybe_assign(to_assign, False, False)

        fixed_topics = {t for t in self.potential_consumers if not self._can_topic_move(t)}
        sorted_all = [tp for tp in self.sorted_all if tp[0] not in fixed_topics]
        if unassigned is self.sorted_all:
            unassigned = sorted_all
        else:
            unassigned = [tp for tp in unassigned if tp[0] not in fixed_topics]
        self.sorted_all = sorted_all

        fixed: dict[str, list[TP]] = {}
        for c in list(self.potential_topics):
            if not self._can_consumer_move(c):
                self.sorted_members.remove(c)
                fixed[c] = self.current.pop(c)
                self._changed()

        before = {c: list(tps) for c, tps in self.current.items()}
        before_owner = dict(self.partition_consumer)
        if not self.revocation_required:
            self._reassign(unassigned, prev)
        performed = self._reassign(self.sorted_all, prev)
        if (
            not initializing
            and performed
            and self._balance_score(self.current) >= self._balance_score(before)
        ):
            self.current.clear()
            self.current.update({c: list(tps) for c, tps in before.items()})
            self.partition_consumer = before_owner
        self._changed()
        for c, tps in fixed.items():
            self.current[c] = tps
            self.sorted_members.add(c)
        self._changed()

    def _reassign(self, partitions: list[TP], prev: dict[TP, tuple[str, int]]) -> bool:
        """``performReassignments``."""
        performed = False
        while True:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                c = self.partition_consumer.get(tp)
                if tp in prev and self._size(c) > self._size(prev[tp][0]) + 1:
                    self._reassign_to(tp, prev[tp][0])
                    performed = modified = True
                    continue
                racks = self.rack.partition_racks.get(tp, frozenset())
                my_rack = self.rack.consumer_racks.get(c) if c is not None else None
                found = False
                if my_rack is not None and racks and my_rack in racks:
                    for other in self.potential_consumers[tp[0]]:
                        other_rack = self.rack.consumer_racks.get(other)
                        if other_rack is None or other_rack not in racks:
                            continue
                        if self._size(c) > self._size(other) + 1:
                            self._reassign_any(tp)
                            performed = modified = found = True
                            break
                if not found:
                    least = self._least_subscriber_size(tp[0])
                    if least is not None and self.potential_consumers[tp[0]]:
                        # some potential consumer is two smaller iff the smallest one is
                        if self._size(c) > least + 1:
                            self._reassign_any(tp)
                            performed = modified = True
                        continue
                    for other in self.potential_consumers[tp[0]]:
                        if self._size(c) > self._size(other) + 1:
                            self._reassign_any(tp)
                            performed = modified = True
                            break
            if not modified:
                return performed

    def _reassign_any(self, tp: TP) -> None:
        for c in self.sorted_members:
            if tp[0] in self.potential_topics[c]:
                self._reassign_to(tp, c)
                return
        raise KafkaAssignorError("java.lang.AssertionError")

    def _reassign_to(self, tp: TP, new: str) -> None:
        old = self.partition_consumer.get(tp)
        if old is None:
            raise KafkaAssignorError("java.lang.NullPointerException")
        moved = self.movements.partition_to_move(tp, old, new)
        self._move(moved, new)

    def _move(self, tp: TP, new: str) -> None:
        """``processPartitionMovement``."""
        old = self.partition_consumer.get(tp)
        if old is None:
            raise KafkaAssignorError("java.lang.NullPointerException")
        sm = self.sorted_members
        sm.remove(old)
        sm.remove(new)
        self.movements.move(tp, old, new)
        if old not in self.current or new not in self.current:
            raise KafkaAssignorError("java.lang.NullPointerException")
        _remove(self.current[old], tp)
        self.current[new].append(tp)
        held = self._held if self._held_valid else None
        t, p = tp
        if held is not None and 0 <= p < self.topics.get(t, 0):
            # one partition changes hands: every partition still has one holder
            mine = held[t]
            left = mine[old] - 1
            if left:
                mine[old] = left
            else:
                del mine[old]
            mine[new] = mine.get(new, 0) + 1
            self._balanced = None
            self._least = {}
        else:
            self._changed()
        self.partition_consumer[tp] = new
        sm.add(new)
        sm.add(old)


# ----------------------------------------------------------------------------- entry


def kafka_sticky_assign(
    topics: Mapping[str, int],
    members: Sequence[KafkaMember],
    partition_racks: Mapping[str, Sequence[Sequence[str | None]]] | None = None,
    prefer_rack_aware_logic: bool = False,
) -> KafkaStickyResult:
    """``AbstractStickyAssignor.assignPartitions``. ``topics``: the subscribed topics with
    partitions (``AbstractPartitionAssignor.assign`` drops the others); ``members`` in
    JoinGroup order."""
    if not members:
        return KafkaStickyResult({}, {})
    order = hashmap_order([m.member_id for m in members])
    rack = RackInfo(topics, partition_racks or {}, members, order, prefer_rack_aware_logic)
    equal, current, multi, max_generation = resolve_claims(topics, members, order)
    if equal:
        member_order = [members[i].member_id for i in order]
        return _constrained(topics, rack, current, member_order, multi)
    general = _General(topics, rack, current, members, order, max_generation)
    return KafkaStickyResult(general.build(), None)


def cooperative_adjust(
    result: KafkaStickyResult, members: Sequence[KafkaMember]
) -> dict[str, list[TP]]:
    """``CooperativeStickyAssignor.assignPartitions``: leave out the partitions that change
    owner, so their owner revokes them first (``adjustAssignment``). On the general path the
    set is recomputed: partitions added to a member that some member's
    ``ownedPartitions`` no longer keeps (``computePartitionsTransferringOwnership``)."""
    assignment = result.assignment
    transferring = result.transferring
    if transferring is None:
        added: dict[TP, str] = {}
        revoked: set[TP] = set()
        by_id = {m.member_id: m for m in members}
        for c, tps in assignment.items():
            owned = by_id[c].owned
            owned_set = set(owned)
            for tp in tps:
                if tp not in owned_set:
                    added[tp] = c
            got = set(tps)
            revoked.update(tp for tp in owned if tp not in got)
        transferring = {tp: c for tp, c in added.items() if tp in revoked}
    for tp, c in transferring.items():
        _remove(assignment[c], tp)
    return assignment

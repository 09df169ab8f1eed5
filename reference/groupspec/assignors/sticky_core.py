"""The sticky algorithm shared by StickyAssignor and CooperativeStickyAssignor.

Source: clients/.../consumer/internals/AbstractStickyAssignor.java. Goals, in order:
balance (partition counts as even as the subscriptions allow), then stickiness (as many
previously owned partitions as possible stay with their owner).

Theory of operation
-------------------
1. *Claims* (``allSubscriptionsEqual``). Each member reports the partitions it owned and its
   generation. Claims on topics the leader has no partitions for are dropped (we also drop
   partition numbers beyond the topic's current count, which Kafka keeps). Walking the
   members in Java ``HashMap`` order (see :mod:`groupspec.assignors.ordering`), a partition
   claimed by one member stays with it whatever its generation; a later claim with a higher
   generation takes it over; a later claim with the same generation removes it from the
   earlier claimer and marks it as having multiple previous owners. Deviation: Kafka
   compares against the earlier claimer's *subscription* generation field, we use the
   generation its member data reported (the two agree for every real client).

2. *Constrained path* (all subscriptions equal; ``ConstrainedAssignmentBuilder``). With P
   partitions and C members, ``minQuota = P // C``, ``maxQuota = ceil(P / C)`` and
   ``P % C`` members may hold ``maxQuota``. In HashMap order each member keeps its claims
   sorted by (partition, topic) (KAFKA-16277) up to ``maxQuota`` while such slots remain,
   else up to ``minQuota``; members below ``minQuota`` are "unfilled", members at
   ``minQuota`` may take one more while slots remain. The remaining partitions, sorted by
   (topic, partition), are dealt round-robin over the unfilled members sorted by member id
   up to ``minQuota``, then one each to the members at ``minQuota`` (``assignRoundRobin``).
   We compute that deal in closed form: member by member as arithmetic slices of the
   unassigned list, not partition by partition.

3. *General path* (subscriptions differ; ``GeneralAssignmentBuilder``). Kafka's builder is a
   heuristic (KAFKA-8767). Ours computes the optimum of the same two goals exactly: among
   assignments minimising the sum of squared member sizes (which implies Kafka's balance
   contract, ``isBalanced``: no member with two fewer partitions could take one from a
   richer one), the one keeping the most claims. Topics with the same subscribers form a
   class; partitions of a class differ only by who owned them, so the problem is a convex
   min-cost flow on (class, member) pairs, solved by cancelling negative cycles from a
   water-filled start. Partitions then go out class by class: each member keeps its first
   claims in (partition, topic) order, and the rest of the class is dealt in (topic,
   partition) order to members in member-id order.

Nothing here is sized members x partitions: claims are per (member, topic) tuples,
unassigned partitions are global indices (topics in Java order, then partition).
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import itemgetter

from groupspec.assignors.ordering import hashmap_order, java_key

Parts = dict[str, tuple[int, ...]]
PartsIn = Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class StickyMember:
    """A member as the sticky algorithm sees it (the assignor has decoded its member data)."""

    member_id: str
    topics: frozenset[str]
    #: Partitions the member says it owned (sorted tuples per topic).
    claimed: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    generation: int = -1


@dataclass
class StickyResult:
    #: member id -> topic -> sorted partitions.
    assignment: dict[str, Parts]
    #: member id -> partitions given to it that it did not own after claim resolution.
    added: dict[str, Parts]
    #: True when the constrained (all subscriptions equal) path ran.
    constrained: bool
    #: topic -> every claim on it (before resolution), for the cooperative rule.
    claims: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    #: topic -> union of those claims, for the topics where it was computed.
    claimed: dict[str, set[int]] = field(default_factory=dict)


def sticky_assign(topics: Mapping[str, int], members: Sequence[StickyMember]) -> StickyResult:
    """Assign ``topics`` (subscribed, known, > 0 partitions) to ``members`` (JoinGroup order)."""
    if not members:
        return StickyResult({}, {}, True)
    order = hashmap_order([m.member_id for m in members])
    first = members[0].topics
    constrained = all(m.topics == first for m in members)
    claims = _Claims(topics, members, order, drop_multi=constrained)
    if constrained:
        result = _constrained(topics, members, order, claims)
    else:
        result = _general(topics, members, claims.resolved)
    result.claims = claims.raw
    result.claimed = claims.union
    return result


# --------------------------------------------------------------------------- claims


def _within(claims: list[tuple[int, ...]], n: int) -> bool:
    """All claims non-empty and inside [0, n)."""
    try:
        low: int = min(map(itemgetter(0), claims))
        high: int = max(map(itemgetter(-1), claims))
    except IndexError:  # an empty claim
        return False
    return low >= 0 and high < n


def _trim(ps: tuple[int, ...], n: int) -> tuple[int, ...]:
    lo = bisect_left(ps, 0)
    hi = bisect_left(ps, n)
    return ps if lo == 0 and hi == len(ps) else ps[lo:hi]


class _Claims:
    """The claims of every member after generation resolution (``allSubscriptionsEqual``).

    ``resolved[i]``: member i's claims that survive (the member's own mapping when nothing
    of it changes, never mutated); ``count[i]``: how many; ``raw[t]``: every claim on topic
    t before resolution; ``held[t]``: the surviving claims on t, pairwise disjoint.
    ``drop_multi``: also remove partitions claimed twice in one generation from the
    winner, as ``ConstrainedAssignmentBuilder.assignOwnedPartitions`` does.
    """

    def __init__(
        self,
        topics: Mapping[str, int],
        members: Sequence[StickyMember],
        order: list[int],
        drop_multi: bool,
    ) -> None:
        self.raw: dict[str, list[tuple[int, ...]]] = {t: [] for t in topics}
        #: topic -> the union of its raw claims, where it was computed.
        self.union: dict[str, set[int]] = {}
        raw = self.raw
        self.resolved: list[PartsIn] = [m.claimed for m in members]
        known = dict(topics)
        for i in order:
            claimed = members[i].claimed
            if claimed and claimed.keys() <= known.keys():
                # File them in C; partition ranges are checked per topic below.
                deque(map(list.append, map(raw.__getitem__, claimed), claimed.values()), maxlen=0)
            elif claimed:
                self._file_slowly(i, claimed, known)
        union = self.union
        self._total: dict[str, int] = {}  # topic -> number of claims on its partitions
        if not self._unions_within(known):
            # Some claim is empty or out of range: file everything again, carefully.
            for lst in raw.values():
                lst.clear()
            for i in order:
                if members[i].claimed:
                    self._file_slowly(i, members[i].claimed, known)
            union.clear()
            self._unions_within(known)
        self.count = [sum(map(len, own.values())) for own in self.resolved]
        #: topic -> how many of its partitions surviving claims hold.
        self.held_size: dict[str, int] = {}
        self.held: dict[str, list[tuple[int, ...]]] = dict(raw)
        for t in raw:
            total = self._total[t]
            if t in union and len(union[t]) != total:
                self._resolve(t, members, order, drop_multi)
                total = sum(map(len, self.held[t]))
            self.held_size[t] = total

    def _unions_within(self, known: Mapping[str, int]) -> bool:
        """Count the claims of every topic and take the union of those claimed more than
        once; True if every claim is non-empty and inside its topic."""
        ok = True
        first = itemgetter(0)
        for t, lst in self.raw.items():
            total = self._total[t] = sum(map(len, lst))
            if not lst:
                continue
            if len(lst) == 1:
                ok = ok and _within(lst, known[t])
                continue
            # One partition per claim is the common case, and cheaper to collect.
            single = total == len(lst) and () not in lst
            u = set(map(first, lst)) if single else set().union(*lst)
            self.union[t] = u
            ok = ok and () not in lst and min(u) >= 0 and max(u) < known[t]
        return ok

    def _file_slowly(self, i: int, claimed: PartsIn, known: Mapping[str, int]) -> None:
        """File member i's claims one topic at a time, dropping unknown topics and the
        partitions beyond a topic's count."""
        raw = self.raw
        fixed: Parts = {}
        for t, ps in claimed.items():
            n = known.get(t)
            if n is not None and ps and ps[0] >= 0 and ps[-1] < n:
                raw[t].append(ps)
                continue
            fixed[t] = _trim(ps, n) if n is not None and ps else ()
            if fixed[t]:
                raw[t].append(fixed[t])
        if fixed:
            own = {t: fixed.get(t, ps) for t, ps in claimed.items()}
            self.resolved[i] = {t: ps for t, ps in own.items() if ps}

    def _own(self, i: int, members: Sequence[StickyMember]) -> Parts:
        own = self.resolved[i]
        if isinstance(own, dict) and own is not members[i].claimed:
            return own
        copy = dict(own)
        self.resolved[i] = copy
        return copy

    def _resolve(
        self, t: str, members: Sequence[StickyMember], order: list[int], drop_multi: bool
    ) -> None:
        """Walk the claims on topic t in HashMap order, as allSubscriptionsEqual does."""
        claimers = [i for i in order if t in self.resolved[i]]
        owner: dict[int, int] = {}
        multi: set[int] = set()
        kept: dict[int, set[int]] = {i: set() for i in claimers}
        for i in claimers:
            gen = members[i].generation
            mine = kept[i]
            for p in self.resolved[i][t]:
                other = owner.get(p)
                if other is None:
                    mine.add(p)
                    owner[p] = i
                    continue
                other_gen = members[other].generation
                if gen == other_gen:
                    multi.add(p)
                    kept[other].discard(p)
                    owner[p] = i
                elif gen > other_gen:
                    mine.add(p)
                    kept[other].discard(p)
                    owner[p] = i
        held: list[tuple[int, ...]] = []
        for i in claimers:
            mine = kept[i] - multi if drop_multi else kept[i]
            own = self._own(i, members)
            self.count[i] -= len(own[t]) - len(mine)
            if mine:
                own[t] = tuple(sorted(mine))
                held.append(own[t])
            else:
                del own[t]
        self.held[t] = held


def _keep_first(
    owned: PartsIn, total: int, k: int, rank: Mapping[str, int]
) -> tuple[PartsIn, Parts]:
    """Split ``owned`` into its first ``k`` partitions in (partition, topic) order and the rest.

    The kept part of each topic is a prefix of its tuple, so we only find the cut points,
    popping from whichever end of the order is nearer.
    """
    if k >= total:
        return owned, {}
    if k <= 0:
        return {}, dict(owned)
    cut: dict[str, int]
    if total - k <= k:
        cut = {t: len(ps) for t, ps in owned.items()}
        heap = [(-ps[-1], -rank[t], t) for t, ps in owned.items()]
        heapq.heapify(heap)
        for _ in range(total - k):
            _, negr, t = heapq.heappop(heap)
            c = cut[t] - 1
            cut[t] = c
            if c:
                heapq.heappush(heap, (-owned[t][c - 1], negr, t))
    else:
        cut = dict.fromkeys(owned, 0)
        up = [(ps[0], rank[t], t) for t, ps in owned.items()]
        heapq.heapify(up)
        for _ in range(k):
            _, r, t = heapq.heappop(up)
            c = cut[t] + 1
            cut[t] = c
            ps = owned[t]
            if c < len(ps):
                heapq.heappush(up, (ps[c], r, t))
    kept: Parts = {}
    rest: Parts = {}
    for t, ps in owned.items():
        c = cut[t]
        if c == len(ps):
            kept[t] = ps
        elif c == 0:
            rest[t] = ps
        else:
            kept[t] = ps[:c]
            rest[t] = ps[c:]
    return kept, rest


# --------------------------------------------------------------------------- layout


class _Layout:
    """Global partition indices: topics in Java order, partitions in order within a topic."""

    def __init__(self, topics: Mapping[str, int]) -> None:
        self.names = sorted(topics, key=java_key)
        self.sizes = [topics[t] for t in self.names]
        self.offsets = [0, *accumulate(self.sizes)]
        self.total = self.offsets[-1]
        self.index = {t: i for i, t in enumerate(self.names)}

    def split(self, globals_sorted: Sequence[int]) -> Parts:
        """Sorted global indices -> topic -> sorted partitions."""
        out: Parts = {}
        offs = self.offsets
        i = 0
        n = len(globals_sorted)
        while i < n:
            ti = bisect_right(offs, globals_sorted[i]) - 1
            end = offs[ti + 1]
            j = bisect_left(globals_sorted, end, i)
            base = offs[ti]
            out[self.names[ti]] = tuple(g - base for g in globals_sorted[i:j])
            i = j
        return out


def _merge(kept: PartsIn, new: Parts) -> Parts:
    if not new:
        return dict(kept)
    out = dict(kept)
    for t, ps in new.items():
        old = out.get(t)
        out[t] = ps if old is None else tuple(sorted(old + ps))
    return out


# --------------------------------------------------------------------------- constrained


def _constrained(
    topics: Mapping[str, int],
    members: Sequence[StickyMember],
    order: list[int],
    claims: _Claims,
) -> StickyResult:
    lay = _Layout(topics)
    num = len(members)
    min_q, extra_slots = divmod(lay.total, num)
    max_q = min_q + (1 if extra_slots else 0)
    over = 0  # currentNumMembersWithOverMinQuotaPartitions
    rank = lay.index
    kept: list[PartsIn] = [{} for _ in members]
    count = [0] * num
    under: list[int] = []
    at_min: list[int] = []
    revoked: dict[str, list[tuple[int, ...]]] = {}
    for i in order:  # assignOwnedPartitions, in HashMap order
        own = claims.resolved[i]
        o = claims.count[i]
        rest: Parts = {}
        if o < min_q:
            kept[i] = own
            count[i] = o
            under.append(i)
        elif o >= max_q and over < extra_slots:
            over += 1
            if over == extra_slots:
                at_min.clear()
            kept[i], rest = _keep_first(own, o, max_q, rank)
            count[i] = max_q
        else:
            kept[i], rest = _keep_first(own, o, min_q, rank)
            count[i] = min_q
            if over < extra_slots:
                at_min.append(i)
        for t, ps in rest.items():
            revoked.setdefault(t, []).append(ps)
    key = [java_key(m.member_id) for m in members]
    under.sort(key=key.__getitem__)
    at_min.sort(key=key.__getitem__)

    if sum(count) == 0:
        return _fresh(lay, members, key)

    unassigned = _unassigned(lay, claims.held, claims.held_size, revoked, claims.union)
    new_positions: dict[int, list[tuple[int, int, int]]] = {}
    pos = 0
    # Round-robin over the unfilled members: in round j every member still short of
    # minQuota gets one partition, in member-id order; a member leaves the circle (and joins
    # the end of the at-minQuota list) in the round it reaches minQuota.
    deficits = sorted({min_q - count[i] for i in under})
    active = list(under)
    done_rounds = 0
    for d in deficits:
        rounds = d - done_rounds
        width = len(active)
        for r, i in enumerate(active):
            new_positions.setdefault(i, []).append((pos + r, pos + width * rounds, width))
        pos += width * rounds
        done_rounds = d
        finished = [i for i in active if min_q - count[i] == d]
        at_min.extend(finished)
        active = [i for i in active if min_q - count[i] > d]
    # Then one partition each to the members at minQuota, first come first served.
    left = len(unassigned) - pos
    if left > len(at_min):
        raise AssertionError("constrained sticky: more partitions than open slots")
    for r in range(left):
        new_positions.setdefault(at_min[r], []).append((pos + r, pos + r + 1, 1))

    assignment: dict[str, Parts] = {}
    added: dict[str, Parts] = {}
    for i, m in enumerate(members):
        slices = new_positions.get(i)
        if not slices:
            assignment[m.member_id] = dict(kept[i])
            added[m.member_id] = {}
            continue
        got: list[int] = []
        for a, b, s in slices:
            got.extend(unassigned[a:b:s])
        got.sort()
        new = lay.split(got)
        added[m.member_id] = new
        assignment[m.member_id] = _merge(kept[i], new)
    return StickyResult(assignment, added, True)


def _unassigned(
    lay: _Layout,
    held: Mapping[str, list[tuple[int, ...]]],
    held_size: Mapping[str, int],
    revoked: Mapping[str, list[tuple[int, ...]]],
    union: Mapping[str, set[int]],
) -> array[int]:
    """Global indices, ascending, of the partitions nobody kept: those no surviving claim
    holds, and those cut from their claimer's quota. ``union``: per topic, the union of
    its raw claims where computed (equal to the held partitions when the sizes agree)."""
    out: array[int] = array("q")
    for t, base, n in zip(lay.names, lay.offsets, lay.sizes, strict=False):
        claims = held.get(t)
        cut = revoked.get(t)
        if not claims:
            out.extend(range(base, base + n))
            continue
        size = held_size[t]
        if not cut and size == n:
            continue  # surviving claims are disjoint, so all n are held
        free = set(range(n))
        u = union.get(t)
        if u is not None and len(u) == size:
            free -= u
        else:
            free.difference_update(*claims)
        if cut:
            free.update(*cut)
        out.extend(sorted(base + p for p in free))
    return out


def _fresh(lay: _Layout, members: Sequence[StickyMember], key: list[bytes]) -> StickyResult:
    """Nobody keeps anything: the round-robin deal gives the member of rank k in member-id
    order exactly the global indices congruent to k modulo the number of members."""
    num = len(members)
    out: list[Parts] = [{} for _ in range(num)]
    ranked = [out[i] for i in sorted(range(num), key=key.__getitem__)]
    circle = ranked + ranked
    # Partition k of a topic with first global index `base` goes to rank (base + k) % num,
    # so rank r's share of the topic is range(k, n, num) with k = (r - base) % num: it
    # depends only on (n, base % num). Topics sharing those get the same tuples, and each
    # member's entries for them are written in one C-level dict.update.
    groups: dict[tuple[int, int], list[str]] = {}
    for t, base, n in zip(lay.names, lay.offsets, lay.sizes, strict=False):
        groups.setdefault((n, base % num), []).append(t)
    deals: dict[int, list[tuple[int, ...]]] = {}
    for (n, start), names in groups.items():
        deal = deals.get(n)
        if deal is None:
            deal = deals[n] = [tuple(range(k, n, num)) for k in range(min(num, n))]
        owners = circle[start : start + len(deal)]
        if len(names) == 1:
            deque(map(dict.__setitem__, owners, repeat(names[0], len(deal)), deal), maxlen=0)
        else:
            for owner, tup in zip(owners, deal, strict=True):
                owner.update(dict.fromkeys(names, tup))
    assignment = {m.member_id: out[i] for i, m in enumerate(members)}
    return StickyResult(assignment, dict(assignment), True)


# --------------------------------------------------------------------------- general


def _general(
    topics: Mapping[str, int], members: Sequence[StickyMember], resolved: list[PartsIn]
) -> StickyResult:
    lay = _Layout(topics)
    key = [java_key(m.member_id) for m in members]
    # Topic classes: topics with the same set of (known-topic) subscribers.
    subs_of: dict[str, list[int]] = {t: [] for t in lay.names}
    for i, m in enumerate(members):
        for t in m.topics:
            if t in subs_of:
                subs_of[t].append(i)
    class_of: dict[tuple[int, ...], int] = {}
    class_topics: list[list[str]] = []
    class_members: list[tuple[int, ...]] = []
    topic_class: dict[str, int] = {}
    for t in lay.names:
        s = tuple(subs_of[t])
        if not s:
            continue
        g = class_of.get(s)
        if g is None:
            g = class_of[s] = len(class_topics)
            class_topics.append([])
            class_members.append(s)
        class_topics[g].append(t)
        topic_class[t] = g
    size = [sum(topics[t] for t in ts) for ts in class_topics]
    # Valid claims: a member keeps nothing of a topic it no longer subscribes to.
    valid: list[list[Parts]] = [[{} for _ in class_topics] for _ in members]
    owned = [[0] * len(class_topics) for _ in members]
    for i, own in enumerate(resolved):
        mt = members[i].topics
        for t, ps in own.items():
            g = topic_class.get(t)
            if g is not None and t in mt:
                valid[i][g][t] = ps
                owned[i][g] += len(ps)
    flow = _BalancedFlow(size, class_members, owned, key, lay.total)
    flow.solve()

    rank = lay.index
    assignment: list[Parts] = [{} for _ in members]
    added: list[Parts] = [{} for _ in members]
    for g, ts in enumerate(class_topics):
        kept_by_topic: dict[str, list[tuple[int, ...]]] = {}
        need: list[tuple[bytes, int, int]] = []
        for i in class_members[g]:
            y = flow.y[(g, i)]
            k = min(y, owned[i][g])
            if k:
                keep, _ = _keep_first(valid[i][g], owned[i][g], k, rank)
                for t, ps in keep.items():
                    assignment[i][t] = ps
                    kept_by_topic.setdefault(t, []).append(ps)
            if y > k:
                need.append((key[i], i, y - k))
        if not need:
            continue
        need.sort()
        pool = _pool(ts, topics, kept_by_topic, rank)
        seg = 0
        at = 0
        for _, i, want in need:
            while want:
                t, free = pool[seg]
                take = free[at : at + want]
                want -= len(take)
                at += len(take)
                added[i][t] = tuple(take)
                if at == len(free):
                    seg += 1
                    at = 0
    result: dict[str, Parts] = {}
    new: dict[str, Parts] = {}
    for i, m in enumerate(members):
        new[m.member_id] = dict(sorted(added[i].items()))
        result[m.member_id] = _merge(dict(sorted(assignment[i].items())), added[i])
    return StickyResult(result, new, False)


def _pool(
    ts: list[str],
    topics: Mapping[str, int],
    kept_by_topic: dict[str, list[tuple[int, ...]]],
    rank: Mapping[str, int],
) -> list[tuple[str, Sequence[int]]]:
    """The partitions of a class nobody keeps, as (topic, sorted partitions) in topic order."""
    out: list[tuple[str, Sequence[int]]] = []
    for t in sorted(ts, key=rank.__getitem__):
        n = topics[t]
        held = kept_by_topic.get(t)
        if not held:
            out.append((t, range(n)))
        elif sum(map(len, held)) < n:
            out.append((t, sorted(set(range(n)).difference(*held))))
    return out


def _parent_cycle(parent: list[int]) -> list[int] | None:
    """A cycle of the parent-pointer graph, in arc order (cycle[k] -> cycle[k + 1]), or None."""
    state = [0] * len(parent)  # 0 unseen, 1 on the current walk, 2 done
    for start in range(len(parent)):
        if state[start]:
            continue
        walk: list[int] = []
        v = start
        while v != -1 and state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = parent[v]
        if v != -1 and state[v] == 1:
            cycle = walk[walk.index(v) :]
            cycle.reverse()  # parent[v] -> v is an arc, so reversing the walk follows arcs
            return cycle
        for w in walk:
            state[w] = 2
    return None


class _BalancedFlow:
    """Convex min-cost flow from classes to members.

    Variables ``y[(g, m)]``: partitions of class ``g`` given to member ``m``. Every class is
    fully assigned. Cost ``BIG * sum(x_m ** 2) - sum(min(y, owned))`` where ``x_m`` is m's
    size; ``BIG`` exceeds any difference in kept partitions, so balance strictly comes
    first. A flow is optimal iff its residual graph, with marginal costs, has no negative
    cycle; we cancel such cycles (found by Bellman-Ford) until none is left.
    """

    def __init__(
        self,
        size: list[int],
        class_members: list[tuple[int, ...]],
        owned: list[list[int]],
        key: list[bytes],
        total: int,
    ) -> None:
        self.size = size
        self.class_members = class_members
        self.owned = owned
        self.key = key
        self.num_classes = len(size)
        self.num_members = len(owned)
        self.big = total + 1
        self.y: dict[tuple[int, int], int] = {}
        self.x = [0] * self.num_members
        self.classes_of: list[list[int]] = [[] for _ in range(self.num_members)]
        for g, ms in enumerate(class_members):
            for i in ms:
                self.classes_of[i].append(g)

    def _start(self) -> None:
        """Everyone keeps its valid claims; the rest of each class is water-filled onto the
        least loaded subscribers, classes with the fewest subscribers first."""
        y, x = self.y, self.x
        free = list(self.size)
        for g, ms in enumerate(self.class_members):
            for i in ms:
                o = self.owned[i][g]
                y[(g, i)] = o
                x[i] += o
                free[g] -= o
        for g in sorted(range(self.num_classes), key=lambda g: len(self.class_members[g])):
            f = free[g]
            if not f:
                continue
            low = sorted(self.class_members[g], key=lambda i: (x[i], self.key[i]))
            # Water level: the k lowest members are raised towards the (k+1)-th's load.
            k = 1
            below = x[low[0]]  # sum of the k lowest loads
            while k < len(low) and k * x[low[k]] - below <= f:
                below += x[low[k]]
                k += 1
            level, rem = divmod(below + f, k)
            for r, j in enumerate(low[:k]):
                give = level + (1 if r < rem else 0) - x[j]
                y[(g, j)] += give
                x[j] += give

    def _level(self) -> None:
        """Even out loads class by class before cancelling cycles (only to start closer to
        the optimum; the cycles decide). Within a class, members below a level L are raised
        to it with partitions of the class taken from the members above, highest first.
        Each step lowers the sum of squares, so this ends."""
        y, x = self.y, self.x
        for _ in range(100):
            moved = False
            for g, ms in enumerate(self.class_members):
                if len(ms) < 2:
                    continue
                holders = [i for i in ms if y[(g, i)] > 0]
                if not holders:
                    continue
                lo = min(x[i] for i in ms)
                hi = max(x[i] for i in holders)
                if hi - lo <= 1:
                    continue

                def supply(level: int, g: int = g, holders: list[int] = holders) -> int:
                    return sum(min(y[(g, i)], x[i] - level) for i in holders if x[i] > level)

                def demand(level: int, ms: tuple[int, ...] = ms) -> int:
                    return sum(level - x[i] for i in ms if x[i] < level)

                a, b = lo, hi
                while a < b:  # the highest level the holders can fill everyone up to
                    mid = (a + b + 1) // 2
                    if demand(mid) <= supply(mid):
                        a = mid
                    else:
                        b = mid - 1
                level = a
                need = demand(level)
                if need == 0:
                    continue
                a, b = level, hi
                while a < b:  # the lowest the holders must go to give that much
                    mid = (a + b + 1) // 2
                    if supply(mid) >= need:
                        a = mid
                    else:
                        b = mid - 1
                floor = a
                take = {i: min(y[(g, i)], max(0, x[i] - floor - 1)) for i in holders}
                short = need - sum(take.values())
                for i in sorted(holders, key=lambda i: (-x[i], self.key[i])):
                    if short and x[i] - take[i] > floor and y[(g, i)] > take[i]:
                        take[i] += 1
                        short -= 1
                for i, t in take.items():
                    y[(g, i)] -= t
                    x[i] -= t
                for i in ms:
                    if x[i] < level:
                        y[(g, i)] += level - x[i]
                        x[i] = level
                moved = True
            if not moved:
                return

    def solve(self) -> None:
        self._start()
        self._level()
        while True:
            cycle = self._negative_cycle()
            if cycle is None:
                return
            self._push(cycle)

    # Nodes: classes 0..G-1, members G..G+M-1, sink G+M.
    def _arcs(self) -> list[tuple[int, int, int]]:
        g_count = self.num_classes
        sink = g_count + self.num_members
        big = self.big
        arcs: list[tuple[int, int, int]] = []
        for (g, i), yv in self.y.items():
            o = self.owned[i][g]
            node = g_count + i
            arcs.append((g, node, -1 if yv < o else 0))
            if yv > 0:
                arcs.append((node, g, 1 if yv <= o else 0))
        for i, xv in enumerate(self.x):
            node = g_count + i
            arcs.append((node, sink, big * (2 * xv + 1)))
            if xv > 0:
                arcs.append((sink, node, -big * (2 * xv - 1)))
        return arcs

    def _negative_cycle(self) -> list[int] | None:
        """A negative cycle of the residual graph, or None: queue-based Bellman-Ford from
        a virtual source, looking for a cycle among the parent pointers every n
        relaxations (any such cycle is negative)."""
        n = self.num_classes + self.num_members + 1
        out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for u, v, c in self._arcs():
            out[u].append((v, c))
        dist = [0] * n
        parent = [-1] * n
        queue = deque(range(n))
        queued = [True] * n
        relaxed = 0
        while queue:
            u = queue.popleft()
            queued[u] = False
            du = dist[u]
            for v, c in out[u]:
                if du + c < dist[v]:
                    dist[v] = du + c
                    parent[v] = u
                    relaxed += 1
                    if relaxed % n == 0:
                        cycle = _parent_cycle(parent)
                        if cycle is not None:
                            return cycle
                    if not queued[v]:
                        queued[v] = True
                        queue.append(v)
        return None

    def _push(self, cycle: list[int]) -> None:
        g_count = self.num_classes
        sink = g_count + self.num_members
        amount: int | None = None
        moves: list[tuple[int, int, int]] = []  # (class, member, +1/-1)
        gain = loss = -1
        for k, u in enumerate(cycle):
            v = cycle[(k + 1) % len(cycle)]
            if u == sink:
                loss = v - g_count
                continue
            if v == sink:
                gain = u - g_count
                continue
            if u < g_count:  # class -> member: the member takes a partition of the class
                i = v - g_count
                yv, o = self.y[(u, i)], self.owned[i][u]
                cap = o - yv if yv < o else None
                moves.append((u, i, 1))
            else:  # member -> class: the member gives one back
                i = u - g_count
                yv, o = self.y[(v, i)], self.owned[i][v]
                cap = yv - o if yv > o else yv
                moves.append((v, i, -1))
            if cap is not None:
                amount = cap if amount is None else min(amount, cap)
        if gain >= 0:
            step = max(1, (self.x[loss] - self.x[gain]) // 2)
            amount = step if amount is None else min(amount, step)
        if amount is None or amount <= 0:
            raise AssertionError("sticky flow: a negative cycle with no capacity")
        for g, i, sign in moves:
            self.y[(g, i)] += sign * amount
        if gain >= 0:
            self.x[gain] += amount
            self.x[loss] -= amount

"""Properties of the partition assignors, as Hypothesis tests other projects can reuse.

Each ``*_property(...)`` returns a Hypothesis test (call it to run it); tests/ holds thin
pytest wrappers. The checks are plain functions raising AssertionError with a readable
message, so ordinary example tests use them too.

- validity: every assigned partition exists and is subscribed by its owner; no partition
  twice; every subscribed partition is assigned (eager) or assigned or still claimed by a
  member that must revoke it first (cooperative);
- balance: identical subscriptions give sizes within one (Range: within one per topic);
  otherwise the sticky assignors meet Kafka's contract (``isBalanced``: no member could
  take a partition from one holding two more);
- minimal moves: identical subscriptions move exactly the closed-form minimum of
  :mod:`groupspec.assignors.moves`, whose formula is itself checked against z3; different
  subscriptions reach the z3 optimum (:mod:`properties.z3_oracle`): least sum of squared
  sizes, then fewest moves;
- cooperative: no partition is revoked from one member and given to another in the same
  generation, and repeating the rebalance converges (in at most three rounds) to an
  assignment as balanced as the eager sticky one, with exactly as many moves overall;
- Range and RoundRobin equal the simple implementations of :mod:`properties.simple_assignors`
  and kafka-python's assignors.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from hypothesis import Phase, given, note, settings
from hypothesis import strategies as st

from groupspec.assignors.base import Assignor, MemberSubscription
from groupspec.assignors.cooperative_sticky import CooperativeStickyOptimalAssignor
from groupspec.assignors.cooperative_sticky import encode_user_data as coop_user_data
from groupspec.assignors.moves import minimum_moves_from
from groupspec.assignors.range import RangeAssignor
from groupspec.assignors.roundrobin import RoundRobinAssignor
from groupspec.assignors.sticky import StickyOptimalAssignor
from groupspec.assignors.sticky import encode_user_data as sticky_user_data
from groupspec.protocol.consumer_protocol import Assignment, Subscription, TopicPartitions
from properties.simple_assignors import (
    simple_constrained_sticky,
    simple_range,
    simple_roundrobin,
)
from properties.z3_oracle import optimum

TP = tuple[str, int]

#: Topic names whose Python order differs from their order as numbers ("t10" < "t2").
TOPICS = ("a", "t1", "t10", "t2", "zz")
#: A topic the previous assignment has but the metadata no longer does (deleted).
DELETED = "gone"
#: The owner of previous partitions whose member has left the group.
DEPARTED = "departed-member"


@dataclass(frozen=True)
class Member:
    member_id: str
    group_instance_id: str | None
    topics: tuple[str, ...]
    previous: dict[str, tuple[int, ...]]
    generation: int


@dataclass(frozen=True)
class Case:
    """One rebalance: metadata, members, and who owned what before."""

    partitions_per_topic: dict[str, int]
    members: tuple[Member, ...]
    #: Previous owner of each partition (current member id or DEPARTED), including
    #: partitions of DELETED and beyond a topic's current count.
    previous_owner: dict[TP, str]

    def subscribed(self, member_id: str) -> set[str]:
        m = next(m for m in self.members if m.member_id == member_id)
        return {t for t in m.topics if self.partitions_per_topic.get(t, 0) > 0}

    def all_partitions(self) -> set[TP]:
        topics = {t for m in self.members for t in m.topics}
        return {
            (t, p)
            for t, n in self.partitions_per_topic.items()
            if t in topics
            for p in range(n)
        }

    def existing_previous(self) -> dict[TP, str]:
        return {
            (t, p): owner
            for (t, p), owner in self.previous_owner.items()
            if p < self.partitions_per_topic.get(t, 0)
            and any(t in m.topics for m in self.members)
        }


member_ids = st.text(alphabet="abcAB01-", min_size=1, max_size=3)


@st.composite
def cases(
    draw: st.DrawFn,
    identical: bool | None = None,
    max_members: int = 4,
    max_partitions: int = 4,
    static: bool = True,
    previous: bool = True,
) -> Case:
    """Small groups. ``identical``: all subscriptions equal (True), different (False), any."""
    names = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True))
    sizes = {t: draw(st.integers(0, max_partitions)) for t in names}
    ids = draw(st.lists(member_ids, min_size=1, max_size=max_members, unique=True))
    instance = (
        draw(st.lists(st.sampled_from(["i0", "i1", "i2", "i3", None]), min_size=len(ids), max_size=len(ids)))
        if static
        else [None] * len(ids)
    )
    seen: set[str] = set()
    instance_ids: list[str | None] = []
    for iid in instance:
        instance_ids.append(iid if iid is not None and iid not in seen else None)
        if iid is not None:
            seen.add(iid)
    # Subscriptions may name a topic the metadata does not have ("zz" when not drawn).
    pool = [*names, "zz"] if "zz" not in names else names
    if identical:
        common = tuple(draw(st.lists(st.sampled_from(pool), min_size=1, unique=True)))
        subs = [common] * len(ids)
    else:
        subs = [
            tuple(draw(st.lists(st.sampled_from(pool), min_size=1, unique=True)))
            for _ in ids
        ]
        if identical is False and len({frozenset(s) for s in subs}) == 1:
            others = [t for t in pool if t not in subs[0]]
            if len(ids) > 1 and others:
                subs[-1] = (*subs[-1], others[0])
            elif len(ids) > 1 and len(subs[0]) > 1:
                subs[-1] = subs[-1][:1]
            else:
                # Cannot differ: add a member subscribing to one more (unknown) topic.
                ids = [*ids, "Z" + ids[0]]
                instance_ids.append(None)
                subs = [*subs, (*subs[0], "yy")]
    owner_pool = [*ids, DEPARTED]
    prev_owner: dict[TP, str] = {}
    if previous:
        extra = {DELETED: 2, **{t: n + 1 for t, n in sizes.items()}}  # deleted topic, shrunk topics
        for t, n in extra.items():
            for p in range(n):
                owner = draw(st.one_of(st.none(), st.sampled_from(owner_pool)))
                if owner is not None:
                    prev_owner[(t, p)] = owner
    members = []
    for mid, iid, topics in zip(ids, instance_ids, subs, strict=True):
        mine: dict[str, list[int]] = {}
        for (t, p), owner in sorted(prev_owner.items()):
            if owner == mid:
                mine.setdefault(t, []).append(p)
        members.append(
            Member(mid, iid, topics, {t: tuple(ps) for t, ps in mine.items()}, 1 if mine else -1)
        )
    return Case(sizes, tuple(members), prev_owner)


# ------------------------------------------------------------------------------ inputs


def subscriptions(assignor: Assignor, case: Case) -> list[MemberSubscription]:
    """What each member sends in JoinGroup for ``assignor``, from its previous assignment."""
    out = []
    for m in case.members:
        if isinstance(assignor, CooperativeStickyOptimalAssignor):
            sub = Subscription(
                m.topics, coop_user_data(m.generation), m.previous, m.generation
            )
        elif isinstance(assignor, StickyOptimalAssignor):
            data = sticky_user_data(m.previous, m.generation) if m.generation >= 0 else None
            sub = Subscription(m.topics, data, {}, m.generation)
        else:
            sub = Subscription(m.topics)
        out.append(MemberSubscription(m.member_id, sub, m.group_instance_id))
    return out


def flat(result: Mapping[str, Assignment]) -> dict[str, set[TP]]:
    return {mid: {(t, p) for t, ps in a.partitions.items() for p in ps} for mid, a in result.items()}


def owners(result: Mapping[str, set[TP]]) -> dict[TP, str]:
    return {tp: mid for mid, tps in result.items() for tp in tps}


def moves(previous_owner: Mapping[TP, str], result: Mapping[str, set[TP]]) -> int:
    """Partitions owned before and after, by different members (computed here, not by the
    code under test)."""
    now = owners(result)
    return sum(1 for tp, before in previous_owner.items() if tp in now and now[tp] != before)


# ------------------------------------------------------------------------------ checks


def check_valid(
    case: Case, result: Mapping[str, Assignment], pending: Collection[TP] = ()
) -> None:
    """Validity; ``pending``: partitions that may stay unassigned (cooperative revocations)."""
    assert set(result) == {m.member_id for m in case.members}, (
        f"result members {sorted(result)} differ from the group"
    )
    seen: dict[TP, str] = {}
    for mid, a in result.items():
        for t, ps in a.partitions.items():
            assert list(ps) == sorted(set(ps)), f"{mid}: partitions of {t} not sorted: {ps}"
            n = case.partitions_per_topic.get(t, 0)
            assert t in case.subscribed(mid), f"{mid} got {t} it does not subscribe to"
            for p in ps:
                assert 0 <= p < n, f"{mid} got {t}-{p}, which does not exist"
                assert (t, p) not in seen, f"{t}-{p} given to {seen[(t, p)]} and {mid}"
                seen[(t, p)] = mid
    missing = case.all_partitions() - set(seen) - set(pending)
    assert not missing, f"unassigned partitions: {sorted(missing)}"


def sizes(result: Mapping[str, Assignment]) -> dict[str, int]:
    return {mid: sum(len(ps) for ps in a.partitions.values()) for mid, a in result.items()}


def check_within_one(result: Mapping[str, Assignment]) -> None:
    s = sizes(result)
    assert max(s.values()) - min(s.values()) <= 1, f"sizes differ by more than one: {s}"


def check_kafka_balanced(case: Case, result: Mapping[str, Assignment]) -> None:
    """``AbstractStickyAssignor.isBalanced``: nobody could take a partition from a member
    holding two or more partitions more than itself."""
    s = sizes(result)
    now = owners(flat(result))
    for m in case.members:
        for tp in case.all_partitions():
            other = now.get(tp)
            if tp[0] in case.subscribed(m.member_id) and other not in (None, m.member_id):
                assert s[m.member_id] + 1 >= s[other], (
                    f"{m.member_id} ({s[m.member_id]}) could take {tp} from {other} ({s[other]})"
                )


def claimed(case: Case) -> set[TP]:
    return set(case.existing_previous()) - {tp for tp, o in case.previous_owner.items() if o == DEPARTED}


def check_cooperative_safe(case: Case, result: Mapping[str, Assignment]) -> None:
    """No partition is revoked from one member and given to another in one generation."""
    got = flat(result)
    added: set[TP] = set()
    revoked: set[TP] = set()
    for m in case.members:
        before = {(t, p) for t, ps in m.previous.items() for p in ps}
        added |= got[m.member_id] - before
        revoked |= before - got[m.member_id]
    both = added & revoked
    assert not both, f"revoked and reassigned in the same generation: {sorted(both)}"


def _z3(case: Case) -> Any:
    subs = {m.member_id: [t for t in m.topics] for m in case.members}
    known = {t: n for t, n in case.partitions_per_topic.items() if n > 0}
    return optimum(known, subs, case.existing_previous())


# ------------------------------------------------------------------------------ properties

PropertyTest = Callable[[], None]


def _phases(search_only: bool) -> dict[str, Any]:
    """``search_only``: stop at the first counterexample (for tests that expect one)."""
    return {"phases": [Phase.explicit, Phase.reuse, Phase.generate]} if search_only else {}


def validity_and_balance_property(assignor: Assignor) -> PropertyTest:
    identical_means_within_one = not isinstance(assignor, RangeAssignor)
    sticky = isinstance(assignor, StickyOptimalAssignor | CooperativeStickyOptimalAssignor)
    cooperative = isinstance(assignor, CooperativeStickyOptimalAssignor)

    @given(case=cases())
    def run(case: Case) -> None:
        note(repr(case))
        result = assignor.assign(case.partitions_per_topic, subscriptions(assignor, case))
        note(f"result: {flat(result)}")
        check_valid(case, result, claimed(case) if cooperative else set())
        if cooperative:
            check_cooperative_safe(case, result)
            return  # balance holds after the follow-up rebalance (convergence property)
        identical = len({frozenset(m.topics) for m in case.members}) == 1
        if identical and identical_means_within_one:
            check_within_one(result)
        if sticky:
            check_kafka_balanced(case, result)
        if isinstance(assignor, RangeAssignor):
            for t in case.partitions_per_topic:
                per = [len(a.partitions.get(t, ())) for mid, a in result.items() if t in case.subscribed(mid)]
                assert not per or max(per) - min(per) <= 1, f"range: topic {t} sizes {per}"

    return run


def minimal_moves_identical_property(assignor: Assignor, search_only: bool = False) -> PropertyTest:
    """Identical subscriptions: moves == the closed-form minimum (eager sticky)."""

    @settings(**_phases(search_only))
    @given(case=cases(identical=True, max_members=5, max_partitions=6))
    def run(case: Case) -> None:
        note(repr(case))
        result = flat(assignor.assign(case.partitions_per_topic, subscriptions(assignor, case)))
        known = {t: n for t, n in case.partitions_per_topic.items() if t in case.members[0].topics}
        previous: dict[str, dict[str, list[int]]] = {}
        for (t, p), owner in case.previous_owner.items():
            previous.setdefault(owner, {}).setdefault(t, []).append(p)
        prev: dict[str, TopicPartitions] = {
            o: {t: tuple(sorted(ps)) for t, ps in d.items()} for o, d in previous.items()
        }
        expected = minimum_moves_from(known, [m.member_id for m in case.members], prev)
        actual = moves(case.existing_previous(), result)
        note(f"result: {result}")
        assert actual == expected, f"{actual} moves, the minimum is {expected}"

    return run


def closed_form_matches_z3_property() -> PropertyTest:
    """The closed-form minimum equals z3's optimum for identical subscriptions."""

    @settings(deadline=None)  # z3 and repeated rounds take a while
    @given(case=cases(identical=True, max_members=4, max_partitions=4))
    def run(case: Case) -> None:
        note(repr(case))
        known = {t: n for t, n in case.partitions_per_topic.items() if t in case.members[0].topics}
        previous: dict[str, dict[str, list[int]]] = {}
        for (t, p), owner in case.previous_owner.items():
            previous.setdefault(owner, {}).setdefault(t, []).append(p)
        prev: dict[str, TopicPartitions] = {
            o: {t: tuple(sorted(ps)) for t, ps in d.items()} for o, d in previous.items()
        }
        closed = minimum_moves_from(known, [m.member_id for m in case.members], prev)
        best = _z3(case)
        assert closed == best.moves, f"closed form {closed}, z3 {best.moves}"

    return run


def optimal_general_property(assignor: Assignor, search_only: bool = False) -> PropertyTest:
    """Different subscriptions: as balanced as possible, then as few moves as possible."""

    @settings(deadline=None, **_phases(search_only))  # z3 takes a while
    @given(case=cases(identical=False, max_members=4, max_partitions=3))
    def run(case: Case) -> None:
        note(repr(case))
        result = assignor.assign(case.partitions_per_topic, subscriptions(assignor, case))
        got = flat(result)
        best = _z3(case)
        note(f"result: {got}; z3: {best}")
        squares = sum(v * v for v in sizes(result).values())
        assert squares == best.sum_of_squares, (
            f"sum of squared sizes {squares}, the most balanced is {best.sum_of_squares}"
        )
        actual = moves(case.existing_previous(), got)
        assert actual == best.moves, f"{actual} moves, the minimum when balanced is {best.moves}"

    return run


def _round(case: Case, owned: Mapping[str, set[TP]], generation: int) -> Case:
    members = []
    for m in case.members:
        mine: dict[str, list[int]] = {}
        for t, p in sorted(owned.get(m.member_id, set())):
            mine.setdefault(t, []).append(p)
        members.append(
            Member(m.member_id, m.group_instance_id, m.topics, {t: tuple(ps) for t, ps in mine.items()}, generation)
        )
    prev = {tp: mid for mid, tps in owned.items() for tp in tps}
    return Case(case.partitions_per_topic, tuple(members), prev)


def cooperative_converges_property(identical: bool | None = None) -> PropertyTest:
    """Rebalancing again and again with CooperativeSticky settles within three rounds on an
    assignment as balanced as eager Sticky's, with as many moves in total; no round
    revokes and reassigns a partition at once."""
    coop = CooperativeStickyOptimalAssignor()
    eager = StickyOptimalAssignor()

    @settings(deadline=None)  # z3 and repeated rounds take a while
    @given(case=cases(identical=identical, max_members=4, max_partitions=4))
    def run(case: Case) -> None:
        note(repr(case))
        target = eager.assign(case.partitions_per_topic, subscriptions(eager, case))
        current = case
        owned: dict[str, set[TP]] = {}
        for rnd in range(1, 4):
            result = coop.assign(current.partitions_per_topic, subscriptions(coop, current))
            note(f"round {rnd}: {flat(result)}")
            check_valid(current, result, claimed(current))
            check_cooperative_safe(current, result)
            owned = flat(result)
            before = {m.member_id: {(t, p) for t, ps in m.previous.items() for p in ps} for m in current.members}
            if rnd > 1 and owned == before:
                break
            current = _round(case, owned, rnd + 1)
        else:
            raise AssertionError("cooperative rebalances did not settle within three rounds")
        check_valid(case, {mid: Assignment(_parts(tps)) for mid, tps in owned.items()})
        got = sorted(len(v) for v in owned.values())
        want = sorted(sizes(target).values())
        assert got == want, f"settled sizes {got}, eager sticky sizes {want}"
        total = moves(case.existing_previous(), owned)
        eager_moves = moves(case.existing_previous(), flat(target))
        assert total == eager_moves, f"{total} moves over the rounds, eager sticky makes {eager_moves}"

    return run


def _parts(tps: set[TP]) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return {t: tuple(ps) for t, ps in out.items()}


# ------------------------------------------------------------------------------ peers


class _Cluster:
    def __init__(self, sizes: Mapping[str, int]) -> None:
        self._sizes = sizes

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self._sizes.get(topic)
        return None if n is None else set(range(n))


def kafka_python(name: str, case: Case) -> dict[str, set[TP]]:
    """kafka-python 3.0.12's assignor ``name`` on ``case``, as (topic, partition) sets."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kafka-python's schema loading
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    cls: Any = RangePartitionAssignor if name == "range" else RoundRobinPartitionAssignor
    # kafka-python groups static and dynamic members with itertools.groupby, which only
    # works when they come in two runs: hand it static members first (order is irrelevant
    # to Kafka's rule).
    ordered = sorted(case.members, key=lambda m: m.group_instance_id is None)
    members = [
        SimpleNamespace(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            metadata=SimpleNamespace(topics=list(m.topics)),
        )
        for m in ordered
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kafka-python's schema loading
        result = cls.assign(_Cluster(case.partitions_per_topic), members)
        return {
            mid: {(t, p) for t, ps in a.assigned_partitions for p in ps}
            for mid, a in result.items()
        }


def _simple_input(case: Case) -> list[tuple[str, str | None, Sequence[str]]]:
    return [(m.member_id, m.group_instance_id, m.topics) for m in case.members]


def range_matches_peers_property() -> PropertyTest:
    assignor = RangeAssignor()

    @given(case=cases(previous=False, max_members=5, max_partitions=7))
    def run(case: Case) -> None:
        note(repr(case))
        got = flat(assignor.assign(case.partitions_per_topic, subscriptions(assignor, case)))
        simple = simple_range(case.partitions_per_topic, _simple_input(case))
        assert got == simple, f"range {got} != simple {simple}"
        peer = kafka_python("range", case)
        peer = {mid: peer.get(mid, set()) for mid in got}
        assert got == peer, f"range {got} != kafka-python {peer}"

    return run


def roundrobin_matches_peers_property() -> PropertyTest:
    assignor = RoundRobinAssignor()

    @given(case=cases(previous=False, max_members=5, max_partitions=7))
    def run(case: Case) -> None:
        note(repr(case))
        got = flat(assignor.assign(case.partitions_per_topic, subscriptions(assignor, case)))
        simple = simple_roundrobin(case.partitions_per_topic, _simple_input(case))
        assert got == simple, f"roundrobin {got} != simple {simple}"
        if len({frozenset(m.topics) for m in case.members}) == 1:
            # kafka-python's RoundRobin crashes when it must skip a member (it rebinds
            # member_id to a tuple), so it is compared on identical subscriptions only.
            peer = kafka_python("roundrobin", case)
            peer = {mid: peer.get(mid, set()) for mid in got}
            assert got == peer, f"roundrobin {got} != kafka-python {peer}"

    return run


@st.composite
def claim_cases(draw: st.DrawFn) -> tuple[dict[str, int], list[tuple[str, int, list[TP]]]]:
    """Identical subscriptions with free-form claims: overlapping, any generation, on
    deleted topics and beyond a topic's partitions."""
    names = draw(st.lists(st.sampled_from(TOPICS[:4]), min_size=1, max_size=3, unique=True))
    sizes = {t: draw(st.integers(0, 6)) for t in names}
    ids = draw(st.lists(member_ids, min_size=1, max_size=6, unique=True))
    space = [(t, p) for t in [*names, DELETED] for p in range(sizes.get(t, 2) + 1)]
    members = [
        (
            mid,
            draw(st.sampled_from([-1, 1, 2, 3])),
            sorted(draw(st.sets(st.sampled_from(space), max_size=6))),
        )
        for mid in ids
    ]
    return sizes, members


def _claims_input(
    assignor: Assignor, sizes: dict[str, int], members: list[tuple[str, int, list[TP]]]
) -> list[MemberSubscription]:
    topics = tuple(sizes)
    out = []
    for mid, gen, claims in members:
        owned = _parts(set(claims))
        if isinstance(assignor, CooperativeStickyOptimalAssignor):
            sub = Subscription(topics, coop_user_data(gen), owned, gen)
        else:
            sub = Subscription(topics, sticky_user_data(owned, gen), {}, gen)
        out.append(MemberSubscription(mid, sub))
    return out


def constrained_matches_kafka_property(assignor: Assignor) -> PropertyTest:
    """Identical subscriptions: exactly the assignment of a partition-by-partition
    transliteration of Kafka's constrained builder (claim resolution, HashMap order,
    quotas, round-robin deal), minus the transferring partitions for CooperativeSticky."""
    cooperative = isinstance(assignor, CooperativeStickyOptimalAssignor)

    @given(data=claim_cases())
    def run(data: tuple[dict[str, int], list[tuple[str, int, list[TP]]]]) -> None:
        sizes, members = data
        note(f"sizes={sizes} members={members}")
        got = flat(assignor.assign(sizes, _claims_input(assignor, sizes, members)))
        want, transferring = simple_constrained_sticky(sizes, members)
        if cooperative:
            want = {m: tps - transferring for m, tps in want.items()}
        assert got == want, f"got {got}, Kafka's constrained builder gives {want}"

    return run

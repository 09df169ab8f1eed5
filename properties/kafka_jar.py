"""Random assignor inputs for the differential test against Kafka's own assignors (the
``KafkaAssignor`` tool of the JVM oracle), and the comparison itself.

The inputs cover what decides Kafka's answer: identical and different subscriptions,
previous ownership (disjoint, as a real group has it, or conflicting claims), generations,
static members, member ids whose Java ``String.hashCode`` collide (they share a HashMap
bucket, so their order comes from insertion), consumer racks and replica racks (all,
some or none matching, or none known), and for the sticky assignors the ways clients carry
their history (StickyAssignor user data, cooperative subscription fields or user data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from groupspec.assignors.base import Assignor, MemberSubscription, PartitionRacks
from groupspec.assignors.cooperative_sticky import encode_user_data as coop_user_data
from groupspec.assignors.sticky import encode_user_data as sticky_user_data
from groupspec.jvm import JvmOracle
from groupspec.jvm.assignor_request import kafka_assignment, kafka_assignor_request
from groupspec.protocol.consumer_protocol import Subscription

#: Member ids: plain ones, and groups with equal Java hash codes ("Aa" and "BB" hash alike,
#: so do all four-letter concatenations of them).
MEMBER_IDS = [
    "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11",
    "Aa", "BB", "AaAa", "AaBB", "BBAa", "BBBB", "consumer-1-x", "consumer-2-x",
]  # fmt: skip
TOPICS = ["t0", "t1", "t2", "t3", "T", "topic-b"]
RACKS = ["a", "b", "c"]


@dataclass(frozen=True)
class AssignorCase:
    partitions_per_topic: dict[str, int]
    members: list[MemberSubscription]
    partition_racks: dict[str, list[list[str | None]]] | None

    def describe(self) -> dict[str, Any]:
        return kafka_assignor_request("?", self.partitions_per_topic, self.members, self.partition_racks)


@st.composite
def assignor_cases(draw: st.DrawFn, assignor: str, *, racks: bool | None = None) -> AssignorCase:
    """One leader's input for ``assignor`` ("range", ..., "cooperative-sticky")."""
    names = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
    topics = {t: draw(st.integers(0, 7)) for t in names}
    ids = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=1, max_size=7, unique=True))
    identical = draw(st.booleans())
    common = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    with_racks = draw(st.booleans()) if racks is None else racks
    # Consumer racks: none, all, or some members.
    rack_mode = draw(st.sampled_from(["none", "all", "some"])) if with_racks else "none"
    # Ownership: a real previous assignment (disjoint) or free claims that may conflict.
    disjoint = draw(st.booleans())
    owner_of: dict[tuple[str, int], str] = {}
    if disjoint:
        for t, n in topics.items():
            for p in range(n + draw(st.integers(0, 1))):  # sometimes a partition since deleted
                who = draw(st.sampled_from([None, *ids]))
                if who is not None:
                    owner_of[(t, p)] = who
    generations = draw(st.sampled_from(["same", "mixed"]))
    members: list[MemberSubscription] = []
    for mid in ids:
        subs = common if identical else draw(
            st.lists(st.sampled_from(names), max_size=len(names), unique=True)
        )
        if disjoint:
            claims = [tp for tp, who in owner_of.items() if who == mid]
        else:
            claims = draw(
                st.lists(
                    st.tuples(st.sampled_from(names), st.integers(0, 7)), max_size=6, unique=True
                )
            )
        owned: dict[str, tuple[int, ...]] = {}
        for t, p in sorted(claims):
            owned[t] = (*owned.get(t, ()), p)
        gen = 3 if generations == "same" else draw(st.sampled_from([-1, 1, 2, 3]))
        if not owned and draw(st.booleans()):
            gen = -1  # a new member
        rack: str | None = None
        if rack_mode == "all" or (rack_mode == "some" and draw(st.booleans())):
            rack = draw(st.sampled_from(RACKS))
        static = draw(st.sampled_from([None, None, f"i-{mid}", f"z{len(members)}"]))
        members.append(
            MemberSubscription(mid, _subscription(draw, assignor, tuple(subs), owned, gen, rack), static)
        )
    partition_racks: dict[str, list[list[str | None]]] | None = None
    if with_racks and draw(st.booleans()):
        partition_racks = {}
        pool = draw(st.sampled_from([RACKS, ["a", "b"], ["x", "y"], ["a"]]))
        for t, n in topics.items():
            if draw(st.integers(0, 4)) == 0:
                continue  # this topic has no rack information
            partition_racks[t] = [
                draw(st.lists(st.sampled_from([*pool, None]), max_size=3, unique=True))
                for _ in range(n)
            ]
    return AssignorCase(topics, members, partition_racks)


def _subscription(
    draw: st.DrawFn,
    assignor: str,
    topics: tuple[str, ...],
    owned: dict[str, tuple[int, ...]],
    gen: int,
    rack: str | None,
) -> Subscription:
    """Where a client of ``assignor`` puts its history (ConsumerCoordinator.metadata)."""
    if assignor == "sticky":
        # Eager: ownedPartitions is empty on rejoin; the history is in the user data; the
        # subscription's generation field usually equals the user data's.
        data: bytes | None = sticky_user_data(
            owned, gen if gen >= 0 or draw(st.booleans()) else None
        )
        if not owned and gen < 0 and draw(st.booleans()):
            data = None  # never had an assignment
        field_gen = gen if draw(st.integers(0, 3)) else draw(st.sampled_from([-1, 1, 2, 3]))
        return Subscription(topics, data, {}, field_gen, rack)
    if assignor == "cooperative-sticky":
        # v2+ clients send the generation field; older ones only the user data.
        field = draw(st.integers(0, 3)) > 0
        return Subscription(topics, coop_user_data(gen), owned, gen if field else -1, rack)
    return Subscription(topics, None, owned, gen, rack)


def normalized(assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> dict[str, list[tuple[str, int]]]:
    """member -> sorted (topic, partition) pairs, members with nothing included."""
    return {m: sorted((t, p) for t, ps in parts.items() for p in ps) for m, parts in assignment.items()}


def ours(assignor: Assignor, case: AssignorCase) -> dict[str, list[tuple[str, int]]]:
    racks: PartitionRacks | None = case.partition_racks
    result = assignor.assign(case.partitions_per_topic, case.members, racks)
    return normalized({m: a.partitions for m, a in result.items()})


def kafkas(jvm: JvmOracle, name: str, case: AssignorCase) -> dict[str, list[tuple[str, int]]]:
    request = kafka_assignor_request(name, case.partitions_per_topic, case.members, case.partition_racks)
    answer = kafka_assignment(jvm.call("KafkaAssignor", request))
    return normalized(answer)

"""CooperativeStickyAssignor ("cooperative-sticky"): the sticky algorithm, incrementally.

Source: clients/.../consumer/CooperativeStickyAssignor.java. Cooperative members keep their
partitions while they rejoin and list them in the subscription's ``ownedPartitions`` field.
The generation comes from the subscription (v2+, ``generationId`` >= 0), else from the
assignor's user data (``COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0 = generation: INT32``;
user data too short to hold it counts as generation -1, absent user data as none).

After the sticky assignment (:mod:`groupspec.assignors.sticky_core`), a partition that goes
to a member which did not own it while another member still claims it is *transferring
ownership*: it is left out of this assignment, so the claimer revokes it, and it is handed
over in the follow-up rebalance (``adjustAssignment``). Kafka computes that set in two ways
(``partitionsTransferringOwnership`` on the constrained path, added-and-revoked on the
general one); both reduce to this rule for every input where claims are consistent, and on
inconsistent ones this rule never gives a partition to one member while another claims it.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import ClassVar

from groupspec.assignors.base import (
    Assignor,
    MemberSubscription,
    PartitionRacks,
    RebalanceProtocol,
)
from groupspec.assignors.inputs import check_input, check_racks, known_subscribed_topics
from groupspec.assignors.inputs import topic_set as _topic_set
from groupspec.assignors.kafka_fast import constrained_fast
from groupspec.assignors.kafka_sticky import (
    KafkaMember,
    cooperative_adjust,
    kafka_sticky_assign,
    resolve_claims,
)
from groupspec.assignors.ordering import hashmap_order
from groupspec.assignors.sticky_core import StickyMember, sticky_assign
from groupspec.gc_pause import paused_gc
from groupspec.protocol.consumer_protocol import (
    DEFAULT_GENERATION,
    Assignment,
    Subscription,
    TopicPartitions,
)


def encode_user_data(generation: int) -> bytes:
    return struct.pack(">i", generation)


def member_generation(subscription: Subscription) -> int:
    """The generation ``CooperativeStickyAssignor.memberData`` reads (-1 when none)."""
    if subscription.generation_id >= 0:
        return subscription.generation_id
    data = subscription.user_data
    if data is None:
        return DEFAULT_GENERATION
    if len(data) < 4:
        return DEFAULT_GENERATION  # unparsable user data
    value: int = struct.unpack(">i", data[:4])[0]
    return value


class CooperativeStickyOptimalAssignor(Assignor):
    """groupspec's own variant ("cooperative-sticky-optimal"): the optimum of
    :mod:`groupspec.assignors.sticky_core` with the hold-back rule of this module's
    docstring. Not rack-aware."""

    name: ClassVar[str] = "cooperative-sticky-optimal"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (
        RebalanceProtocol.COOPERATIVE,
        RebalanceProtocol.EAGER,
    )

    @paused_gc()
    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSubscription],
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        check_input(partitions_per_topic, members)
        check_racks(partitions_per_topic, partition_racks)
        topics = known_subscribed_topics(partitions_per_topic, members)
        sets: dict[tuple[str, ...], frozenset[str]] = {}
        sticky = [
            StickyMember(
                m.member_id,
                _topic_set(sets, m.subscription.topics),
                m.subscription.owned_partitions,
                member_generation(m.subscription),
            )
            for m in members
        ]
        result = sticky_assign(topics, sticky)
        claimed_topics = {t for t, claims in result.claims.items() if claims}
        claimed = result.claimed  # topic -> partitions anyone claims, completed lazily
        out: dict[str, Assignment] = {}
        for m in members:
            parts = result.assignment[m.member_id]
            added = result.added[m.member_id]
            strip: dict[str, set[int]] = {}
            for t in claimed_topics.intersection(added) if claimed_topics else ():
                if t not in claimed:
                    claimed[t] = set().union(*result.claims[t])
                gone = claimed[t].intersection(added[t])
                if gone:
                    strip[t] = gone
            if strip:
                parts = dict(parts)
                for t, gone in strip.items():
                    left = tuple(p for p in parts[t] if p not in gone)
                    if left:
                        parts[t] = left
                    else:
                        del parts[t]
            out[m.member_id] = Assignment(parts)
        return out

    def subscription_user_data(
        self, topics: tuple[str, ...], owned: TopicPartitions, generation_id: int
    ) -> bytes | None:
        return encode_user_data(generation_id)


def _kafka_generation(subscription: Subscription) -> int | None:
    """The generation ``CooperativeStickyAssignor.memberData`` reads: the subscription field
    (v2+), else the user data's (None when there is none, -1 when it does not parse)."""
    if subscription.generation_id >= 0:
        return subscription.generation_id
    data = subscription.user_data
    if data is None:
        return None
    if len(data) < 4:
        return DEFAULT_GENERATION
    value: int = struct.unpack(">i", data[:4])[0]
    return value


def kafka_member_data(subscription: Subscription) -> tuple[tuple[tuple[str, int], ...], int | None]:
    """``CooperativeStickyAssignor.memberData``: the owned partitions and the generation."""
    owned = tuple((t, p) for t, ps in subscription.owned_partitions.items() for p in ps)
    return owned, _kafka_generation(subscription)


def premature_handovers(
    subscriptions: Mapping[str, Subscription], given: Mapping[str, set[tuple[str, int]]]
) -> list[tuple[tuple[str, int], str, str | None]]:
    """The hand-overs in ``given`` (member -> partitions a leader assigned) that Kafka 4.1's
    CooperativeStickyAssignor never makes in one rebalance, as (partition, member given it,
    the member that must revoke it first or None for a partition claimed twice in one
    generation), in partition order. Subscriptions are in JoinGroup order.

    - All subscriptions equal (``AbstractStickyAssignor.allSubscriptionsEqual``, the
      constrained path): claims are validated by generation in Java HashMap order of the
      member ids (:func:`~groupspec.assignors.kafka_sticky.resolve_claims`: the higher
      generation keeps a partition claimed twice, a lone claim of an older generation
      stands, two claims in one generation invalidate it for both). A partition validly
      owned by one member goes to another only after a revocation, and a partition claimed
      twice in one generation goes to nobody (``assignNewPartition`` puts both in
      ``partitionsTransferringOwnership``, which ``adjustAssignment`` removes).
    - Otherwise (the general path, ``partitionsTransferringOwnership`` null):
      ``computePartitionsTransferringOwnership`` on the raw ``ownedPartitions``: a partition
      a member did not claim that another member claimed (any generation) is withheld.
    """
    ids = list(subscriptions)
    members: list[KafkaMember] = []
    for mid in ids:
        sub = subscriptions[mid]
        owned, generation = kafka_member_data(sub)
        members.append(
            KafkaMember(mid, sub.topics, owned, generation,
                        sub.generation_id if sub.generation_id >= 0 else None, sub.rack_id, owned)
        )  # fmt: skip
    topics = dict.fromkeys((t for m in members for t in m.topics), 0)
    equal, valid, multi, _ = resolve_claims(topics, members, hashmap_order(ids))
    owner: dict[tuple[str, int], str] = {}
    if equal:
        for mid, tps in valid.items():
            for tp in tps:
                owner[tp] = mid
    else:
        for m in members:
            for tp in m.owned:
                owner.setdefault(tp, m.member_id)
    raw = {m.member_id: set(m.owned) for m in members}
    out: list[tuple[tuple[str, int], str, str | None]] = []
    for mid, parts in given.items():
        for tp in parts:
            if equal and tp in multi:
                out.append((tp, mid, None))
            elif equal:
                holder = owner.get(tp)
                if holder is not None and holder != mid:
                    out.append((tp, mid, holder))
            elif tp not in raw.get(mid, ()):
                claimant = next((c for c in ids if c != mid and tp in raw[c]), None)
                if claimant is not None:
                    out.append((tp, mid, claimant))
    return sorted(out, key=lambda x: (x[0], x[1]))


class CooperativeStickyAssignor(CooperativeStickyOptimalAssignor):
    """Kafka's CooperativeStickyAssignor, exactly (:mod:`groupspec.assignors.kafka_sticky`),
    rack-aware."""

    name: ClassVar[str] = "cooperative-sticky"

    @paused_gc()
    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSubscription],
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        check_input(partitions_per_topic, members)
        check_racks(partitions_per_topic, partition_racks)
        topics = known_subscribed_topics(partitions_per_topic, members)
        fast = constrained_fast(
            topics,
            [m.member_id for m in members],
            [m.subscription.topics for m in members],
            [m.subscription.owned_partitions for m in members],
            [_kafka_generation(m.subscription) for m in members],
            [m.subscription.generation_id if m.subscription.generation_id >= 0 else None
             for m in members],
            [m.subscription.rack_id for m in members],
            partition_racks,
            cooperative=True,
        )
        if fast is not None:
            return {m.member_id: Assignment(fast[m.member_id]) for m in members}
        kafka: list[KafkaMember] = []
        for m in members:
            owned, generation = kafka_member_data(m.subscription)
            kafka.append(
                KafkaMember(
                    m.member_id,
                    m.subscription.topics,
                    owned,
                    generation,
                    m.subscription.generation_id if m.subscription.generation_id >= 0 else None,
                    m.subscription.rack_id,
                    owned,
                )
            )
        result = kafka_sticky_assign(
            topics, kafka, partition_racks, self.prefer_rack_aware_logic
        )
        adjusted = cooperative_adjust(result, kafka)
        out: dict[str, Assignment] = {}
        for m in members:
            by_topic: dict[str, list[int]] = {}
            for t, p in adjusted.get(m.member_id, ()):
                by_topic.setdefault(t, []).append(p)
            out[m.member_id] = Assignment(
                {t: tuple(sorted(ps)) for t, ps in sorted(by_topic.items())}
            )
        return out

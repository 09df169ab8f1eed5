"""docs/findings-ownership.md, checked against the reference assignor: at the step where
the static zombie and the current member both join generation 3 claiming partition 0, the
claim validation of Kafka's AbstractStickyAssignor (KIP-792: the generation each member
reports with its owned partitions) decides who keeps it afterwards; it cannot undo that
both hold it until the zombie's SyncGroup answer arrives. Pure Python, no Java."""

from __future__ import annotations

import pytest

from groupspec.assignors.base import MemberSubscription
from groupspec.assignors.cooperative_sticky import CooperativeStickyAssignor, encode_user_data
from groupspec.protocol.consumer_protocol import Subscription


def _member(member_id: str, owned: tuple[int, ...], generation: int) -> MemberSubscription:
    return MemberSubscription(
        member_id,
        Subscription(
            topics=("t",),
            user_data=encode_user_data(generation),
            owned_partitions={"t": owned} if owned else {},
            generation_id=generation,
        ),
    )


def _assign(c1_generation: int, s1_generation: int) -> dict[str, tuple[int, ...]]:
    # the finding's step 26: c1 (m1) reports owning p1 (t-0), s1 (m2) p1 and p2 (t-0, t-1)
    out = CooperativeStickyAssignor().assign(
        {"t": 2}, [_member("m1", (0,), c1_generation), _member("m2", (0, 1), s1_generation)]
    )
    return {m: a.partitions.get("t", ()) for m, a in out.items()}


def test_older_generation_claim_loses_and_the_zombie_must_revoke() -> None:
    # As in the trace: c1 got t-0 in generation 2, the zombie s1 still reports generation 1.
    # The newer claim wins; s1 is given t-1 only and revokes t-0 when its SyncGroup answer
    # arrives: until then both members of generation 3 hold t-0.
    assert _assign(2, 1) == {"m1": (0,), "m2": (1,)}


@pytest.mark.parametrize("generation", [2, -1])
def test_same_generation_double_claim_is_invalidated(generation: int) -> None:
    # Same generation (or none reported: a pre-KIP-792 subscription): neither keeps t-0;
    # it is withheld this round, so both revoke it.
    assert _assign(generation, generation) == {"m1": (), "m2": (1,)}

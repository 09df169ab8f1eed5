"""The minimal-moves properties can fail: a sticky assignor that makes one needless move
is caught by both (closed form and z3), while the real one passes them (see
test_assignors_properties.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from groupspec.assignors.base import MemberSubscription, PartitionRacks
from groupspec.assignors.sticky import StickyOptimalAssignor, decode_user_data
from groupspec.protocol.consumer_protocol import Assignment
from properties import assignors as props


class OneExtraMoveSticky(StickyOptimalAssignor):
    """The optimal sticky variant (the one the properties hold for), then swaps a partition its owner kept with one of another member of
    the same subscription: balance is unchanged, but at least one more partition moves."""

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSubscription],
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        out = super().assign(partitions_per_topic, members, partition_racks)
        for a in members:
            before, _ = decode_user_data(a.subscription.user_data)
            kept = [
                (t, p) for t, ps in out[a.member_id].partitions.items() for p in ps
                if p in before.get(t, ())
            ]
            if not kept:
                continue
            for b in members:
                theirs = [(t, p) for t, ps in out[b.member_id].partitions.items() for p in ps]
                if b is a or set(b.subscription.topics) != set(a.subscription.topics) or not theirs:
                    continue
                pa, pb = kept[0], theirs[0]
                out[a.member_id] = Assignment(_swap(out[a.member_id].partitions, pa, pb))
                out[b.member_id] = Assignment(_swap(out[b.member_id].partitions, pb, pa))
                return out
        return out


def _swap(
    parts: Mapping[str, tuple[int, ...]], gone: tuple[str, int], new: tuple[str, int]
) -> dict[str, tuple[int, ...]]:
    pairs = {(t, p) for t, ps in parts.items() for p in ps} - {gone} | {new}
    out: dict[str, list[int]] = {}
    for t, p in sorted(pairs):
        out.setdefault(t, []).append(p)
    return {t: tuple(ps) for t, ps in out.items()}


def test_closed_form_property_catches_one_extra_move() -> None:
    with pytest.raises(AssertionError, match="moves, the minimum is"):
        props.minimal_moves_identical_property(OneExtraMoveSticky(), search_only=True)()


def test_z3_property_catches_one_extra_move() -> None:
    with pytest.raises(AssertionError, match="moves, the minimum when balanced is"):
        props.optimal_general_property(OneExtraMoveSticky(), search_only=True)()

"""A fast route to Kafka's answer for the common case of identical subscriptions.

:mod:`groupspec.assignors.kafka_sticky` follows Kafka partition by partition, which is slow
at a million partitions. When all subscriptions are equal, the constrained builder of
:mod:`groupspec.assignors.sticky_core` computes the same assignment in closed form,
provided the input stays inside what both read the same way:

- every member lists the same topics, none twice (Kafka's equality test is by list size
  and containment, sticky_core's by set);
- every claim on a known topic names an existing partition (Kafka keeps the others);
- each member's member-data generation equals its subscription's generation field (Kafka
  resolves a conflicting claim against the other claimer's field, sticky_core against its
  member data);
- no rack-aware pass can apply (no member has a rack, or no replica racks are known);
- for the cooperative hold-back, no partition is claimed twice.

Otherwise :func:`constrained_fast` returns None and the step-by-step port runs. The
differential test against the jar (tests/test_assignors_kafka_jar.py) exercises both routes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groupspec.assignors.base import PartitionRacks
from groupspec.assignors.sticky_core import StickyMember, sticky_assign

Parts = Mapping[str, tuple[int, ...]]


def constrained_fast(
    topics: Mapping[str, int],
    member_ids: Sequence[str],
    subscribed: Sequence[tuple[str, ...]],
    claims: Sequence[Parts],
    generations: Sequence[int | None],
    field_generations: Sequence[int | None],
    racks: Sequence[str | None],
    partition_racks: PartitionRacks | None,
    *,
    cooperative: bool,
) -> dict[str, dict[str, tuple[int, ...]]] | None:
    """Kafka's assignment (after the cooperative hold-back when ``cooperative``), or None
    when this input needs the step-by-step port."""
    if not member_ids:
        return None
    first = subscribed[0]
    first_set = frozenset(first)
    if len(first_set) != len(first):
        return None
    sets: dict[tuple[str, ...], bool] = {}
    for ts in subscribed:
        ok = sets.get(ts)
        if ok is None:
            ok = sets[ts] = len(ts) == len(first) and frozenset(ts) == first_set
        if not ok:
            return None
    if any(r for r in racks) and partition_racks and any(t in topics for t in partition_racks):
        return None
    for gen, field in zip(generations, field_generations, strict=True):
        if (-1 if gen is None else gen) != (-1 if field is None else field):
            return None
    total_claims = 0
    for own in claims:
        for t, ps in own.items():
            n = topics.get(t)
            if n is None or not ps:
                continue
            if ps[0] < 0 or ps[-1] >= n:
                return None
            total_claims += len(ps)
    members = [
        StickyMember(mid, first_set, own, -1 if gen is None else gen)
        for mid, own, gen in zip(member_ids, claims, generations, strict=True)
    ]
    result = sticky_assign(topics, members)
    if not result.constrained:
        return None
    if not cooperative:
        return result.assignment
    # Kafka's partitionsTransferringOwnership on the constrained path: a partition dealt to
    # a member that another member owned (kept after claim resolution) is withheld.
    claimed = sum(len(ps) for t, lst in result.claims.items() for ps in lst)
    if claimed != total_claims:
        return None  # claims dropped on the way: leave it to the port
    unions = {t: set().union(*lst) for t, lst in result.claims.items() if lst}
    if sum(map(len, unions.values())) != claimed:
        return None  # a partition claimed twice
    owner: dict[tuple[str, int], str] = {}
    needed = {t for parts in result.added.values() for t in parts if t in unions}
    if needed:
        for mid, own in zip(member_ids, claims, strict=True):
            for t in needed.intersection(own):
                for p in own[t]:
                    owner[(t, p)] = mid
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for mid in member_ids:
        parts = result.assignment[mid]
        added = result.added.get(mid, {})
        gone = {
            (t, p)
            for t, ps in added.items()
            if t in unions
            for p in ps
            if owner.get((t, p), mid) != mid
        }
        if gone:
            kept: dict[str, tuple[int, ...]] = {}
            for t, ps in parts.items():
                left = tuple(p for p in ps if (t, p) not in gone)
                if left:
                    kept[t] = left
            parts = kept
        out[mid] = dict(parts)
    return out

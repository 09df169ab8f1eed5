"""The orders Kafka's assignors iterate in, reproduced so that outputs match Kafka exactly.

Three orders matter:

- Java string order. ``String.compareTo`` compares UTF-16 code units, which differs from
  Python's code-point order for characters outside the BMP. Comparing the UTF-16-BE
  encodings byte by byte gives Java's order.
- Member order of Range and RoundRobin: ``AbstractPartitionAssignor.MemberInfo.compareTo``
  puts members with a group.instance.id first, ordered by instance id, then the dynamic
  members ordered by member id.
- ``java.util.HashMap`` iteration order. The sticky assignors walk the members in the order
  of the HashMap the leader built from the JoinGroup response
  (``AbstractStickyAssignor.allSubscriptionsEqual`` fills ``consumerToOwnedPartitions`` while
  iterating ``subscriptions``; ``ConstrainedAssignmentBuilder.assignOwnedPartitions`` then
  iterates it). Which over-quota members keep ``maxQuota`` partitions depends on that order,
  so we reproduce it: buckets in index order (hash spread as ``HashMap.hash`` does, table
  grown from 16 with load factor 0.75), insertion order within a bucket. Not reproduced:
  the order inside a bucket of eight or more colliding keys (Java turns it into a tree).
"""

from __future__ import annotations

from collections.abc import Sequence

from groupspec.assignors.base import MemberSubscription
from groupspec.coordinator.find_coordinator import java_string_hash


def java_key(s: str) -> bytes:
    """A sort key giving Java's ``String.compareTo`` order."""
    return s.encode("utf-16-be", "surrogatepass")


def member_info_order(members: Sequence[MemberSubscription]) -> list[MemberSubscription]:
    """Members sorted as ``MemberInfo.compareTo``: static members by instance id, then dynamic
    members by member id."""
    static = [m for m in members if m.group_instance_id is not None]
    dynamic = [m for m in members if m.group_instance_id is None]
    static.sort(key=lambda m: java_key(m.group_instance_id or ""))
    dynamic.sort(key=lambda m: java_key(m.member_id))
    return static + dynamic


def hashmap_capacity(size: int) -> int:
    """The table size of a ``new HashMap<>()`` after ``size`` puts (resize when size > 0.75 n)."""
    cap = 16
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def hashmap_order(keys: Sequence[str]) -> list[int]:
    """Indexes of ``keys`` (distinct, in insertion order) in ``HashMap`` iteration order."""
    mask = hashmap_capacity(len(keys)) - 1

    def bucket(i: int) -> int:
        h = java_string_hash(keys[i]) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask

    return sorted(range(len(keys)), key=lambda i: (bucket(i), i))

"""The few Java collection behaviours Kafka's sticky assignor lets leak into its output.

- ``TopicPartition.hashCode`` (clients/.../common/TopicPartition.java) and the bucket a
  ``java.util.HashMap``/``HashSet`` puts a hash in (``HashMap.hash`` spreads the high half
  into the low one, the table is a power of two).
- :class:`JavaHashSet`: the iteration order of a ``HashSet`` after a sequence of adds and
  removes. Java keeps each bucket as a list in insertion order and keeps that
  relative order when the table doubles (at more than 0.75 entries per slot), so the order
  is (bucket, time of insertion). A bucket reaching nine entries in a table smaller than 64
  also doubles the table (``treeifyBin``); the tree bins of larger tables are not modelled.
- :class:`SortedMembers`: a ``TreeSet`` of member ids ordered by how many partitions each
  holds, then by Java string order, whose sizes change only while a member is out of it
  (as ``AbstractStickyAssignor`` uses its ``sortedCurrentSubscriptions``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from groupspec.assignors.ordering import java_key
from groupspec.coordinator.find_coordinator import java_string_hash

TP = tuple[str, int]
K = TypeVar("K")


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def topic_partition_hash(tp: TP) -> int:
    """``TopicPartition.hashCode``: 31 * (31 + partition) + topic.hashCode(), in int32."""
    return _int32(31 * (31 + tp[1]) + java_string_hash(tp[0]))


def bucket(h: int, capacity: int) -> int:
    u = h & 0xFFFFFFFF
    return (u ^ (u >> 16)) & (capacity - 1)


class JavaHashSet(Generic[K]):
    """A ``HashSet`` of keys whose Java ``hashCode`` is ``hash_of`` (``TopicPartition``'s for
    the sticky assignor, ``String``'s for group ids) that knows its iteration order. A
    ``new HashSet<>()`` starts at 16 slots; ``new HashSet<>(collection)`` at
    :func:`collection_capacity`."""

    __slots__ = ("_capacity", "_hash", "_items", "_seq")

    def __init__(self, hash_of: Callable[[K], int], capacity: int = 16) -> None:
        self._hash = hash_of
        self._capacity = capacity
        self._seq = 0
        self._items: dict[K, tuple[int, int]] = {}  # element -> (hash, insertion number)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def add(self, key: K) -> None:
        if key in self._items:
            return
        h = self._hash(key)
        self._seq += 1
        b = bucket(h, self._capacity)
        in_bucket = sum(1 for hh, _ in self._items.values() if bucket(hh, self._capacity) == b)
        self._items[key] = (h, self._seq)
        if in_bucket >= 8 and self._capacity < 64:
            self._capacity *= 2  # HashMap.treeifyBin resizes small tables instead
        if len(self._items) > self._capacity * 3 // 4:
            self._capacity *= 2

    def remove(self, key: K) -> None:
        self._items.pop(key, None)

    def _place(self, key: K) -> tuple[int, int]:
        h, seq = self._items[key]
        return bucket(h, self._capacity), seq

    def first(self) -> K:
        """What ``iterator().next()`` returns."""
        return min(self._items, key=self._place)

    def order(self) -> list[K]:
        """The elements as the iterator returns them."""
        return sorted(self._items, key=self._place)


def collection_capacity(size: int) -> int:
    """The table length of ``new HashSet<>(c)`` for a collection of ``size`` elements
    (repeats counted): ``tableSizeFor(max((int) (size / .75f) + 1, 16))``."""
    n = max(int(size / 0.75) + 1, 16)
    return 1 << (n - 1).bit_length()


class SortedMembers:
    """``TreeSet<String>`` ordered by (size(member), member id in Java order)."""

    __slots__ = ("_at", "_entries", "_size")

    def __init__(self, size: Callable[[str], int]) -> None:
        self._size = size
        self._entries: list[tuple[int, bytes, str]] = []
        self._at: dict[str, tuple[int, bytes, str]] = {}

    def add(self, member: str) -> None:
        if member in self._at:
            return
        entry = (self._size(member), java_key(member), member)
        self._at[member] = entry
        insort(self._entries, entry)

    def remove(self, member: str) -> None:
        entry = self._at.pop(member, None)
        if entry is not None:
            i = bisect_left(self._entries, entry)
            del self._entries[i]

    def __contains__(self, member: object) -> bool:
        return member in self._at

    def entries(self) -> dict[str, tuple[int, bytes, str]]:
        """Each member's current key (size, Java order, id): the live view, not a copy; a
        member's key is a new tuple each time it is re-added."""
        return self._at

    def __iter__(self) -> Iterator[str]:
        return iter([e[2] for e in self._entries])

    def __len__(self) -> int:
        return len(self._entries)

    def first(self) -> str:
        return self._entries[0][2]

    def last(self) -> str:
        return self._entries[-1][2]

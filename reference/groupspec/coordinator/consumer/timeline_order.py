"""The iteration order of Kafka's ``TimelineHashMap``, the map a consumer group keeps its
members in (ModernGroup.members, created with expected size 0).

Kafka's server-common ``timeline/BaseHashTable.java`` is an array of slots, each holding
one element or an array of colliding ones. The slot of a key is a Fibonacci hash of its
``hashCode`` (the int, sign-extended, times a 64-bit constant, the top bits kept), so with a
table of ``n`` slots the order is by slot and, inside a slot, by the element's place in the
slot's array. The table starts at 2 slots and doubles when a put (even one that replaces a
key) would fill it past three quarters, counting one more key; it never shrinks. A new key is appended to its slot's array, a replaced
one keeps its place, a removed one closes the gap, and a rehash keeps each slot's order
(a new slot gathers the elements of one old slot, in their order). The current-epoch
iterator (SnapshottableHashTable.CurrentIterator) walks the slots upwards and takes each
slot's elements from the last to the first.

So the order depends on history: which keys are present, the largest size the map ever had
(the table length) and the order keys were last inserted. Where Kafka iterates members into
a ``HashMap`` (TargetAssignmentBuilder.build), two members in one bucket of that map keep
this order, and the uniform assignor breaks ties by it.

The same map type holds a shard's groups (GroupMetadataManager.groups, keyed by group id)
and its committed offsets (OffsetMetadataManager.Offsets: group id -> topic -> partition,
every level created with expected size 0), so the keys may be strings (``String.hashCode``)
or partition numbers (``Integer.hashCode`` is the value itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from groupspec.coordinator.find_coordinator import java_string_hash

#: BaseHashTable.findSlot's multiplier (Knuth's multiplicative hashing), as a signed long
_FIBONACCI = -7046029254386353131
_MASK64 = (1 << 64) - 1


K = TypeVar("K", str, int)


def timeline_slot(key: str | int, slots: int) -> int:
    """BaseHashTable.findSlot for a string or int key in a table of ``slots`` (a power of
    two)."""
    h = java_string_hash(key) if isinstance(key, str) else key
    shift = 65 - slots.bit_length()
    return ((h * _FIBONACCI) & _MASK64) >> shift


@dataclass
class TimelineOrder(Generic[K]):
    """The keys of a TimelineHashMap created with expected size 0, with what their order
    depends on: the table length and each key's last insertion."""

    slots: int = 2
    _next: int = 0
    _inserted: dict[K, int] = field(default_factory=dict)

    def put(self, key: K) -> None:
        """``map.put``: a new key is appended to its slot; an existing one stays. The table
        grows before the key is looked up (BaseHashTable.baseAddOrReplace), so replacing a
        key of a map at its load limit doubles the table too."""
        if (len(self._inserted) + 1) * 0.75 > self.slots:
            self.slots *= 2
        if key in self._inserted:
            return
        self._inserted[key] = self._next
        self._next += 1

    def remove(self, key: K) -> None:
        self._inserted.pop(key, None)

    def inserted(self) -> list[K]:
        """The keys in the order they were last inserted."""
        return list(self._inserted)

    def order(self) -> list[K]:
        """The keys as the map iterates them now."""
        return sorted(self._inserted, key=lambda k: (timeline_slot(k, self.slots), -self._inserted[k]))

    def __contains__(self, key: object) -> bool:
        return key in self._inserted

    def __len__(self) -> int:
        return len(self._inserted)

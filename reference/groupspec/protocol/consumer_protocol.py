"""The consumer protocol's embedded payloads: the subscription a member sends in JoinGroup
metadata and the assignment the leader sends in SyncGroup.

Source: clients/src/main/resources/common/message/ConsumerProtocolSubscription.json and
ConsumerProtocolAssignment.json (versions 0-3, not flexible), and
clients/.../consumer/internals/ConsumerProtocol.java for the version header.

Partitions are kept compactly as ``topic -> sorted tuple of partition numbers`` rather than
one object per partition: the assignors work at a million partitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from groupspec.protocol.wire import DecodeError, Reader, Writer

#: topic name -> sorted partition numbers.
TopicPartitions = Mapping[str, tuple[int, ...]]

#: The generation a client reports when it has none (ConsumerProtocolSubscription default).
DEFAULT_GENERATION = -1

SUBSCRIPTION_VERSION = 3
ASSIGNMENT_VERSION = 3


def normalize(parts: Mapping[str, Iterable[int]]) -> dict[str, tuple[int, ...]]:
    """Sort topics and partitions and drop empty topics, so equal sets compare equal."""
    out: dict[str, tuple[int, ...]] = {}
    for topic in sorted(parts):
        ps = tuple(sorted(set(parts[topic])))
        if ps:
            out[topic] = ps
    return out


def count(parts: TopicPartitions) -> int:
    return sum(len(ps) for ps in parts.values())


def pairs(parts: TopicPartitions) -> set[tuple[str, int]]:
    return {(t, p) for t, ps in parts.items() for p in ps}


def from_pairs(items: Iterable[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    acc: dict[str, list[int]] = {}
    for t, p in items:
        acc.setdefault(t, []).append(p)
    return normalize(acc)


def _java_order(s: str) -> bytes:
    """``String.compareTo``'s order (UTF-16 code units), which the Java client sorts by."""
    return s.encode("utf-16-be", "surrogatepass")


def _write_partitions(w: Writer, parts: TopicPartitions) -> None:
    w.int32(len(parts))
    for topic in sorted(parts, key=_java_order):
        w.string(topic)
        ps = parts[topic]
        w.int32(len(ps))
        for p in ps:
            w.int32(p)


def _read_partitions(r: Reader, what: str) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for _ in range(r.array_length(what)):
        topic = r.string(what + " topic")
        n = r.array_length(what + " partitions")
        out.setdefault(topic, []).extend(r.int32("partition") for _ in range(n))
    return normalize(out)


@dataclass(frozen=True)
class Subscription:
    """ConsumerProtocolSubscription: what a member tells the leader in JoinGroup metadata."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = field(default_factory=dict)
    generation_id: int = DEFAULT_GENERATION
    rack_id: str | None = None

    def encode(self, version: int = SUBSCRIPTION_VERSION) -> bytes:
        if not 0 <= version <= SUBSCRIPTION_VERSION:
            raise ValueError(f"subscription version {version} is not in 0..{SUBSCRIPTION_VERSION}")
        w = Writer()
        w.int16(version)
        # ConsumerProtocol.serializeSubscription sorts a copy of the topic list before writing
        # it (ConsumerProtocolTest.serializeSubscriptionShouldOrderTopics); so do we.
        w.int32(len(self.topics))
        for t in sorted(self.topics, key=_java_order):
            w.string(t)
        w.nullable_bytes(self.user_data)
        if version >= 1:
            _write_partitions(w, self.owned_partitions)
        if version >= 2:
            w.int32(self.generation_id)
        if version >= 3:
            w.nullable_string(self.rack_id)
        return w.getvalue()

    @classmethod
    def decode(cls, data: bytes) -> Subscription:
        """Decode as ConsumerProtocol does: a newer version's extra fields are ignored."""
        r = Reader(data)
        version = r.int16("subscription version")
        if version < 0:
            raise DecodeError(f"negative subscription version {version}")
        topics = tuple(r.string("topic") for _ in range(r.array_length("topics")))
        user_data = r.nullable_bytes("user data")
        owned: dict[str, tuple[int, ...]] = {}
        generation = DEFAULT_GENERATION
        rack: str | None = None
        if version >= 1:
            owned = _read_partitions(r, "owned partitions")
        if version >= 2:
            generation = r.int32("generation id")
        if version >= 3:
            # ConsumerProtocol.deserializeSubscription: a null or empty rack id is no rack.
            rack = r.nullable_string("rack id") or None
        return cls(topics, user_data, owned, generation, rack)


@dataclass(frozen=True)
class Assignment:
    """ConsumerProtocolAssignment: what the leader hands each member in SyncGroup."""

    partitions: TopicPartitions = field(default_factory=dict)
    user_data: bytes | None = None

    def encode(self, version: int = ASSIGNMENT_VERSION) -> bytes:
        if not 0 <= version <= ASSIGNMENT_VERSION:
            raise ValueError(f"assignment version {version} is not in 0..{ASSIGNMENT_VERSION}")
        w = Writer()
        w.int16(version)
        _write_partitions(w, self.partitions)
        w.nullable_bytes(self.user_data)
        return w.getvalue()

    @classmethod
    def decode(cls, data: bytes) -> Assignment:
        if not data:
            # An empty assignment (the coordinator's default for a member the leader omitted).
            return cls()
        r = Reader(data)
        version = r.int16("assignment version")
        if version < 0:
            raise DecodeError(f"negative assignment version {version}")
        parts = _read_partitions(r, "assigned partitions")
        user_data = r.nullable_bytes("user data")
        return cls(parts, user_data)


def assignment_as_given(parts: Mapping[str, Iterable[int]], version: int,
                        user_data: bytes | None = None) -> bytes:
    """A ConsumerProtocolAssignment serialized with its topics and partitions in the order
    given (ConsumerProtocol.serializeAssignment of a ConsumerProtocolAssignment, as Kafka's
    coordinator writes a classic member's assignment), unlike :meth:`Assignment.encode`,
    which sorts them as the Java client does."""
    w = Writer()
    w.int16(version)
    w.int32(len(parts))
    for name, ps in parts.items():
        listed = list(ps)
        w.string(name)
        w.int32(len(listed))
        for p in listed:
            w.int32(p)
    w.nullable_bytes(user_data)
    return w.getvalue()

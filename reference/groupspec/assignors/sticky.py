"""StickyAssignor ("sticky"): the eager sticky assignor.

Source: clients/.../consumer/StickyAssignor.java. Eager members revoke everything before
they join, so their ``ownedPartitions`` field is empty; the assignor carries the previous
assignment and generation in its own user data instead (``memberData``,
``serializeTopicPartitionAssignment``):

    STICKY_ASSIGNOR_USER_DATA_V1 = previous_assignment: [topic: STRING (int16 length + UTF-8),
                                                          partitions: [INT32]],
                                   generation: INT32
    STICKY_ASSIGNOR_USER_DATA_V0 = the same without the generation

Arrays are an int32 count then the elements. Topics appear in the iteration order of the
Java ``HashMap`` that ``CollectionUtils.groupPartitionsByTopic`` builds (we insert them in
sorted order). Decoding tries V1, then V0 (no generation); user data that parses as
neither means "no previous assignment, generation -1"; absent or empty user data means "no
previous assignment, no generation".
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
from groupspec.assignors.kafka_sticky import KafkaMember, kafka_sticky_assign
from groupspec.assignors.ordering import hashmap_order
from groupspec.assignors.sticky_core import StickyMember, sticky_assign
from groupspec.gc_pause import paused_gc
from groupspec.protocol.consumer_protocol import (
    DEFAULT_GENERATION,
    Assignment,
    TopicPartitions,
)
from groupspec.protocol.wire import DecodeError, Writer


def encode_user_data(owned: TopicPartitions, generation: int | None) -> bytes:
    """STICKY_ASSIGNOR_USER_DATA_V1 (or V0 when ``generation`` is None)."""
    w = Writer()
    topics = sorted(t for t, ps in owned.items() if ps)
    w.int32(len(topics))
    chunks = [w.getvalue()]
    for i in hashmap_order(topics):
        w = Writer()
        w.string(topics[i])
        ps = owned[topics[i]]
        w.int32(len(ps))
        chunks.append(w.getvalue())
        chunks.append(struct.pack(f">{len(ps)}i", *ps))
    if generation is not None:
        chunks.append(struct.pack(">i", generation))
    return b"".join(chunks)


_INT16 = struct.Struct(">h").unpack_from
_INT32 = struct.Struct(">i").unpack_from
_INT32_PAIR = struct.Struct(">ii").unpack_from


class _Singles(dict[int, tuple[int]]):
    """One shared ``(p,)`` per partition number. When every member holds one partition per
    topic, a million decoded entries then share a few thousand tuples instead of holding a
    million (56 bytes each)."""

    def __missing__(self, p: int) -> tuple[int]:
        one = self[p] = (p,)
        return one


def _read(
    data: bytes,
    with_generation: bool,
    names: dict[bytes, str],
    singles: _Singles | None = None,
) -> tuple[dict[str, tuple[int, ...]], int | None]:
    """Parse one schema version; DecodeError if the bytes do not hold it.

    Tight loop: a previous assignment of a million partitions is a million topic entries
    when every member holds one partition per topic, so the common entry (one partition)
    costs three C calls. ``names`` shares one str per topic name between members, which
    also makes every later lookup of it an identity check.
    """
    size = len(data)
    try:
        (count,) = _INT32(data, 0)
        if count < 0 or 4 + 6 * count > size:
            raise DecodeError(f"bad previous_assignment count {count}")
        pos = 4
        acc: dict[str, tuple[int, ...]] = {}
        irregular = False  # several partitions of a topic, empty or repeated topics
        for _ in range(count):
            (length,) = _INT16(data, pos)
            end = pos + 2 + length
            if length < 0 or end + 4 > size:
                raise DecodeError(f"bad topic at byte {pos}")
            raw = data[pos + 2 : end]
            topic = names.get(raw)
            if topic is None:
                topic = names[raw] = raw.decode("utf-8")
            if end + 8 <= size:
                n, first = _INT32_PAIR(data, end)
                if n == 1:
                    acc[topic] = (first,) if singles is None else singles[first]
                    pos = end + 8
                    continue
            else:
                (n,) = _INT32(data, end)
            pos = end + 4 + 4 * n
            if n < 0 or pos > size:
                raise DecodeError(f"bad partitions count {n} at byte {end}")
            irregular = True
            acc[topic] = acc.get(topic, ()) + struct.unpack_from(f">{n}i", data, end + 4)
        generation: int | None = None
        if with_generation:
            (generation,) = _INT32(data, pos)
    except (struct.error, UnicodeDecodeError) as e:
        raise DecodeError(f"sticky user data: {e}") from None
    if irregular or len(acc) != count:
        if len(acc) != count:
            return _read_merging(data, with_generation)
        acc = {t: tuple(sorted(set(ps))) for t, ps in acc.items() if ps}
    return acc, generation


def _read_merging(
    data: bytes, with_generation: bool
) -> tuple[dict[str, tuple[int, ...]], int | None]:
    """The slow path for user data naming a topic twice: merge its partition lists."""
    pos = 4
    acc: dict[str, list[int]] = {}
    (count,) = _INT32(data, 0)
    for _ in range(count):
        (length,) = _INT16(data, pos)
        end = pos + 2 + length
        topic = data[pos + 2 : end].decode("utf-8")
        (n,) = _INT32(data, end)
        acc.setdefault(topic, []).extend(struct.unpack_from(f">{n}i", data, end + 4))
        pos = end + 4 + 4 * n
    generation: int | None = None
    if with_generation:
        (generation,) = _INT32(data, pos)
    return {t: tuple(sorted(set(ps))) for t, ps in acc.items() if ps}, generation


class _Layout:
    """The byte layout of one member's V1 user data in which every topic holds one
    partition: the topics in their order, with only the partition numbers and the
    generation left open.

    In a group whose members subscribe alike, every member's previous assignment usually
    has the same layout (the same topics, in the same HashMap order, one partition each at
    Kafka's million-partition sizes), so the rest of the members decode with one
    ``struct`` call and a few tuple slices each instead of a loop over their topics.
    User data that does not match the layout byte for byte goes through ``_read``.
    """

    __slots__ = ("count", "lengths", "names", "ones", "struct", "topics")

    def __init__(self, topics: list[tuple[bytes, str]]) -> None:
        # unpacked: count, then (name length, name, 1, partition) per topic, then generation
        self.struct = struct.Struct(">i" + "".join(f"h{len(raw)}sii" for raw, _ in topics) + "i")
        self.count = len(topics)
        self.lengths = tuple(len(raw) for raw, _ in topics)
        self.names = tuple(raw for raw, _ in topics)
        self.ones = (1,) * len(topics)
        self.topics = tuple(t for _, t in topics)

    def read(self, data: bytes, singles: _Singles) -> tuple[dict[str, tuple[int, ...]], int] | None:
        """The decoded user data, or None when ``data`` does not have this layout."""
        if len(data) != self.struct.size:
            return None
        values = self.struct.unpack(data)
        if (
            values[0] != self.count
            or values[2:-1:4] != self.names
            or values[1:-1:4] != self.lengths
            or values[3:-1:4] != self.ones
        ):
            return None
        partitions = values[4:-1:4]
        return dict(zip(self.topics, map(singles.__getitem__, partitions), strict=True)), values[-1]


def _layout(
    data: bytes, acc: Mapping[str, tuple[int, ...]], names: dict[bytes, str]
) -> _Layout | None:
    """The layout ``data`` (just decoded by ``_read`` into ``acc``, with a generation) has,
    when it names a topic, every topic in it holds one partition and none is repeated."""
    if not acc or any(len(ps) != 1 for ps in acc.values()):
        return None
    pos = 4
    topics: list[tuple[bytes, str]] = []
    for _ in range(len(acc)):
        (length,) = _INT16(data, pos)
        raw = data[pos + 2 : pos + 2 + length]
        topic = names.get(raw) or raw.decode("utf-8")
        if acc.get(topic) is None or _INT32(data, pos + 2 + length)[0] != 1:
            return None
        topics.append((raw, topic))
        pos += 2 + length + 8
    if pos + 4 != len(data):
        return None  # trailing bytes after the generation: leave such data to _read
    return _Layout(topics)


class UserDataDecoder:
    """Decodes the user data of the members of one ``assign`` call, sharing topic names,
    one-partition tuples and byte layouts between them (see ``_Layout``); the results are
    those of ``decode_user_data``.

    Layouts are kept by the name of the first topic in the data: members that held the
    same topics list them in the same (HashMap) order, so one lookup finds the layout a
    member most likely shares."""

    #: Layouts learnt per call at most: members whose layouts all differ cost one extra
    #: walk of their bytes each for the first few only.
    MAX_LAYOUTS = 64

    def __init__(self, names: dict[bytes, str] | None = None) -> None:
        self.names: dict[bytes, str] = {} if names is None else names
        self._layouts: dict[bytes, _Layout] = {}
        self._learnt = 0
        self._singles = _Singles()

    def decode(self, data: bytes | None) -> tuple[dict[str, tuple[int, ...]], int | None]:
        if not data:
            return {}, None
        key = _first_topic(data)
        layout = self._layouts.get(key) if key is not None else None
        if layout is not None:
            hit = layout.read(data, self._singles)
            if hit is not None:
                return hit
        try:
            acc, generation = _read(data, True, self.names, self._singles)
        except DecodeError:
            pass
        else:
            if key is not None and layout is None and self._learnt < self.MAX_LAYOUTS:
                self._learnt += 1
                learnt = _layout(data, acc, self.names)
                if learnt is not None:
                    self._layouts[key] = learnt
            return acc, generation
        try:
            return _read(data, False, self.names, self._singles)
        except DecodeError:
            return {}, DEFAULT_GENERATION


def _first_topic(data: bytes) -> bytes | None:
    """The encoded name of the first topic in V0/V1 user data, if it has one."""
    if len(data) < 6:
        return None
    (length,) = _INT16(data, 4)
    if length < 0 or 6 + length > len(data):
        return None
    return data[6 : 6 + length]


def decode_user_data(
    data: bytes | None, names: dict[bytes, str] | None = None
) -> tuple[dict[str, tuple[int, ...]], int | None]:
    """(previous partitions, generation or None) as ``StickyAssignor.memberData`` reads them.

    ``names``: a cache of decoded topic names to share between calls."""
    return UserDataDecoder(names).decode(data)


def _as_partitions(tps: Sequence[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    """Kafka's list of partitions as topic -> sorted partition numbers."""
    by_topic: dict[str, list[int]] = {}
    for t, p in tps:
        by_topic.setdefault(t, []).append(p)
    return {t: tuple(sorted(ps)) for t, ps in sorted(by_topic.items())}


def _field_generation(generation_id: int) -> int | None:
    """``Subscription.generationId()``: absent when negative."""
    return generation_id if generation_id >= 0 else None


class StickyOptimalAssignor(Assignor):
    """groupspec's own variant ("sticky-optimal"): Kafka's path when all subscriptions are
    equal, the exact optimum (most balanced, then fewest moves) when they differ; see
    :mod:`groupspec.assignors.sticky_core`. Not rack-aware."""

    name: ClassVar[str] = "sticky-optimal"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

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
        sticky: list[StickyMember] = []
        decoder = UserDataDecoder({t.encode("utf-8"): t for t in topics})
        for m in members:
            owned, generation = decoder.decode(m.subscription.user_data)
            sticky.append(
                StickyMember(
                    m.member_id,
                    _topic_set(sets, m.subscription.topics),
                    owned,
                    DEFAULT_GENERATION if generation is None else generation,
                )
            )
        result = sticky_assign(topics, sticky)
        return {m.member_id: Assignment(result.assignment[m.member_id]) for m in members}

    def subscription_user_data(
        self, topics: tuple[str, ...], owned: TopicPartitions, generation_id: int
    ) -> bytes | None:
        """None until the member has had an assignment (``memberAssignment == null``)."""
        if generation_id < 0 and not owned:
            return None
        return encode_user_data(owned, generation_id)


class StickyAssignor(StickyOptimalAssignor):
    """Kafka's StickyAssignor, exactly (:mod:`groupspec.assignors.kafka_sticky`), rack-aware."""

    name: ClassVar[str] = "sticky"

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
        decoder = UserDataDecoder({t.encode("utf-8"): t for t in topics})
        decoded = [decoder.decode(m.subscription.user_data) for m in members]
        fast = constrained_fast(
            topics,
            [m.member_id for m in members],
            [m.subscription.topics for m in members],
            [owned for owned, _ in decoded],
            [generation for _, generation in decoded],
            [_field_generation(m.subscription.generation_id) for m in members],
            [m.subscription.rack_id for m in members],
            partition_racks,
            cooperative=False,
        )
        if fast is not None:
            return {m.member_id: Assignment(fast[m.member_id]) for m in members}
        kafka: list[KafkaMember] = []
        for m, (owned, generation) in zip(members, decoded, strict=True):
            kafka.append(
                KafkaMember(
                    m.member_id,
                    m.subscription.topics,
                    tuple((t, p) for t, ps in owned.items() for p in ps),
                    generation,
                    _field_generation(m.subscription.generation_id),
                    m.subscription.rack_id,
                )
            )
        result = kafka_sticky_assign(
            topics, kafka, partition_racks, self.prefer_rack_aware_logic
        )
        return {
            m.member_id: Assignment(_as_partitions(result.assignment.get(m.member_id, ())))
            for m in members
        }

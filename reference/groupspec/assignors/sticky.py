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

from groupspec.assignors.base import Assignor, MemberSubscription, RebalanceProtocol
from groupspec.assignors.inputs import check_input, known_subscribed_topics
from groupspec.assignors.ordering import hashmap_order
from groupspec.assignors.sticky_core import StickyMember, sticky_assign
from groupspec.assignors.sticky_core import topic_set as _topic_set
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


def _read(
    data: bytes, with_generation: bool, names: dict[bytes, str]
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
                    acc[topic] = (first,)
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


def decode_user_data(
    data: bytes | None, names: dict[bytes, str] | None = None
) -> tuple[dict[str, tuple[int, ...]], int | None]:
    """(previous partitions, generation or None) as ``StickyAssignor.memberData`` reads them.

    ``names``: a cache of decoded topic names to share between calls."""
    if not data:
        return {}, None
    if names is None:
        names = {}
    try:
        return _read(data, True, names)
    except DecodeError:
        pass
    try:
        return _read(data, False, names)
    except DecodeError:
        return {}, DEFAULT_GENERATION


class StickyAssignor(Assignor):
    name: ClassVar[str] = "sticky"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSubscription],
    ) -> dict[str, Assignment]:
        check_input(partitions_per_topic, members)
        topics = known_subscribed_topics(partitions_per_topic, members)
        sets: dict[tuple[str, ...], frozenset[str]] = {}
        sticky: list[StickyMember] = []
        names = {t.encode("utf-8"): t for t in topics}
        for m in members:
            owned, generation = decode_user_data(m.subscription.user_data, names)
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

"""The eager sticky assignor's user-data decoder: reusing one member's byte layout for the
next members (``UserDataDecoder``) gives exactly what decoding each member on its own gives,
whatever the members send."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.assignors.sticky import UserDataDecoder, decode_user_data, encode_user_data

TOPICS = ["t", "orders", "topic-0001", "topic-0002", "ünïcode", "x" * 40]

owned_maps = st.dictionaries(
    st.sampled_from(TOPICS),
    st.one_of(
        st.tuples(st.integers(-3, 2000)),  # the common shape: one partition per topic
        st.lists(st.integers(0, 50), max_size=4).map(lambda ps: tuple(sorted(set(ps)))),
    ),
    max_size=len(TOPICS),
)


def _repeated_topic(topic: str, first: int, second: int, generation: int) -> bytes:
    """V1 user data naming ``topic`` twice (Kafka never writes it; the decoder merges)."""
    raw = topic.encode("utf-8")
    entry = struct.pack(">h", len(raw)) + raw
    return (
        struct.pack(">i", 2)
        + entry + struct.pack(">ii", 1, first)
        + entry + struct.pack(">ii", 1, second)
        + struct.pack(">i", generation)
    )


@st.composite
def blobs(draw: st.DrawFn) -> bytes | None:
    kind = draw(st.sampled_from(["v1", "v1", "v1", "v0", "trailing", "repeated", "junk", "none"]))
    owned = draw(owned_maps)
    generation = draw(st.integers(-1, 5))
    if kind == "v1":
        return encode_user_data(owned, generation)
    if kind == "v0":
        return encode_user_data(owned, None)
    if kind == "trailing":
        return encode_user_data(owned, generation) + draw(st.binary(min_size=1, max_size=4))
    if kind == "repeated":
        return _repeated_topic(draw(st.sampled_from(TOPICS)), 1, 0, generation)
    if kind == "junk":
        return draw(st.binary(max_size=24))
    return None


@st.composite
def members(draw: st.DrawFn) -> list[bytes | None]:
    """A group: members that share one layout with other partition numbers, mixed with
    members whose data has another layout or is not V1 at all."""
    template = draw(owned_maps.filter(lambda m: all(len(ps) == 1 for ps in m.values())))
    out: list[bytes | None] = []
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.booleans()):
            same_layout = {t: (draw(st.integers(-2, 3000)),) for t in template}
            out.append(encode_user_data(same_layout, draw(st.integers(-1, 9))))
        else:
            out.append(draw(blobs()))
    return out


@settings(max_examples=300)
@given(group=members())
def test_shared_layout_decodes_like_each_member_alone(group: list[bytes | None]) -> None:
    decoder = UserDataDecoder()
    for i, data in enumerate(group):
        assert decoder.decode(data) == decode_user_data(data), f"member {i}: {data!r}"


def test_layout_is_reused_and_rejects_other_partition_counts() -> None:
    decoder = UserDataDecoder()
    first = encode_user_data({"a": (1,), "bb": (2,)}, 3)
    second = encode_user_data({"a": (7,), "bb": (0,)}, 4)
    two_in_a = encode_user_data({"a": (1, 5), "bb": (2,)}, 4)
    assert decoder.decode(first) == ({"a": (1,), "bb": (2,)}, 3)
    assert decoder.decode(second) == ({"a": (7,), "bb": (0,)}, 4)
    assert decoder.decode(two_in_a) == ({"a": (1, 5), "bb": (2,)}, 4)
    assert decoder.decode(_repeated_topic("a", 3, 1, 2)) == ({"a": (1, 3)}, 2)

"""Kafka's ConsumerProtocolTest (clients/src/test/java/org/apache/kafka/clients/consumer/
internals/ConsumerProtocolTest.java, apache/kafka 02387cc, the newest sources at hand)
restated against the reference's ConsumerProtocol
payloads (:mod:`groupspec.protocol.consumer_protocol`).

Kafka's ``Subscription`` keeps an absent generation as an empty ``Optional``; the reference
holds it as ``DEFAULT_GENERATION`` (-1), which is what Kafka serializes for it. Group
instance ids are not part of the payload in either (Kafka sets them from JoinGroup).
"""

from __future__ import annotations

import struct

import pytest

from groupspec.protocol.consumer_protocol import (
    ASSIGNMENT_VERSION,
    DEFAULT_GENERATION,
    SUBSCRIPTION_VERSION,
    Assignment,
    Subscription,
)
from groupspec.protocol.wire import DecodeError

GENERATION = 1
RACK = "rack-a"
# tp1 = foo-1, tp2 = bar-2 in Kafka's test.
TP1_TP2 = {"foo": (1,), "bar": (2,)}


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _partitions(topic: str, *ps: int) -> bytes:
    return _string(topic) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)


@pytest.mark.parametrize("version", range(SUBSCRIPTION_VERSION + 1))
def test_subscription_round_trips_each_version_keeping_what_the_version_has(version: int) -> None:
    # serializeDeserializeSubscriptionAllVersions and
    # serializeDeserializeConsumerProtocolSubscriptionAllVersions
    sub = Subscription(("foo", "bar"), b"hello", {"foo": (0,), "bar": (0,)}, GENERATION, RACK)
    got = Subscription.decode(sub.encode(version))
    assert set(got.topics) == {"foo", "bar"}
    assert got.user_data == b"hello"
    assert got.owned_partitions == ({"bar": (0,), "foo": (0,)} if version >= 1 else {})
    assert got.generation_id == (GENERATION if version >= 2 else DEFAULT_GENERATION)
    assert got.rack_id == (RACK if version >= 3 else None)


def test_subscription_with_empty_user_data_keeps_it_empty() -> None:
    # serializeDeserializeMetadata and serializeDeserializeMetadataAndGroupInstanceId
    got = Subscription.decode(Subscription(("foo", "bar"), b"").encode())
    assert set(got.topics) == {"foo", "bar"}
    assert got.user_data == b""
    assert got.generation_id == DEFAULT_GENERATION
    assert got.rack_id is None


def test_subscription_with_null_user_data_keeps_it_null() -> None:
    # serializeDeserializeNullSubscriptionUserData
    got = Subscription.decode(Subscription(("foo", "bar"), None).encode())
    assert set(got.topics) == {"foo", "bar"}
    assert got.user_data is None
    assert got.rack_id is None


def test_subscription_bytes_do_not_depend_on_topic_order() -> None:
    # serializeSubscriptionShouldOrderTopics: ConsumerProtocol.serializeSubscription sorts the
    # topic list before writing it.
    a = Subscription(("foo", "bar"), None, TP1_TP2).encode()
    b = Subscription(("bar", "foo"), None, TP1_TP2).encode()
    assert a == b
    assert Subscription.decode(a).topics == ("bar", "foo")


def test_subscription_bytes_do_not_depend_on_owned_partition_order() -> None:
    # serializeSubscriptionShouldOrderOwnedPartitions
    a = Subscription(("foo", "bar"), None, {"foo": (1,), "bar": (2,)}).encode()
    b = Subscription(("foo", "bar"), None, {"bar": (2,), "foo": (1,)}).encode()
    assert a == b


def test_version_zero_subscription_has_no_owned_partitions_generation_or_rack() -> None:
    # deserializeOldSubscriptionVersion
    got = Subscription.decode(Subscription(("foo", "bar"), None).encode(0))
    assert set(got.topics) == {"foo", "bar"}
    assert got.user_data is None
    assert got.owned_partitions == {}
    assert got.generation_id == DEFAULT_GENERATION
    assert got.rack_id is None


@pytest.mark.parametrize("with_generation_and_rack", [True, False])
def test_new_subscription_read_as_version_zero_ignores_the_newer_fields(
    with_generation_and_rack: bool,
) -> None:
    # deserializeNewSubscriptionWithOldVersion: the v3 body read with the v0 schema (here: the
    # header rewritten to 0, the rest left in place).
    sub = (
        Subscription(("foo", "bar"), None, {"bar": (2,)}, GENERATION, RACK)
        if with_generation_and_rack
        else Subscription(("foo", "bar"), None, {"bar": (2,)})
    )
    data = struct.pack(">h", 0) + sub.encode()[2:]
    got = Subscription.decode(data)
    assert set(got.topics) == {"foo", "bar"}
    assert got.user_data is None
    assert got.owned_partitions == {}
    assert got.generation_id == DEFAULT_GENERATION
    assert got.rack_id is None


def test_future_subscription_version_is_read_as_the_newest_known() -> None:
    # deserializeFutureSubscriptionVersion: version 100 with an extra trailing string field.
    data = (
        struct.pack(">h", 100)
        + struct.pack(">i", 1) + _string("topic")
        + struct.pack(">i", 0)  # empty user data
        + struct.pack(">i", 1) + _partitions("bar", 2)
        + struct.pack(">i", GENERATION)
        + _string(RACK)
        + _string("bar")
    )
    got = Subscription.decode(data)
    assert got.topics == ("topic",)
    assert got.owned_partitions == {"bar": (2,)}
    assert got.generation_id == GENERATION
    assert got.rack_id == RACK


def test_empty_rack_id_decodes_as_no_rack() -> None:
    # ConsumerProtocol.deserializeSubscription maps a null or empty rack id to Optional.empty().
    got = Subscription.decode(Subscription(("t",), None, {}, GENERATION, "").encode(3))
    assert got.rack_id is None


def test_negative_subscription_version_is_rejected() -> None:
    # ConsumerProtocol.checkSubscriptionVersion: "Unsupported subscription version".
    data = struct.pack(">h", -1) + Subscription(("t",)).encode()[2:]
    with pytest.raises(DecodeError):
        Subscription.decode(data)


@pytest.mark.parametrize("version", range(ASSIGNMENT_VERSION + 1))
def test_assignment_round_trips_each_version(version: int) -> None:
    # serializeDeserializeAssignmentAllVersions and
    # serializeDeserializeConsumerProtocolAssignmentAllVersions
    got = Assignment.decode(Assignment(TP1_TP2, b"hello").encode(version))
    assert got.partitions == {"bar": (2,), "foo": (1,)}
    assert got.user_data == b"hello"


def test_assignment_with_empty_user_data_keeps_it_empty() -> None:
    # serializeDeserializeAssignment
    got = Assignment.decode(Assignment(TP1_TP2, b"").encode())
    assert got.partitions == {"bar": (2,), "foo": (1,)}
    assert got.user_data == b""


def test_assignment_with_null_user_data_keeps_it_null() -> None:
    # deserializeNullAssignmentUserData
    got = Assignment.decode(Assignment(TP1_TP2, None).encode())
    assert got.partitions == {"bar": (2,), "foo": (1,)}
    assert got.user_data is None


def test_future_assignment_version_ignores_the_extra_field() -> None:
    # deserializeFutureAssignmentVersion: version 100 with a trailing string field "foo".
    data = (
        struct.pack(">h", 100)
        + struct.pack(">i", 1) + _partitions("foo", 1)
        + struct.pack(">i", 0)
        + _string("bar")
    )
    assert Assignment.decode(data).partitions == {"foo": (1,)}


def test_topics_are_sorted_as_java_strings() -> None:
    # Collections.sort on the topic list compares UTF-16 code units: U+10000 (a surrogate
    # pair starting D800) sorts before U+FFFF.
    high, bmp = "\U00010000", "\uffff"
    got = Subscription.decode(Subscription((bmp, high)).encode())
    assert got.topics == (high, bmp)

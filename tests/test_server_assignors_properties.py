"""Thin wrappers running the server-side assignor properties of
:mod:`properties.server_assignors` (validity, balance, minimal moves, fixed points)."""

from __future__ import annotations

import pytest

from groupspec.assignors.base import Side
from groupspec.assignors.registry import (
    ASSIGNOR_NAMES,
    ASSIGNOR_SIDES,
    SERVER_ASSIGNOR_NAMES,
    get_server_assignor,
)
from groupspec.assignors.server_spec import (
    GroupSpec,
    MemberSpec,
    SubscribedTopicMetadata,
    TopicId,
    TopicMetadata,
    check_group_spec,
    topic_id_from_str,
    topic_id_key,
    topic_id_str,
)
from properties import server_assignors as props


def test_uniform_is_valid_balanced_and_sticky() -> None:
    props.uniform_properties_property()()


def test_range_is_valid_and_balanced_per_topic() -> None:
    props.range_properties_property()()


def test_the_registry_says_which_side_runs_each_assignor() -> None:
    assert SERVER_ASSIGNOR_NAMES == ("uniform", "range")
    assert ("range", Side.CLIENT) in ASSIGNOR_SIDES and ("range", Side.SERVER) in ASSIGNOR_SIDES
    assert {n for n, s in ASSIGNOR_SIDES if s is Side.CLIENT} == set(ASSIGNOR_NAMES)
    assert get_server_assignor("uniform").side is Side.SERVER
    with pytest.raises(ValueError, match="known: uniform, range"):
        get_server_assignor("sticky")


def test_topic_ids_order_hash_and_text_as_kafkas_uuid() -> None:
    high = TopicId(1 << 127)  # negative as a Java long: sorts first
    assert sorted([TopicId(1), high], key=topic_id_key) == [high, TopicId(1)]
    t = TopicId(0x123456789ABCDEF0123456789ABCDEF0)
    assert topic_id_from_str(topic_id_str(t)) == t
    assert len(topic_id_str(t)) == 22
    with pytest.raises(ValueError, match="16"):
        topic_id_from_str("AAAA")


def test_bad_group_specs_are_named() -> None:
    t = TopicId(1)
    with pytest.raises(ValueError, match=r"members\[1\] \('a'\): duplicate member id"):
        check_group_spec(GroupSpec((MemberSpec("a", (t,)), MemberSpec("a", (t,)))))
    with pytest.raises(ValueError, match="also assigned to 'a'"):
        check_group_spec(GroupSpec((MemberSpec("a", (t,), {t: (0,)}), MemberSpec("b", (t,), {t: (0,)}))))
    with pytest.raises(ValueError, match="partition_racks has 1 entries for 2"):
        TopicMetadata(t, "x", 2, (frozenset(),))


def test_homogeneous_keeps_up_to_quota_and_gives_extras_to_the_holders() -> None:
    # 7 partitions over 3 members: quotas 3, 2, 2. "b" held 4: keeps its first 3 in its
    # listed order and gives up the last; "c" held 0 takes what is free.
    a = TopicId(9)
    topics = SubscribedTopicMetadata.of([TopicMetadata(a, "a", 7)])
    spec = GroupSpec(
        (
            MemberSpec("a", (a,), {a: (0, 1)}),
            MemberSpec("b", (a,), {a: (6, 2, 5, 3)}),
            MemberSpec("c", (a,)),
        )
    )
    out = props.canonical(get_server_assignor("uniform").assign(spec, topics))
    assert out == {"a": {a: (0, 1)}, "b": {a: (2, 5, 6)}, "c": {a: (3, 4)}}


def test_uniform_leaves_partitions_the_coordinator_marks_assigned_to_nobody() -> None:
    # GroupSpecImpl.isPartitionAssigned reads the coordinator's inverted target assignment
    # (GroupSpec.assigned): a partition it marks but no member holds is never queued by
    # UniformHomogeneousAssignmentBuilder.build; without the mark it goes to the member
    # below its quota
    t = TopicId.for_name("t")
    topics = SubscribedTopicMetadata.of([TopicMetadata(t, "t", 3)])
    members = (MemberSpec("a", (t,), {t: (0, 1)}), MemberSpec("b", (t,), {}))
    uniform = get_server_assignor("uniform")
    assert uniform.assign(GroupSpec(members), topics)["b"] == {t: (2,)}
    marked = uniform.assign(GroupSpec(members, assigned={t: frozenset({0, 1, 2})}), topics)
    assert not marked.get("b") and marked["a"] == {t: (0, 1)}

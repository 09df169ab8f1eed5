"""The order of a regex-subscribed member's target assignment against Kafka 4.1.2's own
steps (the JVM oracle's RegexTargetOrder: refreshRegularExpressions, the regex record and
its replay, the uniform assignor through ConsumerTargetAssignmentBuilder, the target
records and Assignment.fromRecord), members joining one per epoch. Java is required."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from groupspec.assignors.server_spec import (
    GroupSpec,
    MemberSpec,
    SubscribedTopicMetadata,
    TopicMetadata,
    replayed_assignment_order,
)
from groupspec.assignors.uniform import UniformAssignor
from groupspec.coordinator.consumer.group import java_hash_order
from groupspec.jvm import JvmOracle
from groupspec.protocol.topic_id import TopicId

pytestmark = pytest.mark.java

GROUP = "regex-subscription-java-0a535a"
REGEX = "regex-subscription-java-t[0-9]+-0a535a"
#: the recorded case: the two ids share a bucket of a 16-slot HashMap
TOPICS = [("regex-subscription-java-t1-0a535a", "5zw70MKgS-uT9fYJe1KgnA", 2),
          ("regex-subscription-java-t2-0a535a", "o0RcCgvtSaiekp9tjPwQ3Q", 2)]
MEMBERS = ["4wmnQbKsR0aERrmNjuNhzg", "ZeRMsiDGS5iBOJF6DqkTmg"]


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _pairs(a: dict[TopicId, tuple[int, ...]]) -> list[list[Any]]:
    return [[str(t), sorted(ps)] for t, ps in a.items()]


def _ours(topics: list[tuple[str, str, int]], members: list[str]) -> list[dict[str, Any]]:
    """The reference's steps on the same input: the regex's topics as replayed (a HashSet
    of the sorted names), the ids in that order, one uniform assignment per joining member
    over the targets as replayed from records listing them in the assignor's order."""
    meta = SubscribedTopicMetadata.of(
        TopicMetadata(TopicId.parse(i), n, p) for n, i, p in topics)
    by_name = {n: TopicId.parse(i) for n, i, _ in topics}
    ids = tuple(by_name[n] for n in java_hash_order(sorted(by_name)))
    targets: dict[str, dict[TopicId, tuple[int, ...]]] = {}
    joined: list[str] = []
    out = []
    for mid in members:
        joined.append(mid)
        order = java_hash_order(joined)
        spec = GroupSpec(tuple(MemberSpec(m, ids, targets.get(m, {})) for m in order))
        result = UniformAssignor().assign(spec, meta)
        epoch: dict[str, Any] = {"records": {}, "replayed": {}}
        for m in order:
            new = {t: ps for t, ps in result.get(m, {}).items() if ps}
            if new != targets.get(m):
                record = [(t, sorted(ps)) for t, ps in new.items()]
                epoch["records"][m] = [[str(t), ps] for t, ps in record]
                targets[m] = replayed_assignment_order(record)
                epoch["replayed"][m] = _pairs(targets[m])
        out.append(epoch)
    return out


def test_the_recorded_regex_case_matches_kafka(jvm: JvmOracle) -> None:
    theirs = jvm.call("RegexTargetOrder", {
        "group_id": GROUP, "regex": REGEX, "members": MEMBERS,
        "topics": [{"name": n, "id": i, "partitions": p} for n, i, p in TOPICS]})
    names = [n for n, _, _ in TOPICS]
    assert theirs["record_topics"] == sorted(names)
    assert theirs["replayed"] == java_hash_order(sorted(names))
    ours = _ours(TOPICS, MEMBERS)
    for mine, kafka in zip(ours, theirs["epochs"], strict=True):
        # records: topic order as written (partitions compared as sets)
        assert {m: [[t, sorted(ps)] for t, ps in r] for m, r in kafka["records"].items()} == mine["records"]
        assert {m: [[t, sorted(ps)] for t, ps in r] for m, r in kafka["replayed"].items()} == mine["replayed"]
    # Kafka lists t2 first in b's epoch-2 record, so b keeps t2 at epoch 3
    assert theirs["epochs"][0]["records"][MEMBERS[0]][0][0] == TOPICS[1][1]
    assert theirs["epochs"][1]["records"][MEMBERS[0]] == [[TOPICS[1][1], [0, 1]]]


@pytest.mark.parametrize("n_topics", [3, 5, 9])
def test_more_topics_and_members_match_kafka(jvm: JvmOracle, n_topics: int) -> None:
    """Several topics (some sharing buckets), three members joining one per epoch. Not
    with the 13 listed: eight ids then share a bucket, and Java grows (or treeifies) such a
    bucket's table, which the reference does not reproduce."""
    topics = [(f"rx-topic-{k}", str(TopicId.parse(i)), 1 + k % 3) for k, i in enumerate([
        "5zw70MKgS-uT9fYJe1KgnA", "o0RcCgvtSaiekp9tjPwQ3Q", "2JhMtJI7Q7WS3LvaAGKCTA",
        "lOy1_-LnRO6Vc2BJyOl_9w", "x4pDVEtISGaXb6Cr4CR19w", "AAAAAAAAAAAAAAAAAAAAAQ",
        "AAAAAAAAAAAAAAAAAAAAEQ", "AAAAAAAAAAAAAAAAAAAAIQ", "AAAAAAAAAAAAAAAAAAABAQ",
        "AAAAAAAAAAAAAAAAAAACAQ", "AAAAAAAAAAAAAAAAAAAEAQ", "AAAAAAAAAAAAAAAAAAAIAQ",
        "AAAAAAAAAAAAAAAAAAAQAQ"][:n_topics])]
    members = ["m-one", "m-two", "m-three"]
    theirs = jvm.call("RegexTargetOrder", {
        "group_id": "g", "regex": "rx-topic-[0-9]+", "members": members,
        "topics": [{"name": n, "id": i, "partitions": p} for n, i, p in topics]})
    ours = _ours(topics, members)
    for mine, kafka in zip(ours, theirs["epochs"], strict=True):
        assert {m: [[t, sorted(ps)] for t, ps in r] for m, r in kafka["records"].items()} == mine["records"]
        assert {m: [[t, sorted(ps)] for t, ps in r] for m, r in kafka["replayed"].items()} == mine["replayed"]

"""ConsumerGroupDescribe (KIP-848) is replayed: the broker's answer must be the reference's
for the group's state, epochs, assignor and members (their epochs, subscriptions, assignments
and targets; in no particular order), or the reference's before a write whose answer had not
come back when the describe was sent (Kafka reads the group at the last committed offset,
GroupMetadataManager.consumerGroupDescribe; the replay may handle the describe before such
a write). The reference coordinator plays the broker."""

from __future__ import annotations

import json
from pathlib import Path

from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    DescribedGroup,
    DescribedMember,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import MetadataTopic
from groupspec.validate import validate_bytes
from groupspec.validate.compare import compare
from groupspec.validate.verdict import GroupVerdict
from tests.test_validate_offset_delete import Broker


def _join(b: Broker, member: str, at: int) -> int:
    return b.send(ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=member, member_epoch=0, rebalance_timeout_ms=5000,
        subscribed_topic_names=("foo",), topic_partitions=()), at)


def _describe(b: Broker, at: int) -> int:
    return b.send(ConsumerGroupDescribeRequest(group_ids=("g",)), at, conn="admin")


def _group(b: Broker) -> Broker:
    b.set_topics(MetadataTopic("foo", TopicId(0x1111), 4))
    hb = b.answer(_join(b, "m1", 1000))
    assert isinstance(hb, ConsumerGroupHeartbeatResponse) and hb.error is Error.NONE
    return b


def _broker_side(trace: bytes) -> list[tuple[int, str]]:
    [g] = validate_bytes(trace).groups
    return [(d.line, d.rule) for d in g.divergences if d.side == "broker"]


def _verdict(b: Broker) -> GroupVerdict:
    [g] = validate_bytes(b.trace()).groups
    return g


def _described_after_two_joins() -> tuple[Broker, int, DescribedGroup]:
    """m1 and m2 joined; a describe at 3000 ms: the broker, its request id, the group as described."""
    b = _group(Broker())
    _join(b, "m2", 2000)
    d = _describe(b, 3000)
    answer = b.answer(d)
    assert isinstance(answer, ConsumerGroupDescribeResponse)
    [described] = answer.groups
    return b, d, described


def test_a_describe_is_judged_and_a_wrong_epoch_named() -> None:
    b, d, described = _described_after_two_joins()
    assert described.group_epoch == 2 and {x.member_id for x in described.members} == {"m1", "m2"}
    assert _broker_side(b.trace()) == []
    b.inject[d] = ConsumerGroupDescribeResponse(groups=(
        DescribedGroup(**{**described.__dict__, "group_epoch": described.group_epoch + 1}),))
    g = _verdict(b)
    assert g.verdict == "violation" and g.violation is not None
    assert (g.violation.api, g.violation.rule) == ("ConsumerGroupDescribe", "ConsumerGroupDescribeAnswer")
    assert "GroupMetadataManager.java" in g.violation.kafka_source


def test_a_member_missing_from_the_describe_is_named() -> None:
    b, d, described = _described_after_two_joins()
    b.inject[d] = ConsumerGroupDescribeResponse(groups=(DescribedGroup(
        **{**described.__dict__, "members": tuple(x for x in described.members if x.member_id != "m2")}),))
    assert _broker_side(b.trace()) == [(5, "ConsumerGroupDescribeAnswer")]  # (line 1 the header, 2 the metadata)


def _racing(heartbeat_answered_at: float) -> bytes:
    """m2's joining heartbeat sent at 2000 ms; a describe sent at 2010 ms, answered at 2020 ms
    with the group as it was before m2 joined; the heartbeat answered at
    ``heartbeat_answered_at``."""
    b = _group(Broker())
    d = _describe(b, 1990)  # the answer: the group before m2 (the broker's committed state)
    h = _join(b, "m2", 2000)
    lines = b.trace().decode().splitlines()
    out = []
    for text in lines:
        ev = json.loads(text)
        if ev.get("correlation_id") == d:
            ev["sent_ms"], ev["received_ms"] = 2010.0, 2020.0
        elif ev.get("correlation_id") == h:
            ev["received_ms"] = heartbeat_answered_at
        out.append(json.dumps(ev))
    return ("\n".join(out) + "\n").encode()


def test_a_describe_may_not_see_a_write_whose_answer_had_not_come_back() -> None:
    # the heartbeat's answer came back at 2050, after the describe was sent: its write may
    # not have been committed when the describe read the group
    assert _broker_side(_racing(2050.0)) == []


def test_a_describe_must_see_a_write_answered_before_it_was_sent() -> None:
    # answered at 2005, before the describe was sent at 2010: committed, so visible
    assert [rule for _, rule in _broker_side(_racing(2005.0))] == ["ConsumerGroupDescribeAnswer"]


def test_member_type_is_compared_from_v1_only() -> None:
    """ConsumerGroupDescribe v1 added MemberType (KIP-1099): a v0 answer carries none (-1)."""
    def group(member_type: int) -> ConsumerGroupDescribeResponse:
        from groupspec.protocol.consumer_group_messages import DescribedAssignment
        member = DescribedMember(member_id="m1", member_epoch=1, client_id="c", client_host="/h",
                                 subscribed_topic_names=("foo",), assignment=DescribedAssignment(()),
                                 target_assignment=DescribedAssignment(()), member_type=member_type)
        return ConsumerGroupDescribeResponse(groups=(DescribedGroup(
            error=Error.NONE, group_id="g", group_state="Stable", group_epoch=1, assignment_epoch=1,
            assignor_name="uniform", members=(member,)),))
    assert compare(0, group(1), group(-1)) is None
    assert compare(1, group(1), group(-1)) is not None
    assert compare(1, group(1), group(1)) is None


KIP848 = Path(__file__).resolve().parents[1] / "examples" / "validator-false-positives" / "kip848"


def _kafka_broker_side(name: str) -> list[tuple[str, int, str]]:
    from groupspec.conformance.runner import validation_config
    from groupspec.validate import validate_path

    report = validate_path(KIP848 / name, validation_config("kafka", "consumer"))
    return [(g.group_id, d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"]


def test_kafka_describes_v0_without_member_types() -> None:
    """Apache Kafka 4.1.2 recorded by the wire fuzzer (consumer groups, seed 7108):
    ConsumerGroupDescribe v0 and v1 of groups whose members join, heartbeat, commit and leave;
    every v0 answer's members have MemberType -1 (the field is v1's)."""
    assert _kafka_broker_side("describe-v0-without-member-type-kafka-4.1.2.jsonl") == []


def test_kafka_answers_an_offset_fetch_before_a_join_sent_earlier() -> None:
    """Apache Kafka 4.1.2 recorded by the wire fuzzer (seed 7208): an OffsetFetch v9 with member
    id "" (line 9) sent 1 ms after the ConsumerGroupHeartbeat that creates the group (line 10)
    and answered first: NONE, the group not there yet (with it, "" is an unknown member). The
    search had to try the fetch before the join, but pruned that choice once a deeper branch
    diverged at another request (the fetch changes nothing, and was not the request that
    diverged last); a request that diverged anywhere in the search is no longer pruned."""
    assert _kafka_broker_side("offset-fetch-before-a-concurrent-join-kafka-4.1.2.jsonl") == []


def test_kafka_describes_a_group_without_a_join_still_being_written() -> None:
    """Apache Kafka 4.1.2 recorded by the wire fuzzer (consumer groups, group.consumer.max.size
    2, seed 203): a member's joining heartbeat (line 49) sent 6 ms before a describe (line 48)
    was answered 2 ms after it; the describe shows the group without the member (epoch 6, not
    7). Kafka read the group at the last committed offset while the join's records were
    being written; the replay, having handled the join first (it was sent first), takes the
    group as it was before that write for a read sent before the write's answer."""
    name = "describe-before-a-join-commits-kafka-4.1.2.jsonl"
    lines = [json.loads(x) for x in (KIP848 / name).read_text(encoding="utf-8").splitlines()]
    describe, join = lines[47], lines[48]
    assert describe["api"] == "ConsumerGroupDescribe" and describe["response"]["groups"][0]["group_epoch"] == 6
    assert join["request"]["member_epoch"] == 0 and join["response"]["member_epoch"] == 7
    assert join["sent_ms"] < describe["sent_ms"] < join["received_ms"]
    assert _kafka_broker_side(name) == []


def test_kafka_describes_a_group_not_found_while_its_first_joins_are_written() -> None:
    """Apache Kafka 4.1.2 recorded by the wire fuzzer (group.consumer.max.size 2, seed 5116):
    two joining heartbeats (lines 6 and 7, sent first) were being written when a third was
    refused GROUP_MAX_SIZE_REACHED (line 4: a write sees them) and a describe (line 5) found
    no group (a read sees only what has committed); both joins were answered after it."""
    name = "describe-before-the-first-join-commits-kafka-4.1.2.jsonl"
    lines = [json.loads(x) for x in (KIP848 / name).read_text(encoding="utf-8").splitlines()]
    full, describe = lines[3], lines[4]
    assert full["response"]["error"] == "GROUP_MAX_SIZE_REACHED"
    assert describe["response"]["groups"][0]["error"] == "GROUP_ID_NOT_FOUND"
    assert all(j["sent_ms"] < describe["sent_ms"] < j["received_ms"] for j in lines[5:7])
    assert _kafka_broker_side(name) == []


def test_the_mismatch_names_the_first_group_that_differs() -> None:
    def group(gid: str, epoch: int) -> DescribedGroup:
        return DescribedGroup(error=Error.NONE, group_id=gid, group_state="Stable", group_epoch=epoch,
                              assignment_epoch=1, assignor_name="uniform", members=())
    expected = ConsumerGroupDescribeResponse(groups=(group("a", 1), group("b", 1)))
    actual = ConsumerGroupDescribeResponse(groups=(group("a", 1), group("b", 2)))
    mismatch = compare(1, expected, actual)
    assert mismatch is not None and mismatch.what == "group state, epochs or assignor"

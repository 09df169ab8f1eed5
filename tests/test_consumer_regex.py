"""Regular-expression subscriptions (KIP-848) on the reference coordinator.

Ported from Apache Kafka 4.1.2, group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/GroupMetadataManagerTest.java (each test named after the Java one): the regex
validation, replay of ConsumerGroupRegularExpression records, members joining with a new,
an updated, an existing or a cleared regex, the resolution completing after the regex was
changed, the refresh of expired regexes when topics are created, and regexes removed when
their members leave. Kafka's ``context.processTasks()`` (MockCoordinatorExecutor) is
``Coordinator.complete_regex_resolution`` here; the harness is that of
tests/test_consumer_coordinator_kafka.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    SubscribedTopicMetadata,
    TopicMetadata,
)
from groupspec.coordinator.consumer.group import ResolvedRegex
from groupspec.coordinator.consumer.regex import matches, regex_error, resolve
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import apply_record
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol.consumer_group_messages import ConsumerGroupHeartbeatResponse
from groupspec.protocol.errors import Error
from groupspec.protocol.records import Record
from tests.test_consumer_coordinator_kafka import (
    BAR,
    CLIENT_HOST,
    CLIENT_ID,
    FOO,
    GROUP,
    M1,
    M2,
    Context,
    MockAssignor,
    Parts,
    assert_records,
    assert_unordered_records,
    assignor,
    bar,
    current_record,
    epoch_record,
    foo,
    parts,
    persisted,
    request,
    response,
    target_epoch_record,
    target_record,
)
from tests.test_consumer_coordinator_kafka import Member as _Member

__all__ = ["assignor"]  # the fixture, used by name

FOOO = FOO.__class__(0x5EED_0000_0000_0000_0000_0000_0000_0F0F)


@dataclasses.dataclass(frozen=True)
class Member(_Member):
    regex: str = ""

    def subscription(self) -> cr.ConsumerGroupMemberMetadataValue:
        return dataclasses.replace(super().subscription(), subscribed_topic_regex=self.regex)


def sub(m: Member) -> Record:
    return cr.ConsumerGroupMemberSubscriptionRecord(GROUP, m.member_id, m.subscription())


def regex_record(regex: str, topics: Sequence[str] | None, version: int = 0,
                 timestamp: int = 0) -> Record:
    if topics is None:
        return cr.ConsumerGroupRegularExpressionRecord(GROUP, regex, None)
    return cr.ConsumerGroupRegularExpressionRecord(GROUP, regex, cr.ConsumerGroupRegularExpressionValue(
        topics=tuple(sorted(topics)), version=version, timestamp=timestamp))


def build(ctx: Context, epoch: int, members: Sequence[Member], resolved: dict[str, Record],
          targets: dict[str, Parts], assignment_epoch: int, metadata_hash: int = 0) -> None:
    """ConsumerGroupBuilder.build: subscriptions, resolved regexes, epoch, targets, target
    epoch, current assignments."""
    ctx.replay(*(sub(m) for m in members))
    ctx.replay(*resolved.values())
    ctx.replay(epoch_record(epoch, metadata_hash))
    ctx.replay(*(target_record(mid, a) for mid, a in targets.items()))
    ctx.replay(target_epoch_record(assignment_epoch))
    ctx.replay(*(current_record(m) for m in members))


def process_tasks(ctx: Context) -> list[Record]:
    """MockCoordinatorExecutor via processTasks: every pending task runs and is written."""
    out = ctx.coordinator.complete_regex_resolutions(ctx.now)
    return out.records


def scheduled(ctx: Context) -> bool:
    return GROUP in ctx.coordinator.pending_regex_resolutions()


def image(ctx: Context, topics: Sequence[object], version: int) -> None:
    ctx.coordinator.set_topics(topics, version=version)  # type: ignore[arg-type]


def hb(out: Output, rid: int) -> ConsumerGroupHeartbeatResponse:
    resp = out.response_to(rid)
    assert isinstance(resp, ConsumerGroupHeartbeatResponse)
    return resp


# ---------------------------------------------------------------------------- the dialect
@pytest.mark.parametrize(("regex", "description"), [
    ("[", "missing closing ]"),
    ("a(", "missing closing )"),
    ("*a", "missing argument to repetition operator"),
    ("a**", "invalid nested repetition operator"),
    ("a{2,1}", "invalid repeat count"),
    ("\\8", "invalid escape sequence"),
    ("(?=a)", "invalid or unsupported Perl syntax"),
    ("\\C", "invalid escape sequence"),
    ("(?P<n>a)(?P<n>b)", "duplicate capture group name"),
    ("foo.*", None),
    ("(?i)FOO|bar", None),
    ("(?P<n>a)", None),
])
def test_regex_errors_are_re2j_descriptions(regex: str, description: str | None) -> None:
    """RE2/J 1.8's PatternSyntaxException.getDescription, as checked by hand against the
    jar Kafka 4.1.2 ships (libs/re2j-1.8.jar)."""
    assert regex_error(regex) == description


def test_matches_is_a_full_match() -> None:
    assert matches("foo.*", "foobar")
    assert not matches("foo", "foobar")
    assert not matches("oo", "foo")
    assert matches("foo*", "fooo") and matches("foo*", "fo") and not matches("foo*", "foo-1")
    assert resolve(["t.*"], ["t1", "x", "t2"], 7, 42) == {
        "t.*": ResolvedRegex(frozenset({"t1", "t2"}), 7, 42)}


# ---------------------------------------------------------------------------- Kafka's tests
def test_consumer_heartbeat_regex_validation(assignor: MockAssignor) -> None:
    ctx = Context()
    assignor.prepare({})
    resp, records = ctx.heartbeat(member_id=M1, member_epoch=0, rebalance_timeout_ms=5000,
                                  subscribed_topic_regex="[", topic_partitions=())
    assert resp.error is Error.INVALID_REGULAR_EXPRESSION and records == []
    assert resp.error_message == "SubscribedTopicRegex `[` is not a valid regular expression: missing closing ]."
    resp, _ = ctx.heartbeat(member_id=M1, member_epoch=0, rebalance_timeout_ms=5000,
                            subscribed_topic_regex=".*", topic_partitions=())
    assert resp.member_epoch == 1
    resp, records = ctx.heartbeat(member_id=M1, member_epoch=1, rebalance_timeout_ms=5000,
                                  subscribed_topic_regex="[", topic_partitions=())
    assert resp.error is Error.INVALID_REGULAR_EXPRESSION and records == []
    assert resp.error_message == "SubscribedTopicRegex `[` is not a valid regular expression: missing closing ]."
    resp, _ = ctx.heartbeat(member_id=M1, member_epoch=1, rebalance_timeout_ms=5000,
                            subscribed_topic_names=("foo",), topic_partitions=())
    assert resp.member_epoch == 2


# Kafka: testReplayConsumerGroupRegularExpression (GroupCoordinatorShardTest)
def test_replay_consumer_group_regular_expression() -> None:
    state = CoordinatorState()
    apply_record(state, regex_record("abc*", ["abc", "abcd"], 10, 12345))
    assert state.consumer_groups[GROUP].resolved_regexes["abc*"] == ResolvedRegex(
        frozenset({"abc", "abcd"}), 10, 12345)


# Kafka: testReplayConsumerGroupRegularExpressionTombstone (GroupCoordinatorShardTest)
def test_replay_consumer_group_regular_expression_tombstone() -> None:
    state = CoordinatorState()
    apply_record(state, regex_record("abc*", None))
    assert GROUP not in state.consumer_groups
    apply_record(state, regex_record("abc*", ["abc", "abcd"], 10, 12345))
    apply_record(state, regex_record("abc*", None))
    assert state.consumer_groups[GROUP].resolved_regexes == {}


def test_consumer_group_member_picks_up_existing_resolved_regular_expression(
        assignor: MockAssignor) -> None:
    ctx = Context([foo(2)])
    m1 = Member(M1, (), 10, 10, regex="foo*", assigned={FOO: (0, 1)})
    build(ctx, 10, [m1], {"foo*": regex_record("foo*", ["foo"], 100, 12345)},
          {M1: {FOO: (0, 1)}}, 10)
    seen: list[GroupSpec] = []
    real = assignor.assign

    def spy(spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
        seen.append(spec)
        return real(spec, topics)

    assignor.assign = spy  # type: ignore[method-assign]
    assignor.prepare({M1: {FOO: (0,)}, M2: {FOO: (1,)}})
    resp, _ = ctx.heartbeat(member_id=M2, member_epoch=0, rebalance_timeout_ms=10000,
                            subscribed_topic_regex="foo*", topic_partitions=())
    assert resp == response(M2, 11, {})
    spec = seen[0]
    assert all(m.subscribed_topic_ids == (FOO,) for m in spec.members)


def test_consumer_group_member_joins_with_new_regex(assignor: MockAssignor) -> None:
    ctx = Context()
    image(ctx, [foo(6)], 12345)
    h = ctx.metadata_hash({"foo"})
    m1 = Member(M1, ("foo",), 10, 10, rebalance_timeout_ms=5000,
                assigned={FOO: range(6)})
    build(ctx, 10, [m1], {}, {M1: {FOO: range(6)}}, 10, h)
    resp, records = ctx.heartbeat(member_id=M2, member_epoch=0, rebalance_timeout_ms=5000,
                                  subscribed_topic_regex="foo*", server_assignor="range",
                                  topic_partitions=())
    assert resp == response(M2, 10, {})
    m2 = Member(M2, (), 10, 0, rebalance_timeout_ms=5000, regex="foo*")
    assert_records([sub(m2), current_record(m2)], records)
    assert scheduled(ctx)
    assert persisted(process_tasks(ctx)) == [
        regex_record("foo*", ["foo"], 12345, ctx.now), epoch_record(11, h)]
    assert not scheduled(ctx)


def test_consumer_group_member_joins_with_updated_regex(assignor: MockAssignor) -> None:
    ctx = Context()
    image(ctx, [foo(6), bar(3)], 12345)
    m1 = Member(M1, (), 10, 10, rebalance_timeout_ms=5000, regex="foo*",
                assigned={FOO: range(6)})
    build(ctx, 10, [m1], {}, {M1: {FOO: range(6)}}, 10)
    resp, records = ctx.heartbeat(member_id=M1, member_epoch=10, rebalance_timeout_ms=5000,
                                  subscribed_topic_regex="foo*|bar*", server_assignor="range",
                                  topic_partitions=())
    assert resp == response(M1, 10, {FOO: range(6)})
    updated = dataclasses.replace(m1, regex="foo*|bar*")
    assert_records([sub(updated), regex_record("foo*", None)], records)
    assert persisted(process_tasks(ctx)) == [
        regex_record("foo*|bar*", ["foo", "bar"], 12345, ctx.now),
        epoch_record(11, ctx.metadata_hash({"foo", "bar"}))]


def test_consumer_group_member_joins_with_regex_and_updates_it_before_resolution_completed(
        assignor: MockAssignor) -> None:
    ctx = Context()
    image(ctx, [foo(6), bar(3)], 12345)
    assignor.prepare({})
    resp, records = ctx.heartbeat(member_id=M1, member_epoch=0, rebalance_timeout_ms=5000,
                                  subscribed_topic_regex="foo*", server_assignor="range",
                                  topic_partitions=())
    assert resp == response(M1, 1, {})
    m1 = Member(M1, (), 1, 0, rebalance_timeout_ms=5000, regex="foo*")
    assert_records([sub(m1), epoch_record(1, 0), target_record(M1, {}), target_epoch_record(1),
                    current_record(m1)], records)
    assert scheduled(ctx)
    resp, records = ctx.heartbeat(member_id=M1, member_epoch=1,
                                  subscribed_topic_regex="foo*|bar*")
    assert resp == response(M1, 1)
    m1 = dataclasses.replace(m1, regex="foo*|bar*")
    assert_records([sub(m1), regex_record("foo*", None)], records)
    assert len(ctx.coordinator.pending_regex_resolutions()) == 1
    # the task resolved "foo*", which nobody subscribes to any more: nothing written
    assert persisted(process_tasks(ctx)) == []
    resp, _ = ctx.heartbeat(member_id=M1, member_epoch=1, subscribed_topic_regex="foo*|bar*")
    assert resp == response(M1, 1)
    assert scheduled(ctx)
    assert persisted(process_tasks(ctx)) == [
        regex_record("foo*|bar*", ["foo", "bar"], 12345, ctx.now),
        epoch_record(2, ctx.metadata_hash({"foo", "bar"}))]


def test_consumer_group_member_join_refreshes_expired_regexes(assignor: MockAssignor) -> None:
    ctx = Context()
    image(ctx, [foo(6), bar(3)], 1)
    assignor.prepare({})
    m1 = Member(M1, (), 10, 10, rebalance_timeout_ms=5000, regex="foo*",
                assigned={FOO: range(6)})
    m2 = Member(M2, (), 10, 10, rebalance_timeout_ms=5000, regex="bar*",
                assigned={BAR: range(3)})
    build(ctx, 10, [m1, m2], {"foo*": regex_record("foo*", ["foo"], 0, 0),
                              "bar*": regex_record("bar*", ["bar"], 0, 0)},
          {M1: {FOO: range(6)}, M2: {BAR: range(3)}}, 10, ctx.metadata_hash({"foo", "bar"}))
    image(ctx, [foo(6), bar(3), TopicMetadata(FOOO, "fooo", 1)], 2)
    ctx.heartbeat(member_id=M1, member_epoch=10)
    assert not scheduled(ctx)  # within 10 s of the last refresh
    ctx.sleep(11_000)
    ctx.heartbeat(member_id=M1, member_epoch=10)
    assert scheduled(ctx)
    assert_unordered_records(
        [[regex_record("foo*", ["foo", "fooo"], 2, ctx.now), regex_record("bar*", ["bar"], 2, ctx.now)],
         [epoch_record(11, ctx.metadata_hash({"foo", "bar", "fooo"}))]],
        process_tasks(ctx))


def test_consumer_group_member_clears_regex(assignor: MockAssignor) -> None:
    ctx = Context()
    image(ctx, [foo(6)], 12345)
    assignor.prepare({})
    m1 = Member(M1, (), 10, 10, rebalance_timeout_ms=5000, regex="foo*",
                assigned={FOO: range(6)})
    build(ctx, 10, [m1], {}, {M1: {FOO: range(6)}}, 10)
    resp, records = ctx.heartbeat(member_id=M1, member_epoch=10, rebalance_timeout_ms=5000,
                                  subscribed_topic_regex="", server_assignor="range",
                                  topic_partitions=())
    assert resp == response(M1, 11, {})
    cleared = Member(M1, (), 11, 10, rebalance_timeout_ms=5000, regex="")
    assert_records([sub(cleared), regex_record("foo*", None), epoch_record(11, 0),
                    target_record(M1, {}), target_epoch_record(11), current_record(cleared)],
                   records)


def test_resolved_regular_expressions_removed_when_members_leave_or_fenced(
        assignor: MockAssignor) -> None:
    """testResolvedRegularExpressionsRemovedWhenMembersLeaveOrFenced: the last member of a
    regex leaving writes its tombstone before the epoch bump; a regex still subscribed by
    another member stays."""
    ctx = Context([foo(3), bar(3)])
    m1 = Member(M1, (), 10, 10, regex="foo*", assigned={FOO: range(3)})
    m2 = Member(M2, (), 10, 10, regex="bar*", assigned={BAR: range(3)})
    build(ctx, 10, [m1, m2], {"foo*": regex_record("foo*", ["foo"]), "bar*": regex_record("bar*", ["bar"])},
          {M1: {FOO: range(3)}, M2: {BAR: range(3)}}, 10, ctx.metadata_hash({"foo", "bar"}))
    _, records = ctx.heartbeat(member_id=M1, member_epoch=-1)
    assert_records([
        cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M1, None),
        cr.ConsumerGroupTargetAssignmentRecord(GROUP, M1, None),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, None),
        regex_record("foo*", None),
        epoch_record(11, ctx.metadata_hash({"bar"})),
    ], records)
    assert list(ctx.group().resolved_regexes) == ["bar*"]


# ---------------------------------------------------------------------------- the reference's own
def test_resolved_topics_reach_the_assignor_and_the_member() -> None:
    """End to end with the real uniform assignor: a member subscribing by regex gets nothing
    until the resolution completes, then the matching topics."""
    c = Coordinator()
    c.set_topics([TopicMetadata(FOO, "orders-1", 2), TopicMetadata(BAR, "payments", 2)])
    out = c.handle(1, request(member_id=M1, member_epoch=0, rebalance_timeout_ms=5000,
                              subscribed_topic_regex="orders-.*", topic_partitions=()), 0)
    r1 = hb(out, 1)
    assert r1.member_epoch == 1
    assert r1.assignment is not None and r1.assignment.topic_partitions == ()
    assert c.pending_regex_resolutions() == {GROUP: 0}
    out = c.complete_regex_resolution(GROUP, 3)
    assert [type(x).__name__ for x in out.records if x.persisted] == [
        "ConsumerGroupRegularExpressionRecord", "ConsumerGroupEpochRecord"]
    out = c.handle(2, request(member_id=M1, member_epoch=1), 5)
    r2 = hb(out, 2)
    assert r2.member_epoch == 2 and r2.assignment is not None
    got = {(p.topic_id, tuple(p.partitions)) for p in r2.assignment.topic_partitions}
    assert got == {(FOO, (0, 1))}
    # the records alone rebuild the state, resolved regexes included (failover)
    before = c.state.consumer_groups[GROUP].resolved_regexes
    c.failover(6)
    assert c.state.consumer_groups[GROUP].resolved_regexes == before


def test_skipping_the_resolution_leaves_the_member_without_topics() -> None:
    """Without the executor step the regex never resolves: the group stays at its epoch and
    the member gets nothing (what the validator would call a divergence on a real trace)."""
    c = Coordinator()
    c.set_topics([TopicMetadata(FOO, "orders-1", 2)])
    c.handle(1, request(member_id=M1, member_epoch=0, rebalance_timeout_ms=5000,
                        subscribed_topic_regex="orders-.*", topic_partitions=()), 0)
    out = c.handle(2, request(member_id=M1, member_epoch=1), 5_000)
    r2 = hb(out, 2)
    assert r2.member_epoch == 1 and r2.assignment is None
    # a second refresh is not scheduled while the first is pending
    assert c.pending_regex_resolutions() == {GROUP: 0}


def test_failover_cancels_a_pending_resolution() -> None:
    c = Coordinator()
    c.handle(1, request(member_id=M1, member_epoch=0, rebalance_timeout_ms=5000,
                        subscribed_topic_regex="x.*", topic_partitions=()), 0)
    assert c.pending_regex_resolutions()
    c.failover(1)
    assert c.pending_regex_resolutions() == {}
    # the next heartbeat schedules it again (the regex is still unresolved)
    c.handle(2, request(member_id=M1, member_epoch=1), 2)
    assert c.pending_regex_resolutions() == {GROUP: 2}


_ = (CLIENT_HOST, CLIENT_ID, parts)


def test_simulated_regex_members_get_new_topics_and_their_trace_conforms() -> None:
    """The bundled subscription-change story with KIP-848 members subscribing by the
    pattern 'events-.*' (sent as SubscribedTopicRegex): the simulator completes each
    resolution a few ms after it was scheduled, the topic created at 20 s reaches the
    members at their first heartbeat 10 s after the last refresh, and the validator,
    choosing when each resolution completed, finds the trace conforming."""
    import io
    import json

    from groupspec.cli.simulate import bundled_scenarios
    from groupspec.sim.render import write_trace
    from groupspec.sim.runner import simulate
    from groupspec.sim.scenario import apply_overrides, parse_scenario
    from groupspec.trace.events import RecordEvent
    from groupspec.validate import CONFORMING, validate_bytes

    data = apply_overrides(json.loads(bundled_scenarios()["subscription-change"]),
                           group_protocol="consumer")
    result = simulate(parse_scenario(data, "subscription-change"))
    resolved = [e.record for e in result.trace if isinstance(e, RecordEvent)
                and isinstance(e.record, cr.ConsumerGroupRegularExpressionRecord)]
    assert resolved and resolved[-1].value is not None
    assert "events-mobile" in resolved[-1].value.topics
    buf = io.StringIO()
    write_trace(result, buf)
    report = validate_bytes(buf.getvalue().encode(), "regex")
    assert all(g.verdict == CONFORMING for g in report.groups), [
        (g.group_id, g.verdict, g.divergence) for g in report.groups]

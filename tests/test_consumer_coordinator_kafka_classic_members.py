"""Kafka's own tests of classic members in consumer groups (KIP-848 mixed groups), run against
the reference coordinator.

Ported from Apache Kafka 4.1.2, group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/GroupMetadataManagerTest.java (the classicGroup{Join,Sync,Heartbeat}ToConsumerGroup
tests and the classic members' timeouts); the harness is tests/test_consumer_coordinator_kafka.py
(its docstring says how Kafka's test context maps onto the reference). Each test is named
after the Java one. Kafka's ``assertResponseEquals`` compares SyncGroup assignments after
sorting their partitions (Assertions.assertSyncGroupResponse), so do these tests.

Left out: the downgrade by a static member's replacement (the reference raises NotModelled),
failed appends (testConsumerGroupHeartbeatWith*ClassicGroup's rollback), metrics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_protocol import Assignment, Subscription
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
    M3,
    STABLE,
    UNRELEASED,
    UNREVOKED,
    ZAR,
    Context,
    Member,
    MockAssignor,
    Parts,
    assert_unordered_records,
    assignor,
    bar,
    current_record,
    epoch_record,
    foo,
    target_epoch_record,
    target_record,
)

__all__ = ["assignor"]  # the fixture, used by name

SESSION_MS = 5000
#: JoinGroupRequestBuilder's session and rebalance timeouts
JOIN_SESSION_MS = JOIN_REBALANCE_MS = 500
#: the tests call the shard, past the service's session-timeout bounds; the reference's
#: coordinator checks them, so they are lowered to admit JoinGroupRequestBuilder's
SHARD: dict[str, Any] = {"group_min_session_timeout_ms": JOIN_SESSION_MS}


def protocols(topics: Sequence[str] = ("foo",), owned: Parts | None = None,
              version: int = 3, name: str = "range") -> tuple[cr.ClassicProtocol, ...]:
    """A member's supported protocols: one, whose metadata is its subscription."""
    names = {FOO: "foo", BAR: "bar"}
    owned_by_name = {names[t]: tuple(ps) for t, ps in (owned or {}).items()}
    sub = Subscription(tuple(topics), owned_partitions=owned_by_name)
    return (cr.ClassicProtocol(name, sub.encode(version)),)


def join_protocols(ps: Sequence[cr.ClassicProtocol]) -> tuple[m.JoinGroupProtocol, ...]:
    return tuple(m.JoinGroupProtocol(p.name, p.metadata) for p in ps)


@dataclasses.dataclass(frozen=True)
class ClassicMember(Member):
    """A member that joined with the classic protocol: Member plus ClassicMemberMetadata."""

    classic: tuple[cr.ClassicProtocol, ...] = protocols()
    session_timeout_ms: int = SESSION_MS
    server_assignor: str | None = None

    def subscription(self) -> cr.ConsumerGroupMemberMetadataValue:
        return dataclasses.replace(super().subscription(), classic_member_metadata=cr.ClassicMemberMetadata(
            session_timeout_ms=self.session_timeout_ms, supported_protocols=self.classic))


def build(ctx: Context, epoch: int, members: Sequence[Member], targets: dict[str, Parts] | None = None,
          assignment_epoch: int = 0) -> None:
    """ConsumerGroupBuilder(groupId, epoch) with these members, targets and assignment epoch
    (the metadata hash is the subscribed topics' own, as withMetadataHash computes it)."""
    names = {t for x in members for t in x.topics}
    ctx.build_group(epoch, members, targets or {}, assignment_epoch, ctx.metadata_hash(names))


class Classic:
    """The classic requests of GroupMetadataManagerTestContext (sendClassicGroup*)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.rid = 1000

    def send(self, req: m.Request) -> tuple[Any, list[Record]]:
        self.rid += 1
        out = self.ctx.coordinator.handle(self.rid, req, self.ctx.now)
        return out.response_to(self.rid), out.records

    def join(self, member_id: str = "", ps: Sequence[cr.ClassicProtocol] = protocols(),
             protocol_type: str = "consumer", instance_id: str | None = None,
             session_timeout_ms: int = JOIN_SESSION_MS,
             rebalance_timeout_ms: int = JOIN_REBALANCE_MS,
             version: int = 9) -> tuple[m.JoinGroupResponse, list[Record]]:
        return self.send(m.JoinGroupRequest(
            group_id=GROUP, member_id=member_id, group_instance_id=instance_id,
            protocol_type=protocol_type, protocols=join_protocols(ps),
            session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=rebalance_timeout_ms,
            client_id=CLIENT_ID, client_host=CLIENT_HOST, version=version))

    def sync(self, member_id: str, generation_id: int, protocol_name: str | None = "range",
             protocol_type: str | None = "consumer",
             instance_id: str | None = None) -> tuple[m.SyncGroupResponse, list[Record]]:
        return self.send(m.SyncGroupRequest(
            group_id=GROUP, generation_id=generation_id, member_id=member_id,
            group_instance_id=instance_id, protocol_type=protocol_type, protocol_name=protocol_name))

    def heartbeat(self, member_id: str, generation_id: int,
                  instance_id: str | None = None) -> tuple[m.HeartbeatResponse, list[Record]]:
        return self.send(m.HeartbeatRequest(group_id=GROUP, generation_id=generation_id,
                                            member_id=member_id, group_instance_id=instance_id))


def _group_deadline(ctx: Context, table: str, member_id: str) -> int | None:
    return getattr(ctx.group(), table).get(member_id)  # type: ignore[no-any-return]


def assert_session_timeout(ctx: Context, member_id: str, delay_ms: int) -> None:
    assert ctx.session_deadline(member_id) == ctx.now + delay_ms


def assert_join_timeout(ctx: Context, member_id: str, delay_ms: int | None) -> None:
    want = None if delay_ms is None else ctx.now + delay_ms
    assert _group_deadline(ctx, "classic_join_deadlines", member_id) == want


def assert_sync_timeout(ctx: Context, member_id: str, delay_ms: int | None) -> None:
    want = None if delay_ms is None else ctx.now + delay_ms
    assert _group_deadline(ctx, "classic_sync_deadlines", member_id) == want


def sorted_assignment(data: bytes) -> tuple[bytes, dict[str, list[int]], bytes | None]:
    """Assertions.assertSyncGroupResponse's normalisation: version, partitions sorted."""
    a = Assignment.decode(data)
    return data[:2], {t: sorted(ps) for t, ps in sorted(a.partitions.items())}, a.user_data


# ---------------------------------------------------------------------------- JoinGroup
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_joining_consumer_group_with_new_dynamic_member(assignor: MockAssignor, version: int) -> None:
    ctx = Context([foo(2), bar(1)], **SHARD)
    c = Classic(ctx)
    build(ctx, 10, [Member(M1, ("foo",), 10, 10, assigned={FOO: (0, 1)}, server_assignor=None)],
          {M1: {FOO: (0, 1)}}, 10)
    ps = protocols(("foo", "bar"), version=version)
    # the first JoinGroup is given a member id
    first, records = c.join(ps=ps)
    assert records == [] and first.error is Error.MEMBER_ID_REQUIRED and first.member_id != ""
    new = first.member_id
    assignor.prepare({M1: {FOO: (0,)}, new: {BAR: (0,)}})
    joined, records = c.join(new, ps=ps)
    expected = ClassicMember(new, ("foo", "bar"), 11, 0, STABLE, rebalance_timeout_ms=500,
                             assigned={BAR: (0,)}, classic=ps, session_timeout_ms=JOIN_SESSION_MS)
    assert_unordered_records([
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new, expected.subscription())],
        [epoch_record(11, ctx.metadata_hash({"foo", "bar"}))],
        [target_record(M1, {FOO: (0,)}), target_record(new, {BAR: (0,)})],
        [target_epoch_record(11)],
        [current_record(expected)],
    ], records)
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=new, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, new, JOIN_SESSION_MS)
    assert_sync_timeout(ctx, new, JOIN_REBALANCE_MS)


def test_joining_consumer_group_throws_exception_if_group_over_max_size() -> None:
    ctx = Context(consumer_group_max_size=1, **SHARD)
    build(ctx, 10, [Member(M1, (), 10, 10, server_assignor=None)])
    resp, records = Classic(ctx).join()
    assert resp.error is Error.GROUP_MAX_SIZE_REACHED and records == []


def test_joining_consumer_group_throws_exception_if_protocol_is_not_supported() -> None:
    ctx = Context(**SHARD)
    build(ctx, 10, [ClassicMember(M1, (), 10, 10, classic=protocols(name="roundrobin"))])
    c = Classic(ctx)
    assert c.join()[0].error is Error.INCONSISTENT_GROUP_PROTOCOL  # "range" only
    assert c.join(protocol_type="connect")[0].error is Error.INCONSISTENT_GROUP_PROTOCOL


def test_static_member_joining_consumer_group_with_unknown_instance_id() -> None:
    ctx = Context(**SHARD)
    ps = protocols(("foo", "bar"), {FOO: (0, 1)})
    build(ctx, 10, [ClassicMember(M1, classic=ps), Member(M2, server_assignor=None)])
    resp, records = Classic(ctx).join(M1, ps, instance_id="instance-id")
    assert resp.error is Error.UNKNOWN_MEMBER_ID and records == []


def test_static_member_joining_consumer_group_with_unmatched_member_id() -> None:
    ctx = Context(**SHARD)
    ps = protocols(("foo", "bar"), {FOO: (0, 1)})
    build(ctx, 10, [ClassicMember(M1, instance_id="instance-id", classic=ps),
                    Member(M2, server_assignor=None)])
    resp, records = Classic(ctx).join("another-member", ps, instance_id="instance-id")
    assert resp.error is Error.FENCED_INSTANCE_ID and records == []


def test_reconciliation_in_joining_consumer_group_with_eager_protocol(assignor: MockAssignor) -> None:
    zar = TopicMetadata(ZAR, "zar", 1)
    ctx = Context([foo(2), bar(1), zar], **SHARD)
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 10, rebalance_timeout_ms=500,
                       assigned={FOO: (0,), BAR: (0,)},
                       classic=protocols(("foo", "bar"), {FOO: (0,), BAR: (0,)}))
    m2 = Member(M2, ("foo", "bar"), 10, 10, rebalance_timeout_ms=500, assigned={FOO: (1,)},
                server_assignor=None)
    build(ctx, 10, [m1, m2], {M1: {FOO: (0,), BAR: (0,)}, M2: {FOO: (1,)}}, 10)
    ctx.group().metadata_refresh_epoch = 11  # group.setMetadataRefreshDeadline(MAX, 11)
    assignor.prepare({M1: {FOO: (0, 1), ZAR: (0,)}, M2: {BAR: (0,)}})
    c = Classic(ctx)
    ps = protocols(("foo", "bar", "zar"), {})  # an eager member revoked all before joining
    joined, records = c.join(M1, ps, session_timeout_ms=5000)
    expected1 = ClassicMember(M1, ("foo", "bar", "zar"), 11, 10, UNRELEASED, rebalance_timeout_ms=500,
                              assigned={FOO: (0,), ZAR: (0,)}, classic=ps)
    assert_unordered_records([
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, expected1.subscription())],
        [epoch_record(11, ctx.metadata_hash({"foo", "bar", "zar"}))],
        [target_record(M1, {FOO: (0, 1), ZAR: (0,)}), target_record(M2, {BAR: (0,)})],
        [target_epoch_record(11)],
        [current_record(expected1)],
    ], records)
    assert ctx.member_state(M1) is UNRELEASED
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=M1, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, M1, 5000)
    assert_sync_timeout(ctx, M1, 500)
    synced, _ = c.sync(M1, 11)
    assert sorted_assignment(synced.assignment) == sorted_assignment(
        Assignment({"foo": (0,), "zar": (0,)}).encode())
    # member 2 revokes foo-1; member 1 is then told to rejoin for it
    ctx.heartbeat(member_id=M2, member_epoch=10, topic_partitions=())
    assert c.heartbeat(M1, 11)[0].error is Error.REBALANCE_IN_PROGRESS
    assert_join_timeout(ctx, M1, 500)
    joined, records = c.join(M1, ps, session_timeout_ms=5000)
    expected2 = dataclasses.replace(expected1, state=STABLE, previous_member_epoch=11,
                                    assigned={FOO: (0, 1), ZAR: (0,)})
    assert records_of_kind(records) == [current_record(expected2)]
    assert ctx.member_state(M1) is STABLE
    assert_join_timeout(ctx, M1, None)
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=M1, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, M1, 5000)
    assert_sync_timeout(ctx, M1, 500)
    synced, _ = c.sync(M1, 11)
    assert sorted_assignment(synced.assignment) == sorted_assignment(
        Assignment({"foo": (0, 1), "zar": (0,)}).encode())


# ---------------------------------------------------------------------------- SyncGroup
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_classic_group_sync_to_consumer_group_with_all_consumer_protocol_versions(version: int) -> None:
    ctx = Context([foo(6), bar(3)], consumer_group_migration_policy="downgrade")
    owned = {FOO: (0, 1, 2), BAR: (0, 1)}
    ps = protocols(("foo", "bar"), owned, version)
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, STABLE, assigned=owned, classic=ps)
    m2 = Member(M2, ("foo", "bar"), 10, 9, STABLE, assigned={FOO: (3, 4, 5), BAR: (2,)},
                server_assignor=None)
    build(ctx, 10, [m1, m2], {M1: owned, M2: {FOO: (3, 4, 5), BAR: (2,)}}, 10)
    resp, records = Classic(ctx).sync(M1, 10)
    assert records_of_kind(records) == []
    assert resp.error is Error.NONE and (resp.protocol_type, resp.protocol_name) == ("consumer", "range")
    want = Assignment({"foo": (0, 1, 2), "bar": (0, 1)}).encode(version)
    assert sorted_assignment(resp.assignment) == sorted_assignment(want)
    assert_session_timeout(ctx, M1, SESSION_MS)
    assert_sync_timeout(ctx, M1, None)


def records_of_kind(records: Sequence[Record]) -> list[Record]:
    """What Kafka's CoordinatorResult holds: the records written (timers are not records)."""
    return [x for x in records if x.persisted]


def test_classic_group_sync_to_consumer_group_with_unknown_member_id() -> None:
    ctx = Context(consumer_group_migration_policy="downgrade")
    build(ctx, 10, [Member(M1, server_assignor=None)])
    c = Classic(ctx)
    assert c.sync("unknown", 10)[0].error is Error.UNKNOWN_MEMBER_ID
    assert c.sync(M1, 10, instance_id="unknown-instance-id")[0].error is Error.UNKNOWN_MEMBER_ID
    assert c.sync(M1, 10)[0].error is Error.UNKNOWN_MEMBER_ID  # not a classic member


def test_classic_group_sync_to_consumer_group_with_fenced_instance_id() -> None:
    ctx = Context(consumer_group_migration_policy="downgrade")
    build(ctx, 10, [Member(M1, instance_id="instance-id", server_assignor=None)])
    resp, _ = Classic(ctx).sync("another", 10, instance_id="instance-id")
    assert resp.error is Error.FENCED_INSTANCE_ID


def test_classic_group_sync_to_consumer_group_with_inconsistent_group_protocol() -> None:
    ctx = Context(consumer_group_migration_policy="downgrade")
    build(ctx, 10, [ClassicMember(M1, (), 10)])
    c = Classic(ctx)
    assert c.sync(M1, 10, protocol_name="roundrobin")[0].error is Error.INCONSISTENT_GROUP_PROTOCOL
    assert c.sync(M1, 10, protocol_type="connect")[0].error is Error.INCONSISTENT_GROUP_PROTOCOL
    # null protocol type or name pass the check
    resp, _ = c.sync(M1, 10, protocol_name=None, protocol_type=None)
    assert resp.error is Error.NONE and (resp.protocol_type, resp.protocol_name) == (None, None)
    assert sorted_assignment(resp.assignment) == sorted_assignment(Assignment().encode(3))
    assert_session_timeout(ctx, M1, SESSION_MS)
    assert_sync_timeout(ctx, M1, None)


def test_classic_group_sync_to_consumer_group_with_illegal_generation() -> None:
    ctx = Context(consumer_group_migration_policy="downgrade")
    build(ctx, 10, [ClassicMember(M1, (), 10)])
    assert Classic(ctx).sync(M1, 9)[0].error is Error.ILLEGAL_GENERATION


def test_classic_group_sync_to_consumer_group_rebalance_in_progress() -> None:
    ctx = Context(consumer_group_migration_policy="downgrade")
    build(ctx, 11, [ClassicMember(M1, (), 10, rebalance_timeout_ms=10_000)])
    assert Classic(ctx).sync(M1, 10)[0].error is Error.REBALANCE_IN_PROGRESS
    assert_join_timeout(ctx, M1, 10_000)


# ---------------------------------------------------------------------------- Heartbeat
def test_classic_group_heartbeat_to_consumer_group_maintains_session() -> None:
    ctx = Context()
    build(ctx, 10, [ClassicMember(M1, (), 10)])
    c = Classic(ctx)
    c.heartbeat(M1, 10)
    assert_session_timeout(ctx, M1, SESSION_MS)
    for _ in range(2):
        fired, records = ctx.sleep(SESSION_MS // 2)
        assert fired == [] and records == []
        resp, _ = c.heartbeat(M1, 10)
        assert resp.error is Error.NONE
        assert_session_timeout(ctx, M1, SESSION_MS)


def test_classic_group_heartbeat_to_consumer_group_rebalance_in_progress() -> None:
    ctx = Context()
    m1 = ClassicMember(M1, (), 9, rebalance_timeout_ms=10_000)
    m2 = ClassicMember(M2, (), 10, state=UNREVOKED, rebalance_timeout_ms=10_000, pending={FOO: (0,)})
    m3 = ClassicMember(M3, (), 10, state=UNRELEASED, rebalance_timeout_ms=10_000, assigned={BAR: (0,)})
    build(ctx, 10, [m1, m2, m3], {M3: {BAR: (0, 1, 2)}})
    c = Classic(ctx)
    for mid in (M1, M2, M3):
        resp, records = c.heartbeat(mid, 9 if mid == M1 else 10)
        assert records_of_kind(records) == []
        assert resp.error is Error.REBALANCE_IN_PROGRESS
        assert_session_timeout(ctx, mid, SESSION_MS)
        assert_join_timeout(ctx, mid, 10_000)


def test_classic_group_heartbeat_to_consumer_with_unknown_member() -> None:
    ctx = Context()
    build(ctx, 10, [ClassicMember(M1, (), 10)])
    c = Classic(ctx)
    assert c.heartbeat("unknown-member-id", 10)[0].error is Error.UNKNOWN_MEMBER_ID
    assert c.heartbeat("unknown-member-id", 10, "unknown-instance-id")[0].error is Error.UNKNOWN_MEMBER_ID


def test_classic_group_heartbeat_to_consumer_with_fenced_instance_id() -> None:
    ctx = Context()
    build(ctx, 10, [ClassicMember(M1, (), 10, instance_id="instance-id")])
    assert Classic(ctx).heartbeat("unknown-member-id", 10, "instance-id")[0].error \
        is Error.FENCED_INSTANCE_ID


def test_classic_group_heartbeat_to_consumer_with_illegal_generation_id() -> None:
    ctx = Context()
    build(ctx, 10, [ClassicMember(M1, (), 10)])
    assert Classic(ctx).heartbeat(M1, 9)[0].error is Error.ILLEGAL_GENERATION


def test_classic_group_heartbeat_to_consumer_with_member_not_using_classic_protocol() -> None:
    ctx = Context()
    build(ctx, 10, [Member(M1, (), 10, server_assignor=None)])
    assert Classic(ctx).heartbeat(M1, 10)[0].error is Error.UNKNOWN_MEMBER_ID


# ---------------------------------------------------------------------------- timeouts
def _two_members_one_classic(ctx: Context) -> None:
    m1 = ClassicMember(M1, ("foo",), 10, 9, assigned={FOO: (0,)}, rebalance_timeout_ms=500)
    m2 = Member(M2, ("foo",), 10, 9, assigned={FOO: (1,)}, server_assignor=None)
    build(ctx, 10, [m1, m2], {M1: {FOO: (0,)}, M2: {FOO: (1,)}}, 10)


def test_consumer_group_member_using_classic_protocol_fenced_when_session_timeout() -> None:
    ctx = Context([foo(2)])
    _two_members_one_classic(ctx)
    Classic(ctx).heartbeat(M1, 10)  # schedules the session timeout
    fired, records = ctx.sleep(SESSION_MS)
    assert [(e.member_id, e.kind.name) for e in fired] == [(M1, "ExpireConsumerSession")]
    assert records_of_kind(records) == [
        cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M1, None),
        cr.ConsumerGroupTargetAssignmentRecord(GROUP, M1, None),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, None),
        epoch_record(11, ctx.metadata_hash({"foo"})),
    ]
    assert M1 not in ctx.group().members


def test_consumer_group_member_using_classic_protocol_fenced_when_join_timeout() -> None:
    ctx = Context([foo(2)])
    _two_members_one_classic(ctx)
    ctx.replay(epoch_record(11, ctx.metadata_hash({"foo"})))  # a new epoch: M1 must rejoin
    resp, _ = Classic(ctx).heartbeat(M1, 10)
    assert resp.error is Error.REBALANCE_IN_PROGRESS
    assert_join_timeout(ctx, M1, 500)
    fired, records = ctx.sleep(500)
    assert [(e.member_id, e.kind.name) for e in fired] == [(M1, "ExpireConsumerClassicJoin")]
    assert records_of_kind(records)[:3] == [
        cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M1, None),
        cr.ConsumerGroupTargetAssignmentRecord(GROUP, M1, None),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, None),
    ]
    assert M1 not in ctx.group().members and ctx.group().classic_join_deadlines == {}


def test_last_consumer_protocol_member_leaving_consumer_group() -> None:
    # convertToClassicGroup: the consumer group's tombstones, then the classic group's record
    # (Stable at the group epoch, member 1 with its target as its assignment); then member
    # 1's heartbeat and a rebalance (PreparingRebalance, a join timer)
    owned = {FOO: (0, 1, 2), BAR: (0, 1)}
    ps = protocols(("foo", "bar"), owned)
    ctx = Context([foo(6), bar(3)], consumer_group_migration_policy="downgrade")
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, assigned=owned, rebalance_timeout_ms=45_000,
                       classic=ps, server_assignor="range")
    m2 = Member(M2, ("foo", "bar"), 10, 9, assigned={FOO: (3, 4, 5), BAR: (2,)}, rebalance_timeout_ms=45_000)
    build(ctx, 10, [m1, m2], {M1: owned, M2: {FOO: (3, 4, 5), BAR: (2,)}}, 10)
    resp, records = ctx.heartbeat(member_id=M2, member_epoch=-1, rebalance_timeout_ms=5000,
                                  subscribed_topic_names=("foo", "bar"), topic_partitions=())
    assert resp.error is Error.NONE and resp.member_epoch == -1
    got = records_of_kind(records)
    assert sorted(map(repr, got[0:2])) == sorted(map(repr, [
        cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M1, None), cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M2, None)]))
    assert sorted(map(repr, got[2:4])) == sorted(map(repr, [
        cr.ConsumerGroupTargetAssignmentRecord(GROUP, M1, None), cr.ConsumerGroupTargetAssignmentRecord(GROUP, M2, None)]))
    assert got[4] == cr.ConsumerGroupTargetAssignmentEpochRecord(GROUP, None)
    assert sorted(map(repr, got[5:7])) == sorted(map(repr, [
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, None), cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M2, None)]))
    assert got[7] == cr.ConsumerGroupEpochRecord(GROUP, None)
    [persisted] = got[8:]
    assert isinstance(persisted, r.GroupMetadataPersisted)
    snap = persisted.snapshot
    assert (snap.protocol_type, snap.generation_id, snap.protocol_name, snap.leader_id) == ("consumer", 10, "range", M1)
    [member] = snap.members
    assert (member.info.member_id, member.rebalance_timeout_ms, member.session_timeout_ms) == (M1, 45_000, SESSION_MS)
    assert sorted_assignment(member.assignment) == sorted_assignment(
        Assignment({"foo": (0, 1, 2), "bar": (0, 1)}).encode())
    classic = ctx.state.groups[GROUP]
    assert GROUP not in ctx.state.consumer_groups
    assert classic.state.value == "PreparingRebalance" and classic.join_timer is not None
    assert classic.members[M1].heartbeat_deadline_ms == ctx.now + SESSION_MS


# ---------------------------------------------------------------------------- online upgrade
def _stable_classic_group(ctx: Context, assignment: bytes, generation: int = 0) -> None:
    """A Stable classic group with member-id-1 (client-id, client-host, rebalance 10 s,
    session 5 s, protocol "range" subscribing foo and bar and owning foo-0, bar-0), as
    ``context.replay(newGroupMetadataRecord(group, assignments))`` loads it."""
    sub = Subscription(("foo", "bar"), owned_partitions={"foo": (0,), "bar": (0,)}).encode()
    member = r.PersistedMember(
        r.MemberInfo("member-id-1", None, "client-id", "client-host", "consumer"),
        rebalance_timeout_ms=10_000, session_timeout_ms=5000,
        protocols=(m.JoinGroupProtocol("range", sub),), assignment=assignment)
    ctx.replay(r.GroupLoaded(GROUP, r.GroupSnapshot(
        protocol_type="consumer", generation_id=generation, protocol_name="range",
        leader_id="member-id-1", state_timestamp_ms=0, members=(member,)), (), ctx.now))


def test_consumer_group_heartbeat_with_stable_classic_group(assignor: MockAssignor) -> None:
    ctx = Context([foo(1), bar(1)], consumer_group_migration_policy="upgrade")
    assignor.prepare({"member-id-1": {FOO: (0,)}, "member-id-2": {BAR: (0,)}})
    _stable_classic_group(ctx, Assignment({"foo": (0,), "bar": (0,)}).encode())
    resp, records = ctx.heartbeat(member_id="member-id-2", member_epoch=0, rebalance_timeout_ms=5000,
                                  server_assignor="range", subscribed_topic_names=("foo", "bar"),
                                  topic_partitions=())
    assert resp.error is Error.NONE and resp.member_epoch == 1
    sub = Subscription(("foo", "bar"), owned_partitions={"foo": (0,), "bar": (0,)}).encode()
    member1 = dataclasses.replace(ClassicMember(
        "member-id-1", ("foo", "bar"), 0, 0, STABLE, rebalance_timeout_ms=10_000,
        assigned={FOO: (0,), BAR: (0,)}, classic=(cr.ClassicProtocol("range", sub),)))
    member1_sub = dataclasses.replace(member1.subscription(), client_id="client-id", client_host="client-host")
    member2 = Member("member-id-2", ("foo", "bar"), 1, 0, UNRELEASED, rebalance_timeout_ms=5000, assigned={})
    hash_ = ctx.metadata_hash({"foo", "bar"})
    want = [
        r.GroupTombstoned(GROUP),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, "member-id-1", member1_sub),
        epoch_record(0, hash_),
        target_record("member-id-1", {FOO: (0,), BAR: (0,)}),
        target_epoch_record(0),
        current_record(member1),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, "member-id-2", member2.subscription()),
        epoch_record(1, hash_),
    ]
    got = records_of_kind(records)
    assert got[:len(want)] == want
    # the new target (both members', in the order of Kafka's map), its epoch, member 2
    assert sorted(map(repr, got[len(want):len(want) + 2])) == sorted(map(repr, [
        target_record("member-id-2", {BAR: (0,)}), target_record("member-id-1", {FOO: (0,)})]))
    assert got[len(want) + 2:] == [target_epoch_record(1), current_record(member2)]
    assert ctx.session_deadline("member-id-1") == ctx.now + 5000
    assert ctx.session_deadline("member-id-2") == ctx.now + 45_000
    assert GROUP not in ctx.state.groups


@pytest.mark.parametrize(("user_data", "upgraded"), [(None, True), (b"", True), (b"\x01", False)])
def test_consumer_group_heartbeat_with_custom_assignor_classic_group(
        assignor: MockAssignor, user_data: bytes | None, upgraded: bool) -> None:
    # a custom assignor's user data would be lost: no upgrade (UnsupportedVersionException
    # answered GROUP_ID_NOT_FOUND)
    ctx = Context([foo(1), bar(1)], consumer_group_migration_policy="upgrade")
    assignor.prepare({"member-id-1": {FOO: (0,)}, "member-id-2": {BAR: (0,)}})
    _stable_classic_group(ctx, Assignment({"foo": (0,), "bar": (0,)}, user_data).encode())
    resp, _ = ctx.heartbeat(member_id="member-id-2", member_epoch=0, rebalance_timeout_ms=5000,
                            server_assignor="range", subscribed_topic_names=("foo", "bar"),
                            topic_partitions=())
    if upgraded:
        assert resp.error is Error.NONE and GROUP in ctx.state.consumer_groups
    else:
        assert resp.error is Error.GROUP_ID_NOT_FOUND
        assert resp.error_message == ("Cannot upgrade classic group fooup to consumer group because an "
                                      "unsupported custom assignor is in use. Please refer to the "
                                      "documentation or switch to a default assignor before "
                                      "re-attempting the upgrade.")
        assert GROUP in ctx.state.groups and GROUP not in ctx.state.consumer_groups

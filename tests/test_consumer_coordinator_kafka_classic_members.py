"""Kafka's own tests of classic members in consumer groups (KIP-848 mixed groups), run against
the reference coordinator.

Ported from Apache Kafka 4.1.2, group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/GroupMetadataManagerTest.java: the classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup
tests (new, static and replacing members, eager and cooperative reconciliation, batch and
admin-client LeaveGroup), the classic members' timeouts, a regex member replaced by a classic
one and regexes dropped with the members an admin removes. The harness is
tests/test_consumer_coordinator_kafka.py (its docstring says how Kafka's test context maps onto
the reference). Each test is named after the Java one. Kafka's ``assertResponseEquals``
compares SyncGroup assignments after sorting their partitions
(Assertions.assertSyncGroupResponse), so do these tests.

The online downgrade a classic static member's JoinGroup causes by replacing the last
consumer-protocol member is modelled (coordinator/consumer/migration.py); its Kafka test and
the other conversion tests (testConsumerGroupHeartbeatToClassicGroup*, testLastConsumerProtocol-
Member*TimeoutInConsumerGroup, ...) belong to tests/test_consumer_coordinator_kafka_migration.py.

Left out, because the reference does not model them (docs/deviations.md): failed appends
(testJoiningConsumerGroupFailingToPersistRecords; the rollback that ends
testLastConsumerProtocolMemberLeavingConsumerGroupByAdminApi and the
testConsumerGroupHeartbeatWith*ClassicGroup tests), the ConsumerGroupPartitionMetadata
tombstone a downgrade writes (no such record kind here), metrics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

import groupspec.coordinator.consumer.heartbeat as heartbeat_module
from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    SubscribedTopicMetadata,
    TopicMetadata,
)
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
    assert_records,
    assert_unordered_records,
    assignor,
    bar,
    current_record,
    epoch_record,
    foo,
    removal_records,
    target_epoch_record,
    target_record,
    zar,
)

__all__ = ["assignor"]  # the fixture, used by name

M4 = "member-4-71d5a3c9"
SESSION_MS = 5000
#: JoinGroupRequestBuilder's session and rebalance timeouts
JOIN_SESSION_MS = JOIN_REBALANCE_MS = 500
#: the tests call the shard, past the service's session-timeout bounds; the reference's
#: coordinator checks them, so they are lowered to admit JoinGroupRequestBuilder's
SHARD: dict[str, Any] = {"group_min_session_timeout_ms": JOIN_SESSION_MS}


def protocols(topics: Sequence[str] = ("foo",), owned: Parts | None = None,
              version: int = 3, name: str = "range") -> tuple[cr.ClassicProtocol, ...]:
    """A member's supported protocols: one, whose metadata is its subscription."""
    names = {FOO: "foo", BAR: "bar", ZAR: "zar"}
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

    def leave(self, *identities: tuple[str, str | None]) -> tuple[m.LeaveGroupResponse, list[Record]]:
        """LeaveGroup naming (member id, instance id) pairs; "" as the member id with an
        instance id is the admin client's removal (RemoveMembersFromConsumerGroup)."""
        return self.send(m.LeaveGroupRequest(group_id=GROUP, members=tuple(
            m.MemberIdentity(mid, iid) for mid, iid in identities)))

    def verify_sync(self, member_id: str, generation_id: int, partitions: dict[str, tuple[int, ...]],
                    session_timeout_ms: int = SESSION_MS) -> None:
        """verifyClassicGroupSyncToConsumerGroup: no record, the member's partitions (in the
        highest assignment version), the session renewed, the sync timeout cancelled."""
        synced, records = self.sync(member_id, generation_id)
        assert records_of_kind(records) == []
        assert synced.error is Error.NONE
        assert (synced.protocol_type, synced.protocol_name) == ("consumer", "range")
        assert sorted_assignment(synced.assignment) == sorted_assignment(Assignment(partitions).encode())
        assert_session_timeout(self.ctx, member_id, session_timeout_ms)
        assert_sync_timeout(self.ctx, member_id, None)


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


class NoOpAssignor:
    """NoOpPartitionAssignor: every member keeps its current target."""

    def assign(self, spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
        return {x.member_id: dict(x.assignment) for x in spec.members}


@pytest.fixture
def noop(monkeypatch: pytest.MonkeyPatch) -> NoOpAssignor:
    """The test context configured with NoOpPartitionAssignor as its only assignor."""
    mock = NoOpAssignor()
    monkeypatch.setattr(heartbeat_module, "get_server_assignor", lambda name: mock)
    return mock


def test_joining_consumer_group_with_new_static_member(noop: NoOpAssignor) -> None:
    ctx = Context([foo(2), bar(1)], **SHARD)
    ctx.build_group(10, [Member(M1, (), 10, 10, assigned={FOO: (0, 1)}, server_assignor=None)],
                    {M1: {FOO: (0, 1)}}, 10, ctx.metadata_hash({"foo"}))
    ps = protocols(("foo", "bar"), {})
    # a static member is given its member id at once (no MEMBER_ID_REQUIRED)
    joined, records = Classic(ctx).join(ps=ps, instance_id="instance-id", version=3)
    new = joined.member_id
    assert new not in ("", M1)
    expected = ClassicMember(new, ("foo", "bar"), 11, 0, STABLE, instance_id="instance-id",
                             rebalance_timeout_ms=500, classic=ps, session_timeout_ms=JOIN_SESSION_MS)
    assert records_of_kind(records) == [
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new, expected.subscription()),
        epoch_record(11, ctx.metadata_hash({"foo", "bar"})),
        target_record(new, {}),
        target_epoch_record(11),
        current_record(expected),
    ]
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=new, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, new, JOIN_SESSION_MS)
    assert_sync_timeout(ctx, new, JOIN_REBALANCE_MS)


def test_joining_consumer_group_replacing_existing_static_member(noop: NoOpAssignor) -> None:
    # the replaced member is the group's only one and uses the consumer protocol, but the
    # policy (disabled) allows no downgrade: the classic member takes its place and target
    ctx = Context([foo(2)], consumer_group_migration_policy="disabled", **SHARD)
    old = Member(M1, ("foo",), 10, 10, STABLE, instance_id="instance-id", rebalance_timeout_ms=500,
                 assigned={FOO: (0, 1)}, server_assignor=None)
    build(ctx, 10, [old], {M1: {FOO: (0, 1)}}, 10)
    ctx.group().metadata_refresh_epoch = 10  # setMetadataRefreshDeadline(MAX, 10)
    ps = protocols(("foo",), {})
    joined, records = Classic(ctx).join(ps=ps, instance_id="instance-id", version=4)
    new = joined.member_id
    assert new not in ("", M1)
    copied = dataclasses.replace(old, member_id=new, member_epoch=0, previous_member_epoch=0)
    expected = ClassicMember(new, ("foo",), 10, 0, STABLE, instance_id="instance-id",
                             rebalance_timeout_ms=500, assigned={FOO: (0, 1)}, classic=ps,
                             session_timeout_ms=JOIN_SESSION_MS)
    assert_records([
        *removal_records(M1),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new, copied.subscription()),
        target_record(new, {FOO: (0, 1)}),
        current_record(copied),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new, expected.subscription()),
        current_record(expected),
    ], records)
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=new, generation_id=10,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, new, JOIN_SESSION_MS)
    assert_sync_timeout(ctx, new, JOIN_REBALANCE_MS)


def test_joining_consumer_group_with_existing_static_member_and_new_subscription(
        assignor: MockAssignor) -> None:
    ctx = Context([foo(2), bar(1), zar(1)], **SHARD)
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 10, STABLE, instance_id="instance-id",
                       rebalance_timeout_ms=500, assigned={FOO: (0,), BAR: (0,)},
                       classic=protocols(("foo", "bar"), {FOO: (0, 1)}))
    m2 = Member(M2, ("foo", "bar"), 10, 10, STABLE, rebalance_timeout_ms=500, assigned={FOO: (1,)},
                server_assignor=None)
    ctx.build_group(10, [m1, m2], {M1: {FOO: (0,), BAR: (0,)}, M2: {FOO: (1,)}}, 10,
                    ctx.metadata_hash({"foo", "bar", "zar"}))
    ctx.group().metadata_refresh_epoch = 11  # setMetadataRefreshDeadline(MAX, 11)
    assignor.prepare({M1: {FOO: (0,), ZAR: (0,)}, M2: {BAR: (0,), FOO: (1,)}})
    # member 1 rejoins with a new subscription, naming its member id only (no instance id)
    ps = protocols(("foo", "bar", "zar"), {})
    joined, records = Classic(ctx).join(M1, ps, version=3)
    expected = ClassicMember(M1, ("foo", "bar", "zar"), 11, 10, STABLE, instance_id="instance-id",
                             rebalance_timeout_ms=500, assigned={FOO: (0,), ZAR: (0,)}, classic=ps,
                             session_timeout_ms=JOIN_SESSION_MS)
    assert_unordered_records([
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, expected.subscription())],
        [epoch_record(11, ctx.metadata_hash({"foo", "bar", "zar"}))],
        [target_record(M1, {FOO: (0,), ZAR: (0,)}), target_record(M2, {BAR: (0,), FOO: (1,)})],
        [target_epoch_record(11)],
        [current_record(expected)],
    ], records)
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=M1, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, M1, JOIN_SESSION_MS)
    assert_sync_timeout(ctx, M1, JOIN_REBALANCE_MS)


def test_reconciliation_in_joining_consumer_group_with_cooperative_protocol(assignor: MockAssignor) -> None:
    ctx = Context([foo(2), bar(1), zar(1)], **SHARD)
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 10, STABLE, rebalance_timeout_ms=500,
                       assigned={FOO: (0,), BAR: (0,)},
                       classic=protocols(("foo", "bar"), {FOO: (0,), BAR: (0,)}))
    m2 = Member(M2, ("foo", "bar"), 10, 10, STABLE, rebalance_timeout_ms=500, assigned={FOO: (1,)},
                server_assignor=None)
    build(ctx, 10, [m1, m2], {M1: {FOO: (0,), BAR: (0,)}, M2: {FOO: (1,)}}, 10)
    ctx.group().metadata_refresh_epoch = 11  # setMetadataRefreshDeadline(MAX, 11)
    # member 1 must revoke bar-0, member 2 foo-1
    assignor.prepare({M1: {FOO: (0, 1), ZAR: (0,)}, M2: {BAR: (0,)}})
    c = Classic(ctx)

    # 1. member 1 rejoins with a new subscription, still owning foo-0 and bar-0: it revokes
    ps1 = protocols(("foo", "bar", "zar"), {FOO: (0,), BAR: (0,)})
    joined, records = c.join(M1, ps1, session_timeout_ms=5000, version=3)
    expected1 = ClassicMember(M1, ("foo", "bar", "zar"), 10, 10, UNREVOKED, rebalance_timeout_ms=500,
                              assigned={FOO: (0,)}, pending={BAR: (0,)}, classic=ps1)
    assert_unordered_records([
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, expected1.subscription())],
        [epoch_record(11, ctx.metadata_hash({"foo", "bar", "zar"}))],
        [target_record(M1, {FOO: (0, 1), ZAR: (0,)}), target_record(M2, {BAR: (0,)})],
        [target_epoch_record(11)],
        [current_record(expected1)],
    ], records)
    assert ctx.member_state(M1) is UNREVOKED
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=M1, generation_id=10,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, M1, 5000)
    assert_sync_timeout(ctx, M1, 500)
    c.verify_sync(M1, 10, {"foo": (0,)})
    assert c.heartbeat(M1, 10)[0].error is Error.REBALANCE_IN_PROGRESS
    assert_join_timeout(ctx, M1, 500)

    # 2. it rejoins without bar-0: UNREVOKED_PARTITIONS to UNRELEASED_PARTITIONS (foo-1 is
    # still member 2's)
    ps2 = protocols(("foo", "bar", "zar"), {FOO: (0,)})
    joined, records = c.join(M1, ps2, session_timeout_ms=5000, version=3)
    expected2 = dataclasses.replace(expected1, member_epoch=11, state=UNRELEASED, pending=None,
                                    assigned={FOO: (0,), ZAR: (0,)}, classic=ps2)
    assert_records([cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, expected2.subscription()),
                    current_record(expected2)], records)
    assert ctx.member_state(M1) is UNRELEASED
    assert_join_timeout(ctx, M1, None)
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=M1, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, M1, 5000)
    assert_sync_timeout(ctx, M1, 500)
    c.verify_sync(M1, 11, {"foo": (0,), "zar": (0,)})

    # 3. member 2 revokes foo-1; member 1 is told to rejoin, and gets it: STABLE
    ctx.heartbeat(member_id=M2, member_epoch=10, topic_partitions=())
    assert c.heartbeat(M1, 11)[0].error is Error.REBALANCE_IN_PROGRESS
    assert_join_timeout(ctx, M1, 500)
    ps3 = protocols(("foo", "bar", "zar"), {FOO: (0,), ZAR: (0,)})
    joined, records = c.join(M1, ps3, session_timeout_ms=5000, version=3)
    expected3 = dataclasses.replace(expected2, state=STABLE, previous_member_epoch=11,
                                    assigned={FOO: (0, 1), ZAR: (0,)}, classic=ps3)
    assert_records([cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, expected3.subscription()),
                    current_record(expected3)], records)
    assert ctx.member_state(M1) is STABLE
    assert_join_timeout(ctx, M1, None)
    assert joined == m.JoinGroupResponse(error=Error.NONE, member_id=M1, generation_id=11,
                                         protocol_type="consumer", protocol_name="range")
    assert_session_timeout(ctx, M1, 5000)
    assert_sync_timeout(ctx, M1, 500)
    c.verify_sync(M1, 11, {"foo": (0, 1), "zar": (0,)})


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
    assert got[7:9] == [cr.ConsumerGroupSubscriptionMetadataRecord(GROUP, None), cr.ConsumerGroupEpochRecord(GROUP, None)]
    [persisted] = got[9:]
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


# ---------------------------------------------------------------------------- LeaveGroup
def _left(member_id: str, instance_id: str | None, error: Error = Error.NONE) -> m.LeaveGroupMemberResponse:
    return m.LeaveGroupMemberResponse(member_id, instance_id, error)


def test_consumer_group_member_using_classic_protocol_batch_leave_group() -> None:
    ctx = Context([foo(2), bar(1)], **SHARD)
    ps1 = protocols(("foo", "bar"), {FOO: (0,)})
    ps2 = protocols(("foo", "bar"), {FOO: (1,)})
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, rebalance_timeout_ms=45_000, assigned={FOO: (0,)},
                       classic=ps1, server_assignor="range")
    m2 = ClassicMember(M2, ("foo", "bar"), 9, 8, instance_id="instance-id-2", rebalance_timeout_ms=45_000,
                       assigned={FOO: (1,)}, classic=ps2, server_assignor="range")
    m3 = Member(M3, ("foo", "bar"), 10, 9, instance_id="instance-id-3", rebalance_timeout_ms=45_000,
                assigned={BAR: (0,)})
    build(ctx, 10, [m1, m2, m3], {M1: {FOO: (0,)}, M2: {FOO: (1,)}, M3: {BAR: (0,)}}, 10)
    ctx.group().metadata_refresh_epoch = 10  # setMetadataRefreshDeadline(MAX, 10)
    c = Classic(ctx)
    # member 1 joins (a session and a sync timeout), member 2 heartbeats (a session and a
    # join timeout: it is behind the group epoch)
    c.join(M1, ps1, rebalance_timeout_ms=45_000, session_timeout_ms=SESSION_MS, version=3)
    assert_sync_timeout(ctx, M1, 45_000)
    assert_session_timeout(ctx, M1, SESSION_MS)
    c.heartbeat(M2, 9)
    assert_join_timeout(ctx, M2, 45_000)
    assert_session_timeout(ctx, M2, SESSION_MS)

    resp, records = c.leave(
        (M1, None),                            # a member id
        ("", "instance-id-2"),                 # an instance id alone (the admin client's)
        (M3, "instance-id-3"),                 # a member that does not use the classic protocol
        ("unknown-member-id", None),           # unknown member id
        ("", "unknown-instance-id"),           # unknown instance id
        ("unknown-member-id", "instance-id-3"),  # fenced instance id
    )
    assert resp == m.LeaveGroupResponse(error=Error.NONE, members=(
        _left(M1, None),
        _left("", "instance-id-2"),
        _left(M3, "instance-id-3"),
        _left("unknown-member-id", None, Error.UNKNOWN_MEMBER_ID),
        _left("", "unknown-instance-id", Error.UNKNOWN_MEMBER_ID),
        _left("unknown-member-id", "instance-id-3", Error.FENCED_INSTANCE_ID),
    ))
    assert_unordered_records([
        [*removal_records(M1), *removal_records(M2), *removal_records(M3)],
        [epoch_record(11, 0)],  # nobody subscribes to anything any more
    ], records)
    assert ctx.session_deadline(M1) is None and ctx.session_deadline(M2) is None
    assert_sync_timeout(ctx, M1, None)
    assert_join_timeout(ctx, M2, None)


def test_consumer_group_member_using_classic_protocol_batch_leave_group_updating_subscription_metadata() -> None:
    ctx = Context([foo(2), bar(1)], **SHARD)
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, rebalance_timeout_ms=45_000, assigned={FOO: (0,)},
                       classic=protocols(("foo", "bar"), {FOO: (0,)}), server_assignor="range")
    m2 = Member(M2, ("foo",), 10, 9, rebalance_timeout_ms=45_000, assigned={BAR: (0,)})
    build(ctx, 10, [m1, m2], {M1: {FOO: (0,)}, M2: {BAR: (0,)}}, 10)
    ctx.group().metadata_refresh_epoch = 10  # setMetadataRefreshDeadline(MAX, 10)
    resp, records = Classic(ctx).leave((M1, None))
    assert resp == m.LeaveGroupResponse(error=Error.NONE, members=(_left(M1, None),))
    # the metadata hash of the topics member 2 subscribes to, bar no longer among them
    assert_records([*removal_records(M1), epoch_record(11, ctx.metadata_hash({"foo"}))], records)


def test_classic_group_leave_to_consumer_group_without_valid_leave_group_member() -> None:
    ctx = Context(**SHARD)
    build(ctx, 10, [Member(M1, server_assignor=None)])
    resp, records = Classic(ctx).leave(("unknown-member-id", None))
    assert resp == m.LeaveGroupResponse(error=Error.NONE, members=(
        _left("unknown-member-id", None, Error.UNKNOWN_MEMBER_ID),))
    assert records_of_kind(records) == []


def test_last_consumer_protocol_member_leaving_consumer_group_by_admin_api(assignor: MockAssignor) -> None:
    # members 2, 3 and 4 leave (4 by its instance id alone, as the admin client removes
    # it): only classic member 1 would remain, so the group is downgraded
    ctx = Context([foo(2), bar(2)], consumer_group_migration_policy="downgrade", **SHARD)
    ps1 = protocols(("foo", "bar"), {FOO: (0,)})
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, rebalance_timeout_ms=45_000, assigned={FOO: (0,)},
                       classic=ps1, server_assignor="range")
    m2 = ClassicMember(M2, ("foo", "bar"), 10, 9, instance_id="instance-id-2", rebalance_timeout_ms=45_000,
                       assigned={FOO: (1,)}, classic=protocols(("foo", "bar"), {FOO: (1,)}),
                       server_assignor="range")
    m3 = Member(M3, ("foo", "bar"), 10, 9, rebalance_timeout_ms=45_000, assigned={BAR: (0,)})
    m4 = Member(M4, ("foo", "bar"), 10, 9, instance_id="instance-id-4", rebalance_timeout_ms=45_000,
                assigned={BAR: (1,)})
    build(ctx, 10, [m1, m2, m3, m4],
          {M1: {FOO: (0,)}, M2: {FOO: (1,)}, M3: {BAR: (0,)}, M4: {BAR: (1,)}}, 10)
    resp, records = Classic(ctx).leave((M2, None), (M3, None), ("", "instance-id-4"))
    assert resp == m.LeaveGroupResponse(error=Error.NONE, members=(
        _left(M2, None), _left(M3, None), _left("", "instance-id-4")))
    everyone = (M1, M2, M3, M4)
    # (Kafka also writes the ConsumerGroupPartitionMetadata tombstone, a record kind the
    # reference does not have: docs/deviations.md)
    got = records_of_kind(records)
    assert_unordered_records([
        [cr.ConsumerGroupCurrentAssignmentRecord(GROUP, x, None) for x in everyone],
        [cr.ConsumerGroupTargetAssignmentRecord(GROUP, x, None) for x in everyone],
        [cr.ConsumerGroupTargetAssignmentEpochRecord(GROUP, None)],
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, x, None) for x in everyone],
        [cr.ConsumerGroupSubscriptionMetadataRecord(GROUP, None)],
        [cr.ConsumerGroupEpochRecord(GROUP, None)],
        got[-1:],
    ], records)
    # the classic group's record: Stable at the group epoch, member 1 its leader and only
    # member, with its target as its assignment
    [persisted] = got[-1:]
    assert isinstance(persisted, r.GroupMetadataPersisted)
    snap = persisted.snapshot
    assert (snap.protocol_type, snap.generation_id, snap.protocol_name, snap.leader_id,
            snap.state_timestamp_ms) == ("consumer", 10, "range", M1, ctx.now)
    [member] = snap.members
    assert member.info == r.MemberInfo(M1, None, CLIENT_ID, CLIENT_HOST, "consumer")
    assert (member.rebalance_timeout_ms, member.session_timeout_ms) == (45_000, SESSION_MS)
    assert member.protocols == join_protocols(ps1)
    assert member.assignment == Assignment({"foo": (0,)}).encode()
    # member 1's heartbeat timeout, and a rebalance (its join timeout)
    classic = ctx.state.groups[GROUP]
    assert GROUP not in ctx.state.consumer_groups
    assert classic.members[M1].heartbeat_deadline_ms is not None
    assert classic.join_timer is not None
    assert classic.state.value == "PreparingRebalance"
    # (Kafka's test then rolls the write back: failed appends are not modelled)


# ---------------------------------------------------------------------------- regular expressions
@dataclasses.dataclass(frozen=True)
class RegexMember(Member):
    """A consumer-protocol member subscribing to a regular expression (and maybe names)."""

    regex: str = ""

    def subscription(self) -> cr.ConsumerGroupMemberMetadataValue:
        return dataclasses.replace(super().subscription(), subscribed_topic_regex=self.regex)


def resolved_record(regex: str, topics: Sequence[str]) -> Record:
    """newConsumerGroupRegularExpressionRecord(ResolvedRegularExpression(topics, 0, 0))."""
    return cr.ConsumerGroupRegularExpressionRecord(GROUP, regex, cr.ConsumerGroupRegularExpressionValue(
        topics=tuple(sorted(topics)), version=0, timestamp=0))


def build_with_regexes(ctx: Context, epoch: int, members: Sequence[Member], regexes: dict[str, Sequence[str]],
                       targets: dict[str, Parts], assignment_epoch: int, metadata_hash: int = 0) -> None:
    """ConsumerGroupBuilder.build with resolved regular expressions, in its order:
    subscriptions, regexes, group epoch, targets, target epoch, current assignments (the
    hash 0 unless withMetadataHash gives one)."""
    ctx.replay(*(cr.ConsumerGroupMemberSubscriptionRecord(GROUP, x.member_id, x.subscription())
                 for x in members))
    ctx.replay(*(resolved_record(rx, topics) for rx, topics in regexes.items()))
    ctx.replay(epoch_record(epoch, metadata_hash))
    ctx.replay(*(target_record(mid, a) for mid, a in targets.items()))
    ctx.replay(target_epoch_record(assignment_epoch))
    ctx.replay(*(current_record(x) for x in members))


def _regex_member_replaced_by_classic_member(assignor: MockAssignor, m1: RegexMember, m2: Member,
                                             regex_topics: Sequence[str], topics: Sequence[str],
                                             image: Sequence[TopicMetadata]) -> None:
    """testConsumerMemberWithRegexReplacedByClassicMemberWith{Same,Changed}Subscription: a
    static consumer-protocol member with a regex is replaced by a classic member subscribing
    to ``topics`` (no regex: a classic member cannot have one). The regex loses its last
    member (its tombstone) and the group epoch is bumped whatever the new subscription."""
    ctx = Context(image, **SHARD)
    assignor.prepare({})
    build_with_regexes(ctx, 10, [m1, m2], {m1.regex: regex_topics},
                       {M1: m1.assigned or {}, M2: m2.assigned or {}}, 10)
    ctx.group().metadata_refresh_epoch = 10  # setMetadataRefreshDeadline(MAX, 10)
    ps = protocols(topics, {})
    joined, records = Classic(ctx).join(ps=ps, instance_id="instance-id", rebalance_timeout_ms=5000,
                                        version=3)
    new = ctx.group().static_members["instance-id"]
    assert joined.member_id == new and new != M1
    copied = dataclasses.replace(m1, member_id=new, member_epoch=0, previous_member_epoch=0)
    expected = ClassicMember(new, tuple(topics), 11, 0, STABLE, instance_id="instance-id",
                             rebalance_timeout_ms=5000, server_assignor="range", assigned={}, classic=ps,
                             session_timeout_ms=JOIN_SESSION_MS)
    assert_unordered_records([
        # the previous member's tombstones, then its copy under the new member id
        *([x] for x in removal_records(M1)),
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new, copied.subscription())],
        [target_record(new, m1.assigned or {})],
        [current_record(copied)],
        # the classic member's subscription (no regex), the regex's tombstone, the bump
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new, expected.subscription())],
        [cr.ConsumerGroupRegularExpressionRecord(GROUP, m1.regex, None)],
        [epoch_record(11, ctx.metadata_hash({"foo"}))],
        # the new target (the assignor gives nobody anything), its epoch, the member's
        [target_record(new, {}), target_record(M2, {})],
        [target_epoch_record(11)],
        [current_record(expected)],
    ], records)


def test_consumer_member_with_regex_replaced_by_classic_member_with_same_subscription(
        assignor: MockAssignor) -> None:
    m1 = RegexMember(M1, ("foo",), 10, 10, STABLE, instance_id="instance-id", rebalance_timeout_ms=5000,
                     assigned={FOO: (0, 1, 2), BAR: (0,)}, regex="bar*")
    m2 = Member(M2, ("foo",), 10, 10, STABLE, rebalance_timeout_ms=5000, assigned={FOO: (3, 4, 5)})
    _regex_member_replaced_by_classic_member(assignor, m1, m2, ["bar"], ["foo"], [foo(6), bar(1)])


def test_consumer_member_with_regex_replaced_by_classic_member_with_changed_subscription(
        assignor: MockAssignor) -> None:
    m1 = RegexMember(M1, (), 10, 10, STABLE, instance_id="instance-id", rebalance_timeout_ms=5000,
                     assigned={FOO: (0, 1, 2)}, regex="foo*")
    m2 = Member(M2, ("foo",), 10, 10, STABLE, rebalance_timeout_ms=5000, assigned={FOO: (3, 4, 5)})
    _regex_member_replaced_by_classic_member(assignor, m1, m2, ["foo"], [], [foo(6)])


def test_resolved_regular_expressions_removed_when_consumer_members_removed_by_admin_api(
        assignor: MockAssignor) -> None:
    # members 1 and 2 are foo*'s only subscribers, 3 and 4 bar*'s: members 1 to 3 leave
    # (3 by its instance id alone): foo*'s tombstone, bar* kept for member 4
    ctx = Context([foo(6), bar(3)], **SHARD)
    assignor.prepare({})
    m1 = RegexMember(M1, (), 10, 10, STABLE, instance_id=M1, rebalance_timeout_ms=5000,
                     assigned={FOO: (0, 1, 2)}, regex="foo*")
    m2 = RegexMember(M2, (), 10, 10, STABLE, instance_id=M2, rebalance_timeout_ms=5000,
                     assigned={FOO: (3, 4, 5)}, regex="foo*")
    m3 = RegexMember(M3, (), 10, 10, STABLE, instance_id=M3, rebalance_timeout_ms=5000,
                     assigned={BAR: (0, 1)}, regex="bar*")
    m4 = RegexMember(M4, (), 10, 10, STABLE, instance_id=M4, rebalance_timeout_ms=5000,
                     assigned={BAR: (2,)}, regex="bar*")
    build_with_regexes(ctx, 10, [m1, m2, m3, m4], {"foo*": ["foo"], "bar*": ["bar"]},
                       {M1: {FOO: (0, 1, 2, 3, 4, 5)}, M2: {BAR: (0, 1, 2)}}, 10,
                       ctx.metadata_hash({"foo", "bar"}))
    resp, records = Classic(ctx).leave((M1, None), (M2, M2), ("", M3))
    assert resp == m.LeaveGroupResponse(error=Error.NONE, members=(
        _left(M1, None), _left(M2, M2), _left("", M3)))
    assert_unordered_records([
        [*removal_records(M1), *removal_records(M2), *removal_records(M3)],
        [cr.ConsumerGroupRegularExpressionRecord(GROUP, "foo*", None)],
        [epoch_record(11, ctx.metadata_hash({"bar"}))],
    ], records)


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

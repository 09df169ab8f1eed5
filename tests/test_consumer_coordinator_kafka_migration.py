"""Kafka's own tests of the online migration between the protocols (KIP-848): a classic group
upgraded to a consumer group by a ConsumerGroupHeartbeat, and a consumer group downgraded to a
classic group, run against the reference coordinator.

Ported from Apache Kafka 4.1.2, group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/GroupMetadataManagerTest.java (the testConsumerGroupHeartbeat*ClassicGroup*,
testClassicGroupJoinWithEmptyConsumerGroup, testLastConsumerProtocolMember* and
testNoConversionWhenSizeExceedsClassicMaxGroupSize tests); the harness is
tests/test_consumer_coordinator_kafka.py and the classic members' helpers are
tests/test_consumer_coordinator_kafka_classic_members.py. Each test is named after the Java
one; the earlier ports of this area (a stable classic group upgraded, the custom assignor, the
last consumer-protocol member leaving) are in the classic members' file.

Left out: a failed append rolling the conversion back (``context.rollback()``): the reference
has no failed writes. Kafka's tests draw random topic ids, so the order of records Kafka's
HashMaps decide (the target records of one assignment) is compared as a set, as the earlier
ports do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.records import Record
from tests.test_consumer_coordinator_kafka import (
    BAR,
    CLIENT_HOST,
    CLIENT_ID,
    FOO,
    GROUP,
    STABLE,
    UNRELEASED,
    ZAR,
    Context,
    Member,
    MockAssignor,
    assignor,
    bar,
    canonical_response,
    current_record,
    epoch_record,
    foo,
    request,
    target_epoch_record,
    target_record,
)
from tests.test_consumer_coordinator_kafka_classic_members import (
    SHARD,
    Classic,
    ClassicMember,
    records_of_kind,
)

__all__ = ["assignor"]  # the fixture, used by name

M1, M2, M3 = "member-id-1", "member-id-2", "member-id-3"
NAMES = {"foo": FOO, "bar": BAR}


def range_protocols(topics: Sequence[str], owned: Mapping[str, Sequence[int]]) -> tuple[m.JoinGroupProtocol, ...]:
    """A JoinGroup's protocols: "range" with the subscription (ConsumerProtocol's latest
    version) owning ``owned``."""
    sub = Subscription(tuple(topics), owned_partitions={t: tuple(ps) for t, ps in owned.items()})
    return (m.JoinGroupProtocol("range", sub.encode()),)


def classic_of(ps: Sequence[m.JoinGroupProtocol]) -> tuple[cr.ClassicProtocol, ...]:
    return tuple(cr.ClassicProtocol(p.name, p.metadata) for p in ps)


def stable_classic_group(ctx: Context, members: Sequence[tuple[str, tuple[m.JoinGroupProtocol, ...], bytes]],
                         generation: int = 1, instance_ids: Mapping[str, str] | None = None,
                         client: tuple[str, str] = ("client-id", "client-host")) -> None:
    """A Stable classic group of "consumer" members (client-id, client-host, rebalance 10 s,
    session 5 s, protocol "range") with these protocols and assignments, as
    ``context.replay(newGroupMetadataRecord(group, assignments))`` loads it (the Java tests'
    group went through one rebalance: generation 1)."""
    persisted = tuple(
        r.PersistedMember(
            r.MemberInfo(mid, (instance_ids or {}).get(mid), *client, "consumer"),
            rebalance_timeout_ms=10_000, session_timeout_ms=5000, protocols=ps, assignment=assignment)
        for mid, ps, assignment in members)
    ctx.replay(r.GroupLoaded(GROUP, r.GroupSnapshot(
        protocol_type="consumer", generation_id=generation, protocol_name="range",
        leader_id=members[0][0], state_timestamp_ms=0, members=persisted), (), ctx.now))


def heartbeat(ctx: Context, **fields: Any) -> tuple[ConsumerGroupHeartbeatResponse, list[Record], Any]:
    """A ConsumerGroupHeartbeat; also the coordinator's whole output (parked requests it
    answered)."""
    rid = 5000 + len(fields) + ctx.now
    out = ctx.coordinator.handle(rid, request(**fields), ctx.now)
    resp = out.response_to(rid)
    assert isinstance(resp, ConsumerGroupHeartbeatResponse)
    return canonical_response(resp), out.records, out


def classic_member(member_id: str, epoch: int, ps: Sequence[m.JoinGroupProtocol], assigned: Any) -> ClassicMember:
    """A classic member of the converted group (ConsumerGroupMember.Builder in the tests)."""
    return ClassicMember(member_id, ("foo", "bar"), epoch, epoch, rebalance_timeout_ms=10_000,
                         assigned=assigned, classic=classic_of(ps), server_assignor=None)


def converted_sub(member: ClassicMember) -> Record:
    sub = dataclasses.replace(member.subscription(), client_id="client-id", client_host="client-host")
    return cr.ConsumerGroupMemberSubscriptionRecord(GROUP, member.member_id, sub)


# ---------------------------------------------------------------------------- the group
def test_consumer_group_heartbeat_with_non_empty_classic_group() -> None:
    # a classic group that is not Empty (here: PreparingRebalance, never given a protocol
    # type) is upgraded only if validateOnlineUpgrade allows: it does not use the consumer
    # embedded protocol, so GROUP_ID_NOT_FOUND
    ctx = Context([foo(1), bar(1)])
    ctx.replay(r.GroupLoaded(GROUP, r.GroupSnapshot(
        protocol_type=None, generation_id=0, protocol_name=None, leader_id=None,
        state_timestamp_ms=0, members=()), (), ctx.now))
    ctx.state.groups[GROUP].state = GroupState.PreparingRebalance
    resp, records, _ = heartbeat(ctx, member_id="m", member_epoch=0, server_assignor="range",
                                 rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"),
                                 topic_partitions=())
    assert resp.error is Error.GROUP_ID_NOT_FOUND
    assert resp.error_message == (f"Cannot upgrade classic group {GROUP} to consumer group because "
                                  "the group does not use the consumer embedded protocol.")
    assert records == [] and GROUP in ctx.state.groups


def test_consumer_group_heartbeat_with_empty_classic_group() -> None:
    # an Empty classic group gives way (maybeDeleteEmptyClassicGroup): its tombstone, then a
    # new consumer group (epoch 1, hash 0: no subscribed topic exists in the image)
    ctx = Context()
    ctx.replay(r.GroupLoaded(GROUP, r.GroupSnapshot(
        protocol_type=None, generation_id=0, protocol_name=None, leader_id=None,
        state_timestamp_ms=0, members=()), (), ctx.now))
    resp, records, _ = heartbeat(ctx, member_id="m", member_epoch=0, server_assignor="range",
                                 rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"),
                                 topic_partitions=())
    assert resp.error is Error.NONE
    member = Member("m", ("foo", "bar"), 1, 0, rebalance_timeout_ms=5000, assigned={})
    assert records_of_kind(records) == [
        r.GroupTombstoned(GROUP),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, "m", member.subscription()),
        epoch_record(1, 0),
        target_record("m", {}),
        target_epoch_record(1),
        current_record(member),
    ]
    assert GROUP in ctx.state.consumer_groups and GROUP not in ctx.state.groups


def test_classic_group_join_with_empty_consumer_group() -> None:
    # a classic JoinGroup to an empty consumer group: the consumer group's tombstones (its
    # target epoch, its subscription metadata: the reference has no such record kind,
    # docs/deviations.md, then its epoch), and the classic group's first answer
    ctx = Context(**SHARD)
    ctx.replay(epoch_record(10, 0), target_epoch_record(0))
    resp, records = Classic(ctx).join(ps=(cr.ClassicProtocol("range", Subscription(("foo",)).encode()),))
    assert resp.error is Error.MEMBER_ID_REQUIRED
    assert records_of_kind(records)[:3] == [
        cr.ConsumerGroupTargetAssignmentEpochRecord(GROUP, None),
        cr.ConsumerGroupSubscriptionMetadataRecord(GROUP, None), cr.ConsumerGroupEpochRecord(GROUP, None)]
    assert GROUP in ctx.state.groups and GROUP not in ctx.state.consumer_groups


# ---------------------------------------------------------------------------- mid-rebalance upgrades
def _two_classic_members(ctx: Context) -> tuple[tuple[m.JoinGroupProtocol, ...], tuple[m.JoinGroupProtocol, ...]]:
    """testConsumerGroupHeartbeatWith{Preparing,Completing}RebalanceClassicGroup's Stable group:
    member 1 owns foo-0 and foo-1, member 2 bar-0, both subscribing foo and bar."""
    ps1 = range_protocols(("foo", "bar"), {"foo": (0, 1)})
    ps2 = range_protocols(("foo", "bar"), {"bar": (0,)})
    stable_classic_group(ctx, [(M1, ps1, Assignment({"foo": (0, 1)}).encode()),
                               (M2, ps2, Assignment({"bar": (0,)}).encode())], generation=0)
    return ps1, ps2


def _upgrade_records(ctx: Context, m1: ClassicMember, m2: ClassicMember, epoch: int,
                     records: Sequence[Record]) -> None:
    """What convertToConsumerGroup and member 3's join write (the Java tests' expectedRecords)."""
    hash_ = ctx.metadata_hash({"foo", "bar"})
    m3 = Member(M3, ("foo", "bar"), epoch + 1, 0, UNRELEASED, rebalance_timeout_ms=5000, assigned={})
    got = records_of_kind(records)
    assert got[:10] == [
        r.GroupTombstoned(GROUP),
        converted_sub(m1), converted_sub(m2),
        epoch_record(epoch, hash_),
        target_record(M1, {FOO: (0, 1)}), target_record(M2, {BAR: (0,)}),
        target_epoch_record(epoch),
        current_record(m1), current_record(m2),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M3, m3.subscription()),
    ]
    assert got[10] == epoch_record(epoch + 1, hash_)
    assert sorted(map(repr, got[11:13])) == sorted(map(repr, [
        target_record(M1, {FOO: (0,)}), target_record(M3, {FOO: (1,)})]))
    assert got[13:] == [target_epoch_record(epoch + 1), current_record(m3)]
    assert ctx.session_deadline(M1) == ctx.now + 5000
    assert ctx.session_deadline(M2) == ctx.now + 5000
    assert ctx.session_deadline(M3) == ctx.now + 45_000


def test_consumer_group_heartbeat_with_preparing_rebalance_classic_group(assignor: MockAssignor) -> None:
    # the leader's rejoin parks its JoinGroup (PreparingRebalance); the upgrade answers it
    # REBALANCE_IN_PROGRESS; the members keep generation 0 as their epoch
    ctx = Context([foo(2), bar(1)], consumer_group_migration_policy="upgrade", **SHARD)
    assignor.prepare({M1: {FOO: (0,)}, M2: {BAR: (0,)}, M3: {FOO: (1,)}})
    ps1, ps2 = _two_classic_members(ctx)
    c = Classic(ctx)
    join, _ = c.send(m.JoinGroupRequest(
        group_id=GROUP, member_id=M1, group_instance_id=None, protocol_type="consumer",
        protocols=ps1, session_timeout_ms=5000, rebalance_timeout_ms=10_000,
        client_id="client-id", client_host="client-host", version=9))
    assert join is None and ctx.state.groups[GROUP].state is GroupState.PreparingRebalance
    join_rid = c.rid
    resp, records, out = heartbeat(ctx, member_id=M3, member_epoch=0, rebalance_timeout_ms=5000,
                                   server_assignor="range", subscribed_topic_names=("foo", "bar"),
                                   topic_partitions=())
    assert resp.error is Error.NONE and resp.member_epoch == 1
    _upgrade_records(ctx, classic_member(M1, 0, ps1, {FOO: (0, 1)}),
                     classic_member(M2, 0, ps2, {BAR: (0,)}), 0, records)
    parked = out.response_to(join_rid)
    assert isinstance(parked, m.JoinGroupResponse) and parked.error is Error.REBALANCE_IN_PROGRESS


def test_consumer_group_heartbeat_with_completing_rebalance_classic_group(assignor: MockAssignor) -> None:
    # both members rejoin (CompletingRebalance, generation 1); the follower's SyncGroup is
    # parked; the upgrade answers it REBALANCE_IN_PROGRESS; the members' epoch is 1
    ctx = Context([foo(2), bar(1)], consumer_group_migration_policy="upgrade", **SHARD)
    assignor.prepare({M1: {FOO: (0,)}, M2: {BAR: (0,)}, M3: {FOO: (1,)}})
    ps1, ps2 = _two_classic_members(ctx)
    c = Classic(ctx)
    for mid, ps in ((M1, ps1), (M2, ps2)):
        c.send(m.JoinGroupRequest(
            group_id=GROUP, member_id=mid, group_instance_id=None, protocol_type="consumer",
            protocols=ps, session_timeout_ms=5000, rebalance_timeout_ms=10_000,
            client_id="client-id", client_host="client-host", version=9))
    assert ctx.state.groups[GROUP].state is GroupState.CompletingRebalance
    sync, _ = c.sync(M2, 1)
    assert sync is None
    sync_rid = c.rid
    resp, records, out = heartbeat(ctx, member_id=M3, member_epoch=0, rebalance_timeout_ms=5000,
                                   server_assignor="range", subscribed_topic_names=("foo", "bar"),
                                   topic_partitions=())
    assert resp.error is Error.NONE and resp.member_epoch == 2
    _upgrade_records(ctx, classic_member(M1, 1, ps1, {FOO: (0, 1)}),
                     classic_member(M2, 1, ps2, {BAR: (0,)}), 1, records)
    parked = out.response_to(sync_rid)
    assert isinstance(parked, m.SyncGroupResponse) and parked.error is Error.REBALANCE_IN_PROGRESS



# ---------------------------------------------------------------------------- static members
def _tombstones(member_id: str) -> list[Record]:
    """removeMember's records (replaceMember's first three)."""
    return [cr.ConsumerGroupCurrentAssignmentRecord(GROUP, member_id, None),
            cr.ConsumerGroupTargetAssignmentRecord(GROUP, member_id, None),
            cr.ConsumerGroupMemberSubscriptionRecord(GROUP, member_id, None)]


def test_consumer_group_heartbeat_to_classic_group_from_existing_static_member() -> None:
    # the classic group's static member restarts with the consumer protocol under a member id
    # of its own: the upgrade converts the group, the new member id replaces the static
    # member (tombstones, its state at epoch 0) and takes its assignment at the group epoch;
    # no new target is computed
    ctx = Context([foo(1)], consumer_group_migration_policy="upgrade")
    ps = range_protocols(("foo",), {"foo": (0,)})
    stable_classic_group(ctx, [("member-id", ps, Assignment({"foo": (0,)}).encode())],
                         instance_ids={"member-id": "instance-id"}, client=(CLIENT_ID, CLIENT_HOST))
    resp, records, _ = heartbeat(ctx, member_id="new-member-id", instance_id="instance-id",
                                 member_epoch=0, rebalance_timeout_ms=5000, server_assignor="range",
                                 subscribed_topic_names=("foo",), topic_partitions=())
    assert resp.error is Error.NONE and resp.member_id == "new-member-id" and resp.member_epoch == 1
    old = ClassicMember("member-id", ("foo",), 1, 1, instance_id="instance-id", rebalance_timeout_ms=10_000,
                        assigned={FOO: (0,)}, classic=classic_of(ps), server_assignor=None)
    replacing = dataclasses.replace(old, member_id="new-member-id", member_epoch=0, previous_member_epoch=0)
    final = Member("new-member-id", ("foo",), 1, 0, STABLE, instance_id="instance-id",
                   rebalance_timeout_ms=5000, server_assignor="range", assigned={FOO: (0,)})
    assert records_of_kind(records) == [
        r.GroupTombstoned(GROUP),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, "member-id", old.subscription()),
        epoch_record(1, ctx.metadata_hash({"foo"})),
        target_record("member-id", {FOO: (0,)}),
        target_epoch_record(1),
        current_record(old),
        *_tombstones("member-id"),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, "new-member-id", replacing.subscription()),
        target_record("new-member-id", {FOO: (0,)}),
        current_record(replacing),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, "new-member-id", final.subscription()),
        current_record(final),
    ]
    assert ctx.session_deadline("new-member-id") == ctx.now + 45_000


def test_consumer_group_heartbeat_to_classic_group_with_empty_assignment_member(assignor: MockAssignor) -> None:
    # a classic member that never synced (CompletingRebalance, generation 1) has no
    # assignment: it becomes a Stable member with nothing assigned; the new member bumps the
    # epoch and gets an empty target
    ctx = Context([foo(1), bar(1)], consumer_group_migration_policy="upgrade", **SHARD)
    assignor.prepare({})
    ps = (m.JoinGroupProtocol("range", Subscription(("foo", "bar")).encode()),)
    c = Classic(ctx)

    def join(member_id: str) -> Any:
        return c.send(m.JoinGroupRequest(
            group_id=GROUP, member_id=member_id, group_instance_id=None, protocol_type="consumer",
            protocols=ps, session_timeout_ms=5000, rebalance_timeout_ms=10_000,
            client_id=CLIENT_ID, client_host=CLIENT_HOST, version=9))[0]

    member_id = join("").member_id
    join(member_id)
    ctx.sleep(3000 + 1)  # group.initial.rebalance.delay.ms
    assert ctx.state.groups[GROUP].state is GroupState.CompletingRebalance
    resp, records, _ = heartbeat(ctx, member_id=M2, member_epoch=0, rebalance_timeout_ms=5000,
                                 server_assignor="range", subscribed_topic_names=("foo", "bar"),
                                 topic_partitions=())
    assert resp.error is Error.NONE and resp.member_epoch == 2
    m1 = ClassicMember(member_id, ("foo", "bar"), 1, 1, rebalance_timeout_ms=10_000, assigned={},
                       classic=classic_of(ps), server_assignor=None)
    m2 = Member(M2, ("foo", "bar"), 2, 0, STABLE, rebalance_timeout_ms=5000, assigned={})
    hash_ = ctx.metadata_hash({"foo", "bar"})
    assert records_of_kind(records) == [
        r.GroupTombstoned(GROUP),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, member_id, m1.subscription()),
        epoch_record(1, hash_),
        target_record(member_id, {}),
        target_epoch_record(1),
        current_record(m1),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M2, m2.subscription()),
        epoch_record(2, hash_),
        target_record(M2, {}),
        target_epoch_record(2),
        current_record(m2),
    ]
    assert ctx.session_deadline(member_id) == ctx.now + 5000
    assert ctx.session_deadline(M2) == ctx.now + 45_000


def test_consumer_group_heartbeat_from_existing_classic_static_member() -> None:
    # a classic static member of a consumer group heartbeats with the consumer protocol under
    # its own member id at epoch 0: it replaces itself (tombstones, then its state at epoch
    # 0), then takes its assignment back at the group epoch with its new rebalance timeout
    # and no classic metadata; the subscription is unchanged, so no epoch bump
    ctx = Context([foo(6), bar(3)], consumer_group_migration_policy="upgrade")
    ps = classic_of(range_protocols(("foo", "bar"), {"foo": (0, 1, 2), "bar": (0, 1)}))
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, STABLE, instance_id="instance-id-1",
                       rebalance_timeout_ms=45_000, assigned={FOO: (0, 1, 2), BAR: (0, 1)}, classic=ps)
    m2 = Member(M2, ("foo", "bar"), 10, 9, STABLE, instance_id="instance-id-2",
                rebalance_timeout_ms=45_000, assigned={FOO: (3, 4, 5), BAR: (2,)})
    ctx.build_group(10, [m1, m2], {M1: {FOO: (0, 1, 2), BAR: (0, 1)}, M2: {FOO: (3, 4, 5), BAR: (2,)}},
                    10, ctx.metadata_hash({"foo", "bar"}))
    resp, records, _ = heartbeat(ctx, member_id=M1, instance_id="instance-id-1", member_epoch=0,
                                 rebalance_timeout_ms=5000, server_assignor="range",
                                 subscribed_topic_names=("foo", "bar"), topic_partitions=())
    assert resp.error is Error.NONE and resp.member_id == M1 and resp.member_epoch == 10
    replacing = dataclasses.replace(m1, member_epoch=0, previous_member_epoch=0)
    final = Member(M1, ("foo", "bar"), 10, 0, STABLE, instance_id="instance-id-1",
                   rebalance_timeout_ms=5000, assigned={FOO: (0, 1, 2), BAR: (0, 1)})
    assert records_of_kind(records) == [
        *_tombstones(M1),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, replacing.subscription()),
        target_record(M1, {FOO: (0, 1, 2), BAR: (0, 1)}),
        current_record(replacing),
        cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, final.subscription()),
        current_record(final),
    ]
    assert ctx.session_deadline(M1) == ctx.now + 45_000


# ---------------------------------------------------------------------------- downgrades by timeouts
def _mixed_group(ctx: Context, rebalance_timeout_ms: int, m2_topics: tuple[str, ...]) -> ClassicMember:
    """testLastConsumerProtocolMember*TimeoutInConsumerGroup's group at epoch 10: member 1 a
    classic member owning foo-0..2 and bar-0..1, member 2 a consumer-protocol member owning
    foo-3..5 and bar-2."""
    owned = {FOO: (0, 1, 2), BAR: (0, 1)}
    ps = classic_of(range_protocols(("foo", "bar"), {"foo": (0, 1, 2), "bar": (0, 1)}))
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, STABLE, rebalance_timeout_ms=rebalance_timeout_ms,
                       assigned=owned, classic=ps, server_assignor="range")
    m2 = Member(M2, m2_topics, 10, 9, STABLE, rebalance_timeout_ms=rebalance_timeout_ms,
                assigned={FOO: (3, 4, 5), BAR: (2,)})
    ctx.build_group(10, [m1, m2], {M1: owned, M2: {FOO: (3, 4, 5), BAR: (2,)}}, 10,
                    ctx.metadata_hash({"foo", "bar", *m2_topics}))
    return m1


def _assert_downgraded(ctx: Context, records: Sequence[Record], generation: int, rebalance_timeout_ms: int) -> None:
    """convertToClassicGroup's records (the consumer group's tombstones, in groups of one
    kind whose order within is a HashMap's, then the Stable classic group at the generation
    with member 1 and its target as its assignment), its heartbeat timer and a rebalance."""
    got = records_of_kind(records)
    groups: list[list[Record]] = [
        [cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M1, None), cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M2, None)],
        [cr.ConsumerGroupTargetAssignmentRecord(GROUP, M1, None), cr.ConsumerGroupTargetAssignmentRecord(GROUP, M2, None)],
        [cr.ConsumerGroupTargetAssignmentEpochRecord(GROUP, None)],
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, None), cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M2, None)],
        [cr.ConsumerGroupSubscriptionMetadataRecord(GROUP, None)],
        [cr.ConsumerGroupEpochRecord(GROUP, None)],
    ]
    at = 0
    for want in groups:
        assert sorted(map(repr, got[at:at + len(want)])) == sorted(map(repr, want))
        at += len(want)
    [persisted] = got[at:]
    assert isinstance(persisted, r.GroupMetadataPersisted)
    snap = persisted.snapshot
    assert (snap.protocol_type, snap.generation_id, snap.protocol_name, snap.leader_id) == (
        "consumer", generation, "range", M1)
    [member] = snap.members
    assert (member.info.member_id, member.info.group_instance_id, member.rebalance_timeout_ms,
            member.session_timeout_ms) == (M1, None, rebalance_timeout_ms, 5000)
    assert Assignment.decode(member.assignment).partitions == {"foo": (0, 1, 2), "bar": (0, 1)}
    classic = ctx.state.groups[GROUP]
    assert GROUP not in ctx.state.consumer_groups
    assert classic.state is GroupState.PreparingRebalance and classic.join_timer is not None
    assert classic.members[M1].heartbeat_deadline_ms is not None


def test_last_consumer_protocol_member_session_timeout_in_consumer_group() -> None:
    ctx = Context([foo(6), bar(3)], consumer_group_migration_policy="downgrade")
    _mixed_group(ctx, 45_000, ("foo", "bar"))
    resp, _, _ = heartbeat(ctx, member_id=M2, member_epoch=10, subscribed_topic_names=("foo", "bar"),
                           topic_partitions=())
    assert resp.error is Error.NONE
    assert ctx.session_deadline(M2) == ctx.now + 45_000
    fired, records = ctx.sleep(45_000 + 1)
    assert [(e.member_id, e.kind.name) for e in fired][:1] == [(M2, "ExpireConsumerSession")]
    _assert_downgraded(ctx, records, 10, 45_000)


def test_last_consumer_protocol_member_rebalance_timeout_in_consumer_group(assignor: MockAssignor) -> None:
    # member 2 drops zar: epoch 11, a new target in which it revokes bar-2 (a rebalance
    # timer); when that fires, member 2 is fenced and the group downgraded at generation 11
    ctx = Context([foo(6), bar(3), TopicMetadata(ZAR, "zar", 1)], consumer_group_migration_policy="downgrade")
    _mixed_group(ctx, 30_000, ("foo", "bar", "zar"))
    assignor.prepare({M1: {FOO: (0, 1, 2), BAR: (0, 1)}, M2: {FOO: (3, 4, 5)}})
    owned = (HeartbeatTopicPartitions(FOO, (3, 4, 5)), HeartbeatTopicPartitions(BAR, (2,)))
    resp, _, _ = heartbeat(ctx, member_id=M2, member_epoch=10, subscribed_topic_names=("foo", "bar"),
                           topic_partitions=owned)
    assert resp.error is Error.NONE
    assert ctx.rebalance_deadline(M2) == ctx.now + 30_000
    fired, records = ctx.sleep(30_000 + 1)
    assert [(e.member_id, e.kind.name) for e in fired][:1] == [(M2, "ExpireConsumerRebalance")]
    _assert_downgraded(ctx, records, 11, 30_000)


# ---------------------------------------------------------------------------- downgrade by a replacement
def _unordered(got: Sequence[Record], groups: Sequence[Sequence[Record]]) -> None:
    """assertUnorderedRecordsEquals: the records in these groups, in order, each group's
    records in any order."""
    at = 0
    for want in groups:
        assert sorted(map(repr, got[at:at + len(want)])) == sorted(map(repr, want)), at
        at += len(want)
    assert at == len(got)


@pytest.mark.parametrize("subscription_changed", [True, False])
def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member(subscription_changed: bool) -> None:
    # a classic JoinGroup with the instance id of the last consumer-protocol member (static)
    # replaces it (tombstones, its state under the new member id at epoch 0), updates it as
    # a classic member (a changed subscription bumps the epoch and computes no target; an
    # unchanged one reconciles it at epoch 10), then the group is downgraded: a Stable
    # classic group at the consumer group's epoch as it was (10), rebalancing if the
    # subscription changed
    ctx = Context([foo(6), bar(2)], consumer_group_migration_policy="downgrade", **SHARD)
    ps1 = classic_of(range_protocols(("foo", "bar"), {"foo": (0, 1, 2), "bar": (0, 1)}))
    m1 = ClassicMember(M1, ("foo", "bar"), 10, 9, STABLE, rebalance_timeout_ms=45_000,
                       assigned={FOO: (0, 1, 2), BAR: (0, 1)}, classic=ps1)
    old2 = Member("old-member-2", ("foo",), 10, 9, STABLE, instance_id="instance-id",
                  rebalance_timeout_ms=45_000, assigned={FOO: (3, 4, 5)})
    ctx.build_group(10, [m1, old2], {M1: {FOO: (0, 1, 2), BAR: (0, 1)}, "old-member-2": {FOO: (3, 4, 5)}},
                    10, ctx.metadata_hash({"foo", "bar"}))
    ctx.group().metadata_refresh_epoch = 10  # setMetadataRefreshDeadline(Long.MAX_VALUE, 10)
    topics = ("foo", "bar") if subscription_changed else ("foo",)
    ps2 = (cr.ClassicProtocol("range", Subscription(topics).encode()),)
    resp, records = Classic(ctx).join(ps=ps2, instance_id="instance-id")
    assert resp is not None
    new2 = resp.member_id
    assert new2 not in ("", "old-member-2")
    replacing = dataclasses.replace(old2, member_id=new2, member_epoch=0, previous_member_epoch=0)
    updated = ClassicMember(new2, topics, 11 if subscription_changed else 10, 0, STABLE,
                            instance_id="instance-id", rebalance_timeout_ms=500,
                            assigned={FOO: (3, 4, 5)}, classic=ps2, session_timeout_ms=500,
                            server_assignor="range")
    update: list[list[Record]] = [[cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new2, updated.subscription())]]
    if subscription_changed:
        update.append([epoch_record(11, ctx.metadata_hash({"foo", "bar"}))])
    else:
        update.append([current_record(updated)])
    got = records_of_kind(records)
    _unordered(got[:-1], [
        *([x] for x in _tombstones("old-member-2")),
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new2, replacing.subscription())],
        [target_record(new2, {FOO: (3, 4, 5)})],
        [current_record(replacing)],
        *update,
        [cr.ConsumerGroupCurrentAssignmentRecord(GROUP, M1, None), cr.ConsumerGroupCurrentAssignmentRecord(GROUP, new2, None)],
        [cr.ConsumerGroupTargetAssignmentRecord(GROUP, M1, None), cr.ConsumerGroupTargetAssignmentRecord(GROUP, new2, None)],
        [cr.ConsumerGroupTargetAssignmentEpochRecord(GROUP, None)],
        [cr.ConsumerGroupMemberSubscriptionRecord(GROUP, M1, None), cr.ConsumerGroupMemberSubscriptionRecord(GROUP, new2, None)],
        [cr.ConsumerGroupSubscriptionMetadataRecord(GROUP, None)],
        [cr.ConsumerGroupEpochRecord(GROUP, None)],
    ])
    persisted = got[-1]
    assert isinstance(persisted, r.GroupMetadataPersisted)
    snap = persisted.snapshot
    assert (snap.protocol_type, snap.generation_id, snap.protocol_name) == ("consumer", 10, "range")
    assert snap.leader_id in (M1, new2)  # "not deterministic" in Kafka's test
    members = {x.info.member_id: x for x in snap.members}
    assert set(members) == {M1, new2}
    assert (members[M1].rebalance_timeout_ms, members[M1].session_timeout_ms) == (45_000, 5000)
    assert Assignment.decode(members[M1].assignment).partitions == {"foo": (0, 1, 2), "bar": (0, 1)}
    assert (members[new2].info.group_instance_id, members[new2].rebalance_timeout_ms,
            members[new2].session_timeout_ms) == ("instance-id", 500, 500)
    assert members[new2].protocols == tuple(m.JoinGroupProtocol(p.name, p.metadata) for p in ps2)
    assert Assignment.decode(members[new2].assignment).partitions == {"foo": (3, 4, 5)}
    classic = ctx.state.groups[GROUP]
    assert classic.members[M1].heartbeat_deadline_ms is not None
    want = GroupState.PreparingRebalance if subscription_changed else GroupState.Stable
    assert classic.state is want


def test_no_conversion_when_size_exceeds_classic_max_group_size() -> None:
    # the consumer-protocol member leaves two classic members behind, but group.max.size is
    # 1: validateOnlineDowngradeWithFencedMembers refuses, the group stays a consumer group
    ctx = Context([foo(1)], consumer_group_migration_policy="downgrade", group_max_size=1)
    ps = (cr.ClassicProtocol("range", b""),)
    ctx.build_group(10, [Member("1"), ClassicMember("2", classic=ps), ClassicMember("3", classic=ps)],
                    {}, 0, 0)
    resp, _, _ = heartbeat(ctx, member_id="1", member_epoch=-1, rebalance_timeout_ms=5000)
    assert resp.error is Error.NONE
    assert GROUP in ctx.state.consumer_groups and GROUP not in ctx.state.groups

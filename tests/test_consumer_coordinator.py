"""The KIP-848 consumer group in the reference coordinator: offsets by member epoch,
failover, ConsumerGroupDescribe, ListGroups/DeleteGroups, the empty classic group giving
way, and replay (the records alone rebuild the state). Kafka's own heartbeat and
reconciliation tests are ported in test_consumer_coordinator_kafka.py and
test_consumer_reconciliation_kafka.py."""

from __future__ import annotations

import pytest

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator import timers
from groupspec.coordinator.classic import fast_path
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.consumer.group import ConsumerGroupState
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import apply_record
from groupspec.coordinator.state import CoordinatorState
from groupspec.coordinator.timers import TimerKind, all_timers
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.records import Record
from groupspec.protocol.topic_id import TopicId

FOO = TopicId(0x1111)
BAR = TopicId(0x2222)


class Harness:
    def __init__(self, config: CoordinatorConfig | None = None) -> None:
        self.c = Coordinator(config) if config is not None else Coordinator()
        self.c.set_topics([TopicMetadata(FOO, "foo", 6), TopicMetadata(BAR, "bar", 3)])
        self.rid = 0
        self.now = 0
        self.records: list[Record] = []

    def send(self, req: m.Request, dt: int = 10) -> m.Response:
        self.rid += 1
        self.now += dt
        out = self.c.handle(self.rid, req, self.now)
        self.records.extend(out.records)
        resp = out.response_to(self.rid)
        assert resp is not None
        return resp

    def hb(self, **kw: object) -> ConsumerGroupHeartbeatResponse:
        kw.setdefault("group_id", "g")
        resp = self.send(ConsumerGroupHeartbeatRequest(**kw))  # type: ignore[arg-type]
        assert isinstance(resp, ConsumerGroupHeartbeatResponse)
        return resp

    def join(self, member_id: str, topics: tuple[str, ...] = ("foo",),
             instance_id: str | None = None) -> ConsumerGroupHeartbeatResponse:
        return self.hb(member_id=member_id, member_epoch=0, instance_id=instance_id,
                       rebalance_timeout_ms=5000, subscribed_topic_names=topics,
                       topic_partitions=())

    def owned(self, member_id: str) -> tuple[HeartbeatTopicPartitions, ...]:
        mem = self.c.state.consumer_groups["g"].members[member_id]
        return tuple(HeartbeatTopicPartitions(t, tuple(sorted(ps))) for t, ps in mem.assigned.items())

    def settle(self, *members: str, rounds: int = 4) -> None:
        """Each member heartbeats with what it owns until the group is Stable."""
        for _ in range(rounds):
            for mid in members:
                mem = self.c.state.consumer_groups["g"].members[mid]
                self.hb(member_id=mid, member_epoch=mem.member_epoch,
                        topic_partitions=self.owned(mid))

    def advance(self, dt: int) -> None:
        self.now += dt
        self.records.extend(self.c.advance(self.now).records)


def test_two_members_converge_to_the_uniform_target_without_sharing_a_partition() -> None:
    h = Harness()
    h.join("a")
    h.join("b")
    h.settle("a", "b")
    g = h.c.state.consumer_groups["g"]
    assert g.state is ConsumerGroupState.STABLE
    a, b = g.members["a"].assigned[FOO], g.members["b"].assigned[FOO]
    assert not a & b and a | b == frozenset(range(6)) and len(a) == len(b) == 3
    assert g.members["a"].member_epoch == g.members["b"].member_epoch == g.group_epoch == 2


def test_commit_needs_the_current_member_epoch_and_version_9() -> None:
    h = Harness()
    h.join("a")
    part = (m.OffsetCommitPartition("foo", 0, 42, None),)
    stale = h.send(m.OffsetCommitRequest(group_id="g", generation_id=0, member_id="a",
                                         partitions=part, version=9))
    assert isinstance(stale, m.OffsetCommitResponse)
    assert stale.partitions[0].error is Error.STALE_MEMBER_EPOCH
    old = h.send(m.OffsetCommitRequest(group_id="g", generation_id=1, member_id="a",
                                       partitions=part, version=8))
    assert isinstance(old, m.OffsetCommitResponse)
    assert old.partitions[0].error is Error.UNSUPPORTED_VERSION
    unknown = h.send(m.OffsetCommitRequest(group_id="g", generation_id=1, member_id="x",
                                           partitions=part, version=9))
    assert isinstance(unknown, m.OffsetCommitResponse)
    assert unknown.partitions[0].error is Error.UNKNOWN_MEMBER_ID
    ok = h.send(m.OffsetCommitRequest(group_id="g", generation_id=1, member_id="a",
                                      partitions=part, version=9))
    assert isinstance(ok, m.OffsetCommitResponse)
    assert ok.partitions[0].error is Error.NONE
    fetched = h.send(m.OffsetFetchRequest(group_id="g", partitions=(("foo", 0),), member_id="a",
                                            member_epoch=1))
    assert isinstance(fetched, m.OffsetFetchResponse)
    assert fetched.partitions[0].committed_offset == 42
    stale_fetch = h.send(m.OffsetFetchRequest(group_id="g", partitions=(("foo", 0),),
                                                member_id="a", member_epoch=7))
    assert isinstance(stale_fetch, m.OffsetFetchResponse)
    assert stale_fetch.error is Error.STALE_MEMBER_EPOCH
    admin = h.send(m.OffsetFetchRequest(group_id="g", partitions=(("foo", 0),)))
    assert isinstance(admin, m.OffsetFetchResponse)
    assert admin.error is Error.NONE and admin.partitions[0].committed_offset == 42


def test_a_simple_commit_only_into_an_empty_consumer_group() -> None:
    h = Harness()
    h.join("a")
    part = (m.OffsetCommitPartition("foo", 1, 7, None),)
    busy = h.send(m.OffsetCommitRequest(group_id="g", partitions=part, version=9))
    assert isinstance(busy, m.OffsetCommitResponse)
    assert busy.partitions[0].error is Error.UNKNOWN_MEMBER_ID
    h.hb(member_id="a", member_epoch=-1)
    assert h.c.state.consumer_groups["g"].state is ConsumerGroupState.EMPTY
    ok = h.send(m.OffsetCommitRequest(group_id="g", partitions=part, version=9))
    assert isinstance(ok, m.OffsetCommitResponse)
    assert ok.partitions[0].error is Error.NONE


def test_failover_keeps_the_group_and_rearms_the_timers() -> None:
    h = Harness()
    h.join("a")
    h.join("b")
    h.settle("a", "b")
    before = h.c.state.consumer_groups["g"]
    snapshot = (before.group_epoch, before.assignment_epoch, dict(before.members), dict(before.target))
    h.now += 1000
    h.records.extend(h.c.failover(h.now).records)
    after = h.c.state.consumer_groups["g"]
    assert (after.group_epoch, after.assignment_epoch, dict(after.members), dict(after.target)) == snapshot
    session = h.c.config.consumer_group_session_timeout_ms
    assert after.session_deadlines == {"a": h.now + session, "b": h.now + session}
    # both fall silent: the new coordinator's session timeouts remove them
    h.advance(session + 1)
    assert h.c.state.consumer_groups["g"].state is ConsumerGroupState.EMPTY


def test_a_member_that_does_not_revoke_in_time_is_fenced() -> None:
    h = Harness()
    h.join("a")
    h.settle("a")
    h.join("b")
    # a is asked to revoke half of foo; it keeps heartbeating but never lets go
    resp = h.hb(member_id="a", member_epoch=1, topic_partitions=h.owned("a"))
    g = h.c.state.consumer_groups["g"]
    assert g.members["a"].state is cr.MemberState.UNREVOKED_PARTITIONS
    assert resp.member_epoch == 1 and g.group_epoch == 2
    for _ in range(3):
        h.advance(1000)
        mem = g.members["a"]
        h.hb(member_id="a", member_epoch=mem.member_epoch,
             topic_partitions=tuple(HeartbeatTopicPartitions(FOO, tuple(range(6))) for _ in [0]))
    h.advance(5000)
    assert "a" not in h.c.state.consumer_groups["g"].members
    fenced = h.hb(member_id="a", member_epoch=1, topic_partitions=())
    assert fenced.error is Error.UNKNOWN_MEMBER_ID


def test_static_member_leaves_for_a_while_and_its_successor_inherits_the_assignment() -> None:
    h = Harness()
    h.join("a1", instance_id="i")
    h.join("b")
    h.settle("a1", "b")
    g = h.c.state.consumer_groups["g"]
    kept = g.members["a1"].assigned
    epoch = g.group_epoch
    left = h.hb(member_id="a1", member_epoch=-2, instance_id="i")
    assert left.error is Error.NONE and left.member_epoch == -2
    assert g.group_epoch == epoch  # a temporary leave bumps nothing
    took = h.join("a9", instance_id="i")  # a new process with the same instance id
    assert took.error is Error.NONE
    again = h.join("a2", instance_id="i")  # a9 holds i now: nobody else may take it
    assert again.error is Error.UNRELEASED_INSTANCE_ID
    g = h.c.state.consumer_groups["g"]
    assert "a1" not in g.members and g.members["a9"].assigned == kept
    assert g.group_epoch == epoch


def test_empty_classic_group_gives_way_with_its_offsets_but_a_live_one_does_not() -> None:
    h = Harness()
    part = (m.OffsetCommitPartition("foo", 0, 5, None),)
    h.send(m.OffsetCommitRequest(group_id="g", partitions=part))
    assert "g" in h.c.state.groups
    joined = h.join("a")
    assert joined.error is Error.NONE
    assert "g" not in h.c.state.groups
    assert h.c.state.consumer_groups["g"].offsets[("foo", 0)].committed_offset == 5


def _classic_group_with_members(config: CoordinatorConfig, protocol_type: str = "consumer",
                                members: int = 1) -> Harness:
    h = Harness(config)
    proto = (m.JoinGroupProtocol("range", b""),)
    for _ in range(members):
        first = h.send(m.JoinGroupRequest(group_id="g", member_id="", protocols=proto,
                                          protocol_type=protocol_type))
        assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
        # a member only pending (MEMBER_ID_REQUIRED) leaves the group Empty: still
        # convertible, so it joins for real
        h.rid += 1
        parked = h.c.handle(h.rid, m.JoinGroupRequest(
            group_id="g", member_id=first.member_id, protocols=proto,
            protocol_type=protocol_type), h.now)
        assert parked.response_to(h.rid) is None  # waits out the initial rebalance delay
    assert len(h.c.state.groups["g"].members) == members
    return h


@pytest.mark.parametrize(("policy", "protocol_type", "members", "why"), [
    ("disabled", "consumer", 1, "online upgrade is disabled"),
    ("DownGrade", "consumer", 1, "online upgrade is disabled"),
    ("upgrade", "connect", 1, "the group does not use the consumer embedded protocol"),
    ("bidirectional", "consumer", 3, "the group size exceeds the consumer group maximum size"),
    ("bidirectional", "consumer", 2, None),  # as many members as the maximum: not over it
])
def test_online_upgrade_refused_as_validate_online_upgrade_says(
        policy: str, protocol_type: str, members: int, why: str | None) -> None:
    """GroupMetadataManager.validateOnlineUpgrade's checks, in its order: the policy, the
    group's protocol type, its size. A group that passes them is converted
    (convertToConsumerGroup): its members' parked JoinGroups are answered
    REBALANCE_IN_PROGRESS first; this group is in its first join phase and has no protocol
    yet, so ConsumerGroup.fromClassicGroup fails (protocolName().get(): an unexpected
    exception, UNKNOWN_SERVER_ERROR) and the group stays classic."""
    config = CoordinatorConfig(consumer_group_migration_policy=policy, consumer_group_max_size=2)
    h = _classic_group_with_members(config, protocol_type, members)
    if why is None:
        before = set(h.c.state.groups["g"].members)
        h.rid += 1
        out = h.c.handle(h.rid, ConsumerGroupHeartbeatRequest(
            group_id="g", member_id="a", member_epoch=0, rebalance_timeout_ms=5000,
            subscribed_topic_names=("foo",), topic_partitions=()), h.now)
        answers = [resp for _, resp in out.responses]
        parked = [x for x in answers if isinstance(x, m.JoinGroupResponse)]
        assert [x.error for x in parked] == [Error.REBALANCE_IN_PROGRESS] * members
        failed = out.response_to(h.rid)
        assert isinstance(failed, ConsumerGroupHeartbeatResponse)
        assert (failed.error, failed.error_message) == (Error.UNKNOWN_SERVER_ERROR, None)
        assert "g" not in h.c.state.consumer_groups and set(h.c.state.groups["g"].members) == before
        return
    refused = h.join("a")
    assert refused.error is Error.GROUP_ID_NOT_FOUND
    assert refused.error_message == (
        f"Cannot upgrade classic group g to consumer group because {why}.")
    assert refused.member_id is None and refused.member_epoch == 0


def test_migration_policy_defaults_to_kafkas_and_rejects_unknown_values() -> None:
    assert CoordinatorConfig().consumer_group_migration_policy == "bidirectional"
    assert CoordinatorConfig(consumer_group_migration_policy="UPGRADE").online_upgrade_enabled
    assert not CoordinatorConfig(consumer_group_migration_policy="upgrade").online_downgrade_enabled
    with pytest.raises(ValueError, match="consumer_group_migration_policy: one of"):
        CoordinatorConfig(consumer_group_migration_policy="sideways")


def test_empty_consumer_group_gives_way_to_a_classic_join_with_its_offsets() -> None:
    # GroupMetadataManager.classicGroupJoinToClassicGroup, maybeDeleteEmptyConsumerGroup
    h = Harness()
    assert h.join("a").error is Error.NONE
    h.send(m.OffsetCommitRequest(group_id="g", generation_id=1, member_id="a", partitions=(
        m.OffsetCommitPartition("foo", 0, 5, None),), version=9))
    assert h.hb(member_id="a", member_epoch=-1).error is Error.NONE  # leaves: the group is empty
    proto = (m.JoinGroupProtocol("range", b""),)
    # a classic member with a member id it was never given: UNKNOWN_MEMBER_ID, nothing written
    before = len(h.records)
    stray = h.send(m.JoinGroupRequest(group_id="g", member_id="x", protocols=proto))
    assert isinstance(stray, m.JoinGroupResponse) and stray.error is Error.UNKNOWN_MEMBER_ID
    assert h.records[before:] == [] and "g" in h.c.state.consumer_groups
    # a new one: the consumer group's tombstones, then the classic group's creation
    first = h.send(m.JoinGroupRequest(group_id="g", member_id="", protocols=proto))
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    kinds = [type(r).__name__ for r in h.records[before:]]
    assert kinds[:3] == ["ConsumerGroupTargetAssignmentEpochRecord", "ConsumerGroupSubscriptionMetadataRecord",
                         "ConsumerGroupEpochRecord"]
    assert "GroupCreated" in kinds and kinds[-1] == "GroupMetadataPersisted"
    assert "g" not in h.c.state.consumer_groups
    assert h.c.state.groups["g"].offsets[("foo", 0)].committed_offset == 5
    fetched = h.send(m.OffsetFetchRequest(group_id="g", partitions=(("foo", 0),)))
    assert isinstance(fetched, m.OffsetFetchResponse)
    assert [p.committed_offset for p in fetched.partitions] == [5]


def _mixed_group(policy: str) -> Harness:
    """A consumer group with a consumer-protocol member "a" and a classic member that joined
    it with JoinGroup (GroupMetadataManager.classicGroupJoinToConsumerGroup)."""
    h = Harness(CoordinatorConfig(consumer_group_migration_policy=policy))
    assert h.join("a").error is Error.NONE
    proto = (m.JoinGroupProtocol("range", Subscription(("foo",)).encode()),)
    first = h.send(m.JoinGroupRequest(group_id="g", member_id="", protocols=proto))
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    joined = h.send(m.JoinGroupRequest(group_id="g", member_id=first.member_id, protocols=proto))
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    g = h.c.state.consumer_groups["g"]
    assert joined.generation_id == g.group_epoch == 2
    assert g.members[first.member_id].uses_classic_protocol
    return h


@pytest.mark.parametrize("policy", ["bidirectional", "downgrade", "upgrade", "disabled"])
def test_the_last_consumer_protocol_member_leaving_a_mixed_group(policy: str) -> None:
    # consumerGroupFenceMembers: only classic members remain, so a policy allowing a downgrade
    # converts the group to a classic group (convertToClassicGroup); the others fence the
    # member as in any consumer group
    h = _mixed_group(policy)
    classic_members = set(h.c.state.consumer_groups["g"].members) - {"a"}
    assert h.hb(member_id="a", member_epoch=-1).error is Error.NONE
    if policy in ("bidirectional", "downgrade"):
        assert "g" not in h.c.state.consumer_groups
        assert set(h.c.state.groups["g"].members) == classic_members
        return
    g = h.c.state.consumer_groups["g"]
    assert set(g.members) == classic_members and all(x.uses_classic_protocol for x in g.members.values())


@pytest.mark.parametrize("upgraded_again", [False, True])
def test_a_downgrade_leaves_the_consumer_groups_timers_running(upgraded_again: bool) -> None:
    # convertToClassicGroup cancels none of the consumer group's timers (Kafka keeps them in
    # the shard's timer by group and member id, consumerGroupSyncKey and the others): the
    # classic member's sync timeout, armed by its JoinGroup, runs on. Firing while the group
    # is classic it finds no consumer group and does nothing (consumerGroupFenceMemberOperation);
    # if a consumer-protocol member upgrades the group first, the new group has it again and
    # it fences the member, which heartbeats but never syncs
    h = _mixed_group("bidirectional")
    g = h.c.state.consumer_groups["g"]
    k = next(mid for mid in g.members if mid != "a")
    sync = g.classic_sync_deadlines[k]
    assert h.hb(member_id="a", member_epoch=-1).error is Error.NONE
    assert "g" in h.c.state.groups and "g" not in h.c.state.consumer_groups
    assert h.c.state.detached_consumer_timers["g"].classic_sync_deadlines == {k: sync}
    # the earliest deadline the coordinator and the replay's shortcuts read counts them
    assert timers.earliest_deadline(h.c.state) == min(timers.deadlines(h.c.state))
    assert not h.c.state.consumer_groups
    assert fast_path.earliest_deadline(h.c.state) == min(timers.deadlines(h.c.state))
    if upgraded_again:
        assert h.join("a").error is Error.NONE
        g = h.c.state.consumer_groups["g"]
        assert g.classic_sync_deadlines == {k: sync} and "g" not in h.c.state.detached_consumer_timers
    classic = h.c.state.groups.get("g")
    while h.now + 40_000 < sync:  # k heartbeats (and "a"), so no session expires
        h.advance(40_000)
        if upgraded_again:
            assert h.hb(member_id="a", member_epoch=g.members["a"].member_epoch).error is Error.NONE
        generation = g.members[k].member_epoch if classic is None else classic.generation_id
        beat = h.send(m.HeartbeatRequest(group_id="g", generation_id=generation, member_id=k))
        assert isinstance(beat, m.HeartbeatResponse) and beat.error is Error.REBALANCE_IN_PROGRESS
    h.advance(sync - h.now - 1)
    if classic is not None:
        before = (classic.state, set(classic.members), classic.generation_id)
        h.advance(1)
        # spent without a trace (its session timer earlier, the same way)
        assert "g" not in h.c.state.detached_consumer_timers
        assert (classic.state, set(classic.members), classic.generation_id) == before
        assert before[:2] == (GroupState.PreparingRebalance, {k})
        return
    assert k in g.members and g.classic_join_deadlines[k] > sync
    h.advance(1)
    assert set(g.members) == {"a"}


@pytest.mark.parametrize("downgraded_first", [False, True])
def test_an_upgraded_classic_groups_join_timer_runs_on(downgraded_first: bool) -> None:
    # convertToConsumerGroup does not cancel the classic group's join timer
    # (classicGroupJoinKey(groupId)): firing while the group is a consumer group (or gone) it
    # finds no classic group and does nothing; a classic group made by a downgrade before it
    # fires has it as its own (the reference: CoordinatorState.detached_classic_join_timers)
    c = Coordinator()
    timer = r.JoinTimer(26_100, False)
    for rec in (r.GroupCreated("g", 0), r.JoinTimerSet("g", timer), r.StateChanged("g", GroupState.Dead, 10),
                r.GroupRemoved("g")):
        apply_record(c.state, rec)
    assert c.state.detached_classic_join_timers == {"g": timer}
    assert [(e.deadline_ms, e.kind, e.group_id) for e in all_timers(c.state)] == [
        (26_100, TimerKind.ExpireJoin, "g")]
    if downgraded_first:
        apply_record(c.state, r.ClassicGroupConverted("g", 3, "range", (), 20))
        assert c.state.groups["g"].join_timer == timer and not c.state.detached_classic_join_timers
        return
    c.advance(26_100)
    assert not c.state.detached_classic_join_timers and not all_timers(c.state) and "g" not in c.state.groups


def test_a_classic_leave_to_a_consumer_group_removes_the_members_it_names() -> None:
    # GroupMetadataManager.classicGroupLeaveToConsumerGroup in 4.1.2 (no classic-protocol
    # check): an admin's removal by instance id takes the consumer-protocol member out; an
    # instance id with another member id is fenced first
    h = Harness()
    assert h.join("a", instance_id="i").error is Error.NONE
    epoch = h.c.state.consumer_groups["g"].group_epoch
    before = len(h.records)
    idents = [("zz", "i"), ("", "i"), ("a", None), ("a", "i"), ("x", "nope")]
    resp = h.send(m.LeaveGroupRequest(group_id="g", members=tuple(
        m.MemberIdentity(mid, iid) for mid, iid in idents)))
    assert isinstance(resp, m.LeaveGroupResponse) and resp.error is Error.NONE
    assert [(x.member_id, x.group_instance_id, x.error) for x in resp.members] == [
        ("zz", "i", Error.FENCED_INSTANCE_ID), ("", "i", Error.NONE), ("a", None, Error.NONE),
        ("a", "i", Error.NONE), ("x", "nope", Error.UNKNOWN_MEMBER_ID)]
    g = h.c.state.consumer_groups["g"]
    assert "a" not in g.members and g.group_epoch == epoch + 1  # one bump for the batch
    assert any(isinstance(x, cr.ConsumerGroupMemberSubscriptionRecord) and x.value is None
               for x in h.records[before:])


@pytest.mark.parametrize("api", ["Heartbeat", "SyncGroup"])
def test_a_classic_heartbeat_or_sync_to_a_consumer_group_finds_no_classic_member(api: str) -> None:
    # GroupMetadataManager.classicGroup{Heartbeat,Sync}ToConsumerGroup: validateConsumerGroupMember
    # (FENCED_INSTANCE_ID for a static member's instance id with another member id), then the
    # member found does not use the classic protocol: UNKNOWN_MEMBER_ID
    h = Harness()
    assert h.join("a", instance_id="i").error is Error.NONE
    before = len(h.records)

    def answer(member_id: str, instance_id: str | None) -> Error:
        req: m.Request = (
            m.HeartbeatRequest(group_id="g", generation_id=1, member_id=member_id,
                               group_instance_id=instance_id) if api == "Heartbeat" else
            m.SyncGroupRequest(group_id="g", generation_id=1, member_id=member_id,
                               group_instance_id=instance_id))
        resp = h.send(req)
        assert isinstance(resp, m.HeartbeatResponse | m.SyncGroupResponse)
        return resp.error

    assert answer("zz", "i") is Error.FENCED_INSTANCE_ID
    assert answer("a", "i") is Error.UNKNOWN_MEMBER_ID
    assert answer("a", None) is Error.UNKNOWN_MEMBER_ID
    assert answer("x", "nope") is Error.UNKNOWN_MEMBER_ID
    assert h.records[before:] == []
    # an empty consumer group: SyncGroup is UNKNOWN_MEMBER_ID before any member check
    assert h.hb(member_id="a", instance_id="i", member_epoch=-1).error is Error.NONE
    assert answer("zz", "i") is Error.UNKNOWN_MEMBER_ID


def test_describe_lists_members_with_target_and_answers_unknown_and_empty_ids() -> None:
    h = Harness()
    h.join("a", topics=("foo", "bar"))
    resp = h.send(ConsumerGroupDescribeRequest(group_ids=("g", "nope", "")))
    assert isinstance(resp, ConsumerGroupDescribeResponse)
    by_id = {d.group_id: d for d in resp.groups}
    assert by_id[""].error is Error.INVALID_GROUP_ID
    assert resp.groups[0].group_id == ""  # the service answers empty ids first
    assert by_id["nope"].error is Error.GROUP_ID_NOT_FOUND
    g = by_id["g"]
    assert (g.error, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name) == (
        Error.NONE, "Stable", 1, 1, "uniform")
    (member,) = g.members
    assert member.member_id == "a" and member.member_epoch == 1
    assert {tp.topic_name: tp.partitions for tp in member.assignment.topic_partitions} == {
        "foo": tuple(range(6)), "bar": (0, 1, 2)}
    # the same partitions (the target lists its topics in the order Kafka's assignor left
    # its HashMap in, which need not be the order of the reconciled assignment)
    assert set(member.target_assignment.topic_partitions) == set(member.assignment.topic_partitions)


def test_list_and_delete_groups_see_consumer_groups() -> None:
    h = Harness()
    h.join("a")
    listed = h.send(m.ListGroupsRequest())
    assert isinstance(listed, m.ListGroupsResponse)
    assert [(x.group_id, x.protocol_type, x.group_state) for x in listed.groups] == [
        ("g", "consumer", "Stable")]
    busy = h.send(m.DeleteGroupsRequest(groups_names=("g",)))
    assert isinstance(busy, m.DeleteGroupsResponse)
    assert busy.results[0].error is Error.NON_EMPTY_GROUP
    h.hb(member_id="a", member_epoch=-1)
    gone = h.send(m.DeleteGroupsRequest(groups_names=("g",)))
    assert isinstance(gone, m.DeleteGroupsResponse)
    assert gone.results[0].error is Error.NONE
    assert "g" not in h.c.state.consumer_groups


def test_the_records_alone_rebuild_the_state() -> None:
    h = Harness()
    h.join("a", instance_id="i")
    h.join("b", topics=("foo", "bar"))
    h.settle("a", "b")
    h.hb(member_id="a", member_epoch=-2, instance_id="i")
    h.join("a2", instance_id="i")
    h.settle("a2", "b")
    h.advance(60_000)  # everyone's session expires
    state = CoordinatorState()
    for rec in h.records:
        apply_record(state, rec)
    assert state.consumer_groups == h.c.state.consumer_groups


@pytest.mark.parametrize("epoch", [-3, -100])
def test_an_epoch_below_minus_two_is_an_invalid_request(epoch: int) -> None:
    h = Harness()
    resp = h.hb(member_id="a", member_epoch=epoch)
    assert resp.error is Error.INVALID_REQUEST
    assert resp.error_message == "MemberEpoch is invalid."


def test_an_epoch_one_ahead_of_the_members_is_fenced() -> None:
    """throwIfConsumerGroupMemberEpochIsInvalid: any epoch above the member's fences it, the
    next one too (the boundary Kafka's own test, with an epoch far ahead, does not probe)."""
    h = Harness()
    h.join("a")
    assert h.c.state.consumer_groups["g"].members["a"].member_epoch == 1
    ahead = h.hb(member_id="a", member_epoch=2, topic_partitions=h.owned("a"))
    assert ahead.error is Error.FENCED_MEMBER_EPOCH
    same = h.hb(member_id="a", member_epoch=1, topic_partitions=h.owned("a"))
    assert same.error is Error.NONE and same.member_epoch == 1


def test_describe_and_the_target_follow_the_members_maps_order() -> None:
    """Kafka keeps a consumer group's members in a TimelineHashMap; ConsumerGroupDescribe
    lists them, and TargetAssignmentBuilder hands them to the assignor, in its order, not
    in join order. b, a and c join (ids of a Kafka 4.1.2 recording), a leaves: the map
    iterates c before b, and c and b share a bucket of the assignor's HashMap, so b, second
    in that order, takes a's partition (what Kafka answered in the recording)."""
    b, a, c = "2JhMtJI7Q7WS3LvaAGKCTA", "x4pDVEtISGaXb6Cr4CR19w", "lOy1_-LnRO6Vc2BJyOl_9w"
    h = Harness()
    for mid in (b, a, c):
        h.join(mid, topics=("bar",))  # three partitions, as in the recording
        h.settle(*[x for x in (b, a, c) if x in h.c.state.consumer_groups["g"].members])
    before = {mid: h.owned(mid) for mid in (b, c)}
    h.hb(member_id=a, member_epoch=-1)
    h.settle(b, c)
    resp = h.send(ConsumerGroupDescribeRequest(group_ids=("g",)))
    assert isinstance(resp, ConsumerGroupDescribeResponse)
    assert [x.member_id for x in resp.groups[0].members] == [c, b]
    gained = {mid: {(t.topic_id, p) for t in h.owned(mid) for p in t.partitions}
              - {(t.topic_id, p) for t in before[mid] for p in t.partitions} for mid in (b, c)}
    assert gained[c] == set() and len(gained[b]) > 0

"""Disagreements with Kafka 4.1.2 found by the differential test against Kafka's own group
coordinator shard for consumer groups (tests/test_consumer_coordinator_kafka_jar.py), each
fixed in the reference and pinned here on the reference alone (no JVM needed). The same
sequences run against Kafka in
tests/test_consumer_coordinator_kafka_jar.py::test_found_sequences_agree_with_kafka, or
here (the tests marked java)."""

from __future__ import annotations

import dataclasses

import pytest

from groupspec.assignors.server_spec import SubscriptionType, TopicMetadata
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.consumer.member import ConsumerMember
from groupspec.coordinator.coordinator import Coordinator
from groupspec.jvm import JvmOracle
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
from groupspec.protocol.topic_id import TopicId
from properties.consumer_kafka_diff import Op, check

T = TopicMetadata(TopicId.for_name("t"), "t", 3)
U = TopicMetadata(TopicId.for_name("u"), "u", 2)


def _coordinator(session_ms: int = 45_000) -> Coordinator:
    coord = Coordinator(CoordinatorConfig(
        consumer_group_session_timeout_ms=session_ms, offsets_retention_ms=180_000,
        offsets_retention_check_interval_ms=60_000))
    coord.set_topics([T, U])
    return coord


def _join(member_id: str, topics: tuple[str, ...] = ("t",), group: str = "g") -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=0, rebalance_timeout_ms=30_000,
        subscribed_topic_names=topics, topic_partitions=())


def _heartbeat(coord: Coordinator, rid: int, req: ConsumerGroupHeartbeatRequest,
               now: int) -> ConsumerGroupHeartbeatResponse:
    resp = coord.handle(rid, req, now).response_to(rid)
    assert isinstance(resp, ConsumerGroupHeartbeatResponse)
    return resp


def test_an_empty_consumer_group_without_offsets_is_deleted_by_the_periodic_cleanup() -> None:
    # GroupCoordinatorShard.cleanupGroupMetadata walks every group, consumer groups too:
    # OffsetMetadataManager.cleanupExpiredOffsets finds nothing to keep, so
    # GroupMetadataManager.maybeDeleteGroup writes the group's tombstones
    # (ConsumerGroup.createGroupTombstoneRecords). The reference kept the group forever.
    coord = _coordinator()
    _heartbeat(coord, 1, _join("m1"), 0)
    leave = ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=-1)
    assert _heartbeat(coord, 2, leave, 10).error is Error.NONE
    out = coord.advance(60_000)
    assert "g" not in coord.state.consumer_groups
    assert [x for x in out.records if x.persisted] == [
        cr.ConsumerGroupTargetAssignmentEpochRecord("g", None),
        cr.ConsumerGroupSubscriptionMetadataRecord("g", None), cr.ConsumerGroupEpochRecord("g", None)]


def test_a_consumer_groups_offsets_of_unsubscribed_topics_expire_after_the_retention() -> None:
    # ConsumerGroup.offsetExpirationCondition: the commit timestamp plus offsets.retention.ms,
    # for topics the group does not subscribe to (ModernGroup.isSubscribedToTopic); a group
    # keeping an offset of a subscribed topic is not deleted (a session long enough that the
    # member stays)
    coord = _coordinator(session_ms=600_000)
    joined = _heartbeat(coord, 1, _join("m1"), 0)
    commit = m.OffsetCommitRequest(
        group_id="g", generation_id=joined.member_epoch, member_id="m1", version=9,
        partitions=(m.OffsetCommitPartition("t", 0, 5, ""), m.OffsetCommitPartition("u", 0, 7, "")))
    coord.handle(2, commit, 0)
    out = coord.advance(180_000)
    assert [x for x in out.records if isinstance(x, r.OffsetsDeleted)] == [
        r.OffsetsDeleted("g", (("u", 0),), "retention")]
    assert set(coord.state.consumer_groups["g"].offsets) == {("t", 0)}


def test_leaving_an_unknown_group_says_group_not_found() -> None:
    # consumerGroupLeave looks the group up with GroupMetadataManager.consumerGroup(groupId),
    # whose GroupIdNotFoundException says "Group <id> not found." (the heartbeat path's
    # getOrMaybeCreateConsumerGroup says "Consumer group <id> not found.")
    coord = _coordinator()
    leave = ConsumerGroupHeartbeatRequest(group_id="nope", member_id="m1", member_epoch=-1)
    resp = _heartbeat(coord, 1, leave, 0)
    assert (resp.error, resp.error_message) == (Error.GROUP_ID_NOT_FOUND, "Group nope not found.")


def _target(coord: Coordinator, member_id: str, group: str = "g") -> dict[str, tuple[int, ...]]:
    names = {T.topic_id: "t", U.topic_id: "u"}
    return {names[t]: tuple(sorted(ps)) for t, ps in coord.state.consumer_groups[group].target[member_id].items()}


def test_a_reloaded_group_refreshes_its_subscription_metadata_at_its_next_heartbeat() -> None:
    # A group object Kafka builds afresh (here: reloaded by a failover) has never had its
    # metadata refreshed (ModernGroup's DeadlineAndEpoch.EMPTY), so its next heartbeat runs
    # GroupMetadataManager.updateSubscriptionMetadata, whose subscription type counts the
    # joining member: c0 on t and a member subscribed to nothing are HETEROGENEOUS, and
    # the uniform assignor gives c0 all of t. The reference took the group's type from
    # before the request (HOMOGENEOUS, c0 alone) unless the metadata hash had changed, and
    # the homogeneous assignment left c0 nothing.
    coord = _coordinator()
    _heartbeat(coord, 1, _join("c0"), 0)
    _heartbeat(coord, 2, _join("c2"), 0)
    leave = ConsumerGroupHeartbeatRequest(group_id="g", member_id="c2", member_epoch=-1)
    assert _heartbeat(coord, 3, leave, 0).error is Error.NONE  # epoch bumped, no new target
    coord.failover(0)
    joined = _heartbeat(coord, 4, _join("c1", topics=()), 0)
    assert joined.error is Error.NONE
    assert _target(coord, "c0") == {"t": (0, 1, 2)}


def test_a_tied_assignor_vote_goes_as_kafkas_hash_map_copy_orders_it() -> None:
    # ConsumerGroup.computePreferredServerAssignor copies the group's counts into a HashMap
    # sized for them and adds the updated member's assignor with HashMap.compute, which puts
    # a new key at the head of its bucket: with "uniform" named once and c0 now naming
    # "range", both land in one bucket of the 2-slot table, "range" first, and the tie goes
    # to range (Stream.max keeps the first maximum). The reference ordered the names by a
    # 16-bucket table and picked uniform.
    coord = _coordinator()
    _heartbeat(coord, 1, _join("c0"), 0)
    uniform = ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="c1", member_epoch=0, rebalance_timeout_ms=30_000,
        subscribed_topic_names=("t",), topic_partitions=(), server_assignor="uniform")
    _heartbeat(coord, 2, uniform, 0)
    epoch = coord.state.consumer_groups["g"].members["c0"].member_epoch
    change = ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="c0", member_epoch=epoch, subscribed_topic_names=("t", "u"),
        server_assignor="range")
    assert _heartbeat(coord, 3, change, 0).error is Error.NONE
    # RangeAssignor: t split c0 0-1, c1 2; u to its only subscriber
    assert _target(coord, "c0") == {"t": (0, 1), "u": (0, 1)}
    assert _target(coord, "c1") == {"t": (2,)}


def test_describing_an_unknown_group_says_group_not_found() -> None:
    # GroupMetadataManager.consumerGroupDescribe answers the GroupIdNotFoundException of
    # consumerGroup(groupId, committedOffset), raised by GroupMetadataManager.group: "Group
    # <id> not found."
    coord = _coordinator()
    resp = coord.handle(1, ConsumerGroupDescribeRequest(group_ids=("nope",)), 0).response_to(1)
    assert isinstance(resp, ConsumerGroupDescribeResponse)
    (described,) = resp.groups
    assert (described.error, described.error_message) == (Error.GROUP_ID_NOT_FOUND, "Group nope not found.")


def test_after_a_failover_regexes_resolved_against_an_older_image_are_refreshed() -> None:
    # A fresh GroupMetadataManager has seen no image (lastMetadataImageWithNewTopics -1);
    # GroupCoordinatorShard.onLoaded hands it the current one, which it takes as the last
    # image with new topics (onNewMetadataImage). A group whose regex was resolved against an
    # older image therefore schedules a resolution at its first heartbeat after a failover
    # (maybeUpdateRegularExpressions, 3.2) once 10 s passed since the last one. The
    # reference kept the old coordinator's value and scheduled nothing.
    coord = _coordinator(session_ms=600_000)
    join = ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="c0", member_epoch=0, rebalance_timeout_ms=30_000,
        subscribed_topic_regex="t|u", topic_partitions=())
    _heartbeat(coord, 1, join, 0)
    coord.complete_regex_resolutions(0)
    coord.set_topics([T, TopicMetadata(U.topic_id, "u", 3)])  # no new topic: no refresh needed
    coord.failover(20_000)
    epoch = coord.state.consumer_groups["g"].members["c0"].member_epoch
    beat = ConsumerGroupHeartbeatRequest(group_id="g", member_id="c0", member_epoch=epoch)
    assert _heartbeat(coord, 2, beat, 20_000).error is Error.NONE
    assert coord.pending_regex_resolutions() == {"g": 20_000}


def test_a_resolution_writes_its_regexes_in_the_order_of_kafkas_result_map() -> None:
    # refreshRegularExpressions builds its result in a HashMap sized for the regexes
    # (new HashMap<>(n): 4 buckets for 3), and handleRegularExpressionsResult writes one
    # record per entry in that map's order; the task's regexes come from a HashMap copy of
    # the group's subscribedRegularExpressions (maybeUpdateRegularExpressions). The
    # reference ordered them as a 16-bucket map of sorted names.
    coord = _coordinator(session_ms=600_000)
    for rid, (mid, rx) in enumerate((("c0", "t|u"), ("c1", "[tuv]"), ("c2", "x.*")), start=1):
        join = ConsumerGroupHeartbeatRequest(
            group_id="g", member_id=mid, member_epoch=0, rebalance_timeout_ms=30_000,
            subscribed_topic_regex=rx, topic_partitions=())
        _heartbeat(coord, rid, join, 0)
        coord.complete_regex_resolutions(0)
    epoch = coord.state.consumer_groups["g"].members["c0"].member_epoch
    beat = ConsumerGroupHeartbeatRequest(group_id="g", member_id="c0", member_epoch=epoch)
    _heartbeat(coord, 4, beat, 11_000)
    out = coord.complete_regex_resolutions(11_000)
    written = [x.regular_expression for x in out.records if isinstance(x, cr.ConsumerGroupRegularExpressionRecord)]
    assert written == ["t|u", "x.*", "[tuv]"]


def _hb(member_id: str, epoch: int, **fields: object) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(group_id="g", member_id=member_id, member_epoch=epoch, **fields)  # type: ignore[arg-type]


def test_a_group_whose_topics_changed_without_a_refresh_keeps_its_metadata_hash() -> None:
    # hasMetadataExpired is a deadline set by a refresh (updateSubscriptionMetadata, or a
    # regex resolution that bumps the epoch), cleared only by onNewMetadataImage for the
    # groups subscribed to a changed topic: not a comparison of hashes. A member dropping a
    # resolved regex for one not resolved yet (within the 10 s between resolutions) changes
    # the group's topics without a refresh, so Kafka's next heartbeat bumps nothing. The
    # reference recomputed the hash at every heartbeat and bumped the epoch.
    coord = _coordinator(session_ms=600_000)
    _heartbeat(coord, 1, _join("c0"), 0)
    _heartbeat(coord, 2, _hb("c0", 1, subscribed_topic_regex="t|u"), 0)
    coord.complete_regex_resolutions(0)
    epoch = coord.state.consumer_groups["g"].group_epoch
    _heartbeat(coord, 3, _hb("c0", 1, subscribed_topic_regex="[tuv]"), 0)
    member_epoch = coord.state.consumer_groups["g"].members["c0"].member_epoch
    assert coord.pending_regex_resolutions() == {}  # within 10 s of the last resolution
    _heartbeat(coord, 4, _hb("c0", member_epoch), 0)
    assert coord.state.consumer_groups["g"].group_epoch == epoch


def test_the_groups_subscription_type_is_the_one_set_when_a_member_last_changed() -> None:
    # ConsumerGroup.subscriptionType is recomputed only when a member is put or removed
    # (maybeUpdateGroupSubscriptionType), with the regexes resolved at that moment. A member
    # subscribed by regex is fenced: its removal (the group still holding its resolved
    # regex: t and u, u by regex only) sets HETEROGENEOUS, and the regex's tombstone
    # replayed next changes nothing; the next target is computed HETEROGENEOUS (uniform:
    # c0 gets t-0 and t-2). The reference recomputed the type from the group as it stood
    # (HOMOGENEOUS, both members on t alone).
    coord = _coordinator()
    ids = ("c1-member-0001", "c0-member-0002", "c2-member-0003")
    for rid, mid in enumerate(ids, start=1):
        _heartbeat(coord, rid, _join(mid), 0)
    first = ids[0]
    owned = (HeartbeatTopicPartitions(T.topic_id, (0, 1, 2)),)
    _heartbeat(coord, 4, _hb(first, 1, subscribed_topic_regex="t|u", topic_partitions=owned), 0)
    coord.complete_regex_resolutions(0)
    coord.advance(30_000)  # its rebalance timeout: it never revoked
    group = coord.state.consumer_groups["g"]
    assert first not in group.members
    assert group.subscription_kind is SubscriptionType.HETEROGENEOUS
    _heartbeat(coord, 5, _hb(ids[1], group.members[ids[1]].member_epoch, topic_partitions=()), 30_000)
    assert _target(coord, ids[1]) == {"t": (0, 2)}
    assert _target(coord, ids[2]) == {"t": (1,)}


def _static_join(member_id: str, instance_id: str) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=member_id, member_epoch=0, instance_id=instance_id,
        rebalance_timeout_ms=30_000, subscribed_topic_names=("t",), topic_partitions=())


def test_an_instance_id_mapped_to_a_removed_member_says_unknown_member() -> None:
    # ConsumerGroup.staticMember resolves the instance id's member id with
    # getOrMaybeCreateMember(memberId, false): a mapping to a member gone from the group
    # raises UnknownMemberIdException ("Member <id> is not a member of group <g>."). Such a
    # mapping stays behind when a member rejoins at epoch 0 under another instance id
    # (updateStaticMember adds i4 -> s3, keeps i3 -> s3) and is then replaced by a new
    # static member of its current instance id after a -2 leave (removeStaticMember drops
    # i4 only). The reference read the stale mapping as "no static member" and let s3 join
    # again (found by the wire fuzzer against Kafka 4.1.2: a v0 rejoin with the same member
    # id, examples/validator-false-positives/kip848/static-rejoin-same-member-id-kafka-4.1.2.jsonl).
    coord = _coordinator()
    assert _heartbeat(coord, 1, _static_join("s3", "i3"), 0).error is Error.NONE
    assert _heartbeat(coord, 2, _static_join("s3", "i4"), 0).error is Error.NONE
    leave = ConsumerGroupHeartbeatRequest(group_id="g", member_id="s3", member_epoch=-2, instance_id="i3")
    assert _heartbeat(coord, 3, leave, 0).member_epoch == -2
    assert _heartbeat(coord, 4, _static_join("s4", "i4"), 0).error is Error.NONE
    group = coord.state.consumer_groups["g"]
    assert set(group.members) == {"s4"}
    assert group.static_members == {"i3": "s3", "i4": "s4"}
    unknown = (Error.UNKNOWN_MEMBER_ID, "Member s3 is not a member of group g.")
    for rid, version in ((5, 0), (6, 1)):
        rejoin = _heartbeat(coord, rid, dataclasses.replace(_static_join("s3", "i3"), version=version), 0)
        assert (rejoin.error, rejoin.error_message) == unknown
    # consumerGroupLeave looks the instance id up the same way
    left = _heartbeat(coord, 7, leave, 0)
    assert (left.error, left.error_message) == unknown
    assert set(group.members) == {"s4"}


#: the same story against Kafka 4.1.2's consumer-group shard (properties/consumer_kafka_diff.py:
#: s3 has instance id i3, s4 has i4, other_instance sends i5 instead)
STALE_INSTANCE_MAPPING = [
    Op("join", who=3, epoch="zero", full=True, sub=0),
    Op("join", who=3, epoch="zero", full=True, sub=0, other_instance=True),
    Op("leave", who=3, epoch="static_leave"),
    Op("join", who=4, epoch="zero", full=True, sub=0, other_instance=True),
    Op("join", who=3, epoch="zero", full=True, sub=0, version=0),
    Op("join", who=3, epoch="zero", full=True, sub=0),
    Op("leave", who=3, epoch="static_leave"),
    Op("round"),
]


@pytest.mark.java
def test_an_instance_id_mapped_to_a_removed_member_agrees_with_kafka() -> None:
    with JvmOracle() as jvm:
        assert check(jvm, STALE_INSTANCE_MAPPING) == len(STALE_INSTANCE_MAPPING)


#: c0 joins on t, c1 on t, u, v (different subscriptions: c1 gets u and v), c0 rejoins on
#: t, u, v, and c2 joins on them: every member on the same topics, a quota of two each.
OVER_QUOTA_GIVES_UP = [
    Op("join", who=0, epoch="zero", full=True, sub=0),
    Op("join", who=1, epoch="zero", full=True, sub=3),
    Op("join", who=0, epoch="zero", full=True, sub=3),
    Op("join", who=2, epoch="zero", full=True, sub=3),
]


def test_an_over_quota_member_gives_up_the_partition_kafka_takes() -> None:
    # UniformHeterogeneousAssignmentBuilder builds c1's u and v on a fresh HashMap where
    # both ids share bucket 0; computeIfAbsent links v in front, so the target record lists
    # v first and its replay keeps that order. At c2's join the homogeneous builder keeps
    # c1's topics in that order up to the quota: v-0, then u-0, and u-1 goes to c2. The
    # reference listed u first (insertion order) and gave up v-0.
    v = TopicMetadata(TopicId.for_name("v"), "v", 1)
    coord = _coordinator()
    coord.set_topics([T, U, v])
    tuv = ("t", "u", "v")
    _heartbeat(coord, 1, _join("c0"), 0)
    _heartbeat(coord, 2, _join("c1", topics=tuv), 0)
    _heartbeat(coord, 3, _join("c0", topics=tuv), 0)
    _heartbeat(coord, 4, _join("c2", topics=tuv), 0)
    names = {T.topic_id: "t", U.topic_id: "u", v.topic_id: "v"}
    target = coord.state.consumer_groups["g"].target
    assert {names[t]: tuple(sorted(ps)) for t, ps in target["c1"].items()} == {"u": (0,), "v": (0,)}
    assert {names[t]: tuple(sorted(ps)) for t, ps in target["c2"].items()} == {"u": (1,), "t": (2,)}


@pytest.mark.java
def test_an_over_quota_member_gives_up_the_partition_kafka_takes_with_kafka() -> None:
    with JvmOracle() as jvm:
        assert check(jvm, OVER_QUOTA_GIVES_UP) == len(OVER_QUOTA_GIVES_UP)


def test_a_static_replacement_under_a_member_id_the_group_holds_keeps_that_ids_topics() -> None:
    # ConsumerGroup.computeSubscribedTopicNames(oldMember, newMember) and
    # computeSubscribedRegularExpressions are deltas over the group's counts: less the member
    # getOrMaybeSubscribeStaticConsumerGroupMember returned (the replaced static member's
    # state under the joining member id), plus the updated one. When that member id already
    # has an entry (s3, joined under instance id i5, rejoining under k1's i3), the entry's
    # topics still count, and updateSubscriptionMetadata's numMembers does not grow. The
    # reference recounted the members after the change, lost u, and bumped the group epoch
    # where Kafka does not (found by the differential test:
    # test_found_sequences_agree_with_kafka[static-replacement-under-a-member-id-the-group-holds])
    k1 = ConsumerMember("k1", instance_id="i3", subscribed_topic_names=frozenset({"t", "x"}))
    s3 = ConsumerMember("s3", instance_id="i5", subscribed_topic_names=frozenset({"t", "u"}))
    group = ConsumerGroup("g", members={"k1": k1, "s3": s3}, static_members={"i3": "k1", "i5": "s3"})
    old = dataclasses.replace(k1, member_id="s3")
    new = dataclasses.replace(old, subscribed_topic_regex="t|u")
    assert group.counts_with(old, new) == {"t": (2, 0), "x": (1, 0), "u": (1, 0)}
    assert group.regexes_with(old, new) == {"t|u": 1}
    assert group.num_members_with(new) == 2
    # a new member id and instance id add one member; a plain member's change swaps its topics
    assert group.num_members_with(ConsumerMember("n", instance_id="i9")) == 3
    assert group.counts_with(s3, dataclasses.replace(s3, subscribed_topic_names=frozenset({"x"}))) == {
        "t": (1, 0), "x": (2, 0)}


def test_a_static_replacement_under_a_member_id_the_group_holds_leaves_that_ids_partitions_unassigned() -> None:
    # GroupMetadataManager.updateTargetAssignment hands the uniform assignor the group's
    # inverted target assignment as it was before the request (withInvertedTargetAssignment,
    # GroupSpecImpl.isPartitionAssigned), and UniformHomogeneousAssignmentBuilder.build queues
    # only the partitions it does not mark. s3 joined under instance id i5 and was given t-2;
    # rejoining under i3 it takes over the classic static member k1's target (u-0, u-1), so
    # no member spec holds t-2 any more, yet t-2 is still marked (held by s3): nobody gets it.
    # The reference took "assigned" to be the union of the specs' assignments and gave t-2
    # to s3 (found by the differential test, classic-heavy sequences:
    # test_found_sequences_agree_with_kafka[static-replacement-leaves-the-members-own-target-unassigned])
    coord = _coordinator()
    _heartbeat(coord, 1, _join("c0"), 0)
    out = coord.handle(2, m.JoinGroupRequest(
        group_id="g", member_id="", group_instance_id="i3", protocol_type="consumer",
        protocols=(m.JoinGroupProtocol("range", Subscription(("t", "u")).encode()),),
        session_timeout_ms=10_000, rebalance_timeout_ms=20_000, client_id="k1",
        client_host="/127.0.0.1", version=9), 0)
    k1 = out.response_to(2)
    assert isinstance(k1, m.JoinGroupResponse) and k1.error is Error.NONE
    _heartbeat(coord, 3, dataclasses.replace(_join("s3"), instance_id="i5"), 0)
    group = coord.state.consumer_groups["g"]
    t, u = T.topic_id, U.topic_id
    assert group.target == {"c0": {t: frozenset({0, 1})}, k1.member_id: {u: frozenset({0, 1})},
                            "s3": {t: frozenset({2})}}
    resp = _heartbeat(coord, 4, dataclasses.replace(_join("s3"), instance_id="i3"), 0)
    assert resp.error is Error.NONE and resp.member_epoch == 4
    assert resp.assignment is not None and resp.assignment.topic_partitions == ()
    assert group.target == {"c0": {t: frozenset({0, 1})}, "s3": {}}


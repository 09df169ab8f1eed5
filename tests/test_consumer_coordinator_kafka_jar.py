"""The reference consumer-group (KIP-848) coordinator against Kafka 4.1.2's own group
coordinator shard.

Random sequences of ConsumerGroupHeartbeat requests (joins, steady heartbeats with owned
partitions reported right, stale or wrong, subscription changes, leaves, static members),
clock advances and coordinator failovers drive both the reference (``Coordinator.handle`` /
``advance`` / ``failover``) and a real ``GroupCoordinatorShard`` built from
kafka-group-coordinator-4.1.2.jar (the JVM oracle's ``ConsumerGroupShard`` tool); every
step's responses, the groups' state (members, target assignment, timers, offsets) and the
records it appended must be identical (``properties/consumer_kafka_diff.py`` says what is
compared, what is normalised and why).

Java is required: a missing JVM fails the test (never skipped).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.jvm import JvmOracle
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from properties.consumer_kafka_diff import (
    DOWNGRADE_SEQUENCES,
    SEQUENCES,
    TOOL,
    UPGRADE_SEQUENCES,
    Differ,
    Op,
    check,
)

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _agree_on(jvm: JvmOracle, sequences: st.SearchStrategy[list[Op]], scale: int = 1,
              **kw: Any) -> None:
    """Hypothesis drives ``sequences`` through both sides (``check``'s options ``kw``),
    ``scale`` times the loaded profile's examples: an example is a few milliseconds."""
    current = settings()

    @settings(current, max_examples=scale * current.max_examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(ops=sequences)
    def run(ops: list[Op]) -> None:
        check(jvm, ops, **kw)

    run()


@pytest.mark.parametrize("assignors", [("uniform", "range"), ("range", "uniform")],
                         ids=["uniform-default", "range-default"])
def test_reference_answers_as_kafkas_consumer_group_coordinator(
    jvm: JvmOracle, assignors: tuple[str, str]
) -> None:
    # the first assignor is the default of a group whose members name none: Kafka's own
    # order, then range first; twice the loaded profile's examples per order (ci: 120 each,
    # about 4 s in all)
    _agree_on(jvm, SEQUENCES, scale=2, assignors=assignors)


def test_online_upgrades_answer_as_kafka(jvm: JvmOracle) -> None:
    """group.consumer.migration.policy=upgrade on both sides: a classic group is made first
    (two classic clients, one static; in its first join phase or past it), then any sequence,
    so consumer-protocol members joining convert it (GroupMetadataManager.
    convertToConsumerGroup, ConsumerGroup.fromClassicGroup) and classic members go on in the
    consumer group: every step compared as in the test above."""
    _agree_on(jvm, UPGRADE_SEQUENCES, policy="upgrade")


def test_online_downgrades_answer_as_kafka(jvm: JvmOracle) -> None:
    """group.consumer.migration.policy=bidirectional (Kafka's default) on both sides: a mixed
    group made by an upgrade, whose consumer-protocol member then leaves (or its session
    expires), goes back to a classic group (GroupMetadataManager.convertToClassicGroup,
    ClassicGroup.fromConsumerGroup) and a rebalance; then any sequence (upgrades again
    included)."""
    _agree_on(jvm, DOWNGRADE_SEQUENCES, policy="bidirectional")


def test_a_whole_rebalance_is_compared(jvm: JvmOracle) -> None:
    """A fixed story, so the harness is known to compare real answers: two members join,
    reconcile, one leaves, the other's session expires."""
    ops = [
        Op("join", who=0, epoch="zero", full=True), Op("join", who=1, epoch="zero", full=True, sub=1),
        Op("next", who=0), Op("next", who=1), Op("next", who=0), Op("advance", ms=5_000),
        Op("round"), Op("leave", who=0, epoch="leave"), Op("round"), Op("advance", ms=50_000),
        Op("round"),
    ]
    assert check(jvm, ops) == len(ops)


#: sequences on which the reference once answered differently from Kafka (each fixed in the
#: reference; tests/test_consumer_coordinator_kafka_regressions.py pins the reference's side)
FOUND: dict[str, list[Op]] = {
    # the periodic offset-expiry job deletes an empty consumer group without offsets
    # (GroupCoordinatorShard.cleanupGroupMetadata walks consumer groups too)
    "empty-group-deleted-by-cleanup": [
        Op("join", who=0, epoch="zero", full=True, sub=0), Op("leave", who=0, epoch="leave"),
        Op("advance", ms=60_000),
    ],
    # a leave (and a describe) of a missing group: "Group <id> not found."
    "leave-unknown-group-message": [Op("leave", who=0, group=1, epoch="leave")],
    "describe-unknown-group-message": [Op("describe", what="one")],
    # a reloaded group refreshes its subscription metadata at its next heartbeat, with the
    # subscription type of the members after it (ModernGroup's DeadlineAndEpoch.EMPTY)
    "reloaded-group-refreshes-subscription-metadata": [
        Op("join", who=0, epoch="zero", full=True, sub=0), Op("join", who=2, epoch="zero", full=True, sub=0),
        Op("leave", who=2, epoch="leave"), Op("failover"),
        Op("join", who=1, epoch="zero", full=True, sub=4),
    ],
    # a tied assignor vote goes to the name first in computePreferredServerAssignor's HashMap
    "assignor-tie-hash-map-order": [
        Op("join", who=0, epoch="zero", full=True, sub=0),
        Op("join", who=1, epoch="zero", full=True, sub=0, assignor="uniform"),
        Op("heartbeat", who=0, sub=1, assignor="range"),
    ],
    # a regex resolution writes its records in the order of Kafka's result map (a HashMap
    # sized for the regexes)
    "regex-result-record-order": [
        Op("join", who=0, epoch="zero", full=True, regex=0), Op("join", who=1, epoch="zero", full=True, regex=1),
        Op("join", who=2, epoch="zero", full=True, regex=2), Op("advance", ms=11_000), Op("next", who=0),
    ],
    # after a failover, regexes resolved against an older image are refreshed
    "failover-refreshes-old-regexes": [
        Op("next"), Op("next"), Op("heartbeat", who=0, regex=0), Op("round"), Op("advance", ms=20_000),
        Op("round"), Op("image", ms=1), Op("failover"), Op("next"),
    ],
    # a regex dropped before its replacement is resolved: no refresh, no epoch bump
    "dropped-regex-keeps-metadata-hash": [
        Op("next"), Op("next"), Op("heartbeat", who=0, regex=0), Op("heartbeat", who=0, regex=1), Op("next"),
    ],
    # the group's subscription type is the one set when a member last changed
    "subscription-type-cached": [
        Op("next", who=1), Op("next", who=0), Op("next", who=2), Op("heartbeat", who=1, regex=0),
        Op("advance", ms=30_000), Op("next", who=0),
    ],
    # a consumer-protocol member that re-upgraded a downgraded group under instance id i5
    # rejoins with the same member id under i3, a classic static member's: Kafka counts the
    # group's topics as the group's less the replaced member's plus the new subscription
    # (ConsumerGroup.computeSubscribedTopicNames), so the member id's earlier entry (topic u)
    # still counts and the metadata hash, hence the group epoch, stays
    "static-replacement-under-a-member-id-the-group-holds": [
        Op("classic", who=0, what="join", ids="empty"), Op("classic", who=0, what="join"),
        Op("classic", who=1, what="join"), Op("advance", ms=6_100),
        Op("join", who=0, epoch="zero", full=True), Op("leave", who=0, epoch="leave"),
        Op("join", who=3, epoch="zero", sub=1, full=True, other_instance=True),
        Op("join", who=3, epoch="zero", regex=0, full=True),
    ],
    # a classic member of a consumer group commits as a classic client: OffsetCommit v8 is
    # not refused, and a wrong generation is ILLEGAL_GENERATION (ConsumerGroup.
    # validateOffsetCommit checks the version and answers STALE_MEMBER_EPOCH only for
    # consumer-protocol members)
    "classic-member-commits-to-a-consumer-group": [
        Op("classic", who=0, what="join", ids="empty"), Op("classic", who=0, what="join"),
        Op("classic", who=1, what="join"), Op("advance", ms=6_100),
        Op("join", who=0, epoch="zero", full=True),
        Op("classic", who=0, what="commit", sub=1), Op("classic", who=0, what="commit"),
        Op("classic", who=1, what="commit", epoch="stale"),
        Op("classic", who=1, what="commit", epoch="stale", sub=1),
    ],
    # s3, joined under instance id i5 (given t-2), rejoins under i3 and takes over the
    # classic static member k1's target: t-2 stays marked assigned in the inverted target
    # assignment the uniform assignor reads (GroupSpecImpl.isPartitionAssigned), held by no
    # member spec, so nobody gets it
    "static-replacement-leaves-the-members-own-target-unassigned": [
        Op("join", who=0, epoch="zero", full=True, sub=0), Op("classic", who=1, what="join", ids="empty", sub=1),
        Op("join", who=3, epoch="zero", full=True, sub=0, other_instance=True),
        Op("join", who=3, epoch="zero", full=True, sub=0),
    ],
    # deleting a group whose partitions t-0 and v-0 hold only pending transactional offsets
    # writes their tombstones in the order of Kafka's open-transactions maps (v-0, t-0;
    # OffsetMetadataManager.deleteAllOffsets), not sorted
    "group-deletion-tombstones-pending-offsets-in-kafkas-order": [
        Op("join", who=0, epoch="zero", full=True, sub=0),
        Op("txn_commit", who=0, ids="known", epoch="current", what="short", ms=1),
        Op("leave", who=0, epoch="leave"), Op("delete", what="one"),
    ],
}

#: the migration policy of a found sequence that needs other than check's default
FOUND_POLICY = {"static-replacement-under-a-member-id-the-group-holds": "bidirectional",
                "classic-member-commits-to-a-consumer-group": "upgrade"}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_sequences_agree_with_kafka(jvm: JvmOracle, name: str) -> None:
    ops = FOUND[name]
    if name in FOUND_POLICY:
        assert check(jvm, ops, policy=FOUND_POLICY[name]) == len(ops)
    else:
        assert check(jvm, ops) == len(ops)


#: the stories of Kafka's unit tests of classic members replacing or removing other members
#: (tests/test_consumer_coordinator_kafka_classic_members.py), told with the differential
#: test's clients: k1 is a classic static member with s3's instance id i3, and its LeaveGroup
#: without a member id is the admin client's removal of whoever holds i3
CLASSIC_REPLACEMENTS: dict[str, list[Op]] = {
    # testConsumerMemberWithRegexReplacedByClassicMemberWith{Same,Changed}Subscription: the
    # regex loses its only subscriber (its tombstone) and the group epoch is bumped
    "regex-member-replaced-by-classic-member": [
        Op("join", who=3, epoch="zero", full=True, regex=0), Op("join", who=0, epoch="zero", full=True, sub=0),
        Op("next", who=3), Op("classic", who=1, what="join", ids="empty", sub=0), Op("next", who=0),
        Op("classic", who=1, what="sync"),
    ],
    "regex-member-replaced-by-classic-member-with-changed-subscription": [
        Op("join", who=3, epoch="zero", full=True, regex=1), Op("join", who=0, epoch="zero", full=True, sub=0),
        Op("next", who=3), Op("classic", who=1, what="join", ids="empty", sub=2), Op("next", who=0),
    ],
    # testResolvedRegularExpressionsRemovedWhenConsumerMembersRemovedByAdminApi: a regex
    # another member still subscribes to is kept, one without subscribers tombstoned
    "admin-removes-a-regex-member": [
        Op("join", who=3, epoch="zero", full=True, regex=0), Op("join", who=0, epoch="zero", full=True, regex=0),
        Op("join", who=4, epoch="zero", full=True, regex=1), Op("next", who=3),
        Op("classic", who=1, what="leave", ids="empty"), Op("next", who=0),
    ],
    "admin-removes-the-last-regex-subscriber": [
        Op("join", who=3, epoch="zero", full=True, regex=0), Op("join", who=0, epoch="zero", full=True, sub=1),
        Op("next", who=3), Op("classic", who=1, what="leave", ids="empty"), Op("next", who=0),
    ],
    # testLastConsumerProtocolMemberLeavingConsumerGroupByAdminApi: removing the last
    # consumer-protocol member leaves a classic member alone (a downgrade, if allowed)
    "admin-removes-the-last-consumer-protocol-member": [
        Op("join", who=3, epoch="zero", full=True, sub=1), Op("classic", who=0, what="join", ids="empty"),
        Op("classic", who=0, what="join"), Op("next", who=3), Op("classic", who=0, what="sync"),
        Op("classic", who=1, what="leave", ids="empty"), Op("classic", who=0, what="beat"),
        Op("advance", ms=20_000), Op("classic", who=0, what="join"),
    ],
}


@pytest.mark.parametrize("policy", ["disabled", "bidirectional"])
@pytest.mark.parametrize("name", sorted(CLASSIC_REPLACEMENTS))
def test_classic_replacements_and_admin_removals_agree_with_kafka(jvm: JvmOracle, name: str, policy: str) -> None:
    ops = CLASSIC_REPLACEMENTS[name]
    assert check(jvm, ops, policy=policy) == len(ops)


def test_consumer_timers_outlive_a_downgrade_as_in_kafka(jvm: JvmOracle) -> None:
    """A mixed group (classic k0 and k1, consumer c0): k0 rejoins at t=7100 (its consumer-group
    sync timeout armed for t=27100), c0 leaves (downgrade), c0 joins again (upgrade). Kafka's
    GroupMetadataManager.convertToClassicGroup cancels no consumer-group timer and
    consumerGroupSyncKey is per group and member, so the new consumer group has k0's sync
    timeout again, and k0, heartbeating but never syncing, is fenced by it at t=27100 (its
    join timeout, armed by its first heartbeat at t=12100, would be later): every step
    compared with Kafka 4.1.2's shard (the reference's ConsumerTimers)."""
    up = Op("join", who=0, epoch="zero", full=True, sub=0)
    beat = Op("classic", who=0, what="beat")
    start = [Op("classic", who=0, what="join", ids="empty"), Op("classic", who=0, what="join"),
             Op("classic", who=1, what="join"), Op("advance", ms=6_100)]
    ops = [*start, up, Op("advance", ms=1_000), Op("classic", who=0, what="join", sub=0),
           Op("leave", who=0, epoch="leave"), up,
           Op("advance", ms=5_000), beat, Op("advance", ms=9_000), beat, Op("advance", ms=5_999), beat]
    d = Differ(jvm, policy="bidirectional")
    assert d.run(ops) == len(ops)
    k0 = d.classic_seen[(0, 0)][0]
    group = d.ref.state.consumer_groups["g0"]
    assert k0 in group.members and group.classic_sync_deadlines.get(k0) == 27_100
    assert d.run([Op("advance", ms=1)]) == 1
    assert set(d.ref.state.consumer_groups["g0"].members) == {d.seen[(0, 0)].member_id}


def test_a_classic_join_timer_outlives_an_upgrade_as_in_kafka(jvm: JvmOracle) -> None:
    """The reverse: a classic group (k0, k1 static with i3) rebalancing when s3 (i3) joins
    at t=6100 (its join timer armed for t=26100), so it is upgraded, then k1 takes i3 back
    with the same subscription (a downgrade with no rebalance: a Stable classic group).
    convertToConsumerGroup does not cancel classicGroupJoinKey, so Kafka's timer fires on the
    new classic group (completeClassicGroupJoin by group id): k0, dynamic and not rejoining
    in a Stable group, is removed, and the timer re-armed (no member joined). Both beat
    until then; every step compared with Kafka 4.1.2's shard."""
    beats = [Op("classic", who=0, what="beat"), Op("classic", who=1, what="beat")]
    ops = [Op("classic", who=0, what="join", ids="empty"), Op("classic", who=0, what="join"),
           Op("classic", who=1, what="join"), Op("advance", ms=6_100),
           Op("classic", who=0, what="sync"), Op("classic", who=1, what="sync"),
           Op("classic", who=0, what="join", sub=0), Op("join", who=3, epoch="zero", full=True, sub=6),
           Op("classic", who=1, what="join", ids="empty", sub=6), *beats,
           Op("advance", ms=9_000), *beats, Op("advance", ms=9_000), *beats, Op("advance", ms=1_999)]
    d = Differ(jvm, policy="bidirectional")
    assert d.run(ops) == len(ops)
    k0 = d.classic_seen[(0, 0)][0]
    group = d.ref.state.groups["g0"]
    assert group.state is GroupState.Stable and k0 in group.members
    assert group.join_timer is not None and group.join_timer.deadline_ms == 26_100
    assert d.run([Op("advance", ms=1), *beats]) == 3  # k0's beat: UNKNOWN_MEMBER_ID in both
    assert k0 not in group.members and group.state is GroupState.Stable
    assert group.join_timer is not None and group.join_timer.deadline_ms == 46_100


def test_classic_requests_to_a_consumer_group_are_answered_as_kafka(jvm: JvmOracle) -> None:
    """Classic Heartbeat, SyncGroup and LeaveGroup to a consumer group with a static member
    (GroupMetadataManager.classicGroup{Heartbeat,Sync,Leave}ToConsumerGroup, the reference's
    coordinator/classic/to_consumer_group.py), then to the emptied group: the same answers
    from Kafka 4.1.2's shard and the reference."""
    d = Differ(jvm)
    d.run([Op("join", who=3, epoch="zero", full=True, sub=0)])  # s3, instance i3
    member = d.seen[(3, 0)].member_id
    identities = [("zz", "i3"), ("", "i3"), (member, None), (member, "i3"), ("x", "nope")]

    def both(wire: dict[str, Any], req: m.Request) -> tuple[Any, Any]:
        d.rid += 1
        kafka = d.jvm.call(TOOL, {"action": "op", "op": {"rid": d.rid, "group": "g0", **wire}})
        [[rid, answer]] = kafka["completed"]
        assert rid == d.rid
        ref = d.ref.handle(d.rid, req, d.now).response_to(d.rid)
        return answer, ref

    for emptied in (False, True):
        for mid, iid in identities[:1] + identities[2:]:
            k, r = both({"kind": "classic_heartbeat", "generation_id": 1, "member_id": mid,
                         "group_instance_id": iid},
                        m.HeartbeatRequest(group_id="g0", generation_id=1, member_id=mid, group_instance_id=iid))
            assert isinstance(r, m.HeartbeatResponse) and k["error"] == r.error.value, (emptied, mid, iid, k, r)
            k, r = both({"kind": "classic_sync", "generation_id": 1, "member_id": mid, "group_instance_id": iid,
                         "protocol_type": "consumer", "protocol_name": "range"},
                        m.SyncGroupRequest(group_id="g0", generation_id=1, member_id=mid, group_instance_id=iid,
                                           protocol_type="consumer", protocol_name="range"))
            assert isinstance(r, m.SyncGroupResponse) and k["error"] == r.error.value, (emptied, mid, iid, k, r)
        k, r = both({"kind": "classic_leave", "members": [list(x) for x in identities]},
                    m.LeaveGroupRequest(group_id="g0", members=tuple(m.MemberIdentity(a, b) for a, b in identities)))
        assert isinstance(r, m.LeaveGroupResponse) and k["error"] == r.error.value
        assert [(x["member_id"], x["group_instance_id"], x["error"]) for x in k["members"]] == [
            (x.member_id, x.group_instance_id, x.error.value) for x in r.members], (emptied, k, r)
        if not emptied:
            d.run([Op("leave", who=3, epoch="leave")])


def _classic_join(member_id: str, instance_id: str | None = None,
                  topics: tuple[str, ...] = ("t",)) -> tuple[dict[str, Any], m.JoinGroupRequest]:
    meta = Subscription(topics).encode()
    wire = {"kind": "classic_join", "group": "g0", "member_id": member_id, "group_instance_id": instance_id,
            "protocol_type": "consumer", "session_timeout_ms": 10_000, "rebalance_timeout_ms": 20_000,
            "protocols": [["range", base64.b64encode(meta).decode()]], "version": 9,
            "client_id": "classic", "client_host": "/127.0.0.1"}
    return wire, m.JoinGroupRequest(
        group_id="g0", member_id=member_id, group_instance_id=instance_id, protocol_type="consumer",
        protocols=(m.JoinGroupProtocol("range", meta),), session_timeout_ms=10_000,
        rebalance_timeout_ms=20_000, client_id="classic", client_host="/127.0.0.1", version=9)


def _classic_sync(member_id: str, generation: int) -> tuple[dict[str, Any], m.SyncGroupRequest]:
    wire = {"kind": "classic_sync", "group": "g0", "generation_id": generation, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range"}
    return wire, m.SyncGroupRequest(group_id="g0", generation_id=generation, member_id=member_id,
                                    protocol_type="consumer", protocol_name="range")


def _classic_heartbeat(member_id: str, generation: int) -> tuple[dict[str, Any], m.HeartbeatRequest]:
    wire = {"kind": "classic_heartbeat", "group": "g0", "generation_id": generation, "member_id": member_id,
            "group_instance_id": None}
    return wire, m.HeartbeatRequest(group_id="g0", generation_id=generation, member_id=member_id)


def test_a_classic_member_commits_and_fetches_offsets_as_kafka_lets_it(jvm: JvmOracle) -> None:
    """ConsumerGroup.validateOffsetCommit and validateOffsetFetch for a member of a consumer
    group speaking the classic protocol, against Kafka 4.1.2's shard: it commits with any
    OffsetCommit version (only consumer-protocol members need v9), and a generation other
    than its member epoch is ILLEGAL_GENERATION (validateMemberEpoch), for commits and
    fetches alike. The reference once answered v8 UNSUPPORTED_VERSION and a wrong
    generation STALE_MEMBER_EPOCH (ConsumerGroupTest.testValidateOffsetCommit)."""
    d = Differ(jvm)
    d.run([Op("join", who=0, epoch="zero", full=True, sub=0)])  # a consumer-protocol member
    first = d.classic(*_classic_join(""))
    assert isinstance(first, m.JoinGroupResponse)
    mid = first.member_id
    joined = d.classic(*_classic_join(mid))
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    gen = joined.generation_id
    answers = []
    for version in (8, 9):
        for generation in (gen, gen + 1, -1):
            wire = {"kind": "commit", "group": "g0", "generation_id": generation, "member_id": mid,
                    "group_instance_id": None, "version": version, "partitions": [["t", 0, 10, "m"]]}
            commit = d.classic(wire, m.OffsetCommitRequest(
                group_id="g0", generation_id=generation, member_id=mid, version=version,
                partitions=(m.OffsetCommitPartition("t", 0, 10, "m"),)))
            assert isinstance(commit, m.OffsetCommitResponse)
            answers.append(commit.partitions[0].error)
    assert answers == [Error.NONE, Error.ILLEGAL_GENERATION, Error.ILLEGAL_GENERATION] * 2
    for epoch in (gen, gen - 1):
        fetched = d.classic({"kind": "fetch", "group": "g0", "member_id": mid, "member_epoch": epoch,
                             "partitions": [["t", 0]]},
                            m.OffsetFetchRequest(group_id="g0", partitions=(("t", 0),), member_id=mid,
                                                 member_epoch=epoch))
        assert isinstance(fetched, m.OffsetFetchResponse)
        assert fetched.error is (Error.NONE if epoch == gen else Error.ILLEGAL_GENERATION)


def test_a_classic_member_of_a_consumer_group_is_treated_as_kafka_treats_it(jvm: JvmOracle) -> None:
    """KIP-848 mixed groups against Kafka 4.1.2's shard (GroupMetadataManager.
    classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup): a classic member joins a
    consumer group, is given a member id, joins, syncs, heartbeats while the consumer-protocol
    member revokes, rejoins for the partitions released, and is fenced by its join timeout;
    a static classic member joins and leaves. Every step's answers, the group (members with
    their classic metadata, target, timers) and the records written are compared."""
    d = Differ(jvm)
    d.run([Op("join", who=0, epoch="zero", full=True, sub=0)])  # a consumer-protocol member
    first = d.classic(*_classic_join(""))
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    mid = first.member_id
    joined = d.classic(*_classic_join(mid))
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    gen = joined.generation_id
    d.classic(*_classic_sync(mid, gen))
    d.classic(*_classic_heartbeat(mid, gen))
    d.run([Op("next", who=0), Op("next", who=0)])  # the consumer-protocol member revokes
    beat = d.classic(*_classic_heartbeat(mid, gen))
    assert isinstance(beat, m.HeartbeatResponse) and beat.error is Error.REBALANCE_IN_PROGRESS
    rejoined = d.classic(*_classic_join(mid))
    assert isinstance(rejoined, m.JoinGroupResponse) and rejoined.error is Error.NONE
    synced = d.classic(*_classic_sync(mid, rejoined.generation_id))
    assert isinstance(synced, m.SyncGroupResponse) and synced.error is Error.NONE and synced.assignment
    # a static classic member joins and syncs: the epoch moves, the dynamic one is told to
    # rejoin and does not
    static = d.classic(*_classic_join("", instance_id="i9"))
    assert isinstance(static, m.JoinGroupResponse) and static.error is Error.NONE
    d.classic(*_classic_sync(static.member_id, static.generation_id))
    d.run([Op("next", who=0)])
    d.classic(*_classic_heartbeat(mid, rejoined.generation_id))
    d.run([Op("advance", ms=10_000), Op("next", who=0)])
    d.classic(*_classic_heartbeat(static.member_id, static.generation_id))
    d.run([Op("advance", ms=10_000), Op("next", who=0)])
    # both classic members were told to rejoin (the fencing of one bumps the epoch) and did
    # not: both are gone, by their join timeouts
    assert set(d.ref.state.consumer_groups["g0"].members) == {d.seen[(0, 0)].member_id}
    d.classic({"kind": "classic_leave", "group": "g0", "members": [[static.member_id, "i9"]]},
              m.LeaveGroupRequest(group_id="g0", members=(m.MemberIdentity(static.member_id, "i9"),)))


def test_a_classic_members_offset_commits_and_fetches_are_answered_as_kafka(jvm: JvmOracle) -> None:
    """A classic member of a consumer group commits and fetches offsets (ConsumerGroup.
    validateOffsetCommit, validateOffsetFetch, validateMemberEpoch): at every OffsetCommit
    version, at its generation, a stale one and a future one, beside a consumer-protocol
    member doing the same; the same answers from Kafka 4.1.2's shard and the reference
    (OffsetMetadataManagerTest testConsumerGroupOffsetCommitWithIllegalGenerationId and
    testConsumerGroupOffsetFetchWithIllegalGenerationId, whose port found the reference
    answering STALE_MEMBER_EPOCH and holding the classic member to v9)."""
    d = Differ(jvm)
    d.run([Op("join", who=0, epoch="zero", full=True, sub=0)])  # a consumer-protocol member
    consumer = d.seen[(0, 0)]
    first = d.classic(*_classic_join(""))
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    joined = d.classic(*_classic_join(first.member_id))
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    classic_id, generation = joined.member_id, joined.generation_id

    def both(wire: dict[str, Any], req: m.Request) -> Any:
        d.rid += 1
        kafka = d.jvm.call(TOOL, {"action": "op", "op": {"rid": d.rid, "group": "g0", **wire}})
        [[rid, answer]] = kafka["completed"]
        assert rid == d.rid
        ref = d.ref.handle(d.rid, req, d.now).response_to(d.rid)
        return answer, ref

    errors: list[tuple[str, int, int, int]] = []
    for who, member_id, epoch in (("classic", classic_id, generation), ("consumer", consumer.member_id, consumer.epoch)):
        for version in range(m.OFFSET_COMMIT_MAX_VERSION + 1):
            for sent in (epoch, epoch - 1, epoch + 1):
                parts = [["t", 0, 10 * d.rid + 10, "m"]]
                k, r = both({"kind": "commit", "generation_id": sent, "member_id": member_id,
                             "group_instance_id": None, "version": version, "partitions": parts},
                            m.OffsetCommitRequest(group_id="g0", generation_id=sent, member_id=member_id,
                                                  version=version,
                                                  partitions=(m.OffsetCommitPartition("t", 0, 10 * d.rid + 10, "m"),)))
                assert isinstance(r, m.OffsetCommitResponse)
                assert [p["error"] for p in k["partitions"]] == [p.error.value for p in r.partitions], (
                    who, version, sent, k, r)
                errors.append((who, version, sent - epoch, r.partitions[0].error.value))
        for sent in (epoch, epoch - 1, epoch + 1):
            k, r = both({"kind": "fetch", "member_id": member_id, "member_epoch": sent, "partitions": None},
                        m.OffsetFetchRequest(group_id="g0", member_id=member_id, member_epoch=sent))
            assert isinstance(r, m.OffsetFetchResponse)
            assert k["error"] == r.error.value, (who, sent, k, r)
            assert [x[:4] for x in k["offsets"]] == [
                [p.topic, p.partition, p.committed_offset, p.metadata] for p in r.partitions], (who, sent, k, r)
    # the rules the comparison went through: the classic member commits at any version and
    # is refused ILLEGAL_GENERATION; the consumer-protocol member needs v9
    assert ("classic", 0, 0, Error.NONE.value) in errors
    assert ("classic", 9, -1, Error.ILLEGAL_GENERATION.value) in errors
    assert ("consumer", 8, 0, Error.UNSUPPORTED_VERSION.value) in errors
    assert ("consumer", 9, 1, Error.STALE_MEMBER_EPOCH.value) in errors


# Kafka: testConsumerHeartbeatRequestValidation (GroupCoordinatorServiceTest)
@pytest.mark.parametrize("assignors", [("uniform", "range"), ("range", "uniform")])
def test_an_unsupported_assignor_is_refused_as_kafka_refuses_it(
    jvm: JvmOracle, assignors: tuple[str, str]
) -> None:
    """UNSUPPORTED_ASSIGNOR and its message, which lists the supported assignors in the order
    of the service's HashSet of their names (GroupCoordinatorService's constructor), compared
    with the tool's rendering of the service's check, in both configured orders."""
    d = Differ(jvm, assignors=assignors)
    d.run([Op("join", who=0, epoch="zero", full=True, assignor="bogus"),
           Op("join", who=1, epoch="zero", full=True, assignor=assignors[1])])


def test_a_fetch_with_a_null_member_id_and_an_epoch_is_answered_as_kafka(jvm: JvmOracle) -> None:
    """OffsetFetch v9+ to a consumer group with a null member id: accepted with a negative
    epoch, else Kafka's members-map lookup of the null id throws (UNKNOWN_SERVER_ERROR), in a
    group with a member and once it has left; the same answers from the 4.1.2 shard and the
    reference."""
    d = Differ(jvm)
    d.run([Op("join", who=0, epoch="zero", full=True, sub=0)])
    for left in (False, True):
        for member_id, epoch in ((None, 5), (None, 0), (None, -1), ("", -1), ("", 0)):
            d.rid += 1
            kafka = d.jvm.call(TOOL, {"action": "op", "op": {
                "rid": d.rid, "group": "g0", "kind": "fetch", "member_id": member_id, "member_epoch": epoch,
                "partitions": None}})
            [[rid, answer]] = kafka["completed"]
            assert rid == d.rid
            ref = d.ref.handle(d.rid, m.OffsetFetchRequest(group_id="g0", member_id=member_id, member_epoch=epoch),
                               d.now).response_to(d.rid)
            assert isinstance(ref, m.OffsetFetchResponse)
            assert answer["error"] == ref.error.value, (left, member_id, epoch, answer, ref)
        if not left:
            d.run([Op("leave", who=0, epoch="leave")])

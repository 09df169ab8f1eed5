"""Kafka's own OffsetMetadataManagerTest cases for consumer groups (KIP-848), run against the
reference coordinator.

Ported from Apache Kafka 4.1.2, group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/OffsetMetadataManagerTest.java: the OffsetCommit, OffsetFetch and OffsetDelete tests of
a consumer group (the classic-group ones are scenarios: tests/scenarios/kafka_offsets_*.txt).
Each test is named after the Java one.

How Kafka's test harness maps here:

- ``getOrMaybeCreatePersistedConsumerGroup(id, true)`` is the group's epoch record replayed
  (epoch 0: an empty group); ``group.updateMember(...)`` a member's subscription and current
  assignment records replayed (``setClassicMemberMetadata``: the subscription carries
  classic member metadata, so the member uses the classic protocol);
- ``context.commitOffset(group, topic, partition, offset, leaderEpoch)`` is an offset commit
  record replayed (metadata "metadata", the leader epoch); topic ids are not modelled, so a
  fetched partition is compared on offset, metadata and leader epoch;
- ``context.commitOffset(request)`` is an OffsetCommit at the latest version the reference
  models (9; Kafka's test uses 10, which adds topic ids);
- a thrown ``ApiException`` is the error answered for every partition (OffsetCommit) or for
  the group (OffsetFetch), with nothing written.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import apply_record
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.records import Record

#: ApiKeys.OFFSET_COMMIT.latestVersion() as far as the reference models OffsetCommit
LATEST_COMMIT_VERSION = m.OFFSET_COMMIT_MAX_VERSION


class Context:
    """OffsetMetadataManagerTestContext: a coordinator and its clock."""

    def __init__(self, **config: int) -> None:
        self.coordinator = Coordinator(CoordinatorConfig(**config))  # type: ignore[arg-type]
        self.now = 0
        self._rid = 0

    def replay(self, *records: Record) -> None:
        for rec in records:
            apply_record(self.coordinator.state, rec)

    def consumer_group(self, group_id: str) -> None:
        """getOrMaybeCreatePersistedConsumerGroup(group_id, true): an empty consumer group."""
        self.replay(cr.ConsumerGroupEpochRecord(
            group_id, cr.ConsumerGroupMetadataValue(epoch=0, metadata_hash=0)))
        assert group_id in self.coordinator.state.consumer_groups

    def member(self, group_id: str, member_id: str, member_epoch: int = 0,
               previous_member_epoch: int = 0, topics: Sequence[str] = (),
               classic: bool = False) -> None:
        """group.updateMember(new ConsumerGroupMember.Builder(member_id)...build())."""
        self.replay(
            cr.ConsumerGroupMemberSubscriptionRecord(group_id, member_id, cr.ConsumerGroupMemberMetadataValue(
                instance_id=None, rack_id=None, client_id="", client_host="",
                subscribed_topic_names=tuple(topics), subscribed_topic_regex=None,
                server_assignor=None,
                classic_member_metadata=cr.ClassicMemberMetadata(0, ()) if classic else None)),
            cr.ConsumerGroupCurrentAssignmentRecord(group_id, member_id, cr.ConsumerGroupCurrentMemberAssignmentValue(
                member_epoch=member_epoch, previous_member_epoch=previous_member_epoch,
                state=cr.MemberState.STABLE, assigned_partitions=(),
                partitions_pending_revocation=())),
        )

    def commit_record(self, group_id: str, topic: str, partition: int, offset: int, leader_epoch: int) -> None:
        """context.commitOffset(groupId, topic, partition, offset, leaderEpoch): the record."""
        self.replay(r.OffsetCommitted(group_id, topic, partition, offset, "metadata",
                                      self.now, -1, "", leader_epoch))

    def has_offset(self, group_id: str, topic: str, partition: int) -> bool:
        st = self.coordinator.state
        group = st.consumer_groups.get(group_id) or st.groups.get(group_id)
        return group is not None and (topic, partition) in group.offsets

    def send(self, request: m.Request) -> tuple[m.Response, list[Record]]:
        self._rid += 1
        out = self.coordinator.handle(self._rid, request, self.now)
        resp = out.response_to(self._rid)
        assert resp is not None
        return resp, [x for x in out.records if x.persisted]

    def commit(self, **fields: object) -> tuple[m.OffsetCommitResponse, list[Record]]:
        fields.setdefault("version", LATEST_COMMIT_VERSION)
        resp, records = self.send(m.OffsetCommitRequest(**fields))  # type: ignore[arg-type]
        assert isinstance(resp, m.OffsetCommitResponse)
        return resp, records

    def fetch(self, group_id: str, partitions: tuple[tuple[str, int], ...] | None,
              member_id: str | None = None, member_epoch: int = -1) -> m.OffsetFetchResponse:
        resp, records = self.send(m.OffsetFetchRequest(
            group_id=group_id, partitions=partitions, member_id=member_id,
            member_epoch=member_epoch))
        assert isinstance(resp, m.OffsetFetchResponse)
        assert records == []
        return resp

    def offset_delete_with(self, group_id: str, topic: str, partition: int, error: Error) -> None:
        """OffsetMetadataManagerTestContext.testOffsetDeleteWith."""
        expected: list[Record] = []
        if self.has_offset(group_id, topic, partition) and error is Error.NONE:
            expected = [r.OffsetsDeleted(group_id, ((topic, partition),), "offset delete")]
        resp, records = self.send(m.OffsetDeleteRequest(group_id=group_id,
                                                        partitions=((topic, partition),)))
        assert resp == m.OffsetDeleteResponse(
            error=Error.NONE, partitions=(m.OffsetDeletePartitionResponse(topic, partition, error),))
        assert records == expected


def bar0(offset: int = 100, metadata: str | None = "") -> tuple[m.OffsetCommitPartition, ...]:
    return (m.OffsetCommitPartition("bar", 0, offset, metadata),)


def assert_commit_refused(ctx: Context, error: Error, **fields: object) -> None:
    resp, records = ctx.commit(**fields)
    assert resp == m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("bar", 0, error),))
    assert records == []


def fetched(*parts: tuple[str, int, int, str] | tuple[str, int, int, str, int]) -> m.OffsetFetchResponse:
    """mkOffsetPartitionResponse: (topic, partition, offset, metadata[, leader epoch, else -1])."""
    return m.OffsetFetchResponse(error=Error.NONE, partitions=tuple(
        m.OffsetFetchPartitionResponse(x[0], x[1], x[2], x[3], Error.NONE, x[4] if len(x) > 4 else -1)
        for x in parts))


# ============================================================================ OffsetCommit
def test_consumer_group_offset_commit_with_unknown_member_id() -> None:
    """testConsumerGroupOffsetCommitWithUnknownMemberId"""
    ctx = Context()
    ctx.consumer_group("foo")
    assert_commit_refused(ctx, Error.UNKNOWN_MEMBER_ID, group_id="foo", member_id="member",
                          generation_id=10, partitions=bar0())


def test_consumer_group_offset_commit_with_stale_member_epoch() -> None:
    """testConsumerGroupOffsetCommitWithStaleMemberEpoch"""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.member("foo", "member", 10, 10)
    for epoch in (9, 11):  # a smaller and a larger epoch
        assert_commit_refused(ctx, Error.STALE_MEMBER_EPOCH, group_id="foo", member_id="member",
                              generation_id=epoch, partitions=bar0())


def test_consumer_group_offset_commit_with_illegal_generation_id() -> None:
    """testConsumerGroupOffsetCommitWithIllegalGenerationId: a member using the classic
    protocol is refused ILLEGAL_GENERATION, not STALE_MEMBER_EPOCH (ConsumerGroup.
    validateMemberEpoch)."""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.member("foo", "member", 10, 10, classic=True)
    for epoch in (9, 11):
        assert_commit_refused(ctx, Error.ILLEGAL_GENERATION, group_id="foo", member_id="member",
                              generation_id=epoch, partitions=bar0())


@pytest.mark.parametrize("version", range(0, 9))
def test_consumer_group_offset_commit_classic_member_any_version(version: int) -> None:
    """ConsumerGroup.validateOffsetCommit: the OffsetCommit v9 requirement is for members
    using the consumer protocol; a classic member of a consumer group commits with any
    version (its client speaks the classic protocol). Not a Kafka test: the rule the
    IllegalGenerationId test's member is subject to, at older versions."""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.member("foo", "member", 10, 10, classic=True)
    resp, records = ctx.commit(group_id="foo", member_id="member", generation_id=10,
                               partitions=bar0(), version=version)
    assert resp == m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("bar", 0, Error.NONE),))
    assert len(records) == 1
    assert_commit_refused(ctx, Error.ILLEGAL_GENERATION, group_id="foo", member_id="member",
                          generation_id=9, partitions=bar0(), version=version)
    # a consumer-protocol member at that version: UNSUPPORTED_VERSION before its epoch
    ctx.member("foo", "other", 10, 10)
    assert_commit_refused(ctx, Error.UNSUPPORTED_VERSION, group_id="foo", member_id="other",
                          generation_id=9, partitions=bar0(), version=version)


def test_consumer_group_offset_commit_from_admin_client() -> None:
    """testConsumerGroupOffsetCommitFromAdminClient"""
    ctx = Context()
    ctx.consumer_group("foo")
    resp, records = ctx.commit(group_id="foo", partitions=bar0(metadata=None))
    assert resp == m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("bar", 0, Error.NONE),))
    assert records == [r.OffsetCommitted("foo", "bar", 0, 100, "", ctx.now, -1, "")]


def test_consumer_group_offset_commit() -> None:
    """testConsumerGroupOffsetCommit (its topic id parameter is not modelled)"""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.member("foo", "member", 10, 10)
    resp, records = ctx.commit(group_id="foo", member_id="member", generation_id=10,
                               partitions=bar0(metadata="metadata"))
    assert resp == m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("bar", 0, Error.NONE),))
    assert records == [r.OffsetCommitted("foo", "bar", 0, 100, "metadata", ctx.now, 10, "member")]


def test_consumer_group_offset_commit_with_offset_metadata_too_large() -> None:
    """testConsumerGroupOffsetCommitWithOffsetMetadataTooLarge"""
    ctx = Context(offset_metadata_max_bytes=5)
    ctx.consumer_group("foo")
    ctx.member("foo", "member", 10, 10)
    resp, records = ctx.commit(group_id="foo", member_id="member", generation_id=10, partitions=(
        m.OffsetCommitPartition("bar", 0, 100, "toolarge"),
        m.OffsetCommitPartition("bar", 1, 100, "small")))
    assert resp == m.OffsetCommitResponse(partitions=(
        m.OffsetCommitPartitionResponse("bar", 0, Error.OFFSET_METADATA_TOO_LARGE),
        m.OffsetCommitPartitionResponse("bar", 1, Error.NONE)))
    assert records == [r.OffsetCommitted("foo", "bar", 1, 100, "small", ctx.now, 10, "member")]


# ============================================================================ OffsetFetch
FOO0 = (("foo", 0),)


def test_consumer_group_offset_fetch_with_member_id_and_epoch() -> None:
    """testConsumerGroupOffsetFetchWithMemberIdAndEpoch"""
    ctx = Context()
    ctx.consumer_group("group")
    ctx.member("group", "member")
    ctx.commit_record("group", "foo", 0, 100, 1)
    want = fetched(("foo", 0, 100, "metadata", 1))
    assert ctx.fetch("group", FOO0, "member", 0) == want
    assert ctx.fetch("group", None, "member", 0) == want


def test_consumer_group_offset_fetch_from_admin_client() -> None:
    """testConsumerGroupOffsetFetchFromAdminClient"""
    ctx = Context()
    ctx.consumer_group("group")
    ctx.member("group", "member")
    ctx.commit_record("group", "foo", 0, 100, 1)
    want = fetched(("foo", 0, 100, "metadata", 1))
    assert ctx.fetch("group", FOO0) == want
    assert ctx.fetch("group", None) == want


def test_consumer_group_offset_fetch_with_unknown_member_id() -> None:
    """testConsumerGroupOffsetFetchWithUnknownMemberId"""
    ctx = Context()
    ctx.consumer_group("group")
    for partitions in (FOO0, None):
        for member_id in ("", "member"):
            assert ctx.fetch("group", partitions, member_id, 0) == m.OffsetFetchResponse(
                error=Error.UNKNOWN_MEMBER_ID)


def test_consumer_group_offset_fetch_with_stale_member_epoch() -> None:
    """testConsumerGroupOffsetFetchWithStaleMemberEpoch"""
    ctx = Context()
    ctx.consumer_group("group")
    ctx.member("group", "member")
    for partitions in (FOO0, None):
        assert ctx.fetch("group", partitions, "member", 10) == m.OffsetFetchResponse(
            error=Error.STALE_MEMBER_EPOCH)


def test_consumer_group_offset_fetch_with_illegal_generation_id() -> None:
    """testConsumerGroupOffsetFetchWithIllegalGenerationId"""
    ctx = Context()
    ctx.consumer_group("group")
    ctx.member("group", "member", classic=True)
    for partitions in (FOO0, None):
        assert ctx.fetch("group", partitions, "member", 10) == m.OffsetFetchResponse(
            error=Error.ILLEGAL_GENERATION)


# ============================================================================ OffsetDelete
def test_consumer_group_offset_delete() -> None:
    """testConsumerGroupOffsetDelete"""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.commit_record("foo", "bar", 0, 100, 0)
    ctx.offset_delete_with("foo", "bar", 0, Error.NONE)
    assert not ctx.has_offset("foo", "bar", 0)


def test_consumer_group_offset_delete_with_errors() -> None:
    """testConsumerGroupOffsetDeleteWithErrors"""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.member("foo", "member1", topics=("bar",))
    ctx.commit_record("foo", "bar", 0, 100, 0)
    # the offset of a partition that does not exist
    ctx.offset_delete_with("foo", "bar1", 0, Error.NONE)
    # a topic the group subscribes to
    ctx.offset_delete_with("foo", "bar", 0, Error.GROUP_SUBSCRIBED_TO_TOPIC)
    assert ctx.has_offset("foo", "bar", 0)


# ============================================================================ simple groups
def test_simple_group_offset_commit() -> None:
    """testSimpleGroupOffsetCommit (its topic id parameter is not modelled): a commit without
    generation to an unknown group creates the simple (classic) group and writes the offset
    with "" as its metadata."""
    ctx = Context()
    resp, records = ctx.commit(group_id="foo", partitions=bar0())
    assert resp == m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("bar", 0, Error.NONE),))
    assert records == [r.OffsetCommitted("foo", "bar", 0, 100, "", ctx.now, -1, "")]
    group = ctx.coordinator.state.groups["foo"]
    assert group.group_id == "foo"
    assert group.protocol_type is None


# ============================================================================ replay
def test_replay() -> None:
    """testReplay: each offset commit record replayed is the group's offset of its partition,
    the later one replacing the earlier, with its leader epoch (none, then 10) and its
    expire timestamp (none, then 12345 on the last; topic ids are not modelled:
    docs/deviations.md). Kafka's replay creates the simple group an offset commit record
    names; the reference's record stream names it first (GroupCreated)."""
    ctx = Context()
    ctx.replay(r.GroupCreated("foo", 0))
    offsets = ctx.coordinator.state.groups["foo"].offsets
    for partition, offset, at, epoch, expires in ((0, 100, 0, -1, None), (0, 200, 1, 10, None),
                                                  (1, 200, 2, 10, None), (1, 300, 3, 10, 12345)):
        ctx.replay(r.OffsetCommitted("foo", "bar", partition, offset, "small", at, -1, "", epoch, expires))
        c = offsets[("bar", partition)]
        assert (c.committed_offset, c.metadata, c.commit_timestamp_ms, c.leader_epoch, c.expire_timestamp_ms) == \
            (offset, "small", at, epoch, expires)
    assert sorted(offsets) == [("bar", 0), ("bar", 1)]


# ============================================================================ expiry
def test_cleanup_expired_offsets() -> None:
    """testCleanupExpiredOffsets, with a consumer group in the place of Kafka's mocked group
    (ConsumerGroup.offsetExpirationCondition is the commit timestamp, as the mock's; the
    group subscribes to firstTopic through its member). Retention one minute, the expiry job
    every 500 ms: secondTopic-0 expires a minute after its commit, secondTopic-1 500 ms
    later, firstTopic-0 not while the group subscribes to it; once it does not, the job
    tombstones firstTopic-0, firstTopic-1 and secondTopic-0 in that order."""
    ctx = Context(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=500)
    ctx.consumer_group("group-id")
    ctx.member("group-id", "member", 10, 10, topics=("firstTopic",))

    def replay_commit(topic: str, partition: int, offset: int, at: int) -> None:
        ctx.replay(r.OffsetCommitted("group-id", topic, partition, offset, "metadata", at, -1, ""))

    def expired(until: int) -> list[Record]:
        ctx.now = until
        return [x for x in ctx.coordinator.advance(until).records if x.persisted]

    replay_commit("firstTopic", 0, 100, 0)
    replay_commit("secondTopic", 0, 100, 0)
    replay_commit("secondTopic", 1, 100, 500)
    assert expired(59_999) == []
    assert expired(60_000) == [r.OffsetsDeleted("group-id", (("secondTopic", 0),), "retention")]
    assert expired(60_500) == [r.OffsetsDeleted("group-id", (("secondTopic", 1),), "retention")]
    # the group no longer subscribes to firstTopic; two more commits, made a minute ago
    ctx.member("group-id", "member", 10, 10, topics=())
    replay_commit("firstTopic", 1, 100, 500)
    replay_commit("secondTopic", 0, 101, 500)
    assert expired(61_000) == [r.OffsetsDeleted(
        "group-id", (("firstTopic", 0), ("firstTopic", 1), ("secondTopic", 0)), "retention")]
    assert "group-id" in ctx.coordinator.state.consumer_groups  # it has a member


# ============================================================================ a Dead group
def _dead_group(ctx: Context, group_id: str) -> None:
    """getOrMaybeCreateClassicGroup(group_id, true) then transitionTo(DEAD): the group stays in
    the map, Dead (Kafka removes a deleted group in the same write, so only a test meets one;
    the reference's handlers check for it as Kafka's do)."""
    ctx.replay(r.GroupCreated(group_id, ctx.now), r.StateChanged(group_id, GroupState.Dead, ctx.now))


def test_generic_group_offset_commit_with_dead_group() -> None:
    """testGenericGroupOffsetCommitWithDeadGroup"""
    ctx = Context()
    _dead_group(ctx, "foo")
    assert_commit_refused(ctx, Error.COORDINATOR_NOT_AVAILABLE, group_id="foo", member_id="member",
                          generation_id=10, partitions=bar0())


def test_generic_group_fetch_offsets_with_dead_group() -> None:
    """testGenericGroupFetchOffsetsWithDeadGroup: every asked partition at offset -1."""
    ctx = Context()
    _dead_group(ctx, "group")
    assert ctx.fetch("group", (("foo", 0), ("foo", 1), ("bar", 0))) == fetched(
        ("foo", 0, -1, ""), ("foo", 1, -1, ""), ("bar", 0, -1, ""))


def test_generic_group_fetch_all_offsets_with_dead_group() -> None:
    """testGenericGroupFetchAllOffsetsWithDeadGroup: no partition."""
    ctx = Context()
    _dead_group(ctx, "group")
    assert ctx.fetch("group", None) == fetched()


def test_consumer_group_offset_fetch_with_a_null_member_id_and_an_epoch() -> None:
    """ConsumerGroup.validateOffsetFetch lets a null member id through only with a negative
    epoch (an admin); with an epoch it looks the null id up in its members map
    (TimelineHashMap.get hashes the key), and the NullPointerException fails the fetch:
    UNKNOWN_SERVER_ERROR, whether or not the group has members (Kafka 4.1.2's shard answers
    so: tests/test_consumer_coordinator_kafka_jar.py)."""
    ctx = Context()
    ctx.consumer_group("group")
    for partitions in (FOO0, None):
        assert ctx.fetch("group", partitions, None, 0) == m.OffsetFetchResponse(
            error=Error.UNKNOWN_SERVER_ERROR)
    ctx.member("group", "member", 3, 3)
    for epoch in (0, 3):
        assert ctx.fetch("group", None, None, epoch) == m.OffsetFetchResponse(
            error=Error.UNKNOWN_SERVER_ERROR)
    assert ctx.fetch("group", None, None, -1) == fetched()


# ============================================================================ leader epochs
def test_a_committed_leader_epoch_is_kept_answered_and_reloaded() -> None:
    """KIP-320: OffsetAndMetadata.fromRequest keeps the request's committed leader epoch
    (ofSentinel: -1 is none), fetchOffsets answers it (orElse(-1)), and a coordinator that
    loads the group from the log has it again (OffsetCommitValue.leaderEpoch). The same as
    Kafka 4.1.2 answered on the wire (examples/conformance/wire/offset-leader-epochs-kafka-4.1.2.jsonl)."""
    ctx = Context()
    resp, records = ctx.commit(group_id="g", version=8, partitions=(
        m.OffsetCommitPartition("t", 0, 10, "m", 5), m.OffsetCommitPartition("t", 1, 20, "m")))
    assert all(p.error is Error.NONE for p in resp.partitions)
    assert [x.leader_epoch for x in records if isinstance(x, r.OffsetCommitted)] == [5, -1]
    want = fetched(("t", 0, 10, "m", 5), ("t", 1, 20, "m", -1))
    assert ctx.fetch("g", (("t", 0), ("t", 1))) == want
    ctx.now += 1000
    out = ctx.coordinator.failover(ctx.now)
    [loaded] = [x for x in out.records if isinstance(x, r.GroupLoaded)]
    assert loaded.leader_epochs == (("t", 0, 5),)
    assert ctx.fetch("g", (("t", 0), ("t", 1))) == want
    # a commit without one (a version before 6) leaves none
    ctx.commit(group_id="g", version=5, partitions=(m.OffsetCommitPartition("t", 0, 11, "m"),))
    assert ctx.fetch("g", (("t", 0),)) == fetched(("t", 0, 11, "m", -1))

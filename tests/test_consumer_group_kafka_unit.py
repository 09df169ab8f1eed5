"""Kafka's own unit tests of the consumer group object (KIP-848), run against the reference.

Ported from Apache Kafka 4.1.2, group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/modern/consumer/ConsumerGroupTest.java, ConsumerGroupMemberTest.java and
modern/TargetAssignmentBuilderTest.java. Each test is named after the Java one.

How Kafka's objects map onto the reference:

- ``createConsumerGroup`` is a group created by a ConsumerGroupEpochRecord at epoch 0 in a
  coordinator (the harness of tests/test_consumer_coordinator_kafka.py, ``Context``);
- ConsumerGroup's mutations are records replayed (``Context.replay``, that is
  groupspec.coordinator.replay.apply_record): ``updateMember`` the member's subscription then
  its current-assignment record, ``removeMember`` the three tombstones removeMember writes,
  ``setGroupEpoch`` / ``setTargetAssignmentEpoch`` / ``updateTargetAssignment`` /
  ``updateResolvedRegularExpression`` / ``removeResolvedRegularExpression`` the group-epoch,
  target-epoch, target and regular-expression records (their tombstones);
- ConsumerGroupMember.Builder is :class:`ConsumerMember` (a frozen value: ``new Builder(m)``
  is ``dataclasses.replace``), ``updateWith`` its ``with_subscription`` /
  ``with_current_assignment``;
- the read methods are the reference's ConsumerGroup methods and module functions:
  ``currentPartitionEpoch`` current_partition_epoch, ``staticMember`` static_member,
  ``staticMemberId`` the static_members map, ``getOrMaybeCreateMember`` heartbeat._member,
  ``subscribedTopicNames`` subscription_counts (a SubscriptionCount is a pair (by name, by
  regex)), ``subscriptionType()`` subscription_kind, ``ConsumerGroup.subscriptionType(...)``
  subscription_type, ``preferredServerAssignor`` / ``computePreferredServerAssignor``
  current_preferred_assignor / computed_preferred_assignor, ``computeSubscribedTopicNames``
  counts_with, ``computeSubscribedRegularExpressions`` regexes_with, ``numSubscribedMembers``
  num_subscribed_members, ``hasMetadataExpired`` heartbeat._metadata_expired,
  ``waitingOnUnreleasedPartition`` classic/to_consumer_group._waiting_on_unreleased, the
  classic-member counts num_classic_protocol_members / classic_members_supported_protocols /
  supports_classic_protocols / all_members_use_classic_protocol_except, and
  ``addPartitionEpochs`` / ``removePartitionEpochs`` replay's _add_epochs / _remove_epochs;
- where the rule is an answer of the coordinator, the answer is tested: validateOffsetCommit
  an OffsetCommit, validateOffsetFetch an OffsetFetch, validateDeleteGroup a DeleteGroups,
  isSubscribedToTopic an OffsetDelete (GROUP_SUBSCRIBED_TO_TOPIC), offsetExpirationCondition
  the offset expiry job, asListedGroup / isInStates a ListGroups, asDescribedGroup and
  asConsumerGroupDescribeMember a ConsumerGroupDescribe (describe.describe_group);
  createGroupTombstoneRecords the records consumer/expiry.py and the downgrade write
  (group_tombstones); fromClassicGroup consumer/migration.convert_to_consumer_group;
- TargetAssignmentBuilder is heartbeat._update_target, called as the heartbeat calls it (one
  updated member: a builder with no update is given an unchanged member, a deleted member is
  left out of the members after the change); its TargetAssignmentResult's records are the
  records it returns, its full target assignment the group's targets once they are replayed;
  the MockPartitionAssignor is the harness's ``assignor`` fixture, and the group spec Kafka
  verifies the assignor got is checked member by member;
- the metadata hash (ModernGroup.computeMetadataHash, Murmur3 in Kafka) is the reference's
  own digest (docs/deviations.md): what it promises is tested, that it is 0 for no topic and
  changes when Kafka's would.

No counterpart in the reference (left out, not invented):

- testGroupTypeFromString (Group.GroupType.parse: a Java-only API);
- testUpdateInvertedAssignment (the inverted target assignment Kafka keeps for its assignors:
  the reference's assignors derive a partition's owner from the members' targets);
- testValidateTransactionalOffsetCommit (TxnOffsetCommit is not modelled: docs/deviations.md);
- the snapshot-registry halves of testAsListedGroup, testAsDescribedGroup,
  testIsInStatesCaseInsensitive and testValidateOffsetFetch (reads at an older committed
  offset: every write is committed when handled, docs/deviations.md), and the group-level
  half of testIsInStatesCaseInsensitive (a filter "Empty" matching nothing: ListGroups lower-
  cases its filters before the group sees them, GroupMetadataManager.listGroups);
- the time half of testMetadataRefreshDeadline (the deadline in ms: Kafka's refresh interval
  is Integer.MAX_VALUE ms, never reached here; the epoch half is tested);
- testComputeMetadataHashUseCacheData and testComputeMetadataHashIgnoreTopicHashIfItIsNotIn-
  MetadataImage (the topic-hash cache: the reference keeps none);
- ConsumerGroupMemberTest.testUpdateMember (Builder.maybeUpdate*: the heartbeat takes each
  request field or keeps the member's inline, covered by the GroupMetadataManagerTest ports)
  and testClassicProtocolListFromJoinRequestProtocolCollection (inline in the classic JoinGroup
  to a consumer group, covered by tests/test_consumer_coordinator_kafka_classic_members.py);
- the metrics shard (numClassicProtocolMembers' gauge).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import pytest

import groupspec.coordinator.consumer.heartbeat as heartbeat_module
from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicMetadata,
)
from groupspec.coordinator.classic.group import Group as ClassicGroup
from groupspec.coordinator.classic.group import Member
from groupspec.coordinator.classic.to_consumer_group import _waiting_on_unreleased
from groupspec.coordinator.consumer import replay as consumer_replay
from groupspec.coordinator.consumer.describe import describe_group
from groupspec.coordinator.consumer.expiry import expire_consumer_offsets
from groupspec.coordinator.consumer.group import (
    ConsumerGroup,
    ConsumerGroupState,
    computed_preferred_assignor,
    current_preferred_assignor,
    group_tombstones,
    subscription_counts,
    subscription_type,
)
from groupspec.coordinator.consumer.heartbeat import ApiError, _metadata_expired, _metadata_hash
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.coordinator.consumer.migration import convert_to_consumer_group
from groupspec.coordinator.consumer.replay import ConsumerReplayError
from groupspec.coordinator.context import Txn
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol.consumer_group_messages import (
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    DescribedAssignment,
    DescribedGroup,
    DescribedMember,
    DescribedTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Assignment as ProtocolAssignment
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    JoinGroupProtocol,
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from groupspec.protocol.records import MemberInfo, Record
from groupspec.protocol.topic_id import TopicId
from tests.test_consumer_coordinator_kafka import (
    BAR,
    FOO,
    ZAR,
    Context,
    MockAssignor,
    assert_unordered_records,
    assignor,
)

__all__ = ["assignor"]  # the fixture, used by name

T1 = TopicId(0x5EED_0000_0000_0000_0000_0000_0000_0001)
T2 = TopicId(0x5EED_0000_0000_0000_0000_0000_0000_0002)
T3 = TopicId(0x5EED_0000_0000_0000_0000_0000_0000_0003)
T4 = TopicId(0x5EED_0000_0000_0000_0000_0000_0000_0004)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS


def mk(*topics: tuple[TopicId, Iterable[int]]) -> dict[TopicId, frozenset[int]]:
    """AssignmentTestUtil.mkAssignment(mkTopicAssignment(...), ...)."""
    return {t: frozenset(ps) for t, ps in topics}


def parts(a: Assignment) -> tuple[cr.RecordTopicPartitions, ...]:
    return tuple(cr.RecordTopicPartitions(t, tuple(sorted(ps))) for t, ps in sorted(a.items()))


class Group:
    """createConsumerGroup(groupId): a consumer group in a coordinator, changed by records."""

    def __init__(self, group_id: str = "foo", ctx: Context | None = None) -> None:
        self.ctx = ctx if ctx is not None else Context()
        self.group_id = group_id
        self.ctx.replay(cr.ConsumerGroupEpochRecord(group_id, cr.ConsumerGroupMetadataValue(epoch=0)))

    @property
    def g(self) -> ConsumerGroup:
        return self.ctx.group(self.group_id)

    def update_member(self, m: ConsumerMember) -> None:
        """updateMember: the member's subscription, then its current assignment."""
        self.ctx.replay(
            cr.ConsumerGroupMemberSubscriptionRecord(self.group_id, m.member_id, m.subscription_value()),
            cr.ConsumerGroupCurrentAssignmentRecord(self.group_id, m.member_id,
                                                    m.current_assignment_value()))

    def remove_member(self, member_id: str) -> None:
        self.ctx.replay(
            cr.ConsumerGroupCurrentAssignmentRecord(self.group_id, member_id, None),
            cr.ConsumerGroupTargetAssignmentRecord(self.group_id, member_id, None),
            cr.ConsumerGroupMemberSubscriptionRecord(self.group_id, member_id, None))

    def set_group_epoch(self, epoch: int) -> None:
        self.ctx.replay(cr.ConsumerGroupEpochRecord(self.group_id, cr.ConsumerGroupMetadataValue(
            epoch=epoch, metadata_hash=self.g.metadata_hash)))

    def set_target_assignment_epoch(self, epoch: int) -> None:
        self.ctx.replay(cr.ConsumerGroupTargetAssignmentEpochRecord(
            self.group_id, cr.ConsumerGroupTargetAssignmentMetadataValue(epoch)))

    def update_target_assignment(self, member_id: str, a: Assignment) -> None:
        self.ctx.replay(cr.ConsumerGroupTargetAssignmentRecord(
            self.group_id, member_id, cr.ConsumerGroupTargetAssignmentMemberValue(parts(a))))

    def update_resolved_regex(self, regex: str, topics: Iterable[str], version: int,
                              timestamp: int) -> None:
        self.ctx.replay(cr.ConsumerGroupRegularExpressionRecord(
            self.group_id, regex, cr.ConsumerGroupRegularExpressionValue(
                topics=tuple(sorted(topics)), version=version, timestamp=timestamp)))

    def remove_resolved_regex(self, regex: str) -> None:
        self.ctx.replay(cr.ConsumerGroupRegularExpressionRecord(self.group_id, regex, None))

    def subscribed_topic_names(self) -> dict[str, tuple[int, int]]:
        """ModernGroup.subscribedTopicNames."""
        return subscription_counts(self.g.members.values(), self.g.resolved_regexes.values())

    def epoch(self, topic: TopicId, partition: int) -> int:
        return self.g.current_partition_epoch(topic, partition)

    def txn(self) -> Txn:
        return Txn(self.ctx.coordinator.state, self.ctx.coordinator.config, self.ctx.now)

    def handle(self, request: object) -> object:
        self.ctx._request_id += 1
        out = self.ctx.coordinator.handle(self.ctx._request_id, request, self.ctx.now)  # type: ignore[arg-type]
        return out.response_to(self.ctx._request_id)


def member(member_id: str, subscribed_topic_names: Iterable[str] = (), **fields: Any) -> ConsumerMember:
    """new ConsumerGroupMember.Builder(memberId)...build()."""
    return ConsumerMember(member_id, subscribed_topic_names=frozenset(subscribed_topic_names), **fields)


def classic(*names: str, metadata: bytes = b"", session_timeout_ms: int = 45_000) -> cr.ClassicMemberMetadata:
    return cr.ClassicMemberMetadata(session_timeout_ms, tuple(cr.ClassicProtocol(n, metadata) for n in names))


def state(grp: Group) -> ConsumerGroupState:
    """ConsumerGroup.state()."""
    return grp.g.state


# ============================================================================ ConsumerGroupTest
def test_get_or_create_member() -> None:
    grp = Group()
    m = heartbeat_module._member(grp.g, "member-id", True)
    assert m.member_id == "member-id"
    grp.update_member(m)
    assert heartbeat_module._member(grp.g, "member-id", False).member_id == "member-id"
    with pytest.raises(ApiError) as e:
        heartbeat_module._member(grp.g, "does-not-exist", False)
    assert e.value.error is Error.UNKNOWN_MEMBER_ID


def test_update_member() -> None:
    grp = Group()
    m = heartbeat_module._member(grp.g, "member", True)
    m = dataclasses.replace(m, subscribed_topic_names=frozenset({"foo", "bar"}))
    grp.update_member(m)
    assert heartbeat_module._member(grp.g, "member", False) == m


def test_no_static_member() -> None:
    grp = Group()
    heartbeat_module._member(grp.g, "member", True)
    assert grp.g.static_member("instance-id") is None


def test_get_static_member_by_instance_id() -> None:
    grp = Group()
    m = heartbeat_module._member(grp.g, "member", True)
    m = dataclasses.replace(m, subscribed_topic_names=frozenset({"foo", "bar"}), instance_id="instance")
    grp.update_member(m)
    assert grp.g.static_member("instance") == m
    assert heartbeat_module._member(grp.g, "member", False) == m
    assert grp.g.static_members.get("instance") == m.member_id


def test_remove_member() -> None:
    grp = Group()
    grp.update_member(heartbeat_module._member(grp.g, "member", True))
    assert "member" in grp.g.members
    grp.remove_member("member")
    assert "member" not in grp.g.members


def test_remove_static_member() -> None:
    grp = Group()
    grp.update_member(member("member", subscribed_topic_names=("foo", "bar"), instance_id="instance"))
    assert "member" in grp.g.members
    grp.remove_member("member")
    assert "member" not in grp.g.members
    assert grp.g.static_member("instance") is None
    assert grp.g.static_members.get("instance") is None


def test_updating_member_updates_partition_epoch() -> None:
    grp = Group()
    m = member("member", member_epoch=10, assigned=mk((FOO, (1, 2, 3))),
               pending_revocation=mk((BAR, (4, 5, 6))))
    grp.update_member(m)
    for t, p, e in [(FOO, 1, 10), (FOO, 2, 10), (FOO, 3, 10), (BAR, 4, 10), (BAR, 5, 10),
                    (BAR, 6, 10), (ZAR, 7, -1), (ZAR, 8, -1), (ZAR, 9, -1)]:
        assert grp.epoch(t, p) == e, (t, p)
    m = dataclasses.replace(m, member_epoch=11, assigned=mk((BAR, (1, 2, 3))),
                            pending_revocation=mk((ZAR, (4, 5, 6))))
    grp.update_member(m)
    for t, p, e in [(BAR, 1, 11), (BAR, 2, 11), (BAR, 3, 11), (ZAR, 4, 11), (ZAR, 5, 11),
                    (ZAR, 6, 11), (FOO, 7, -1), (FOO, 8, -1), (FOO, 9, -1)]:
        assert grp.epoch(t, p) == e, (t, p)


def test_updating_member_updates_partition_epoch_when_partition_is_reassigned_before_being_revoked() -> None:
    grp = Group()
    m = member("member", member_epoch=10, assigned={}, pending_revocation=mk((FOO, (1,))))
    grp.update_member(m)
    assert grp.epoch(FOO, 1) == 10
    m = dataclasses.replace(m, member_epoch=11, assigned=mk((FOO, (1,))), pending_revocation={})
    grp.update_member(m)
    assert grp.epoch(FOO, 1) == 11


def test_updating_member_updates_partition_epoch_when_partition_is_not_released() -> None:
    grp = Group()
    grp.update_member(member("m1", member_epoch=10, assigned=mk((FOO, (1,)))))
    # m2 may take foo-1: its epoch is larger than m1's
    grp.update_member(member("m2", member_epoch=11, assigned=mk((FOO, (1,)))))
    # m3 may not: its epoch is smaller than foo-1's (11); Kafka's IllegalStateException
    with pytest.raises(ConsumerReplayError):
        grp.update_member(member("m3", member_epoch=10, assigned=mk((FOO, (1,)))))


def test_remove_partition_epochs() -> None:
    grp = Group()
    # a no-op when no epoch is set
    consumer_replay._remove_epochs(grp.g, mk((FOO, (1,))), 10)
    grp.update_member(member("m1", member_epoch=10, assigned=mk((FOO, (1,)))))
    # another epoch: nothing removed, nothing raised
    consumer_replay._remove_epochs(grp.g, mk((FOO, (1,))), 11)
    assert grp.epoch(FOO, 1) == 10


def test_add_partition_epochs() -> None:
    grp = Group()
    consumer_replay._add_epochs(grp.g, mk((FOO, (1,))), 10)
    # a larger epoch: fine
    consumer_replay._add_epochs(grp.g, mk((FOO, (1,))), 11)
    assert grp.epoch(FOO, 1) == 11
    # a smaller one: IllegalStateException
    with pytest.raises(ConsumerReplayError):
        consumer_replay._add_epochs(grp.g, mk((FOO, (1,))), 10)


def test_deleting_member_removes_partition_epoch() -> None:
    grp = Group()
    m = member("member", member_epoch=10, assigned=mk((FOO, (1, 2, 3))),
               pending_revocation=mk((BAR, (4, 5, 6))))
    grp.update_member(m)
    for t, p, e in [(FOO, 1, 10), (FOO, 2, 10), (FOO, 3, 10), (BAR, 4, 10), (BAR, 5, 10),
                    (BAR, 6, 10), (ZAR, 7, -1), (ZAR, 8, -1), (ZAR, 9, -1)]:
        assert grp.epoch(t, p) == e, (t, p)
    grp.remove_member(m.member_id)
    for t, p in [(BAR, 1), (BAR, 2), (BAR, 3), (ZAR, 4), (ZAR, 5), (ZAR, 6), (FOO, 7), (FOO, 8),
                 (FOO, 9)]:
        assert grp.epoch(t, p) == -1, (t, p)


def test_waiting_on_unreleased_partition() -> None:
    grp = Group()
    m1, m2 = "9f2c1b0e-0000-4000-8000-000000000001", "9f2c1b0e-0000-4000-8000-000000000002"
    grp.update_target_assignment(m1, mk((FOO, (1, 2, 3)), (ZAR, (7, 8, 9))))
    member1 = member(m1, member_epoch=10, state=cr.MemberState.UNRELEASED_PARTITIONS,
                     assigned=mk((FOO, (1, 2, 3))), pending_revocation=mk((BAR, (4, 5, 6))))
    grp.update_member(member1)
    assert not _waiting_on_unreleased(grp.g, member1)
    grp.update_member(member(m2, member_epoch=10, pending_revocation=mk((ZAR, (7,)))))
    assert _waiting_on_unreleased(grp.g, member1)


def test_group_state() -> None:
    grp = Group()
    assert state(grp) is ConsumerGroupState.EMPTY
    member1 = member("member1", state=cr.MemberState.STABLE, member_epoch=1, previous_member_epoch=0)
    grp.update_member(member1)
    grp.set_group_epoch(1)
    assert grp.g.members["member1"].state is cr.MemberState.STABLE
    assert state(grp) is ConsumerGroupState.ASSIGNING
    member2 = member("member2", state=cr.MemberState.STABLE, member_epoch=1, previous_member_epoch=0)
    grp.update_member(member2)
    grp.set_group_epoch(2)
    assert state(grp) is ConsumerGroupState.ASSIGNING
    grp.set_target_assignment_epoch(2)
    assert state(grp) is ConsumerGroupState.RECONCILING
    grp.update_member(dataclasses.replace(member1, state=cr.MemberState.STABLE, member_epoch=2,
                                          previous_member_epoch=1))
    assert state(grp) is ConsumerGroupState.RECONCILING
    # member 2 is not stable: the group stays reconciling
    member2 = dataclasses.replace(member2, state=cr.MemberState.UNREVOKED_PARTITIONS, member_epoch=2,
                                  previous_member_epoch=1)
    grp.update_member(member2)
    assert grp.g.members["member2"].state is cr.MemberState.UNREVOKED_PARTITIONS
    assert state(grp) is ConsumerGroupState.RECONCILING
    grp.update_member(dataclasses.replace(member2, state=cr.MemberState.STABLE))
    assert state(grp) is ConsumerGroupState.STABLE
    grp.remove_member("member1")
    grp.remove_member("member2")
    assert state(grp) is ConsumerGroupState.EMPTY


def test_preferred_server_assignor() -> None:
    grp = Group()
    member1 = member("member1", server_assignor="range")
    member2 = member("member2", server_assignor="range")
    member3 = member("member3", server_assignor="uniform")
    assert current_preferred_assignor(grp.g) is None
    assert computed_preferred_assignor(grp.g, None, member1) == "range"
    grp.update_member(member1)
    assert current_preferred_assignor(grp.g) == "range"
    # member 1 removed (not in the group yet): no assignor left
    assert computed_preferred_assignor(grp.g, member1, None) is None
    assert computed_preferred_assignor(grp.g, None, member2) == "range"
    grp.update_member(member2)
    assert current_preferred_assignor(grp.g) == "range"
    grp.update_member(member3)
    assert current_preferred_assignor(grp.g) == "range"
    # members without assignors
    updated1 = member("member1", server_assignor=None)
    updated2 = member("member2", server_assignor=None)
    updated3 = member("member3", server_assignor=None)
    assert computed_preferred_assignor(grp.g, member1, updated1) in ("range", "uniform")
    grp.update_member(updated1)
    assert computed_preferred_assignor(grp.g, member2, updated2) == "uniform"
    grp.update_member(updated2)
    assert current_preferred_assignor(grp.g) == "uniform"
    assert computed_preferred_assignor(grp.g, member3, updated3) is None
    grp.update_member(updated3)
    assert current_preferred_assignor(grp.g) is None


def test_update_subscribed_topic_names_and_subscription_type() -> None:
    member1 = member("member1", subscribed_topic_names=("foo",))
    member2 = member("member2", subscribed_topic_names=("bar", "foo"))
    member3 = member("member3", subscribed_topic_names=("bar", "foo"))
    grp = Group("group-foo")
    assert grp.subscribed_topic_names() == {}
    assert grp.g.subscription_kind is HOMOGENEOUS
    grp.update_member(member1)
    assert grp.g.subscription_kind is HOMOGENEOUS
    grp.update_member(member2)
    assert grp.g.subscription_kind is HETEROGENEOUS
    grp.update_member(member3)
    assert grp.g.subscription_kind is HETEROGENEOUS
    grp.remove_member(member1.member_id)
    assert grp.g.subscription_kind is HOMOGENEOUS
    grp.update_member(member("member2", subscribed_topic_names=("bar", "foo", "zar")))
    assert grp.g.subscription_kind is HETEROGENEOUS


def test_metadata_refresh_deadline() -> None:
    """The epoch half (see the module docstring): a group just built has expired metadata; a
    refresh at the group epoch holds, one at a later epoch does not until the group reaches
    it; requestMetadataRefresh (a new image changing a topic the group subscribes to:
    refresh_changed_groups) expires it at once. A member subscribed to foo stands in for
    the direct call, which the reference makes only for subscribed groups."""
    grp = Group("group-foo")
    txn = grp.txn()
    assert grp.g.group_epoch == 0
    assert _metadata_expired(txn, grp.g)
    assert grp.g.metadata_refresh_epoch is None
    grp.g.metadata_refresh_epoch = grp.g.group_epoch  # setMetadataRefreshDeadline(_, epoch)
    assert not _metadata_expired(txn, grp.g)
    grp.g.metadata_refresh_epoch = grp.g.group_epoch + 1
    assert _metadata_expired(txn, grp.g)
    grp.set_group_epoch(grp.g.group_epoch + 1)
    grp.g.metadata_refresh_epoch = grp.g.group_epoch
    assert not _metadata_expired(txn, grp.g)
    grp.update_member(member("m", subscribed_topic_names=("foo",)))
    grp.ctx.coordinator.set_topics([TopicMetadata(FOO, "foo", 1)])
    assert _metadata_expired(txn, grp.g)
    assert grp.g.metadata_refresh_epoch is None


def commit(grp: Group, member_id: str, epoch: int, version: int) -> Error:
    resp = grp.handle(OffsetCommitRequest(group_id=grp.group_id, generation_id=epoch, member_id=member_id,
                                          partitions=(OffsetCommitPartition("foo", 0, 1),), version=version))
    assert isinstance(resp, OffsetCommitResponse)
    (p,) = resp.partitions
    return p.error


@pytest.mark.parametrize("version", range(10))
def test_validate_offset_commit(version: int) -> None:
    grp = Group("group-foo")
    # the admin client, without member id and epoch: only into an empty group
    assert commit(grp, "", -1, version) is Error.NONE
    # an unknown member
    assert commit(grp, "member-id", 0, version) is Error.UNKNOWN_MEMBER_ID
    grp.update_member(member("new-protocol-member-id"))
    grp.update_member(member("old-protocol-member-id", classic=classic()))
    # the admin client into a group with members
    assert commit(grp, "", -1, version) is Error.UNKNOWN_MEMBER_ID
    # a stale epoch
    stale = Error.STALE_MEMBER_EPOCH if version >= 9 else Error.UNSUPPORTED_VERSION
    assert commit(grp, "new-protocol-member-id", 10, version) is stale
    assert commit(grp, "old-protocol-member-id", 10, version) is Error.ILLEGAL_GENERATION
    ok = Error.NONE if version >= 9 else Error.UNSUPPORTED_VERSION
    assert commit(grp, "new-protocol-member-id", 0, version) is ok


def fetch(grp: Group, member_id: str | None, epoch: int) -> Error:
    resp = grp.handle(OffsetFetchRequest(group_id=grp.group_id, partitions=(("foo", 0),),
                                         member_id=member_id, member_epoch=epoch))
    assert isinstance(resp, OffsetFetchResponse)
    return resp.error


def test_as_listed_group() -> None:
    grp = Group("group-foo")

    def listed() -> tuple[ListedGroup, ...]:
        resp = grp.handle(ListGroupsRequest())
        assert isinstance(resp, ListGroupsResponse)
        return resp.groups

    assert listed() == (ListedGroup("group-foo", "consumer", ConsumerGroupState.EMPTY.value, "consumer"),)
    grp.update_member(member("member1", subscribed_topic_names=("foo",)))
    assert listed() == (ListedGroup("group-foo", "consumer", ConsumerGroupState.STABLE.value, "consumer"),)


def test_validate_offset_fetch() -> None:
    grp = Group("group-foo")
    # the admin client, without member id and epoch
    assert fetch(grp, None, -1) is Error.NONE
    assert fetch(grp, "member-id", 0) is Error.UNKNOWN_MEMBER_ID
    grp.update_member(member("member-id"))
    assert fetch(grp, "member-id", 10) is Error.STALE_MEMBER_EPOCH
    assert fetch(grp, "member-id", 0) is Error.NONE


def delete(grp: Group) -> Error:
    resp = grp.handle(DeleteGroupsRequest(groups_names=(grp.group_id,)))
    assert isinstance(resp, DeleteGroupsResponse)
    (result,) = resp.results
    return result.error


def test_validate_delete_group() -> None:
    empty = Group("foo")
    assert state(empty) is ConsumerGroupState.EMPTY
    assert delete(empty) is Error.NONE
    grp = Group("foo")
    grp.update_member(member("member1", member_epoch=1, previous_member_epoch=0))
    assert state(grp) is ConsumerGroupState.RECONCILING
    assert delete(grp) is Error.NON_EMPTY_GROUP
    grp.set_group_epoch(1)
    assert state(grp) is ConsumerGroupState.ASSIGNING
    assert delete(grp) is Error.NON_EMPTY_GROUP
    grp.set_target_assignment_epoch(1)
    assert state(grp) is ConsumerGroupState.STABLE
    assert delete(grp) is Error.NON_EMPTY_GROUP


def test_offset_expiration_condition() -> None:
    """An offset of a consumer group expires offsets.retention.ms after its commit timestamp
    (the condition's base timestamp)."""
    ctx = Context(offsets_retention_ms=10_000)
    grp = Group("group-id", ctx)
    ctx.now = 20_000
    assert commit(grp, "", -1, 9) is Error.NONE
    ctx.now = 29_999
    txn = grp.txn()
    expire_consumer_offsets(txn, grp.g)
    assert txn.out.records == []
    ctx.now = 30_000
    txn = grp.txn()
    expire_consumer_offsets(txn, grp.g)
    deleted = [x for x in txn.out.records if type(x).__name__ == "OffsetsDeleted"]
    assert [x.partitions for x in deleted] == [(("foo", 0),)]  # type: ignore[attr-defined]


def test_is_subscribed_to_topic() -> None:
    grp = Group("group-foo")
    grp.update_member(member("member1", subscribed_topic_names=("foo",)))
    grp.update_member(member("member2", subscribed_topic_names=("bar",)))

    def subscribed(topic: str) -> bool:
        resp = grp.handle(OffsetDeleteRequest(group_id=grp.group_id, partitions=((topic, 0),)))
        assert isinstance(resp, OffsetDeleteResponse)
        (p,) = resp.partitions
        return p.error is Error.GROUP_SUBSCRIBED_TO_TOPIC

    assert subscribed("foo")
    assert subscribed("bar")
    grp.remove_member("member1")
    assert not subscribed("foo")
    grp.remove_member("member2")
    assert not subscribed("bar")


def test_as_described_group() -> None:
    grp = Group("group-id-1")
    assert describe_group(grp.txn(), "group-id-1").group_state == ConsumerGroupState.EMPTY.value
    grp.update_member(member("member1", subscribed_topic_names=("foo",), server_assignor="assignorName"))
    grp.update_member(member("member2"))
    empty = DescribedAssignment(())
    expected = DescribedGroup(
        error=Error.NONE, group_id="group-id-1", group_state=ConsumerGroupState.STABLE.value,
        group_epoch=0, assignment_epoch=0, assignor_name="assignorName",
        members=(
            DescribedMember(member_id="member1", member_epoch=0, client_id="", client_host="",
                            subscribed_topic_names=("foo",), subscribed_topic_regex="",
                            assignment=empty, target_assignment=empty,
                            member_type=MEMBER_TYPE_CONSUMER),
            DescribedMember(member_id="member2", member_epoch=0, client_id="", client_host="",
                            subscribed_topic_names=(), subscribed_topic_regex="",
                            assignment=empty, target_assignment=empty,
                            member_type=MEMBER_TYPE_CONSUMER),
        ))
    assert describe_group(grp.txn(), "group-id-1") == expected


def test_is_in_states_case_insensitive() -> None:
    grp = Group("group-foo")

    def in_states(*states: str) -> bool:
        resp = grp.handle(ListGroupsRequest(states_filter=states))
        assert isinstance(resp, ListGroupsResponse)
        return any(g.group_id == "group-foo" for g in resp.groups)

    assert in_states("empty")
    grp.update_member(member("member1", subscribed_topic_names=("foo",)))
    assert in_states("stable")
    assert not in_states("empty")


def test_classic_members_supported_protocols() -> None:
    grp = Group()
    member1 = member("member-1", classic=classic("range"))
    grp.update_member(member1)
    member2 = member("member-2", classic=classic("roundrobin", "range"))
    grp.update_member(member2)
    assert grp.g.classic_members_supported_protocols() == {"range": 2, "roundrobin": 1}
    assert grp.g.supports_classic_protocols("consumer", {"range", "sticky"})
    assert not grp.g.supports_classic_protocols("consumer", {"sticky", "roundrobin"})
    member2 = dataclasses.replace(member2, classic=classic("range"))
    grp.update_member(member2)
    assert grp.g.classic_members_supported_protocols().get("range") == 2
    assert "roundrobin" not in grp.g.classic_members_supported_protocols()
    grp.update_member(dataclasses.replace(member1, classic=classic("roundrobin", "range")))
    grp.update_member(dataclasses.replace(member2, classic=classic("roundrobin", "range")))
    assert grp.g.classic_members_supported_protocols() == {"range": 2, "roundrobin": 2}
    assert grp.g.supports_classic_protocols("consumer", {"sticky", "roundrobin"})


def test_num_classic_protocol_members() -> None:
    grp = Group()
    member1 = member("member-1", classic=classic("range"))
    grp.update_member(member1)
    assert grp.g.num_classic_protocol_members() == 1
    member2 = member("member-2")
    grp.update_member(member2)
    assert grp.g.num_classic_protocol_members() == 1
    assert not grp.g.all_members_use_classic_protocol_except([member1])
    assert grp.g.all_members_use_classic_protocol_except([member2])
    grp.remove_member(member1.member_id)
    grp.update_member(member("member-3"))
    assert grp.g.num_classic_protocol_members() == 0
    assert not grp.g.all_members_use_classic_protocol_except([member2])
    grp.remove_member(member2.member_id)
    grp.update_member(member("member-2", classic=classic("range")))
    assert grp.g.num_classic_protocol_members() == 1


@pytest.mark.parametrize(("classics", "consumers", "removed_classics", "removed_consumers", "expected"), [
    (5, 5, 0, 0, False),
    (5, 5, 0, 4, False),
    (5, 5, 1, 4, False),
    (5, 5, 0, 5, True),
    (5, 5, 1, 5, True),
    (5, 5, 5, 5, True),
    (5, 0, 0, 0, True),
    (5, 0, 1, 0, True),
])
def test_all_members_use_classic_protocol_except(classics: int, consumers: int, removed_classics: int,
                                                 removed_consumers: int, expected: bool) -> None:
    grp = Group()
    classic_members = [member(f"classic-member-{i}", classic=classic("range")) for i in range(classics)]
    consumer_members = [member(f"consumer-member-{i}") for i in range(consumers)]
    for m in [*classic_members, *consumer_members]:
        grp.update_member(m)
    assert grp.g.num_classic_protocol_members() == classics
    removed = classic_members[:removed_classics] + consumer_members[:removed_consumers]
    assert grp.g.all_members_use_classic_protocol_except(removed) is expected


def test_from_classic_group() -> None:
    member_id = "6b1f7c1e-5a0e-4c43-9d53-0c3f2f1d8a77"
    ctx = Context([TopicMetadata(FOO, "foo", 1, (frozenset({"rack0"}),)),
                   TopicMetadata(BAR, "bar", 1, (frozenset({"rack0"}),))])
    subscription = Subscription(("foo", "bar"), None, {"foo": (0,), "bar": (0,)}).encode()
    assignment = ProtocolAssignment({"foo": (0,), "bar": (0,)}).encode()
    classic_group = ClassicGroup(
        "group-id", state=GroupState.Stable, generation_id=10, protocol_type="consumer",
        protocol_name="range", leader_id=member_id,
        members={member_id: Member(MemberInfo(member_id, None, "client-id", "client-host", "consumer"),
                                   rebalance_timeout_ms=5000, session_timeout_ms=500,
                                   protocols=(JoinGroupProtocol("range", subscription),),
                                   assignment=assignment)})
    txn = Txn(ctx.coordinator.state, ctx.coordinator.config, ctx.now)
    converted = convert_to_consumer_group(txn, classic_group, [])
    expected_member = ConsumerMember(
        member_id, member_epoch=10, previous_member_epoch=10, state=cr.MemberState.STABLE,
        instance_id=None, rack_id=None, rebalance_timeout_ms=5000, client_id="client-id",
        client_host="client-host", subscribed_topic_names=frozenset({"foo", "bar"}),
        assigned=mk((FOO, (0,)), (BAR, (0,))),
        classic=cr.ClassicMemberMetadata(500, (cr.ClassicProtocol("range", subscription),)))
    assert converted.group_id == "group-id"
    assert converted.group_epoch == 10
    assert converted.state is ConsumerGroupState.STABLE
    assert current_preferred_assignor(converted) is None
    assert converted.members == {member_id: expected_member}
    assert converted.metadata_hash == _metadata_hash(txn, ["foo", "bar"])


def test_subscribed_regular_expression_count() -> None:
    grp = Group()
    member1 = member("member1", subscribed_topic_regex="regex1")
    member2 = member("member2", subscribed_topic_regex="regex2")
    member3 = member("member3", subscribed_topic_regex="regex1")
    member4 = member("member4")

    def counts() -> list[int]:
        return [grp.g.num_subscribed_members(rx) for rx in ("", "regex1", "regex2", "regex3")]

    assert counts() == [0, 0, 0, 0]
    grp.update_member(member1)
    assert counts() == [0, 1, 0, 0]
    grp.update_member(member2)
    assert counts() == [0, 1, 1, 0]
    grp.update_member(member3)
    assert counts() == [0, 2, 1, 0]
    grp.update_member(member4)
    assert counts() == [0, 2, 1, 0]
    member3 = dataclasses.replace(member3, subscribed_topic_regex="regex2")
    grp.update_member(member3)
    assert counts() == [0, 1, 2, 0]
    grp.remove_member(member1.member_id)
    assert counts() == [0, 0, 2, 0]
    grp.remove_member(member2.member_id)
    assert counts() == [0, 0, 1, 0]
    grp.remove_member(member3.member_id)
    assert counts() == [0, 0, 0, 0]


def test_update_and_remove_regular_expression() -> None:
    grp = Group()
    grp.update_member(member("member1", subscribed_topic_names=("foo", "bar", "zar")))
    grp.update_member(member("member2", subscribed_topic_names=("foo", "bar")))
    assert grp.subscribed_topic_names() == {"foo": (2, 0), "bar": (2, 0), "zar": (1, 0)}
    grp.update_resolved_regex("foo|bar", {"foo", "bar"}, 10, 12345)
    assert grp.subscribed_topic_names() == {"foo": (2, 1), "bar": (2, 1), "zar": (1, 0)}
    grp.update_resolved_regex("foobar", {"foobar"}, 10, 12345)
    assert grp.subscribed_topic_names() == {"foo": (2, 1), "bar": (2, 1), "zar": (1, 0),
                                            "foobar": (0, 1)}
    grp.update_resolved_regex("foo|bar", {"foo"}, 10, 12345)
    assert grp.subscribed_topic_names() == {"foo": (2, 1), "bar": (2, 0), "zar": (1, 0),
                                            "foobar": (0, 1)}
    grp.remove_resolved_regex("foo|bar")
    assert grp.subscribed_topic_names() == {"foo": (2, 0), "bar": (2, 0), "zar": (1, 0),
                                            "foobar": (0, 1)}
    grp.remove_resolved_regex("foobar")
    assert grp.subscribed_topic_names() == {"foo": (2, 0), "bar": (2, 0), "zar": (1, 0)}


def test_compute_subscribed_topic_names_without_deleted_members() -> None:
    grp = Group()
    member1 = member("member1", subscribed_topic_names=("foo", "bar", "zar"))
    member2 = member("member2", subscribed_topic_names=("foo", "bar"))
    member3 = member("member3", subscribed_topic_regex="foo*")
    member4 = member("member4", subscribed_topic_regex="foo*")
    member5 = member("member5", subscribed_topic_regex="bar*")
    member6 = member("member6", subscribed_topic_regex="bar*")
    for m in (member1, member2, member3, member4, member5, member6):
        grp.update_member(m)
    grp.update_resolved_regex("foo*", {"foo", "fooo"}, 10, 12345)
    grp.update_resolved_regex("bar*", {"bar", "barr"}, 10, 12345)
    assert grp.subscribed_topic_names() == {"foo": (2, 1), "fooo": (0, 1), "bar": (2, 1),
                                            "barr": (0, 1), "zar": (1, 0)}
    assert grp.g.counts_without([member2, member3, member4, member5], {"foo*"}) == {
        "foo": (1, 0), "bar": (1, 1), "barr": (0, 1), "zar": (1, 0)}


def test_compute_subscribed_topic_names() -> None:
    grp = Group()
    grp.update_member(member("member1", subscribed_topic_names=("foo", "bar", "zar")))
    grp.update_member(member("member2", subscribed_topic_names=("foo", "bar")))
    member3 = member("member3", subscribed_topic_names=("foo",), subscribed_topic_regex="foo*")
    grp.update_member(member3)
    grp.update_resolved_regex("foo*", {"foo", "fooo"}, 10, 12345)
    initial = {"foo": (3, 1), "fooo": (0, 1), "bar": (2, 0), "zar": (1, 0)}
    assert grp.subscribed_topic_names() == initial
    assert grp.g.counts_with(member3, member3) == initial
    assert grp.g.counts_with(member3, dataclasses.replace(member3, subscribed_topic_regex="")) == {
        "foo": (3, 0), "bar": (2, 0), "zar": (1, 0)}
    assert grp.g.counts_with(member3, dataclasses.replace(member3, subscribed_topic_names=frozenset())) == {
        "foo": (2, 1), "fooo": (0, 1), "bar": (2, 0), "zar": (1, 0)}
    assert grp.g.counts_with(member3, dataclasses.replace(
        member3, subscribed_topic_names=frozenset(), subscribed_topic_regex="")) == {
        "foo": (2, 0), "bar": (2, 0), "zar": (1, 0)}


def tombstone_group() -> Group:
    """The group testCreateGroupTombstoneRecords* start from."""
    grp = Group()
    grp.set_group_epoch(10)
    ids = iter(TopicId(0x5EED_0000_0000_0000_0000_0000_0000_1000 + i) for i in range(6))
    grp.update_member(member("member1", member_epoch=10, subscribed_topic_names=("foo", "bar", "zar"),
                             assigned=mk((next(ids), (0, 1, 2)))))
    grp.update_member(member("member2", member_epoch=10, subscribed_topic_names=("foo", "bar"),
                             assigned=mk((next(ids), (0, 1, 2)))))
    grp.update_member(member("member3", member_epoch=10, subscribed_topic_regex="foo*",
                             assigned=mk((next(ids), (0, 1, 2)))))
    grp.update_resolved_regex("foo*", {"foo", "fooo"}, 10, 12345)
    for mid in ("member1", "member2", "member3"):
        grp.update_target_assignment(mid, mk((next(ids), (0, 1, 2))))
    return grp


def expected_tombstones(member_ids: list[str]) -> list[list[Record]]:
    """Kafka's groups of records (ConsumerGroupTest.testCreateGroupTombstoneRecords)."""
    return [
        [cr.ConsumerGroupCurrentAssignmentRecord("foo", m, None) for m in member_ids],
        [cr.ConsumerGroupTargetAssignmentRecord("foo", m, None) for m in member_ids],
        [cr.ConsumerGroupTargetAssignmentEpochRecord("foo", None)],
        [cr.ConsumerGroupMemberSubscriptionRecord("foo", m, None) for m in member_ids],
        [cr.ConsumerGroupRegularExpressionRecord("foo", "foo*", None)],
        [cr.ConsumerGroupSubscriptionMetadataRecord("foo", None)],
        [cr.ConsumerGroupEpochRecord("foo", None)],
    ]


def test_create_group_tombstone_records() -> None:
    grp = tombstone_group()
    assert_unordered_records(expected_tombstones(["member1", "member2", "member3"]),
                             group_tombstones(grp.g))


def test_create_group_tombstone_records_with_replaced_member() -> None:
    grp = tombstone_group()
    assert_unordered_records(expected_tombstones(["member1", "member2", "member4"]),
                             group_tombstones(grp.g, ("member3", "member4")))


def test_subscription_type() -> None:
    assert subscription_type({}, 0, {}) is HOMOGENEOUS
    assert subscription_type({"foo": (5, 0)}, 5, {}) is HOMOGENEOUS
    assert subscription_type({"foo": (4, 0), "bar": (1, 0)}, 5, {}) is HETEROGENEOUS
    assert subscription_type({"foo": (0, 1)}, 5, {"foo*": 5}) is HOMOGENEOUS
    assert subscription_type({"foo": (0, 1), "food": (0, 1)}, 5, {"foo*": 5}) is HOMOGENEOUS
    assert subscription_type({"foo": (1, 1)}, 5, {"foo*": 5}) is HETEROGENEOUS
    assert subscription_type({"foo": (0, 1), "bar": (1, 0)}, 5, {"foo*": 5}) is HETEROGENEOUS
    assert subscription_type({"foo": (0, 1), "bar": (0, 1)}, 5, {"foo*": 4, "bar*": 1}) is HETEROGENEOUS


def test_compute_subscribed_regular_expressions() -> None:
    grp = Group()
    grp.set_group_epoch(10)
    grp.update_member(member("m1", subscribed_topic_regex="foo*"))
    grp.update_member(member("m2", subscribed_topic_regex="foo*"))
    assert grp.g.regexes_with(None, member("m3", subscribed_topic_regex="foo*")) == {"foo*": 3}
    assert grp.g.regexes_with(member("m2", subscribed_topic_regex="foo*"), None) == {"foo*": 1}
    assert grp.g.regexes_with(None, member("m4", subscribed_topic_regex="bar*")) == {
        "foo*": 2, "bar*": 1}
    assert grp.g.regexes_with(member("m2", subscribed_topic_regex="foo*"),
                              member("m2", subscribed_topic_regex="bar*")) == {"foo*": 1, "bar*": 1}


def test_compute_metadata_hash() -> None:
    """What the reference's digest promises (Kafka's is Murmur3: docs/deviations.md): over
    the subscribed topics in the image; 0 for none; order-free; moved by a topic's id,
    partition count or racks, as Kafka's computeTopicHash is."""
    ctx = Context([TopicMetadata(FOO, "foo", 1, (frozenset({"rack0"}),)),
                   TopicMetadata(BAR, "bar", 1, (frozenset({"rack0"}),))])
    txn = Txn(ctx.coordinator.state, ctx.coordinator.config, ctx.now)
    both = _metadata_hash(txn, {"foo": (1, 0), "bar": (1, 0)})
    assert both != 0
    assert both == _metadata_hash(txn, ["bar", "foo"])
    assert _metadata_hash(txn, []) == 0
    assert _metadata_hash(txn, ["zar"]) == 0  # not in the image
    assert _metadata_hash(txn, ["foo", "bar", "zar"]) == both
    assert _metadata_hash(txn, ["foo"]) != both
    for changed in (TopicMetadata(ZAR, "foo", 1, (frozenset({"rack0"}),)),
                    TopicMetadata(FOO, "foo", 2, (frozenset({"rack0"}), frozenset({"rack0"}))),
                    TopicMetadata(FOO, "foo", 1, (frozenset({"rack1"}),))):
        other = Context([changed, TopicMetadata(BAR, "bar", 1, (frozenset({"rack0"}),))])
        assert _metadata_hash(Txn(other.coordinator.state, other.coordinator.config, 0),
                              ["foo", "bar"]) != both, changed


# ============================================================================ ConsumerGroupMemberTest
def full_member(classic_metadata: cr.ClassicMemberMetadata | None = None) -> ConsumerMember:
    return ConsumerMember(
        "member-id", member_epoch=10, previous_member_epoch=9, instance_id="instance-id",
        rack_id="rack-id", rebalance_timeout_ms=5000, client_id="client-id", client_host="hostname",
        subscribed_topic_names=frozenset(["foo", "bar"]), subscribed_topic_regex="regex",
        server_assignor="range", assigned=mk((T1, (1, 2, 3))), pending_revocation=mk((T2, (4, 5, 6))),
        classic=classic_metadata)


class TestConsumerGroupMember:
    """ConsumerGroupMemberTest."""

    def test_new_member(self) -> None:
        m = full_member(classic("range", metadata=bytes([1, 2, 3])))
        assert m.member_id == "member-id"
        assert m.member_epoch == 10
        assert m.previous_member_epoch == 9
        assert m.instance_id == "instance-id"
        assert m.rack_id == "rack-id"
        assert m.client_id == "client-id"
        assert m.client_host == "hostname"
        assert m.subscribed_topic_names == {"bar", "foo"}
        assert m.subscribed_topic_regex == "regex"
        assert m.server_assignor == "range"
        assert m.assigned == mk((T1, (1, 2, 3)))
        assert m.pending_revocation == mk((T2, (4, 5, 6)))
        assert m.classic == classic("range", metadata=bytes([1, 2, 3]))
        assert m.classic is not None
        assert m.classic.supported_protocols == (cr.ClassicProtocol("range", bytes([1, 2, 3])),)

    def test_equals(self) -> None:
        assert full_member(classic("range", metadata=bytes([1, 2, 3]))) == full_member(
            classic("range", metadata=bytes([1, 2, 3])))

    def test_update_with_consumer_group_member_metadata_value(self) -> None:
        value = cr.ConsumerGroupMemberMetadataValue(
            server_assignor="range", client_id="client-id", client_host="host-id", instance_id="instance-id",
            rack_id="rack-id", rebalance_timeout_ms=1000, subscribed_topic_names=("foo", "bar"),
            subscribed_topic_regex="regex", classic_member_metadata=classic("range", metadata=bytes([1, 2, 3])))
        m = ConsumerMember("member-id").with_subscription(value)
        assert m.instance_id == "instance-id"
        assert m.rack_id == "rack-id"
        assert m.client_id == "client-id"
        assert m.client_host == "host-id"
        assert m.subscribed_topic_names == {"bar", "foo"}
        assert m.subscribed_topic_regex == "regex"
        assert m.server_assignor == "range"
        assert m.classic == classic("range", metadata=bytes([1, 2, 3]))

    def test_update_with_consumer_group_current_member_assignment_value(self) -> None:
        value = cr.ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=10, previous_member_epoch=9, state=cr.MemberState.STABLE,
            assigned_partitions=(cr.RecordTopicPartitions(T1, (0, 1, 2)),),
            partitions_pending_revocation=(cr.RecordTopicPartitions(T2, (3, 4, 5)),))
        m = ConsumerMember("member-id").with_current_assignment(value)
        assert m.member_epoch == 10
        assert m.previous_member_epoch == 9
        assert m.assigned == mk((T1, (0, 1, 2)))
        assert m.pending_revocation == mk((T2, (3, 4, 5)))

    @pytest.mark.parametrize("with_classic_member_metadata", [True, False])
    def test_as_consumer_group_describe_member(self, with_classic_member_metadata: bool) -> None:
        ctx = Context([TopicMetadata(T1, "topic1", 3), TopicMetadata(T2, "topic2", 3),
                       TopicMetadata(T3, "topic3", 3), TopicMetadata(T4, "topic4", 3)])
        grp = Group("group", ctx)
        member_id = "8d1c6a0e-2b1f-4a51-9a57-5a4c8a7d5e21"
        value = cr.ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=10, previous_member_epoch=9, state=cr.MemberState.STABLE,
            assigned_partitions=(cr.RecordTopicPartitions(T1, (0, 1, 2)),),
            partitions_pending_revocation=(cr.RecordTopicPartitions(T2, (3, 4, 5)),))
        m = dataclasses.replace(
            ConsumerMember(member_id).with_current_assignment(value), client_id="clientId",
            instance_id="instanceId", rack_id="rackId", client_host="clientHost",
            subscribed_topic_names=frozenset(["topic1", "topic2"]), subscribed_topic_regex="topic.*",
            classic=classic("range", metadata=bytes([1, 2, 3])) if with_classic_member_metadata else None)
        grp.update_member(m)
        grp.update_target_assignment(member_id, mk((T4, (0, 1, 2))))
        described = describe_group(grp.txn(), "group").members
        assert described == (DescribedMember(
            member_id=member_id, member_epoch=10, client_id="clientId", instance_id="instanceId",
            rack_id="rackId", client_host="clientHost", subscribed_topic_names=("topic1", "topic2"),
            subscribed_topic_regex="topic.*",
            assignment=DescribedAssignment((DescribedTopicPartitions(T1, "topic1", (0, 1, 2)),)),
            target_assignment=DescribedAssignment((DescribedTopicPartitions(T4, "topic4", (0, 1, 2)),)),
            member_type=MEMBER_TYPE_CLASSIC if with_classic_member_metadata else MEMBER_TYPE_CONSUMER),)

    def test_as_consumer_group_describe_with_target_assignment_null(self) -> None:
        grp = Group("group")
        grp.update_member(ConsumerMember("2f0b6a7c-3d5e-4f60-8a71-9b8c7d6e5f40"))
        (described,) = describe_group(grp.txn(), "group").members
        assert described.target_assignment == DescribedAssignment(())

    def test_as_consumer_group_describe_with_topic_name_not_found(self) -> None:
        ctx = Context([TopicMetadata(T2, "foo", 3)])
        grp = Group("group", ctx)
        member_id = "5e4d3c2b-1a09-4f8e-9d7c-6b5a49382716"
        value = cr.ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=0, previous_member_epoch=-1, state=cr.MemberState.STABLE,
            assigned_partitions=(cr.RecordTopicPartitions(T1, (0, 1, 2)),),
            partitions_pending_revocation=())
        grp.update_member(ConsumerMember(member_id).with_current_assignment(value))
        empty = DescribedAssignment(())
        assert describe_group(grp.txn(), "group").members == (DescribedMember(
            member_id=member_id, member_epoch=0, client_id="", client_host="", subscribed_topic_names=(),
            subscribed_topic_regex="", assignment=empty, target_assignment=empty,
            member_type=MEMBER_TYPE_CONSUMER),)


# ============================================================================ TargetAssignmentBuilderTest
class RecordingAssignor(MockAssignor):
    """The MockPartitionAssignor, keeping the group spec it was called with (Kafka's verify)."""

    def __init__(self, inner: MockAssignor) -> None:
        super().__init__()
        self.inner = inner
        self.specs: list[GroupSpec] = []

    def assign(self, spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
        self.specs.append(spec)
        return self.inner.assign(spec, topics)


class Builder:
    """TargetAssignmentBuilderTestContext on the reference: the group's members, static
    members and targets as records; the update as the heartbeat hands it to _update_target."""

    def __init__(self, group_epoch: int, assignor: MockAssignor, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ctx = Context([TopicMetadata(FOO, "foo", 6), TopicMetadata(BAR, "bar", 6)])
        self.group_epoch = group_epoch
        self.grp = Group("my-group", self.ctx)
        self.members: dict[str, ConsumerMember] = {}
        self.updated: ConsumerMember | None = None
        self.removed: set[str] = set()
        self.recording = RecordingAssignor(assignor)
        monkeypatch.setattr(heartbeat_module, "get_server_assignor", lambda name: self.recording)

    def add_group_member(self, member_id: str, topics: Iterable[str], target: Assignment) -> None:
        m = ConsumerMember(member_id, subscribed_topic_names=frozenset(topics))
        self.members[member_id] = m
        self.grp.update_member(m)
        self.grp.update_target_assignment(member_id, target)

    def update_member_subscription(self, member_id: str, topics: Iterable[str],
                                   instance_id: str | None = None, rack_id: str | None = None) -> None:
        m = self.members.get(member_id, ConsumerMember(member_id))
        self.updated = dataclasses.replace(
            m, subscribed_topic_names=frozenset(topics),
            instance_id=instance_id if instance_id is not None else m.instance_id,
            rack_id=rack_id if rack_id is not None else m.rack_id)

    def remove_member_subscription(self, member_id: str) -> None:
        self.removed.add(member_id)

    def build(self) -> list[Record]:
        g = self.grp.g
        updated = self.updated
        if updated is None:  # no update: the first member, unchanged
            updated = next(m for mid, m in self.members.items() if mid not in self.removed)
        after = {mid: m for mid, m in self.members.items() if mid not in self.removed}
        after[updated.member_id] = updated
        records: list[Record] = []
        txn = self.grp.txn()
        heartbeat_module._update_target(txn, g, self.group_epoch, after, updated, None, HOMOGENEOUS, records)
        # the group spec the assignor got: every member after the change, its subscribed
        # topics in the image, its rack and instance id, its current target
        (spec,) = self.recording.specs
        assert spec.subscription_type is HOMOGENEOUS
        got = {s.member_id: (set(s.subscribed_topic_ids), {t: set(ps) for t, ps in s.assignment.items()},
                             s.rack_id, s.instance_id) for s in spec.members}
        ids = {"foo": FOO, "bar": BAR}
        assert got == {mid: ({ids[t] for t in m.subscribed_topic_names if t in ids},
                             {t: set(ps) for t, ps in g.target.get(mid, {}).items()},
                             m.rack_id, m.instance_id) for mid, m in after.items()}
        return records

    def target_assignment(self, records: list[Record]) -> dict[str, Assignment]:
        """TargetAssignmentResult.targetAssignment: the group's targets once the records are
        replayed (a removed member's target tombstoned, as removeMember does)."""
        self.ctx.replay(*records)
        for mid in self.removed:
            self.ctx.replay(cr.ConsumerGroupTargetAssignmentRecord("my-group", mid, None))
        return dict(self.grp.g.target)


def target_record(member_id: str, a: Assignment) -> Record:
    return cr.ConsumerGroupTargetAssignmentRecord("my-group", member_id,
                                                  cr.ConsumerGroupTargetAssignmentMemberValue(parts(a)))


EPOCH_20 = cr.ConsumerGroupTargetAssignmentEpochRecord(
    "my-group", cr.ConsumerGroupTargetAssignmentMetadataValue(20))


class TestTargetAssignmentBuilder:
    """TargetAssignmentBuilderTest."""

    def test_assignment_has_not_changed(self, assignor: MockAssignor, monkeypatch: pytest.MonkeyPatch) -> None:
        b = Builder(20, assignor, monkeypatch)
        b.add_group_member("member-1", ["foo", "bar", "zar"], mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3))))
        b.add_group_member("member-2", ["foo", "bar", "zar"], mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6))))
        assignor.prepare({"member-1": {FOO: (1, 2, 3), BAR: (1, 2, 3)},
                          "member-2": {FOO: (4, 5, 6), BAR: (4, 5, 6)}})
        records = b.build()
        assert records == [EPOCH_20]
        assert b.target_assignment(records) == {"member-1": mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3))),
                                                "member-2": mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6)))}

    def test_assignment_swapped(self, assignor: MockAssignor, monkeypatch: pytest.MonkeyPatch) -> None:
        b = Builder(20, assignor, monkeypatch)
        b.add_group_member("member-1", ["foo", "bar", "zar"], mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3))))
        b.add_group_member("member-2", ["foo", "bar", "zar"], mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6))))
        assignor.prepare({"member-2": {FOO: (1, 2, 3), BAR: (1, 2, 3)},
                          "member-1": {FOO: (4, 5, 6), BAR: (4, 5, 6)}})
        records = b.build()
        assert_unordered_records([
            [target_record("member-1", mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6)))),
             target_record("member-2", mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3))))],
            [EPOCH_20]], records)
        assert b.target_assignment(records) == {"member-2": mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3))),
                                                "member-1": mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6)))}

    def test_update_member(self, assignor: MockAssignor, monkeypatch: pytest.MonkeyPatch) -> None:
        b = Builder(20, assignor, monkeypatch)
        b.add_group_member("member-1", ["foo", "bar", "zar"], mk((FOO, (1, 2, 3)), (BAR, (1, 2))))
        b.add_group_member("member-2", ["foo", "bar", "zar"], mk((FOO, (4, 5, 6)), (BAR, (3, 4))))
        b.add_group_member("member-3", ["bar", "zar"], mk((BAR, (5, 6))))
        b.update_member_subscription("member-3", ["foo", "bar", "zar"], "instance-id-3", "rack-0")
        assignor.prepare({"member-1": {FOO: (1, 2), BAR: (1, 2)},
                          "member-2": {FOO: (3, 4), BAR: (3, 4)},
                          "member-3": {FOO: (5, 6), BAR: (5, 6)}})
        records = b.build()
        assert_unordered_records([
            [target_record("member-1", mk((FOO, (1, 2)), (BAR, (1, 2)))),
             target_record("member-2", mk((FOO, (3, 4)), (BAR, (3, 4)))),
             target_record("member-3", mk((FOO, (5, 6)), (BAR, (5, 6))))],
            [EPOCH_20]], records)
        assert b.target_assignment(records) == {"member-1": mk((FOO, (1, 2)), (BAR, (1, 2))),
                                                "member-2": mk((FOO, (3, 4)), (BAR, (3, 4))),
                                                "member-3": mk((FOO, (5, 6)), (BAR, (5, 6)))}

    def test_partial_assignment_update(self, assignor: MockAssignor, monkeypatch: pytest.MonkeyPatch) -> None:
        b = Builder(20, assignor, monkeypatch)
        b.add_group_member("member-1", ["foo", "bar", "zar"], mk((FOO, (1, 2)), (BAR, (1, 2))))
        b.add_group_member("member-2", ["foo", "bar", "zar"], mk((FOO, (3, 4)), (BAR, (3, 4))))
        b.add_group_member("member-3", ["bar", "zar"], mk((FOO, (5, 6)), (BAR, (5, 6))))
        assignor.prepare({"member-1": {FOO: (1, 2), BAR: (1, 2)},
                          "member-2": {FOO: (3, 4, 5), BAR: (3, 4, 5)},
                          "member-3": {FOO: (6,), BAR: (6,)}})
        records = b.build()
        assert_unordered_records([
            # member 1's assignment did not change: no record
            [target_record("member-2", mk((FOO, (3, 4, 5)), (BAR, (3, 4, 5)))),
             target_record("member-3", mk((FOO, (6,)), (BAR, (6,))))],
            [EPOCH_20]], records)
        assert b.target_assignment(records) == {"member-1": mk((FOO, (1, 2)), (BAR, (1, 2))),
                                                "member-2": mk((FOO, (3, 4, 5)), (BAR, (3, 4, 5))),
                                                "member-3": mk((FOO, (6,)), (BAR, (6,)))}

    def test_delete_member(self, assignor: MockAssignor, monkeypatch: pytest.MonkeyPatch) -> None:
        b = Builder(20, assignor, monkeypatch)
        b.add_group_member("member-1", ["foo", "bar", "zar"], mk((FOO, (1, 2)), (BAR, (1, 2))))
        b.add_group_member("member-2", ["foo", "bar", "zar"], mk((FOO, (3, 4)), (BAR, (3, 4))))
        b.add_group_member("member-3", ["foo", "bar", "zar"], mk((FOO, (5, 6)), (BAR, (5, 6))))
        b.remove_member_subscription("member-3")
        assignor.prepare({"member-1": {FOO: (1, 2, 3), BAR: (1, 2, 3)},
                          "member-2": {FOO: (4, 5, 6), BAR: (4, 5, 6)}})
        records = b.build()
        assert_unordered_records([
            [target_record("member-1", mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3)))),
             target_record("member-2", mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6))))],
            [EPOCH_20]], records)
        assert b.target_assignment(records) == {"member-1": mk((FOO, (1, 2, 3)), (BAR, (1, 2, 3))),
                                                "member-2": mk((FOO, (4, 5, 6)), (BAR, (4, 5, 6)))}

"""OffsetDelete (api key 47, KIP-496) in the reference coordinator, each answer as Kafka
4.1.2 gives it: GroupCoordinatorService.deleteOffsets (an empty group id), then the shard's
OffsetMetadataManager.deleteOffsets with ClassicGroup / ConsumerGroup.validateOffsetDelete
and isSubscribedToTopic. The offsets deleted are tombstoned (OffsetsDeleted, a persisted
record), a later OffsetFetch no longer finds them, and replaying the records (or a
failover) gives the same offsets."""

from __future__ import annotations

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import replay
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.records import Record
from groupspec.protocol.topic_id import TopicId

SUB_T = Subscription(("t",)).encode()


class Harness:
    def __init__(self) -> None:
        self.c = Coordinator(CoordinatorConfig(group_min_session_timeout_ms=1_000,
                                               group_initial_rebalance_delay_ms=100))
        self.rid = 0
        self.now = 0
        self.records: list[Record] = []

    def send(self, req: m.Request) -> m.Response:
        self.rid += 1
        out = self.c.handle(self.rid, req, self.now)
        self.records.extend(out.records)
        resp = out.response_to(self.rid)
        assert resp is not None
        return resp

    def commit(self, *parts: tuple[str, int, int], group: str = "g", gen: int = -1,
               member: str = "") -> None:
        resp = self.send(m.OffsetCommitRequest(
            group_id=group, generation_id=gen, member_id=member, version=8,
            partitions=tuple(m.OffsetCommitPartition(t, p, o) for t, p, o in parts)))
        assert isinstance(resp, m.OffsetCommitResponse)
        assert resp.errors() == {Error.NONE}, resp

    def delete(self, *parts: tuple[str, int], group: str = "g") -> m.OffsetDeleteResponse:
        before = len(self.records)
        resp = self.send(m.OffsetDeleteRequest(group_id=group, partitions=parts))
        assert isinstance(resp, m.OffsetDeleteResponse)
        self.last_records = self.records[before:]
        return resp

    def fetch(self, *parts: tuple[str, int], group: str = "g") -> dict[tuple[str, int], int]:
        resp = self.send(m.OffsetFetchRequest(group_id=group, partitions=parts))
        assert isinstance(resp, m.OffsetFetchResponse) and resp.error is Error.NONE
        return {(p.topic, p.partition): p.committed_offset for p in resp.partitions}

    def stable_member(self, protocol_type: str = "consumer", metadata: bytes = SUB_T) -> str:
        """One member joined and synced: the group is Stable, generation 1."""
        join = m.JoinGroupRequest(group_id="g", member_id="", client_id="c0", version=6,
                                  protocol_type=protocol_type,
                                  protocols=(m.JoinGroupProtocol("range", metadata),),
                                  session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
        first = self.send(join)
        assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
        mid = first.member_id
        self.send_parked(m.JoinGroupRequest(**{**join.__dict__, "member_id": mid}))
        self.now += 100
        out = self.c.advance(self.now)
        self.records.extend(out.records)
        joined = out.response_to(self.rid)
        assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
        sync = self.send(m.SyncGroupRequest(group_id="g", generation_id=joined.generation_id,
                                            member_id=mid, assignments=(m.SyncGroupAssignment(mid, b""),)))
        assert isinstance(sync, m.SyncGroupResponse) and sync.error is Error.NONE
        self.gen = joined.generation_id
        return mid

    def send_parked(self, req: m.Request) -> None:
        self.rid += 1
        out = self.c.handle(self.rid, req, self.now)
        self.records.extend(out.records)
        assert out.response_to(self.rid) is None


def _errors(resp: m.OffsetDeleteResponse) -> dict[tuple[str, int], Error]:
    return {(p.topic, p.partition): p.error for p in resp.partitions}


def test_empty_group_id_is_invalid_before_the_shard() -> None:
    # GroupCoordinatorService.deleteOffsets: isGroupIdNotEmpty (OffsetCommit accepts "")
    h = Harness()
    h.commit(("t", 0, 5), group="")
    resp = h.delete(("t", 0), group="")
    assert resp == m.OffsetDeleteResponse(error=Error.INVALID_GROUP_ID)
    assert h.last_records == []
    assert h.fetch(("t", 0), group="") == {("t", 0): 5}


def test_unknown_group_is_group_id_not_found_with_no_partitions() -> None:
    # GroupMetadataManager.group throws GroupIdNotFoundException; the service answers the
    # error alone (OffsetDeleteResponseData with the error code, no topics)
    h = Harness()
    resp = h.delete(("t", 0), group="nobody")
    assert resp == m.OffsetDeleteResponse(error=Error.GROUP_ID_NOT_FOUND)
    assert h.last_records == []


def test_simple_group_offsets_are_tombstoned_and_no_longer_fetched() -> None:
    # OffsetMetadataManager.deleteOffsets: NONE for every partition; a tombstone only for a
    # committed one (t-7 was never committed: NONE, nothing written)
    h = Harness()
    h.commit(("t", 0, 5), ("t", 1, 6), ("u", 0, 7))
    resp = h.delete(("t", 0), ("u", 0), ("t", 7))
    assert resp.error is Error.NONE
    assert _errors(resp) == {("t", 0): Error.NONE, ("u", 0): Error.NONE, ("t", 7): Error.NONE}
    assert h.last_records == [r.OffsetsDeleted("g", (("t", 0), ("u", 0)), "offset delete")]
    assert h.fetch(("t", 0), ("t", 1), ("u", 0)) == {("t", 0): -1, ("t", 1): 6, ("u", 0): -1}
    # the records alone rebuild the same offsets; a failover reloads them
    assert replay(h.records).groups["g"].offsets == h.c.state.groups["g"].offsets
    h.c.failover(h.now)
    assert h.fetch(("t", 0), ("t", 1), ("u", 0)) == {("t", 0): -1, ("t", 1): 6, ("u", 0): -1}


def test_tombstones_follow_the_request_once_per_naming() -> None:
    # OffsetMetadataManager.deleteOffsets walks the request in its order and asks
    # hasCommittedOffset of the state before the records apply: a partition named twice is
    # tombstoned twice, in the request's order (not the offsets maps' order)
    h = Harness()
    h.commit(("t", 0, 5), ("u", 0, 7))
    h.delete(("u", 0), ("t", 0), ("u", 0))
    assert h.last_records == [r.OffsetsDeleted("g", (("u", 0), ("t", 0), ("u", 0)), "offset delete")]
    assert h.fetch(("t", 0), ("u", 0)) == {("t", 0): -1, ("u", 0): -1}
    assert replay(h.records).groups["g"].offsets == h.c.state.groups["g"].offsets


def test_a_simple_group_left_without_offsets_survives_a_failover() -> None:
    # found by the Kafka-shard differential test: the log still holds the group's offset
    # commits (and their tombstones), and OffsetMetadataManager.replay recreates a simple
    # group for an offset commit record, so the reloaded coordinator has the group, Empty
    # and without offsets, until the offset-expiry check deletes it
    h = Harness()
    h.commit(("t", 0, 5))
    h.delete(("t", 0))
    h.c.failover(h.now)
    g = h.c.state.groups["g"]
    assert g.state.value == "Empty" and not g.offsets and g.persisted is None
    assert h.delete(("t", 0)).error is Error.NONE  # not GROUP_ID_NOT_FOUND
    h.c.failover(h.now)  # and again: the records are still in the log
    assert "g" in h.c.state.groups
    h.now += h.c.config.offsets_retention_check_interval_ms
    h.c.advance(h.now)
    assert "g" not in h.c.state.groups
    assert h.delete(("t", 0)).error is Error.GROUP_ID_NOT_FOUND


def test_nothing_committed_writes_nothing() -> None:
    h = Harness()
    h.commit(("t", 0, 5))
    resp = h.delete(("x", 3))
    assert _errors(resp) == {("x", 3): Error.NONE}
    assert h.last_records == []


def test_stable_consumer_group_keeps_subscribed_topics_and_deletes_the_others() -> None:
    # ClassicGroup.validateOffsetDelete lets a "consumer" group with members through;
    # isSubscribedToTopic answers from the topics its members subscribed to
    h = Harness()
    mid = h.stable_member()
    h.commit(("t", 0, 5), ("u", 0, 9), gen=h.gen, member=mid)
    resp = h.delete(("t", 0), ("u", 0))
    assert _errors(resp) == {("t", 0): Error.GROUP_SUBSCRIBED_TO_TOPIC, ("u", 0): Error.NONE}
    assert h.last_records == [r.OffsetsDeleted("g", (("u", 0),), "offset delete")]
    assert h.fetch(("t", 0), ("u", 0)) == {("t", 0): 5, ("u", 0): -1}


def test_group_with_members_of_another_protocol_type_is_non_empty_group() -> None:
    h = Harness()
    mid = h.stable_member(protocol_type="connect", metadata=b"opaque")
    h.commit(("t", 0, 5), gen=h.gen, member=mid)
    resp = h.delete(("t", 0))
    assert resp == m.OffsetDeleteResponse(error=Error.NON_EMPTY_GROUP)
    assert h.last_records == []
    assert h.fetch(("t", 0)) == {("t", 0): 5}


def test_undecodable_subscription_counts_as_subscribed_to_everything() -> None:
    # computeSubscribedTopics gives nothing when the metadata does not parse; a "consumer"
    # group then counts as subscribed to every topic
    h = Harness()
    mid = h.stable_member(metadata=b"\x00")
    assert h.c.state.groups["g"].subscribed_topics is None
    h.commit(("x", 0, 5), gen=h.gen, member=mid)
    resp = h.delete(("x", 0))
    assert _errors(resp) == {("x", 0): Error.GROUP_SUBSCRIBED_TO_TOPIC}


def test_subscribed_topics_are_those_of_the_last_generation() -> None:
    # ClassicGroup.subscribedTopics is computed when a generation starts: a member joining
    # with another subscription during the next rebalance does not change it before that
    # rebalance completes
    h = Harness()
    h.stable_member()
    join = m.JoinGroupRequest(group_id="g", member_id="", client_id="c1", version=6,
                              protocol_type="consumer",
                              protocols=(m.JoinGroupProtocol("range", Subscription(("u",)).encode()),),
                              session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
    first = h.send(join)
    assert isinstance(first, m.JoinGroupResponse)
    h.send_parked(m.JoinGroupRequest(**{**join.__dict__, "member_id": first.member_id}))
    assert h.c.state.groups["g"].state.value == "PreparingRebalance"
    resp = h.delete(("t", 0), ("u", 0))
    assert _errors(resp) == {("t", 0): Error.GROUP_SUBSCRIBED_TO_TOPIC, ("u", 0): Error.NONE}


def test_empty_group_after_its_members_left_deletes_everything() -> None:
    # the last member gone, the next generation has no member: its subscribed topics are
    # none (computeSubscribedTopics on an empty "consumer" group)
    h = Harness()
    mid = h.stable_member()
    h.commit(("t", 0, 5), gen=h.gen, member=mid)
    leave = h.send(m.LeaveGroupRequest(group_id="g", members=(m.MemberIdentity(mid),)))
    assert isinstance(leave, m.LeaveGroupResponse)
    assert h.c.state.groups["g"].state.value == "Empty"
    resp = h.delete(("t", 0))
    assert _errors(resp) == {("t", 0): Error.NONE}
    assert h.fetch(("t", 0)) == {("t", 0): -1}


FOO = TopicId(0x1111)


def test_consumer_group_keeps_subscribed_topics_whatever_its_state() -> None:
    # ConsumerGroup.validateOffsetDelete accepts every state; ModernGroup.isSubscribedToTopic
    h = Harness()
    h.c.set_topics([TopicMetadata(FOO, "foo", 2)])
    hb = h.send(ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m1", member_epoch=0, rebalance_timeout_ms=5000,
        subscribed_topic_names=("foo",), topic_partitions=()))
    assert isinstance(hb, ConsumerGroupHeartbeatResponse) and hb.error is Error.NONE
    commit = h.send(m.OffsetCommitRequest(
        group_id="g", generation_id=hb.member_epoch, member_id="m1", version=9,
        partitions=(m.OffsetCommitPartition("foo", 0, 3), m.OffsetCommitPartition("bar", 0, 4))))
    assert isinstance(commit, m.OffsetCommitResponse) and commit.errors() == {Error.NONE}
    resp = h.delete(("foo", 0), ("bar", 0))
    assert resp.error is Error.NONE
    assert _errors(resp) == {("foo", 0): Error.GROUP_SUBSCRIBED_TO_TOPIC, ("bar", 0): Error.NONE}
    assert h.last_records == [r.OffsetsDeleted("g", (("bar", 0),), "offset delete")]
    assert h.fetch(("foo", 0), ("bar", 0)) == {("foo", 0): 3, ("bar", 0): -1}
    assert replay(h.records).consumer_groups["g"].offsets == h.c.state.consumer_groups["g"].offsets

"""Disagreements with Kafka 4.1.2 found by the differential test against Kafka's own group
coordinator shard (tests/test_coordinator_kafka_jar.py), each fixed in the reference and
pinned here on the reference alone (no JVM needed). The same sequences run against Kafka in
tests/test_coordinator_kafka_jar.py::test_found_sequences_agree_with_kafka."""

from __future__ import annotations

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error

SUB = Subscription(("t",)).encode()


def _join(member_id: str = "", version: int = 6) -> m.JoinGroupRequest:
    return m.JoinGroupRequest(group_id="g", member_id=member_id, client_id="c0", version=version,
                              protocols=(m.JoinGroupProtocol("range", SUB),),
                              session_timeout_ms=10_000, rebalance_timeout_ms=20_000)


def test_sync_naming_a_protocol_while_the_group_has_none_is_rebalance_in_progress() -> None:
    # GroupMetadataManager.isProtocolInconsistent compares only when both the request and
    # the group carry a value: a group in its first join phase has no protocol name yet, so
    # a SyncGroup v5 naming any protocol is not INCONSISTENT_GROUP_PROTOCOL; it reaches the
    # state check and gets REBALANCE_IN_PROGRESS.
    coord = Coordinator(CoordinatorConfig(group_min_session_timeout_ms=1_000))
    first = coord.handle(1, _join(), 0).response_to(1)
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    coord.handle(2, _join(first.member_id), 0)  # parked: the initial delay runs
    sync = m.SyncGroupRequest(group_id="g", generation_id=0, member_id=first.member_id,
                              protocol_type=None, protocol_name="other")
    resp = coord.handle(3, sync, 100).response_to(3)
    assert isinstance(resp, m.SyncGroupResponse)
    assert resp.error is Error.REBALANCE_IN_PROGRESS


def _fetched_metadata(coord: Coordinator, rid: int, now: int) -> list[str | None]:
    fetch = coord.handle(rid, m.OffsetFetchRequest(group_id="g", partitions=(("t", 0),)), now).response_to(rid)
    assert isinstance(fetch, m.OffsetFetchResponse) and fetch.error is Error.NONE
    return [p.metadata for p in fetch.partitions]


def test_a_commit_without_metadata_is_fetched_with_empty_metadata() -> None:
    # OffsetAndMetadata.fromRequest stores a partition's null committed metadata as ""
    # (NO_METADATA); OffsetFetch then answers "" for it, never null
    coord = Coordinator(CoordinatorConfig(group_min_session_timeout_ms=1_000))
    commit = m.OffsetCommitRequest(group_id="g", generation_id=-1, member_id="", version=8,
                                   partitions=(m.OffsetCommitPartition("t", 0, 5, None),))
    coord.handle(1, commit, 0)
    assert _fetched_metadata(coord, 2, 0) == [""]


def test_a_members_commit_without_metadata_is_fetched_with_empty_metadata() -> None:
    # the same through a current member's commit (the fast path when it is enabled)
    coord = Coordinator(CoordinatorConfig(group_min_session_timeout_ms=1_000,
                                          group_initial_rebalance_delay_ms=100))
    first = coord.handle(1, _join(), 0).response_to(1)
    assert isinstance(first, m.JoinGroupResponse)
    coord.handle(2, _join(first.member_id), 0)  # parked for the initial delay
    joined = coord.advance(100).response_to(2)
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    mid, gen = joined.member_id, joined.generation_id
    sync = m.SyncGroupRequest(group_id="g", generation_id=gen, member_id=mid,
                              assignments=((m.SyncGroupAssignment(mid, b""),)))
    coord.handle(3, sync, 100)
    commit = m.OffsetCommitRequest(group_id="g", generation_id=gen, member_id=mid, version=8,
                                   partitions=(m.OffsetCommitPartition("t", 0, 5, None),))
    resp = coord.handle(4, commit, 100).response_to(4)
    assert isinstance(resp, m.OffsetCommitResponse) and resp.partitions[0].error is Error.NONE
    assert _fetched_metadata(coord, 5, 100) == [""]

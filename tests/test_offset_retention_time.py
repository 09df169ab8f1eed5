"""OffsetCommit v2-v4's retention time: an expire timestamp kept with the committed offsets.

Kafka 4.1.2 (group-coordinator): OffsetMetadataManager.commitOffset stores now plus the
request's retentionTimeMs as each offset's expireTimestampMs (expireTimestampMs: none for
the default -1, a Java long sum otherwise), OffsetExpirationConditionImpl.isOffsetExpired
expires an offset that has one at it and the others offsets.retention.ms after the group's
base timestamp, the OffsetCommitValue record keeps it (-1 for none) and
OffsetAndMetadata.fromRecord reads it back (Utils.ofSentinel: -1 is none). Whether an offset
is looked at at all stays the group's condition (ClassicGroup/ConsumerGroup
.offsetExpirationCondition, isSubscribedToTopic). A real Kafka 4.1.2 answered the recording
examples/conformance/wire/offset-retention-time-kafka-4.1.2.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.validate import validate_bytes, validate_path
from tests.test_coordinator_kafka_offsets import Context

ROOT = Path(__file__).resolve().parent.parent

#: a real Kafka 4.1.2 recording (2026-11-29; offsets.retention.check.interval.ms=1000, the
#: broker's retention 7 days): simple-group commits of rt-t 0-5 on one connection, raw wire
#: requests: v2 retention 4000 (line 6), v3 none (-1, line 7), v4 retention 0 (line 8), v2
#: retention Long.MAX_VALUE (line 9: the sum wraps to a time long past), v4 retention -7
#: (line 10), v8 (line 11, no field); OffsetFetch of all at once (line 12), 2 s later (line
#: 13: 2, 3 and 4 expired), 3.5 s later (line 14: 0 expired too); v3 retention 1500 of 0
#: (line 15) replaced at once by a v8 commit (line 16, no expire timestamp any more); 3 s
#: later a fetch of 0, 1 and 5 (line 17: all kept).
RECORDING = ROOT / "examples" / "conformance" / "wire" / "offset-retention-time-kafka-4.1.2.jsonl"


def _answers(changes: dict[int, list[tuple[int, int]]]) -> bytes:
    """The recording with the OffsetFetch answers of the given lines replaced by these
    (partition, offset) pairs."""
    events = [json.loads(x) for x in RECORDING.read_text(encoding="utf-8").splitlines()]
    for line, parts in changes.items():
        events[line - 1]["response"]["partitions"] = [
            {"topic": "rt-t", "partition": p, "committed_offset": o, "metadata": "m", "error": "NONE"}
            for p, o in parts]
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def _named(raw: bytes) -> list[tuple[int, str]]:
    return [(d.line, d.rule) for g in validate_bytes(raw).groups for d in g.divergences if d.side == "broker"]


def test_kafka_expires_offsets_at_their_retention_time_and_a_broker_that_does_not_is_named() -> None:
    assert [g.verdict for g in validate_path(RECORDING).groups] == ["conforming"]
    before = [(5, 60), (0, 10), (2, 30), (4, 50), (1, 20), (3, 40)]
    # a broker that ignores the retention time (keeps 2, 3 and 4 at line 13)
    assert _named(_answers({13: before})) == [(13, "FetchReturnsCommitted")]
    # one that expires partition 0 before its 4 s
    assert _named(_answers({13: [(5, 60), (1, 20)]})) == [(13, "FetchReturnsCommitted")]
    # one that keeps partition 0 past them
    assert _named(_answers({14: [(5, 60), (0, 10), (1, 20)]})) == [(14, "FetchReturnsCommitted")]
    # one that keeps the expire timestamp of a commit a later commit without one replaced
    assert _named(_answers({17: [(0, -1), (1, 20), (5, 60)]})) == [(17, "FetchReturnsCommitted")]


def _commit(c: Coordinator, rid: int, at: int, partition: int, retention: int, version: int = 2,
            group: str = "g", member: str = "", generation: int = -1) -> list[r.OffsetCommitted]:
    out = c.handle(rid, m.OffsetCommitRequest(
        group_id=group, member_id=member, generation_id=generation, version=version, retention_time_ms=retention,
        partitions=(m.OffsetCommitPartition("t", partition, 10 + partition),)), at)
    resp = out.response_to(rid)
    assert isinstance(resp, m.OffsetCommitResponse) and resp.errors() == {Error.NONE}
    return [x for x in out.records if isinstance(x, r.OffsetCommitted)]


def _deleted(c: Coordinator, upto: int) -> list[tuple[str, int]]:
    return [tp for x in c.advance(upto).records if isinstance(x, r.OffsetsDeleted) for tp in x.partitions]


def test_an_expire_timestamp_is_now_plus_the_retention_time_as_java_adds_longs() -> None:
    now = 1_795_950_999_000  # (the checks fall on whole seconds)
    c = Coordinator(CoordinatorConfig(offsets_retention_check_interval_ms=1000))
    c.advance(now)
    expected = {0: now + 4000, 1: None, 2: now, 3: now + 2**63 - 1 - 2**64, 4: now - 7}
    for p, retention in ((0, 4000), (1, -1), (2, 0), (3, 2**63 - 1), (4, -7)):
        [rec] = _commit(c, 1 + p, now, p, retention, version=(2, 3, 4)[p % 3])
        assert rec.expire_timestamp_ms == expected[p]
        assert c.state.groups["g"].offsets[("t", p)].expire_timestamp_ms == expected[p]
    # versions without the field carry none: the broker's retention
    [rec] = _commit(c, 9, now, 5, -1, version=8)
    assert rec.expire_timestamp_ms is None
    # the next check expires the three whose time has come
    assert sorted(_deleted(c, now + 1000)) == [("t", 2), ("t", 3), ("t", 4)]
    assert _deleted(c, now + 3999) == []
    assert _deleted(c, now + 4000) == [("t", 0)]
    # a commit without a retention time replaces the offset's expire timestamp with none
    _commit(c, 10, now + 4000, 0, 1500, version=3)
    _commit(c, 11, now + 4000, 0, -1, version=8)
    assert c.state.groups["g"].offsets[("t", 0)].expire_timestamp_ms is None
    assert _deleted(c, now + 60_000) == []


def _stable_group(c: Coordinator, topics: tuple[str, ...]) -> tuple[str, int]:
    """A classic consumer group of one member subscribed to ``topics``, Stable at 0."""
    meta = Subscription(topics).encode()
    c.handle(1, m.JoinGroupRequest(group_id="cg", member_id="", protocol_type="consumer",
                                   protocols=(m.JoinGroupProtocol("range", meta),), version=3), 0)
    out = c.advance(0)
    member = c.state.groups["cg"].leader_id
    assert member is not None
    gen = c.state.groups["cg"].generation_id
    out = c.handle(2, m.SyncGroupRequest(group_id="cg", generation_id=gen, member_id=member,
                                         assignments=(m.SyncGroupAssignment(member, b""),)), 0)
    assert out.response_to(2) is not None
    return member, gen


def test_a_classic_group_looks_at_an_expire_timestamp_only_where_its_condition_looks() -> None:
    # ClassicGroup.offsetExpirationCondition: Stable, only the topics it does not subscribe
    # to; Empty, every offset (base: when it became Empty, unless the offset has its own)
    c = Coordinator(CoordinatorConfig(offsets_retention_ms=100_000, offsets_retention_check_interval_ms=1000,
                                      group_initial_rebalance_delay_ms=0))
    member, gen = _stable_group(c, ("t",))
    assert c.state.groups["cg"].state.name == "Stable"
    c.handle(3, m.OffsetCommitRequest(group_id="cg", member_id=member, generation_id=gen, version=2,
                                      retention_time_ms=500, partitions=(
                                          m.OffsetCommitPartition("t", 0, 1), m.OffsetCommitPartition("u", 0, 2))), 0)
    # u is not subscribed: expired at 500 (checked at 1000); t is subscribed: kept
    assert _deleted(c, 1000) == [("u", 0)]
    c.handle(4, m.HeartbeatRequest(group_id="cg", generation_id=gen, member_id=member), 5000)
    assert _deleted(c, 5000) == []
    # the member leaves at 6000: Empty, and t's own timestamp (500) is long past
    c.handle(5, m.LeaveGroupRequest(group_id="cg", members=(m.MemberIdentity(member),)), 6000)
    assert c.state.groups["cg"].state.name == "Empty"
    out = c.advance(7000)
    assert [x for x in out.records if isinstance(x, r.OffsetsDeleted)] == [
        r.OffsetsDeleted("cg", (("t", 0),), "retention")]
    # with no offset left, the Empty group is deleted by the same check
    assert "cg" not in c.state.groups


def test_a_consumer_group_expires_an_unsubscribed_offset_at_its_expire_timestamp() -> None:
    # ConsumerGroup.offsetExpirationCondition (the commit timestamp, unless the offset has
    # its own); an admin's generation-less commit to the empty group (v2, retention 300)
    ctx = Context(offsets_retention_ms=100_000, offsets_retention_check_interval_ms=1000)
    ctx.consumer_group("foo")
    ctx.commit(group_id="foo", version=2, retention_time_ms=300,
               partitions=(m.OffsetCommitPartition("bar", 0, 100),))
    assert ctx.coordinator.state.consumer_groups["foo"].offsets[("bar", 0)].expire_timestamp_ms == 300
    assert _deleted(ctx.coordinator, 1000) == [("bar", 0)]


def test_a_reload_keeps_each_expire_timestamp_as_the_log_holds_it() -> None:
    now = 10_000
    c = Coordinator(CoordinatorConfig(offsets_retention_check_interval_ms=1000))
    c.advance(now)
    _commit(c, 1, now, 0, 5000)
    _commit(c, 2, now, 1, -1)
    # a retention making the sum -1: an expire timestamp in memory (expired at the next
    # check), the log's "none" after a reload (OffsetAndMetadata.fromRecord, ofSentinel)
    _commit(c, 3, now, 2, -1 - now)
    assert c.state.groups["g"].offsets[("t", 2)].expire_timestamp_ms == -1
    out = c.failover(now)
    [loaded] = [x for x in out.records if isinstance(x, r.GroupLoaded)]
    assert loaded.expire_timestamps == (("t", 0, 15_000), ("t", 2, -1))
    offsets = c.state.groups["g"].offsets
    assert [offsets[("t", p)].expire_timestamp_ms for p in range(3)] == [15_000, None, None]
    assert _deleted(c, 15_000) == [("t", 0)]

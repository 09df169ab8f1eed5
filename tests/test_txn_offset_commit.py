"""TxnOffsetCommit (KIP-447): the group's check of a transactional producer's offset commit.

A transactional producer commits a consumer's offsets in its transaction with TxnOffsetCommit,
naming the consumer's group metadata (member id, generation, group.instance.id): the group
coordinator refuses it when they are not the group's (a zombie producer of an earlier
generation is fenced), before the transaction is involved. Ported from Apache Kafka 4.1.2
(OffsetMetadataManagerTest's transactional commit tests, GroupCoordinatorServiceTest's
group id and not-started tests), with the rules of OffsetMetadataManager.
validateTransactionalOffsetCommit / commitTransactionalOffset, ClassicGroup.
validateOffsetCommit and ConsumerGroup.validateOffsetCommit (``isTransactional``), then the
validator: a broker answering a TxnOffsetCommit as Kafka would not is named; an answer from
the transaction's verification (transactions are not modelled) is not judged.

Kafka's tests also assert the OffsetCommit record the commit writes in the producer's
transaction: here an OffsetCommitted record with the producer id, a pending offset that no
OffsetFetch sees (the transaction's marker, not on the group protocol's wire, is not
modelled: docs/deviations.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.validate import CONFORMING, INCONCLUSIVE, VIOLATION, validate_path
from groupspec.validate.verdict import GroupVerdict
from tests.test_coordinator_kafka_offsets import Context
from tests.test_validate_offset_delete import Broker, commit, fetch, stable_member, verdict

INVALID_PRODUCER_EPOCH = 47


def txn_commit(group_id: str = "foo", member_id: str = "member", generation_id: int = 10,
               instance_id: str | None = None, metadata: str | None = "metadata",
               partitions: tuple[tuple[str, int], ...] = (("bar", 0),)) -> m.TxnOffsetCommitRequest:
    return m.TxnOffsetCommitRequest(
        group_id=group_id, transactional_id="transactional-id", producer_id=1, producer_epoch=0,
        generation_id=generation_id, member_id=member_id, group_instance_id=instance_id,
        partitions=tuple(m.TxnOffsetCommitPartition(t, p, 100, metadata, 10) for t, p in partitions))


def answered(*codes: tuple[str, int, Error | int]) -> m.TxnOffsetCommitResponse:
    return m.TxnOffsetCommitResponse(partitions=tuple(
        m.TxnOffsetCommitPartitionResponse(t, p, e.code if isinstance(e, Error) else e) for t, p, e in codes))


def handle(c: Coordinator, req: m.Request, at: int = 0) -> tuple[m.Response, list[object]]:
    out = c.handle(1, req, at)
    resp = out.response_to(1)
    assert resp is not None
    return resp, list(out.records)


def nothing_committed(c: Coordinator, group_id: str = "foo") -> None:
    resp, _ = handle(c, m.OffsetFetchRequest(group_id=group_id, partitions=(("bar", 0),)), c._last_now_ms)
    assert isinstance(resp, m.OffsetFetchResponse)
    assert [p.committed_offset for p in resp.partitions] == [-1]


# ===================================================================== OffsetMetadataManagerTest
def test_generic_group_transactional_offset_commit() -> None:
    """testGenericGroupTransactionalOffsetCommit: a Stable group's member at its generation
    is answered NONE; the offset is written in the transaction, pending."""
    b = Broker()
    member, generation = stable_member(b)
    assert generation == 1
    resp, records = handle(b.c, txn_commit("g", member, 1), 3100)
    assert resp == answered(("bar", 0, Error.NONE))
    # newOffsetCommitRecord(foo, bar, 0, OffsetAndMetadata(100, leader epoch 10, "metadata",
    # now, no expire timestamp)), written in producer 1's transaction
    assert records == [r.OffsetCommitted("g", "bar", 0, 100, "metadata", 3100, 1, member, 10, None, producer_id=1)]
    nothing_committed(b.c, "g")
    assert b.c.state.pending_offsets["g"][("bar", 0)][1].committed_offset == 100


def test_generic_group_transactional_offset_commit_with_unknown_group_id() -> None:
    """testGenericGroupTransactionalOffsetCommitWithUnknownGroupId: a generation for a group
    that does not exist is ILLEGAL_GENERATION (whatever the version: unlike OffsetCommit,
    TxnOffsetCommit never answers GROUP_ID_NOT_FOUND), and no group is created."""
    c = Coordinator()
    resp, records = handle(c, txn_commit())
    assert resp == answered(("bar", 0, Error.ILLEGAL_GENERATION))
    assert records == [] and "foo" not in c.state.groups


def test_generic_group_transactional_offset_commit_with_unknown_member_id() -> None:
    """testGenericGroupTransactionalOffsetCommitWithUnknownMemberId: an Empty group (made by
    a generation-less commit, as getOrMaybeCreateClassicGroup makes it) does not know the
    member: UNKNOWN_MEMBER_ID."""
    c = Coordinator()
    first, _ = handle(c, txn_commit(member_id="", generation_id=-1))
    assert first == answered(("bar", 0, Error.NONE))
    assert c.state.groups["foo"].state is GroupState.Empty
    resp, records = handle(c, txn_commit())
    assert resp == answered(("bar", 0, Error.UNKNOWN_MEMBER_ID))
    assert records == []


def test_generic_group_transactional_offset_commit_with_illegal_generation_id() -> None:
    """testGenericGroupTransactionalOffsetCommitWithIllegalGenerationId: the member, at
    another generation than the group's: ILLEGAL_GENERATION (the zombie producer)."""
    b = Broker()
    member, _ = stable_member(b)
    resp, records = handle(b.c, txn_commit("g", member, 100), 3100)
    assert resp == answered(("bar", 0, Error.ILLEGAL_GENERATION))
    assert records == []


def test_consumer_group_transactional_offset_commit() -> None:
    """testConsumerGroupTransactionalOffsetCommit: a member at its member epoch."""
    ctx = Context()
    ctx.consumer_group("foo")
    ctx.member("foo", "member", 10, 10)
    resp, records = ctx.send(txn_commit())
    assert resp == answered(("bar", 0, Error.NONE))
    assert records == [r.OffsetCommitted("foo", "bar", 0, 100, "metadata", 0, 10, "member", 10, None, producer_id=1)]
    nothing_committed(ctx.coordinator)


def test_consumer_group_transactional_offset_commit_with_unknown_group_id() -> None:
    """testConsumerGroupTransactionalOffsetCommitWithUnknownGroupId"""
    ctx = Context()
    resp, records = ctx.send(txn_commit())
    assert resp == answered(("bar", 0, Error.ILLEGAL_GENERATION))
    assert records == []


def test_consumer_group_transactional_offset_commit_with_unknown_member_id() -> None:
    """testConsumerGroupTransactionalOffsetCommitWithUnknownMemberId"""
    ctx = Context()
    ctx.consumer_group("foo")
    resp, records = ctx.send(txn_commit())
    assert resp == answered(("bar", 0, Error.UNKNOWN_MEMBER_ID))
    assert records == []


def test_consumer_group_transactional_offset_commit_with_stale_member_epoch() -> None:
    """testConsumerGroupTransactionalOffsetCommitWithStaleMemberEpoch: the STALE_MEMBER_EPOCH
    an OffsetCommit would get is ILLEGAL_GENERATION for a transactional commit, for a
    consumer-protocol member as for a classic one."""
    for classic in (False, True):
        ctx = Context()
        ctx.consumer_group("foo")
        ctx.member("foo", "member", 10, 10, classic=classic)
        for epoch in (9, 100):
            resp, records = ctx.send(txn_commit(generation_id=epoch))
            assert resp == answered(("bar", 0, Error.ILLEGAL_GENERATION))
            assert records == []


# =================================================================== GroupCoordinatorServiceTest
def test_commit_transactional_offsets_with_invalid_group_id() -> None:
    """testCommitTransactionalOffsetsWithInvalidGroupId: the empty group id (Kafka's test
    also sends a null one, which the wire cannot carry) is INVALID_GROUP_ID for every
    partition, before any shard (unlike OffsetCommit, which takes "" as a group)."""
    c = Coordinator()
    resp, records = handle(c, txn_commit(group_id="", member_id="member-id"))
    assert resp == answered(("bar", 0, Error.INVALID_GROUP_ID))
    assert records == [] and "" not in c.state.groups


def test_commit_transactional_offsets_when_not_started() -> None:
    """testCommitTransactionalOffsetsWhenNotStarted"""
    c = Coordinator()
    c.active = False
    resp, records = handle(c, txn_commit(member_id="member-id"))
    assert resp == answered(("bar", 0, Error.COORDINATOR_NOT_AVAILABLE))
    assert records == []


# ====================================================== the rules the Kafka tests do not reach
def test_a_simple_group_is_created_for_a_generation_less_commit() -> None:
    c = Coordinator()
    resp, records = handle(c, txn_commit(member_id="", generation_id=-1), 5)
    assert resp == answered(("bar", 0, Error.NONE))
    assert [type(x).__name__ for x in records] == ["GroupCreated", "OffsetCommitted"]
    assert c.state.groups["foo"].protocol_type is None


def test_the_group_state_is_not_enforced_for_transactions() -> None:
    """ClassicGroup.validateOffsetCommit with isTransactional: between JoinGroup and
    SyncGroup a member at the new generation commits (an OffsetCommit is
    REBALANCE_IN_PROGRESS), and a commit naming no member, generation or instance is
    accepted by an active group (an OffsetCommit is UNKNOWN_MEMBER_ID)."""
    b = Broker()
    join = m.JoinGroupRequest(group_id="g", member_id="", client_id="c1", version=3, protocol_type="consumer",
                              protocols=(m.JoinGroupProtocol("range", b""),),
                              session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
    rid = b.send(join, 10)
    b.advance(3011)
    joined = b.answer(rid)
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    assert b.c.state.groups["g"].state is GroupState.CompletingRebalance
    plain = b.answer(commit(b, 3020, ("bar", 0, 5), gen=joined.generation_id, member=joined.member_id))
    assert plain == m.OffsetCommitResponse(partitions=(
        m.OffsetCommitPartitionResponse("bar", 0, Error.REBALANCE_IN_PROGRESS),))
    resp, _ = handle(b.c, txn_commit("g", joined.member_id, joined.generation_id), 3021)
    assert resp == answered(("bar", 0, Error.NONE))
    anonymous, _ = handle(b.c, txn_commit("g", "", -1), 3022)
    assert anonymous == answered(("bar", 0, Error.NONE))
    plain = b.answer(commit(b, 3023, ("bar", 0, 5)))
    assert plain == m.OffsetCommitResponse(partitions=(
        m.OffsetCommitPartitionResponse("bar", 0, Error.UNKNOWN_MEMBER_ID),))


def test_a_static_members_instance_fences_another_member_id() -> None:
    """A commit naming a static member's group.instance.id with another member id is
    FENCED_INSTANCE_ID (ClassicGroup.validateMember), as an OffsetCommit would be."""
    b = Broker()
    join = m.JoinGroupRequest(group_id="g", member_id="", client_id="c1", version=5, group_instance_id="i-1",
                              protocol_type="consumer", protocols=(m.JoinGroupProtocol("range", b""),),
                              session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
    rid = b.send(join, 10)
    b.advance(3011)
    joined = b.answer(rid)
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    resp, _ = handle(b.c, txn_commit("g", "someone-else", joined.generation_id, instance_id="i-1"), 3100)
    assert resp == answered(("bar", 0, Error.FENCED_INSTANCE_ID))
    resp, _ = handle(b.c, txn_commit("g", joined.member_id, joined.generation_id, instance_id="i-1"), 3101)
    assert resp == answered(("bar", 0, Error.NONE))


def test_too_long_metadata_and_no_heartbeat() -> None:
    """Each partition's metadata is checked as OffsetCommit's (OFFSET_METADATA_TOO_LARGE,
    the others NONE); and unlike OffsetCommit, a transactional commit does not count as the
    member's heartbeat (commitTransactionalOffset does not reschedule it)."""
    b = Broker()
    member, generation = stable_member(b)
    long = "x" * (b.c.config.offset_metadata_max_bytes + 1)
    req = m.TxnOffsetCommitRequest(group_id="g", generation_id=generation, member_id=member, partitions=(
        m.TxnOffsetCommitPartition("bar", 0, 1, long), m.TxnOffsetCommitPartition("bar", 1, 1, "ok")))
    resp, _ = handle(b.c, req, 3100)
    assert resp == answered(("bar", 0, Error.OFFSET_METADATA_TOO_LARGE), ("bar", 1, Error.NONE))
    for at in range(4000, 13_000, 1000):
        handle(b.c, txn_commit("g", member, generation), at)
    b.c.advance(13_100)  # the session (10 s) ran from the SyncGroup at 3020 ms
    assert member not in b.c.state.groups["g"].members


# ==================================================================== the validator
def _zombie(b: Broker) -> int:
    """Generation 1's member commits transactionally with generation 0 (a zombie)."""
    member, _ = stable_member(b)
    return b.send(txn_commit("g", member, 0, partitions=(("t", 0),)), 3100, conn="producer")


def test_a_broker_accepting_a_zombie_producer_is_named() -> None:
    b = Broker()
    z = _zombie(b)
    assert b.answer(z) == answered(("t", 0, Error.ILLEGAL_GENERATION))
    assert verdict(b).verdict == CONFORMING
    b.inject[z] = answered(("t", 0, Error.NONE))
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    v = g.violation
    assert (v.api, v.rule) == ("TxnOffsetCommit", "TxnCommitGenerationCheck"), v
    assert "OffsetMetadataManager.java" in v.kafka_source
    assert v.broker_answered == "TxnOffsetCommit NONE"


def test_a_refusal_kafka_would_not_give_is_named() -> None:
    b = Broker()
    member, _ = stable_member(b)
    ok = b.send(txn_commit("g", member, 1, partitions=(("t", 0),)), 3100, conn="producer")
    assert b.answer(ok) == answered(("t", 0, Error.NONE))
    b.inject[ok] = answered(("t", 0, Error.ILLEGAL_GENERATION))
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "TxnCommitAccepted"


def test_the_transactions_own_refusal_is_not_judged() -> None:
    # the transaction's verification refused it before the group saw it: whatever the group
    # would have answered (here ILLEGAL_GENERATION), the broker's answer stands
    b = Broker()
    z = _zombie(b)
    b.inject[z] = answered(("t", 0, INVALID_PRODUCER_EPOCH))
    assert verdict(b).verdict == CONFORMING
    # an error of neither the group nor the transaction is judged
    b.inject[z] = answered(("t", 0, Error.REBALANCE_IN_PROGRESS))
    assert verdict(b).verdict == VIOLATION


def test_partitions_the_api_layer_answered_are_not_judged() -> None:
    # KafkaApis.handleTxnOffsetCommitRequest answers an unknown topic's partitions itself;
    # when none is left the group is not asked (an unknown group is then not an error)
    b = Broker()
    member, _ = stable_member(b)
    rid = b.send(txn_commit("g", member, 1, partitions=(("t", 0), ("gone", 0))), 3100, conn="producer")
    b.inject[rid] = answered(("t", 0, Error.NONE), ("gone", 0, Error.UNKNOWN_TOPIC_OR_PARTITION))
    assert verdict(b).verdict == CONFORMING
    b2 = Broker()
    rid2 = b2.send(txn_commit("g", "m", 5, partitions=(("gone", 0),)), 100, conn="producer")
    assert b2.answer(rid2) == answered(("gone", 0, Error.ILLEGAL_GENERATION))
    b2.inject[rid2] = answered(("gone", 0, Error.UNKNOWN_TOPIC_OR_PARTITION))
    fetch(b2, 200, ("t", 0))
    assert verdict(b2).verdict == CONFORMING


# ====================================================== a real recording (Kafka 4.1.2)
RECORDING = (Path(__file__).resolve().parent.parent / "examples" / "conformance" / "kafka-4.1.2"
             / "eos-zombie-producer--confluent-kafka.jsonl")


#: the same run with the KIP-848 protocol (group.protocol=consumer): the zombie's member
#: epoch is stale, and Kafka answers ILLEGAL_GENERATION, not STALE_MEMBER_EPOCH
RECORDING_848 = RECORDING.with_name("eos-zombie-producer--confluent-kafka-consumer-protocol.jsonl")


def _recording_lines(path: Path = RECORDING) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _validated(lines: list[dict[str, Any]], tmp_path: Path) -> GroupVerdict:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    report = validate_path(path)
    [g] = report.groups
    return g


@pytest.mark.parametrize("path", [RECORDING, RECORDING_848], ids=["classic", "consumer-protocol"])
def test_a_real_exactly_once_loop_with_a_zombie_producer_conforms(path: Path, tmp_path: Path) -> None:
    """confluent-kafka 2.16.1 against Kafka 4.1.2: three transactional commits accepted, the
    zombie's (the generation before a second consumer joined) refused ILLEGAL_GENERATION,
    every one replayed; the transactional producers' coordinator lookups (FindCoordinator
    key type 1) name no group."""
    lines = _recording_lines(path)
    txn = [x for x in lines if x.get("api") == "TxnOffsetCommit"]
    codes = [[p["error_code"] for p in x["response"]["partitions"]] for x in txn]
    assert codes == [[0], [0], [Error.ILLEGAL_GENERATION.code], [0]]
    g = _validated(lines, tmp_path)
    assert (g.group_id, g.verdict) == ("eos-g", CONFORMING), g
    assert g.exchanges == sum(1 for x in lines if x.get("group_id") == "eos-g" and x.get("api") in
                              {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit",
                               "OffsetFetch", "TxnOffsetCommit", "ConsumerGroupHeartbeat"})
    # the refused commit wrote nothing: only the accepted ones leave fetches open
    noted = [n for n in g.notes if "TxnOffsetCommit" in n]
    assert len(noted) == 3 and not any(f"line {lines.index(txn[2]) + 1}:" in n for n in noted), noted


@pytest.mark.parametrize("path", [RECORDING, RECORDING_848], ids=["classic", "consumer-protocol"])
def test_the_recording_with_the_zombie_accepted_names_the_broker(path: Path, tmp_path: Path) -> None:
    lines = _recording_lines(path)
    zombie = next(x for x in lines if x.get("api") == "TxnOffsetCommit"
                  and x["response"]["partitions"][0]["error_code"] != 0)
    zombie["response"]["partitions"][0]["error_code"] = 0
    g = _validated(lines, tmp_path)
    assert g.verdict == VIOLATION and g.violation is not None
    v = g.violation
    assert (v.api, v.rule, v.side) == ("TxnOffsetCommit", "TxnCommitGenerationCheck", "broker"), v
    assert "in-0: answered NONE, Kafka ILLEGAL_GENERATION" in v.detail


def test_an_older_recorders_transactional_lookups_are_no_groups(tmp_path: Path) -> None:
    """A recorder before the rule wrote a FindCoordinator of a transactional id (key type 1)
    with the id as its group: the validator does not make a group of it."""
    lines = _recording_lines()
    lookups = [x for x in lines if x.get("api") == "FindCoordinator" and x["request"]["key_type"] == 1]
    assert lookups and all(x["group_id"] == "" for x in lookups)
    for x in lookups:
        x["group_id"] = x["request"]["key"]
    g = _validated(lines, tmp_path)
    assert (g.group_id, g.verdict) == ("eos-g", CONFORMING)


def test_a_transactional_coordinator_lookup_names_no_group() -> None:
    # what the recorder writes as an exchange's group (trace.events.request_group_id)
    from groupspec.trace.events import request_group_id

    assert request_group_id(m.FindCoordinatorRequest(key="tx-eos", key_type=1)) == ""
    assert request_group_id(m.FindCoordinatorRequest(key="eos-g")) == "eos-g"


TANSU = (Path(__file__).resolve().parent.parent / "examples" / "conformance"
         / "tansu-eos-zombie-producer--confluent-kafka.jsonl")


def test_tansu_accepting_the_zombie_producer_is_named() -> None:
    """The same client run (eos-zombie-producer--confluent-kafka.py) against Tansu 0.6.0
    (2026-11-29): Tansu numbers the first generation 0 (GenerationStartsAtOne) and accepts
    the zombie's TxnOffsetCommit, which Kafka refuses. With the broker's numbering adopted,
    the transactional commits of the current generation are not divergences, and the
    zombie's is named, decisive, at its own line."""
    lines = [json.loads(x) for x in TANSU.read_text(encoding="utf-8").splitlines()]
    txn_lines = [i + 1 for i, x in enumerate(lines) if x.get("api") == "TxnOffsetCommit"]
    assert len(txn_lines) == 4
    report = validate_path(TANSU)
    [g] = report.groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "GenerationStartsAtOne"
    named = {(d.line, d.rule) for d in g.divergences}
    assert (txn_lines[2], "TxnCommitGenerationCheck") in named, named
    assert not any(line in (txn_lines[0], txn_lines[1], txn_lines[3]) for line, _ in named), named
    zombie = next(d for d in g.divergences if d.line == txn_lines[2])
    assert zombie.side == "broker" and zombie.definite and zombie.consequence_of is None, zombie


def test_a_require_stable_fetch_of_a_pending_offset() -> None:
    """The reference keeps a TxnOffsetCommit's offset pending (its marker is not on the
    wire) and answers a require_stable fetch UNSTABLE_OFFSET_COMMIT for it, as Kafka does
    until the marker. A broker answering so, or with the transaction's offset (committed
    since), conforms; the earlier offset (an abort) leaves the group undecided, naming the
    TxnOffsetCommit; a plain fetch does not see the pending offset."""
    b = Broker()
    commit(b, 1000, ("t", 0, 5))
    b.send(m.TxnOffsetCommitRequest(group_id="g", transactional_id="tx", producer_id=3, producer_epoch=0,
                                    partitions=(m.TxnOffsetCommitPartition("t", 0, 50, ""),)), 1100)
    stable = b.send(m.OffsetFetchRequest(group_id="g", partitions=(("t", 0),), require_stable=True), 1200)
    assert b.answer(stable) == m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, -1, "", Error.UNSTABLE_OFFSET_COMMIT),))
    plain = b.send(m.OffsetFetchRequest(group_id="g", partitions=(("t", 0),)), 1300)
    assert [p.committed_offset for p in b.answer(plain).partitions] == [5]  # type: ignore[union-attr]
    assert verdict(b).verdict == CONFORMING
    b.inject[stable] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 50, "", Error.NONE),))
    assert verdict(b).verdict == CONFORMING
    b.inject[stable] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 5, "", Error.NONE),))
    g = verdict(b)
    assert g.verdict == INCONCLUSIVE, g
    assert any("TxnOffsetCommit at line(s)" in x.what for x in g.missing), g.missing


# ========================================= OffsetMetadataManagerTest: pending offsets
def _txn_record(group_id: str, topic: str, partition: int, offset: int, producer_id: int,
                at: int = 0) -> r.OffsetCommitted:
    """context.commitOffset(producerId, ...) / verifyTransactionalReplay: the record a
    transactional commit writes."""
    return r.OffsetCommitted(group_id, topic, partition, offset, "small", at, -1, "", producer_id=producer_id)


def _pending(ctx: Context, group_id: str, topic: str, partition: int) -> dict[int, int]:
    by_producer = ctx.coordinator.state.pending_offsets.get(group_id, {}).get((topic, partition), {})
    return {pid: c.committed_offset for pid, c in by_producer.items()}


def test_transactional_replay() -> None:
    """testTransactionalReplay: each record with a producer id is pending for that producer
    (by group, topic and partition), and no offset is committed."""
    ctx = Context()
    ctx.replay(r.GroupCreated("foo", 0), r.GroupCreated("bar", 0))
    for pid, gid, topic, partition, offset in ((5, "foo", "bar", 0, 100), (5, "foo", "bar", 1, 101),
                                               (5, "bar", "zar", 0, 100), (5, "bar", "zar", 1, 101),
                                               (6, "foo", "bar", 2, 102), (6, "foo", "bar", 3, 102)):
        ctx.replay(_txn_record(gid, topic, partition, offset, pid))
        assert _pending(ctx, gid, topic, partition) == {pid: offset}
        assert not ctx.has_offset(gid, topic, partition)


def test_replay_with_tombstone_and_pending_transactional_offsets() -> None:
    """testReplayWithTombstoneAndPendingTransactionalOffsets: a tombstone drops the
    partition's committed offset and its pending ones."""
    ctx = Context()
    ctx.replay(r.GroupCreated("foo", 0),
               r.OffsetCommitted("foo", "bar", 0, 100, "small", 0, -1, ""),
               _txn_record("foo", "bar", 0, 100, 10), _txn_record("foo", "bar", 1, 100, 10),
               r.OffsetsDeleted("foo", (("bar", 0),), "offset delete"),
               r.OffsetsDeleted("foo", (("bar", 1),), "offset delete"))
    assert not ctx.has_offset("foo", "bar", 0) and not ctx.has_offset("foo", "bar", 1)
    assert _pending(ctx, "foo", "bar", 0) == {} and _pending(ctx, "foo", "bar", 1) == {}
    assert "foo" not in ctx.coordinator.state.pending_offsets


@pytest.mark.parametrize("kind", ["classic", "consumer"])
def test_offset_delete_with_pending_transactional_offsets(kind: str) -> None:
    """testGenericGroupOffsetDeleteWithPendingTransactionalOffsets and
    testConsumerGroupOffsetDeleteWithPendingTransactionalOffsets: a partition with only a
    pending offset is answered NONE and tombstoned (testOffsetDeleteWith writes a tombstone
    where hasOffset: committed or pending), and is gone."""
    ctx = Context()
    if kind == "classic":
        ctx.replay(r.GroupCreated("foo", 0))
    else:
        ctx.consumer_group("foo")
    ctx.replay(_txn_record("foo", "bar", 0, 100, 10))
    resp, records = ctx.send(m.OffsetDeleteRequest(group_id="foo", partitions=(("bar", 0),)))
    assert resp == m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("bar", 0, Error.NONE),))
    assert records == [r.OffsetsDeleted("foo", (("bar", 0),), "offset delete")]
    assert _pending(ctx, "foo", "bar", 0) == {}


@pytest.mark.parametrize("kind", ["classic", "consumer"])
def test_delete_group_all_offsets_with_pending_transactional_offsets(kind: str) -> None:
    """testDeleteGroupAllOffsetsWithPendingTransactionalOffsets (through DeleteGroups, which
    calls deleteAllOffsets): the committed offsets' tombstones in the order of the group's
    offset maps, then one for each partition with only pending offsets."""
    ctx = Context()
    if kind == "classic":
        ctx.replay(r.GroupCreated("foo", 0))
    else:
        ctx.consumer_group("foo")
    for topic, partition in (("bar-0", 0), ("bar-0", 1), ("bar-1", 0)):
        ctx.commit_record("foo", topic, partition, 100, 0)
    ctx.replay(_txn_record("foo", "bar-1", 0, 101, 10), _txn_record("foo", "bar-2", 0, 100, 10))
    resp, records = ctx.send(m.DeleteGroupsRequest(groups_names=("foo",)))
    assert resp == m.DeleteGroupsResponse(results=(m.DeletableGroupResult("foo", Error.NONE),))
    deleted = [x for x in records if isinstance(x, r.OffsetsDeleted)]
    assert deleted == [r.OffsetsDeleted("foo", (("bar-1", 0), ("bar-0", 0), ("bar-0", 1), ("bar-2", 0)),
                                        "group deleted")]
    for topic, partition in (("bar-0", 0), ("bar-0", 1), ("bar-1", 0), ("bar-2", 0)):
        assert not ctx.has_offset("foo", topic, partition) and _pending(ctx, "foo", topic, partition) == {}


def test_cleanup_expired_offsets_with_pending_transactional_offsets() -> None:
    """testCleanupExpiredOffsetsWithPendingTransactionalOffsets: foo-0's committed offset is
    past its retention (a minute, by commit timestamp: a simple group) but a transactional
    offset for it is pending: nothing expires, and the group stays."""
    c = Coordinator(CoordinatorConfig(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=60_000))
    c.handle(1, m.OffsetCommitRequest(group_id="group-id", partitions=(m.OffsetCommitPartition("foo", 0, 100),)), 0)
    c.handle(2, txn_commit("group-id", "", -1, partitions=(("foo", 0),)), 500)
    out = c.advance(60_000)
    assert not any(isinstance(x, r.OffsetsDeleted) for x in out.records)
    assert "group-id" in c.state.groups and ("foo", 0) in c.state.groups["group-id"].offsets


def test_cleanup_expired_offsets_with_pending_transactional_offsets_only() -> None:
    """testCleanupExpiredOffsetsWithPendingTransactionalOffsetsOnly: foo-0 expires, foo-1 has
    only a pending offset, and the group is not deleted (an open transaction); at the next
    check nothing more happens."""
    c = Coordinator(CoordinatorConfig(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=60_000))
    c.handle(1, m.OffsetCommitRequest(group_id="group-id", partitions=(m.OffsetCommitPartition("foo", 0, 100),)), 0)
    c.handle(2, txn_commit("group-id", "", -1, partitions=(("foo", 1),)), 500)
    out = c.advance(60_000)
    assert [x for x in out.records if isinstance(x, r.OffsetsDeleted)] == [
        r.OffsetsDeleted("group-id", (("foo", 0),), "retention")]
    assert "group-id" in c.state.groups
    again = c.advance(120_000)
    assert again.records == [] and "group-id" in c.state.groups


def test_an_offset_kept_by_a_pending_one_does_not_make_every_later_check_run() -> None:
    """A committed offset past its own expire timestamp (OffsetCommit v2's retention of 0)
    that a pending transactional offset keeps cannot expire, nor can its group be deleted:
    the checks after one that found nothing are skipped on their cadence, not run one
    interval at a time. A wire-fuzz recording (a TxnOffsetCommit after such a commit, on a
    broker with a 1 s check interval) took the validator minutes before this."""
    c = Coordinator(CoordinatorConfig(offsets_retention_check_interval_ms=1_000))
    c.handle(1, m.OffsetCommitRequest(group_id="g", version=2, retention_time_ms=0,
                                      partitions=(m.OffsetCommitPartition("foo", 0, 100),)), 0)
    c.handle(2, txn_commit("g", "", -1, partitions=(("foo", 0),)), 0)
    checks = 0
    expire_all = c._expire_all

    def counted(txn: Any) -> None:
        nonlocal checks
        checks += 1
        expire_all(txn)

    c._expire_all = counted  # type: ignore[method-assign]
    out = c.advance(10**9)  # a million intervals
    assert out.records == [] and checks <= 2
    assert ("foo", 0) in c.state.groups["g"].offsets
    # the cadence is kept: the next check is the first on it after the time reached
    assert c.next_offsets_check_ms % 1_000 == 0 and 10**9 < c.next_offsets_check_ms <= 10**9 + 1_000

"""The validator and offsets the broker rightly changes outside OffsetCommit: OffsetDelete
(KIP-496) is replayed, so a broker answering it wrongly is named and later OffsetFetch
answers are judged on the offsets as Kafka leaves them; a TxnOffsetCommit (transactions
are not modelled) leaves the partitions it names open to its offsets, with a note naming
its line, and any other difference there inconclusive, never a violation.

The traces are written with the reference's own trace writer, the reference coordinator
playing the broker (a test injects a wrong answer where it says so)."""

from __future__ import annotations

import io
from pathlib import Path

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import (
    APIS,
    MetadataEvent,
    MetadataTopic,
    WireExchange,
    request_group_id,
)
from groupspec.trace.jsonl import TraceWriter
from groupspec.validate import CONFORMING, INCONCLUSIVE, VIOLATION, validate_bytes
from groupspec.validate.verdict import GroupVerdict

#: the wire version each exchange is written with (8 for the others): a real version of each
#: API; SyncGroup v3, whose requests carry no protocol type or name (v5+ must)
_VERSIONS = {"OffsetDelete": 0, "TxnOffsetCommit": 3, "SyncGroup": 3, "ConsumerGroupHeartbeat": 1,
             "ConsumerGroupDescribe": 1}


class Broker:
    """The reference coordinator as a broker, its exchanges written as a recorder would."""

    def __init__(self, coordinator: Coordinator | None = None) -> None:
        self.c = coordinator or Coordinator()
        self.rid = 0
        self.sent: dict[int, tuple[m.Request, float, str]] = {}
        self.answers: dict[int, tuple[m.Response, float]] = {}
        self.inject: dict[int, m.Response] = {}
        self.topics: tuple[MetadataTopic, ...] = ()

    def set_topics(self, *topics: MetadataTopic) -> None:
        self.topics = topics
        self.c.set_topics([TopicMetadata(t.topic_id, t.name, t.partitions) for t in topics])

    def send(self, req: m.Request, at: int, conn: str = "c1") -> int:
        self.rid += 1
        self.sent[self.rid] = (req, at, conn)
        self._take(self.c.handle(self.rid, req, at).responses, at)
        return self.rid

    def advance(self, at: int) -> None:
        self._take(self.c.advance(at).responses, at)

    def _take(self, responses: list[tuple[int, m.Response]], at: int) -> None:
        for rid, resp in responses:
            self.answers[rid] = (resp, at + 0.5)

    def answer(self, rid: int) -> m.Response:
        return self.answers[rid][0]

    def not_handled(self, req: m.Request, resp: m.Response, at: int) -> int:
        """An exchange with an answer the reference did not give (a TxnOffsetCommit's)."""
        self.rid += 1
        self.sent[self.rid] = (req, at, "c9")
        self.answers[self.rid] = (resp, at + 0.5)
        return self.rid

    def trace(self) -> bytes:
        out = io.StringIO()
        w = TraceWriter(out, source="recorder")
        if self.topics:
            w.write(MetadataEvent(seq=w.next_seq(), at_ms=0.0, topics=self.topics))
        for rid, (req, at, conn) in sorted(self.sent.items()):
            resp, received = self.answers[rid]
            resp = self.inject.get(rid, resp)
            api = m.api_name(req)
            w.write(WireExchange(
                seq=w.next_seq(), connection=conn, client_id=conn, api=api, api_key=APIS[api][0],
                api_version=req.version if isinstance(req, m.OffsetCommitRequest) else _VERSIONS.get(api, 8),
                correlation_id=rid, group_id=request_group_id(req), sent_ms=float(at),
                received_ms=received, request=req, response=resp))
        return out.getvalue().encode()


def verdict(b: Broker) -> GroupVerdict:
    [g] = validate_bytes(b.trace()).groups
    return g


def commit(b: Broker, at: int, *parts: tuple[str, int, int], gen: int = -1, member: str = "",
           version: int = 8) -> int:
    return b.send(m.OffsetCommitRequest(
        group_id="g", generation_id=gen, member_id=member, version=version,
        partitions=tuple(m.OffsetCommitPartition(t, p, o) for t, p, o in parts)), at)


def fetch(b: Broker, at: int, *parts: tuple[str, int]) -> int:
    return b.send(m.OffsetFetchRequest(group_id="g", partitions=parts), at)


def delete(b: Broker, at: int, *parts: tuple[str, int]) -> int:
    return b.send(m.OffsetDeleteRequest(group_id="g", partitions=parts), at, conn="admin")


def stable_member(b: Broker, protocol_type: str = "consumer", topics: tuple[str, ...] = ("t",)) -> tuple[str, int]:
    """One member joins at 10 ms (the initial delay runs 3 s) and syncs: Stable, generation 1."""
    meta = Subscription(topics).encode() if protocol_type == "consumer" else b"opaque"
    join = m.JoinGroupRequest(group_id="g", member_id="", client_id="c1", version=6,
                              protocol_type=protocol_type, protocols=(m.JoinGroupProtocol("range", meta),),
                              session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
    first = b.answer(b.send(join, 10))
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    rid = b.send(m.JoinGroupRequest(**{**join.__dict__, "member_id": first.member_id}), 11)
    b.advance(3011)
    joined = b.answer(rid)
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    b.send(m.SyncGroupRequest(group_id="g", generation_id=joined.generation_id, member_id=joined.member_id,
                              assignments=(m.SyncGroupAssignment(joined.member_id, b""),)), 3020)
    return joined.member_id, joined.generation_id


def test_fetch_after_an_offset_delete_is_judged_on_what_kafka_left() -> None:
    b = Broker()
    commit(b, 1000, ("t", 0, 5), ("t", 1, 6))
    d = delete(b, 1100, ("t", 0), ("t", 9))
    assert b.answer(d) == m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("t", 0, Error.NONE), m.OffsetDeletePartitionResponse("t", 9, Error.NONE)))
    f = fetch(b, 1200, ("t", 0), ("t", 1))
    assert [p.committed_offset for p in b.answer(f).partitions] == [-1, 6]  # type: ignore[union-attr]
    g = verdict(b)
    assert g.verdict == CONFORMING, g
    assert g.exchanges == 3


def test_a_broker_that_deletes_nothing_is_named_at_the_fetch() -> None:
    # the broker answered the OffsetDelete right but still returns the offset afterwards
    b = Broker()
    commit(b, 1000, ("t", 0, 5))
    delete(b, 1100, ("t", 0))
    f = fetch(b, 1200, ("t", 0))
    b.inject[f] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 5, "", Error.NONE),))
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "FetchReturnsCommitted" and g.violation.api == "OffsetFetch"


def test_deleting_a_subscribed_topics_offsets_is_a_violation() -> None:
    # OffsetMetadataManager.deleteOffsets keeps a subscribed topic's offsets
    b = Broker()
    commit(b, 1, ("t", 0, 5), ("u", 0, 7))  # (committed before the member joined)
    stable_member(b)
    d = delete(b, 3200, ("t", 0), ("u", 0))
    assert b.answer(d) == m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("t", 0, Error.GROUP_SUBSCRIBED_TO_TOPIC),
        m.OffsetDeletePartitionResponse("u", 0, Error.NONE)))
    assert verdict(b).verdict == CONFORMING
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("t", 0, Error.NONE), m.OffsetDeletePartitionResponse("u", 0, Error.NONE)))
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    v = g.violation
    assert (v.api, v.rule) == ("OffsetDelete", "OffsetDeleteSubscribedTopic")
    assert "OffsetMetadataManager.java" in v.kafka_source and "ClassicGroup.java" in v.kafka_source
    assert "t-0: answered NONE, Kafka GROUP_SUBSCRIBED_TO_TOPIC" in v.detail


def test_refusing_a_delete_kafka_allows_is_a_violation() -> None:
    b = Broker()
    commit(b, 1, ("u", 0, 7))
    stable_member(b)
    d = delete(b, 3200, ("u", 0))
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NON_EMPTY_GROUP)
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    assert (g.violation.rule, g.violation.broker_answered) == ("OffsetDeleteAccepted", "OffsetDelete NON_EMPTY_GROUP")


def test_a_group_of_another_protocol_type_with_members_is_non_empty() -> None:
    b = Broker()
    stable_member(b, protocol_type="connect")
    d = delete(b, 3200, ("u", 0))
    assert b.answer(d) == m.OffsetDeleteResponse(error=Error.NON_EMPTY_GROUP)
    assert verdict(b).verdict == CONFORMING
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("u", 0, Error.NONE),))
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "OffsetDeleteNonEmptyGroup"


def test_an_unknown_group_may_have_existed_before_the_trace() -> None:
    b = Broker()
    d = delete(b, 1000, ("t", 0))
    assert b.answer(d) == m.OffsetDeleteResponse(error=Error.GROUP_ID_NOT_FOUND)
    assert verdict(b).verdict == CONFORMING
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("t", 0, Error.NONE),))
    g = verdict(b)
    assert g.verdict == INCONCLUSIVE and g.divergence is not None
    assert g.divergence.rule == "OffsetDeleteUnknownGroup"


def test_partitions_the_api_layer_answers_are_not_deleted() -> None:
    # KafkaApis.handleOffsetDeleteRequest answers an unknown topic itself; the coordinator
    # never sees it, so its committed offset stays
    b = Broker()
    commit(b, 1000, ("t", 0, 5), ("x", 0, 8))
    d = delete(b, 1100, ("t", 0), ("x", 0))
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("x", 0, Error.UNKNOWN_TOPIC_OR_PARTITION),
        m.OffsetDeletePartitionResponse("t", 0, Error.NONE)))
    f = fetch(b, 1200, ("t", 0), ("x", 0))
    b.inject[f] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, -1, "", Error.NONE),
        m.OffsetFetchPartitionResponse("x", 0, 8, "", Error.NONE)))
    g = verdict(b)
    assert g.verdict == CONFORMING, g


def _txn(b: Broker, at: int, offset: int) -> int:
    req = m.TxnOffsetCommitRequest(group_id="g", transactional_id="tx-1", producer_id=7, producer_epoch=0,
                                   partitions=(m.TxnOffsetCommitPartition("t", 0, offset, ""),))
    return b.not_handled(req, m.TxnOffsetCommitResponse(partitions=(
        m.TxnOffsetCommitPartitionResponse("t", 0, 0),)), at)


def test_a_fetch_may_answer_what_a_txn_offset_commit_committed() -> None:
    b = Broker()
    commit(b, 1000, ("t", 0, 5), ("t", 1, 6))
    _txn(b, 1100, 50)
    f = fetch(b, 1200, ("t", 0), ("t", 1))
    # the transaction committed (its markers are not on the group protocol's wire)
    b.inject[f] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 50, "", Error.NONE),
        m.OffsetFetchPartitionResponse("t", 1, 6, "", Error.NONE)))
    g = verdict(b)
    assert g.verdict == CONFORMING, g
    assert any(n.startswith("line 3: TxnOffsetCommit") and "t-0@50" in n for n in g.notes), g.notes
    # aborted (or still open): the earlier offset is as good
    del b.inject[f]
    assert verdict(b).verdict == CONFORMING
    # an untouched partition is still judged
    b.inject[f] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 50, "", Error.NONE),
        m.OffsetFetchPartitionResponse("t", 1, 60, "", Error.NONE)))
    assert verdict(b).verdict == VIOLATION


def test_another_offset_where_a_transaction_committed_is_inconclusive() -> None:
    b = Broker()
    commit(b, 1000, ("t", 0, 5))
    _txn(b, 1100, 50)
    f = fetch(b, 1200, ("t", 0))
    b.inject[f] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 77, "", Error.NONE),))
    g = verdict(b)
    assert g.verdict == INCONCLUSIVE, g
    assert any("TxnOffsetCommit at line(s) 3" in x.what for x in g.missing), g.missing
    # the same answer before the TxnOffsetCommit was sent is a violation
    b2 = Broker()
    commit(b2, 1000, ("t", 0, 5))
    f2 = fetch(b2, 1050, ("t", 0))
    _txn(b2, 1100, 50)
    b2.inject[f2] = m.OffsetFetchResponse(error=Error.NONE, partitions=(
        m.OffsetFetchPartitionResponse("t", 0, 50, "", Error.NONE),))
    assert verdict(b2).verdict == VIOLATION


def test_json_lines_and_parquet_round_trip_with_offset_delete_and_txn(tmp_path: Path) -> None:
    # the columnar layout gets req_/resp_ columns for both APIs (typed, no raw bytes kept),
    # gives back the same bytes, and the validator loads the same verdicts from it
    import pyarrow.parquet as pq

    from groupspec.trace import parquet
    from groupspec.validate import validate_path

    b = Broker()
    commit(b, 1000, ("t", 0, 5), ("t", 1, 6))
    delete(b, 1100, ("t", 1), ("t", 9))
    _txn(b, 1150, 50)
    fetch(b, 1200, ("t", 0), ("t", 1))
    src = tmp_path / "t.jsonl"
    src.write_bytes(b.trace())
    pq_path = tmp_path / "t.parquet"
    parquet.jsonl_to_parquet(src, pq_path)
    table = pq.read_table(pq_path)
    for col in ("req_OffsetDelete", "resp_OffsetDelete", "req_TxnOffsetCommit", "resp_TxnOffsetCommit"):
        assert col in table.column_names
    assert table.column("raw").null_count == table.num_rows
    assert table.column("decoded").to_pylist() == [True] * table.num_rows
    assert parquet.parquet_to_jsonl_bytes(pq_path) == src.read_bytes()
    a, p = validate_path(src), validate_path(pq_path)
    assert [g.to_json() for g in a.groups] == [g.to_json() for g in p.groups]
    assert [g.verdict for g in p.groups] == [CONFORMING]


def test_a_consumer_group_keeps_its_subscribed_topics_offsets() -> None:
    # KIP-848: ConsumerGroup.validateOffsetDelete accepts any state; ModernGroup.
    # isSubscribedToTopic keeps the topics a member subscribes to
    b = Broker()
    b.set_topics(MetadataTopic("foo", TopicId(0x1111), 2))
    hb = b.answer(b.send(ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m1", member_epoch=0, rebalance_timeout_ms=5000,
        subscribed_topic_names=("foo",), topic_partitions=()), 1000))
    assert isinstance(hb, ConsumerGroupHeartbeatResponse) and hb.error is Error.NONE
    c = commit(b, 1100, ("foo", 0, 3), ("bar", 0, 4), gen=hb.member_epoch, member="m1", version=9)
    assert b.answer(c) == m.OffsetCommitResponse(partitions=(
        m.OffsetCommitPartitionResponse("foo", 0, Error.NONE), m.OffsetCommitPartitionResponse("bar", 0, Error.NONE)))
    d = delete(b, 1200, ("foo", 0), ("bar", 0))
    assert b.answer(d) == m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("foo", 0, Error.GROUP_SUBSCRIBED_TO_TOPIC),
        m.OffsetDeletePartitionResponse("bar", 0, Error.NONE)))
    f = fetch(b, 1300, ("foo", 0), ("bar", 0))
    assert [p.committed_offset for p in b.answer(f).partitions] == [3, -1]  # type: ignore[union-attr]
    g = verdict(b)
    assert g.verdict == CONFORMING, g
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("foo", 0, Error.NONE), m.OffsetDeletePartitionResponse("bar", 0, Error.NONE)))
    g = verdict(b)
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "OffsetDeleteSubscribedTopic"


def test_offset_delete_of_the_empty_group_id_is_judged() -> None:
    # GroupCoordinatorService.deleteOffsets refuses "" (OffsetCommit takes it as a group)
    b = Broker()
    commit(b, 1000, ("t", 0, 5))  # group "g"
    d = b.send(m.OffsetDeleteRequest(group_id="", partitions=(("t", 0),)), 1100, conn="admin")
    assert b.answer(d) == m.OffsetDeleteResponse(error=Error.INVALID_GROUP_ID)
    gs = {g.group_id: g for g in validate_bytes(b.trace()).groups}
    assert gs[""].verdict == CONFORMING and gs[""].exchanges == 1
    b.inject[d] = m.OffsetDeleteResponse(error=Error.NONE, partitions=(
        m.OffsetDeletePartitionResponse("t", 0, Error.NONE),))
    gs = {g.group_id: g for g in validate_bytes(b.trace()).groups}
    v = gs[""].violation
    assert gs[""].verdict == VIOLATION and v is not None and v.rule == "OffsetDeleteGroupId"

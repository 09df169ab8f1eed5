"""The validator judges KIP-848 consumer groups: ConsumerGroupHeartbeat exchanges (trace v1.2)
are replayed on the reference coordinator with the metadata image the trace's ``metadata``
events give, and a broker that answers otherwise is named with the rule and Kafka's source.

The traces are written from the reference's own answers (so the unmutated trace must be
conforming), then one answer is changed as a deviating broker would.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groupspec.coordinator.consumer.heartbeat as heartbeat_module
from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.state import NotModelled
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatAssignment,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import APIS, Header, MetadataEvent, MetadataTopic, WireExchange
from groupspec.trace.jsonl import event_to_json
from groupspec.validate import CONFORMING, INCONCLUSIVE, VIOLATION, validate_bytes
from groupspec.validate.replay import ReplayConfig

FOO = TopicId(0x51F00)
TOPICS = (MetadataTopic("foo", FOO, 4),)

Tamper = Callable[[int, m.Response], m.Response]


def _owned(resp: ConsumerGroupHeartbeatResponse,
           before: tuple[HeartbeatTopicPartitions, ...]) -> tuple[HeartbeatTopicPartitions, ...]:
    return before if resp.assignment is None else resp.assignment.topic_partitions


def recorded(tamper: Tamper | None = None, metadata: bool = True, commit_epoch_delta: int = 0,
             classic_join: str | None = None) -> bytes:
    """Two members join, reconcile, one commits and leaves: the reference's own answers as a
    recorded trace (``tamper`` may change the n-th answer). ``classic_join``: a classic
    client then sends JoinGroup to the same group, after the other member left too
    ("empty") or while it is a member ("members")."""
    c = Coordinator()
    c.set_topics([TopicMetadata(FOO, "foo", 4)])
    events: list[object] = [Header(source="test", minor=2)]
    if metadata:
        events.append(MetadataEvent(1, 0.0, TOPICS))
    owned = {"a": (), "b": ()}  # type: dict[str, tuple[HeartbeatTopicPartitions, ...]]
    epoch = {"a": 0, "b": 0}
    now = 1000
    n = 0

    def send(member: str, req: m.Request, kafka: m.Response | None = None) -> m.Response:
        """``kafka``: Kafka's answer, where the reference does not model the request."""
        nonlocal now, n
        n += 1
        now += 100
        resp = kafka or c.handle(n, req, now).response_to(n)
        assert resp is not None
        wire = tamper(n, resp) if tamper is not None else resp
        api = m.api_name(req)
        version = {"OffsetCommit": 9, "ConsumerGroupHeartbeat": 1, "JoinGroup": 5}[api]
        events.append(WireExchange(
            seq=len(events), connection=f"{member}#1", client_id=member, api=api,
            api_key=APIS[api][0], api_version=version,
            correlation_id=n, group_id="g", sent_ms=float(now), received_ms=now + 1.0,
            request=req, response=wire))
        return resp

    def hb(member: str, **kw: object) -> None:
        req = ConsumerGroupHeartbeatRequest(group_id="g", member_id=member, member_epoch=epoch[member],
                                            topic_partitions=owned[member], **kw)  # type: ignore[arg-type]
        resp = send(member, req)
        assert isinstance(resp, ConsumerGroupHeartbeatResponse) and resp.error is Error.NONE
        epoch[member] = resp.member_epoch
        owned[member] = _owned(resp, owned[member])

    for who in ("a", "b"):
        hb(who, rebalance_timeout_ms=5000, subscribed_topic_names=("foo",))
    for _ in range(3):
        hb("a")
        hb("b")
    send("a", m.OffsetCommitRequest(group_id="g", generation_id=epoch["a"] + commit_epoch_delta,
                                    member_id="a", version=9,
                                    partitions=(m.OffsetCommitPartition("foo", 0, 7, None),)))
    send("a", ConsumerGroupHeartbeatRequest(group_id="g", member_id="a", member_epoch=-1))
    hb("b")
    hb("b")
    if classic_join == "empty":
        send("b", ConsumerGroupHeartbeatRequest(group_id="g", member_id="b", member_epoch=-1))
    if classic_join is not None:
        proto = (m.JoinGroupProtocol("range", Subscription(("foo",)).encode()),)
        # with members, Kafka's classicGroupJoinToConsumerGroup asks for a member id as well
        kafka = m.JoinGroupResponse(error=Error.MEMBER_ID_REQUIRED, member_id="c-1") \
            if classic_join == "members" else None
        first = send("c", m.JoinGroupRequest(group_id="g", member_id="", protocols=proto,
                                             protocol_type="consumer"), kafka)
        assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    lines = [event_to_json(e) for e in events]  # type: ignore[arg-type]
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


def test_the_reference_answers_are_conforming() -> None:
    [g] = validate_bytes(recorded()).groups
    assert g.verdict == CONFORMING, g


def test_an_emptied_consumer_group_gives_way_to_a_classic_member() -> None:
    # maybeDeleteEmptyConsumerGroup: the classic JoinGroup is answered as to a new group
    [g] = validate_bytes(recorded(classic_join="empty")).groups
    assert g.verdict == CONFORMING, g


def test_a_classic_member_joining_a_consumer_group_is_asked_for_a_member_id() -> None:
    # classicGroupJoinToConsumerGroup (KIP-848 mixed groups): a JoinGroup v5 without a
    # member id is answered MEMBER_ID_REQUIRED with a new one, as Kafka does
    [g] = validate_bytes(recorded(classic_join="members")).groups
    assert g.verdict == CONFORMING, g


def _epoch_plus_one(n: int, resp: m.Response) -> m.Response:
    if n == 4 and isinstance(resp, ConsumerGroupHeartbeatResponse):
        return dataclasses.replace(resp, member_epoch=resp.member_epoch + 1)
    return resp


def test_a_wrong_member_epoch_is_a_reconciliation_violation() -> None:
    [g] = validate_bytes(recorded(_epoch_plus_one)).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "ConsumerReconciliation"
    assert "member_epoch" in g.violation.detail or "member_epoch" in g.violation.broker_answered


def _give_everything(n: int, resp: m.Response) -> m.Response:
    # the second member is handed every partition at once, while the first still owns them
    if n == 2 and isinstance(resp, ConsumerGroupHeartbeatResponse):
        return dataclasses.replace(resp, assignment=HeartbeatAssignment(
            (HeartbeatTopicPartitions(FOO, (0, 1, 2, 3)),)))
    return resp


def test_a_partition_handed_over_before_its_release_is_a_violation() -> None:
    [g] = validate_bytes(recorded(_give_everything)).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "ConsumerReconciliation"


def _accept_stale_commit(n: int, resp: m.Response) -> m.Response:
    if isinstance(resp, m.OffsetCommitResponse):
        return m.OffsetCommitResponse(partitions=tuple(
            dataclasses.replace(p, error=Error.NONE) for p in resp.partitions))
    return resp


def test_a_commit_at_a_stale_member_epoch_must_be_refused() -> None:
    [g] = validate_bytes(recorded(commit_epoch_delta=-1)).groups
    assert g.verdict == CONFORMING, g  # the reference refuses it with STALE_MEMBER_EPOCH too
    [g] = validate_bytes(recorded(_accept_stale_commit, commit_epoch_delta=-1)).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "CommitMemberEpoch"


def test_without_the_metadata_image_the_assignments_cannot_be_judged() -> None:
    [g] = validate_bytes(recorded(metadata=False)).groups
    assert g.verdict != CONFORMING


# ---------------------------------------------------------------- no input crashes it
_IDS = st.sampled_from(["a", "b", "", "zz"])
_TOPICS = st.sampled_from([FOO, TopicId(7)])
_PARTS = st.lists(st.builds(HeartbeatTopicPartitions, _TOPICS,
                            st.lists(st.integers(-1, 5), max_size=3).map(tuple)), max_size=2).map(tuple)


@st.composite
def _exchange(draw: st.DrawFn, seq: int) -> WireExchange:
    req = ConsumerGroupHeartbeatRequest(
        group_id=draw(st.sampled_from(["g", ""])), member_id=draw(_IDS),
        member_epoch=draw(st.integers(-3, 4)), instance_id=draw(st.sampled_from([None, "i"])),
        rebalance_timeout_ms=draw(st.sampled_from([-1, 5000])),
        subscribed_topic_names=draw(st.sampled_from([None, (), ("foo",), ("foo", "nope")])),
        server_assignor=draw(st.sampled_from([None, "uniform", "bogus"])),
        topic_partitions=draw(st.one_of(st.none(), _PARTS)))
    resp = ConsumerGroupHeartbeatResponse(
        error=draw(st.sampled_from([Error.NONE, Error.FENCED_MEMBER_EPOCH, Error.UNKNOWN_MEMBER_ID,
                                    Error.NOT_COORDINATOR])),
        member_id=draw(_IDS), member_epoch=draw(st.integers(-2, 4)), heartbeat_interval_ms=5000,
        assignment=draw(st.one_of(st.none(), _PARTS.map(HeartbeatAssignment))))
    at = 1000.0 + 100 * seq
    return WireExchange(seq=seq, connection=draw(st.sampled_from(["c1", "c2"])), client_id="c",
                        api="ConsumerGroupHeartbeat", api_key=68, api_version=1, correlation_id=seq,
                        group_id=req.group_id, sent_ms=at, received_ms=at + 1, request=req, response=resp)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_heartbeat_trace_gets_a_verdict_not_a_crash(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 8))
    events: list[object] = [Header(source="fuzz", minor=2), MetadataEvent(1, 0.0, TOPICS)]
    events += [data.draw(_exchange(seq)) for seq in range(2, n + 2)]
    raw = "".join(json.dumps(event_to_json(e)) + "\n" for e in events).encode()  # type: ignore[arg-type]
    report = validate_bytes(raw, "fuzz")
    assert all(g.verdict in ("conforming", "violation", "inconclusive") for g in report.groups)


def test_the_broker_session_timeout_comes_from_the_header_or_the_command_line(
    tmp_path: Path, kip848_paused_trace: bytes,
) -> None:
    raw = kip848_paused_trace
    [g] = validate_bytes(raw).groups
    assert g.verdict == CONFORMING, g.violation or g.divergence
    # without the broker's setting the reference waits Kafka's 45 s and fences nobody
    lines = raw.decode().splitlines(keepends=True)
    head = json.loads(lines[0])
    assert head["broker_config"]["group.consumer.session.timeout.ms"] == 10_000
    head["broker_config"] = {}
    bare = (json.dumps(head) + "\n" + "".join(lines[1:])).encode()
    [g] = validate_bytes(bare).groups
    assert g.verdict != CONFORMING
    path = tmp_path / "bare.jsonl"
    path.write_bytes(bare)
    from groupspec.cli.main import main
    assert main(["validate", str(path), "--consumer-session-timeout-ms", "10000",
                 "--consumer-heartbeat-interval-ms", "3000"]) == 0


def test_a_groups_own_session_timeout_and_heartbeat_interval_come_from_the_command_line(
    tmp_path: Path, kip848_paused_trace: bytes, capsys: pytest.CaptureFixture[str],
) -> None:
    # the broker's defaults, and the group's settings (kafka-configs --entity-type groups)
    # given with --group-config: the group's session timeout and heartbeat interval are the
    # group's (GroupMetadataManager.consumerGroupSessionTimeoutMs, ...HeartbeatIntervalMs)
    lines = kip848_paused_trace.decode().splitlines(keepends=True)
    head = json.loads(lines[0])
    head["broker_config"] = {}
    path = tmp_path / "bare.jsonl"
    path.write_bytes((json.dumps(head) + "\n" + "".join(lines[1:])).encode())
    [g] = validate_bytes(path.read_bytes()).groups
    from groupspec.cli.main import main
    setting = "consumer.session.timeout.ms=10000,consumer.heartbeat.interval.ms=3000"
    assert main(["validate", str(path), "--group-config", f"other:{setting}"]) == 1
    assert main(["validate", str(path), "--group-config", f"{g.group_id}:{setting}"]) == 0
    capsys.readouterr()
    # bad settings are refused before any work, naming the option
    for bad, why in [(f"{g.group_id}:consumer.session.timeout.ms=ten", "not an integer"),
                     (f"{g.group_id}:share.session.timeout.ms=10000", "unknown group config name"),
                     ("consumer.session.timeout.ms=10000", "expected GROUP:NAME=VALUE"),
                     (f"{g.group_id}:consumer.session.timeout.ms=3000,consumer.heartbeat.interval.ms=3000",
                      "must be greater than consumer.heartbeat.interval.ms")]:
        try:
            rc = main(["validate", str(path), "--group-config", bad])
        except SystemExit as exc:  # argparse's own refusal
            rc = exc.code  # type: ignore[assignment]
        err = capsys.readouterr().err
        assert rc == 2 and why in err and "--group-config" in err, (bad, err)


# ---------------------------------------------------------------- online upgrade
def _upgrade_trace(kafka_answer: ConsumerGroupHeartbeatResponse | None) -> bytes:
    """A classic member joins group g (JoinGroup v5: MEMBER_ID_REQUIRED, then the join the
    initial rebalance delay answers), then a consumer-protocol member joins g with
    ConsumerGroupHeartbeat, answered ``kafka_answer`` (None: as a broker with Kafka's default
    policy does, converting the group)."""
    c = Coordinator()
    c.set_topics([TopicMetadata(FOO, "foo", 4)])
    events: list[object] = [Header(source="test", minor=2), MetadataEvent(1, 0.0, TOPICS)]

    def exchange(n: int, member: str, req: m.Request, resp: m.Response, sent: int, got: int) -> None:
        api = m.api_name(req)
        events.append(WireExchange(
            seq=len(events), connection=f"{member}#1", client_id=member, api=api,
            api_key=APIS[api][0], api_version={"JoinGroup": 5, "ConsumerGroupHeartbeat": 1}[api],
            correlation_id=n, group_id="g", sent_ms=float(sent), received_ms=float(got),
            request=req, response=resp))

    proto = (m.JoinGroupProtocol("range", Subscription(("foo",)).encode()),)
    first_req = m.JoinGroupRequest(group_id="g", member_id="", protocols=proto, protocol_type="consumer")
    first = c.handle(1, first_req, 1000).response_to(1)
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    exchange(1, "c", first_req, first, 1000, 1001)
    join_req = dataclasses.replace(first_req, member_id=first.member_id)
    assert c.handle(2, join_req, 1100).response_to(2) is None  # the initial rebalance delay
    joined = c.advance(4100).response_to(2)
    assert isinstance(joined, m.JoinGroupResponse) and joined.error is Error.NONE
    exchange(2, "c", join_req, joined, 1100, 4101)
    hb = ConsumerGroupHeartbeatRequest(group_id="g", member_id="a", member_epoch=0,
                                       rebalance_timeout_ms=5000, subscribed_topic_names=("foo",),
                                       topic_partitions=())
    if kafka_answer is None:
        kafka_answer = c.handle(3, hb, 4200).response_to(3)  # type: ignore[assignment]
        assert isinstance(kafka_answer, ConsumerGroupHeartbeatResponse)
    exchange(3, "a", hb, kafka_answer, 4200, 4201)
    lines = [event_to_json(e) for e in events]  # type: ignore[arg-type]
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


_CONVERTED = ConsumerGroupHeartbeatResponse(error=Error.NONE, member_id="a", member_epoch=2,
                                            heartbeat_interval_ms=5000,
                                            assignment=HeartbeatAssignment(()))
_REFUSED = ConsumerGroupHeartbeatResponse(
    error=Error.GROUP_ID_NOT_FOUND, error_message="Cannot upgrade classic group g to consumer "
    "group because online upgrade is disabled.", member_epoch=0, heartbeat_interval_ms=0)


def test_an_online_upgrade_is_judged_under_kafkas_default_policy() -> None:
    # group.consumer.migration.policy=bidirectional (Kafka's default): the classic group is
    # converted (convertToConsumerGroup) and the member joins it; refusing is a violation
    [g] = validate_bytes(_upgrade_trace(None)).groups
    assert g.verdict == CONFORMING, g
    [g] = validate_bytes(_upgrade_trace(_REFUSED)).groups
    assert g.verdict == VIOLATION, g


def test_under_the_disabled_policy_an_upgrade_must_be_refused() -> None:
    disabled = ReplayConfig(coordinator=CoordinatorConfig(consumer_group_migration_policy="disabled"))
    [g] = validate_bytes(_upgrade_trace(_REFUSED), config=disabled).groups
    assert g.verdict == CONFORMING, g
    [g] = validate_bytes(_upgrade_trace(_CONVERTED), config=disabled).groups
    assert g.verdict == VIOLATION, g


# ---------------------------------------------------------------- mixed groups
def _mixed_trace(last_answer: m.HeartbeatResponse) -> bytes:
    """A consumer-protocol member "a" joins, a classic member "c" joins the consumer group
    (JoinGroup v9: MEMBER_ID_REQUIRED, then the join) and syncs; then "a" goes silent and
    "c" heartbeats on past a's session (the answers of a broker whose migration policy is
    "disabled": a's expiry bumps the epoch, "c" is told to rejoin), the last one answered
    ``last_answer``."""
    c = Coordinator(CoordinatorConfig(consumer_group_migration_policy="disabled"))
    c.set_topics([TopicMetadata(FOO, "foo", 4)])
    events: list[object] = [Header(source="test", minor=2), MetadataEvent(1, 0.0, TOPICS)]
    now = 1000
    n = 0

    def send(member: str, req: m.Request, kafka: m.Response | None = None) -> m.Response:
        nonlocal now, n
        n += 1
        now += 100
        c.advance(now)
        resp = kafka or c.handle(n, req, now).response_to(n)
        assert resp is not None
        api = m.api_name(req)
        events.append(WireExchange(
            seq=len(events), connection=f"{member}#1", client_id=member, api=api,
            api_key=APIS[api][0], api_version={"ConsumerGroupHeartbeat": 1, "JoinGroup": 9,
                                                "SyncGroup": 5, "Heartbeat": 4}[api],
            correlation_id=n, group_id="g", sent_ms=float(now), received_ms=now + 1.0,
            request=req, response=resp))
        return resp

    joined = send("a", ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="a", member_epoch=0, rebalance_timeout_ms=5000,
        subscribed_topic_names=("foo",), topic_partitions=()))
    assert isinstance(joined, ConsumerGroupHeartbeatResponse) and joined.error is Error.NONE
    proto = (m.JoinGroupProtocol("range", Subscription(("foo",)).encode()),)
    first = send("c", m.JoinGroupRequest(group_id="g", member_id="", protocols=proto, client_id="c"))
    assert isinstance(first, m.JoinGroupResponse) and first.error is Error.MEMBER_ID_REQUIRED
    second = send("c", m.JoinGroupRequest(group_id="g", member_id=first.member_id, protocols=proto,
                                          client_id="c"))
    assert isinstance(second, m.JoinGroupResponse) and second.error is Error.NONE
    synced = send("c", m.SyncGroupRequest(group_id="g", generation_id=second.generation_id,
                                          member_id=first.member_id, protocol_type="consumer",
                                          protocol_name="range"))
    assert isinstance(synced, m.SyncGroupResponse) and synced.error is Error.NONE
    for _ in range(4):  # "c" keeps its session (45 s) while "a" is silent
        now += 12_000
        send("c", m.HeartbeatRequest(group_id="g", generation_id=second.generation_id,
                                     member_id=first.member_id))
    now += 12_000
    send("c", m.HeartbeatRequest(group_id="g", generation_id=second.generation_id,
                                 member_id=first.member_id), last_answer)
    lines = [event_to_json(e) for e in events]  # type: ignore[arg-type]
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


def test_a_classic_member_in_a_consumer_group_is_judged() -> None:
    # classicGroup{Join,Sync,Heartbeat}ToConsumerGroup: the reference's own answers are
    # conforming, a heartbeat that should have asked the member to rejoin is not
    disabled = ReplayConfig(coordinator=CoordinatorConfig(consumer_group_migration_policy="disabled"))
    rejoin = m.HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS)  # a's expiry bumped the epoch
    [g] = validate_bytes(_mixed_trace(rejoin), config=disabled).groups
    assert g.verdict == CONFORMING, g
    [g] = validate_bytes(_mixed_trace(m.HeartbeatResponse(error=Error.NONE)), config=disabled).groups
    assert g.verdict == VIOLATION and g.violation is not None, g
    assert g.violation.seq == 10


def test_a_downgrade_by_a_session_timeout_is_judged() -> None:
    # under Kafka's default policy the expiry of the last consumer-protocol member converts
    # the group to a classic group (convertToClassicGroup) in a rebalance: the classic
    # member's heartbeat is then REBALANCE_IN_PROGRESS, NONE a violation
    [g] = validate_bytes(_mixed_trace(m.HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS))).groups
    assert g.verdict == CONFORMING, g
    [g] = validate_bytes(_mixed_trace(m.HeartbeatResponse(error=Error.NONE))).groups
    assert g.verdict == VIOLATION, g


def test_a_timer_the_reference_cannot_process_leaves_the_group_inconclusive(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the replay's guard: a timer raising NotModelled names the exchange, it does not crash
    def not_modelled(*args: object) -> None:
        raise NotModelled("a timer's effect is not modelled")

    raw = _mixed_trace(m.HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS))
    monkeypatch.setattr(heartbeat_module, "expire_session", not_modelled)
    [g] = validate_bytes(raw).groups
    assert g.verdict == INCONCLUSIVE, g
    assert "a timer's effect is not modelled" in json.dumps(dataclasses.asdict(g), default=str)

"""Client-side rules (groupspec.validate.client_rules): each rule on a small hand-made group
that breaks it and on its nearest lawful twin, the findings reaching the verdict with the
client named, and no finding on Kafka 4.1.2's own recordings (both client libraries)."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatAssignment,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Assignment, Subscription, from_pairs
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import load_scenario_text
from groupspec.trace.events import (
    APIS,
    Event,
    FetchEvent,
    FetchPartition,
    MetadataEvent,
    WireExchange,
)
from groupspec.trace.jsonl import TraceWriter
from groupspec.validate import validate_bytes, validate_path
from groupspec.validate.client_rules import client_findings
from groupspec.validate.grouping import Exchange, GroupTrace, group_trace
from groupspec.validate.load import load_bytes, load_path
from groupspec.validate.report import _group_text
from groupspec.validate.validator import validate_group

ROOT = Path(__file__).resolve().parent.parent
KAFKA = sorted((ROOT / "examples" / "conformance" / "kafka-4.1.2").glob("*.jsonl"))
E = Error


def wire_trace(trace: list[Event]) -> bytes:
    """A simulated trace as a recorder would write it: exchanges and fetches only."""
    out = io.StringIO()
    w = TraceWriter(out, source="simulator")
    for e in trace:
        if isinstance(e, WireExchange | FetchEvent):
            w.write(dataclasses.replace(e, seq=w.next_seq()))
    return out.getvalue().encode()


class Group:
    """A tiny group's events, built in order."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.fetches: list[tuple[int, FetchEvent]] = []

    def x(self, req: m.Request, resp: m.Response | None, sent: float, received: float | None = None,
          client: str = "a") -> None:
        seq = len(self.exchanges) + len(self.fetches) + 1
        api = m.api_name(req)
        e = WireExchange(seq, f"{client}#1", client, api, APIS[api][0], 5, seq, "g", sent,
                         sent + 1 if received is None else received, req, resp)
        self.exchanges.append(Exchange(seq + 1, e))

    def fetch(self, at: float, *tps: tuple[str, int], client: str = "a") -> None:
        seq = len(self.exchanges) + len(self.fetches) + 1
        parts = tuple(FetchPartition(t, p, 0, 0, 10, 5) for t, p in tps)
        self.fetches.append((seq + 1, FetchEvent(seq, f"{client}#1", client, 11, seq, at, at + 1, parts)))

    def join(self, at: float, member: str, gen: int, assignor: str = "range", owned: set[tuple[str, int]] | None = None,
             sub_gen: int = -1, session: int = 10_000, client: str = "a", req_member: str | None = None) -> None:
        meta = Subscription(("t",), None, from_pairs(owned or set()), sub_gen).encode()
        req = m.JoinGroupRequest(group_id="g", member_id=req_member if req_member is not None else member,
                                 protocols=(m.JoinGroupProtocol(name=assignor, metadata=meta),),
                                 session_timeout_ms=session)
        self.x(req, m.JoinGroupResponse(error=E.NONE, generation_id=gen, protocol_type="consumer",
                                        protocol_name=assignor, leader="the-leader", member_id=member), at, at + 5, client)

    def sync(self, at: float, member: str, gen: int, parts: set[tuple[str, int]], client: str = "a") -> None:
        self.x(m.SyncGroupRequest(group_id="g", generation_id=gen, member_id=member),
               m.SyncGroupResponse(error=E.NONE, assignment=Assignment(from_pairs(parts)).encode()), at, at + 5, client)

    def heartbeat(self, at: float, member: str, gen: int, answer: Error = E.NONE, client: str = "a") -> None:
        self.x(m.HeartbeatRequest(group_id="g", generation_id=gen, member_id=member),
               m.HeartbeatResponse(error=answer), at, at + 5, client)

    def commit(self, at: float, member: str, gen: int, *tps: tuple[str, int], answer: Error = E.NONE,
               client: str = "a") -> None:
        req = m.OffsetCommitRequest(group_id="g", generation_id=gen, member_id=member, partitions=tuple(
            m.OffsetCommitPartition(topic=t, partition=p, committed_offset=3) for t, p in tps))
        resp = m.OffsetCommitResponse(partitions=tuple(
            m.OffsetCommitPartitionResponse(topic=t, partition=p, error=answer) for t, p in tps))
        self.x(req, resp, at, at + 5, client)

    def rules(self, names: dict[TopicId, str] | None = None) -> list[str]:
        return [f.rule.name for f in client_findings(GroupTrace("g", self.exchanges, fetches=self.fetches),
                                                     topic_names=names)]


def member_in_generation_1(parts: set[tuple[str, int]], assignor: str = "range") -> Group:
    g = Group()
    g.join(0, "m1", 1, assignor)
    g.sync(10, "m1", 1, parts)
    return g


def test_fetching_a_partition_not_assigned() -> None:
    g = member_in_generation_1({("t", 0)})
    g.fetch(5_000, ("t", 0))
    assert g.rules() == []
    g.fetch(6_000, ("t", 1))
    assert g.rules() == ["ClientFetchesOwnedOnly"]


def test_an_eager_member_consuming_across_a_rebalance() -> None:
    g = member_in_generation_1({("t", 0)})
    g.fetch(5_000, ("t", 0))
    g.x(m.JoinGroupRequest(group_id="g", member_id="m1", protocols=(m.JoinGroupProtocol(
        name="range", metadata=Subscription(("t",), None, {}, 1).encode()),)), None, 6_000)
    g.fetch(6_500, ("t", 0))  # within the slack of the JoinGroup: a fetch already under way
    assert g.rules() == []
    g.fetch(9_000, ("t", 0))
    assert g.rules() == ["ClientFetchesOwnedOnly"]


def test_committing_a_partition_of_another_member() -> None:
    g = member_in_generation_1({("t", 0)})
    g.commit(5_000, "m1", 1, ("t", 0))
    assert g.rules() == []
    g.commit(6_000, "m1", 1, ("t", 1))
    assert g.rules() == ["ClientCommitsOwnedOnly"]


def test_a_classic_member_of_a_consumer_group_gets_partitions_later_at_the_same_generation() -> None:
    """Kafka 4.1.2 recorded (`conformance --group-protocol mixed`, downgrade, kafka-python):
    a classic member joins a consumer group while a consumer-protocol member still holds
    every partition. Its SyncGroup of generation (member epoch) 3 assigns nothing; once
    the partition is released, its heartbeat is answered REBALANCE_IN_PROGRESS and it
    rejoins at the same generation 3, whose SyncGroup now assigns t-3. It fetches and
    commits t-3 at generation 3: its own. Keeping only a generation's first SyncGroup
    answer made both a client violation."""
    g = Group()
    g.join(0, "m1", 3)
    g.sync(10, "m1", 3, set())
    g.heartbeat(500, "m1", 3, E.REBALANCE_IN_PROGRESS)
    g.join(600, "m1", 3)
    g.sync(620, "m1", 3, {("t", 3)})
    g.fetch(700, ("t", 3))
    g.commit(2_000, "m1", 3, ("t", 3))
    assert g.rules() == []
    g.fetch(2_100, ("t", 0))  # never assigned: still a deviation
    g.commit(2_200, "m1", 3, ("t", 0))
    assert g.rules() == ["ClientFetchesOwnedOnly", "ClientCommitsOwnedOnly"]


def test_ownership_at_one_generation_follows_its_last_sync_group_answer() -> None:
    """The later answer of a generation is what the member owns from then on: a
    partition an earlier answer of that generation assigned is no longer its own (an
    eager member), and a commit before the later answer is judged by the earlier one."""
    g = Group()
    g.join(0, "m1", 3)
    g.sync(10, "m1", 3, {("t", 0)})
    g.commit(100, "m1", 3, ("t", 0))
    g.heartbeat(500, "m1", 3, E.REBALANCE_IN_PROGRESS)
    g.join(600, "m1", 3)
    g.sync(620, "m1", 3, {("t", 1)})
    assert g.rules() == []
    g.commit(3_000, "m1", 3, ("t", 0))
    assert g.rules() == ["ClientCommitsOwnedOnly"]


def test_a_cooperative_classic_member_may_commit_what_it_revoked_at_the_same_generation() -> None:
    """A cooperative classic member of a consumer group is told to revoke at its current
    member epoch: the SyncGroup of the same generation assigns less, and its
    onPartitionsRevoked commit of the revoked partition carries that generation."""
    g = member_in_generation_1({("t", 0), ("t", 1)}, "cooperative-sticky")
    g.heartbeat(500, "m1", 1, E.REBALANCE_IN_PROGRESS)
    g.join(600, "m1", 1, "cooperative-sticky", {("t", 0), ("t", 1)}, 1)
    g.sync(620, "m1", 1, {("t", 0)})
    g.commit(630, "m1", 1, ("t", 1))
    assert g.rules() == []


def test_a_cooperative_member_may_commit_what_it_just_revoked() -> None:
    g = member_in_generation_1({("t", 0), ("t", 1)}, "cooperative-sticky")
    g.join(5_000, "m1", 2, "cooperative-sticky", {("t", 0), ("t", 1)}, 1)
    g.sync(5_020, "m1", 2, {("t", 0)})
    g.commit(5_030, "m1", 2, ("t", 1))  # onPartitionsRevoked runs after the new generation
    assert g.rules() == []


def test_eager_member_reporting_owned_partitions() -> None:
    g = member_in_generation_1({("t", 0)})
    g.join(5_000, "m1", 2, "range", set(), 1)
    assert g.rules() == []
    g.join(9_000, "m1", 3, "range", {("t", 0)}, 2)
    assert g.rules() == ["EagerRevokesBeforeJoin"]


def _join_offering(g: Group, at: float, gen: int, names: tuple[str, ...], owned: set[tuple[str, int]]) -> None:
    """m1's JoinGroup offering the assignors ``names`` (each with the same subscription,
    reporting ``owned`` from generation 1), answered with generation ``gen``."""
    meta = Subscription(("t",), None, from_pairs(owned), 1).encode()
    g.x(m.JoinGroupRequest(group_id="g", member_id="m1", session_timeout_ms=10_000,
                           protocols=tuple(m.JoinGroupProtocol(name=n, metadata=meta) for n in names)),
        m.JoinGroupResponse(error=E.NONE, generation_id=gen, protocol_type="consumer", protocol_name=names[0],
                            leader="the-leader", member_id="m1"), at, at + 5)


@pytest.mark.parametrize("names", [("range", "cooperative-sticky"), ("cooperative-sticky", "range"),
                                   ("cooperative-sticky", "roundrobin", "stream")])
def test_a_member_offering_an_eager_assignor_among_cooperative_ones_is_eager(names: tuple[str, ...]) -> None:
    """The Java client follows the highest rebalance protocol all its assignors support
    (ConsumerCoordinator's constructor): with range (eager only) beside cooperative-sticky,
    its default and KIP-429's first upgrade bounce, that is eager, whatever the group chose,
    so onJoinPrepare revokes everything and the JoinGroup reports nothing owned. Such a
    member was never judged (neither eager nor cooperative)."""
    g = member_in_generation_1({("t", 0)})
    _join_offering(g, 5_000, 2, names, set())
    assert g.rules() == []
    _join_offering(g, 9_000, 3, names, {("t", 0)})
    assert g.rules() == ["EagerRevokesBeforeJoin"]


def test_a_member_offering_only_cooperative_and_unknown_assignors_is_not_judged_eager() -> None:
    g = member_in_generation_1({("t", 0)}, "cooperative-sticky")
    _join_offering(g, 5_000, 2, ("cooperative-sticky", "stream"), {("t", 0)})
    assert g.rules() == []


def test_cooperative_member_reporting_a_revoked_partition() -> None:
    g = member_in_generation_1({("t", 0), ("t", 1)}, "cooperative-sticky")
    g.join(5_000, "m1", 2, "cooperative-sticky", {("t", 0), ("t", 1)}, 1)
    g.sync(5_020, "m1", 2, {("t", 0)})
    assert g.rules() == []
    g.join(6_000, "m1", 3, "cooperative-sticky", {("t", 0), ("t", 1)}, 2)
    assert g.rules() == ["CooperativeOwnedIsAssigned"]


def _join_prepare_commit_fenced(told: bool) -> Group:
    """A cooperative member owning t-0 commits (after a heartbeat told it of a rebalance,
    if ``told``); the commit is answered UNKNOWN_MEMBER_ID and the member rejoins at once
    without a member id, reporting t-0 owned; it fetches t-0 while the join is parked."""
    g = member_in_generation_1({("t", 0)}, "cooperative-sticky")
    g.heartbeat(5_000, "m1", 1, E.REBALANCE_IN_PROGRESS if told else E.NONE)
    g.commit(5_100, "m1", 1, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    g.x(m.JoinGroupRequest(group_id="g", member_id="", protocols=(m.JoinGroupProtocol(
        name="cooperative-sticky", metadata=Subscription(("t",), None, from_pairs({("t", 0)}), -1).encode()),)),
        None, 5_105)
    g.fetch(8_000, ("t", 0))
    return g


def test_a_fenced_join_prepare_commit_keeps_what_the_cooperative_rejoin_reports() -> None:
    # ConsumerCoordinator.onJoinPrepare decides by the generation it was called with: the
    # commit's UNKNOWN_MEMBER_ID resets the generation, yet nothing is lost (Kafka 4.1.2)
    assert _join_prepare_commit_fenced(told=True).rules() == []
    # the same commit with no rebalance under way is an ordinary commit: its fencing error
    # loses the partitions at the next onJoinPrepare, so fetching them on and reporting them
    # owned at no generation are findings
    assert sorted(_join_prepare_commit_fenced(told=False).rules()) == [
        "ClientFetchesOwnedOnly", "CooperativeOwnedIsAssigned"]


def test_a_cooperative_member_reporting_partitions_it_lost_at_no_generation() -> None:
    # KAFKA-12983: a SyncGroup answered ILLEGAL_GENERATION resets the generation; the member
    # rejoins without onJoinPrepare, still reporting its partitions owned (generation -1)
    g = member_in_generation_1({("t", 0)}, "cooperative-sticky")
    g.x(m.SyncGroupRequest(group_id="g", generation_id=1, member_id="m1"),
        m.SyncGroupResponse(error=E.ILLEGAL_GENERATION), 5_000, 5_005)
    g.join(5_010, "m1", 2, "cooperative-sticky", {("t", 0)}, -1)
    assert g.rules() == ["CooperativeOwnedIsAssigned"]
    # Kafka's own client loses them first: its rejoin reports nothing owned
    g = member_in_generation_1({("t", 0)}, "cooperative-sticky")
    g.x(m.SyncGroupRequest(group_id="g", generation_id=1, member_id="m1"),
        m.SyncGroupResponse(error=E.ILLEGAL_GENERATION), 5_000, 5_005)
    g.join(5_010, "m1", 2, "cooperative-sticky", set(), -1)
    assert g.rules() == []


def test_heartbeating_on_after_being_fenced() -> None:
    g = member_in_generation_1({("t", 0)})
    g.heartbeat(3_000, "m1", 1, E.ILLEGAL_GENERATION)
    g.heartbeat(3_500, "m1", 1, E.ILLEGAL_GENERATION)  # sent before the answer reached it
    assert g.rules() == []
    g.heartbeat(6_000, "m1", 1, E.ILLEGAL_GENERATION)
    assert g.rules() == ["ClientStopsWhenFenced"]


def test_committing_on_after_being_fenced() -> None:
    g = member_in_generation_1({("t", 0)})
    g.commit(3_000, "m1", 1, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    g.commit(9_000, "m1", 1, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    assert "ClientStopsWhenFenced" in g.rules()


def stale_heartbeat_then_rejoin(rejoin_member: str) -> Group:
    g = member_in_generation_1({("t", 0)})
    g.heartbeat(4_000, "m1", 1, E.NONE)
    g.join(4_100, "m1", 2, "range", set(), 1)  # generation 2 reaches the member at 4105 ms
    g.heartbeat(4_090, "m1", 1, E.ILLEGAL_GENERATION)  # sent with 1, answered at 4095... late:
    g.exchanges[-1] = Exchange(g.exchanges[-1].line, WireExchange(
        **{**g.exchanges[-1].event.__dict__, "received_ms": 4_200.0}))
    g.join(5_000, "m1", 3, "range", set(), 2, req_member=rejoin_member)
    return g


def test_a_stale_heartbeat_error_does_not_reset_the_member() -> None:
    assert stale_heartbeat_then_rejoin("m1").rules() == []
    assert stale_heartbeat_then_rejoin("").rules() == ["ClientIgnoresStaleErrors"]


def test_a_reset_in_the_millisecond_of_the_stale_error_is_seen() -> None:
    """The buggy reset rejoins in the poll that handled the stale answer: its JoinGroup
    leaves in the same millisecond as the answer arrived (the campaign's
    resets-on-stale-heartbeat-error mutant, missed while the rule looked only at requests
    sent strictly later)."""
    def group(rejoin_member: str) -> Group:
        g = stale_heartbeat_then_rejoin(rejoin_member)
        last = g.exchanges[-1]
        g.exchanges[-1] = Exchange(last.line, WireExchange(
            **{**last.event.__dict__, "sent_ms": 4_200.0, "received_ms": 4_210.0}))
        return g

    assert group("m1").rules() == []
    assert group("").rules() == ["ClientIgnoresStaleErrors"]


def test_a_current_commit_error_before_the_stale_heartbeat_justifies_the_reset() -> None:
    """A commit of the current generation, sent before the stale heartbeat and answered
    ILLEGAL_GENERATION before the rejoin, resets the member rightly (resetStateOnResponseError),
    whichever was sent first."""
    def group(commit_error: Error) -> Group:
        g = member_in_generation_1({("t", 0)})
        g.join(4_100, "m1", 2, "range", set(), 1)
        g.commit(19_990, "m1", 2, ("t", 0), answer=commit_error)
        g.x(m.HeartbeatRequest(group_id="g", generation_id=1, member_id="m1"),
            m.HeartbeatResponse(error=E.ILLEGAL_GENERATION), 20_000, 20_005)
        # the generation reset, the member id kept (ILLEGAL_GENERATION: KAFKA-13419)
        g.join(20_500, "m1", 3, "range", set(), -1, req_member="m1")
        return g

    assert group(E.ILLEGAL_GENERATION).rules() == []
    assert group(E.NONE).rules() == ["ClientIgnoresStaleErrors"]


def test_a_current_error_in_flight_with_a_stale_heartbeat_justifies_the_reset() -> None:
    """The stale heartbeat and the member's SyncGroup of its current generation leave
    together; both are answered UNKNOWN_MEMBER_ID (the member was removed while paused): the
    SyncGroup's error is current, and the rejoin without a member id is Kafka's answer to it
    (the campaign's pause-before-rejoin pattern met this)."""
    def group(sync_error: Error) -> Group:
        g = member_in_generation_1({("t", 0)})
        g.join(4_100, "m1", 2, "range", set(), 1)
        g.x(m.HeartbeatRequest(group_id="g", generation_id=1, member_id="m1"),
            m.HeartbeatResponse(error=E.UNKNOWN_MEMBER_ID), 20_000, 20_005)
        # a commit of the old generation too, rejected: as stale as the heartbeat
        g.commit(20_000, "m1", 1, ("t", 0), answer=E.ILLEGAL_GENERATION)
        g.x(m.SyncGroupRequest(group_id="g", generation_id=2, member_id="m1"),
            m.SyncGroupResponse(error=sync_error, assignment=Assignment(from_pairs(set())).encode()),
            20_000, 20_005)
        g.join(20_500, "m2", 3, "range", set(), -1, req_member="")
        return g

    assert group(E.UNKNOWN_MEMBER_ID).rules() == []
    assert group(E.NONE).rules() == ["ClientIgnoresStaleErrors"]


def test_a_restart_after_a_stale_heartbeat_error_is_not_a_reset() -> None:
    """A JoinGroup without a member id opening a new connection of the same client id is a
    new process (a static member's restart) or a reconnect, not the member resetting on
    the stale error (the campaign's static-restart-in-rebalance pattern met this)."""
    g = stale_heartbeat_then_rejoin("")
    last = g.exchanges[-1]
    g.exchanges[-1] = Exchange(last.line, dataclasses.replace(last.event, connection="a#2"))
    assert g.rules() == []


def rejoin_after(answer: Error, api: str = "Heartbeat", rejoin_member: str = "", connection: str = "a",
                 topics: tuple[str, ...] = ("t",), instance: str | None = None, assignor: str = "range") -> Group:
    """m1 in generation 1; then ``api`` (Heartbeat, SyncGroup, OffsetCommit or JoinGroup of
    generation 1) is answered ``answer``, and m1 rejoins as ``rejoin_member`` from client
    ``connection``'s connection (``a``: the same one)."""
    g = member_in_generation_1({("t", 0)})
    if api == "Heartbeat":
        g.heartbeat(3_000, "m1", 1, answer)
    elif api == "OffsetCommit":
        g.commit(3_000, "m1", 1, ("t", 0), answer=answer)
    elif api == "SyncGroup":
        g.x(m.SyncGroupRequest(group_id="g", generation_id=1, member_id="m1"),
            m.SyncGroupResponse(error=answer), 3_000, 3_005)
    else:
        meta = Subscription(("t",), None, from_pairs(set()), 1).encode()
        g.x(m.JoinGroupRequest(group_id="g", member_id="m1", protocols=(m.JoinGroupProtocol(name="range", metadata=meta),)),
            m.JoinGroupResponse(error=answer, member_id="m1"), 3_000, 3_005)
    meta = Subscription(topics, None, from_pairs(set()), -1).encode()
    g.x(m.JoinGroupRequest(group_id="g", member_id=rejoin_member, group_instance_id=instance,
                           protocols=(m.JoinGroupProtocol(name=assignor, metadata=meta),)),
        m.JoinGroupResponse(error=E.MEMBER_ID_REQUIRED, member_id="m2"), 3_100, 3_105)
    if connection != "a":
        last = g.exchanges[-1]
        g.exchanges[-1] = Exchange(last.line, dataclasses.replace(last.event, connection=f"{connection}#1"))
    return g


@pytest.mark.parametrize("api", ["Heartbeat", "SyncGroup", "OffsetCommit"])
def test_kafka_13419_illegal_generation_keeps_the_member_id(api: str) -> None:
    """KAFKA-13419 (fixed in 3.2.0): ILLEGAL_GENERATION resets the generation only
    (AbstractCoordinator.resetStateOnResponseError, shouldResetMemberId false), so the
    rejoin carries the member id; the buggy client rejoined without it."""
    assert rejoin_after(E.ILLEGAL_GENERATION, api, rejoin_member="m1").rules() == []
    assert rejoin_after(E.ILLEGAL_GENERATION, api).rules() == ["ClientKeepsMemberId"]


@pytest.mark.parametrize("answer", [E.REBALANCE_IN_PROGRESS, E.COORDINATOR_LOAD_IN_PROGRESS])
def test_kafka_13214_a_retriable_join_error_keeps_the_member_id(answer: Error) -> None:
    """KAFKA-13214 (fixed in 2.7.2, 2.8.1, 3.0.0): a retriable JoinGroup error keeps the
    member id; judged on the connection it came on."""
    assert rejoin_after(answer, "JoinGroup", rejoin_member="m1").rules() == []
    assert rejoin_after(answer, "JoinGroup").rules() == ["ClientKeepsMemberId"]


def test_a_member_id_is_dropped_lawfully() -> None:
    """UNKNOWN_MEMBER_ID (Heartbeat, SyncGroup, OffsetCommit, JoinGroup) or a LeaveGroup
    drops the id; a new connection (a restart, or the Java client's reconnect after a
    coordinator change) is not judged, nor are static members, Kafka Streams (its consumer
    leaves without a LeaveGroup), nor a rejoin to other topics (unsubscribe while
    unjoined sends nothing)."""
    for api in ("Heartbeat", "SyncGroup", "OffsetCommit", "JoinGroup"):
        assert rejoin_after(E.UNKNOWN_MEMBER_ID, api).rules() == [], api
    assert rejoin_after(E.ILLEGAL_GENERATION, connection="b").rules() == []
    assert rejoin_after(E.ILLEGAL_GENERATION, instance="i1").rules() == []
    assert rejoin_after(E.ILLEGAL_GENERATION, assignor="stream").rules() == []
    assert rejoin_after(E.ILLEGAL_GENERATION, topics=("t", "u")).rules() == []
    # a member silent past its session timeout (10 s) is gone at the coordinator: dropping
    # its id then is not judged (librdkafka does on its own session timeout)
    for at, rules in ((20_000, []), (5_000, ["ClientKeepsMemberId"])):
        quiet = member_in_generation_1({("t", 0)})
        quiet.join(at, "m2", 2, req_member="")
        assert quiet.rules() == rules, at
    left = member_in_generation_1({("t", 0)})
    left.x(m.LeaveGroupRequest(group_id="g", members=(m.MemberIdentity("m1"),)), m.LeaveGroupResponse(error=E.NONE),
           3_000, 3_005)
    left.join(3_100, "m2", 2, req_member="")
    assert left.rules() == []


def test_a_member_id_given_by_member_id_required_is_used() -> None:
    """KIP-394: the id MEMBER_ID_REQUIRED gives is the next JoinGroup's
    (JoinGroupResponseHandler sets it and rejoins)."""
    def group(second: str) -> Group:
        g = Group()
        meta = Subscription(("t",), None, from_pairs(set()), -1).encode()
        for at, member in ((0, ""), (10, second)):
            g.x(m.JoinGroupRequest(group_id="g", member_id=member, protocols=(m.JoinGroupProtocol(name="range", metadata=meta),)),
                m.JoinGroupResponse(error=E.MEMBER_ID_REQUIRED, member_id="m1"), at, at + 5)
        return g

    assert group("m1").rules() == []
    assert group("").rules() == ["ClientKeepsMemberId"]


def test_a_reset_on_a_stale_unknown_member_id_is_not_this_rules() -> None:
    """librdkafka (Kafka 4.1.2 recorded, zombie-commit): a heartbeat without a member id
    still in flight as it rejoins is answered UNKNOWN_MEMBER_ID in the millisecond
    MEMBER_ID_REQUIRED gives it an id, and it rejoins without that id. A reset on an error
    meant for an older id: not a loss without a word."""
    def group(error: Error) -> Group:
        g = Group()
        meta = Subscription(("t",), None, from_pairs(set()), -1).encode()
        join = m.JoinGroupRequest(group_id="g", member_id="", protocols=(m.JoinGroupProtocol(name="range", metadata=meta),))
        g.x(m.HeartbeatRequest(group_id="g", generation_id=2, member_id=""), m.HeartbeatResponse(error=error), 0, 9.9)
        g.x(join, m.JoinGroupResponse(error=E.MEMBER_ID_REQUIRED, member_id="m1"), 1, 10)
        g.x(join, m.JoinGroupResponse(error=E.MEMBER_ID_REQUIRED, member_id="m2"), 11, 12)
        return g

    assert group(E.UNKNOWN_MEMBER_ID).rules() == []
    assert group(E.REBALANCE_IN_PROGRESS).rules() == ["ClientKeepsMemberId"]


def test_an_id_given_to_a_static_member_is_not_judged() -> None:
    """A static member's id is reset without a LeaveGroup on a poll timeout
    (maybeLeaveGroup): an id a JoinGroup with a group.instance.id got is not judged, even
    when the next JoinGroup on the connection leaves the instance id out (a tool mixing
    them, the wire fuzzer)."""
    def group(instance: str | None) -> Group:
        g = Group()
        meta = Subscription(("t",), None, from_pairs(set()), -1).encode()
        g.x(m.JoinGroupRequest(group_id="g", member_id="", group_instance_id=instance,
                               protocols=(m.JoinGroupProtocol(name="range", metadata=meta),)),
            m.JoinGroupResponse(error=E.NONE, generation_id=1, protocol_name="range", leader="x", member_id="m1"), 0, 5)
        g.sync(10, "m1", 1, {("t", 0)})
        g.join(3_000, "m2", 2, req_member="")
        return g

    assert group("i1").rules() == []
    assert group(None).rules() == ["ClientKeepsMemberId"]


def test_an_id_the_process_was_not_given_is_not_judged() -> None:
    """A tool that sends other members' ids (the wire fuzzer) holds no id of its own."""
    g = Group()
    g.heartbeat(0, "someone-else", 1, E.ILLEGAL_GENERATION)
    g.join(100, "m2", 1, req_member="")
    assert g.rules() == []


def leader_then(*steps: str) -> Group:
    """m1 told it leads generation 1, then ``steps`` (sync, leave, join), 100 ms apart."""
    g = Group()
    meta = Subscription(("t",), None, from_pairs(set()), -1).encode()
    join = m.JoinGroupRequest(group_id="g", member_id="m1", protocols=(m.JoinGroupProtocol(name="range", metadata=meta),))
    g.x(join, m.JoinGroupResponse(error=E.NONE, generation_id=1, protocol_type="consumer", protocol_name="range",
                                  leader="m1", member_id="m1"), 0, 5)
    for i, step in enumerate(steps, start=1):
        if step == "sync":
            g.sync(100 * i, "m1", 1, {("t", 0)})
        elif step == "leave":
            g.x(m.LeaveGroupRequest(group_id="g", members=(m.MemberIdentity("m1"),)), m.LeaveGroupResponse(error=E.NONE),
                100 * i, 100 * i + 5)
        else:
            g.x(join, m.JoinGroupResponse(error=E.REBALANCE_IN_PROGRESS), 100 * i, 100 * i + 5)
    return g


def test_kafka_13406_a_leader_syncs_before_it_rejoins() -> None:
    """KAFKA-13406 (fixed in 2.8.2, 3.0.1, 3.1.0): the leader's own check of its cooperative
    assignment threw, so it rejoined without SyncGroup, generation after generation; Kafka's
    JoinGroupResponseHandler runs onLeaderElected, which sends SyncGroup, first."""
    assert leader_then("sync", "join").rules() == []
    assert leader_then("leave", "join").rules() == []
    assert leader_then("join").rules() == ["LeaderSyncsItsGeneration"]


def consumer_member(*steps: tuple[float, int, Error, int]) -> Group:
    """A consumer-protocol member m1's heartbeats: (sent at, member epoch, answer, epoch answered)."""
    g = Group()
    for at, epoch, answer, answered in steps:
        join = epoch == 0  # a full request, as a join must be
        g.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=epoch,
                                          rebalance_timeout_ms=30_000 if join else -1,
                                          subscribed_topic_names=("t",) if join else None,
                                          topic_partitions=() if join else None),
            ConsumerGroupHeartbeatResponse(error=answer, member_id="m1", member_epoch=answered,
                                           heartbeat_interval_ms=3_000), at, at + 5)
    return g


T_ID = TopicId(0x7E57)
NAMES = {T_ID: "t"}


def consumer_beat(g: Group, at: float, epoch: int, owned: tuple[int, ...] | None, answer: Error = E.NONE,
                  answered: int = 1, assigned: tuple[int, ...] | None = None) -> None:
    """m1's ConsumerGroupHeartbeat at ``at``: reporting ``owned`` partitions of t (None: not
    sent), answered ``answer`` with epoch ``answered`` and, when given, the assignment."""
    join = epoch == 0
    g.x(ConsumerGroupHeartbeatRequest(
            group_id="g", member_id="m1", member_epoch=epoch, rebalance_timeout_ms=30_000 if join else -1,
            subscribed_topic_names=("t",) if join else None,
            topic_partitions=None if owned is None else (HeartbeatTopicPartitions(T_ID, owned),) if owned else ()),
        ConsumerGroupHeartbeatResponse(
            error=answer, member_id="m1", member_epoch=answered if answer is E.NONE else 0,
            heartbeat_interval_ms=3_000 if answer is E.NONE else 0,
            assignment=None if assigned is None else HeartbeatAssignment((HeartbeatTopicPartitions(T_ID, assigned),))),
        at, at + 5)


def test_a_consumer_protocol_member_fetches_what_it_owns_only() -> None:
    """A KIP-848 member owns at most what it last reported owning and the last assignment
    it was sent (ConsumerMembershipManager reconciles: it stops fetching what it revokes
    before it reports it gone, and fetches what it gains before reporting it); fetches of
    anything else were not judged (the rule followed JoinGroup and SyncGroup only)."""
    g = Group()
    consumer_beat(g, 0, 0, (), answered=1, assigned=(0, 1))
    g.fetch(100, ("t", 0), ("t", 1))  # assigned, not reported yet
    consumer_beat(g, 3_000, 1, (0, 1), answered=2, assigned=(0,))
    g.fetch(3_200, ("t", 0), ("t", 1))  # t-1 being revoked: still reported owned
    consumer_beat(g, 3_300, 2, (0,), answered=2)
    assert g.rules(NAMES) == []
    assert g.rules() == []  # topic ids without names: not judged
    g.fetch(5_000, ("t", 1))  # revoked and reported gone
    assert g.rules(NAMES) == ["ClientFetchesOwnedOnly"]
    g.fetch(5_100, ("t", 3))  # never assigned
    assert g.rules(NAMES) == ["ClientFetchesOwnedOnly"] * 2


def test_a_fenced_consumer_protocol_member_owns_its_partitions_until_it_rejoins() -> None:
    """Fenced, the Java client keeps its partitions until onPartitionsLost has run, then
    clears them and rejoins at epoch 0: fetches in between are its own, after the rejoin not;
    a leave gives everything up first."""
    g = Group()
    consumer_beat(g, 0, 0, (), answered=1, assigned=(0, 1))
    consumer_beat(g, 3_000, 1, (0, 1), answer=E.FENCED_MEMBER_EPOCH)
    g.fetch(6_000, ("t", 0))  # the lost-partitions callback is slow: still assigned
    consumer_beat(g, 7_000, 0, (), answered=3, assigned=(1,))
    g.fetch(7_100, ("t", 1))
    assert g.rules(NAMES) == []
    g.fetch(9_000, ("t", 0))
    assert g.rules(NAMES) == ["ClientFetchesOwnedOnly"]
    consumer_beat(g, 10_000, -1, None, answered=-1)
    g.fetch(12_000, ("t", 1))
    assert g.rules(NAMES) == ["ClientFetchesOwnedOnly"] * 2


def test_kafka_16251_a_fenced_consumer_rejoins_at_epoch_zero() -> None:
    """KAFKA-16251 (fixed in 3.8.0): after FENCED_MEMBER_EPOCH the member stops
    heartbeating until its lost-partitions callback ends, then joins at epoch 0
    (AbstractMembershipManager.transitionToFenced, resetEpoch); the buggy client went on
    with the fenced epoch."""
    joined = [(0, 0, E.NONE, 5), (3_000, 5, E.NONE, 5)]
    for fence in (E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID):
        assert consumer_member(*joined, (6_000, 5, fence, -1), (6_500, 0, E.NONE, 7), (9_500, 7, E.NONE, 7)).rules() == []
        bad = consumer_member(*joined, (6_000, 5, fence, -1), (9_000, 5, fence, -1), (12_000, 0, E.NONE, 7))
        assert bad.rules() == ["ConsumerClientRejoinsAtZero"]
    # a heartbeat within the slack of the answer is not judged
    assert consumer_member(*joined, (6_000, 5, E.FENCED_MEMBER_EPOCH, -1), (6_100, 5, E.FENCED_MEMBER_EPOCH, -1),
                           (7_000, 0, E.NONE, 7)).rules() == []


def test_kafka_19335_a_consumer_that_left_rejoins_at_epoch_zero() -> None:
    """KAFKA-19335 (fixed in 4.1): after its leave (epoch -1) the member's rejoin carries
    epoch 0; the buggy client sent -1 again (a late answer's epoch overwrote it)."""
    joined = [(0, 0, E.NONE, 5), (3_000, 5, E.NONE, 5), (4_000, -1, E.NONE, -1)]
    assert consumer_member(*joined, (8_000, 0, E.NONE, 7)).rules() == []
    # the buggy rejoin: a JOINING member's full request, with the leave's epoch
    bad = consumer_member(*joined)
    bad.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=-1, rebalance_timeout_ms=30_000,
                                        subscribed_topic_names=("t",), topic_partitions=()),
          ConsumerGroupHeartbeatResponse(error=E.UNKNOWN_MEMBER_ID, member_epoch=0, heartbeat_interval_ms=0),
          8_000, 8_005)
    assert bad.rules() == ["ConsumerClientRejoinsAtZero"]
    # a bare leave again (unsubscribe, then close) is let be; a positive epoch is not
    assert consumer_member(*joined, (8_000, -1, E.UNKNOWN_MEMBER_ID, -1)).rules() == []
    assert consumer_member(*joined, (8_000, 5, E.UNKNOWN_MEMBER_ID, -1)).rules() == ["ConsumerClientRejoinsAtZero"]
    # the Java client rejoins as soon as its leave is sent: the leave's answer, after the
    # join went out, says nothing of the member (Kafka 4.1.2 recorded, slow-revocation)
    overlapped = consumer_member((0, 0, E.NONE, 5), (3_000, 5, E.NONE, 5))
    overlapped.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=-1),
                 ConsumerGroupHeartbeatResponse(error=E.UNKNOWN_MEMBER_ID, member_epoch=0, heartbeat_interval_ms=0),
                 4_000, 4_010)
    overlapped.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=0, rebalance_timeout_ms=30_000,
                                               subscribed_topic_names=("t",), topic_partitions=()),
                 ConsumerGroupHeartbeatResponse(error=E.NONE, member_id="m1", member_epoch=7, heartbeat_interval_ms=3_000),
                 4_004, 4_020)
    overlapped.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=7),
                 ConsumerGroupHeartbeatResponse(error=E.NONE, member_id="m1", member_epoch=7, heartbeat_interval_ms=3_000),
                 7_000, 7_005)
    assert overlapped.rules() == []
    # a leave that failed (the coordinator moved) says nothing of where the member is
    failed = [(0, 0, E.NONE, 5), (4_000, -1, E.NOT_COORDINATOR, -1)]
    assert consumer_member(*failed, (8_000, -1, E.NONE, -1)).rules() == []


def test_kafka_16190_a_join_is_a_full_request() -> None:
    """KAFKA-16190 (fixed in 3.8.0): the rejoin after fencing left out the fields sent only
    when changed; a join at epoch 0 must carry them (the coordinator answers
    INVALID_REQUEST), and a heartbeat needs its member id."""
    assert consumer_member((0, 0, E.NONE, 5), (3_000, 5, E.NONE, 5)).rules() == []
    g = consumer_member((0, 0, E.NONE, 5), (3_000, 5, E.FENCED_MEMBER_EPOCH, 0))
    g.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=0, rebalance_timeout_ms=30_000),
        ConsumerGroupHeartbeatResponse(error=E.INVALID_REQUEST, member_epoch=0, heartbeat_interval_ms=0), 6_000, 6_005)
    g.x(ConsumerGroupHeartbeatRequest(group_id="g", member_id="", member_epoch=7),
        ConsumerGroupHeartbeatResponse(error=E.INVALID_REQUEST, member_epoch=0, heartbeat_interval_ms=0), 6_100, 6_105)
    [join, anonymous] = [f for f in client_findings(GroupTrace("g", g.exchanges)) if f.rule.name == "ConsumerClientRequestValid"]
    assert "TopicPartitions must be empty when (re-)joining." in join.detail
    assert "MemberId can't be empty." in anonymous.detail


def test_heartbeat_cadence_slower_than_the_session() -> None:
    steady = member_in_generation_1({("t", 0)})
    for i in range(1, 20):
        steady.heartbeat(10 + 3_000 * i, "m1", 1)
    assert steady.rules() == []
    paused = member_in_generation_1({("t", 0)})
    for at in (3_000, 6_000, 21_000, 24_000):  # one pause: not a cadence
        paused.heartbeat(at, "m1", 1)
    assert paused.rules() == []
    slow = member_in_generation_1({("t", 0)})
    for i in range(1, 5):
        slow.heartbeat(10 + 12_000 * i, "m1", 1)
    assert slow.rules() == ["HeartbeatKeepsSessionAlive"]


def test_a_client_finding_is_a_violation_naming_the_client() -> None:
    """A simulated group (conforming), then client ``a`` fetches a partition ``b`` owns."""
    data = {"name": "two", "group_id": "g", "until_ms": 15_000, "topics": {"t": 2},
            "defaults": {"assignors": ["range"]},
            "members": [{"name": "a", "start_ms": 0}, {"name": "b", "start_ms": 100}]}
    trace = simulate(load_scenario_text(json.dumps(data), "two.json")).trace
    raw = wire_trace(trace)
    g = group_trace(load_bytes(raw, "two")).groups["g"]
    assert validate_group(g).verdict == "conforming"
    last = max(x.received for x in g.exchanges)
    b_parts = [p for _, fe in g.fetches if fe.client_id == "b" for p in fe.partitions]
    steal = FetchEvent(10_000, "a#1", "a", 0, 77, last + 3_000, last + 3_001, (b_parts[-1],), "g")
    g.fetches.append((10_001, steal))
    v = validate_group(g)
    assert v.verdict == "violation" and v.violation is not None
    assert (v.violation.side, v.violation.rule, v.violation.client_id, v.violation.connection) == (
        "client", "ClientFetchesOwnedOnly", "a", "a#1")
    text = "\n".join(_group_text(v))
    assert "deviating side: client 'a' on connection a#1" in text
    assert "client sent: Fetch of t-" in text
    assert v.to_json()["violation"]["side"] == "client"


@pytest.mark.parametrize("path", [*KAFKA, ROOT / "examples" / "validator-false-positives" / "kafka-leader-reelection.jsonl"],
                         ids=lambda p: p.name)
def test_no_client_finding_on_kafka_recordings(path: Path) -> None:
    grouped = group_trace(load_path(path))
    names = topic_names(path)
    for g in grouped.groups.values():
        assert client_findings(g, topic_names=names) == []
    assert validate_path(path).worst() == "conforming"


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "validator-false-positives" / "client-rules").glob("*.jsonl")),
                         ids=lambda p: p.name)
def test_real_clients_the_new_rules_once_misjudged(path: Path) -> None:
    """Kafka 4.1.2 with real clients (the conformance suite, 2026-11-28): librdkafka
    resetting on a stale UNKNOWN_MEMBER_ID as it rejoins (zombie-commit), and the Java
    KIP-848 client rejoining while its leave is in flight (slow-revocation). Both were
    called client violations by the first ClientKeepsMemberId and ConsumerClientRejoinsAtZero."""
    grouped = group_trace(load_path(path))
    names = topic_names(path)
    assert grouped.groups and all(client_findings(g, topic_names=names) == [] for g in grouped.groups.values())


def topic_names(path: Path) -> dict[TopicId, str]:
    """The recording's topic ids by name (its metadata events), as the validator gives
    them to the client rules."""
    return {t.topic_id: t.name for x in load_path(path).events if isinstance(x.event, MetadataEvent)
            for t in x.event.topics}


def test_a_java_kip848_consumer_fetching_a_partition_it_was_not_assigned_is_named() -> None:
    """The Java consumer of the slow-revocation recording (KIP-848, Kafka 4.1.2) made to
    fetch a partition it was never assigned: named (its topic ids named by the recording's
    metadata events)."""
    path = ROOT / "examples" / "validator-false-positives" / "client-rules" / "slow-revocation-java-kip848-4.1.2.jsonl"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"kind":"fetch"' in line)
    o = json.loads(lines[at])
    o["partitions"][0]["partition"] = 97
    lines[at] = json.dumps(o)
    [g] = validate_bytes("\n".join(lines).encode(), path.name).groups
    assert g.verdict == "violation" and g.violation is not None
    assert g.violation.rule == "ClientFetchesOwnedOnly" and g.violation.side == "client", g.violation


def test_kafka_recordings_carry_fetches_for_the_rules() -> None:
    assert len(KAFKA) >= 6
    for path in KAFKA:
        grouped = group_trace(load_path(path))
        assert sum(len(g.fetches) for g in grouped.groups.values()) > 0, path.name


def test_kafka_python_fetching_its_previous_generations_partitions_is_named() -> None:
    """A real kafka-python leader (conformance leader-departure against Kafka 4.1.2, in CI on
    a loaded machine, 2026-11-29): assigned t-0 alone in generation 2 (SyncGroup, line 28),
    it sent no heartbeat, commit or LeaveGroup after that and went on fetching t-0, t-1 and
    t-2, the partitions of its generation 1, to the end of the recording. Every answer of the
    broker conforms; the client is named, on its first Fetch after the assignment was
    answered and applied."""
    path = (ROOT / "examples" / "conformance" / "client-deviations"
            / "kafka-4.1.2-leader-departure--kafka-python--keeps-previous-generation.jsonl")
    [g] = validate_path(path).groups
    assert g.verdict == "violation" and g.violation is not None
    assert (g.violation.rule, g.violation.side, g.violation.line, g.violation.client_id) == \
        ("ClientFetchesOwnedOnly", "client", 46, "a")
    assert [d for d in g.divergences if d.side == "broker"] == []


def test_a_commits_fenced_instance_id_leaves_the_heartbeat_thread_going() -> None:
    """ClientStopsWhenFenced: a static member's OffsetCommit (or SyncGroup) answered
    FENCED_INSTANCE_ID resets nothing in the Java client (the error goes to the
    application), so its heartbeat thread sends the same member id and generation on; only
    a heartbeat's own FENCED_INSTANCE_ID resets it."""
    g = member_in_generation_1({("t", 0)})
    g.commit(3_000, "m1", 1, ("t", 0), answer=E.FENCED_INSTANCE_ID)
    g.x(m.SyncGroupRequest(group_id="g", generation_id=1, member_id="m1"),
        m.SyncGroupResponse(error=E.FENCED_INSTANCE_ID), 3_100, 3_105)
    g.heartbeat(6_000, "m1", 1, E.FENCED_INSTANCE_ID)
    assert g.rules() == []
    g.heartbeat(9_000, "m1", 1, E.FENCED_INSTANCE_ID)
    assert g.rules() == ["ClientStopsWhenFenced"]


def test_a_consumer_fenced_by_its_heartbeat_stops_using_the_epoch() -> None:
    """ClientStopsWhenFenced, KIP-848: a ConsumerGroupHeartbeat at member epoch 5 answered
    FENCED_MEMBER_EPOCH (or UNKNOWN_MEMBER_ID) makes the Java client drop the epoch
    (transitionToFenced, resetEpoch): its OffsetCommits and OffsetFetches after that no
    longer carry it, a commit sent within the slack of the answer excepted; a later answer
    giving the member epoch 5 again makes it the member's own once more."""
    for error in (E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID):
        def fenced_at_5(error: Error = error) -> Group:
            g = consumer_member((0, 0, E.NONE, 5), (3_000, 5, error, 0))
            g.commit(3_500, "m1", 5, ("t", 0), answer=E.STALE_MEMBER_EPOCH)  # sent before the slack ran out
            g.commit(4_200, "m1", -1, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)  # without the epoch
            return g

        assert fenced_at_5().rules() == [], error
        late = fenced_at_5()
        late.commit(6_000, "m1", 5, ("t", 0), answer=E.STALE_MEMBER_EPOCH)
        assert late.rules() == ["ClientStopsWhenFenced"], error
        fetch = fenced_at_5()
        fetch.x(m.OffsetFetchRequest(group_id="g", member_id="m1", member_epoch=5),
                m.OffsetFetchResponse(error=E.STALE_MEMBER_EPOCH), 6_000, 6_005)
        assert fetch.rules() == ["ClientStopsWhenFenced"], error
        rejoined = consumer_member((0, 0, E.NONE, 5), (3_000, 5, error, 0), (3_100, 0, E.NONE, 7))
        rejoined.commit(6_000, "m1", 7, ("t", 0))
        assert rejoined.rules() == [], error
    again = consumer_member((0, 0, E.NONE, 5), (3_000, 5, E.FENCED_MEMBER_EPOCH, 0), (3_100, 0, E.NONE, 5))
    again.commit(6_000, "m1", 5, ("t", 0))
    assert again.rules() == []
    # a leave fenced (epoch -1) fences no epoch
    left = consumer_member((0, 0, E.NONE, 5), (3_000, -1, E.UNKNOWN_MEMBER_ID, 0))
    left.commit(6_000, "m1", 5, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    assert left.rules() == []


def test_a_java_kip848_consumer_committing_at_its_fenced_epoch_is_named() -> None:
    """The Java consumer of the slow-revocation recording (KIP-848, Kafka 4.1.2), fenced by
    the rebalance timeout while frozen, thawed and left (epoch -1, answered
    UNKNOWN_MEMBER_ID). Made to heartbeat at its epoch 1 there instead (answered
    UNKNOWN_MEMBER_ID as well: it is no member) and, after rejoining at epoch 4, to commit
    at epoch 1 (answered STALE_MEMBER_EPOCH): the commit is named, a client violation. With
    the heartbeat alone changed the recording conforms."""
    path = ROOT / "examples" / "validator-false-positives" / "client-rules" / "slow-revocation-java-kip848-4.1.2.jsonl"
    objs = [json.loads(line) for line in path.read_text().splitlines()]
    leave = next(i for i, o in enumerate(objs) if o.get("api") == "ConsumerGroupHeartbeat" and o["client_id"] == "a"
                 and o["request"]["member_epoch"] == -1 and o["response"]["error"] == "UNKNOWN_MEMBER_ID")
    objs[leave]["request"]["member_epoch"] = 1
    commit = next(i for i, o in enumerate(objs) if o.get("api") == "OffsetCommit" and o["client_id"] == "a"
                  and i > leave)
    assert objs[commit]["sent_ms"] > objs[leave]["received_ms"] + 2_000
    beat_only = "\n".join(json.dumps(o) for o in objs).encode()
    [g] = validate_bytes(beat_only, path.name).groups
    assert g.verdict == "conforming", g.violation
    objs[commit]["request"]["generation_id"] = 1
    objs[commit]["response"]["partitions"] = [{**p, "error": "STALE_MEMBER_EPOCH"}
                                              for p in objs[commit]["response"]["partitions"]]
    [g] = validate_bytes("\n".join(json.dumps(o) for o in objs).encode(), path.name).groups
    assert g.verdict == "violation" and g.violation is not None
    assert (g.violation.rule, g.violation.side, g.violation.line) == ("ClientStopsWhenFenced", "client", commit + 1)
    # (b's later OffsetFetch still shows the offset the commit stored in the recording: a
    # divergence of the edit, not of the rule)


def test_an_assignor_the_validator_does_not_know_may_be_cooperative() -> None:
    """Kafka Streams' assignor is named "stream" and supports only the cooperative protocol:
    its member keeps fetching what its JoinGroup reports owned during the rebalance, and
    commits a revoked task's partition in onPartitionsRevoked, after the SyncGroup, at the
    new generation. Neither is a finding; the same for a known eager assignor is."""
    for assignor, want in (("stream", []), ("range", ["ClientFetchesOwnedOnly", "ClientCommitsOwnedOnly"])):
        g = member_in_generation_1({("t", 0), ("t", 1)}, assignor)
        owned = {("t", 0), ("t", 1)} if assignor == "stream" else set()
        g.x(m.JoinGroupRequest(group_id="g", member_id="m1", protocols=(m.JoinGroupProtocol(
            name=assignor, metadata=Subscription(("t",), None, from_pairs(owned), 1).encode()),)),
            m.JoinGroupResponse(error=E.NONE, generation_id=2, protocol_type="consumer", protocol_name=assignor,
                                leader="the-leader", member_id="m1"), 5_000, 8_000)
        g.fetch(7_000, ("t", 0), ("t", 1))  # while the JoinGroup waits for the others
        g.sync(8_010, "m1", 2, {("t", 0)})
        g.commit(8_030, "m1", 2, ("t", 0), ("t", 1))
        assert sorted(g.rules()) == sorted(want), assignor


def test_a_generation_given_again_after_a_failover_is_the_members_own_again() -> None:
    """A coordinator that moves before a new generation is persisted reloads the group as it
    was and hands the member the same generation number again: a heartbeat of generation 2
    answered ILLEGAL_GENERATION by the new coordinator, the member's rejoin answered
    generation 2 with its member id, and its heartbeats at generation 2 after that are its
    own. Before that answer they are still a finding."""
    g = member_in_generation_1({("t", 0)})
    g.join(1_000, "m1", 2)
    g.sync(1_010, "m1", 2, {("t", 0)})
    g.heartbeat(3_000, "m1", 2, E.ILLEGAL_GENERATION)  # the new coordinator is at generation 1
    g.join(3_100, "m1", 2)  # ... and gives generation 2 again
    g.sync(3_120, "m1", 2, {("t", 0)})
    g.heartbeat(6_000, "m1", 2)
    g.commit(6_100, "m1", 2, ("t", 0))
    assert g.rules() == []
    h = member_in_generation_1({("t", 0)})
    h.join(1_000, "m1", 2)
    h.sync(1_010, "m1", 2, {("t", 0)})
    h.heartbeat(3_000, "m1", 2, E.ILLEGAL_GENERATION)
    h.heartbeat(6_000, "m1", 2)
    assert h.rules() == ["ClientStopsWhenFenced"]


def test_a_cooperative_member_whose_id_changed_may_commit_what_it_revokes() -> None:
    """A cooperative member whose onJoinPrepare commit is answered UNKNOWN_MEMBER_ID keeps
    its partitions and rejoins without a member id (a new one, m2), reporting them owned;
    after the SyncGroup it revokes what it was not given and commits it in the callback, at
    the new generation under the new id: what its JoinGroup reported owned is allowed."""
    g = member_in_generation_1({("t", 0), ("t", 1)}, "cooperative-sticky")
    g.heartbeat(3_000, "m1", 1, E.REBALANCE_IN_PROGRESS)
    g.commit(3_010, "m1", 1, ("t", 0), ("t", 1), answer=E.UNKNOWN_MEMBER_ID)
    g.join(3_030, "m2", 2, "cooperative-sticky", {("t", 0), ("t", 1)}, 1, req_member="")
    g.sync(3_050, "m2", 2, {("t", 0)})
    g.commit(3_070, "m2", 2, ("t", 1))
    assert "ClientCommitsOwnedOnly" not in g.rules()
    g.commit(3_090, "m2", 2, ("t", 2))  # never its own
    assert "ClientCommitsOwnedOnly" in g.rules()


def test_a_commits_fenced_instance_id_does_not_take_the_partitions_away() -> None:
    """The partitions stay the member's after its commit is answered FENCED_INSTANCE_ID (the
    Java client resets nothing; an application that catches the error polls and fetches on);
    a heartbeat's FENCED_INSTANCE_ID takes them."""
    g = member_in_generation_1({("t", 0)})
    g.commit(3_000, "m1", 1, ("t", 0), answer=E.FENCED_INSTANCE_ID)
    g.fetch(5_000, ("t", 0))
    assert g.rules() == []
    g.heartbeat(6_000, "m1", 1, E.FENCED_INSTANCE_ID)
    g.fetch(9_000, ("t", 0))
    assert g.rules() == ["ClientFetchesOwnedOnly"]


def test_a_consumer_protocol_commit_refused_leaves_the_member_as_it_was() -> None:
    """A consumer-protocol (KIP-848) member's OffsetCommit answered UNKNOWN_MEMBER_ID fails
    that commit only (CommitRequestManager); the member learns it is out from its next
    ConsumerGroupHeartbeat, so a commit at the same epoch before then is not
    ClientStopsWhenFenced. A classic member's is (its generation is reset)."""
    g = consumer_member((0, 0, E.NONE, 5))
    g.commit(1_000, "m1", 5, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    g.commit(2_500, "m1", 5, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    assert g.rules() == []
    h = member_in_generation_1({("t", 0)})
    h.commit(1_000, "m1", 1, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    h.commit(2_500, "m1", 1, ("t", 0), answer=E.UNKNOWN_MEMBER_ID)
    assert h.rules() == ["ClientStopsWhenFenced"]

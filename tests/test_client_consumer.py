"""The consumer model against the reference coordinator, with messages delivered at once."""

from __future__ import annotations

from groupspec.client.classic.consumer import ClusterView, Consumer, MemberState
from groupspec.client.config import ConsumerConfig
from groupspec.client.delayed_imbalance import DelayedImbalance
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Subscription, pairs
from groupspec.protocol.errors import Error

CLUSTER = ClusterView({"t": 4}, {("t", p): 10**9 for p in range(4)})  # always more to read


class Bus:
    """A coordinator and consumers; every message arrives at the moment it is sent."""

    def __init__(self) -> None:
        self.coord = Coordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
        self.consumers: dict[str, Consumer] = {}
        self.rid = 0
        self.owner: dict[int, str] = {}
        self.sent: list[tuple[int, str, m.Request]] = []

    def next_rid(self) -> int:
        self.rid += 1
        return self.rid

    def add(self, name: str, now: int, assignors: tuple[str, ...] = ("range",), **kw: object) -> Consumer:
        cfg = ConsumerConfig(group_id="g", client_id=name, assignors=assignors, topics=("t",),
                             session_timeout_ms=10_000, heartbeat_interval_ms=3_000,
                             max_poll_interval_ms=30_000, **kw)  # type: ignore[arg-type]
        c = Consumer(cfg, now, self.next_rid)
        self.consumers[name] = c
        return c

    def deliver(self, name: str, out: list[tuple[int, m.Request]], now: int) -> None:
        for rid, req in out:
            self.owner[rid] = name
            self.sent.append((now, name, req))
            res = self.coord.handle(rid, req, now)
            self.responses(res.responses, now)

    def responses(self, responses: list[tuple[int, m.Response]], now: int) -> None:
        for rid, resp in responses:
            name = self.owner[rid]
            self.deliver(name, self.consumers[name].on_response(rid, resp, now, CLUSTER), now)

    def run(self, start: int, end: int, step: int = 100) -> None:
        for now in range(start, end + 1, step):
            self.responses(self.coord.advance(now).responses, now)
            for name, c in list(self.consumers.items()):
                self.deliver(name, c.tick(now, CLUSTER), now)


def stable_pair(assignors: tuple[str, ...]) -> Bus:
    bus = Bus()
    bus.add("a", 0, assignors)
    bus.add("b", 0, assignors)
    bus.run(0, 8_000)
    assert all(c.state is MemberState.STABLE for c in bus.consumers.values())
    assert set().union(*(c.owned for c in bus.consumers.values())) == {("t", p) for p in range(4)}
    return bus


def test_eager_consumer_commits_and_revokes_everything_before_join_group() -> None:
    bus = stable_pair(("range",))
    a = bus.consumers["a"]
    held = set(a.owned)
    bus.sent.clear()
    bus.add("c", 8_100, ("range",))
    bus.run(8_100, 20_000)
    a_reqs = [type(req).__name__ for _, name, req in bus.sent if name == "a"]
    join = a_reqs.index("JoinGroupRequest")
    assert "OffsetCommitRequest" in a_reqs[:join]  # commit before revoke
    revoked = [e for e in a.events if e.kind == "revoked"]
    assert revoked and set(revoked[0].partitions) == held  # revoke-all
    join_req = next(req for _, name, req in bus.sent if name == "a" and isinstance(req, m.JoinGroupRequest))
    assert Subscription.decode(join_req.protocols[0].metadata).owned_partitions == {}


def test_cooperative_consumer_keeps_partitions_and_rejoins_after_revocation() -> None:
    coop = ("cooperative-sticky",)
    bus = stable_pair(coop)
    a, b = bus.consumers["a"], bus.consumers["b"]
    before = {"a": set(a.owned), "b": set(b.owned)}
    gen = a.generation_id
    bus.sent.clear()
    bus.add("c", 8_100, coop)
    bus.run(8_100, 20_000)
    # Owned partitions and generation travel in the subscription (KIP-429).
    join_req = next(req for _, name, req in bus.sent if name == "a" and isinstance(req, m.JoinGroupRequest))
    sub = Subscription.decode(join_req.protocols[0].metadata)
    assert pairs(sub.owned_partitions) == before["a"] and sub.generation_id == gen
    # Nobody lost everything: what was not taken away was kept.
    for name in ("a", "b"):
        c = bus.consumers[name]
        revoked = {tp for e in c.events if e.kind == "revoked" for tp in e.partitions}
        assert before[name] - revoked <= c.owned
    # One revocation, then a follow-up rebalance that hands the partition to c.
    c = bus.consumers["c"]
    assert c.owned and c.state is MemberState.STABLE
    assert c.generation_id == gen + 2
    assert len({tp for x in bus.consumers.values() for tp in x.owned}) == 4


def test_poll_timeout_dynamic_member_leaves_static_member_does_not() -> None:
    for static in (False, True):
        bus = Bus()
        c = bus.add("a", 0, group_instance_id="a-1" if static else None)
        bus.run(0, 5_000)
        assert c.state is MemberState.STABLE
        c.poll_blocked_until_ms = 100_000  # processing stalls; the heartbeat thread goes on
        bus.sent.clear()
        bus.run(5_100, 40_000)
        leaves = [req for _, _, req in bus.sent if isinstance(req, m.LeaveGroupRequest)]
        assert bool(leaves) is not static
        # resetGenerationOnLeaveGroup keeps the partitions assigned: they are lost in the
        # onJoinPrepare of the next poll's rejoin (ConsumerCoordinator.onJoinPrepare)
        assert c.owned and not any(e.kind == "lost" for e in c.events)
        bus.run(40_100, 100_000)
        assert any(e.kind == "lost" and e.at_ms == 100_000 for e in c.events)


def test_stale_heartbeat_error_is_ignored_kafka_9823() -> None:
    bus = Bus()
    c = bus.add("a", 0)
    bus.run(0, 5_000)
    gen, member = c.generation_id, c.member_id
    rid = bus.next_rid()
    c.inflight[rid] = ("Heartbeat", gen - 1, member)  # a heartbeat sent in an older generation
    c.on_response(rid, m.HeartbeatResponse(error=Error.ILLEGAL_GENERATION), 5_100, CLUSTER)
    assert (c.generation_id, c.state) == (gen, MemberState.STABLE) and c.owned
    rid = bus.next_rid()
    c.inflight[rid] = ("Heartbeat", gen, member)
    c.on_response(rid, m.HeartbeatResponse(error=Error.ILLEGAL_GENERATION), 5_200, CLUSTER)
    # resetStateOnResponseError: the generation goes now, the partitions at the next poll's
    # onJoinPrepare (no generation: onPartitionsLost)
    assert c.generation_id == -1 and c.owned and c.rejoin_needed
    bus.run(5_300, 5_500)
    assert any(e.kind == "lost" and e.partitions for e in c.events)


def test_commit_failures_surface_as_the_java_exceptions() -> None:
    bus = Bus()
    c = bus.add("a", 0)
    bus.run(0, 5_000)
    gen, member = c.generation_id, c.member_id

    def commit_error(e: Error, sent_gen: int) -> None:
        rid = bus.next_rid()
        c.inflight[rid] = ("OffsetCommit", sent_gen, member)
        c.on_response(rid, m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("t", 0, e),)), 5_100, CLUSTER)

    commit_error(Error.REBALANCE_IN_PROGRESS, gen)
    assert c.events[-1].kind == "rebalance_in_progress" and c.rejoin_needed
    commit_error(Error.ILLEGAL_GENERATION, gen)
    assert c.events[-1].kind == "commit_failed" and "CommitFailedException" in c.events[-1].detail
    # the generation is reset at once; the partitions are lost at the next poll's rejoin
    assert c.owned and c.generation_id == -1
    bus.run(5_200, 5_400)
    assert any(e.kind == "lost" and e.partitions for e in c.events)


def test_delayed_imbalance_holds_back_then_gives_to_the_newcomer() -> None:
    d = DelayedImbalance(max_delay_ms=30_000)
    p = {("t", i) for i in range(6)}
    first, delay = d.apply(0, {"a": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}, "c": {("t", 4), ("t", 5)}}, {})
    assert delay == 0 and set().union(*first.values()) == p
    # c departs: its partitions are held back for the delay
    second, delay = d.apply(10_000, {"a": {("t", 0), ("t", 1), ("t", 4)}, "b": {("t", 2), ("t", 3), ("t", 5)}},
                            {"a": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}})
    assert delay == 30_000 and set().union(*second.values()) == p - {("t", 4), ("t", 5)}
    # n joins with nothing during the delay: still held, the remaining delay is kept
    third, delay = d.apply(20_000, {"a": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}, "n": {("t", 4), ("t", 5)}},
                           {"a": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}, "n": set()})
    assert delay == 20_000 and third["n"] == set()
    # the delay expires: the held partitions go to the candidate
    fourth, delay = d.apply(40_000, {"a": {("t", 0), ("t", 4)}, "b": {("t", 2), ("t", 3)}, "n": {("t", 1), ("t", 5)}},
                            {"a": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}, "n": set()})
    assert delay == 0 and {("t", 4), ("t", 5)} <= fourth["n"]

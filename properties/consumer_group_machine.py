"""A Hypothesis state machine driving the reference coordinator's KIP-848 consumer groups
with a small cast of clients: join (dynamic or static), heartbeat reporting what they own,
slow revocation (a client still reporting partitions it was told to give up), stale
epochs, subscription changes, leave (static members also for a while), topics growing,
clock ticks (session and rebalance timeouts) and coordinator failovers.

After every step it checks:

- NoPartitionTwiceInv: no partition is held (assigned or pending revocation) by two members
  at once, at any epochs; and the group's partition epochs say exactly who holds what;
- EpochBoundInv: no member's epoch is ahead of the group epoch, nor the target's;
- TargetValidInv: the target gives each partition to at most one member, only partitions
  of topics the member subscribes to that exist;
- ClientOwnsRecordedInv: what a live client believes it owns is what the coordinator has it
  holding (so, with NoPartitionTwiceInv, no two live clients own a partition at once);
- ReplayInv: replaying the records emitted so far rebuilds the consumer groups exactly;
- ConvergenceInv (a rule): when every member heartbeats honestly for a few rounds with
  nothing changing, the group is Stable and every member holds exactly its target.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.consumer.group import ConsumerGroupState
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import apply_record
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_group_records import MemberState
from groupspec.protocol.errors import Error
from groupspec.protocol.records import Record
from groupspec.protocol.topic_id import TopicId

GROUP = "g"
TOPICS = {"t": TopicId(0xA1), "u": TopicId(0xB2)}
SESSION_MS = 10_000
REBALANCE_MS = 6_000
CONFIG = CoordinatorConfig(consumer_group_session_timeout_ms=SESSION_MS)
CLIENTS = ("c0", "c1", "c2")
SUBSCRIPTIONS = (("t",), ("t", "u"), ("u",))

Owned = dict[TopicId, frozenset[int]]


class InvariantViolated(AssertionError):
    def __init__(self, invariant: str, detail: str) -> None:
        super().__init__(f"{invariant}: {detail}")
        self.invariant = invariant


@dataclass
class Client:
    name: str
    member_id: str = ""
    epoch: int = 0
    joined: bool = False
    instance_id: str | None = None
    owned: Owned = field(default_factory=dict)
    #: an assignment received but not yet applied (revocation callbacks still running)
    pending: Owned | None = None


def _wire(owned: Owned) -> tuple[HeartbeatTopicPartitions, ...]:
    return tuple(HeartbeatTopicPartitions(t, tuple(sorted(ps))) for t, ps in owned.items() if ps)


class ConsumerGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.c = Coordinator(CONFIG)
        self.partitions = {"t": 4, "u": 2}
        self._set_topics()
        self.now = 0
        self.rid = 0
        self.incarnation = 0
        self.records: list[Record] = []
        self.clients = {n: Client(n) for n in CLIENTS}

    # ------------------------------------------------------------------ plumbing
    def _set_topics(self) -> None:
        self.c.set_topics([TopicMetadata(TOPICS[n], n, k) for n, k in self.partitions.items()])

    def _send(self, req: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
        self.rid += 1
        self.now += 1
        out = self.c.handle(self.rid, req, self.now)
        self.records.extend(out.records)
        resp = out.response_to(self.rid)
        assert isinstance(resp, ConsumerGroupHeartbeatResponse)
        note(f"{req.member_id} e{req.member_epoch} -> {resp.error.name} e{resp.member_epoch}")
        return resp

    def _reset(self, cl: Client) -> None:
        cl.joined, cl.epoch, cl.owned, cl.pending, cl.member_id = False, 0, {}, None, ""

    def _absorb(self, cl: Client, resp: ConsumerGroupHeartbeatResponse, apply: bool) -> None:
        if resp.error is not Error.NONE:
            # fenced, unknown, released instance id...: drop everything, rejoin later
            self._reset(cl)
            return
        cl.joined = True
        cl.epoch = resp.member_epoch
        if resp.assignment is not None:
            cl.pending = {tp.topic_id: frozenset(tp.partitions)
                          for tp in resp.assignment.topic_partitions if tp.partitions}
        if apply and cl.pending is not None:
            cl.owned, cl.pending = cl.pending, None

    # ------------------------------------------------------------------ rules
    @rule(name=st.sampled_from(CLIENTS), sub=st.sampled_from(SUBSCRIPTIONS), static=st.booleans())
    def join(self, name: str, sub: tuple[str, ...], static: bool) -> None:
        cl = self.clients[name]
        if cl.joined:
            return
        self.incarnation += 1
        cl.member_id = f"{name}-{self.incarnation}"
        cl.instance_id = f"i-{name}" if static else None
        resp = self._send(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id=cl.member_id, member_epoch=0, instance_id=cl.instance_id,
            rebalance_timeout_ms=REBALANCE_MS, subscribed_topic_names=sub, topic_partitions=()))
        self._absorb(cl, resp, apply=True)

    @rule(name=st.sampled_from(CLIENTS), slow=st.booleans())
    def heartbeat(self, name: str, slow: bool) -> None:
        """An honest heartbeat; a slow client applies a new assignment only next time."""
        cl = self.clients[name]
        if not cl.joined:
            return
        resp = self._send(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id=cl.member_id, member_epoch=cl.epoch,
            instance_id=cl.instance_id, topic_partitions=_wire(cl.owned)))
        self._absorb(cl, resp, apply=not slow)

    @rule(name=st.sampled_from(CLIENTS))
    def stale_epoch(self, name: str) -> None:
        """A duplicate from an older epoch: Kafka fences it unless it is the previous epoch
        with a subset of the assignment (a lost response)."""
        cl = self.clients[name]
        if not cl.joined or cl.epoch < 3:
            return
        g = self.c.state.consumer_groups[GROUP]
        m = g.members[cl.member_id]
        lost_response = m.previous_member_epoch == cl.epoch - 2 and all(
            ps <= m.assigned.get(t, frozenset()) for t, ps in cl.owned.items())
        resp = self._send(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id=cl.member_id, member_epoch=cl.epoch - 2,
            instance_id=cl.instance_id, topic_partitions=_wire(cl.owned)))
        if resp.error is Error.NONE and not lost_response:
            raise InvariantViolated("StaleEpochFencedInv", f"{cl.member_id} accepted at an old epoch")
        if resp.error is not Error.NONE and lost_response:
            raise InvariantViolated("StaleEpochFencedInv",
                                    f"{cl.member_id} fenced at its previous epoch with a subset")
        self._absorb(cl, resp, apply=True)

    @rule(name=st.sampled_from(CLIENTS), sub=st.sampled_from(SUBSCRIPTIONS))
    def change_subscription(self, name: str, sub: tuple[str, ...]) -> None:
        cl = self.clients[name]
        if not cl.joined:
            return
        resp = self._send(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id=cl.member_id, member_epoch=cl.epoch,
            instance_id=cl.instance_id, subscribed_topic_names=sub,
            topic_partitions=_wire(cl.owned)))
        self._absorb(cl, resp, apply=True)

    @rule(name=st.sampled_from(CLIENTS), temporarily=st.booleans())
    def leave(self, name: str, temporarily: bool) -> None:
        cl = self.clients[name]
        if not cl.joined:
            return
        epoch = -2 if temporarily and cl.instance_id is not None else -1
        self._send(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id=cl.member_id, member_epoch=epoch,
            instance_id=cl.instance_id))
        self._reset(cl)

    @rule(ms=st.sampled_from((500, 3_000, 7_000, 11_000)))
    def tick(self, ms: int) -> None:
        self.now += ms
        self.records.extend(self.c.advance(self.now).records)
        g = self.c.state.consumer_groups.get(GROUP)
        for cl in self.clients.values():
            if cl.joined and (g is None or g.members.get(cl.member_id) is None):
                self._reset(cl)  # it learns at its next heartbeat; it stops owning now

    @rule(topic=st.sampled_from(tuple(TOPICS)))
    def grow_topic(self, topic: str) -> None:
        if self.partitions[topic] < 6:
            self.partitions[topic] += 1
            self._set_topics()

    @rule()
    def failover(self) -> None:
        self.now += 1
        self.records.extend(self.c.failover(self.now).records)

    @precondition(lambda self: any(cl.joined for cl in self.clients.values()))
    @rule()
    def converge(self) -> None:
        """ConvergenceInv: honest members only, nothing else happening."""
        for _ in range(4):
            for cl in self.clients.values():
                if cl.joined:
                    self.heartbeat(cl.name, slow=False)
        g = self.c.state.consumer_groups.get(GROUP)
        live = [cl for cl in self.clients.values() if cl.joined]
        if g is None or not live or set(g.members) != {cl.member_id for cl in live}:
            return  # a member nobody heartbeats for (a zombie) holds the group up until it expires
        if g.state is not ConsumerGroupState.STABLE:
            raise InvariantViolated("ConvergenceInv", f"group is {g.state.value} after honest rounds")
        for cl in live:
            m = g.members[cl.member_id]
            if m.assigned != {t: ps for t, ps in g.target.get(cl.member_id, {}).items() if ps}:
                raise InvariantViolated("ConvergenceInv", f"{cl.member_id} holds {m.assigned}, "
                                        f"target {g.target.get(cl.member_id)}")

    # ------------------------------------------------------------------ invariants
    @invariant()
    def no_partition_twice(self) -> None:
        g = self.c.state.consumer_groups.get(GROUP)
        if g is None:
            return
        holder: dict[tuple[TopicId, int], str] = {}
        expected: dict[tuple[TopicId, int], int] = {}
        for mid, m in g.members.items():
            for a in (m.assigned, m.pending_revocation):
                for t, ps in a.items():
                    for p in ps:
                        other = holder.setdefault((t, p), mid)
                        if other != mid:
                            raise InvariantViolated(
                                "NoPartitionTwiceInv", f"{t}-{p} held by {other} and {mid}")
                        expected[(t, p)] = m.member_epoch
        if g.partition_epochs != expected:
            raise InvariantViolated("NoPartitionTwiceInv",
                                    f"partition epochs {g.partition_epochs} != holders {expected}")

    @invariant()
    def epoch_bound(self) -> None:
        g = self.c.state.consumer_groups.get(GROUP)
        if g is None:
            return
        if g.assignment_epoch > g.group_epoch:
            raise InvariantViolated("EpochBoundInv", "target epoch ahead of the group epoch")
        for mid, m in g.members.items():
            if m.member_epoch > g.group_epoch:
                raise InvariantViolated("EpochBoundInv", f"{mid} at {m.member_epoch} > {g.group_epoch}")

    @invariant()
    def target_valid(self) -> None:
        g = self.c.state.consumer_groups.get(GROUP)
        if g is None:
            return
        by_id = {TOPICS[n]: n for n in TOPICS}
        seen: set[tuple[TopicId, int]] = set()
        for mid, a in g.target.items():
            m = g.members.get(mid)
            for t, ps in a.items():
                name = by_id.get(t)
                if m is None or name is None or name not in m.subscribed_topic_names:
                    raise InvariantViolated("TargetValidInv", f"{mid} targeted {t} it does not subscribe")
                for p in ps:
                    if not 0 <= p < self.partitions[name] or (t, p) in seen:
                        raise InvariantViolated("TargetValidInv", f"{name}-{p} for {mid}")
                    seen.add((t, p))

    @invariant()
    def client_owns_recorded(self) -> None:
        g = self.c.state.consumer_groups.get(GROUP)
        for cl in self.clients.values():
            if not cl.joined or not cl.owned:
                continue
            m = g.members.get(cl.member_id) if g is not None else None
            if m is None:
                raise InvariantViolated("ClientOwnsRecordedInv", f"{cl.member_id} owns but is gone")
            for t, ps in cl.owned.items():
                held = m.assigned.get(t, frozenset()) | m.pending_revocation.get(t, frozenset())
                if not ps <= held:
                    raise InvariantViolated(
                        "ClientOwnsRecordedInv",
                        f"{cl.member_id} owns {sorted(ps)} of {t}, coordinator has {sorted(held)} "
                        f"({m.state.name})")
            if m.state is MemberState.UNKNOWN:
                raise InvariantViolated("ClientOwnsRecordedInv", "member in UNKNOWN state")

    @invariant()
    def replay(self) -> None:
        state = CoordinatorState()
        for rec in self.records:
            apply_record(state, rec)
        if state.consumer_groups != self.c.state.consumer_groups:
            raise InvariantViolated("ReplayInv", "records do not rebuild the consumer groups")

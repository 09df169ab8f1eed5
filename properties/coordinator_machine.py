"""A Hypothesis state machine driving the reference coordinator with a small cast of clients
that may behave well or badly: join, rejoin with stale ids, sync (the leader with a real
assignment), heartbeat, commit with the right or a stale generation (also every member at
once, which reaches commits between JoinGroup and SyncGroup), leave, restart (a
static member comes back with no member id), clock ticks and coordinator failovers.

After every step it checks, through :mod:`groupspec.invariants`:

- LeaderIsMemberInv, StaticMembersInv, PendingMembersInv, ParkedRequestsInv (state);
- ValidTransitionInv and GenerationMonotonicInv (every record against the state before it);
- NoStaleCommitInv: no commit from a stale generation, an unknown member or a fenced
  instance is stored, none while the group is CompletingRebalance, and a rejected commit
  leaves the stored offsets unchanged;
- OneOwnerPerGenerationInv: the assignments members receive in SyncGroup never give a
  partition to two members of one generation;
- ReplayInv: replaying the records emitted so far reproduces the coordinator's state.

A failure raises :class:`InvariantViolated` naming the invariant, so a test can show that
removing a rule from the coordinator makes exactly that invariant fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.invariants import InvariantMonitor, one_owner_per_generation
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.records import GroupRemoved, OffsetCommitted

GROUP = "g"
TOPIC = "t"
NUM_PARTITIONS = 4
SESSION_MS = 10_000
REBALANCE_MS = 20_000

#: Small timeouts so that expiry paths are reached in few steps.
CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=1_000,
    group_initial_rebalance_delay_ms=3_000,
    group_new_member_join_timeout_ms=30_000,
    offsets_retention_ms=120_000,
    offsets_retention_check_interval_ms=60_000,
)

SUBSCRIPTIONS = (Subscription((TOPIC,)).encode(), Subscription((TOPIC, "other")).encode())


class InvariantViolated(AssertionError):
    def __init__(self, invariant: str, detail: str) -> None:
        super().__init__(f"{invariant}: {detail}")
        self.invariant = invariant


@dataclass
class Client:
    name: str
    instance_id: str | None
    member_id: str = ""
    generation: int = -1
    is_leader: bool = False
    members_seen: tuple[str, ...] = ()
    join_rid: int | None = None


def range_like_assignment(member_ids: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """A correct assignment of TOPIC's partitions over ``member_ids`` (round robin)."""
    ordered = sorted(member_ids)
    out: dict[str, list[int]] = {mid: [] for mid in ordered}
    for p in range(NUM_PARTITIONS):
        out[ordered[p % len(ordered)]].append(p)
    return {mid: tuple(ps) for mid, ps in out.items()}


class CoordinatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.coordinator = Coordinator(CONFIG)
        self.monitor = InvariantMonitor()
        self.now = 0
        self.next_rid = 0
        self.clients = [
            Client("c0", None),
            Client("c1", None),
            Client("s2", "instance-2"),
        ]
        self.requests: dict[int, tuple[Client, m.Request]] = {}
        self.received: dict[int, dict[str, set[tuple[str, int]]]] = {}

    # ------------------------------------------------------------------ plumbing
    def _send(self, client: Client, request: m.Request) -> int:
        self.next_rid += 1
        rid = self.next_rid
        self.requests[rid] = (client, request)
        if isinstance(request, m.JoinGroupRequest):
            client.join_rid = rid  # before handling: the answer may come at once
        note(f"t={self.now} {client.name} -> {m.api_name(request)} {request}")
        offsets_before = self._offsets()
        out = self.coordinator.handle(rid, request, self.now)
        self._process(out)
        if isinstance(request, m.OffsetCommitRequest):
            self._check_commit(rid, request, out, offsets_before)
        return rid

    def _offsets(self) -> dict[tuple[str, int], int]:
        g = self.coordinator.state.groups.get(GROUP)
        return {} if g is None else {tp: c.committed_offset for tp, c in g.offsets.items()}

    def _process(self, out: Output) -> None:
        for v in self.monitor.apply_input(out.records, self.now):
            raise InvariantViolated(v.invariant, str(v))
        if any(isinstance(rec, GroupRemoved) for rec in out.records):
            # A deleted group that is created again starts over at generation 0: its
            # generations are a new sequence (earlier ones were checked already).
            self.received.clear()
        for rid, resp in out.responses:
            client, _ = self.requests[rid]
            note(f"t={self.now} {client.name} <- {m.api_name(resp)} {resp}")
            if isinstance(resp, m.JoinGroupResponse):
                self._on_join(client, rid, resp)
            elif isinstance(resp, m.SyncGroupResponse):
                self._on_sync(client, rid, resp)

    def _on_join(self, c: Client, rid: int, resp: m.JoinGroupResponse) -> None:
        if rid != c.join_rid:
            return  # an answer to a request this client no longer waits for
        c.join_rid = None
        if resp.error is Error.MEMBER_ID_REQUIRED:
            c.member_id = resp.member_id
        elif resp.error is Error.NONE:
            c.member_id = resp.member_id
            c.generation = resp.generation_id
            c.is_leader = resp.leader == resp.member_id
            c.members_seen = tuple(x.member_id for x in resp.members)
        elif resp.error in (Error.UNKNOWN_MEMBER_ID, Error.FENCED_INSTANCE_ID):
            c.member_id, c.generation, c.is_leader = "", -1, False

    def _on_sync(self, c: Client, rid: int, resp: m.SyncGroupResponse) -> None:
        _, req = self.requests[rid]
        assert isinstance(req, m.SyncGroupRequest)
        if resp.error is not Error.NONE:
            return
        parts = Assignment.decode(resp.assignment).partitions if resp.assignment else {}
        owned = {(t, p) for t, ps in parts.items() for p in ps}
        # A static member replaced in Stable keeps its assignment under the new member id
        # (KIP-345): the owner is the instance, so key static members by instance id.
        owner = req.group_instance_id or req.member_id
        self.received.setdefault(req.generation_id, {})[owner] = owned

    def _check_commit(
        self,
        rid: int,
        req: m.OffsetCommitRequest,
        out: Output,
        before: dict[tuple[str, int], int],
    ) -> None:
        resp = out.response_to(rid)
        assert isinstance(resp, m.OffsetCommitResponse)
        stored = [r for r in out.records if isinstance(r, OffsetCommitted)]
        if resp.errors() != {Error.NONE} and (stored or self._offsets() != before):
            raise InvariantViolated(
                "NoStaleCommitInv", f"rejected commit {resp.errors()} changed stored offsets"
            )

    # ------------------------------------------------------------------ rules
    clients_idx = st.integers(min_value=0, max_value=2)

    @rule(i=clients_idx, known=st.booleans(), meta=st.sampled_from([0, 0, 1]),
          version=st.sampled_from([9, 9, 3]), compatible=st.booleans())
    def join(self, i: int, known: bool, meta: int, version: int, compatible: bool) -> None:
        c = self.clients[i]
        protocols = (m.JoinGroupProtocol("range", SUBSCRIPTIONS[meta]),)
        if not compatible and meta == 1:
            protocols = (m.JoinGroupProtocol("roundrobin", SUBSCRIPTIONS[meta]),)
        req = m.JoinGroupRequest(
            group_id=GROUP,
            member_id=c.member_id if known else "",
            group_instance_id=c.instance_id,
            protocols=protocols,
            session_timeout_ms=SESSION_MS,
            rebalance_timeout_ms=REBALANCE_MS,
            client_id=c.name,
            version=version,
        )
        self._send(c, req)

    @rule(i=clients_idx, stale=st.booleans())
    def sync(self, i: int, stale: bool) -> None:
        c = self.clients[i]
        gen = c.generation - 1 if stale else c.generation
        assignments: tuple[m.SyncGroupAssignment, ...] = ()
        if c.is_leader and c.members_seen:
            assignments = tuple(
                m.SyncGroupAssignment(mid, Assignment({TOPIC: ps} if ps else {}).encode())
                for mid, ps in range_like_assignment(c.members_seen).items()
            )
        self._send(
            c,
            m.SyncGroupRequest(
                group_id=GROUP,
                generation_id=gen,
                member_id=c.member_id,
                group_instance_id=c.instance_id,
                protocol_type="consumer",
                assignments=assignments,
            ),
        )

    @rule(meta=st.sampled_from([0, 0, 1]))
    def everyone_joins(self, meta: int) -> None:
        """A well-behaved round: every client not already waiting sends JoinGroup with the
        member id it knows (this drives the group forward in few steps)."""
        for i, c in enumerate(self.clients):
            if c.join_rid is None:
                self.join(i, known=True, meta=meta, version=9, compatible=True)
                if c.join_rid is None and c.generation < 0 and c.member_id:
                    # MEMBER_ID_REQUIRED: the Java client rejoins at once with the id.
                    self.join(i, known=True, meta=meta, version=9, compatible=True)

    @rule()
    def everyone_syncs(self) -> None:
        """Followers send SyncGroup first, then the leader (so followers are parked)."""
        order = sorted(range(len(self.clients)), key=lambda i: self.clients[i].is_leader)
        for i in order:
            if self.clients[i].generation >= 0:
                self.sync(i, stale=False)

    @rule()
    def followers_sync(self) -> None:
        """Followers send SyncGroup and the leader does not (yet): their requests stay
        parked, so whatever happens next (a join, a leave, a timer) meets parked syncs."""
        for i, c in enumerate(self.clients):
            if c.generation >= 0 and not c.is_leader:
                self.sync(i, stale=False)

    @rule(i=clients_idx, stale=st.booleans())
    def heartbeat(self, i: int, stale: bool) -> None:
        c = self.clients[i]
        self._send(
            c,
            m.HeartbeatRequest(
                group_id=GROUP,
                generation_id=c.generation - 1 if stale else c.generation,
                member_id=c.member_id,
                group_instance_id=c.instance_id,
            ),
        )

    @rule(i=clients_idx, gen=st.sampled_from(["current", "stale", "none"]),
          offset=st.integers(min_value=0, max_value=1000), partition=st.integers(0, NUM_PARTITIONS - 1))
    def commit(self, i: int, gen: str, offset: int, partition: int) -> None:
        c = self.clients[i]
        generation = {"current": c.generation, "stale": c.generation - 1, "none": -1}[gen]
        self._send(
            c,
            m.OffsetCommitRequest(
                group_id=GROUP,
                generation_id=generation,
                member_id="" if gen == "none" else c.member_id,
                group_instance_id=None if gen == "none" else c.instance_id,
                partitions=(m.OffsetCommitPartition(TOPIC, partition, offset),),
            ),
        )

    @rule(offset=st.integers(min_value=0, max_value=1000))
    def everyone_commits(self, offset: int) -> None:
        """Every client that has joined a generation commits with it, as a consumer does
        between polls, and also between its JoinGroup and SyncGroup (which must then be
        REBALANCE_IN_PROGRESS, ClassicGroup.validateOffsetCommit)."""
        for i, c in enumerate(self.clients):
            if c.generation >= 0:
                self.commit(i, "current", offset, i % NUM_PARTITIONS)

    @rule(i=clients_idx, by_instance=st.booleans())
    def leave(self, i: int, by_instance: bool) -> None:
        c = self.clients[i]
        if by_instance and c.instance_id is not None:
            ident = m.MemberIdentity("", c.instance_id)  # administrative removal
        else:
            ident = m.MemberIdentity(c.member_id, c.instance_id)
        self._send(c, m.LeaveGroupRequest(group_id=GROUP, members=(ident,)))
        if not by_instance:
            c.member_id, c.generation, c.is_leader = "", -1, False

    @rule(i=clients_idx)
    def restart(self, i: int) -> None:
        """The process restarts: member id and generation are forgotten (no LeaveGroup)."""
        c = self.clients[i]
        note(f"t={self.now} {c.name} restarts")
        c.member_id, c.generation, c.is_leader, c.join_rid = "", -1, False, None

    @rule(ms=st.sampled_from([1, 500, 2_000, 3_000, 6_000, 11_000, 25_000, 70_000]))
    def tick(self, ms: int) -> None:
        self.now += ms
        note(f"t={self.now} clock advances {ms} ms")
        self._process(self.coordinator.advance(self.now))

    @precondition(lambda self: self.coordinator.next_deadline() is not None)
    @rule()
    def until_next_timer(self) -> None:
        """Advance the clock to the coordinator's next deadline, firing it."""
        deadline = self.coordinator.next_deadline()
        assert deadline is not None
        self.now = max(self.now, deadline)
        note(f"t={self.now} clock advances to the next timer")
        self._process(self.coordinator.advance(self.now))

    @precondition(lambda self: GROUP in self.coordinator.state.groups)
    @rule()
    def failover(self) -> None:
        note(f"t={self.now} coordinator failover")
        self._process(self.coordinator.failover(self.now))

    # ------------------------------------------------------------------ invariants
    @invariant()
    def replay_reproduces_state(self) -> None:
        if self.monitor.state != self.coordinator.state:
            raise InvariantViolated("ReplayInv", "replayed records differ from the coordinator state")

    @invariant()
    def one_owner_per_generation(self) -> None:
        conflicts = one_owner_per_generation(self.received)
        if conflicts:
            raise InvariantViolated("OneOwnerPerGenerationInv", f"conflicts: {conflicts}")


TestCoordinatorMachine = CoordinatorMachine.TestCase

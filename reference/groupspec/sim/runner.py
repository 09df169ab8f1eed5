"""The discrete-event runner.

One logical clock drives the reference :class:`Coordinator`, the :class:`Consumer` of each
member, a network that keeps each connection's messages in order (delay and loss are
faults), the producers that append records, and the fault schedule. Nothing here reads a
clock or does I/O: the result is values (timeline entries, verdicts, metrics, trace events).

Who counts as an owner for the "no two consumers at once" check (NoConcurrentOwnersInv): a
consumer whose process is alive (a frozen one too) and whose member id the coordinator
holds as a member of the group, with the partitions it believes it owns. Not counted: a
crashed process (it holds nothing), and a consumer the coordinator has removed (session
expiry, poll timeout) or fenced (its group.instance.id rejoined under a new member id). Such
a zombie may still believe it owns partitions until it hears otherwise; Kafka does not
prevent that (there is no lease), it only fences the zombie's commits (UNKNOWN_MEMBER_ID,
ILLEGAL_GENERATION, FENCED_INSTANCE_ID), which NoStaleCommitInv checks. So the zombie
window shows up as records processed twice, not as a violation.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.client.classic.consumer import ClientEvent, ClusterView, Consumer, MemberState
from groupspec.client.config import ConsumerConfig
from groupspec.client.consumer.consumer import ConsumerProtocolConsumer
from groupspec.coordinator.consumer.group import ConsumerGroupState
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.timers import Expiry, earliest_deadline
from groupspec.invariants import (
    InvariantMonitor,
    concurrent_owners,
    one_owner_per_generation,
)
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.consumer_protocol import Assignment, pairs
from groupspec.protocol.error_responses import error_response
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.topic_id import TopicId
from groupspec.sim.scenario import Fault, MemberSpec, Scenario
from groupspec.trace import events as ev

TP = tuple[str, int]
#: a member's client model: the classic consumer or the consumer-protocol (KIP-848) one
GroupMember = Consumer | ConsumerProtocolConsumer
ConsumerFactory = Callable[[ConsumerConfig, int, Callable[[], int]], GroupMember]


def default_consumer(config: ConsumerConfig, now_ms: int, next_rid: Callable[[], int]) -> GroupMember:
    """The client model of the member's group.protocol."""
    if config.group_protocol == "consumer":
        return ConsumerProtocolConsumer(config, now_ms, next_rid)
    return Consumer(config, now_ms, next_rid)


@dataclass(frozen=True)
class TimelineEntry:
    at_ms: int
    who: str
    what: str


@dataclass(frozen=True)
class Verdict:
    name: str
    ok: bool
    detail: str


@dataclass
class RebalanceMetrics:
    started_ms: int
    generation: int = -1
    ended_ms: int | None = None
    members: int = 0


@dataclass
class SimulationResult:
    scenario: Scenario
    timeline: list[TimelineEntry]
    verdicts: list[Verdict]
    rebalances: list[RebalanceMetrics]
    metrics: dict[str, float]
    trace: list[ev.Event]

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)


#: the network's queue holds its messages as (delivery time, sequence number, to the
#: coordinator, member, its incarnation, request id, payload): the order of delivery,
#: compared as tuples (unique sequence numbers: the rest is never compared); a tuple, not an
#: object, as a message lives from one step to another. The payload is a request (to the
#: coordinator) or a response (to a member): typed Any here so that each delivery declares
#: which (an annotation, where a ``typing.cast`` would be a call per message)
_Queued = tuple[int, int, bool, str, int, int, Any]


@dataclass
class _Member:
    spec: MemberSpec
    consumer: GroupMember | None = None
    incarnation: int = 0
    alive: bool = False
    frozen_until: int = 0
    restart_at: int | None = None
    #: (lean runs) the consumer's polls are idle (Consumer.idle_until) and run as skipped steps
    #: until ``wake``, the first time it must be ticked in a step of its own
    skip: bool = False
    wake: int = 0


def not_coordinator(req: m.Request) -> m.Response:
    """The answer of a broker that no longer hosts the group's coordinator: NOT_COORDINATOR
    in the response's shape (protocol/error_responses.py); a FindCoordinator sent there is
    COORDINATOR_NOT_AVAILABLE."""
    if isinstance(req, m.FindCoordinatorRequest):
        return m.FindCoordinatorResponse(error=Error.COORDINATOR_NOT_AVAILABLE)
    resp = error_response(req, Error.NOT_COORDINATOR)
    if resp is None:
        raise TypeError(type(req).__name__)
    return resp


#: the classic consumer's states with a heartbeat thread and a poll timeout, bound once (an
#: enum member read off its class is a metaclass lookup each time)
_HEARTBEATING = (MemberState.COMPLETING_REBALANCE, MemberState.STABLE)

#: request class -> (Kafka's API name, API key)
_API_OF: dict[type, tuple[str, int]] = {}
_new = object.__new__
_setattr = object.__setattr__
_RecordEvent = ev.RecordEvent
#: request classes whose trace group id is their ``group_id`` (ev.request_group_id's last
#: case, without its isinstance tests)
_GROUP_ID_FIELD = frozenset({m.HeartbeatRequest, m.OffsetCommitRequest, m.JoinGroupRequest,
                             m.SyncGroupRequest, m.LeaveGroupRequest, m.OffsetFetchRequest})


def _record_event(seq: int, at_ms: int, record: r.Record) -> ev.RecordEvent:
    """``ev.RecordEvent(seq, at_ms, record)``, given its field dict at once as
    :meth:`Simulation._exchange` makes exchanges (most of a trace's events are records)."""
    e = _new(ev.RecordEvent)
    _setattr(e, "__dict__", {"seq": seq, "at_ms": at_ms, "record": record, "cluster": None})
    return e


class Simulation:
    #: how long the new coordinator takes to load the group after a failover
    FAILOVER_LOAD_MS = 200

    def __init__(
        self,
        scenario: Scenario,
        progress: Callable[[int, int], None] | None = None,
        consumer_factory: ConsumerFactory | None = None,
        lean: bool = False,
        connection_prefix: str = "",
    ) -> None:
        self.sc = scenario
        #: only the trace's answered group-protocol exchanges, records and expiries count
        #: (``groupspec pipeline generate``): no timeline, invariant checks, metrics, Fetch
        #: events or unanswered requests; those events are the same, object for object
        self.lean = lean
        #: lean runs take the clock steps that only idle polls would have taken in a tight
        #: loop (_skipped_steps) instead of full steps; off once a member's client model is
        #: not the classic consumer (its idle ticks are not known)
        self._skipping = lean
        #: the earliest poll of the idle (``skip``) members when _next_time last ran, None
        #: without one: the run takes skipped steps only before a step after it
        self._idle_poll: int | None = None
        self._last_produce = 0
        #: put before every connection name (the generator's group id and a slash)
        self.connection_prefix = connection_prefix
        self._cluster_view: ClusterView | None = None
        self._partition_list: list[TP] | None = None
        #: builds each member's consumer (tests pass deliberately broken ones)
        self.consumer_factory: ConsumerFactory = consumer_factory or default_consumer
        self.progress = progress
        self.rng = random.Random(scenario.seed)
        self.now = 0
        self.coordinator = Coordinator(scenario.coordinator)
        self.monitor = InvariantMonitor()
        self.topics = dict(scenario.topics)
        #: the producers' log end offsets, as floats summed once per clock step: partitions
        #: that have had the same appends since they appeared hold the same float, kept once
        #: for all of them (a cohort); see _produce and leo
        self._cohort_leo: list[float] = []
        self._cohort_tps: list[list[TP]] = []
        #: the cohorts the producers append to (those of partitions that exist)
        self._active_cohorts: list[int] = []
        self._cohort_of: dict[TP, int] = {}
        #: the partition list the cohorts were formed for
        self._cohorts_for: list[TP] | None = None
        #: the integer log end offsets of the cached cluster view, by cohort
        self._view_offsets: list[int] = []
        self._offsets_map: dict[TP, int] | None = None
        self.members = {ms.name: _Member(ms) for ms in scenario.members}
        self.queue: list[_Queued] = []
        self.msg_seq = 0
        self.last_delivery: dict[tuple[str, bool], int] = {}
        self.rid = 0
        self.rid_owner: dict[int, tuple[str, int, m.Request, int]] = {}
        self.delay_ms = scenario.network_delay_ms
        self.delay_until = 0
        self.loss = 0.0
        self.loss_until = 0
        self.coordinator_down_until = -1
        #: members still connected to the broker that hosted the coordinator before a
        #: failover: it answers them NOT_COORDINATOR until they look the coordinator up again
        self.stale_connections: set[str] = set()
        #: members whose close is under way (either client commits, then leaves): they
        #: stay alive, ticked and answered, until their consumer is closed
        self.closing: set[str] = set()
        self.timeline: list[TimelineEntry] = []
        self.trace: list[ev.Event] = []
        self.violations: list[str] = []
        self.received: dict[int, dict[str, set[TP]]] = {}
        #: every generation's assignments as received (group.instance.id or member id -> partitions)
        self.history: dict[int, dict[str, set[TP]]] = {}
        self.processed_max: dict[TP, int] = {}
        self.duplicates = 0
        self.unowned_since: dict[TP, int] = {}
        self.unowned_ms = 0.0
        self.rebalances: list[RebalanceMetrics] = []
        self.converged_at: int | None = None
        self.last_fault_ms = max((f.at_ms for f in scenario.faults), default=0)
        self.faults = list(scenario.faults)
        #: KIP-848: the broker's metadata image (what its server-side assignor sees)
        self.consumer_protocol = any(ms.config.group_protocol == "consumer" for ms in scenario.members)
        #: the coordinator's earliest group timer, as of its last input; stale (recomputed by
        #: _next_time) after any input to it: every input's output goes through
        #: _coordinator_output, set_topics through _publish_topics
        self._coordinator_deadline: int | None = None
        self._coordinator_changed = True
        self._publish_topics()

    # ------------------------------------------------------------------ plumbing
    def _next_rid(self) -> int:
        self.rid += 1
        return self.rid

    @property
    def leo(self) -> dict[TP, float]:
        """Each partition's log end offset as the producers' float (its integer part is the
        offset the consumers see)."""
        return {tp: self._cohort_leo[ci] for tp, ci in self._cohort_of.items()}

    def _produce(self, add: float) -> None:
        """Every existing partition's log end offset grows by ``add`` (records)."""
        parts = self._partition_list
        if parts is None or self._cohorts_for is not parts:
            self._regroup()
        cl = self._cohort_leo
        was = self._view_offsets
        if len(was) == len(cl):
            # the same cohorts as the offsets map: the offsets that moved, in place (a
            # cluster view holding the map lives one call); the view stays while none moves
            offsets = self._offsets_map
            for ci in self._active_cohorts:
                v = cl[ci] = cl[ci] + add
                i = int(v)
                if i != was[ci]:
                    was[ci] = i
                    if offsets is not None:
                        for tp in self._cohort_tps[ci]:
                            offsets[tp] = i
            return
        for ci in self._active_cohorts:
            cl[ci] += add
        self._view_offsets = [int(v) for v in cl]
        self._cluster_view = None
        self._offsets_map = None

    def _regroup(self) -> None:
        """The topics changed: partitions gone stop growing (each keeps its offset in a
        cohort of its own), new ones start from 0.0 in one new cohort, and a partition that
        is back grows again from its offset."""
        parts = self._partitions()
        present = set(parts)
        cl, ct, of = self._cohort_leo, self._cohort_tps, self._cohort_of
        active: list[int] = []
        for ci in self._active_cohorts:
            gone = [tp for tp in ct[ci] if tp not in present]
            for tp in gone:
                of[tp] = len(cl)
                cl.append(cl[ci])
                ct.append([tp])
            if gone:
                ct[ci] = [tp for tp in ct[ci] if tp in present]
            if ct[ci]:
                active.append(ci)
        growing = {tp for ci in active for tp in ct[ci]}
        new: list[TP] = []
        for tp in parts:
            if tp in growing:
                continue
            if tp in of:  # back after it was gone: its own cohort, from its offset
                ci = of[tp]
                of[tp] = len(cl)
                cl.append(cl[ci])
                ct.append([tp])
                active.append(len(cl) - 1)
            else:
                new.append(tp)
        if new:
            for tp in new:
                of[tp] = len(cl)
            cl.append(0.0)
            ct.append(new)
            active.append(len(cl) - 1)
        self._active_cohorts = active
        self._cohorts_for = parts

    def _leo_int(self, tp: TP) -> int:
        ci = self._cohort_of.get(tp)
        return int(self._cohort_leo[ci]) if ci is not None else 0

    def _offsets(self) -> dict[TP, int]:
        """The integer log end offsets (kept while none moves)."""
        offsets = self._offsets_map
        if offsets is None:
            cl = self._cohort_leo
            offsets = self._offsets_map = {tp: int(cl[ci]) for tp, ci in self._cohort_of.items()}
        return offsets

    def _cluster(self) -> ClusterView:
        # one view while no integer log end offset moves and the topics stay (a fault that
        # adds a topic drops the view)
        view = self._cluster_view
        if view is None:
            view = self._cluster_view = ClusterView(self.topics, self._offsets())
        return view

    def _partitions(self) -> list[TP]:
        """Every partition of every topic, in the topics' order (kept until they change)."""
        tps = self._partition_list
        if tps is None:
            tps = self._partition_list = [(t, p) for t, n in self.topics.items() for p in range(n)]
        return tps

    def _publish_topics(self) -> None:
        """Give the coordinator the topics (consumer groups assign on the broker), and write
        them to the trace as a metadata event (v1.2) so the validator sees them too."""
        self._cluster_view = None
        self._partition_list = None
        self._coordinator_changed = True
        if not self.consumer_protocol:
            return
        self.coordinator.set_topics(
            TopicMetadata(TopicId.for_name(t), t, n) for t, n in sorted(self.topics.items()))
        self.trace.append(ev.MetadataEvent(
            len(self.trace) + 1, float(self.now),
            tuple(ev.MetadataTopic(t, TopicId.for_name(t), n) for t, n in sorted(self.topics.items()))))

    def _note(self, who: str, what: str) -> None:
        if not self.lean:
            self.timeline.append(TimelineEntry(self.now, who, what))

    def _network_delay(self) -> int:
        return self.delay_ms if self.now < self.delay_until else self.sc.network_delay_ms

    def _enqueue(
        self,
        to_coord: bool,
        member: str,
        incarnation: int,
        rid: int,
        payload: m.Request | m.Response,
    ) -> None:
        if self.now < self.loss_until and self.rng.random() < self.loss:
            self._note(
                member, f"{'request' if to_coord else 'response'} {m.api_name(payload)} lost"
            )
            return
        key = (member, to_coord)
        at = max(self.now + self._network_delay(), self.last_delivery.get(key, 0))
        self.last_delivery[key] = at
        self.msg_seq += 1
        heapq.heappush(self.queue, (at, self.msg_seq, to_coord, member, incarnation, rid, payload))

    def _send_all(self, name: str, out: list[tuple[int, m.Request]]) -> None:
        mem = self.members[name]
        for rid, req in out:
            self.rid_owner[rid] = (name, mem.incarnation, req, self.now)
            self._enqueue(True, name, mem.incarnation, rid, req)

    # ------------------------------------------------------------------ coordinator side
    def _coordinator_output(self, out: Output) -> None:
        self._coordinator_changed = True
        if self.lean:
            # _record_event written out (most of a trace's events are these records)
            trace, now = self.trace, self.now
            for rec in out.records:
                e = _new(_RecordEvent)
                _setattr(e, "__dict__", {"seq": len(trace) + 1, "at_ms": now, "record": rec, "cluster": None})
                trace.append(e)
        else:
            for v in self.monitor.apply_input(out.records, self.now):
                self.violations.append(str(v))
            for rec in out.records:
                self.trace.append(_record_event(len(self.trace) + 1, self.now, rec))
                self._observe_record(rec)
        for rid, resp in out.responses:
            owner = self.rid_owner.get(rid)
            if owner is not None:
                self._enqueue(False, owner[0], owner[1], rid, resp)

    def _observe_record(self, rec: r.Record) -> None:
        if isinstance(rec, r.StateChanged):
            self._note("coordinator", f"group {rec.state.value}")
            if rec.state is GroupState.PreparingRebalance:
                self.rebalances.append(RebalanceMetrics(self.now))
            elif (
                rec.state is GroupState.Stable
                and self.rebalances
                and self.rebalances[-1].ended_ms is None
            ):
                self.rebalances[-1].ended_ms = self.now
        elif isinstance(rec, r.GenerationStarted):
            g = self.coordinator.state.groups.get(rec.group_id)
            n = len(g.members) if g else 0
            leader = g.leader_id if g else None
            self._note(
                "coordinator",
                f"generation {rec.generation_id}: {n} member(s), protocol {rec.protocol_name}, leader {leader}",
            )
            if self.rebalances:
                self.rebalances[-1].generation = rec.generation_id
                self.rebalances[-1].members = n
        elif isinstance(rec, r.MemberRemoved):
            self._note("coordinator", f"removed {rec.member_id}: {rec.reason}")
        elif isinstance(rec, r.StaticMemberReplaced):
            self._note(
                "coordinator",
                f"static {rec.group_instance_id}: {rec.old_member_id} replaced by {rec.new_member_id} (old id fenced)",
            )
        elif isinstance(rec, r.GroupLoaded):
            state = "Stable" if rec.snapshot and rec.snapshot.members else "Empty"
            self._note("coordinator", f"group reloaded from persisted records as {state}")
        elif isinstance(rec, cr.ConsumerGroupEpochRecord) and rec.value is not None:
            cg = self.coordinator.state.consumer_groups.get(rec.group_id)
            self._note("coordinator", f"group epoch {rec.value.epoch}")
            if self.rebalances and self.rebalances[-1].ended_ms is None:
                self.rebalances[-1].generation = rec.value.epoch
            else:
                self.rebalances.append(RebalanceMetrics(self.now, rec.value.epoch,
                                                        members=len(cg.members) if cg else 0))
        elif isinstance(rec, cr.ConsumerGroupMemberSubscriptionRecord) and rec.value is None:
            self._note("coordinator", f"removed {rec.member_id}")

    def _deliver_to_coordinator(self, msg: _Queued) -> None:
        req: m.Request  # messages to the coordinator are requests
        _, _, _, member, incarnation, rid, req = msg
        if isinstance(req, m.FindCoordinatorRequest):
            self.stale_connections.discard(member)
        elif member in self.stale_connections:
            self._enqueue(False, member, incarnation, rid, not_coordinator(req))
            return
        if self.now < self.coordinator_down_until:
            self._enqueue(False, member, incarnation, rid, not_coordinator(req))
            return
        self._coordinator_output(self.coordinator.handle(rid, req, self.now))

    # ------------------------------------------------------------------ client side
    def _deliver_to_member(self, msg: _Queued) -> None:
        payload: m.Response  # messages to a member are responses
        _, seq, _, member, incarnation, rid, payload = msg
        mem = self.members[member]
        owner = self.rid_owner.pop(rid, None)
        if owner is not None:
            name, _, req, sent = owner
            self.trace.append(self._exchange(name, incarnation, rid, req, sent,
                                             float(self.now), payload))
            if self.lean:
                pass
            elif (
                isinstance(req, m.SyncGroupRequest)
                and isinstance(payload, m.SyncGroupResponse)
                and payload.error is Error.NONE
            ):
                owner_key = req.group_instance_id or req.member_id
                parts = pairs(Assignment.decode(payload.assignment).partitions)
                self.received.setdefault(req.generation_id, {})[owner_key] = parts
                self.history.setdefault(req.generation_id, {})[owner_key] = parts
            elif (
                isinstance(req, ConsumerGroupHeartbeatRequest)
                and isinstance(payload, ConsumerGroupHeartbeatResponse)
                and payload.error is Error.NONE
                and payload.assignment is not None
            ):
                # KIP-848: what the member is told it holds, by member epoch; a member keeps
                # its epoch while it revokes, so an epoch's entry is everything it held in it
                view = self._cluster()
                owner_key = req.instance_id or req.member_id
                assignment = payload.assignment
                self.history.setdefault(payload.member_epoch, {}).setdefault(owner_key, set()).update(
                    (view.topic_name(tp.topic_id), p)
                    for tp in assignment.topic_partitions for p in tp.partitions)
        if not mem.alive or mem.incarnation != incarnation or mem.consumer is None:
            return
        if self.now < mem.frozen_until:
            # A frozen process reads its socket when it wakes up.
            heapq.heappush(self.queue, (mem.frozen_until, seq, *msg[2:]))
            return
        c = mem.consumer
        out = c.on_response(rid, payload, self.now, self._cluster())
        self._drain_events(c, mem)
        self._send_all(member, out)
        # the answer may end the consumer's idleness; if it is idle now, its tick in this
        # step (to come) would do what an idle one's does (Consumer.idle_until): no full tick
        wake = c.idle_until(self.now, self.topics) if self._skipping and isinstance(c, Consumer) else None
        mem.skip = wake is not None
        if wake is not None:
            mem.wake = wake

    def _exchange(self, name: str, incarnation: int, rid: int, req: m.Request, sent: int,
                  received: float | None, resp: m.Response | None) -> ev.WireExchange:
        """The trace's exchange of member ``name``'s request ``req`` (request id ``rid``):
        ``ev.WireExchange(...)`` as its generated ``__init__`` makes it, given its field dict
        at once instead of a frozen dataclass's ``object.__setattr__`` per field (a third of
        the cost of an exchange's step; tests/test_generate_fast.py compares the two)."""
        t = type(req)
        api = _API_OF.get(t)
        if api is None:
            api = _API_OF[t] = (m.api_name(req), ev.APIS[m.api_name(req)][0])
        e = _new(ev.WireExchange)
        _setattr(e, "__dict__", {
            "seq": len(self.trace) + 1, "connection": f"{self.connection_prefix}{name}#{incarnation}",
            "client_id": name, "api": api[0], "api_key": api[1], "api_version": _api_version(req),
            "correlation_id": rid,
            "group_id": req.group_id if t in _GROUP_ID_FIELD else ev.request_group_id(req),  # type: ignore[union-attr]
            "sent_ms": float(sent),
            "received_ms": received, "request": req, "response": resp,
            "cluster": None, "rewritten": False, "peer": None,
        })
        return e

    def _drain_events(self, c: GroupMember, mem: _Member) -> None:
        if self.lean:
            c.events.clear()
            if c.processed:
                self.rid += 1  # the Fetch event's correlation id, as below
                c.processed.clear()
            return
        for e in c.events:
            self._client_event(e)
        c.events.clear()
        if c.processed:
            # trace v1.1: what the poll consumed, as the Fetch that returned it
            self.trace.append(ev.FetchEvent(
                seq=len(self.trace) + 1,
                connection=f"{self.connection_prefix}{mem.spec.name}#{mem.incarnation}",
                client_id=mem.spec.name,
                api_version=0,
                correlation_id=self._next_rid(),
                sent_ms=float(self.now),
                received_ms=float(self.now),
                partitions=tuple(
                    ev.FetchPartition(t, p, start, 0, self._leo_int((t, p)), end)
                    for (t, p), start, end in c.processed
                ),
                group_id=self.sc.group_id,
                member_id=c.member_id,
            ))
        for tp, start, end in c.processed:
            high = self.processed_max.get(tp, 0)
            if start < high:
                self.duplicates += min(end, high) - start
            self.processed_max[tp] = max(high, end)
        c.processed.clear()

    def _client_event(self, e: ClientEvent) -> None:
        parts = ", ".join(f"{t}-{p}" for t, p in e.partitions)
        text = {
            "assigned": f"assigned {parts}",
            "revoked": f"revoked {parts} ({e.detail})",
            "lost": f"lost {parts} ({e.detail})",
        }.get(e.kind, f"{e.kind}: {e.detail}")
        self._note(e.member, text)

    def _start_member(self, mem: _Member) -> None:
        mem.incarnation += 1
        mem.alive = True
        mem.consumer = self.consumer_factory(mem.spec.config, self.now, self._next_rid)
        mem.skip = False
        if type(mem.consumer) is not Consumer:  # a subclass may poll differently
            self._stop_skipping()
        self._note(
            mem.spec.name,
            "starts"
            + (
                f" (group.instance.id {mem.spec.config.group_instance_id})"
                if mem.spec.config.group_instance_id
                else ""
            ),
        )

    def _tick_member(self, mem: _Member) -> None:
        c = mem.consumer
        now = self.now
        if not mem.alive or c is None or now < mem.frozen_until:
            return
        if mem.skip and now < mem.wake:
            # an idle consumer (Consumer.idle_until): between its polls the tick would do
            # nothing, and at one (a full step another member or the network makes at the
            # time of its poll) what the skipped steps do at its polls; it stays idle
            # (only a Consumer is marked skip: isinstance, a C call, narrows the type)
            if now >= c.next_poll_ms and isinstance(c, Consumer) and c.idle_poll(now, self._offsets()):
                self.rid += 1  # the Fetch event's correlation id, as _drain_events
            return
        out = c.tick(now, self._cluster_view or self._cluster())
        if self.lean and not c.events and not c.processed:
            pass  # nothing to drain (most ticks)
        else:
            self._drain_events(c, mem)
        if out:
            self._send_all(mem.spec.name, out)
        if self._skipping:
            wake = (c.idle_until(now, self.topics)
                    if mem.alive and mem.consumer is c and now >= mem.frozen_until and isinstance(c, Consumer)
                    else None)
            mem.skip = wake is not None
            if wake is not None:
                mem.wake = wake

    # ------------------------------------------------------------------ skipped steps
    # A lean run's clock steps at every member's poll (every 100 ms), most of which change
    # nothing but the consumers' positions and the producers' offsets. A member whose polls
    # are idle (a Stable classic consumer with nothing to send until its next heartbeat,
    # commit or request timeout) is marked ``skip``: the steps at its polls are not taken by
    # the main loop but by _skipped_steps, which runs, at each such time, what that step
    # would have run: the producers' append and the idle members' ticks (the other members'
    # ticks, the coordinator and the network do nothing then). The steps taken are the same,
    # in the same order, with the same floats: the output is the same, byte for byte.
    def _stop_skipping(self) -> None:
        self._skipping = False
        for mem in self.members.values():
            mem.skip = False

    def _skipped_steps(self, until: int) -> None:
        """Take the clock steps before ``until`` that only idle members' polls make."""
        idle = [c for mem in self.members.values() if mem.skip and isinstance(c := mem.consumer, Consumer)]
        if not idle:
            return
        rate = self.sc.produce_rate_per_s
        fetches = 0
        last = self._last_produce
        t = min([c.next_poll_ms for c in idle])
        if t >= until:
            return
        # the first step through _produce and _offsets: once the cohorts and the offsets map
        # are current (the topics do not change in these steps), _produce's in-place case,
        # which the loop below runs inline on the same lists and map
        dt = (t - last) / 1000.0
        if dt > 0:
            self._produce(dt * rate)
            last = t
        offsets = self._offsets()
        cl, was = self._cohort_leo, self._view_offsets
        active, cohort_tps = self._active_cohorts, self._cohort_tps
        inline = (self._partition_list is not None and self._cohorts_for is self._partition_list
                  and len(was) == len(cl))
        every = idle[0].config.poll_interval_ms
        if inline and all(c.next_poll_ms == t and c.config.poll_interval_ms == every for c in idle):
            self._shared_steps(idle, t, until, offsets)
            return
        while True:
            for c in idle:
                if c.next_poll_ms == t and c.idle_poll(t, offsets):
                    fetches += 1
            now, t = t, min([c.next_poll_ms for c in idle])
            if t >= until:
                break
            dt = (t - last) / 1000.0
            if dt <= 0:
                continue
            add = dt * rate
            last = t
            if not inline:
                self._produce(add)
                offsets = self._offsets()
                continue
            for ci in active:
                v = cl[ci] = cl[ci] + add
                i = int(v)
                if i != was[ci]:
                    was[ci] = i
                    for tp in cohort_tps[ci]:
                        offsets[tp] = i
        self.now = now
        self._last_produce = last
        # each poll that read records took a correlation id for its Fetch event, as
        # _drain_events (nothing else takes one in these steps)
        self.rid += fetches

    def _shared_steps(self, idle: list[Consumer], t: int, until: int, offsets: dict[TP, int]) -> None:
        """_skipped_steps when every idle member polls at ``t`` and then every ``every`` ms
        (members that start 100 ms apart and poll every 100 ms: nearly every run), the first
        step's append made: the steps are their common polls, each one interval's append.

        A member whose positions are its partitions' log end offsets (caught up) and stays
        so: at each poll it reads exactly what the step's append added (at most one record
        more than the append, which is below its per-partition cap), so its poll reads
        something if and only if a cohort of its partitions moved, and after the last poll
        its positions are the log end offsets then. Such a member's polls are counted, not
        made; its positions and poll clock are set after the last step. A member not caught
        up polls for real (Consumer.idle_poll) until it is. The appends are the same float
        additions in the same order; the offsets map is written at the end unless a member
        polls for real."""
        cl, was = self._cohort_leo, self._view_offsets
        active, cohort_tps, cohort_of = self._active_cohorts, self._cohort_tps, self._cohort_of
        every = idle[0].config.poll_interval_ms
        # each step's append: (t_k - t_{k-1}) / 1000.0 * rate with t_k - t_{k-1} == every
        add = (every / 1000.0) * self.sc.produce_rate_per_s
        # a cohort's offset moves by at most int(add) + 1 per step: below every cap
        lazy_ok = int(add) + 2 <= min(c.config.max_poll_records_per_partition for c in idle)
        fetches = 0
        real: list[Consumer] = []
        lazy: list[Consumer] = []
        #: per caught-up member that owns a growing partition, the growing cohorts it owns
        readers: list[set[int]] = []
        growing = set(active)

        def caught_up(c: Consumer) -> bool:
            if not lazy_ok or c.awaiting_position:
                return False
            pos = c.positions.get
            for tp in c.owned:
                if pos(tp, 0) != offsets.get(tp, 0):
                    return False
            lazy.append(c)
            mine = {cohort_of[tp] for tp in c.owned if tp in cohort_of} & growing
            if mine:
                readers.append(mine)
            return True

        for c in idle:
            if c.idle_poll(t, offsets):
                fetches += 1
            if not caught_up(c):
                real.append(c)
        now = t
        t += every
        while t < until:
            if not real and len(active) == 1:
                # the usual case from here on (one cohort, every member caught up): the
                # cohort's float, and the readers' polls counted when its offset moves
                ci, n = active[0], len(readers)
                v, w = cl[ci], was[ci]
                while t < until:
                    v += add
                    i = int(v)
                    if i != w:
                        w = i
                        fetches += n
                    now = t
                    t += every
                cl[ci], was[ci] = v, w
                break
            moved: list[int] = []
            for ci in active:
                v = cl[ci] = cl[ci] + add
                i = int(v)
                if i != was[ci]:
                    was[ci] = i
                    moved.append(ci)
                    if real:
                        for tp in cohort_tps[ci]:
                            offsets[tp] = i
            if moved and readers:
                if len(moved) == len(active):
                    fetches += len(readers)
                else:
                    fetches += sum(1 for mine in readers if not mine.isdisjoint(moved))
            if real:
                for c in real:
                    if c.idle_poll(t, offsets):
                        fetches += 1
                real = [c for c in real if not caught_up(c)]
            now = t
            t += every
        for ci in active:
            i = was[ci]
            for tp in cohort_tps[ci]:
                offsets[tp] = i
        for c in lazy:
            # the polls not made: the positions the last one left, then that poll itself
            # (its reads are counted above; it now reads nothing and sets the poll clock)
            if c.next_poll_ms <= now:
                positions = c.positions
                for tp in c.owned:
                    end = offsets.get(tp, 0)
                    if end != positions.get(tp, 0):
                        positions[tp] = end
                c.idle_poll(now, offsets)
        self.now = now
        self._last_produce = now
        self.rid += fetches

    def _skipped_poll_after(self, t: int) -> int | None:
        """The first step at or after ``t`` that an idle member's poll makes (a check that
        runs at whichever step comes first after a time runs then)."""
        polls = [c.poll_at_or_after(t) for mem in self.members.values()
                 if mem.skip and isinstance(c := mem.consumer, Consumer)]
        return min(polls) if polls else None

    # ------------------------------------------------------------------ faults
    def _apply_fault(self, f: Fault) -> None:
        self._note("fault", f.describe())
        for each in self.members.values():
            each.skip = False  # every member takes this step (a fault may change what a poll does)
        mem = self.members.get(f.member) if f.member else None
        if f.kind == "crash" and mem is not None:
            mem.alive, mem.consumer = False, None
        elif f.kind == "pause" and mem is not None:
            mem.frozen_until = self.now + f.duration_ms
        elif f.kind == "slow_poll" and mem is not None and mem.consumer is not None:
            mem.consumer.poll_blocked_until_ms = self.now + f.duration_ms
        elif f.kind == "static_restart" and mem is not None:
            mem.alive, mem.consumer = False, None
            mem.restart_at = self.now + f.downtime_ms
        elif f.kind == "close" and mem is not None and mem.consumer is not None:
            out = mem.consumer.close(self.now)
            self._drain_events(mem.consumer, mem)
            self._send_all(mem.spec.name, out)
            if getattr(mem.consumer, "closing", None) is not None:
                self.closing.add(mem.spec.name)  # waiting for its commit
            else:
                mem.alive = False
        elif f.kind == "join" and mem is not None and (not mem.alive or mem.spec.name in self.closing):
            # a new process of the member; one still closing is killed first
            self.closing.discard(mem.spec.name)
            mem.alive = False
            self._start_member(mem)
        elif f.kind == "failover":
            self._coordinator_output(self.coordinator.failover(self.now))
            self.coordinator_down_until = self.now + self.FAILOVER_LOAD_MS
            self.stale_connections = {name for name, mem in self.members.items() if mem.alive}
        elif f.kind == "delay":
            self.delay_ms, self.delay_until = f.delay_ms, self.now + f.duration_ms
        elif f.kind == "loss":
            self.loss, self.loss_until = f.probability, self.now + f.duration_ms
        elif f.kind in ("new_topic", "add_partitions") and f.topic is not None:
            self.topics[f.topic] = f.partitions
            self._publish_topics()

    # ------------------------------------------------------------------ checks
    def _group_members(self) -> set[str]:
        g = self.coordinator.state.groups.get(self.sc.group_id)
        if g is not None:
            return set(g.members)
        cg = self.coordinator.state.consumer_groups.get(self.sc.group_id)
        return set(cg.members) if cg is not None else set()

    def _group_stable(self) -> bool:
        g = self.coordinator.state.groups.get(self.sc.group_id)
        if g is not None:
            return g.state is GroupState.Stable
        cg = self.coordinator.state.consumer_groups.get(self.sc.group_id)
        return cg is not None and cg.state is ConsumerGroupState.STABLE

    def _group_empty(self) -> bool:
        g = self.coordinator.state.groups.get(self.sc.group_id)
        if g is not None:
            return g.state is GroupState.Empty
        cg = self.coordinator.state.consumer_groups.get(self.sc.group_id)
        return cg is None or cg.state is ConsumerGroupState.EMPTY

    def _current_owners(self) -> dict[str, set[TP]]:
        members = self._group_members()
        out: dict[str, set[TP]] = {}
        for name, mem in self.members.items():
            c = mem.consumer
            if c is None or not mem.alive or c.member_id not in members:
                continue
            out[name] = set(c.owned)
        return out

    def _check(self) -> None:
        owners = self._current_owners()
        for tp, who in concurrent_owners(owners).items():
            self.violations.append(
                f"NoConcurrentOwnersInv at {self.now} ms: {tp[0]}-{tp[1]} held by {', '.join(who)}"
            )
        for gen, tp, who in one_owner_per_generation(self.received):
            self.violations.append(
                f"OneOwnerPerGenerationInv: generation {gen}: {tp[0]}-{tp[1]} given to {', '.join(who)}"
            )
        self.received = {
            g: a for g, a in self.received.items() if g >= max(self.received, default=0) - 1
        }
        expected = {(t, p) for t, n in self.topics.items() for p in range(n) if self._subscribed(t)}
        held = {tp: name for name, parts in owners.items() for tp in parts}
        for tp in expected:
            if tp in held:
                start = self.unowned_since.pop(tp, None)
                if start is not None:
                    self.unowned_ms += self.now - start
            else:
                self.unowned_since.setdefault(tp, self.now)
        stable = self._group_stable()
        if stable and self.rebalances and self.rebalances[-1].ended_ms is None \
                and self.sc.group_id in self.coordinator.state.consumer_groups:
            self.rebalances[-1].ended_ms = self.now  # KIP-848: reconciled to the new epoch
        if not any(mem.alive for mem in self.members.values()):
            # Nobody left to consume: the group settling as Empty (or never created) is the goal.
            stable = self._group_empty()
        if stable and expected <= set(held) and self.now >= self.last_fault_ms:
            if self.converged_at is None:
                self.converged_at = self.now
        elif self.now >= self.last_fault_ms:
            self.converged_at = None

    def _moves(self) -> int:
        """Partitions handed to a different owner than the one that last had them."""
        last: dict[TP, str] = {}
        moves = 0
        for gen in sorted(self.history):
            for who, parts in sorted(self.history[gen].items()):
                for tp in parts:
                    if last.get(tp, who) != who:
                        moves += 1
                    last[tp] = who
        return moves

    def _subscribed(self, topic: str) -> bool:
        return any(
            topic in ms.spec.config.subscribed(frozenset(self.topics))
            for ms in self.members.values()
            if ms.alive
        )

    def liveness_bound_ms(self) -> int:
        """After the last fault, the group must be Stable with every subscribed partition
        owned within: one session timeout (to notice a dead member), the initial delay, two
        rebalances (a cooperative follow-up), each bounded by the rebalance timeout, plus a
        heartbeat interval per round and the network delay."""
        cfgs = [ms.config for ms in self.sc.members]
        session = max(c.session_timeout_ms for c in cfgs)
        if self.consumer_protocol:  # the broker's session timeout for consumer groups
            session = max(session, self.sc.coordinator.consumer_group_session_timeout_ms)
        rebalance = max(c.max_poll_interval_ms for c in cfgs)
        heartbeat = max(c.heartbeat_interval_ms for c in cfgs)
        longest = max((f.duration_ms + f.downtime_ms for f in self.sc.faults), default=0)
        held = max(c.scheduled_rebalance_max_delay_ms for c in cfgs)  # KIP-415 hold-back
        return (
            longest
            + held
            + session
            + self.sc.coordinator.group_initial_rebalance_delay_ms
            + 2 * rebalance
            + 3 * heartbeat
            + 100 * self.sc.network_delay_ms
        )

    # ------------------------------------------------------------------ main loop
    def _next_time(self) -> int | None:
        # the earliest of the times below, as a running minimum (most steps ask it)
        best: int | None = None
        now1 = self.now + 1
        if self.queue:
            best = self.queue[0][0]
        # the coordinator's earliest group timer (Coordinator.next_deadline without listing
        # and sorting every timer), listed again only after an input to the coordinator
        if self._coordinator_changed:
            self._coordinator_deadline = earliest_deadline(self.coordinator.state)
            self._coordinator_changed = False
        d = self._coordinator_deadline
        if d is not None:
            x = d if d > now1 else now1
            if best is None or x < best:
                best = x
        if self.coordinator.state.regex_tasks:
            for at in self.coordinator.pending_regex_resolutions().values():
                x = max(at + self.sc.regex_resolution_ms, now1)
                if best is None or x < best:
                    best = x
        skipping = False
        idle_poll: int | None = None
        for mem in self.members.values():
            if mem.skip:
                skipping = True
                x = mem.wake
                c = mem.consumer  # (only a Consumer is marked skip)
                if c is not None and (idle_poll is None or c.next_poll_ms < idle_poll):
                    idle_poll = c.next_poll_ms
            elif mem.alive and mem.consumer is not None:
                nd = mem.consumer.next_deadline()
                if nd is None:
                    continue
                # A consumer has been ticked at `now` already: its past deadlines are due
                # at the next millisecond, so the clock always moves on.
                x = max(nd, mem.frozen_until, now1)
            elif mem.restart_at is not None:
                x = mem.restart_at
            elif mem.spec.start_ms is not None and mem.incarnation == 0:
                x = mem.spec.start_ms
            else:
                continue
            if best is None or x < best:
                best = x
        if self.faults:
            x = self.faults[0].at_ms
            if best is None or x < best:
                best = x
        self._idle_poll = idle_poll
        if best is None:
            return None
        if skipping:
            # checks that run at the first step after a time, whichever it is: that step must
            # not be one only idle polls make (the offset-expiry check, a member's poll
            # timeout); a time not before the next step cannot make it sooner
            after = [self.coordinator.next_offsets_check_ms]
            for mem in self.members.values():
                c = mem.consumer
                if (not mem.skip and mem.alive and isinstance(c, Consumer) and c.coordinator_known
                        and c.generation_id >= 0
                        and c.state in _HEARTBEATING):
                    after.append(c.last_poll_ms + c.config.max_poll_interval_ms + 1)
            for x in after:
                if x < best:
                    p = self._skipped_poll_after(max(x, self.now + 1))
                    if p is not None and p < best:
                        best = p
        return best

    def run(self) -> SimulationResult:
        self._note(
            "scenario", f"{self.sc.name}: {len(self.sc.members)} member(s), topics {self.topics}"
        )
        last_progress = 0
        while True:
            t = self._next_time()
            if t is None or t > self.sc.until_ms:
                break
            # _next_time saw an idle member that polls before this step (in most steps
            # after one none does: _skipped_steps would find no step to take)
            if self._idle_poll is not None and self._idle_poll < t:
                self._skipped_steps(t)
            self.now = max(self.now, t)
            # Producers append records up to now.
            dt = (self.now - self._last_produce) / 1000.0
            if dt > 0:
                self._produce(dt * self.sc.produce_rate_per_s)
                self._last_produce = self.now
            while self.faults and self.faults[0].at_ms <= self.now:
                self._apply_fault(self.faults.pop(0))
            for mem in self.members.values():
                if not mem.alive and mem.restart_at is not None and mem.restart_at <= self.now:
                    mem.restart_at = None
                    self._start_member(mem)
                elif (
                    not mem.alive
                    and mem.incarnation == 0
                    and mem.spec.start_ms is not None
                    and mem.spec.start_ms <= self.now
                ):
                    self._start_member(mem)

            # advance fires nothing (and changes nothing the run sees) while no group timer
            # and no offset-expiry check is due: since the coordinator's last input
            # (_next_time listed its timers after it) nothing can have come due but by time
            d = self._coordinator_deadline
            if (self._coordinator_changed or (d is not None and d <= self.now)
                    or self.coordinator.next_offsets_check_ms <= self.now):
                self._coordinator_output(self.coordinator.advance(self.now, self._on_fire))
            # the coordinator's executor finishes a regex resolution (KIP-848) this long
            # after the heartbeat that scheduled it
            if self.coordinator.state.regex_tasks:
                for gid, at in sorted(self.coordinator.pending_regex_resolutions().items()):
                    if at + self.sc.regex_resolution_ms <= self.now:
                        self._coordinator_output(self.coordinator.complete_regex_resolution(gid, self.now))
            while self.queue and self.queue[0][0] <= self.now:
                msg = heapq.heappop(self.queue)
                if msg[2]:  # to the coordinator
                    self._deliver_to_coordinator(msg)
                else:
                    self._deliver_to_member(msg)
            for mem in self.members.values():
                self._tick_member(mem)
            if self.closing:
                for name in [n for n in self.closing if getattr(self.members[n].consumer, "closed", True)]:
                    self.closing.discard(name)
                    self.members[name].alive = False
            if not self.lean:
                self._check()
            if self.progress is not None and self.now - last_progress >= 10_000:
                last_progress = self.now
                self.progress(self.now, self.sc.until_ms)
        self.now = self.sc.until_ms
        if self.lean:
            return SimulationResult(self.sc, [], [], [], {}, self.trace)
        self._check()
        self._unanswered()
        return self._result()

    def _on_fire(self, e: Expiry) -> None:
        self.trace.append(
            ev.ExpiryEvent(len(self.trace) + 1, e.deadline_ms, e.kind.name, e.group_id, e.member_id))
        if not self.lean and (e.kind.name != "ExpireHeartbeat" or self._heartbeat_expiry_matters(e)):
            self._note("timer", e.describe())

    def _unanswered(self) -> None:
        """Requests still without a response when the run stops (parked by the coordinator,
        in flight, or lost) go into the trace with no response, as the recorder writes a
        request whose connection closed: without them a trace hides the JoinGroup that
        started a rebalance the other members were told about."""
        for rid, (name, incarnation, req, sent) in sorted(self.rid_owner.items()):
            self.trace.append(self._exchange(name, incarnation, rid, req, sent, None, None))

    def _heartbeat_expiry_matters(self, e: Expiry) -> bool:
        g = self.coordinator.state.groups.get(e.group_id)
        mem = g.members.get(e.member_id) if g else None
        return mem is not None and not mem.has_satisfied_heartbeat()

    def _result(self) -> SimulationResult:
        verdicts: list[Verdict] = []
        by_name: dict[str, list[str]] = {}
        for v in self.violations:
            by_name.setdefault(v.split(" ", 1)[0].split(":", 1)[0], []).append(v)
        for name, what in [
            ("LeaderIsMemberInv", "the leader is a member of the current generation"),
            ("ValidTransitionInv", "every group-state transition is in Kafka's table"),
            ("GenerationMonotonicInv", "generations grow by one per completed join phase"),
            (
                "NoStaleCommitInv",
                "no commit from a stale generation, unknown member or fenced instance is stored",
            ),
            ("StaticMembersInv", "each group.instance.id maps to exactly one member"),
            ("OneOwnerPerGenerationInv", "no partition is given to two members in one generation"),
            ("NoConcurrentOwnersInv", "no partition is held by two current consumers at once"),
        ]:
            found = by_name.pop(name, [])
            verdicts.append(
                Verdict(
                    name,
                    not found,
                    what if not found else f"{len(found)} violation(s); first: {found[0]}",
                )
            )
        for name, found in by_name.items():
            verdicts.append(Verdict(name, False, f"{len(found)} violation(s); first: {found[0]}"))
        bound = self.liveness_bound_ms()
        if self.converged_at is not None:
            took = max(self.converged_at - self.last_fault_ms, 0)
            ok = took <= bound
            detail = f"Stable with every subscribed partition owned {took} ms after the last fault (bound {bound} ms)"
            if not any(mem.alive for mem in self.members.values()):
                detail = f"Empty with no consumer left {took} ms after the last fault (bound {bound} ms)"
        else:
            ok, detail = (
                False,
                f"not Stable with every subscribed partition owned by the end (bound {bound} ms after the last fault)",
            )
        verdicts.append(Verdict("LivenessProp", ok, detail))
        done = [rb for rb in self.rebalances if rb.ended_ms is not None]
        metrics = {
            "rebalances": float(len(self.rebalances)),
            "rebalance_ms_total": float(
                sum(rb.ended_ms - rb.started_ms for rb in done if rb.ended_ms is not None)
            ),
            "partition_unowned_ms": self.unowned_ms
            + sum(self.now - s for s in self.unowned_since.values()),
            "partitions_moved": float(self._moves()),
            "records_processed_twice": float(self.duplicates),
            "final_generation": self._final_generation(),
        }
        return SimulationResult(
            self.sc, self.timeline, verdicts, self.rebalances, metrics, self.trace
        )

    def _final_generation(self) -> float:
        """The last generation (classic) or group epoch (KIP-848); -1 without a group."""
        g = self.coordinator.state.groups.get(self.sc.group_id)
        if g is not None:
            return float(g.generation_id)
        cg = self.coordinator.state.consumer_groups.get(self.sc.group_id)
        return float(cg.group_epoch) if cg is not None else -1.0


def _api_version(req: m.Request) -> int:
    """The version the simulated clients speak: JoinGroup v9 and v0 for the other classic
    APIs; ConsumerGroupHeartbeat v1 with OffsetCommit/OffsetFetch v9 (KIP-848)."""
    if isinstance(req, m.JoinGroupRequest):
        return 9
    if isinstance(req, ConsumerGroupHeartbeatRequest):
        return req.version
    if isinstance(req, m.OffsetCommitRequest) and req.version >= 9:
        return req.version
    if isinstance(req, m.OffsetFetchRequest) and req.member_id is not None:
        return 9
    return 0


def simulate(
    scenario: Scenario,
    progress: Callable[[int, int], None] | None = None,
    consumer_factory: ConsumerFactory | None = None,
) -> SimulationResult:
    return Simulation(scenario, progress, consumer_factory).run()


def simulate_trace(scenario: Scenario, connection_prefix: str = "") -> list[ev.Event]:
    """The trace events of a lean run (``Simulation(lean=True)``): what :func:`simulate`
    puts in its trace minus the Fetch events and the unanswered requests, each connection
    name prefixed with ``connection_prefix``; no verdicts, timeline or metrics."""
    sim = Simulation(scenario, lean=True, connection_prefix=connection_prefix)
    trace = sim.run().trace
    # each consumer holds the run's request-id counter, a bound method of the run: without
    # them the run is no reference cycle and is freed at once (the generator pauses the
    # cycle collector while it builds a cluster)
    for mem in sim.members.values():
        mem.consumer = None
    return trace

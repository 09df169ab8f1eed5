"""Mutants of the reference coordinator and client model: each a plausible broker or client
bug, applied in process (a coordinator subclass, a consumer subclass, or a patch held only
while the simulator runs), never by editing files. The oracle (``groupspec validate``) then
judges the simulated traces with the *unmutated* reference.

Three ways to mutate:

- :class:`Rewrite`: the broker answers a request as the reference does, then a bug changes
  the answer (a check skipped, an error code swapped, a field wrong). A coordinator subclass
  rewrites responses as they leave it; the group state stays the reference's.
- :class:`Patch`: a function or method of the coordinator is replaced while the simulation
  runs (a timer that never fires, a join phase that never waits).
- :class:`Client`: a :class:`~groupspec.client.classic.consumer.Consumer` subclass with one bug.

Every mutant counts ``hits``, the times its bug changed something, so the table can tell a
mutant the oracle missed from one the runs never exercised.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from groupspec.client.classic.consumer import ClusterView, Consumer, MemberState, Outgoing
from groupspec.client.config import ConsumerConfig
from groupspec.coordinator import coordinator as coordinator_module
from groupspec.coordinator import timers
from groupspec.coordinator.classic import group, join_group, rebalance
from groupspec.coordinator.consumer import heartbeat as consumer_heartbeat
from groupspec.coordinator.consumer import reconciliation
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import ConsumerGroupHeartbeatResponse
from groupspec.protocol.consumer_protocol import Assignment, from_pairs, pairs
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState

TP = tuple[str, int]
E = Error


@dataclass
class Mutant:
    name: str
    #: who has the bug: "broker" or "client"
    side: str
    #: the rule (or rule family) the oracle should name
    expected: str
    description: str
    #: the protocols whose runs exercise it: eager, cooperative, static
    protocols: tuple[str, ...] = ("eager", "cooperative", "static")
    #: the fault patterns its runs cycle through (bench/oracle_eval.py), for a bug only a
    #: few patterns reach; None: the campaign's whole rotation
    patterns: tuple[tuple[str, ...], ...] | None = None
    hits: int = field(default=0, compare=False)

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        yield

    def coordinator(self, config: Any) -> Coordinator | None:
        """A mutated coordinator for the simulation, or None for the reference."""
        return None

    def consumer_factory(self) -> Callable[[ConsumerConfig, int, Callable[[], int]], Consumer] | None:
        """Broker mutants run with :class:`Prober` clients; client mutants with their own;
        KIP-848 mutants with the consumer-protocol model (the simulator's default)."""
        return None if KIP848[0] in self.protocols else Prober


#: the protocols of KIP-848 mutants' runs: consumer-protocol members only
KIP848: tuple[str, ...] = ("consumer",)


# ---------------------------------------------------------------------- broker: answers
Rewriter = Callable[["Rewrite", m.Request, m.Response], m.Response | None]


@dataclass
class Rewrite(Mutant):
    rewrite: Rewriter | None = None

    def coordinator(self, config: Any) -> Coordinator:
        mutant = self

        class Mutated(Coordinator):
            requests: ClassVar[dict[int, m.Request]] = {}

            def _out(self, out: Output) -> Output:
                fixed = []
                for rid, resp in out.responses:
                    req = self.requests.pop(rid, None)
                    new = mutant.rewrite(mutant, req, resp) if req is not None and mutant.rewrite else None
                    if new is not None and new != resp:
                        mutant.hits += 1
                        resp = new
                    fixed.append((rid, resp))
                out.responses[:] = fixed
                return out

            def handle(self, request_id: int, request: m.Request, now_ms: int) -> Output:
                self.requests[request_id] = request
                return self._out(super().handle(request_id, request, now_ms))

            def advance(self, now_ms: int, on_fire: Any = None) -> Output:
                return self._out(super().advance(now_ms, on_fire))

            def failover(self, now_ms: int) -> Output:
                return self._out(super().failover(now_ms))

        Mutated.requests = {}
        _LEADER_ASSIGNMENT.clear()
        return Mutated(config)


def _swap(api: type, before: Error, after: Error) -> Rewriter:
    """An error answer replaced by another (``after`` NONE: the check is skipped)."""
    def rw(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
        if not isinstance(resp, api):
            return None
        if isinstance(resp, m.OffsetCommitResponse):
            if not resp.partitions or any(p.error is not before for p in resp.partitions):
                return None
            return dataclasses.replace(resp, partitions=tuple(
                dataclasses.replace(p, error=after) for p in resp.partitions))
        if getattr(resp, "error", None) is not before:
            return None
        return cast(m.Response, dataclasses.replace(cast(Any, resp), error=after))
    return rw


def _join_ok(change: Callable[[m.JoinGroupRequest, m.JoinGroupResponse], m.JoinGroupResponse]) -> Rewriter:
    def rw(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
        if isinstance(resp, m.JoinGroupResponse) and resp.error is E.NONE and isinstance(req, m.JoinGroupRequest):
            return change(req, resp)
        return None
    return rw


def _sync_ok(change: Callable[[m.SyncGroupRequest, m.SyncGroupResponse], m.SyncGroupResponse | None]) -> Rewriter:
    def rw(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
        if isinstance(resp, m.SyncGroupResponse) and resp.error is E.NONE and isinstance(req, m.SyncGroupRequest):
            return change(req, resp)
        return None
    return rw


def _empty_follower_assignment(req: m.SyncGroupRequest, resp: m.SyncGroupResponse) -> m.SyncGroupResponse | None:
    if req.assignments:  # the leader gets its own
        return None
    return dataclasses.replace(resp, assignment=Assignment({}).encode())


_LEADER_ASSIGNMENT: dict[int, bytes] = {}


def _leader_assignment_for_all(req: m.SyncGroupRequest, resp: m.SyncGroupResponse) -> m.SyncGroupResponse | None:
    if req.assignments:
        _LEADER_ASSIGNMENT[req.generation_id] = resp.assignment
        return None
    mine = _LEADER_ASSIGNMENT.get(req.generation_id)
    return None if mine is None else dataclasses.replace(resp, assignment=mine)


def _offset_fetch(change: Callable[[int], int]) -> Rewriter:
    def rw(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
        if not isinstance(resp, m.OffsetFetchResponse) or resp.error is not E.NONE:
            return None
        if not any(p.committed_offset >= 0 for p in resp.partitions):
            return None
        return dataclasses.replace(resp, partitions=tuple(
            dataclasses.replace(p, committed_offset=change(p.committed_offset)) if p.committed_offset >= 0 else p
            for p in resp.partitions))
    return rw


def _leave_unknown_ok(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
    if not isinstance(resp, m.LeaveGroupResponse) or not resp.members:
        return None
    if all(x.error is E.NONE for x in resp.members):
        return None
    return dataclasses.replace(resp, members=tuple(dataclasses.replace(x, error=E.NONE) for x in resp.members))


def _leave_top_level_error(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
    # Only a leave that succeeded for every member: an unknown member's leave in v0-2 already
    # reads UNKNOWN_MEMBER_ID at the top level on the wire, so rewriting it changes nothing.
    if not isinstance(resp, m.LeaveGroupResponse) or resp.error is not E.NONE:
        return None
    if any(x.error is not E.NONE for x in resp.members):
        return None
    return dataclasses.replace(resp, error=E.UNKNOWN_MEMBER_ID, members=())


# ---------------------------------------------------------------------- broker: patches
@dataclass
class Patch(Mutant):
    #: (object, attribute, replacement factory taking the mutant and the original)
    target: tuple[Any, str, Callable[[Mutant, Any], Any]] | None = None

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        assert self.target is not None
        obj, attr, make = self.target
        original = getattr(obj, attr)
        setattr(obj, attr, make(self, original))
        try:
            yield
        finally:
            setattr(obj, attr, original)


def _all_joined(mut: Mutant, original: Any) -> Any:
    def has_all_members_joined(self: group.Group) -> bool:
        real = bool(original(self))
        if not real:
            mut.hits += 1
        return True
    return has_all_members_joined


def _no_session_expiry(mut: Mutant, original: Any) -> Any:
    def fire(txn: Any, e: timers.Expiry) -> None:
        if e.kind is timers.TimerKind.ExpireHeartbeat:
            g = txn.state.groups.get(e.group_id)
            mem = g.members.get(e.member_id) if g else None
            if mem is not None and not mem.has_satisfied_heartbeat():
                mut.hits += 1
                # the timer is dropped, not left due: a due timer that stays due would be
                # fired again at once, for ever (the campaign's runs of this mutant hung
                # until their 60 s limit instead of being judged)
                mem.heartbeat_deadline_ms = None
                return
        original(txn, e)
    return fire


def _no_rebalance_timeout(mut: Mutant, original: Any) -> Any:
    def fire(txn: Any, e: timers.Expiry) -> None:
        if e.kind is timers.TimerKind.ExpireJoin:
            g = txn.state.groups.get(e.group_id)
            if g is not None and g.join_timer is not None and not g.join_timer.initial:
                mut.hits += 1
                g.join_timer = None  # dropped, not left due (it would fire again at once)
                return
        original(txn, e)
    return fire


def _no_leave_rebalance(mut: Mutant, original: Any) -> Any:
    def maybe_prepare(txn: Any, group: Any, reason: str) -> None:
        if reason == "explicit LeaveGroup":
            mut.hits += 1
            return
        original(txn, group, reason)
    return maybe_prepare


def _revoked_at_once(mut: Mutant, original: Any) -> Any:
    def owns_any(owned: Any, revoking: Any) -> bool:
        if original(owned, revoking):
            mut.hits += 1
        return False  # a partition the member still reports is taken as revoked
    return owns_any


def _no_consumer_session_expiry(mut: Mutant, original: Any) -> Any:
    def expire_session(txn: Any, group_id: str, member_id: str) -> None:
        g = txn.state.consumer_groups.get(group_id)
        if g is not None and member_id in g.members:
            mut.hits += 1
            # the timer is dropped, not left due (it would fire again at once, for ever)
            txn.emit(cr.ConsumerSessionTimerSet(group_id, member_id, None))
            return
        original(txn, group_id, member_id)
    return expire_session


def _leave_ignored(mut: Mutant, original: Any) -> Any:
    def leave(txn: Any, req: Any, records: list[Any]) -> Any:
        g = txn.state.consumer_groups.get(req.group_id)
        if req.member_epoch == -1 and g is not None and req.member_id in g.members:
            mut.hits += 1  # answered, but the member stays until its session expires
            return ConsumerGroupHeartbeatResponse(error=E.NONE, member_id=req.member_id,
                                                  member_epoch=-1, heartbeat_interval_ms=0)
        return original(txn, req, records)
    return leave


def _epoch_ahead(mut: Rewrite, req: m.Request, resp: m.Response) -> m.Response | None:
    if (isinstance(resp, ConsumerGroupHeartbeatResponse) and resp.error is E.NONE
            and resp.assignment is not None and resp.member_epoch > 0):
        return dataclasses.replace(resp, member_epoch=resp.member_epoch + 1)
    return None


def _leader_kept(mut: Mutant, original: Any) -> Any:
    def elect(txn: Any, group: Any) -> bool:
        leader = group.members.get(group.leader_id) if group.leader_id else None
        if (group.leader_id is not None and (leader is None or not leader.is_awaiting_join)
                and any(x.is_awaiting_join for x in group.members.values())):
            mut.hits += 1
            return True  # the departed leader stays leader
        return bool(original(txn, group))
    return elect


# ------------------------------------------------ broker: historical Kafka bugs
# Each is the behaviour of a Kafka version before the JIRA issue named was fixed, put into
# the reference coordinator: a trace of that broker should be a violation.
def _no_sync_timeout(mut: Mutant, original: Any) -> Any:
    """KAFKA-12890 (fixed in 3.1): members that never sent SyncGroup were not removed when
    the sync phase timed out (GroupMetadataManager's pending-sync timeout)."""
    def fire(txn: Any, e: timers.Expiry) -> None:
        if e.kind is timers.TimerKind.ExpireSync:
            g = txn.state.groups.get(e.group_id)
            if g is not None and g.sync_timer is not None and g.pending_sync_members:
                mut.hits += 1
                g.sync_timer = None  # dropped, not left due (it would fire again at once)
                return
        original(txn, e)
    return fire


def _static_removed_at_join_end(mut: Mutant, original: Any) -> Any:
    """KAFKA-8220 (fixed in 2.3): a static member that had not rejoined when the join phase
    ended was removed like a dynamic one, which KIP-345 exists to avoid."""
    def complete_join(txn: Any, g: Any) -> None:
        for mem in [x for x in g.not_yet_rejoined() if x.is_static]:
            mut.hits += 1
            rebalance.remove_member(txn, g, mem.member_id, "did not rejoin (KAFKA-8220)")
        original(txn, g)
    return complete_join


def _no_member_id_required(mut: Mutant, original: Any) -> Any:
    """KIP-394 / KAFKA-7610 (2.2): a JoinGroup v4+ without a member id was admitted at
    once instead of answered MEMBER_ID_REQUIRED with an id to rejoin with."""
    def join_new_member(txn: Any, request_id: int, req: m.JoinGroupRequest, g: Any, new_id: Any) -> None:
        if req.group_instance_id is None and req.version >= join_group.MEMBER_ID_REQUIRED_MIN_VERSION:
            mut.hits += 1
            req = dataclasses.replace(req, version=join_group.MEMBER_ID_REQUIRED_MIN_VERSION - 1)
        original(txn, request_id, req, g, new_id)
    return join_new_member


def _static_replacement_not_persisted(mut: Mutant, original: Any) -> Any:
    """KAFKA-10284 (fixed in 2.6.1): a static member that rejoined with a new member id in
    Stable (no rebalance) was not written to the log: after a coordinator failover the group
    came back with the old member id and fenced the member."""
    def replace(txn: Any, request_id: int, req: m.JoinGroupRequest, g: Any, old_id: str, new_id: str) -> None:
        persist = rebalance.persist

        def skipped(txn: Any, group: Any, assignments: Any = None) -> None:
            mut.hits += 1

        rebalance.persist = skipped
        try:
            original(txn, request_id, req, g, old_id, new_id)
        finally:
            rebalance.persist = persist
    return replace


def _replaced_leader_told_follower(mut: Mutant, original: Any) -> Any:
    """KAFKA-13435 (fixed by KIP-814, JoinGroup v9, in 3.2): a static leader that restarted
    (new member id, Stable, same protocol) was answered with the old leader id and no
    skip-assignment flag, so it took itself for a follower and never assigned again."""
    def replace(txn: Any, request_id: int, req: m.JoinGroupRequest, g: Any, old_id: str, new_id: str) -> None:
        if (req.version >= join_group.SKIP_ASSIGNMENT_MIN_VERSION and g.leader_id == old_id
                and g.state is GroupState.Stable):
            mut.hits += 1
            req = dataclasses.replace(req, version=join_group.SKIP_ASSIGNMENT_MIN_VERSION - 1)
        original(txn, request_id, req, g, old_id, new_id)
    return replace


def _static_rejoin_keeps_old_id(mut: Mutant, original: Any) -> Any:
    """KAFKA-8500 (fixed in 2.3.0 before its release: e981b82601e, cherry-picked as
    c7965187a69; core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala,
    doUnknownJoinGroup): KIP-345's first cut replaced the member id of a static member that
    rejoined without one only while the group was Stable; in any other state the JoinGroup
    was taken as the old member's rejoin and answered with the *old* member id, so a
    restarted instance and the one it replaced (a zombie) could share one member id and
    consume the same partitions. Kafka now gives it a new member id in every state
    (GroupMetadataManager.classicGroupJoinNewStaticMember)."""
    def replace(txn: Any, request_id: int, req: m.JoinGroupRequest, g: Any, old_id: str, new_id: str) -> None:
        if g.state is GroupState.Stable:
            original(txn, request_id, req, g, old_id, new_id)
            return
        mut.hits += 1
        join_group._update_member_then_rebalance(txn, request_id, dataclasses.replace(req, member_id=old_id), g)
    return replace


def _static_rejoin_no_rebalance_in_sync(mut: Mutant, original: Any) -> Any:
    """KAFKA-9801 (2.3.0 to 2.4.1; fixed in 2.5.0 by 94ef25ab912, cherry-picked as
    146811ab296; core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala,
    updateStaticMemberAndRebalance): a static member that rejoined without a member id while
    the group was CompletingRebalance got a new member id and an answer at once (the current
    generation, the old leader id), with no new rebalance; the leader's assignment, keyed by
    the old member id, then gave the new member id nothing. Kafka now starts a rebalance
    (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin)."""
    def replace(txn: Any, request_id: int, req: m.JoinGroupRequest, g: Any, old_id: str, new_id: str) -> None:
        if g.state is not GroupState.CompletingRebalance:
            original(txn, request_id, req, g, old_id, new_id)
            return
        mut.hits += 1
        current_leader = g.leader_id
        prepare = rebalance.prepare_rebalance

        def answer_now(txn: Any, group: Any, reason: str) -> None:
            rebalance.complete_join_future(txn, group, group.members[new_id], m.JoinGroupResponse(
                error=E.NONE, generation_id=group.generation_id, protocol_type=group.protocol_type,
                protocol_name=group.protocol_name, leader=current_leader or "", skip_assignment=False,
                member_id=new_id))

        rebalance.prepare_rebalance = answer_now
        try:
            original(txn, request_id, req, g, old_id, new_id)
        finally:
            rebalance.prepare_rebalance = prepare
    return replace


# ---------------------------------------------------------------------- clients
ConsumerPatch = Callable[["Client"], type[Consumer]]


@dataclass
class Client(Mutant):
    make: ConsumerPatch | None = None

    def consumer_factory(self) -> Callable[[ConsumerConfig, int, Callable[[], int]], Consumer]:
        assert self.make is not None
        return self.make(self)


def _eager_keeps_partitions(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        def _on_join_prepare(self, now: int, subscription: tuple[str, ...],
                             generation: tuple[int, str]) -> tuple[bool, list[Outgoing]]:
            kept, pos = set(self.owned), dict(self.positions)
            ready, out = super()._on_join_prepare(now, subscription, generation)
            if ready and kept and self.generation_id >= 0 and not self.owned:
                mut.hits += 1
                self.owned |= kept  # still consuming while the group rebalances
                self.positions.update({tp: pos[tp] for tp in kept if tp in pos})
            return ready, out
    return Buggy


def _cooperative_keeps_revoked(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        def _on_join_complete(self, assignment: Assignment, now: int) -> list[Outgoing]:
            before, pos = set(self.owned), dict(self.positions)
            out = super()._on_join_complete(assignment, now)
            revoked = before - pairs(assignment.partitions)
            if revoked:
                mut.hits += 1
                self.owned |= revoked
                self.positions.update({tp: pos[tp] for tp in revoked if tp in pos})
            return out
    return Buggy


def _commits_remembered_offsets(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        """Keeps an offsets map of every partition it ever consumed and commits all of it."""

        def _commit_request(self, parts: set[TP], generation: int,
                            all_consumed: bool = False) -> m.OffsetCommitRequest | None:
            memory: dict[TP, int] = self.__dict__.setdefault("memory", {})
            memory.update(self.positions)
            req = super()._commit_request(parts, generation, all_consumed)
            if req is None:
                return None
            have = {(p.topic, p.partition) for p in req.partitions}
            extra = sorted(set(memory) - have - set(self.owned))
            if not extra:
                return req
            mut.hits += 1
            return dataclasses.replace(req, partitions=req.partitions + tuple(
                m.OffsetCommitPartition(topic=t, partition=p, committed_offset=memory[(t, p)]) for t, p in extra))
    return Buggy


def _resets_on_stale_heartbeat_error(mut: Client) -> type[Consumer]:
    class Buggy(Prober):
        """A client with heartbeats in flight across generations (a :class:`Prober`) that
        resets its current generation on an error answering an old one (KAFKA-9823)."""

        def on_response(self, rid: int, resp: m.Response, now: int, cluster: ClusterView) -> list[Outgoing]:
            if (rid in self.probes and isinstance(resp, m.HeartbeatResponse)
                    and resp.error in (E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID) and self.generation_id >= 0):
                mut.hits += 1
                super().on_response(rid, resp, now, cluster)
                self._lose_all(now, resp.error.name)
                self._reset_on_error("Heartbeat", resp.error, keep_member_id=False)
                return []
            return super().on_response(rid, resp, now, cluster)
    return Buggy


def _heartbeats_after_fencing(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        """The heartbeat thread keeps the member id and generation it had when a heartbeat
        was rejected, and retries with them (every retry.backoff.ms) until the member is
        stable again."""

        def __init__(self, config: ConsumerConfig, now_ms: int, next_request_id: Callable[[], int]) -> None:
            super().__init__(config, now_ms, next_request_id)
            self.stale: tuple[str, int] | None = None
            self.stale_next = 0
            self.stale_rids: set[int] = set()

        def on_response(self, rid: int, resp: m.Response, now: int, cluster: ClusterView) -> list[Outgoing]:
            if rid in self.stale_rids:
                self.stale_rids.discard(rid)
                self.inflight.pop(rid, None)
                self.request_deadline.pop(rid, None)
                return []
            return super().on_response(rid, resp, now, cluster)

        def _on_heartbeat(self, resp: m.HeartbeatResponse, sent: tuple[str, int, str], now: int) -> None:
            before = (self.member_id, self.generation_id)
            super()._on_heartbeat(resp, sent, now)
            if resp.error in (E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID) and before[1] >= 0 and (
                    self.member_id, self.generation_id) != before:
                self.stale, self.stale_next = before, now + self.config.retry_backoff_ms

        def _heartbeat_thread(self, now: int) -> list[Outgoing]:
            out = super()._heartbeat_thread(now)
            if self.state is MemberState.STABLE:
                self.stale = None
            elif self.stale is not None and self.coordinator_known and now >= self.stale_next:
                mut.hits += 1
                member, gen = self.stale
                rid, req = self._send("Heartbeat", m.HeartbeatRequest(
                    group_id=self.config.group_id, generation_id=gen, member_id=member,
                    group_instance_id=self.config.group_instance_id))
                self.stale_rids.add(rid)
                self.stale_next = now + self.config.retry_backoff_ms  # a failed heartbeat is retried
                out.append((rid, req))
            return out
    return Buggy


def _commits_after_fencing(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        """The application thread keeps the generation it read before a heartbeat was
        rejected: its next auto-commit still carries the rejected member id and generation."""

        def __init__(self, config: ConsumerConfig, now_ms: int, next_request_id: Callable[[], int]) -> None:
            super().__init__(config, now_ms, next_request_id)
            self.stale: tuple[str, int, dict[TP, int]] | None = None
            self.stale_at = 0
            self.stale_rids: set[int] = set()

        def on_response(self, rid: int, resp: m.Response, now: int, cluster: ClusterView) -> list[Outgoing]:
            if rid in self.stale_rids:
                self.stale_rids.discard(rid)
                self.inflight.pop(rid, None)
                self.request_deadline.pop(rid, None)
                return []
            return super().on_response(rid, resp, now, cluster)

        def _on_heartbeat(self, resp: m.HeartbeatResponse, sent: tuple[str, int, str], now: int) -> None:
            before = (self.member_id, self.generation_id, {tp: self.committed[tp] for tp in self.owned
                                                           if tp in self.committed})
            super()._on_heartbeat(resp, sent, now)
            if resp.error in (E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID) and before[1] >= 0 and before[2] and (
                    self.member_id, self.generation_id) != before[:2]:
                self.stale, self.stale_at = before, now + self.config.retry_backoff_ms + 1_500

        def tick(self, now: int, cluster: ClusterView) -> list[Outgoing]:
            out = super().tick(now, cluster)
            if self.stale is not None and now >= self.stale_at and self.coordinator_known:
                member, gen, offsets = self.stale
                self.stale = None
                mut.hits += 1
                rid, req = self._send("OffsetCommit", m.OffsetCommitRequest(
                    group_id=self.config.group_id, generation_id=gen, member_id=member,
                    group_instance_id=self.config.group_instance_id, partitions=tuple(
                        m.OffsetCommitPartition(topic=t, partition=p, committed_offset=o)
                        for (t, p), o in sorted(offsets.items()))))
                self.stale_rids.add(rid)
                out.append((rid, req))
            return out
    return Buggy


def _slow_heartbeats(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        def _heartbeat_thread(self, now: int) -> list[Outgoing]:
            out = super()._heartbeat_thread(now)
            if any(isinstance(req, m.HeartbeatRequest) for _, req in out):
                mut.hits += 1  # heartbeat.interval.ms above session.timeout.ms, unchecked
                self.next_heartbeat_ms = now + self.config.session_timeout_ms + 1_500
            return out
    return Buggy


def _eager_reports_owned(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        def _on_join_prepare(self, now: int, subscription: tuple[str, ...],
                             generation: tuple[int, str]) -> tuple[bool, list[Outgoing]]:
            self.__dict__["stash"] = set(self.owned) if self.generation_id >= 0 else set()
            return super()._on_join_prepare(now, subscription, generation)

        def _metadata_for(self, assignor_name: str) -> bytes:
            stash = self.__dict__.get("stash") or set()
            if not stash:
                return super()._metadata_for(assignor_name)
            mut.hits += 1
            from groupspec.assignors.registry import get_assignor
            from groupspec.protocol.consumer_protocol import Subscription
            user = get_assignor(assignor_name).subscription_user_data(self.subscription, from_pairs(stash),
                                                                      self.generation_id)
            return Subscription(self.subscription, user, from_pairs(stash), self.generation_id).encode()
    return Buggy


def _keeps_lost_partitions(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        def _lose_all(self, now: int, why: str) -> None:
            if self.owned:
                mut.hits += 1
                return  # onPartitionsLost not run: it consumes on
            super()._lose_all(now, why)
    return Buggy


def _join_prepare_once(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        """KAFKA-12983 (fixed in 2.7.2, 2.8.1 and 3.0.0 by 85fa0ecb671; clients/src/main/
        java/org/apache/kafka/clients/consumer/internals/AbstractCoordinator.java,
        resetStateAndRejoin):
        onJoinPrepare ran once per rebalance (needsJoinPrepare was set again only by
        onJoinComplete), not before every JoinGroup. A member whose member id or generation
        was reset during the rebalance (a JoinGroup or SyncGroup answered UNKNOWN_MEMBER_ID
        or ILLEGAL_GENERATION) rejoined without onJoinPrepare, so a cooperative member did
        not lose its partitions (ConsumerCoordinator.onJoinPrepare's path for a reset
        generation): it kept consuming them and reported them owned in its next JoinGroup."""

        def _reset_generation(self, keep_member_id: bool, reason: str) -> None:
            # the reference sets needs_join_prepare again here (resetStateAndRejoin, the
            # fix); the bug left it as onJoinComplete last set it
            prepared = not self.needs_join_prepare
            super()._reset_generation(keep_member_id, reason)
            if prepared:
                self.needs_join_prepare = False
                if self.owned:
                    mut.hits += 1  # onJoinPrepare will not run: the partitions are not lost
    return Buggy


def _leader_rejoins_without_sync(mut: Client) -> type[Consumer]:
    class Buggy(Consumer):
        """KAFKA-13406 (fixed in 2.8.2, 3.0.1 and 3.1.0; clients/src/main/java/org/apache/
        kafka/clients/consumer/internals/ConsumerCoordinator.java, validateCooperativeAssignment):
        the leader's check of its own assignment threw, so onLeaderElected failed before the
        SyncGroup went out and the next poll rejoined, generation after generation."""

        def _on_join(self, rid: int, resp: m.JoinGroupResponse, sent: tuple[str, int, str], now: int,
                     cluster: ClusterView) -> list[Outgoing]:
            if rid == self.join_rid and resp.error is E.NONE and resp.leader and resp.leader == resp.member_id:
                mut.hits += 1
                self.join_rid = None
                self.generation_id, self.member_id = resp.generation_id, resp.member_id
                self.protocol_name = resp.protocol_name
                self.state = MemberState.UNJOINED
                self._rebalance_failed("IllegalStateException")
                self.retry_at_ms = now + self.config.retry_backoff_ms
                return []
            return super()._on_join(rid, resp, sent, now, cluster)
    return Buggy


def _leader(change: Callable[[Client, Consumer, m.JoinGroupResponse, ClusterView, int], tuple[m.SyncGroupAssignment, ...] | None]) -> ConsumerPatch:
    def make(mut: Client) -> type[Consumer]:
        class Buggy(Consumer):
            def _lead(self, resp: m.JoinGroupResponse, cluster: ClusterView, now: int) -> tuple[m.SyncGroupAssignment, ...]:
                new = change(mut, self, resp, cluster, now)
                if new is not None:
                    mut.hits += 1
                    return new
                return Consumer._lead(self, resp, cluster, now)
        return Buggy
    return make


def _eager_assignor_in_cooperative(mut: Client, c: Consumer, resp: m.JoinGroupResponse, cluster: ClusterView,
                                   now: int) -> tuple[m.SyncGroupAssignment, ...] | None:
    if resp.protocol_name != "cooperative-sticky" or len(resp.members) < 2:
        return None
    return Consumer._lead(c, dataclasses.replace(resp, protocol_name="range"), cluster, now)


def _double_assign(mut: Client, c: Consumer, resp: m.JoinGroupResponse, cluster: ClusterView,
                   now: int) -> tuple[m.SyncGroupAssignment, ...] | None:
    real = Consumer._lead(c, resp, cluster, now)
    if len(real) < 2:
        return None
    first = pairs(Assignment.decode(real[0].assignment).partitions)
    if not first:
        return None
    second = Assignment.decode(real[1].assignment)
    extra = pairs(second.partitions) | {min(first)}
    return (real[0], m.SyncGroupAssignment(real[1].member_id, Assignment(from_pairs(extra), second.user_data).encode()),
            *real[2:])


def _unsubscribed_topic(mut: Client, c: Consumer, resp: m.JoinGroupResponse, cluster: ClusterView,
                        now: int) -> tuple[m.SyncGroupAssignment, ...] | None:
    real = Consumer._lead(c, resp, cluster, now)
    if not real or mut.hits >= 1:
        return None  # once: the member it lands on rejoins, and the group would never settle
    a = Assignment.decode(real[0].assignment)
    parts = pairs(a.partitions) | {("audit-log", 0)}
    return (m.SyncGroupAssignment(real[0].member_id, Assignment(from_pairs(parts), a.user_data).encode()), *real[1:])


def all_mutants() -> list[Mutant]:
    hb, sync, commit = m.HeartbeatResponse, m.SyncGroupResponse, m.OffsetCommitResponse
    return [
        # ---- broker: heartbeat
        Rewrite("hb-skips-generation-check", "broker", "HeartbeatGenerationCheck",
                "Heartbeat of another generation answered NONE (the generation check skipped)",
                rewrite=_swap(hb, E.ILLEGAL_GENERATION, E.NONE)),
        Rewrite("hb-hides-rebalance", "broker", "HeartbeatSignalsRebalance",
                "Heartbeat during PreparingRebalance answered NONE: members learn of the rebalance late (liveness)",
                rewrite=_swap(hb, E.REBALANCE_IN_PROGRESS, E.NONE)),
        Rewrite("hb-accepts-unknown-member", "broker", "HeartbeatUnknownMember",
                "Heartbeat from a removed member answered NONE: a zombie keeps believing it is a member",
                rewrite=_swap(hb, E.UNKNOWN_MEMBER_ID, E.NONE)),
        Rewrite("hb-unknown-as-illegal-generation", "broker", "HeartbeatUnknownMember",
                "a removed member's Heartbeat answered ILLEGAL_GENERATION: it keeps its dead member id",
                rewrite=_swap(hb, E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION)),
        # ---- broker: commits
        Rewrite("commit-accepts-stale-generation", "broker", "CommitGenerationCheck / StaleCommitAccepted",
                "OffsetCommit of an old generation accepted: a zombie's commit overwrites the new owner's offsets",
                rewrite=_swap(commit, E.ILLEGAL_GENERATION, E.NONE)),
        Rewrite("commit-accepts-unknown-member", "broker", "CommitUnknownMember",
                "OffsetCommit from a removed member accepted",
                rewrite=_swap(commit, E.UNKNOWN_MEMBER_ID, E.NONE)),
        Rewrite("commit-accepts-during-completing", "broker", "CommitDuringCompletingRebalance",
                "OffsetCommit between JoinGroup and SyncGroup accepted",
                rewrite=_swap(commit, E.REBALANCE_IN_PROGRESS, E.NONE)),
        Rewrite("commit-illegal-generation-as-unknown", "broker", "CommitGenerationCheck",
                "a stale-generation OffsetCommit answered UNKNOWN_MEMBER_ID: the member drops a valid id",
                rewrite=_swap(commit, E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID)),
        # ---- broker: sync
        Rewrite("sync-wrong-protocol-name", "broker", "SyncGroupAnswer",
                "SyncGroup (v5+) answers a protocol name other than the generation's",
                rewrite=_sync_ok(lambda q, r: dataclasses.replace(r, protocol_name="roundrobin")
                                 if r.protocol_name not in (None, "roundrobin") else None)),
        Rewrite("sync-rebalance-as-unknown", "broker", "SyncDuringPreparingRebalance",
                "SyncGroup during PreparingRebalance answered UNKNOWN_MEMBER_ID: members lose their ids",
                patterns=(("late-sync",),), rewrite=_swap(sync, E.REBALANCE_IN_PROGRESS, E.UNKNOWN_MEMBER_ID)),
        Rewrite("sync-empty-follower-assignment", "broker", "SyncPropagatesLeaderAssignment",
                "followers receive an empty assignment instead of the leader's (partitions unowned: liveness)",
                rewrite=_sync_ok(_empty_follower_assignment)),
        Rewrite("sync-leader-assignment-to-all", "broker", "SyncPropagatesLeaderAssignment / OneOwnerPerGenerationInv",
                "every follower receives the leader's own assignment (two owners per partition: safety)",
                rewrite=_sync_ok(_leader_assignment_for_all)),
        # ---- broker: join
        Rewrite("join-generation-plus-one", "broker", "JoinCompletion",
                "JoinGroup answers one generation ahead of the group's (generations off by one)",
                rewrite=_join_ok(lambda q, r: dataclasses.replace(r, generation_id=r.generation_id + 1))),
        Rewrite("join-everyone-leader", "broker", "JoinCompletion",
                "every member is told it is the leader (several leaders assign at once)",
                rewrite=_join_ok(lambda q, r: dataclasses.replace(r, leader=r.member_id))),
        Rewrite("join-members-to-followers", "broker", "JoinCompletion",
                "the member list (with every subscription) goes to followers too",
                rewrite=_join_ok(lambda q, r: r if r.members or r.leader == r.member_id
                                 else dataclasses.replace(r, members=(m.JoinGroupResponseMember(r.member_id, None, b""),)))),
        Rewrite("join-wrong-protocol-type", "broker", "JoinCompletion",
                "JoinGroup answers a protocol type other than the group's (\"connect\" for a consumer group)",
                rewrite=_join_ok(lambda q, r: dataclasses.replace(r, protocol_type="connect"))),
        # ---- broker: leave and offsets
        Rewrite("leave-unknown-member-ok", "broker", "LeaveGroupAnswer",
                "LeaveGroup of an unknown member answered NONE per member",
                rewrite=_leave_unknown_ok),
        Rewrite("leave-top-level-error", "broker", "LeaveGroupAnswer",
                "a successful LeaveGroup answered with a top-level UNKNOWN_MEMBER_ID",
                rewrite=_leave_top_level_error),
        Rewrite("offset-fetch-forgets-commits", "broker", "FetchReturnsCommitted",
                "OffsetFetch returns no committed offset (-1): members reprocess from the start",
                rewrite=_offset_fetch(lambda o: -1)),
        Rewrite("offset-fetch-off-by-one", "broker", "FetchReturnsCommitted",
                "OffsetFetch returns the committed offset minus one: one record processed twice",
                rewrite=_offset_fetch(lambda o: max(o - 1, 0))),
        # ---- broker: timers and state (patches)
        Patch("join-never-waits", "broker", "JoinWaitsForAllMembers",
              "the join phase completes as soon as any member joins, without waiting for the others",
              target=(group.Group, "has_all_members_joined", _all_joined)),
        Patch("session-never-expires", "broker", "session expiry (timing, issue item 2)",
              "a member whose heartbeats stop is never removed (liveness: its partitions stay owned by nobody)",
              target=(coordinator_module, "fire", _no_session_expiry)),
        Patch("rebalance-timeout-ignored", "broker", "JoinWaitsForAllMembers (timing)",
              "the join phase waits for a member that never rejoins past the rebalance timeout",
              patterns=(("crash-then-join",),), target=(coordinator_module, "fire", _no_rebalance_timeout)),
        Patch("leave-does-not-rebalance", "broker", "HeartbeatSignalsRebalance",
              "LeaveGroup removes the member but starts no rebalance: its partitions stay unowned",
              target=(rebalance, "maybe_prepare_rebalance_or_complete_join", _no_leave_rebalance)),
        Patch("departed-leader-stays-leader", "broker", "JoinCompletion",
              "a leader that did not rejoin stays leader of the next generation (no one assigns)",
              # a dynamic member that did not rejoin is removed when the join phase ends, and
              # a removed leader is replaced at once: only a static leader stays to be kept
              protocols=("static",), patterns=(("crash-then-join",),),
              target=(rebalance, "maybe_elect_new_joined_leader", _leader_kept)),
        # ---- broker: historical Kafka bugs (the issue each one was)
        Patch("kafka-12890-sync-timeout-ignored", "broker", "HeartbeatSignalsRebalance",
              "KAFKA-12890: a member that never sends SyncGroup is not removed when the sync phase times out",
              protocols=("static",), patterns=(("crash-then-join",),),
              target=(coordinator_module, "fire", _no_sync_timeout)),
        Patch("kafka-8220-static-removed-at-join-end", "broker", "JoinCompletion",
              "KAFKA-8220: a static member that did not rejoin in time is removed when the join phase ends",
              protocols=("static",), patterns=(("crash-then-join",),),
              target=(rebalance, "complete_join", _static_removed_at_join_end)),
        Patch("kip-394-no-member-id-required", "broker", "JoinMemberIdRequired",
              "KAFKA-7610 / KIP-394: a JoinGroup v4+ without a member id is admitted at once, no MEMBER_ID_REQUIRED",
              protocols=("eager", "cooperative"), target=(join_group, "_join_new_member", _no_member_id_required)),
        Patch("kafka-10284-static-replacement-not-persisted", "broker", "CommitAccepted / HeartbeatAnswer (after the failover)",
              "KAFKA-10284: a static member's new member id is not persisted; a failover brings back the old one",
              protocols=("static",), patterns=(("static-restart-failover",),),
              target=(join_group, "_replace_static_member", _static_replacement_not_persisted)),
        Patch("kafka-13435-replaced-leader-told-follower", "broker", "JoinCompletion",
              "KAFKA-13435: a restarted static leader is answered with the old leader id and no skip-assignment",
              protocols=("static",), patterns=(("leader-static-restart",),),
              target=(join_group, "_replace_static_member", _replaced_leader_told_follower)),
        Patch("kafka-8500-static-rejoin-keeps-old-id", "broker", "MemberIdFresh",
              "KAFKA-8500: a static member rejoining without a member id during a rebalance gets its old member id back",
              protocols=("static",), patterns=(("static-restart-in-rebalance",),),
              target=(join_group, "_replace_static_member", _static_rejoin_keeps_old_id)),
        Patch("kafka-9801-static-rejoin-in-sync-no-rebalance", "broker",
              "SyncDuringPreparingRebalance (the SyncGroups waiting when the rejoin should start a rebalance)",
              "KAFKA-9801: a static member rejoining without a member id in CompletingRebalance is answered at once, "
              "no rebalance: the leader's assignment leaves its new member id nothing",
              protocols=("static",), patterns=(("static-restart-in-sync",),),
              target=(join_group, "_replace_static_member", _static_rejoin_no_rebalance_in_sync)),
        # ---- broker: the consumer protocol (KIP-848)
        Patch("consumer-hands-over-before-release", "broker", "ConsumerReconciliation",
              "partitions a member still reports owning are taken as revoked and handed to their next owner",
              protocols=KIP848, target=(reconciliation, "_owns_any", _revoked_at_once)),
        Patch("consumer-session-never-expires", "broker", "ConsumerUnknownMember (session expiry)",
              "a consumer-protocol member whose heartbeats stop is never fenced: its partitions stay with it",
              protocols=KIP848, target=(consumer_heartbeat, "expire_session", _no_consumer_session_expiry)),
        Patch("consumer-leave-ignored", "broker", "ConsumerReconciliation",
              "a leave (epoch -1) is answered but the member stays: no epoch bump, its partitions wait for its session",
              protocols=KIP848, target=(consumer_heartbeat, "_leave", _leave_ignored)),
        Rewrite("consumer-epoch-ahead", "broker", "ConsumerReconciliation",
                "a heartbeat that carries an assignment answers a member epoch one ahead of the member's",
                protocols=KIP848, rewrite=_epoch_ahead),
        Rewrite("consumer-commit-accepts-stale-epoch", "broker", "CommitMemberEpoch",
                "an OffsetCommit at an older member epoch accepted (STALE_MEMBER_EPOCH expected): a zombie's offsets stored",
                protocols=KIP848, rewrite=_swap(commit, E.STALE_MEMBER_EPOCH, E.NONE)),
        Rewrite("consumer-commit-accepts-unknown-member", "broker", "CommitUnknownMember",
                "an OffsetCommit from a fenced consumer-protocol member accepted",
                protocols=KIP848, rewrite=_swap(commit, E.UNKNOWN_MEMBER_ID, E.NONE)),
        # ---- clients
        Client("eager-consumes-across-rebalance", "client", "ClientFetchesOwnedOnly",
               "an eager member keeps consuming its partitions after sending JoinGroup",
               protocols=("eager",), make=_eager_keeps_partitions),
        Client("cooperative-keeps-revoked", "client", "CooperativeOwnedIsAssigned / ClientFetchesOwnedOnly",
               "a cooperative member keeps partitions it was told to revoke and reports them owned",
               protocols=("cooperative",), make=_cooperative_keeps_revoked),
        Client("commits-remembered-offsets", "client", "ClientCommitsOwnedOnly",
               "a member commits offsets of every partition it ever consumed, owned or not",
               make=_commits_remembered_offsets),
        Client("resets-on-stale-heartbeat-error", "client", "ClientIgnoresStaleErrors",
               "a heartbeat error for an old generation resets the current one (KAFKA-9823)",
               make=_resets_on_stale_heartbeat_error),
        Client("heartbeats-after-fencing", "client", "ClientStopsWhenFenced",
               "after a rejected heartbeat the heartbeat thread keeps the old member id and generation",
               make=_heartbeats_after_fencing),
        Client("commits-after-fencing", "client", "ClientStopsWhenFenced",
               "after a rejected heartbeat, the next auto-commit still carries the rejected id and generation",
               make=_commits_after_fencing),
        Client("heartbeat-slower-than-session", "client", "HeartbeatKeepsSessionAlive",
               "heartbeat.interval.ms above session.timeout.ms (not validated): the session lapses again and again",
               make=_slow_heartbeats),
        Client("eager-reports-owned", "client", "EagerRevokesBeforeJoin",
               "an eager member reports its old partitions as owned when it rejoins",
               protocols=("eager",), make=_eager_reports_owned),
        Client("keeps-lost-partitions", "client", "ClientFetchesOwnedOnly",
               "a member whose generation is reset does not give up its partitions (onPartitionsLost skipped)",
               make=_keeps_lost_partitions),
        Client("kafka-12983-rejoin-skips-join-prepare", "client", "ClientFetchesOwnedOnly",
               "KAFKA-12983: after its member id is reset during a rebalance a cooperative member rejoins without "
               "onJoinPrepare: it keeps consuming the partitions it lost and reports them owned",
               protocols=("cooperative",), patterns=(("pause-before-rejoin",),), make=_join_prepare_once),
        Client("kafka-13406-leader-rejoins-without-sync", "client", "LeaderSyncsItsGeneration",
               "KAFKA-13406: the leader's assignment fails its own check: no SyncGroup, it rejoins, again and again",
               make=_leader_rejoins_without_sync),
        Client("leader-ignores-revoke-first", "client", "CooperativeRevokeFirst",
               "a cooperative leader moves partitions in one step (an eager assignor's output)",
               protocols=("cooperative",), make=_leader(_eager_assignor_in_cooperative)),
        Client("leader-assigns-twice", "client", "AssignDisjoint",
               "the leader gives one partition to two members", make=_leader(_double_assign)),
        Client("leader-assigns-unsubscribed", "client", "AssignSubscribedTopicsOnly",
               "the leader assigns a partition of a topic nobody subscribed to",
               make=_leader(_unsubscribed_topic)),
    ]


class Prober(Consumer):
    """A lawful client that also sends what a real client may have in flight when a new
    generation arrives: a Heartbeat and an OffsetCommit of the generation it just left, and
    (cooperative) a commit of its partitions before its SyncGroup is answered. Their answers
    are ignored (a real client's would be stale). Broker mutants and half the baseline run
    with it, so the coordinator's generation and rebalance checks are exercised."""

    def __init__(self, config: ConsumerConfig, now_ms: int, next_request_id: Callable[[], int]) -> None:
        super().__init__(config, now_ms, next_request_id)
        self.probes: set[int] = set()
        self.assigned_in: dict[int, set[TP]] = {}
        self.fenced: set[tuple[str, int]] = set()

    def on_response(self, rid: int, resp: m.Response, now: int, cluster: ClusterView) -> list[Outgoing]:
        if rid in self.probes:
            self.probes.discard(rid)
            self.inflight.pop(rid, None)
            self.request_deadline.pop(rid, None)
            return []
        sent = self.inflight.get(rid)
        racing: list[Outgoing] = []
        if sent is not None and isinstance(resp, m.HeartbeatResponse | m.OffsetCommitResponse | m.SyncGroupResponse):
            errs = resp.errors() if isinstance(resp, m.OffsetCommitResponse) else {resp.error}
            if errs & {E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID}:
                self.fenced.add((sent[2], sent[1]))
        if isinstance(resp, m.JoinGroupResponse) and rid == self.join_rid:
            return self._probe_join(rid, resp, now, cluster)
        return racing + super().on_response(rid, resp, now, cluster)

    def _committed_of(self, parts: set[TP]) -> tuple[m.OffsetCommitPartition, ...]:
        return tuple(m.OffsetCommitPartition(topic=t, partition=p, committed_offset=self.committed[(t, p)])
                     for t, p in sorted(parts) if (t, p) in self.committed)

    def _probe(self, api: str, req: m.Request) -> Outgoing:
        out = self._send(api, req)
        self.probes.add(out[0])
        return out

    def _probe_join(self, rid: int, resp: m.JoinGroupResponse, now: int, cluster: ClusterView) -> list[Outgoing]:
        """The probes go first (lower correlation ids, sent before the SyncGroup, as on a
        real connection), then the JoinGroup is handled as usual."""
        out: list[Outgoing] = []
        old_gen, old_member = self.generation_id, self.member_id
        if resp.error is E.NONE:
            gid, inst = self.config.group_id, self.config.group_instance_id
            if (0 <= old_gen < resp.generation_id and old_member == resp.member_id
                    and (old_member, old_gen) not in self.fenced):
                out.append(self._probe("Heartbeat", m.HeartbeatRequest(
                    group_id=gid, generation_id=old_gen, member_id=old_member, group_instance_id=inst)))
                parts = self._committed_of(self.assigned_in.get(old_gen, set()))
                if parts:
                    out.append(self._probe("OffsetCommit", m.OffsetCommitRequest(
                        group_id=gid, generation_id=old_gen, member_id=old_member, group_instance_id=inst,
                        partitions=parts)))
            mine = tuple(m.OffsetCommitPartition(topic=t, partition=p, committed_offset=self.positions[(t, p)])
                         for t, p in sorted(self.owned) if (t, p) in self.positions)
            if not mine and old_gen >= 0:  # eager: nothing owned now; last generation's commits again
                mine = self._committed_of(self.assigned_in.get(old_gen, set()))
            if mine:
                out.append(self._probe("OffsetCommit", m.OffsetCommitRequest(
                    group_id=gid, generation_id=resp.generation_id, member_id=resp.member_id,
                    group_instance_id=inst, partitions=mine)))
        return out + super().on_response(rid, resp, now, cluster)

    def _on_join_complete(self, assignment: Assignment, now: int) -> list[Outgoing]:
        self.assigned_in[self.generation_id] = pairs(assignment.partitions)
        return super()._on_join_complete(assignment, now)

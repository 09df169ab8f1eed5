"""The KIP-848 consumer: a consumer-protocol member's state machine (sans-IO).

Mirrors the Java client's new consumer (clients/src/main/java/org/apache/kafka/clients/
consumer/internals/): ConsumerHeartbeatRequestManager (the heartbeat at the interval the
broker gives, at once when an assignment was reconciled; the fields a heartbeat carries
only when they changed, HeartbeatState.buildRequestData), AbstractMembershipManager and
ConsumerMembershipManager (states JOINING, RECONCILING, ACKNOWLEDGING, STABLE, FENCED,
LEAVING; reconciliation: the partitions to revoke are committed and revoked first, in the
application thread, then the new ones assigned; fencing loses every partition and rejoins
at epoch 0 with the same member id; leaving with epoch -1, or -2 for a static member),
and the commits by member epoch (CommitRequestManager: OffsetCommit v9): with auto-commit,
every consumed position at each auto.commit.interval.ms and, before a reconciliation
revokes or assigns anything, synchronously (the reconciliation waits for the answer).

Same interface as the classic model (:class:`groupspec.client.classic.consumer.Consumer`):
``tick``, ``on_response``, ``close``, ``next_deadline``, :attr:`events`, :attr:`owned`,
:attr:`processed`, so the simulator drives either. The member id is generated once per
consumer, as the Java client does from ConsumerGroupHeartbeat v1 (KIP-1082).

Simplifications (docs/deviations.md): the revocation and assignment callbacks take no time
unless the application is stalled (``poll_blocked_until_ms``); a reconciliation starts in
the application's poll and completes as soon as the commit before it is answered (as with
no rebalance listener, the callbacks being events); without auto-commit the
application's rebalance listener commits what is revoked (not waited for) and the
application commits what it consumed after each poll; commits need a member epoch.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from enum import Enum

from groupspec.client.classic.consumer import ClientEvent, ClusterView
from groupspec.client.config import ConsumerConfig, GroupMembershipOperation
from groupspec.client.consumption import Consumption
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId

TP = tuple[str, int]
Outgoing = tuple[int, m.Request]

#: OffsetCommit and OffsetFetch versions a consumer-protocol member uses (KIP-848)
COMMIT_VERSION = 9
#: retry.backoff.max.ms's default (CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MAX_MS)
RETRY_BACKOFF_MAX_MS = 1_000
#: the commit before a reconciliation retries these (their exceptions are retriable:
#: CommitRequestManager.OffsetCommitRequestState.onResponse); UNKNOWN_TOPIC_OR_PARTITION is
#: retriable too but ends the commit (the topic is gone), and STALE_MEMBER_EPOCH is retried
#: while the member has an epoch (isStaleEpochErrorAndValidEpochAvailable)
_RECONCILE_COMMIT_RETRIED = frozenset({
    Error.COORDINATOR_NOT_AVAILABLE, Error.NOT_COORDINATOR, Error.REQUEST_TIMED_OUT,
    Error.COORDINATOR_LOAD_IN_PROGRESS})


class MemberState(Enum):
    """clients/.../consumer/internals/MemberState.java (the states modelled)."""

    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"
    RECONCILING = "RECONCILING"
    ACKNOWLEDGING = "ACKNOWLEDGING"
    STABLE = "STABLE"
    FENCED = "FENCED"
    LEAVING = "LEAVING"
    UNJOINED = "UNJOINED"
    FATAL = "FATAL"


class _Reconciliation:
    """A reconciliation in progress (AbstractMembershipManager.maybeReconcile): the
    assignment it applies and, with auto-commit, the commit before it
    (CommitRequestManager.maybeAutoCommitSyncBeforeRebalance in 4.1.2)."""

    __slots__ = ("added", "attempts", "commit_rid", "deadline_ms", "retry_at_ms", "revoked", "target")

    def __init__(self, target: frozenset[TP], revoked: set[TP], added: frozenset[TP],
                 deadline_ms: int) -> None:
        self.target = target
        self.revoked = revoked
        self.added = added
        #: the commit in flight, or None
        self.commit_rid: int | None = None
        #: the rebalance timeout's deadline: no retry of the commit after it
        self.deadline_ms = deadline_ms
        #: a retriable failure: the commit is sent again (latest positions, latest epoch)
        #: once this time has come (RequestState's exponential backoff)
        self.retry_at_ms: int | None = None
        self.attempts = 0


class ConsumerProtocolConsumer(Consumption):
    def __init__(self, config: ConsumerConfig, now_ms: int, next_request_id: Callable[[], int]) -> None:
        self.config = config
        self.name = config.client_id
        self._rid = next_request_id
        # Uuid.randomUuid().toString() in the Java client; here derived from the client id
        # and the start time, so runs are reproducible
        self.member_id = str(TopicId(uuid.uuid5(uuid.NAMESPACE_URL, f"{config.client_id}@{now_ms}").int))
        self.member_epoch = 0
        self.state = MemberState.JOINING
        self.closed = False
        #: set by close() until the member has left: AsyncKafkaConsumer.close commits first
        #: (autoCommitOnClose -> commitSyncAllConsumed), within the close timer (see :meth:`close`)
        self.closing: GroupMembershipOperation | None = None
        self.close_deadline_ms = 0
        #: the close's commit: "todo" (to send, or again after a retriable failure), "sent"
        #: (waiting for its answer) or "done"
        self.close_commit = "done"
        self.close_commit_rid: int | None = None
        self.close_retry_at_ms = 0
        self.fatal: str | None = None
        self.coordinator_known = False
        self._init_consumption()
        #: the assignment the broker sent last and not yet reconciled
        self.target: set[TP] | None = None
        self.events: list[ClientEvent] = []
        self.inflight: dict[int, tuple[str, int]] = {}  # rid -> (api, epoch sent)
        self.request_deadline: dict[int, int] = {}
        self.heartbeat_rid: int | None = None
        self.find_rid: int | None = None
        #: CoordinatorRequestManager's RequestState: when its last FindCoordinator was
        #: answered (None: never) and how many failed in a row since one succeeded
        self.find_answered_ms: int | None = None
        self.find_failures = 0
        self.fetch_rid: int | None = None
        self.heartbeat_interval_ms = config.heartbeat_interval_ms
        self.next_heartbeat_ms = now_ms
        #: HeartbeatRequestState's backoff (RequestState): no regular heartbeat before this
        #: time; retry.backoff.ms after an answer, doubling (up to retry.backoff.max.ms) with
        #: each failed attempt in a row; a heartbeat due now (joining, acknowledging) ignores it
        self.heartbeat_backoff_until_ms = now_ms
        self.heartbeat_failures = 0
        self.next_poll_ms = now_ms
        self.last_poll_ms = now_ms
        #: CommitRequestManager.AutoCommitState: the interval timer and the in-flight flag
        #: (a commit of the auto-commit's, on the interval or before a reconciliation)
        self.next_auto_commit_ms = now_ms + config.auto_commit_interval_ms
        self.auto_commit_rids: set[int] = set()
        #: AbstractMembershipManager.reconciliationInProgress and
        #: rejoinedWhileReconciliationInProgress
        self.reconciliation: _Reconciliation | None = None
        self.rejoined_while_reconciling = False
        #: SubscriptionState.markPendingRevocation: no more records for these
        self.pending_revocation: set[TP] = set()
        #: AbstractMembershipManager.currentAssignment is LocalAssignment.NONE: nothing
        #: reconciled since joining (or since clearAssignment); any target is then
        #: reconciled and acknowledged, an empty one included
        self.assignment_none = True
        self.poll_blocked_until_ms = now_ms
        #: HeartbeatState.sentFields: what the last heartbeat carried
        self._sent_topics: tuple[str, ...] | None = None
        #: the local assignment last sent (HeartbeatState.SentFields.localAssignment): -1 for
        #: LocalAssignment.NONE, else :attr:`_assignment_version`
        self._sent_assignment: int | None = None
        #: LocalAssignment's local epoch: moves whenever a reconciliation changes the current
        #: assignment, or sets it after NONE (LocalAssignment.updateWith), so an acknowledgement
        #: carries the partitions even when they are the ones last sent (an empty assignment
        #: after joining: ConsumerHeartbeatRequestManagerTest.testHeartbeatState)
        self._assignment_version = 0
        self._send_all = True
        self._now = now_ms

    # ------------------------------------------------------------------ helpers
    @property
    def generation_id(self) -> int:
        """The member epoch, as the simulator reads a classic member's generation."""
        return self.member_epoch

    def _event(self, kind: str, parts: set[TP] | None = None, detail: str = "") -> None:
        self.events.append(ClientEvent(self._now, self.name, kind, tuple(sorted(parts or ())), detail))

    def _send(self, api: str, req: m.Request) -> Outgoing:
        rid = self._rid()
        self.inflight[rid] = (api, self.member_epoch)
        self.request_deadline[rid] = self._now + self.config.request_timeout_ms
        if isinstance(req, m.OffsetCommitRequest):
            self._note_sent(rid, req)
        return rid, req

    def _lose_all(self, why: str) -> None:
        """onPartitionsLost: ownership is gone and nothing is committed."""
        if self.owned:
            self._event("lost", self.owned, why)
        self._drop(set(self.owned))
        self.pending_revocation.clear()
        self.assignment_none = True  # clearAssignment

    def _to_joining(self) -> None:
        """AbstractMembershipManager.transitionToJoining: epoch 0, JOINING, and a
        reconciliation still in progress is marked to be dropped when it resumes
        (rejoinedWhileReconciliationInProgress)."""
        if self.reconciliation is not None:
            self.rejoined_while_reconciling = True
        self.member_epoch, self.state = 0, MemberState.JOINING
        self.target = None

    def _commit(self, parts: set[TP]) -> list[Outgoing]:
        """The application's commit (no auto-commit): the positions of ``parts`` that moved."""
        if self.member_epoch <= 0:
            return []
        return self._commit_offsets(self._uncommitted(parts))

    def _commit_offsets(self, offsets: tuple[m.OffsetCommitPartition, ...]) -> list[Outgoing]:
        if not offsets:
            return []
        return [self._send("OffsetCommit", m.OffsetCommitRequest(
            group_id=self.config.group_id, generation_id=self.member_epoch,
            member_id=self.member_id, group_instance_id=self.config.group_instance_id,
            partitions=offsets, version=COMMIT_VERSION))]

    def _auto_commit(self) -> list[Outgoing]:
        """CommitRequestManager.requestAutoCommit: all consumed, flagged in flight (nothing
        is sent if nothing has a position). The member epoch is the one the commit carries
        (memberInfo); without one the model sends nothing."""
        if self.member_epoch <= 0:
            return []
        out = self._commit_offsets(self._all_consumed(self.owned))
        self.auto_commit_rids.update(rid for rid, _ in out)
        return out

    def _wire(self, parts: set[TP], cluster: ClusterView) -> tuple[HeartbeatTopicPartitions, ...]:
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(parts):
            by_topic.setdefault(t, []).append(p)
        return tuple(HeartbeatTopicPartitions(cluster.topic_id(t), tuple(ps))
                     for t, ps in sorted(by_topic.items()))

    # ------------------------------------------------------------------ inputs
    def next_deadline(self) -> int | None:
        if self.closed or self.fatal is not None:
            return None
        if self.closing is not None:
            # the close timer, and the backoff before its commit goes out again
            times = [self.close_deadline_ms]
            if self.close_commit == "todo":
                times.append(self.close_retry_at_ms)
        else:
            times = [max(self.next_poll_ms, self.poll_blocked_until_ms)]
        times.extend(self.request_deadline.values())
        r = self.reconciliation
        if r is not None and r.retry_at_ms is not None and self.coordinator_known:
            times.append(r.retry_at_ms)
        if self.coordinator_known and self.heartbeat_rid is None:
            times.append(max(self.next_heartbeat_ms, self.heartbeat_backoff_until_ms))
        if not self.coordinator_known and self.find_rid is None:
            times.append(self._next_lookup_ms())
        return min(times)

    def tick(self, now: int, cluster: ClusterView) -> list[Outgoing]:
        if self.closed or self.fatal is not None:
            return []
        self._now = now
        out: list[Outgoing] = []
        for rid, deadline in list(self.request_deadline.items()):
            if deadline <= now:
                # NetworkClient's request timeout: the coordinator is looked up again
                self.inflight.pop(rid, None)
                del self.request_deadline[rid]
                if rid == self.heartbeat_rid:
                    self.heartbeat_rid = None
                    # AbstractHeartbeatRequestManager.onFailure: a failed attempt (backoff,
                    # the interval timer expired) and a full heartbeat next
                    self._heartbeat_failed(now)
                if rid == self.fetch_rid:
                    self.fetch_rid = None
                if rid == self.find_rid:
                    self.find_rid = None
                    # RequestState.onFailedAttempt: the lookup backs off
                    self.find_answered_ms = now
                    self.find_failures += 1
                self.auto_commit_rids.discard(rid)
                r = self.reconciliation
                if r is not None and rid == r.commit_rid:
                    # a TimeoutException: retriable
                    self._reconcile_commit_failed(r, True, now)
                self.coordinator_known = False
        if self.closing is not None:
            # the application is in close(): no poll; the background thread heartbeats on
            out += self._lookup_coordinator(now)
            out += self._heartbeat(now, cluster)
            return out + self._close_step(now)
        out += self._retry_reconcile_commit(now)
        if now >= self.poll_blocked_until_ms and now >= self.next_poll_ms:
            out += self._poll(now, cluster)
        out += self._lookup_coordinator(now)
        out += self._heartbeat(now, cluster)
        return out

    def _next_lookup_ms(self) -> int:
        """When CoordinatorRequestManager may send its next FindCoordinator (RequestState
        canSendRequest): at once before any was answered, else retry.backoff.ms after the
        last answer, doubling (up to retry.backoff.max.ms) with each further failure in a
        row (onFailedAttempt takes the backoff of the attempts before it; ExponentialBackoff
        without its jitter, as the heartbeat's)."""
        if self.find_answered_ms is None:
            return 0
        backoff: int = min(self.config.retry_backoff_ms << max(0, self.find_failures - 1), RETRY_BACKOFF_MAX_MS)
        return self.find_answered_ms + backoff

    def _lookup_coordinator(self, now: int) -> list[Outgoing]:
        """CoordinatorRequestManager.poll, run by the background thread whether or not the
        application polls: a FindCoordinator whenever the coordinator is unknown, none is
        in flight and the backoff has passed."""
        if self.coordinator_known or self.find_rid is not None or now < self._next_lookup_ms():
            return []
        self.find_rid, req = self._send("FindCoordinator", m.FindCoordinatorRequest(key=self.config.group_id))
        return [(self.find_rid, req)]

    def _poll(self, now: int, cluster: ClusterView) -> list[Outgoing]:
        """One application poll(): callbacks of a pending reconciliation, then records."""
        out: list[Outgoing] = []
        self.last_poll_ms = now
        self.next_poll_ms = now + self.config.poll_interval_ms
        if not self.coordinator_known:
            return out  # the background thread looks it up (_lookup_coordinator)
        if self.state is MemberState.UNJOINED:
            # a member that left after a poll timeout rejoins on the next poll
            self._to_joining()
            self._send_all = True
            self.next_heartbeat_ms = now
        # 4.1.2's ApplicationEventProcessor.process(PollEvent): maybeReconcile(true), then
        # CommitRequestManager.updateTimerAndMaybeCommit; the records come after
        out += self._reconcile(now)
        # maybeAutoCommitAsync: once the interval has passed and no commit of the
        # auto-commit's is in flight (AutoCommitState.shouldAutoCommit), all consumed; the
        # timer restarts whether or not anything was sent. (A failed commit does not shorten
        # it: requestAutoCommit's future fails with the error itself, never the
        # RetriableCommitFailedException maybeResetTimerWithBackoff looks for.)
        if (self.config.enable_auto_commit and now >= self.next_auto_commit_ms
                and not self.auto_commit_rids):
            self.next_auto_commit_ms = now + self.config.auto_commit_interval_ms
            out += self._auto_commit()
        out += self._fetch_positions()
        self._consume(cluster.log_end_offsets, self.config.max_poll_records_per_partition,
                      self.pending_revocation)
        if self.state is MemberState.STABLE and not self.config.enable_auto_commit:
            out += self._commit(set(self.owned))  # the application's commit after its poll
        return out

    def _reconcile(self, now: int) -> list[Outgoing]:
        """AbstractMembershipManager.maybeReconcile (4.1.2, from the application's poll):
        the partitions to revoke stop returning records (markPendingRevocationToPauseFetching);
        with auto-commit, everything consumed is committed and the reconciliation waits for
        the answer (ConsumerMembershipManager.signalReconciliationStarted); then, unless the
        member left RECONCILING or rejoined meanwhile (maybeAbortReconciliation), revoke,
        assign, and acknowledge with the next heartbeat (revokeAndAssign)."""
        out: list[Outgoing] = []
        if self.reconciliation is None:
            if self.state is not MemberState.RECONCILING or self.target is None:
                return out
            target = frozenset(self.target)
            revoked, added = self.owned - target, target - self.owned
            if not revoked and not added and not self.assignment_none:
                # the same partitions (resolved): acknowledged without callbacks
                self.target = None
                self._acknowledging(now)
                return out
            # markReconciliationInProgress
            self.rejoined_while_reconciling = False
            r = self.reconciliation = _Reconciliation(
                target, revoked, added, now + self.config.max_poll_interval_ms)
            self.pending_revocation |= revoked
            if self.config.enable_auto_commit:
                # CommitRequestManager.maybeAutoCommitSyncBeforeRebalance: the deadline is
                # the rebalance timeout; nothing to commit completes at once
                out += self._auto_commit()
                if out:
                    r.commit_rid, r.attempts = out[0][0], 1
                    return out
            out += self._revoke_and_assign(now)
        return out

    def _revoke_and_assign(self, now: int) -> list[Outgoing]:
        """The commit before the reconciliation is done (or failed, or there was none): the
        rest runs at once, as in the Java client with no rebalance listener (the callbacks
        complete in the background thread)."""
        out: list[Outgoing] = []
        r = self.reconciliation
        if r is None:
            return out
        self.reconciliation = None  # markReconciliationCompleted
        if self.state is not MemberState.RECONCILING or self.rejoined_while_reconciling:
            # maybeAbortReconciliation
            self.rejoined_while_reconciling = False
            self.pending_revocation -= r.revoked
            return out
        revoked = r.revoked & self.owned
        if revoked:
            if not self.config.enable_auto_commit:
                # the model's application: its rebalance listener commits what is revoked
                out += self._commit(revoked)
            self._event("revoked", revoked, f"epoch {self.member_epoch}")
            self._drop(revoked)
            self.pending_revocation -= revoked
        added = r.target - self.owned
        if added:
            self.owned |= added
            self.awaiting_position |= added
            self._event("assigned", set(added), f"epoch {self.member_epoch}")
        if self.target is not None and frozenset(self.target) == r.target:
            self.target = None
        if self.assignment_none or revoked or added:
            self._assignment_version += 1  # updateAssignment: a new LocalAssignment
        self.assignment_none = False  # currentAssignment = the assignment reconciled
        # signalReconciliationCompleting: the auto-commit interval restarts now
        self.next_auto_commit_ms = now + self.config.auto_commit_interval_ms
        self._acknowledging(now)
        return out

    def _acknowledging(self, now: int) -> None:
        """ACKNOWLEDGING: the next heartbeat goes out at once."""
        self.state = MemberState.ACKNOWLEDGING
        self.next_heartbeat_ms = now

    def _reconcile_commit_failed(self, r: _Reconciliation, retriable: bool, now: int) -> None:
        """autoCommitSyncBeforeRebalanceWithRetries: a retriable error (STALE_MEMBER_EPOCH
        included) is retried with the latest positions and epoch until the deadline; any
        other ends the commit, and the reconciliation goes on."""
        r.commit_rid = None
        if retriable and now < r.deadline_ms:
            # RequestState.onFailedAttempt: retry.backoff.ms, doubling, at most
            # retry.backoff.max.ms
            r.retry_at_ms = now + min(self.config.retry_backoff_ms * 2 ** (r.attempts - 1),
                                      RETRY_BACKOFF_MAX_MS)
        else:
            self._revoke_and_assign(now)

    def _retry_reconcile_commit(self, now: int) -> list[Outgoing]:
        r = self.reconciliation
        if (r is None or r.retry_at_ms is None or now < r.retry_at_ms
                or not self.coordinator_known):
            return []
        r.retry_at_ms = None
        out = self._auto_commit()
        if out:
            r.commit_rid = out[0][0]
            r.attempts += 1
            return out
        return self._revoke_and_assign(now)

    def _fetch_positions(self) -> list[Outgoing]:
        if not self.awaiting_position or self.fetch_rid is not None or not self.coordinator_known:
            return []
        self.fetch_rid, req = self._send("OffsetFetch", m.OffsetFetchRequest(
            group_id=self.config.group_id, partitions=tuple(sorted(self.awaiting_position)),
            member_id=self.member_id, member_epoch=self.member_epoch))
        return [(self.fetch_rid, req)]

    def _heartbeat(self, now: int, cluster: ClusterView) -> list[Outgoing]:
        if not self.coordinator_known:
            return []
        if self.state in (MemberState.UNJOINED, MemberState.LEAVING, MemberState.UNSUBSCRIBED):
            return []
        if now - self.last_poll_ms > self.config.max_poll_interval_ms:
            # the poll timer expired: leave (epoch -1, or -2 for a static member) and rejoin
            # on the next poll (ConsumerMembershipManager.transitionToSendingLeaveGroup). A
            # joining member leaves too, and a heartbeat in flight does not hold the leave
            # back: AbstractHeartbeatRequestManager.poll checks the poll timer before both
            self._lose_all("max.poll.interval.ms expired")
            out = self._leave("poll timeout")
            self.state = MemberState.UNJOINED
            return out
        if self.heartbeat_rid is not None:
            return []
        due = self.state in (MemberState.JOINING, MemberState.ACKNOWLEDGING) or (
            now >= self.next_heartbeat_ms and now >= self.heartbeat_backoff_until_ms)
        if not due:
            return []
        # a pattern is sent as SubscribedTopicRegex (RE2, resolved by the broker: Java's
        # subscribe(SubscriptionPattern)); topic names otherwise
        regex = self.config.pattern
        topics = () if regex is not None else self.config.subscribed(frozenset(cluster.partitions))
        full = self._send_all or self.state is MemberState.JOINING
        owned = frozenset(self.owned)
        local = -1 if self.assignment_none else self._assignment_version
        req = ConsumerGroupHeartbeatRequest(
            group_id=self.config.group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            instance_id=self.config.group_instance_id,
            rebalance_timeout_ms=self.config.max_poll_interval_ms if full else -1,
            server_assignor=self.config.remote_assignor if full else None,
            subscribed_topic_names=(None if regex is not None else
                                    topics if full or topics != self._sent_topics else None),
            subscribed_topic_regex=regex if regex is not None and full else None,
            topic_partitions=(self._wire(set(owned), cluster)
                              if full or local != self._sent_assignment else None),
            client_id=self.config.client_id,
            # HeartbeatState.buildRequestData: the rack only while JOINING (not after a reset)
            rack_id=self.config.client_rack if self.state is MemberState.JOINING else None,
        )
        self._sent_topics = topics
        self._sent_assignment = local
        self._send_all = False
        if self.state is MemberState.ACKNOWLEDGING:
            # onHeartbeatRequestGenerated: STABLE, or RECONCILING if a newer target came
            self.state = MemberState.STABLE if self.target is None else MemberState.RECONCILING
        self.heartbeat_rid, req2 = self._send("ConsumerGroupHeartbeat", req)
        self.next_heartbeat_ms = now + self.heartbeat_interval_ms
        return [(self.heartbeat_rid, req2)]

    def _leave(self, why: str,
               operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT) -> list[Outgoing]:
        static = self.config.group_instance_id is not None
        if operation is GroupMembershipOperation.REMAIN_IN_GROUP and not static:
            # ConsumerHeartbeatRequestManager.shouldSendLeaveHeartbeatNow: a dynamic member
            # closing with REMAIN_IN_GROUP sends no leave heartbeat
            return []
        # ConsumerMembershipManager.leaveGroupEpoch: LEAVE_GROUP makes a static member leave
        # with -1 too (the broker then removes it)
        epoch = (LEAVE_GROUP_STATIC_MEMBER_EPOCH if static and operation is not GroupMembershipOperation.LEAVE_GROUP
                 else LEAVE_GROUP_MEMBER_EPOCH)
        if self.state is MemberState.UNJOINED:
            # not in the group: nothing to leave (leaveGroup on a STALE member completes at
            # once, ConsumerMembershipManagerTest.testLeaveGroupWhenMemberIsStale). A JOINING
            # member is in the group (AbstractMembershipManager.isNotInGroup), whether or not
            # its first heartbeat was answered: it sends the leave heartbeat
            return []
        self._event("left", detail=why)
        req = ConsumerGroupHeartbeatRequest(
            group_id=self.config.group_id, member_id=self.member_id, member_epoch=epoch,
            instance_id=self.config.group_instance_id, client_id=self.config.client_id)
        self.member_epoch = 0
        self._send_all = True
        rid, req2 = self._send("ConsumerGroupHeartbeat", req)
        return [(rid, req2)]

    def on_response(self, rid: int, resp: m.Response, now: int, cluster: ClusterView) -> list[Outgoing]:
        self._now = now
        sent = self.inflight.pop(rid, None)
        self.request_deadline.pop(rid, None)
        if sent is None or self.closed:
            return []
        if isinstance(resp, m.FindCoordinatorResponse):
            self.find_rid = None
            self.coordinator_known = resp.error is Error.NONE
            # RequestState.onSuccessfulAttempt / onFailedAttempt
            self.find_answered_ms = now
            self.find_failures = 0 if self.coordinator_known else self.find_failures + 1
            return self._close_step(now) if self.closing is not None else []
        if self.closing is not None and isinstance(resp, m.OffsetCommitResponse) and rid == self.close_commit_rid:
            # CommitRequestManager.commitSync: a retriable failure is sent again after the
            # backoff, within the close timer; any other ends the commit (close logs it)
            self._on_commit(rid, resp, now)
            self.close_commit_rid = None
            errors = resp.errors() - {Error.NONE}
            if errors and errors <= _RECONCILE_COMMIT_RETRIED:
                self.close_commit, self.close_retry_at_ms = "todo", now + self.config.retry_backoff_ms
            else:
                self.close_commit = "done"
            return self._close_step(now)
        if isinstance(resp, ConsumerGroupHeartbeatResponse):
            if rid == self.heartbeat_rid:
                self.heartbeat_rid = None
            return self._on_heartbeat(resp, sent[1], now, cluster)
        if isinstance(resp, m.OffsetCommitResponse):
            self._on_commit(rid, resp, now)
            return []
        if isinstance(resp, m.OffsetFetchResponse):
            if rid == self.fetch_rid:
                self.fetch_rid = None
            if resp.error is not Error.NONE:
                return []  # retried on the next poll
            self._fetched(resp)
        return []

    def _heartbeat_failed(self, now: int, reset: bool = False) -> None:
        """HeartbeatRequestState.onFailedAttempt (the interval timer expires at once, the
        backoff doubles) and resetHeartbeatState (the next heartbeat carries every field);
        ``reset``: RequestState.reset (no backoff), after a fencing or a lost coordinator."""
        self._send_all = True
        self.next_heartbeat_ms = now
        if reset:
            self.heartbeat_failures = 0
            self.heartbeat_backoff_until_ms = now
            return
        backoff = min(self.config.retry_backoff_ms * 2 ** self.heartbeat_failures, RETRY_BACKOFF_MAX_MS)
        self.heartbeat_failures += 1
        self.heartbeat_backoff_until_ms = now + backoff

    def _on_heartbeat(self, resp: ConsumerGroupHeartbeatResponse, epoch_sent: int, now: int,
                      cluster: ClusterView) -> list[Outgoing]:
        e = resp.error
        if self.state is MemberState.UNJOINED or epoch_sent < 0:
            return []  # the answer to a leave
        if e is Error.NONE:
            self.member_epoch = resp.member_epoch
            # AbstractHeartbeatRequestManager.onResponse: the interval timer runs from the
            # send and is restarted only if the broker changes the interval
            # (ConsumerHeartbeatRequestManagerTest testSuccessfulHeartbeatTiming); the next
            # regular heartbeat waits retry.backoff.ms from this answer
            # (testHeartbeatNotSentIfAnotherOneInFlight)
            if resp.heartbeat_interval_ms > 0 and resp.heartbeat_interval_ms != self.heartbeat_interval_ms:
                self.heartbeat_interval_ms = resp.heartbeat_interval_ms
                self.next_heartbeat_ms = now + self.heartbeat_interval_ms
            self.heartbeat_failures = 0
            self.heartbeat_backoff_until_ms = now + self.config.retry_backoff_ms
            if resp.assignment is not None:
                # processAssignmentReceived: a target other than the current assignment is
                # reconciled; the current one again returns a RECONCILING member to STABLE
                # (a reconciliation in progress is then dropped: maybeAbortReconciliation)
                target = {(cluster.topic_name(tp.topic_id), p) for tp in resp.assignment.topic_partitions
                          for p in tp.partitions}
                if target != self.owned or self.assignment_none:
                    self.target = target
                    self.state = MemberState.RECONCILING
                else:
                    self.target = None
                    if self.state in (MemberState.RECONCILING, MemberState.JOINING):
                        self.state = MemberState.STABLE
            elif self.state is MemberState.JOINING:
                self.state = MemberState.STABLE  # the model's: no assignment, nothing to do
            return []
        # onErrorResponse: every error resets the heartbeat state and counts as a failed attempt
        if e in (Error.FENCED_MEMBER_EPOCH, Error.UNKNOWN_MEMBER_ID):
            # transitionToFenced: lose everything, rejoin at epoch 0 with the same id
            if epoch_sent != self.member_epoch:
                self._heartbeat_failed(now)
                return []
            self._heartbeat_failed(now, reset=True)
            self._lose_all(f"ConsumerGroupHeartbeat: {e.name}")
            self._to_joining()
            return []
        if e in (Error.NOT_COORDINATOR, Error.COORDINATOR_NOT_AVAILABLE):
            self._heartbeat_failed(now, reset=True)
            self.coordinator_known = False
            return []
        if e is Error.COORDINATOR_LOAD_IN_PROGRESS:
            self._heartbeat_failed(now)  # retried after the backoff; the coordinator is kept
            return []
        if e is Error.TOPIC_AUTHORIZATION_FAILED:
            # an error event for the application; the member goes on heartbeating
            self._heartbeat_failed(now)
            self._event("error", detail=f"ConsumerGroupHeartbeat: {e.name}")
            return []
        # GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, GROUP_MAX_SIZE_REACHED,
        # UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, UNSUPPORTED_VERSION,
        # UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID and any unexpected error: fatal
        # (AbstractHeartbeatRequestManager.onErrorResponse, handleSpecificError in 4.1.2)
        self._heartbeat_failed(now)
        self.fatal = e.name
        self.state = MemberState.FATAL  # transitionToFatal
        self._lose_all(e.name)
        self._event("fatal", detail=f"ConsumerGroupHeartbeat: {e.name}")
        return []

    def _on_commit(self, rid: int, resp: m.OffsetCommitResponse, now: int) -> None:
        self.auto_commit_rids.discard(rid)  # autoCommitCallback: no longer in flight
        r = self.reconciliation
        errors = resp.errors()
        if errors == {Error.NONE}:
            self._acknowledged(rid, resp)
            if r is not None and rid == r.commit_rid:
                r.commit_rid = None
                self._revoke_and_assign(now)
            return
        e = next(iter(errors - {Error.NONE}))
        self._event("commit_failed", detail=f"OffsetCommit: {e.name}")
        # OffsetCommitRequestState.onResponse
        if e in (Error.NOT_COORDINATOR, Error.COORDINATOR_NOT_AVAILABLE, Error.REQUEST_TIMED_OUT):
            self.coordinator_known = False
        if r is not None and rid == r.commit_rid:
            self._reconcile_commit_failed(r, e in _RECONCILE_COMMIT_RETRIED
                                          or (e is Error.STALE_MEMBER_EPOCH and self.member_epoch > 0), now)

    # ------------------------------------------------------------------ lifecycle
    def close(self, now: int,
              membership_operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT) -> list[Outgoing]:
        """KafkaConsumer.close -> AsyncKafkaConsumer.close: with auto-commit, every consumed
        position committed synchronously first (autoCommitOnClose -> commitSyncAllConsumed:
        the coordinator looked up if unknown, a retriable failure sent again after the
        backoff, within the close timer, min(close timeout, request.timeout.ms)); without
        auto-commit, the modelled application's last commitSync; then the revocation
        (runRebalanceCallbacksOnClose: onPartitionsRevoked) and the leave heartbeat
        (leaveGroupOnClose; no FindCoordinator after stopFindCoordinatorOnClose).
        ``membership_operation`` is CloseOptions.GroupMembershipOperation (KIP-1092):
        DEFAULT, LEAVE_GROUP or REMAIN_IN_GROUP (ConsumerMembershipManager.leaveGroupOnClose).
        Until the commit is done the member is :attr:`closing`; :meth:`tick` and
        :meth:`on_response` move the close on. A commit needs a member epoch here
        (docs/deviations.md)."""
        if self.closed or self.closing is not None:
            return []
        self._now = now
        self.reconciliation = None
        self.closing = membership_operation
        self.close_deadline_ms = now + min(self.config.close_timeout_ms, self.config.request_timeout_ms)
        self.close_retry_at_ms = now
        if self.fatal is not None:
            # a FATAL member takes no more input here: its commit goes out, not waited for
            return self._close_commit() + self._finish_close(now)
        self.close_commit = "todo"
        return self._close_step(now)

    def _close_step(self, now: int) -> list[Outgoing]:
        """Move a close on at ``now``: its commit, then the revocation and the leave."""
        expired = now >= self.close_deadline_ms
        if self.close_commit == "sent" and self.close_commit_rid not in self.inflight:
            self.close_commit_rid, self.close_commit = None, "todo"  # failed with the connection
        if self.close_commit == "todo" and not expired:
            if self.member_epoch <= 0:
                self.close_commit = "done"
            elif not self.coordinator_known:
                return self._lookup_coordinator(now)
            elif now < self.close_retry_at_ms:
                return []
            else:
                out = self._close_commit()
                if out:
                    self.close_commit_rid, self.close_commit = out[0][0], "sent"
                    return out
                self.close_commit = "done"
        if self.close_commit == "sent" and not expired:
            return []
        return self._finish_close(now)

    def _close_commit(self) -> list[Outgoing]:
        """The close's commit (none without a member epoch): every consumed position with
        auto-commit (commitSyncAllConsumed), else the modelled application's last commit."""
        if self.member_epoch <= 0:
            return []
        if self.config.enable_auto_commit:
            return self._commit_offsets(self._all_consumed(self.owned))
        return self._commit(set(self.owned))

    def _finish_close(self, now: int) -> list[Outgoing]:
        """After the close's commit: onPartitionsRevoked, then the leave heartbeat."""
        membership_operation = self.closing or GroupMembershipOperation.DEFAULT
        self.closing = None
        out: list[Outgoing] = []
        if self.owned:
            self._event("revoked", self.owned, "close")
        self._drop(set(self.owned))
        self.closed = True
        if self.fatal is not None:
            # AbstractMembershipManager.leaveGroup: a FATAL member is not in the group
            # (isNotInGroup), so the leave completes at once and no leave heartbeat goes out
            return out
        left = (self._leave("the consumer is being closed", membership_operation)
                if self.coordinator_known else [])
        out += left
        if left:
            # onHeartbeatRequestGenerated: the leave heartbeat sent, LEAVING ends (UNSUBSCRIBED)
            self.state = MemberState.UNSUBSCRIBED
        elif self.state is not MemberState.UNJOINED:
            # LEAVING until the leave heartbeat can go out (the coordinator unknown); a STALE
            # (UNJOINED) member has left already and stays so (testLeaveGroupWhenMemberIsStale)
            self.state = MemberState.LEAVING
        return out

"""The consumer: a group member's state machine (sans-IO).

Mirrors the Java client: AbstractCoordinator (join / sync / heartbeat / leave, member states
UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE) and ConsumerCoordinator
(subscription metadata with owned partitions, onJoinPrepare, onLeaderElected,
onJoinComplete, offset commits and their failures), both under
clients/src/main/java/org/apache/kafka/clients/consumer/internals/.

Inputs: ``tick(now_ms, cluster)`` (the application's poll loop and the heartbeat thread),
``on_response(request_id, response, now_ms, cluster)``, ``close(now_ms)``. Outputs: the
requests returned by those calls, :attr:`events` (partitions assigned / revoked / lost,
commit failures, fatal errors) and :attr:`owned`. Consumption is modelled too: a position
per owned partition that each poll advances towards the log end offset the cluster reports,
and ``processed`` ranges that the simulator compares across consumers to count records
processed twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from groupspec.assignors.base import MemberSubscription, PartitionRacks, RebalanceProtocol
from groupspec.assignors.registry import get_assignor
from groupspec.client.config import ConsumerConfig, GroupMembershipOperation
from groupspec.client.consumption import Consumption
from groupspec.client.delayed_imbalance import DelayedImbalance
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, Subscription, from_pairs, pairs
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId

TP = tuple[str, int]


#: JoinGroupRequest.maybeTruncateReason: a JoinGroup or LeaveGroup reason is cut to this length
MAX_REASON_LENGTH = 255


class MemberState(Enum):
    """AbstractCoordinator.MemberState."""

    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"


# the states and errors the per-poll and per-response paths compare with, bound once: an
# enum member read off its class costs a metaclass lookup each time (tens of ns, several
# times per simulated poll)
_UNJOINED = MemberState.UNJOINED
_PREPARING = MemberState.PREPARING_REBALANCE
_COMPLETING = MemberState.COMPLETING_REBALANCE
_STABLE = MemberState.STABLE
#: MemberState.hasNotJoinedGroup, and the states the heartbeat thread heartbeats in
_NOT_JOINED = (MemberState.UNJOINED, MemberState.PREPARING_REBALANCE)
_HEARTBEATING = (MemberState.COMPLETING_REBALANCE, MemberState.STABLE)
_NONE = Error.NONE
_REBALANCING = Error.REBALANCE_IN_PROGRESS
#: the JoinGroup / SyncGroup errors after which AbstractCoordinator.joinGroupIfNeeded goes
#: round again at once, without the retry backoff
_REJOIN_AT_ONCE = (Error.UNKNOWN_MEMBER_ID, Error.ILLEGAL_GENERATION, Error.REBALANCE_IN_PROGRESS,
                   Error.MEMBER_ID_REQUIRED)
#: ApiKeys names, as resetStateOnResponseError's reason prints them
_API_KEY_NAMES = {"JoinGroup": "JOIN_GROUP", "SyncGroup": "SYNC_GROUP", "Heartbeat": "HEARTBEAT",
                  "OffsetCommit": "OFFSET_COMMIT"}
#: the simple name of the exception Errors.exception() makes (common/protocol/Errors.java)
_EXCEPTION_NAMES = {
    Error.COORDINATOR_LOAD_IN_PROGRESS: "CoordinatorLoadInProgressException",
    Error.COORDINATOR_NOT_AVAILABLE: "CoordinatorNotAvailableException",
    Error.NOT_COORDINATOR: "NotCoordinatorException",
    Error.ILLEGAL_GENERATION: "IllegalGenerationException",
    Error.INCONSISTENT_GROUP_PROTOCOL: "InconsistentGroupProtocolException",
    Error.INVALID_GROUP_ID: "InvalidGroupIdException",
    Error.UNKNOWN_MEMBER_ID: "UnknownMemberIdException",
    Error.INVALID_SESSION_TIMEOUT: "InvalidSessionTimeoutException",
    Error.REBALANCE_IN_PROGRESS: "RebalanceInProgressException",
    Error.GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
    Error.UNSUPPORTED_VERSION: "UnsupportedVersionException",
    Error.MEMBER_ID_REQUIRED: "MemberIdRequiredException",
    Error.GROUP_MAX_SIZE_REACHED: "GroupMaxSizeReachedException",
    Error.FENCED_INSTANCE_ID: "FencedInstanceIdException",
}
#: the errors JoinGroupResponseHandler and SyncGroupResponseHandler raise as themselves; any
#: other fails the future with a KafkaException ("Unexpected error ...")
_JOIN_RAISES = frozenset({
    Error.COORDINATOR_LOAD_IN_PROGRESS, Error.UNKNOWN_MEMBER_ID, Error.COORDINATOR_NOT_AVAILABLE,
    Error.NOT_COORDINATOR, Error.FENCED_INSTANCE_ID, Error.INCONSISTENT_GROUP_PROTOCOL,
    Error.INVALID_SESSION_TIMEOUT, Error.INVALID_GROUP_ID, Error.GROUP_AUTHORIZATION_FAILED,
    Error.GROUP_MAX_SIZE_REACHED, Error.UNSUPPORTED_VERSION, Error.MEMBER_ID_REQUIRED,
    Error.REBALANCE_IN_PROGRESS})
_SYNC_RAISES = frozenset({
    Error.GROUP_AUTHORIZATION_FAILED, Error.REBALANCE_IN_PROGRESS, Error.FENCED_INSTANCE_ID,
    Error.UNKNOWN_MEMBER_ID, Error.ILLEGAL_GENERATION, Error.COORDINATOR_NOT_AVAILABLE,
    Error.NOT_COORDINATOR, Error.INCONSISTENT_GROUP_PROTOCOL})

@dataclass(frozen=True)
class ClusterView:
    """What the consumer's metadata says: topic -> partition count, log end offsets, (for
    the consumer protocol, which names topics by id) topic ids, and (KIP-881) per topic, per
    partition in partition order, the racks of its replicas (a ``None`` rack: a broker
    without ``broker.rack``; a topic or partition left out: no replica known)."""

    partitions: Mapping[str, int]
    log_end_offsets: Mapping[TP, int] = field(default_factory=dict)
    topic_ids: Mapping[str, TopicId] = field(default_factory=dict)
    replica_racks: PartitionRacks = field(default_factory=dict)

    def topic_id(self, name: str) -> TopicId:
        """The topic's id: from the metadata, else the one :meth:`TopicId.for_name` derives."""
        return self.topic_ids.get(name) or TopicId.for_name(name)

    def topic_name(self, topic_id: TopicId) -> str:
        for name in self.partitions:
            if self.topic_id(name) == topic_id:
                return name
        return str(topic_id)


@dataclass(frozen=True)
class ClientEvent:
    """Something the application would see: a rebalance callback, a commit failure."""

    at_ms: int
    member: str
    kind: str  # assigned, revoked, lost, commit_failed, rebalance_in_progress, fatal, left
    partitions: tuple[TP, ...] = ()
    detail: str = ""


Outgoing = tuple[int, m.Request]
NO_GENERATION = (-1, m.UNKNOWN_MEMBER_ID)


class Consumer(Consumption):
    def __init__(self, config: ConsumerConfig, now_ms: int, next_request_id: Callable[[], int]) -> None:
        self.config = config
        self.name = config.client_id
        self._rid = next_request_id
        self.protocol = config.rebalance_protocol
        self.state = MemberState.UNJOINED
        self.generation_id, self.member_id = NO_GENERATION
        self.protocol_name: str | None = None
        self.rejoin_needed = True
        #: AbstractCoordinator.rejoinReason: the short reason of the last requestRejoin, sent
        #: in the next JoinGroup (v8+, KIP-800); "" at first and after a completed rebalance
        self.rejoin_reason = ""
        self.coordinator_known = False
        self.fatal: str | None = None
        self.closed = False
        #: set by close() until the member has left: ConsumerCoordinator.close commits
        #: synchronously first (within the close timeout), then leaves (see :meth:`close`)
        self.closing: GroupMembershipOperation | None = None
        self.close_deadline_ms = 0
        #: the close's own commit: "todo" (to send, or to send again after a retriable
        #: failure), "sent" (waiting for its answer) or "done"
        self.close_commit = "done"
        self.close_commit_rid: int | None = None
        self._init_consumption()
        self.events: list[ClientEvent] = []
        self.subscription: tuple[str, ...] = ()
        #: subscribe(pattern)'s pattern, which onJoinComplete checks an assignment against
        self._pattern = re.compile(config.pattern) if config.pattern is not None else None
        #: the topics subscribed to by name (config.subscribed, which does not depend on the
        #: cluster without a pattern), or None for a pattern
        self._fixed_subscription: tuple[str, ...] | None = (
            config.subscribed(frozenset()) if config.pattern is None else None)
        self.leader_metadata_snapshot: dict[str, int] | None = None
        #: client.rack, "" read as none (GroupRebalanceConfig)
        self.rack: str | None = config.client_rack or None
        #: with a client rack, the rest of the leader's snapshot (ConsumerCoordinator.
        #: MetadataSnapshot's PartitionRackInfo): per topic, per partition, its replicas' racks
        self.leader_rack_snapshot: dict[str, tuple[frozenset[str | None], ...]] = {}
        #: the topics the leader watches: every member's subscription (the group subscription)
        self.leader_topics: tuple[str, ...] = ()
        self.inflight: dict[int, tuple[str, int, str]] = {}  # rid -> (api, generation, member)
        #: rid -> when the request times out (NetworkClient's request timeout)
        self.request_deadline: dict[int, int] = {}
        #: the heartbeat thread's session timer: last successful heartbeat (Heartbeat.sessionTimer)
        self.last_heartbeat_ok_ms = now_ms
        self.fetch_rid: int | None = None
        #: the time of the input being handled (set by tick, on_response, close)
        self._now = now_ms
        self.join_rid: int | None = None
        self.sync_rid: int | None = None
        self.heartbeat_rid: int | None = None
        self.find_rid: int | None = None
        self.next_heartbeat_ms = now_ms
        self.next_auto_commit_ms = now_ms + config.auto_commit_interval_ms
        self.next_poll_ms = now_ms
        self.last_poll_ms = now_ms
        self.retry_at_ms = now_ms
        #: KIP-415: the leader's delayed-imbalance state and its scheduled follow-up rejoin
        self.delayed = DelayedImbalance(config.scheduled_rebalance_max_delay_ms)
        self.scheduled_rejoin_ms: int | None = None
        #: AbstractCoordinator.needsJoinPrepare: onJoinPrepare runs once per rebalance
        self.needs_join_prepare = True
        #: onJoinPrepare's auto-commit in flight, and when onJoinPrepare stops waiting for
        #: commits (its joinPrepareTimer: the rebalance timeout)
        self.prepare_commit_rid: int | None = None
        #: how onJoinPrepare's last auto-commit ended: None (not sent or not answered),
        #: "done" (succeeded or failed for good) or "retriable"
        self.prepare_commit_outcome: str | None = None
        self.join_prepare_deadline: int | None = None
        #: the generation and member id of the onJoinPrepare call that sent the auto-commit
        #: (Kafka passes them in; an answer within that call decides by them, even if it
        #: reset the generation)
        self.prepare_commit_generation: tuple[int, str] = (-1, "")
        #: auto-commits in flight (their retriable failures bring the next one forward)
        self.auto_commit_rids: set[int] = set()
        #: application stalls (slow processing): poll() is not called before this time
        self.poll_blocked_until_ms = now_ms
        #: EAGER: the partitions onJoinPrepare marked pending revocation before its
        #: auto-commit; they are not fetched until revoked (SubscriptionState.markPendingRevocation)
        self.pending_revocation: set[TP] = set()
        #: a fatal error the heartbeat thread or a commit callback recorded; the next poll
        #: raises it (pollHeartbeat, invokeCompletedOffsetCommitCallbacks)
        self.pending_fatal: str | None = None
        #: the last LeaveGroup sent, and how its future ended (LeaveGroupResponseHandler):
        #: None while unanswered (or none sent, or lost with the connection, where Kafka's
        #: future fails with a DisconnectException), "NONE" when it succeeded, else the
        #: error's name, or "IllegalStateException" for an answer naming more than one
        #: member. Only the caller of maybeLeaveGroup sees it (close and the poll timeout
        #: ignore it).
        self.leave_rid: int | None = None
        self.leave_outcome: str | None = None

    # ------------------------------------------------------------------ helpers
    def _event(self, now: int, kind: str, parts: set[TP] | None = None, detail: str = "") -> None:
        self.events.append(ClientEvent(now, self.name, kind, tuple(sorted(parts or ())), detail))

    def _send(self, api: str, req: m.Request) -> Outgoing:
        now = self._now
        rid = self._rid()
        self.inflight[rid] = (api, self.generation_id, self.member_id)
        timeout = self.config.request_timeout_ms
        if api == "JoinGroup":
            # AbstractCoordinator.sendJoinGroupRequest: the rebalance timeout plus JOIN_GROUP_TIMEOUT_LAPSE
            timeout = max(timeout, self.config.max_poll_interval_ms + 5_000)
        self.request_deadline[rid] = now + timeout
        if isinstance(req, m.OffsetCommitRequest):
            self._note_sent(rid, req)
        return rid, req

    def _reset_generation(self, keep_member_id: bool, reason: str) -> None:
        """AbstractCoordinator.resetStateAndRejoin: resetStateAndGeneration (+ the
        lost-partitions path), then requestRejoin(``reason``)."""
        member = self.member_id if keep_member_id else m.UNKNOWN_MEMBER_ID
        self.generation_id, self.member_id = -1, member
        self.protocol_name = None
        self.state = MemberState.UNJOINED
        self._request_rejoin(reason)
        self.needs_join_prepare = True  # resetStateAndRejoin

    def _reset_on_error(self, api: str, error: Error, keep_member_id: bool) -> None:
        """AbstractCoordinator.resetStateOnResponseError: the reason names the error and
        the API as Kafka's enums print them (``encountered ILLEGAL_GENERATION from HEARTBEAT
        response``)."""
        self._reset_generation(keep_member_id, f"encountered {error.name} from {_API_KEY_NAMES[api]} response")

    def _request_rejoin(self, reason: str) -> None:
        """AbstractCoordinator.requestRejoin(shortReason): the reason the next JoinGroup
        carries."""
        self.rejoin_reason = reason
        self.rejoin_needed = True

    def _rebalance_failed(self, exception: str) -> None:
        """AbstractCoordinator.joinGroupIfNeeded, its JoinGroup or SyncGroup future failed
        with ``exception`` (a simple class name): requestRejoin("rebalance failed due to "
        + it), which replaces what the response handler asked."""
        self._request_rejoin(f"rebalance failed due to {exception}")

    def _lose_all(self, now: int, why: str) -> None:
        """onPartitionsLost: ownership is gone and nothing is committed."""
        if self.owned:
            self._event(now, "lost", self.owned, why)
        self._drop(self.owned)

    def _commit_request(self, parts: set[TP], generation: int,
                        all_consumed: bool = False) -> m.OffsetCommitRequest | None:
        offsets = self._all_consumed(parts) if all_consumed else self._uncommitted(parts)
        if not offsets:
            return None
        return m.OffsetCommitRequest(
            group_id=self.config.group_id,
            generation_id=generation,
            member_id=self.member_id,
            group_instance_id=self.config.group_instance_id,
            partitions=offsets,
        )

    def _commit(self, parts: set[TP]) -> list[Outgoing]:
        """commitOffsets with generationIfStable semantics: the current generation."""
        # Without auto-commit this is the application: its rebalance listener commits what
        # is revoked, and it commits after each poll (the usual manual pattern); only the
        # positions that moved since the last commit.
        if self.state is not _STABLE or self.generation_id < 0:
            return []
        req = self._commit_request(parts, self.generation_id)
        return [self._send("OffsetCommit", req)] if req is not None else []

    def _auto_commit(self) -> tuple[int | None, list[Outgoing]]:
        """ConsumerCoordinator.autoCommitOffsetsAsync: every consumed position (allConsumed),
        in the current generation if it is stable (sendOffsetCommitRequest fails the commit
        locally otherwise: nothing is sent). The request id, or None if nothing was sent."""
        if self.state is not _STABLE or self.generation_id < 0:
            return None, []
        req = self._commit_request(set(self.owned), self.generation_id, all_consumed=True)
        if req is None:
            return None, []
        rid, sent = self._send("OffsetCommit", req)
        self.auto_commit_rids.add(rid)
        return rid, [(rid, sent)]

    # ------------------------------------------------------------------ inputs
    def next_deadline(self) -> int | None:
        if self.closed or self.fatal is not None:
            return None
        # the earliest of: the next poll, a scheduled rejoin, a request's timeout, and (once
        # joined) the next heartbeat and the session check; kept as a running minimum (the
        # simulator asks every step)
        if self.closing is not None:
            # the close timeout, and the backoff before its commit goes out (again)
            t = self.close_deadline_ms
            if self.close_commit == "todo" and self.find_rid is None and self.retry_at_ms < t:
                t = self.retry_at_ms
        else:
            t = max(self.next_poll_ms, self.poll_blocked_until_ms)
            if self.scheduled_rejoin_ms is not None and self.scheduled_rejoin_ms < t:
                t = self.scheduled_rejoin_ms
        if self.request_deadline:
            t = min(t, min(self.request_deadline.values()))
        if self.coordinator_known and self.state in _HEARTBEATING:
            t = min(t, self.next_heartbeat_ms, self.last_heartbeat_ok_ms + self.config.session_timeout_ms + 1)
        elif not self.coordinator_known and self.state in _HEARTBEATING and self.find_rid is None:
            # the heartbeat thread's next lookup (the poll's, and rejoining, are covered by
            # the poll time above)
            t = min(t, self.retry_at_ms)
        return t

    def tick(self, now: int, cluster: ClusterView) -> list[Outgoing]:
        if self.closed or self.fatal is not None:
            return []
        self._now = now
        if self.request_deadline:
            self._expire_requests(now)
        out = self._heartbeat_thread(now)
        if self.closing is not None:
            return out + self._close_step(now)  # the application is in close(): no poll
        if now >= self.poll_blocked_until_ms and now >= self.next_poll_ms:
            out += self._poll(now, cluster)
        return out

    def _heartbeat_thread(self, now: int) -> list[Outgoing]:
        """The heartbeat thread: heartbeats while COMPLETING_REBALANCE or STABLE, and the
        poll-timeout check (AbstractCoordinator.HeartbeatThread, pollTimeoutExpired)."""
        out: list[Outgoing] = []
        if self.state in _NOT_JOINED:
            # The thread is disabled until a JoinGroup response arrives (MemberState.hasNotJoinedGroup).
            return out
        if not self.coordinator_known:
            # HeartbeatThread.run looks the coordinator up itself while it is unknown
            # (lookupCoordinator, then a retry.backoff.ms wait), whether or not the
            # application polls: a member stuck between polls finds a moved coordinator and
            # goes on heartbeating (and its poll timeout is checked once it is found)
            return self._lookup_coordinator(now)
        # HeartbeatThread.run checks the session before the poll timeout: when both have run
        # out (a process paused past both), the coordinator is looked up first and the
        # poll-timeout leave waits until it is found
        if now - self.last_heartbeat_ok_ms > self.config.session_timeout_ms:
            # No successful heartbeat for a session timeout: check the coordinator
            # (HeartbeatThread.run, "session timed out without receiving a heartbeat response").
            self._coordinator_lost(now, "no heartbeat response for a session timeout")
            if self.state in _NOT_JOINED:
                return out  # a join or sync failed with it: the thread is disabled
            # the thread's next turn, at once (markCoordinatorUnknown waits for nothing)
            return self._lookup_coordinator(now)
        if now - self.last_poll_ms > self.config.max_poll_interval_ms and self.generation_id >= 0:
            # handlePollTimeoutExpiry -> maybeLeaveGroup: dynamic members send LeaveGroup,
            # static members send nothing; either way the generation is reset.
            # (resetGenerationOnLeaveGroup: the partitions stay assigned, and are lost in the
            # onJoinPrepare of the next poll's rejoin)
            out += self.maybe_leave_group(now, "consumer poll timeout has expired.")
            return out
        if (
            self.state in _HEARTBEATING
            and now >= self.next_heartbeat_ms
        ):
            # Sent every heartbeat interval, whether or not the previous one was answered
            # (Heartbeat.sentHeartbeat resets the timer; the thread does not wait).
            self.heartbeat_rid, req = self._send("Heartbeat",
                m.HeartbeatRequest(
                    group_id=self.config.group_id,
                    generation_id=self.generation_id,
                    member_id=self.member_id,
                    group_instance_id=self.config.group_instance_id,
                ),
            )
            out.append((self.heartbeat_rid, req))
            self.next_heartbeat_ms = now + self.config.heartbeat_interval_ms
        return out

    def _lookup_coordinator(self, now: int) -> list[Outgoing]:
        """AbstractCoordinator.lookupCoordinator, from the poll or the heartbeat thread: a
        FindCoordinator for the group unless one is in flight or a failed one's backoff
        runs."""
        if self.find_rid is not None or now < self.retry_at_ms:
            return []
        self.find_rid, req = self._send("FindCoordinator", m.FindCoordinatorRequest(key=self.config.group_id))
        return [(self.find_rid, req)]

    def maybe_leave_group(self, now: int, reason: str,
                          membership: GroupMembershipOperation = GroupMembershipOperation.DEFAULT
                          ) -> list[Outgoing]:
        """AbstractCoordinator.maybeLeaveGroup: LeaveGroup if the member is in the group and
        ``membership`` says to leave (:meth:`_maybe_leave`), then the generation and member id
        are reset whether or not it was sent (resetGenerationOnLeaveGroup)."""
        self._now = now
        out = self._maybe_leave(now, reason, membership)
        self._reset_generation(keep_member_id=False, reason="consumer pro-actively leaving the group")
        return out

    def _maybe_leave(self, now: int, reason: str,
                     membership: GroupMembershipOperation = GroupMembershipOperation.DEFAULT
                     ) -> list[Outgoing]:
        """The LeaveGroup of AbstractCoordinator.maybeLeaveGroup (Kafka 4.1.2,
        shouldSendLeaveGroupRequest): only a member with a member id, a known coordinator and
        a state other than UNJOINED sends it, and then if ``membership`` is LEAVE_GROUP, or
        DEFAULT for a dynamic member. Its reason is cut to 255 characters
        (JoinGroupRequest.maybeTruncateReason)."""
        if self.member_id == m.UNKNOWN_MEMBER_ID or not self.coordinator_known or self.state is _UNJOINED:
            return []
        if not (membership is GroupMembershipOperation.LEAVE_GROUP
                or (membership is GroupMembershipOperation.DEFAULT and self.config.group_instance_id is None)):
            return []
        self._event(now, "left", detail=reason)
        # Java cuts UTF-16 code units, Python code points: the same for the reasons used here
        self.leave_rid, req = self._send("LeaveGroup",
            m.LeaveGroupRequest(
                group_id=self.config.group_id,
                members=(m.MemberIdentity(self.member_id, None, reason[:MAX_REASON_LENGTH]),),
            ),
        )
        self.leave_outcome = None
        return [(self.leave_rid, req)]

    def _on_leave(self, rid: int, resp: m.LeaveGroupResponse) -> None:
        """AbstractCoordinator.LeaveGroupResponseHandler: an answer naming more than one
        member fails the future with IllegalStateException; else it ends with
        LeaveGroupResponse.error(), the top-level error or else the first member error."""
        if rid != self.leave_rid:
            return
        self.leave_rid = None
        if len(resp.members) > 1:
            self.leave_outcome = "IllegalStateException"
            return
        error = resp.error
        if error is _NONE:
            error = next((x.error for x in resp.members if x.error is not _NONE), _NONE)
        self.leave_outcome = error.name

    def _poll(self, now: int, cluster: ClusterView) -> list[Outgoing]:
        """One application poll(): rejoin if needed, process records, auto-commit."""
        out: list[Outgoing] = []
        self.last_poll_ms = now
        self.next_poll_ms = now + self.config.poll_interval_ms
        if self.pending_fatal is not None:
            # ConsumerCoordinator.poll: invokeCompletedOffsetCommitCallbacks / pollHeartbeat
            # throw before anything is fetched; the application gives up (and its close
            # loses the partitions: no generation)
            self.fatal = self.pending_fatal.rsplit(": ", 1)[-1]
            self._event(now, "fatal", detail=self.pending_fatal)
            self._lose_all(now, self.fatal)
            return out
        if not self.coordinator_known:
            out += self._lookup_coordinator(now)
            # ConsumerCoordinator.poll returns early (no rejoin, no auto-commit), but
            # ClassicKafkaConsumer.poll still fetches: the partitions with a position are read
            out += self._process(now, cluster)
            return out
        # Subscription changes (a pattern gaining a topic) and, for the leader, metadata
        # changes (a topic gaining partitions) need a rejoin (ConsumerCoordinator.rejoinNeededOrPending).
        subscription = self._fixed_subscription
        if subscription is None:  # a pattern: what it matches among the topics that exist
            subscription = self.config.subscribed(frozenset(cluster.partitions))
        if subscription != self.subscription and self.state is not _UNJOINED and not self.rejoin_needed:
            self._event(now, "rejoin", detail=f"subscription changed to {', '.join(subscription)}")
            self._request_rejoin("subscription has changed")  # requestRejoinIfNecessary
        if (
            self.state is _STABLE
            and not self.rejoin_needed
            and self.leader_metadata_snapshot is not None
            and (self._leader_counts(cluster.partitions) != self.leader_metadata_snapshot
                 or (self.rack is not None and self._leader_racks(cluster) != self.leader_rack_snapshot))
        ):
            # ConsumerCoordinator.rejoinNeededOrPending: the leader's assignment snapshot no
            # longer matches the metadata (a subscribed topic gained partitions, or, with a
            # client rack, a partition's replicas moved to another set of racks: KIP-881).
            self._event(now, "rejoin", detail="leader sees partition counts or racks change")
            self._request_rejoin("cached metadata has changed")  # requestRejoinIfNecessary
        if self.scheduled_rejoin_ms is not None and now >= self.scheduled_rejoin_ms:
            self.scheduled_rejoin_ms = None
            if self.state is _STABLE:
                self.rejoin_needed = True
        if now >= self.retry_at_ms:
            out += self._join_if_needed(now, subscription)
        if self.awaiting_position:
            out += self._fetch_positions()
        out += self._process(now, cluster)
        if self.state is _STABLE and not self.config.enable_auto_commit:
            out += self._commit(set(self.owned))  # manual: commitAsync after processing
        elif (self.config.enable_auto_commit and not self._rejoin_pending()
              and now >= self.next_auto_commit_ms):
            # ConsumerCoordinator.poll returns before maybeAutoCommitOffsetsAsync while a
            # rebalance is pending; else the timer is reset whether or not a commit goes out
            self.next_auto_commit_ms = now + self.config.auto_commit_interval_ms
            out += self._auto_commit()[1]
        return out

    def _rejoin_pending(self) -> bool:
        """AbstractCoordinator.rejoinNeededOrPending."""
        return self.rejoin_needed or self.join_rid is not None or self.sync_rid is not None

    def _current_subscription(self, cluster: ClusterView) -> tuple[str, ...]:
        if self._fixed_subscription is not None:
            return self._fixed_subscription
        return self.config.subscribed(frozenset(cluster.partitions))

    def _join_if_needed(self, now: int, subscription: tuple[str, ...],
                        generation: tuple[int, str] | None = None) -> list[Outgoing]:
        """AbstractCoordinator.joinGroupIfNeeded, one step: onJoinPrepare once per rebalance
        (it may wait for its auto-commit), then JoinGroup. ``generation``: what onJoinPrepare
        was called with, when this step is the rest of an earlier call (default: the
        current generation and member id)."""
        if (not self.rejoin_needed or self.join_rid is not None or self.sync_rid is not None
                or not self.coordinator_known):
            return []
        out: list[Outgoing] = []
        if self.needs_join_prepare:
            ready, out = self._on_join_prepare(
                now, subscription, generation or (self.generation_id, self.member_id))
            if not ready:
                return out
            self.needs_join_prepare = False
        return out + self._send_join(subscription)

    def _on_join_prepare(self, now: int, subscription: tuple[str, ...],
                         generation: tuple[int, str]) -> tuple[bool, list[Outgoing]]:
        """ConsumerCoordinator.onJoinPrepare(timer, generation, memberId): with auto-commit,
        commit every consumed position and wait for the answer (at most the rebalance
        timeout; a retriable failure is retried after the retry backoff, any other goes on
        to the join); then revoke, or lose if ``generation`` (what the call began with, not
        what the commit's answer may have reset it to) is no generation. Returns whether the
        join may go ahead, and what was sent."""
        out: list[Outgoing] = []
        if self.config.enable_auto_commit:
            if self.join_prepare_deadline is None:
                self.join_prepare_deadline = now + self.config.max_poll_interval_ms
            if self.prepare_commit_rid is not None:
                if now < self.join_prepare_deadline:
                    return False, out  # still waiting for the commit
                self.prepare_commit_rid = None  # joinPrepare timeout: join without it
            elif self.prepare_commit_outcome is None:
                # ConsumerCoordinator.maybeMarkPartitionsPendingRevocation (EAGER only), then
                # the auto-commit: from here to the revocation the owned partitions are not
                # fetched, so the positions committed are the ones given up
                if self.protocol is RebalanceProtocol.EAGER:
                    self.pending_revocation = set(self.owned)
                rid, out = self._auto_commit()
                if rid is not None:
                    self.prepare_commit_rid = rid
                    self.prepare_commit_generation = generation
                    return False, out
            elif self.prepare_commit_outcome == "retriable" and now < self.join_prepare_deadline:
                self.prepare_commit_outcome = None
                self.retry_at_ms = now + self.config.retry_backoff_ms
                return False, out
        self.prepare_commit_outcome = None
        self.join_prepare_deadline = None
        self.pending_revocation = set()  # assignFromSubscribed below drops the marks
        if generation[0] < 0 or generation[1] == m.UNKNOWN_MEMBER_ID:
            self._lose_all(now, "generation lost before rejoining")
        elif self.protocol is RebalanceProtocol.EAGER:
            # without auto-commit the application's listener commits before the revocation
            if not self.config.enable_auto_commit:
                out += self._commit(set(self.owned))
            if self.owned:
                self._event(now, "revoked", self.owned, "eager rebalance")
            self._drop(set(self.owned))
        else:
            gone = {tp for tp in self.owned if tp[0] not in subscription}
            if gone:
                if not self.config.enable_auto_commit:
                    out += self._commit(gone)
                self._event(now, "revoked", gone, "topics no longer subscribed")
                self._drop(gone)
        return True, out

    # ------------------------------------------------------------------ idle polls
    # A driver that steps its clock at every poll (the simulator) spends most steps on polls
    # that only consume. These two methods let it run such polls without a full tick; they
    # mirror tick and _poll above for that case, and must change with them (the simulator's
    # lean runs are compared with its full ones: tests/test_generate_fast.py).
    def idle_until(self, now: int, partitions: Mapping[str, int]) -> int | None:
        """After a tick at ``now``: if every poll from now on until some time is idle (it
        only consumes), that time: when the consumer next needs a full tick. Else None.
        Ticks between those polls do nothing. Only the topics changing (a new
        ``partitions``) or an input to the consumer ends this early.

        A poll is idle when its subscription is the one joined with, no rejoin is
        scheduled, no fatal error waits for it, and no OffsetFetch is due (one is in flight
        if positions are awaited), and either

        - the member is Stable with auto-commit, no rejoin pending and, as the leader, the
          partition counts in ``partitions`` it joined with: idle until the first poll that
          auto-commits; or
        - it waits for the answer to its JoinGroup (PREPARING_REBALANCE) or SyncGroup
          (COMPLETING_REBALANCE): joinGroupIfNeeded sends nothing while one is in flight,
          and a rebalance pending commits nothing; idle until that answer (an input).

        Either way also until the next request timeout and, while the heartbeat thread
        runs (COMPLETING_REBALANCE, STABLE), its next heartbeat and session check (its poll
        timeout cannot come: the member polls)."""
        cfg = self.config
        state = self.state
        if (self.closed or self.closing is not None or self.fatal is not None or self.pending_fatal is not None
                or not self.coordinator_known
                or self.scheduled_rejoin_ms is not None or self.pending_revocation
                or (self.awaiting_position and self.fetch_rid is None)
                or self.poll_blocked_until_ms > self.next_poll_ms
                or cfg.poll_interval_ms <= 0 or cfg.max_poll_interval_ms < cfg.poll_interval_ms
                or self._fixed_subscription is None or self._fixed_subscription != self.subscription
                or self.rack is not None):  # racks can change without ``partitions`` changing
            return None
        if state is _STABLE:
            if (self.generation_id < 0 or self.rejoin_needed or self.join_rid is not None
                    or self.sync_rid is not None or self.awaiting_position or not cfg.enable_auto_commit):
                return None
            snapshot = self.leader_metadata_snapshot
            if snapshot is not None and self._leader_counts(partitions) != snapshot:
                return None
            # the next heartbeat and session check, and the first poll that auto-commits
            wake = min(self.next_heartbeat_ms, self.last_heartbeat_ok_ms + cfg.session_timeout_ms + 1,
                       self.poll_at_or_after(self.next_auto_commit_ms))
        elif state is _PREPARING and self.join_rid is not None and self.request_deadline:
            # the heartbeat thread is disabled until the JoinGroup answer (hasNotJoinedGroup):
            # the request timeouts alone (the JoinGroup's among them)
            wake = min(self.request_deadline.values())
            return wake if wake > now else None
        elif state is _COMPLETING and self.sync_rid is not None:
            wake = min(self.next_heartbeat_ms, self.last_heartbeat_ok_ms + cfg.session_timeout_ms + 1)
        else:
            return None
        if self.request_deadline:
            wake = min(wake, min(self.request_deadline.values()))
        return wake if wake > now else None

    def poll_at_or_after(self, t: int) -> int:
        """The first poll at or after ``t`` if the polls go on every poll interval from the
        next one."""
        first, every = self.next_poll_ms, self.config.poll_interval_ms
        return first if t <= first else first + -((first - t) // every) * every

    def idle_poll(self, now: int, log_end_offsets: Mapping[TP, int]) -> bool:
        """What ``tick(now)`` does at one of the idle polls :meth:`idle_until` promised
        (``now`` is :attr:`next_poll_ms`): positions move towards the log end offsets.
        Returns whether any record was read (the poll's Fetch); ``processed`` is not noted."""
        self._now = now
        self.last_poll_ms = now
        cfg = self.config
        self.next_poll_ms = now + cfg.poll_interval_ms
        # Consumption._consume without noting the ranges read, the lookups bound once: most
        # of a lean simulator run's polls are these
        read = False
        most = cfg.max_poll_records_per_partition
        positions = self.positions
        position, leo = positions.get, log_end_offsets.get
        for tp in self.owned - self.awaiting_position if self.awaiting_position else self.owned:
            pos = position(tp, 0)
            end = leo(tp, 0)
            cap = pos + most
            if cap < end:  # min(end, cap), as a comparison
                end = cap
            if end > pos:
                positions[tp] = end
                read = True
        return read

    def _process(self, now: int, cluster: ClusterView) -> list[Outgoing]:
        leo = cluster.log_end_offsets
        if self.pending_revocation:
            # SubscriptionState.isFetchable: a partition pending revocation is not fetched
            # (and what was fetched for it is not returned): it reads nothing
            frozen = self.pending_revocation
            leo = {tp: end for tp, end in leo.items() if tp not in frozen}
        self._consume(leo, self.config.max_poll_records_per_partition)
        return []

    def _send_join(self, subscription: tuple[str, ...]) -> list[Outgoing]:
        """AbstractCoordinator.initiateJoinGroup / sendJoinGroupRequest."""
        out: list[Outgoing] = []
        self.subscription = subscription
        self.state = MemberState.PREPARING_REBALANCE
        protocols = tuple(
            m.JoinGroupProtocol(name, self._metadata_for(name)) for name in self.config.assignors
        )
        self.join_rid, req = self._send("JoinGroup",
            m.JoinGroupRequest(
                group_id=self.config.group_id,
                member_id=self.member_id,
                group_instance_id=self.config.group_instance_id,
                protocols=protocols,
                session_timeout_ms=self.config.session_timeout_ms,
                rebalance_timeout_ms=self.config.max_poll_interval_ms,
                client_id=self.config.client_id,
                version=self.config.join_group_version,
                # the reason field is on the wire from v8 (JoinGroupRequest.maybeTruncateReason)
                reason=self.rejoin_reason[:MAX_REASON_LENGTH] if self.config.join_group_version >= 8 else None,
            ),
        )
        out.append((self.join_rid, req))
        return out

    def _metadata_for(self, assignor_name: str) -> bytes:
        owned = from_pairs(self.owned)
        user_data = get_assignor(assignor_name).subscription_user_data(
            self.subscription, owned, self.generation_id
        )
        cooperative_owned = owned if self.protocol is RebalanceProtocol.COOPERATIVE else {}
        return Subscription(self.subscription, user_data, cooperative_owned, self.generation_id,
                            self.rack).encode()

    # ------------------------------------------------------------------ responses
    def on_response(self, rid: int, resp: m.Response, now: int, cluster: ClusterView) -> list[Outgoing]:
        sent = self.inflight.pop(rid, None)
        self.request_deadline.pop(rid, None)
        if sent is not None and isinstance(resp, m.LeaveGroupResponse):
            # answered after close too: close waits for it (awaitPendingRequests)
            self._on_leave(rid, resp)
            return []
        if sent is None or self.closed or self.fatal is not None:
            return []
        self._now = now
        if isinstance(resp, m.FindCoordinatorResponse):
            self.find_rid = None
            if resp.error is _NONE:
                self.coordinator_known = True
                # FindCoordinatorResponseHandler: heartbeat.resetSessionTimeout()
                self.last_heartbeat_ok_ms = now
            else:
                self.retry_at_ms = now + self.config.retry_backoff_ms
            return self._close_step(now) if self.closing is not None else []
        if self.closing is not None and isinstance(resp, m.OffsetCommitResponse) and rid == self.close_commit_rid:
            # commitOffsetsSync: done on success or a failure it throws (close logs it and
            # goes on); a retriable failure is sent again after the backoff
            self.close_commit_rid = None
            if self._on_commit(rid, resp, sent, now):
                self.close_commit = "todo"
                self.retry_at_ms = now + self.config.retry_backoff_ms
            else:
                self.close_commit = "done"
            return self._close_step(now)
        if self.closing is not None and isinstance(resp, m.JoinGroupResponse | m.SyncGroupResponse):
            return []  # no poll runs the rebalance on while close waits
        if isinstance(resp, m.JoinGroupResponse):
            return self._on_join(rid, resp, sent, now, cluster)
        if isinstance(resp, m.SyncGroupResponse):
            return self._on_sync(rid, resp, sent, now, cluster)
        if isinstance(resp, m.HeartbeatResponse):
            if rid == self.heartbeat_rid:
                self.heartbeat_rid = None
            if resp.error in (_NONE, _REBALANCING):
                self.last_heartbeat_ok_ms = now  # Heartbeat.receiveHeartbeat
            self._on_heartbeat(resp, sent, now)
            return []
        if isinstance(resp, m.OffsetCommitResponse):
            retriable = self._on_commit(rid, resp, sent, now)
            if rid in self.auto_commit_rids:
                self.auto_commit_rids.discard(rid)
                if retriable:
                    # the auto-commit callback: a retriable failure brings the next one forward
                    self.next_auto_commit_ms = now + self.config.retry_backoff_ms
            if rid == self.prepare_commit_rid:
                # onJoinPrepare was waiting for this commit in client.poll: the same call goes
                # on at once, with the generation it was called with (a commit answered
                # UNKNOWN_MEMBER_ID resets the generation, yet the partitions are revoked,
                # not lost: ConsumerCoordinator.onJoinPrepare decides by its arguments)
                self.prepare_commit_rid = None
                self.prepare_commit_outcome = "retriable" if retriable else "done"
                if self.fatal is None and now >= self.retry_at_ms:
                    return self._join_if_needed(now, self._current_subscription(cluster),
                                                self.prepare_commit_generation)
            # close waits for the auto-commits in flight (pendingAsyncCommits)
            return self._close_step(now) if self.closing is not None else []
        if isinstance(resp, m.OffsetFetchResponse):
            if rid == self.fetch_rid:
                self.fetch_rid = None
            # ConsumerCoordinator.OffsetFetchResponseHandler: a group-level error fails the
            # fetch (NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE rediscover the coordinator
            # first), and so does an error on any partition: no position is taken from it,
            # the partitions stay initializing and a later poll fetches them again
            # (testRefreshOffsetRetriableErrorCoordinatorLookup, testRefreshOffsetUnknownTopicOrPartition)
            if resp.error in (Error.NOT_COORDINATOR, Error.COORDINATOR_NOT_AVAILABLE):
                self._coordinator_lost(now, f"OffsetFetch: {resp.error.name}")
            elif resp.error is _NONE and all(p.error is _NONE for p in resp.partitions):
                self._fetched(resp)
            return []
        return []

    def _coordinator_lost(self, now: int, why: str = "") -> None:
        """AbstractCoordinator.markCoordinatorUnknown: forget the coordinator and fail every
        request in flight to it (the connection is closed); a join or sync in flight means
        rejoining once the coordinator is found again."""
        if why and self.coordinator_known:
            self._event(now, "coordinator_lost", detail=f"{why}; rediscovering the coordinator")
        self.coordinator_known = False
        # The next poll looks the coordinator up at once (ensureCoordinatorReady backs off
        # only after a failed lookup); a join or sync that failed with it backs off first
        # (joinGroupIfNeeded sleeps the retry backoff after a retriable failure).
        if self.join_rid is not None or self.sync_rid is not None:
            self.retry_at_ms = now + self.config.retry_backoff_ms
            self.state = MemberState.UNJOINED
            # the request in flight fails with DisconnectException (ConsumerNetworkClient)
            self._rebalance_failed("DisconnectException")
        for rid in [r for r, (api, _, _) in self.inflight.items() if api != "FindCoordinator"]:
            api, _, _ = self.inflight.pop(rid)
            self.request_deadline.pop(rid, None)
            if api == "OffsetCommit":
                self._commit_disconnected(now, rid)
        if self.auto_commit_rids:
            # failed with a disconnect, retriable: the auto-commit callback's backoff
            self.auto_commit_rids.clear()
            self.next_auto_commit_ms = now + self.config.retry_backoff_ms
        if self.prepare_commit_rid is not None:
            self.prepare_commit_rid = None
            self.prepare_commit_outcome = "retriable"
        self.join_rid = self.sync_rid = self.heartbeat_rid = self.fetch_rid = None

    def _commit_disconnected(self, now: int, rid: int) -> None:
        """A commit in flight fails with the connection (CoordinatorResponseHandler.onFailure:
        DisconnectException, retriable): its callback runs with RetriableCommitFailedException
        (ConsumerCoordinator.doCommitOffsetsAsync); nothing it carried is committed."""
        self._forget_sent(rid)
        self._event(now, "commit_failed", detail="retriable: DisconnectException")

    def _forget_sent(self, rid: int) -> None:
        """A failed commit: none of the offsets it carried is committed."""
        for key in [k for k in self.sent_offsets if k[0] == rid]:
            del self.sent_offsets[key]

    def _expire_requests(self, now: int) -> None:
        """Requests unanswered past their timeout: NetworkClient disconnects, which the
        coordinator code handles as a lost coordinator (a lost FindCoordinator is retried)."""
        expired = [rid for rid, at in self.request_deadline.items() if at <= now]
        if not expired:
            return
        apis = []
        for rid in expired:
            self.request_deadline.pop(rid, None)
            api, _, _ = self.inflight.pop(rid, ("", 0, ""))
            apis.append(api)
            if api == "OffsetCommit":
                self._commit_disconnected(now, rid)
            if api == "FindCoordinator":
                self.find_rid = None
                self.retry_at_ms = now + self.config.retry_backoff_ms
        if any(api != "FindCoordinator" for api in apis):
            self._event(now, "request_timeout", detail=f"{len(expired)} request(s) timed out; rediscovering the coordinator")
            self._coordinator_lost(now)

    def _generation_unchanged(self, sent: tuple[str, int, str]) -> bool:
        """CoordinatorResponseHandler.generationUnchanged: the generation and member id the
        request carried are still ours."""
        return sent[1] == self.generation_id and sent[2] == self.member_id

    def _on_join(self, rid: int, resp: m.JoinGroupResponse, sent: tuple[str, int, str], now: int,
                 cluster: ClusterView) -> list[Outgoing]:
        if rid != self.join_rid:
            return []
        self.join_rid = None
        e = resp.error
        if e is Error.NONE and resp.protocol_type not in (None, "consumer"):
            # JoinGroupResponseHandler.handle: a protocol type other than the one sent is
            # INCONSISTENT_GROUP_PROTOCOL, raised to the application (AbstractCoordinatorTest
            # testJoinGroupProtocolTypeAndName)
            e = Error.INCONSISTENT_GROUP_PROTOCOL
        if e is Error.NONE:
            self.generation_id, self.member_id = resp.generation_id, resp.member_id
            self.protocol_name = resp.protocol_name
            self.state = MemberState.COMPLETING_REBALANCE
            self.next_heartbeat_ms = now + self.config.heartbeat_interval_ms
            self.last_heartbeat_ok_ms = now  # the heartbeat thread starts with fresh timers
            assignments: tuple[m.SyncGroupAssignment, ...] = ()
            if resp.leader != resp.member_id:
                # ConsumerCoordinator.onJoinComplete: only the leader watches metadata for
                # partition changes; a member that is no longer the leader drops its snapshot.
                self.leader_metadata_snapshot = None
            if resp.leader == resp.member_id:
                assignments = self._lead(resp, cluster, now)
            self.sync_rid, req = self._send("SyncGroup",
                m.SyncGroupRequest(
                    group_id=self.config.group_id,
                    generation_id=self.generation_id,
                    member_id=self.member_id,
                    group_instance_id=self.config.group_instance_id,
                    protocol_type="consumer",
                    protocol_name=self.protocol_name,
                    assignments=assignments,
                ),
            )
            return [(self.sync_rid, req)]
        # a failed JoinGroup leaves the member PREPARING_REBALANCE unless its generation is
        # reset (JoinGroupResponseHandler; maybeLeaveGroup still leaves from there)
        if e is Error.MEMBER_ID_REQUIRED:
            # KIP-394: remember the id (with no generation) and rejoin at once.
            self.generation_id, self.member_id, self.protocol_name = -1, resp.member_id, None
        elif e is Error.UNKNOWN_MEMBER_ID:
            # JoinGroupResponseHandler: reset only if the generation the request carried is
            # still ours (testJoinGroupUnknownMemberResponseWithOldGeneration)
            if self._generation_unchanged(sent):
                self._reset_on_error("JoinGroup", e, keep_member_id=False)
        elif e in (Error.COORDINATOR_NOT_AVAILABLE, Error.NOT_COORDINATOR):
            self._coordinator_lost(now, f"JoinGroup: {e.name}")
            self.retry_at_ms = now + self.config.retry_backoff_ms
        elif e in (Error.FENCED_INSTANCE_ID, Error.INCONSISTENT_GROUP_PROTOCOL, Error.GROUP_MAX_SIZE_REACHED,
                   Error.INVALID_SESSION_TIMEOUT, Error.INVALID_GROUP_ID, Error.GROUP_AUTHORIZATION_FAILED):
            self.fatal = e.name
            self._lose_all(now, e.name)
            self._event(now, "fatal", detail=f"JoinGroup: {e.name}")
        elif e not in _REJOIN_AT_ONCE:
            self.retry_at_ms = now + self.config.retry_backoff_ms
        if e is Error.MEMBER_ID_REQUIRED:
            # the handler's own reason; joinGroupIfNeeded adds none for MemberIdRequiredException
            self._request_rejoin(f"need to re-join with the given member-id: {resp.member_id}")
        else:
            self._rebalance_failed(_EXCEPTION_NAMES[e] if e in _JOIN_RAISES else "KafkaException")
        if e in _REJOIN_AT_ONCE:
            # joinGroupIfNeeded goes round again without backing off
            return self._join_if_needed(now, self._current_subscription(cluster))
        return []

    def _lead(self, resp: m.JoinGroupResponse, cluster: ClusterView, now: int) -> tuple[m.SyncGroupAssignment, ...]:
        """onLeaderElected: watch the metadata of every topic the group subscribes to, and
        (unless a returning static leader is told to skip it, KIP-814) run the selected
        assignor over every member's subscription."""
        assert resp.protocol_name is not None
        assignor = get_assignor(resp.protocol_name)
        members = [
            MemberSubscription(x.member_id, Subscription.decode(x.metadata), x.group_instance_id)
            for x in resp.members
        ]
        topics = {t for ms in members for t in ms.subscription.topics}
        # updateGroupSubscription, then assignmentSnapshot = metadataSnapshot: the partition
        # counts of the whole group subscription (own topics included)
        self.leader_topics = tuple(sorted(topics | set(self.subscription)))
        self.leader_metadata_snapshot = self._leader_counts(cluster.partitions)
        self.leader_rack_snapshot = self._leader_racks(cluster)
        if resp.skip_assignment or not resp.members:
            return ()
        partitions = {t: cluster.partitions[t] for t in sorted(topics) if t in cluster.partitions}
        # AbstractPartitionAssignor.assign(Cluster, ...): the replicas' racks go with the
        # partition counts; the assignors use them if members sent racks
        racks = {t: cluster.replica_racks[t] for t in partitions if t in cluster.replica_racks}
        result = assignor.assign(partitions, members, racks or None)
        if self.delayed.max_delay_ms > 0:
            result = self._delay_imbalance(now, result, members)
        return tuple(m.SyncGroupAssignment(mid, a.encode()) for mid, a in sorted(result.items()))

    def _leader_counts(self, partitions: Mapping[str, int]) -> dict[str, int]:
        return {t: partitions[t] for t in self.leader_topics if t in partitions}

    def _leader_racks(self, cluster: ClusterView) -> dict[str, tuple[frozenset[str | None], ...]]:
        """ConsumerCoordinator.PartitionRackInfo: with a client rack, the set of racks of
        each partition's replicas (their order and count do not matter); without, nothing."""
        if self.rack is None:
            return {}
        out = {}
        for t in self.leader_topics:
            if t in cluster.partitions:
                racks = cluster.replica_racks.get(t, ())
                out[t] = tuple(frozenset(racks[p]) if p < len(racks) else frozenset()
                               for p in range(cluster.partitions[t]))
        return out

    def _delay_imbalance(
        self, now: int, result: dict[str, Assignment], members: list[MemberSubscription]
    ) -> dict[str, Assignment]:
        """KIP-415: hold back a departed member's partitions (client/delayed_imbalance.py)."""
        key = {x.member_id: x.group_instance_id or x.member_id for x in members}
        owned = {key[x.member_id]: pairs(x.subscription.owned_partitions) for x in members}
        by_key = {key[mid]: pairs(a.partitions) for mid, a in result.items()}
        final, delay = self.delayed.apply(now, by_key, owned)
        if delay > 0:
            self.scheduled_rejoin_ms = now + delay
        return {
            mid: Assignment(from_pairs(final[key[mid]]), a.user_data) for mid, a in result.items()
        }

    def _on_sync(self, rid: int, resp: m.SyncGroupResponse, sent: tuple[str, int, str], now: int,
                 cluster: ClusterView) -> list[Outgoing]:
        if rid != self.sync_rid:
            return []
        self.sync_rid = None
        e = resp.error
        if e is Error.NONE:
            # SyncGroupResponseHandler.handle: the protocol type is checked first; the protocol
            # name only while the generation is not reset and the member is completing the
            # rebalance (testJoinGroupProtocolTypeAndName, testNoGenerationWillNotTriggerProtocolNameCheck)
            if resp.protocol_type not in (None, "consumer") or (
                    self.state is MemberState.COMPLETING_REBALANCE and resp.protocol_name is not None
                    and resp.protocol_name != self.protocol_name):
                self.fatal = Error.INCONSISTENT_GROUP_PROTOCOL.name
                self._lose_all(now, self.fatal)
                self._event(now, "fatal", detail="SyncGroup: INCONSISTENT_GROUP_PROTOCOL")
                return []
            if self.state is not MemberState.COMPLETING_REBALANCE:
                # the generation or state changed while the SyncGroup was out: the handler
                # raises ILLEGAL_GENERATION and joinGroupIfNeeded rejoins at once
                # (testPrepareJoinAndRejoinAfterFailedRebalance)
                self._rebalance_failed("IllegalGenerationException")
                return self._join_if_needed(now, self._current_subscription(cluster))
            self.state = MemberState.STABLE
            self.rejoin_needed = False
            self.rejoin_reason = ""
            out = self._on_join_complete(Assignment.decode(resp.assignment), now)
            self.needs_join_prepare = True
            # joinGroupIfNeeded loops while a rejoin is needed (the cooperative follow-up
            # rebalance, an assignment that does not match the subscription): at once
            return out + self._join_if_needed(now, self._current_subscription(cluster))
        if e is Error.REBALANCE_IN_PROGRESS:
            self.state = MemberState.UNJOINED  # the generation is kept (KAFKA-13891 reverted)
        elif e in (Error.UNKNOWN_MEMBER_ID, Error.ILLEGAL_GENERATION):
            # SyncGroupResponseHandler: reset only if the generation the request carried is
            # still ours (testSyncGroupUnknownMemberResponseWithOldGeneration,
            # testSyncGroupIllegalGenerationResponseWithOldGeneration)
            if self._generation_unchanged(sent):
                self._reset_on_error("SyncGroup", e, keep_member_id=e is Error.ILLEGAL_GENERATION)
            else:
                self.state = MemberState.UNJOINED
        elif e in (Error.COORDINATOR_NOT_AVAILABLE, Error.NOT_COORDINATOR):
            self.state = MemberState.UNJOINED
            self._coordinator_lost(now, f"SyncGroup: {e.name}")
            self.retry_at_ms = now + self.config.retry_backoff_ms
        elif e is Error.FENCED_INSTANCE_ID:
            self.fatal = e.name
            self._lose_all(now, e.name)
            self._event(now, "fatal", detail="SyncGroup: FENCED_INSTANCE_ID")
        self._rebalance_failed(_EXCEPTION_NAMES[e] if e in _SYNC_RAISES else "KafkaException")
        if e in _REJOIN_AT_ONCE:
            return self._join_if_needed(now, self._current_subscription(cluster))
        return []

    def _on_join_complete(self, assignment: Assignment, now: int) -> list[Outgoing]:
        """ConsumerCoordinator.onJoinComplete."""
        assigned = pairs(assignment.partitions)
        out: list[Outgoing] = []
        # SubscriptionState.checkAssignmentMatchedSubscription: each topic must match the
        # pattern (whatever the metadata now has), or be one of the topics subscribed to by
        # name; a mismatch rejoins, assigning nothing
        pattern = self._pattern
        if pattern is not None:
            matched = all(pattern.fullmatch(t) for t, _ in assigned)
        else:
            matched = all(t in (self._fixed_subscription or ()) for t, _ in assigned)
        if not matched:
            self._request_rejoin("received assignment does not match the current subscription")
            return out
        revoked = self.owned - assigned
        if revoked:
            # Cooperative: give them up and rejoin at once (the follow-up rebalance). Kafka
            # commits nothing here; without auto-commit the application's listener does.
            if not self.config.enable_auto_commit:
                out += self._commit(revoked)
            self._event(now, "revoked", revoked, "cooperative revocation")
            self._drop(revoked)
            self._request_rejoin("need to revoke partitions and re-join")
        if self.config.pattern is not None:
            # ConsumerCoordinator.maybeUpdateJoinedSubscription: a pattern's joined
            # subscription takes in the topics the leader assigned (they match the pattern),
            # so they do not count as a subscription change at the next poll
            topics = {t for t, _ in assigned}
            if not topics <= set(self.subscription):
                self.subscription = tuple(sorted(topics | set(self.subscription)))
        if self.config.enable_auto_commit:
            # onJoinComplete: nextAutoCommitTimer.updateAndReset(autoCommitIntervalMs)
            self.next_auto_commit_ms = now + self.config.auto_commit_interval_ms
        added = assigned - self.owned
        if added:
            self.owned |= added
            self.awaiting_position |= added
            self._event(now, "assigned", added)
            out += self._fetch_positions()
        return out

    def _fetch_positions(self) -> list[Outgoing]:
        """OffsetFetch for the partitions that have no position yet (refreshCommittedOffsets)."""
        if not self.awaiting_position or self.fetch_rid is not None or not self.coordinator_known:
            return []
        self.fetch_rid, req = self._send(
            "OffsetFetch",
            m.OffsetFetchRequest(group_id=self.config.group_id, partitions=tuple(sorted(self.awaiting_position))),
        )
        return [(self.fetch_rid, req)]

    def _on_heartbeat(self, resp: m.HeartbeatResponse, sent: tuple[str, int, str], now: int) -> None:
        e = resp.error
        if e is _NONE:
            return
        if e is _REBALANCING:
            if self.state is _STABLE:
                self._request_rejoin("group is already rebalancing")
            return
        if e in (Error.COORDINATOR_NOT_AVAILABLE, Error.NOT_COORDINATOR):
            self._coordinator_lost(now, f"Heartbeat: {e.name}")
            return
        if e in (Error.ILLEGAL_GENERATION, Error.UNKNOWN_MEMBER_ID, Error.FENCED_INSTANCE_ID):
            # KAFKA-9823: act only if the generation the heartbeat carried is still ours.
            if sent[1] != self.generation_id or sent[2] != self.member_id:
                return
            # HeartbeatResponseHandler -> resetStateOnResponseError: the generation is reset
            # and a rejoin requested; the partitions stay assigned (and fetched) until the
            # next poll's onJoinPrepare loses them (ConsumerCoordinator.onJoinPrepare, no
            # generation: invokePartitionsLost)
            self._reset_on_error("Heartbeat", e, keep_member_id=e is Error.ILLEGAL_GENERATION)
            if e is Error.FENCED_INSTANCE_ID and self.pending_fatal is None:
                # the heartbeat thread fails (HeartbeatThread: heartbeatThread.failed) and
                # the next poll raises it (AbstractCoordinator.pollHeartbeat)
                self.pending_fatal = "Heartbeat: FENCED_INSTANCE_ID"

    def _on_commit(self, rid: int, resp: m.OffsetCommitResponse, sent: tuple[str, int, str], now: int) -> bool:
        """ConsumerCoordinator.OffsetCommitResponseHandler. Returns whether the commit failed
        with a retriable error."""
        errors = resp.errors()
        if errors == {Error.NONE}:
            self._acknowledged(rid, resp)
            return False
        e = next(p.error for p in resp.partitions if p.error is not Error.NONE)
        self._forget_sent(rid)
        if e is Error.REBALANCE_IN_PROGRESS:
            # rejoin, the generation is kept (testCommitOffsetRebalanceInProgress)
            self._request_rejoin("offset commit failed since group is already rebalancing")
            self._event(now, "rebalance_in_progress", detail="OffsetCommit")
        elif e in (Error.UNKNOWN_MEMBER_ID, Error.ILLEGAL_GENERATION):
            if not self._generation_unchanged(sent) and self.state is MemberState.PREPARING_REBALANCE:
                self._event(now, "rebalance_in_progress", detail=f"OffsetCommit: {e.name}")
            else:
                # resetStateOnResponseError: the partitions are lost at the next onJoinPrepare
                self._event(now, "commit_failed", detail=f"CommitFailedException: {e.name}")
                self._reset_on_error("OffsetCommit", e, keep_member_id=e is Error.ILLEGAL_GENERATION)
        elif e is Error.FENCED_INSTANCE_ID:
            # nothing is reset; fatal only if the generation is still the one committed with
            # (testCommitOffsetFencedInstanceWithRebalancingGeneration / ...WithNewGeneration)
            if self._generation_unchanged(sent):
                # commitOffsetsAsync's listener sets asyncCommitFenced; the next poll raises
                # it (ConsumerCoordinator.invokeCompletedOffsetCommitCallbacks)
                if self.pending_fatal is None:
                    self.pending_fatal = "OffsetCommit: FENCED_INSTANCE_ID"
            elif self.state is MemberState.PREPARING_REBALANCE:
                self._event(now, "rebalance_in_progress", detail="OffsetCommit: FENCED_INSTANCE_ID")
            else:
                self._event(now, "commit_failed", detail="CommitFailedException: FENCED_INSTANCE_ID")
        elif e in (Error.COORDINATOR_NOT_AVAILABLE, Error.NOT_COORDINATOR, Error.REQUEST_TIMED_OUT):
            # this commit's callback completes first; the commits the disconnect cancels
            # complete after it (testCoordinatorDisconnectAfterNotCoordinatorError)
            self._event(now, "commit_failed", detail=f"retriable: {e.name}")
            self._coordinator_lost(now, f"OffsetCommit: {e.name}")
            return True
        elif e in (Error.COORDINATOR_LOAD_IN_PROGRESS, Error.UNKNOWN_TOPIC_OR_PARTITION):
            self._event(now, "commit_failed", detail=f"retriable: {e.name}")
            return True
        else:
            self._event(now, "commit_failed", detail=e.name)
        return False

    # ------------------------------------------------------------------ lifecycle
    def close(self, now: int,
              membership: GroupMembershipOperation = GroupMembershipOperation.DEFAULT) -> list[Outgoing]:
        """KafkaConsumer.close(CloseOptions) -> ConsumerCoordinator.close: a synchronous
        commit first (maybeAutoCommitOffsetsSync: every consumed position, in a stable
        generation; without auto-commit, the application's last commitSync), looking the
        coordinator up first if it is unknown and sending it again after a retriable failure
        (commitOffsetsSync), waiting for its answer and for auto-commits in flight
        (pendingAsyncCommits), all within the close timeout; then AbstractCoordinator.close:
        onLeavePrepare (the partitions revoked or lost) and LeaveGroup as ``membership`` says
        (by default: dynamic members only). Until then the member is :attr:`closing`: its
        application polls no more, its heartbeat thread still runs (closeHeartbeatThread
        comes after the commit), and :meth:`tick` and :meth:`on_response` move the close on.
        The retry backoff is fixed, as elsewhere in this client (docs/deviations.md)."""
        if self.closed or self.closing is not None:
            return []
        self._now = now
        self.closing = membership
        self.close_deadline_ms = now + self.config.close_timeout_ms
        self.close_commit = "todo"
        return self._close_step(now)

    def _close_step(self, now: int) -> list[Outgoing]:
        """Move a close on at ``now``: its commit, then the leave once nothing it waits
        for is left."""
        out: list[Outgoing] = []
        expired = now >= self.close_deadline_ms
        if self.close_commit == "sent" and self.close_commit_rid not in self.inflight:
            # failed with the connection (markCoordinatorUnknown): retriable
            self.close_commit_rid, self.close_commit = None, "todo"
        if self.close_commit == "todo" and not expired:
            if not self.coordinator_known:
                if self.config.enable_auto_commit:
                    # commitOffsetsSync -> coordinatorUnknownAndUnreadySync: look it up first
                    return self._lookup_coordinator(now)
                # without auto-commit close commits nothing itself; the modelled
                # application's last commit goes out only to a coordinator it knows
                self.close_commit = "done"
            elif now < self.retry_at_ms:
                return out  # the backoff after a retriable failure (timer.sleep)
            else:
                if self.config.enable_auto_commit:
                    rid, sent = self._auto_commit()
                    # a synchronous commit, not one of the auto-commits close waits for below
                    if rid is not None:
                        self.auto_commit_rids.discard(rid)
                else:
                    sent = self._commit(set(self.owned))
                    rid = sent[0][0] if sent else None
                if rid is None:
                    self.close_commit = "done"  # nothing to commit, or no stable generation
                else:
                    self.close_commit_rid, self.close_commit = rid, "sent"
                    return sent
        if not expired and (self.close_commit == "sent" or self.auto_commit_rids):
            return out  # client.poll(future, timer); pendingAsyncCommits
        return self._finish_close(now)

    def _finish_close(self, now: int) -> list[Outgoing]:
        """AbstractCoordinator.close after the commit: onLeavePrepare and maybeLeaveGroup."""
        membership = self.closing or GroupMembershipOperation.DEFAULT
        if self.owned:
            # onLeavePrepare: lost without a generation or during a rebalance, else revoked
            lost = (self.generation_id < 0 or self.member_id == m.UNKNOWN_MEMBER_ID
                    or self.state in (_PREPARING, MemberState.COMPLETING_REBALANCE))
            self._event(now, "lost" if lost else "revoked", self.owned, "close")
        self._drop(set(self.owned))
        out = self._maybe_leave(now, "the consumer is being closed", membership)
        self.closed = True
        self.closing = None
        return out

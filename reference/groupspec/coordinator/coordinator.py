"""The reference group coordinator: a thin, sans-IO dispatcher.

Usage::

    coord = Coordinator()
    out = coord.handle(1, JoinGroupRequest(...), now_ms=0)   # responses + records
    out = coord.advance(now_ms=3_000)                         # fire due timers

Contract (the caller's side, as etcd-raft's ``Ready``):

- ``now_ms`` never decreases between calls; the coordinator keeps no clock.
- ``request_id`` is unique per request; a response may come back in a later call's output
  (a parked JoinGroup or SyncGroup), always tagged with the id of the request it answers.
- Responses in one output are in the order Kafka would complete them; records are in the
  order they were applied. Persisted records (``record.persisted``) are what survives
  :meth:`failover`.
- Consumer groups subscribing by regular expression (KIP-848) resolve their regexes off the
  request path, as Kafka's executor does: a heartbeat may schedule the group's resolution
  (``pending_regex_resolutions``); the driver runs it with
  :meth:`Coordinator.complete_regex_resolution` whenever it chooses after that (Kafka: a few
  milliseconds later, on another thread), with the topics as they are then.
- Protocol errors are values in responses. Exceptions (ValueError, AssertionError,
  ReplayError) mean a bug in the caller or in this package, never a protocol outcome;
  NotModelled names an input Kafka handles in a way the reference does not model
  (docs/deviations.md).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.admin import (
    handle_delete_groups,
    handle_describe_groups,
    handle_list_groups,
)
from groupspec.coordinator.classic import fast_path
from groupspec.coordinator.classic.heartbeat import handle_heartbeat
from groupspec.coordinator.classic.join_group import MemberIdGenerator, handle_join_group
from groupspec.coordinator.classic.leave_group import handle_leave_group
from groupspec.coordinator.classic.sync_group import handle_sync_group
from groupspec.coordinator.committed_offset import CommittedOffset
from groupspec.coordinator.config import CoordinatorConfig, GroupConfig
from groupspec.coordinator.consumer.describe import handle_consumer_group_describe
from groupspec.coordinator.consumer.expiry import expire_consumer_offsets
from groupspec.coordinator.consumer.group import refresh_changed_groups
from groupspec.coordinator.consumer.heartbeat import (
    complete_regex_resolution,
    handle_consumer_group_heartbeat,
)
from groupspec.coordinator.context import Output, Txn
from groupspec.coordinator.failover import (
    load_all,
    load_consumer_groups,
    load_pending_offsets,
    unload_all,
)
from groupspec.coordinator.find_coordinator import coordinator_partition
from groupspec.coordinator.group_order import GroupOrder
from groupspec.coordinator.offsets import (
    expire_offsets,
    handle_offset_commit,
    handle_offset_delete,
    handle_offset_fetch,
    handle_txn_offset_commit,
)
from groupspec.coordinator.state import CoordinatorState
from groupspec.coordinator.timers import (
    Expiry,
    TimerKind,
    all_timers,
    due_timers,
    earliest_deadline,
    fire,
)
from groupspec.protocol import messages as msg
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.protocol.error_responses import error_response
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.topic_id import TopicId


def counting_member_ids() -> MemberIdGenerator:
    """Deterministic member ids in Kafka's format (``prefix-UUID``), the UUID from a counter."""
    n = 0

    def generate(client_id: str, group_instance_id: str | None) -> str:
        nonlocal n
        n += 1
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{uuid.UUID(int=n)}"

    return generate


class Coordinator:
    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        member_ids: MemberIdGenerator | None = None,
        node_id: int = 0,
        host: str = "localhost",
        port: int = 9092,
        consumer_member_ids: Callable[[], str] | None = None,
        loaded_at_ms: int = 0,
    ) -> None:
        self.config = config or CoordinatorConfig()
        self.state = CoordinatorState(
            group_order=GroupOrder(self.config.offsets_topic_num_partitions))
        self.member_ids = member_ids or counting_member_ids()
        self.node_id, self.host, self.port = node_id, host, port
        self._last_now_ms = 0
        self._consumer_member_count = 0
        self._consumer_member_ids = consumer_member_ids
        # Kafka schedules a shard's group and offset expiry one interval after the shard
        # loads, then one interval after each run (GroupCoordinatorShard.onLoaded and
        # cleanupGroupMetadata, scheduleGroupMetadataExpiration): the checks fall at
        # ``loaded_at_ms`` + k * offsets.retention.check.interval.ms. Which instants those
        # are decides, for instance, when an Empty group without offsets disappears (a
        # generation >= 0 OffsetCommit is UNKNOWN_MEMBER_ID before, ILLEGAL_GENERATION or
        # GROUP_ID_NOT_FOUND after); a driver whose clock is not the shard's (epoch times
        # in a recording) passes the time the shard loaded.
        self._next_offsets_check_ms = loaded_at_ms + self.config.offsets_retention_check_interval_ms
        #: GroupCoordinatorService.isActive: False before the service's startup and after its
        #: shutdown, when it answers every group request COORDINATOR_NOT_AVAILABLE itself
        #: (:func:`inactive_answer`) and no shard sees it. Timers are not affected.
        self.active = True

    # ------------------------------------------------------------------ inputs
    def handle(self, request_id: int, request: msg.Request, now_ms: int) -> Output:
        """Handle one request at ``now_ms``; timers due before it are not fired."""
        if not self.active:
            answer = inactive_answer(request)
            if answer is not None:
                txn = self._txn(now_ms)  # the clock's rule holds as for any input
                txn.respond(request_id, answer)
                return txn.out
        if fast_path.ENABLED and now_ms >= self._last_now_ms:
            # a Heartbeat or OffsetCommit from a current member of a Stable or
            # PreparingRebalance group: the answer the handlers give, without them
            # (coordinator/classic/fast_path.py)
            out = fast_path.plan(self.state, self.config, request_id, request, now_ms)
            if out is not None:
                self._last_now_ms = now_ms
                fast_path.commit(self.state, out)
                return out
        txn = self._txn(now_ms)
        handler = _HANDLERS.get(type(request))
        if handler is None:
            raise TypeError(f"not a group-protocol request: {type(request).__name__}")
        handler(self, txn, request_id, request)
        return txn.out

    def advance(self, now_ms: int, on_fire: Callable[[Expiry], None] | None = None) -> Output:
        """Fire, in order, every timer due at or before ``now_ms``."""
        out = Output()
        while True:
            # (due_timers lists every timer to pick those due: only when one is)
            due = (due_timers(self.state, now_ms)
                   if (first := earliest_deadline(self.state)) is not None and first <= now_ms else [])
            offsets_due = self._next_offsets_check_ms <= now_ms
            if not due and not offsets_due:
                break
            if offsets_due and not self.state.groups and not self.state.consumer_groups:
                # no group, nothing to expire: skip the checks that would find nothing, in
                # one step (a trace's clock starts at the epoch time of its first request)
                self._checks_from(now_ms + 1)
                continue
            if offsets_due and (not due or self._next_offsets_check_ms < due[0].deadline_ms):
                at = self._next_offsets_check_ms
                self._next_offsets_check_ms += self.config.offsets_retention_check_interval_ms
                txn = self._txn(max(at, self._last_now_ms))
                self._expire_all(txn)
                if not txn.out.records:
                    self._skip_idle_checks(now_ms, first)
            else:
                e = due[0]
                if on_fire is not None:
                    on_fire(e)
                txn = self._txn(max(e.deadline_ms, self._last_now_ms))
                own_join = e.kind is TimerKind.ExpireJoin and self._is_own_join_timer(e)
                fire(txn, e)
                if own_join:
                    self._skip_idle_join_firings(txn, e.group_id, now_ms)
            out.extend(txn.out)
        self._last_now_ms = max(self._last_now_ms, now_ms)
        return out

    def _is_own_join_timer(self, e: Expiry) -> bool:
        """Whether ``e`` is the classic group's own DelayedJoin (not its initial delay, nor
        the join timer of a classic group an upgrade removed, which :func:`fire` takes first)."""
        g = self.state.groups.get(e.group_id)
        t = None if g is None else g.join_timer
        detached = self.state.detached_classic_join_timers.get(e.group_id)
        return (t is not None and t.deadline_ms == e.deadline_ms and not t.initial
                and (detached is None or detached.deadline_ms != e.deadline_ms))

    def _skip_idle_join_firings(self, txn: Txn, group_id: str, now_ms: int) -> None:
        """After the group's join timer fired and found no member rejoined (it re-armed
        itself: the group is still PreparingRebalance): move it past the firings due by
        ``now_ms`` that can change nothing either, keeping their cadence. Until another
        timer fires or a periodic check runs, nothing changes the group, and such a firing on
        an unchanged group removes no one (the dynamic members that had not rejoined went at
        the first) and re-arms the timer one rebalance timeout on (1 ms when that is 0:
        rebalance.py, complete_join): each one makes the state the one before it made. Without this, a
        group whose members' rebalance timeouts are all 0 or negative fired once per
        millisecond until a static member's session ran out."""
        g = self.state.groups.get(group_id)
        t = None if g is None else g.join_timer
        if g is None or t is None or t.initial or g.state is not GroupState.PreparingRebalance:
            return
        at, step = txn.now_ms, t.deadline_ms - txn.now_ms
        if step <= 0 or t.deadline_ms > now_ms:
            return
        # every other timer bounds the skip, the join timer of a classic group an upgrade
        # removed too (it may act on this group when it fires)
        others = [e.deadline_ms for e in all_timers(self.state)]
        others.remove(t.deadline_ms)
        horizon = min([self._next_offsets_check_ms, *others])
        # the first firing after the advance's end, or at or after the next thing due (a
        # tie with it is broken as it would have been)
        firings = min((now_ms - at) // step + 1, -(-(horizon - at) // step))
        if firings > 1:
            txn.emit(r.JoinTimerSet(group_id, r.JoinTimer(at + firings * step, False)))

    def _skip_idle_checks(self, now_ms: int, first_timer: int | None) -> None:
        """After a periodic check that expired nothing: move past the checks due by
        ``now_ms`` that cannot expire anything either, keeping their cadence. Nothing changes
        the state between them unless a timer fires (``first_timer``, the earliest deadline),
        and a check expires an offset or deletes a group only once some base timestamp (an
        offset's commit, a classic group's becoming Empty) is offsets.retention.ms old (a
        group with nothing left to expire was deleted by this check already), or an offset's
        own expire timestamp (OffsetCommit v2-v4) is reached: every check before the earliest
        such instant finds what this one found. Without this, a trace whose clock jumps (a
        time of 1970 among 2026's) stepped through millions of checks. A committed offset of
        a partition with a pending transactional offset never expires here (the
        transaction's end is not modelled), nor is a group with pending offsets deleted:
        neither bounds the skip (else a past expire timestamp of such an offset made every
        later check run, one interval at a time)."""
        pending = self.state.pending_offsets
        offsets: list[CommittedOffset] = []
        bases: list[int] = []
        for g in self.state.groups.values():
            held = pending.get(g.group_id)
            free = list(g.offsets.values()) if not held else [c for tp, c in g.offsets.items() if tp not in held]
            offsets += free
            if free or not held:
                bases.append(g.state_timestamp_ms)
        for cg in self.state.consumer_groups.values():
            held = pending.get(cg.group_id)
            offsets += cg.offsets.values() if not held else [c for tp, c in cg.offsets.items() if tp not in held]
        bases += [c.commit_timestamp_ms for c in offsets]
        earliest_effect = (min(bases) + self.config.offsets_retention_ms) if bases else math.inf
        expiries = [c.expire_timestamp_ms for c in offsets if c.expire_timestamp_ms is not None]
        if expiries:
            earliest_effect = min(earliest_effect, min(expiries))
        # (a check before the last input's time runs at that time, as the one just made)
        self._checks_from(int(min(max(earliest_effect, self._last_now_ms + 1),
                                  math.inf if first_timer is None else first_timer, now_ms + 1)))

    def _checks_from(self, bound: int) -> None:
        """The periodic checks before ``bound`` skipped: the next one is the first at or
        after it, on their cadence."""
        step = self.config.offsets_retention_check_interval_ms
        if self._next_offsets_check_ms < bound:
            self._next_offsets_check_ms += -(-(bound - self._next_offsets_check_ms) // step) * step

    def _expire_all(self, txn: Txn) -> None:
        """GroupCoordinatorShard.cleanupGroupMetadata: every group, classic or consumer
        (coordinator/consumer/expiry.py), in the order of the shard's groups map
        (groupIds(), the map's key set: coordinator/group_order.py), so the tombstones of
        several groups expiring at one check come in Kafka's order; groups the order does not
        know (a state built without records) after them."""
        st = self.state
        walk = [g for g in st.group_order.order() if g in st.groups or g in st.consumer_groups]
        known = set(walk)
        walk += [g for g in [*st.groups, *st.consumer_groups] if g not in known]
        for gid in walk:
            cg = st.consumer_groups.get(gid)
            if cg is not None:
                expire_consumer_offsets(txn, cg)
                continue
            group = st.groups.get(gid)
            if group is not None:
                expire_offsets(txn, group)

    @property
    def next_offsets_check_ms(self) -> int:
        """When ``advance`` next runs the periodic offset-expiry check (a driver that knows
        no group timer is due before it may leave ``advance`` uncalled until then)."""
        return self._next_offsets_check_ms

    def next_deadline(self) -> int | None:
        """The earliest group timer (the periodic offset-expiry check is not counted: it
        runs whenever ``advance`` passes it)."""
        timers = all_timers(self.state)
        return timers[0].deadline_ms if timers else None

    def failover(self, now_ms: int) -> Output:
        """The coordinator moves: unload (answer parked requests NOT_COORDINATOR), then
        reload every group from its persisted records."""
        txn = self._txn(now_ms)
        unload_all(txn)
        old = self.state.groups
        old_consumer = self.state.consumer_groups
        old_pending = self.state.pending_offsets
        old_pending_order = self.state.pending_order
        txn.emit(r.CoordinatorUnloaded(""))
        load_all(old, txn)
        load_consumer_groups(old_consumer, txn)
        load_pending_offsets(old_pending, old_pending_order, txn)
        return txn.out

    def delete_partitions(self, partitions: Iterable[tuple[str, int]], now_ms: int) -> Output:
        """Topic partitions were deleted (the broker's metadata publisher calls
        GroupCoordinatorService.onPartitionsDeleted): the committed offsets of those
        partitions are tombstoned in every group, classic, simple or consumer
        (OffsetMetadataManager.onPartitionsDeleted); the groups stay. An inactive service
        refuses the call (throwIfNotActive) and nothing changes."""
        gone = set(partitions)
        txn = self._txn(now_ms)
        if not self.active:
            return txn.out
        holders = [(g.group_id, g.offsets) for g in self.state.groups.values()]
        holders += [(g.group_id, g.offsets) for g in self.state.consumer_groups.values()]
        for gid, offsets in holders:
            # (the pending transactional offsets of those partitions too)
            pending = self.state.pending_offsets.get(gid, {})
            doomed = tuple(sorted(tp for tp in {*offsets, *pending} if tp in gone))
            if doomed:
                txn.emit(r.OffsetsDeleted(gid, doomed, "partitions deleted"))
        return txn.out

    def pending_regex_resolutions(self) -> dict[str, int]:
        """The groups whose regex resolution waits in the executor, with the time each was
        scheduled (a ConsumerRegexResolutionScheduled record)."""
        return {gid: t.scheduled_ms for gid, t in self.state.regex_tasks.items()}

    def complete_regex_resolution(self, group_id: str, now_ms: int) -> Output:
        """Run the group's pending regex resolution at ``now_ms`` against the topics known
        now, and write its result (GroupMetadataManager.refreshRegularExpressions, then
        handleRegularExpressionsResult): ConsumerGroupRegularExpression records and, if the
        resolved topics changed, a group epoch bump; the members see it at their next
        heartbeat. Drivers call it for each of :meth:`pending_regex_resolutions`, after the
        heartbeat that scheduled it and before or between later inputs, as Kafka's executor
        thread would finish (usually within milliseconds). A failover cancels it."""
        txn = self._txn(now_ms)
        complete_regex_resolution(txn, group_id)
        return txn.out

    def complete_regex_resolutions(self, now_ms: int) -> Output:
        """Every pending regex resolution, in the order they were scheduled."""
        out = Output()
        for gid in sorted(self.state.regex_tasks, key=lambda g: self.state.regex_tasks[g].scheduled_ms):
            out.extend(self.complete_regex_resolution(gid, now_ms))
        return out

    def update_group_config(self, group_id: str, config: GroupConfig | None) -> None:
        """A group's dynamic settings changed (GroupConfigManager.updateGroupConfig, fed by
        the metadata image's config changes; an input, as the topics are): they apply from
        the group's next heartbeat (its answer's interval, its member's new session timer).
        ``config`` replaces what the group had; None removes it."""
        self.config = self.config.with_group_config(group_id, config)

    def set_topics(self, topics: Iterable[TopicMetadata], version: int | None = None) -> None:
        """The metadata image's topics (an input, as time is): what consumer groups
        subscribe to and their assignors see. A change reaches a group at its next
        heartbeat (its metadata hash changes, so its epoch is bumped), as Kafka's
        onNewMetadataImage requests a refresh of the groups subscribed to changed topics.

        ``version`` is the image's offset (Kafka's ``lastContainedOffset``; by default one
        more than the last when something changed). An image that creates topics is
        remembered (``lastMetadataImageWithNewTopics``): groups with regexes refresh them at
        their next heartbeat once the 10 s minimum interval has passed."""
        image: dict[str, TopicMetadata] = {}
        ids: set[int] = set()
        for t in topics:
            if t.name in image:
                raise ValueError(f"topic {t.name!r} listed twice")
            if int(t.topic_id) in ids:
                raise ValueError(f"topic {t.name!r}: topic id {t.topic_id} already used")
            image[t.name] = t
            ids.add(int(t.topic_id))
        st = self.state
        old_ids = {int(t.topic_id) for t in st.topics.values()}
        if version is None:
            version = st.metadata_version + (1 if image != st.topics else 0)
        st.metadata_version = version
        # GroupMetadataManager.onNewMetadataImage
        if st.metadata_version_with_new_topics == -1:
            st.metadata_version_with_new_topics = version
        if ids - old_ids:
            st.metadata_version_with_new_topics = version
        # onNewMetadataImage: every group subscribed (by name or through a resolved regex)
        # to a topic the image created, changed or deleted has its metadata refreshed at its
        # next heartbeat (ModernGroup.requestMetadataRefresh)
        changed = {n for n in {*image, *st.topics} if image.get(n) != st.topics.get(n)}
        if changed:
            refresh_changed_groups(st.consumer_groups.values(), changed)
        st.topics = image

    def consumer_member_ids(self) -> str:
        """A member id for a ConsumerGroupHeartbeat v0 that sent none (Kafka's
        ``Uuid.randomUuid().toString()``): deterministic, in the same 22-character form."""
        if self._consumer_member_ids is not None:
            return self._consumer_member_ids()
        self._consumer_member_count += 1
        return str(TopicId(self._consumer_member_count | (1 << 127)))

    # ------------------------------------------------------------------ helpers
    def _txn(self, now_ms: int) -> Txn:
        if now_ms < self._last_now_ms:
            raise ValueError(f"now_ms went backwards: {now_ms} < {self._last_now_ms}")
        self._last_now_ms = now_ms
        return Txn(self.state, self.config, now_ms)

    def _find_coordinator(self, txn: Txn, rid: int, req: msg.FindCoordinatorRequest) -> None:
        if req.key_type != 0:
            txn.respond(rid, msg.FindCoordinatorResponse(error=Error.INVALID_REQUEST))
            return
        # One broker hosts every __consumer_offsets partition in this model; the partition
        # itself is what `coordinator_partition` computes.
        coordinator_partition(req.key, self.config.offsets_topic_num_partitions)
        txn.respond(
            rid,
            msg.FindCoordinatorResponse(
                error=Error.NONE, node_id=self.node_id, host=self.host, port=self.port
            ),
        )


def inactive_answer(request: msg.Request) -> msg.Response | None:
    """What GroupCoordinatorService answers while it is not active (each request method's
    ``isActive`` check, before any other): COORDINATOR_NOT_AVAILABLE in each response's own
    shape (protocol/error_responses.py). A FindCoordinator for a group is answered so too:
    the broker asks the service for the group's partition (KafkaApis.getCoordinator), and
    partitionFor throws while it is inactive (GroupCoordinatorServiceTest testPartitionFor).
    None: not a request the service refuses this way (another FindCoordinator key type)."""
    if isinstance(request, msg.FindCoordinatorRequest) and request.key_type != 0:
        return None
    return error_response(request, Error.COORDINATOR_NOT_AVAILABLE)


def _join(c: Coordinator, txn: Txn, rid: int, req: msg.Request) -> None:
    assert isinstance(req, msg.JoinGroupRequest)
    handle_join_group(txn, rid, req, c.member_ids, c.consumer_member_ids)


def _consumer_heartbeat(c: Coordinator, txn: Txn, rid: int, req: msg.Request) -> None:
    assert isinstance(req, ConsumerGroupHeartbeatRequest)
    handle_consumer_group_heartbeat(txn, rid, req, c.consumer_member_ids)


def _wrap(fn: Callable[[Txn, int, Any], None]) -> Callable[[Coordinator, Txn, int, msg.Request], None]:
    def call(c: Coordinator, txn: Txn, rid: int, req: msg.Request) -> None:
        fn(txn, rid, req)

    return call


def _find(c: Coordinator, txn: Txn, rid: int, req: msg.Request) -> None:
    assert isinstance(req, msg.FindCoordinatorRequest)
    c._find_coordinator(txn, rid, req)


_HANDLERS: dict[type, Callable[[Coordinator, Txn, int, msg.Request], None]] = {
    msg.JoinGroupRequest: _join,
    msg.SyncGroupRequest: _wrap(handle_sync_group),
    msg.HeartbeatRequest: _wrap(handle_heartbeat),
    msg.LeaveGroupRequest: _wrap(handle_leave_group),
    msg.OffsetCommitRequest: _wrap(handle_offset_commit),
    msg.OffsetFetchRequest: _wrap(handle_offset_fetch),
    msg.OffsetDeleteRequest: _wrap(handle_offset_delete),
    msg.TxnOffsetCommitRequest: _wrap(handle_txn_offset_commit),
    msg.FindCoordinatorRequest: _find,
    msg.ListGroupsRequest: _wrap(handle_list_groups),
    msg.DescribeGroupsRequest: _wrap(handle_describe_groups),
    msg.DeleteGroupsRequest: _wrap(handle_delete_groups),
    ConsumerGroupHeartbeatRequest: _consumer_heartbeat,
    ConsumerGroupDescribeRequest: _wrap(handle_consumer_group_describe),
}

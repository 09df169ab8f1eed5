"""Replaying one group's wire exchanges on the reference coordinator, allowing for what a
recording cannot know.

What is nondeterministic, and how it is handled:

- **Member ids** are chosen by the broker. When the reference hands out an id (a new
  member's JoinGroup), it takes the one the broker's response carries, so later requests
  naming that id refer to the same member in both; an id already in use is a violation
  (MemberIdFresh).
- **Order.** Requests on one connection are handled in the order they were sent (Kafka
  reads the next request of a connection only after answering the previous one); requests
  on different connections are ordered only by their [sent_ms, received_ms] intervals: a
  request may be handled before another unless that other one's response arrived before it
  was sent. The replay takes the order of sending first and, when the reference disagrees
  with the broker, searches the other orders the intervals allow (depth first, bounded).
- **Time.** The broker's clock reading for a request lies inside its interval. The replay
  handles a request at its send time; a coordinator timer (session, rebalance, sync, initial
  delay) falling within ``slack_ms`` of a request may have fired before or after it, and
  both are tried; one due at the clock's own millisecond (armed with no delay by the
  request just handled) fires first unless deferred. A loaded broker reads a request long
  after it was sent, so the interval is used whole: a timer due between the send time plus
  the slack and the response may have fired first (the "late" alternative; not for a
  JoinGroup or SyncGroup answered NONE, whose answer may wait for others), and a member's session
  deadline set by a request answered long after it was sent may run as much later (the
  "stretch" alternative). A response the broker sent while the reference would still wait is a
  divergence (rule JoinWaitsForAllMembers, SyncWaitsForLeader).
- **Broker configuration** the trace does not carry: group.initial.rebalance.delay.ms is
  tried at each of ``initial_delays_ms`` (Kafka's default 3000 first, then 0).
- **Coordinator moves.** NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and
  COORDINATOR_LOAD_IN_PROGRESS are always allowed: either the request never reached the
  group's coordinator, or the coordinator failed over (the reference reloads the group from
  its persisted records, GroupMetadataManager onUnloaded/onLoaded). Both are tried. The
  load lies anywhere after the last request the old coordinator answered: the sessions it
  schedules may run out earlier than a load at the error would make them ("reload-earlier").
- **Missing responses**: the request is replayed (or, as an alternative, assumed lost) and
  its answer is not checked.

Leader-chosen assignments are opaque to the coordinator: the replay checks that each
member gets what the leader sent for it; the assignor contract is checked by
:mod:`groupspec.validate.checks`.

The search is bounded: on a divergence it revisits only choices made after the *horizon*
(the send time of the diverging request, of every request still parked, and of every
request whose interval overlaps it), at most ``budget`` times. Within one search segment
(up to the divergence it decides) the horizon only moves back: it is the earliest of the
segment's failures', so a later failure does not clear what an earlier one left to try.

Choice points are remembered lazily: most are never revisited (a conforming trace
backtracks rarely), so instead of a copy of the whole replay state at each one, the
search keeps a copy every ``CHECKPOINT_EVERY`` decisions (``QUIET_CHECKPOINT_EVERY`` until
its first failure) and the decisions taken since it; revisiting a choice point copies the checkpoint and replays those decisions, which
``_step`` makes exactly as before (it depends only on the branch and the decision).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator import kafka_apis
from groupspec.coordinator.admin import described_group, list_filters, listed_group
from groupspec.coordinator.classic import fast_path
from groupspec.coordinator.classic.rebalance import complete_join
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.consumer.describe import describe_group as describe_consumer_group
from groupspec.coordinator.consumer.describe import unknown_group as unknown_consumer_group
from groupspec.coordinator.context import Output, Txn
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import ReplayError
from groupspec.coordinator.state import CoordinatorState, NotModelled
from groupspec.coordinator.timers import Expiry, TimerKind, deadlines
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.consumer_group_messages import DescribedGroup as ConsumerDescribedGroup
from groupspec.protocol.consumer_group_records import (
    ConsumerRebalanceTimerSet,
    ConsumerSessionTimerSet,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.records import (
    GroupLoaded,
    HeartbeatScheduled,
    LeaderChanged,
    OffsetCommitted,
    OffsetsDeleted,
    StaticMemberReplaced,
)
from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import MetadataEvent, WireExchange
from groupspec.validate.compare import (
    LIST_GROUPS_TYPE_MIN_VERSION,
    Mismatch,
    TxnOffsets,
    api_layer_partitions,
    compare,
    main_error,
    summary,
    transaction_refused,
)
from groupspec.validate.grouping import Exchange, txn_accepted
from groupspec.validate.rules import RULES, Rule, broker_rule, rule_for
from groupspec.validate.snapshot import copy_state

#: Error members bound once: looking one up on its Enum class costs as much
#: as a function call, and these are read for nearly every event
_COORDINATOR_LOAD_IN_PROGRESS = Error.COORDINATOR_LOAD_IN_PROGRESS
_COORDINATOR_NOT_AVAILABLE = Error.COORDINATOR_NOT_AVAILABLE
_MEMBER_ID_REQUIRED = Error.MEMBER_ID_REQUIRED
_NONE = Error.NONE
_NOT_COORDINATOR = Error.NOT_COORDINATOR
_UNKNOWN_MEMBER_ID = Error.UNKNOWN_MEMBER_ID


def coordinator_moving(api: str, resp: m.Response | None) -> bool:
    """Whether ``resp`` says the group's coordinator is elsewhere or moving, an answer
    Kafka may give any request. Not COORDINATOR_LOAD_IN_PROGRESS to a Heartbeat:
    GroupCoordinatorService.heartbeat answers a heartbeat that reaches a loading group NONE
    (rule HeartbeatWhileLoading)."""
    err = main_error(resp)
    if err is Error.COORDINATOR_LOAD_IN_PROGRESS and api == "Heartbeat":
        return False
    # err in compare.COORDINATOR_ERRORS, by identity (an Error's hash is a Python-level call)
    return err is _NOT_COORDINATOR or err is _COORDINATOR_NOT_AVAILABLE or err is _COORDINATOR_LOAD_IN_PROGRESS


@dataclass(frozen=True)
class ReplayConfig:
    #: group.initial.rebalance.delay.ms values to try (Kafka's default first)
    initial_delays_ms: tuple[int, ...] = (3_000, 0)
    #: how far a timer may be off the recorded times (broker vs recorder clocks, timer wheel)
    slack_ms: int = 100
    #: other requests tried at one step besides the one sent first
    max_reorder: int = 3
    #: alternatives explored per group and configuration before giving up (per divergence:
    #: after one, the search starts afresh from where it resynchronised); a small group (at
    #: most SMALL_GROUP_EXCHANGES exchanges) gets PER_EXCHANGE_BUDGET per exchange if that is
    #: more, so that a divergence in a few dozen exchanges is decided, not left to the bound
    budget: int = 2_000
    #: divergences of one group reported before the replay stops (it resynchronises after
    #: each one and goes on judging)
    max_divergences: int = 20
    #: connections deliver every request and response, in order, while they are open (TCP,
    #: as the recorder sees them): then a request left unanswered while its client goes on
    #: sending on the same connection was never answered (AnsweredBeforeLaterRequests). The
    #: simulator's network loses single messages on open connections, so its traces (and
    #: any trace whose source is not the recorder) are judged without this premise.
    reliable_connections: bool = False
    coordinator: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    #: the trace's metadata events (v1.2), in time order: the topics a consumer group's
    #: assignor sees from each time on
    metadata: tuple[MetadataEvent, ...] = ()
    #: the metadata events are what the recorder saw clients learn (a topic appears once a
    #: client asked about it), not the broker's image as it changed (the simulator's)
    metadata_as_learned: bool = False
    #: a consumer group's regex resolution (Kafka's executor task, not visible on the
    #: wire) completes before the group's next request or, if that one comes within this
    #: many ms of the heartbeat that scheduled it, possibly after it: both are tried
    regex_resolution_ms: int = 100
    #: the group's TxnOffsetCommit exchanges (replayed, their transactions not modelled).
    #: After one, an OffsetFetch may answer a partition it names with the offset it
    #: committed (its transaction committed) or the reference's (it aborted, or is open);
    #: any other difference on such a partition is inconclusive, naming it
    txn_commits: tuple[Exchange, ...] = ()
    #: the instants of the coordinator's periodic group and offset expiry check are known:
    #: they fall at multiples of offsets.retention.check.interval.ms from the trace's clock
    #: zero, as in the simulator (whose coordinator starts there). Kafka runs the check one
    #: interval after its shard loaded, then every interval (GroupCoordinatorShard.onLoaded,
    #: scheduleGroupMetadataExpiration), an instant no recording shows: when False (a
    #: recording), a replay that diverges is tried again with the check placed at each
    #: point among the exchanges before the divergence (:func:`replay_group`). None: as the
    #: trace says (validator.file_config: unknown in a recording, else known)
    offsets_check_phase_known: bool | None = None
    #: the broker's group.consumer.heartbeat.interval.ms is known (a trace header's
    #: broker_config, ``--broker-config``, ``--consumer-heartbeat-interval-ms``, a broker
    #: groupspec started): the interval each accepted ConsumerGroupHeartbeat answers is then
    #: judged (checks.heartbeat_intervals, ConsumerHeartbeatInterval); unknown, Kafka's
    #: default is assumed by the replay, not judged
    heartbeat_interval_known: bool = False

    @functools.cached_property
    def topic_names(self) -> dict[TopicId, str] | None:
        """The topic ids of :attr:`metadata` by name (None: no metadata), made once per
        configuration (a file's groups share it): what the client rules name a
        consumer-protocol member's assignments by."""
        if not self.metadata:
            return None
        return {t.topic_id: t.name for image in self.metadata for t in image.topics}


@dataclass(frozen=True)
class Failure:
    """Where one explanation of the trace broke down."""

    depth: int
    exchange: Exchange
    broker: str
    allowed: str
    rule: Rule
    detail: str
    #: the request names a member (or offset) from before the trace started
    prehistory: bool = False
    #: the reference could not process the request at all (a malformed request)
    unprocessable: bool = False
    #: what the reference does not model that this answer may depend on ("" if nothing)
    unmodelled: str = ""


@dataclass(frozen=True)
class Found:
    """A divergence the search could not explain away, and how the replay went on."""

    failure: Failure
    #: every answer the reference gave the diverging exchange in the explored branches
    allowed: tuple[str, ...]
    #: the search gave up at its bound: an explanation may lie beyond it
    bound_hit: bool
    #: alternatives explored to decide this divergence
    explored: int
    #: seq of an earlier divergence whose effect the reference's state may still carry (no
    #: completed join phase agreed with the broker since): this one may follow from it
    after: int | None = None
    #: seq of the divergence whose resynchronisation revealed this one (another difference
    #: in the answers that the broker's taken answer made due), if any
    revealed_by: int | None = None


@dataclass
class ReplayResult:
    ok: bool
    initial_delay_ms: int
    failure: Failure | None = None
    #: every answer the reference gave the diverging exchange in the explored branches
    allowed: tuple[str, ...] = ()
    explored: int = 0
    bound_hit: bool = False
    failovers: int = 0
    #: every divergence, the first one (``failure``) included, in the order found
    found: tuple[Found, ...] = ()
    #: the replay stopped at ``max_divergences`` (or could not resynchronise) before the end
    truncated: bool = False
    #: when the periodic expiry check was placed elsewhere than the trace's clock zero
    #: (``ReplayConfig.offsets_check_phase_known`` False): the time of one of its runs
    offsets_check_ms: int | None = None


class _IdInUse(Exception):
    pass


#: the most states of a group ``_note_views`` keeps between two of its written records
_MAX_READ_VIEWS = 64


#: how a read may describe a group: a DescribeGroups entry, or a ConsumerGroupDescribe one
_View = m.DescribedGroup | ConsumerDescribedGroup
_DEAD = GroupState.Dead.value
#: the reads that show groups' states: the replay keeps their read views (_note_views)
_GROUP_READS = frozenset({m.DescribeGroupsRequest, ConsumerGroupDescribeRequest, m.ListGroupsRequest})
#: records that only set a timer: no read shows them, and they are not written
_TIMERS_ONLY = frozenset({HeartbeatScheduled, ConsumerSessionTimerSet, ConsumerRebalanceTimerSet})
#: written records that change nothing a description of the group shows
_UNDESCRIBED = frozenset({OffsetCommitted, OffsetsDeleted})


def _alike(kind: type, version: int, ours: Any, theirs: Any) -> bool:
    """The broker's entry ``theirs`` is the reference's ``ours`` in a response of type
    ``kind`` (DescribeGroupsResponse, ConsumerGroupDescribeResponse) at ``version``."""
    return compare(version, kind(groups=(ours,)), kind(groups=(theirs,))) is None


def _in_map(view: _View | None) -> bool:
    """``view`` describes a group the coordinator holds (not unknown, not Dead)."""
    return view is not None and view.group_state != _DEAD


def _classic_in_map(view: _View | None) -> bool:
    """``view`` describes a classic group the coordinator holds."""
    return type(view) is m.DescribedGroup and _in_map(view)


def _listed(view: _View | None, gid: str, req: m.ListGroupsRequest) -> tuple[m.ListedGroup, ...]:
    """How ListGroups ``req`` lists group ``gid`` described as ``view`` (None: unknown), as
    the reference lists a group (coordinator/admin.py ``listed_group``)."""
    if not _in_map(view):
        return ()
    assert view is not None
    if isinstance(view, m.DescribedGroup):
        entry = listed_group(gid, view.protocol_type, view.group_state, "classic", list_filters(req))
    else:
        entry = listed_group(gid, "consumer", view.group_state, "consumer", list_filters(req))
    return () if entry is None else (entry,)


def _same_listing(version: int, ours: tuple[m.ListedGroup, ...], theirs: tuple[m.ListedGroup, ...]) -> bool:
    """A ListGroups answer listing ``theirs`` is one listing ``ours`` at ``version``
    (compare's rule for ListGroups)."""
    return compare(version, m.ListGroupsResponse(error=_NONE, groups=ours),
                   m.ListGroupsResponse(error=_NONE, groups=theirs)) is None


@dataclass
class _Branch:
    coord: Coordinator
    remaining: list[int]
    parked: dict[int, None] = field(default_factory=dict)
    unchecked: set[int] = field(default_factory=set)
    processed: list[int] = field(default_factory=list)
    clock: int = 0
    introduced: set[str] = field(default_factory=set)
    last_normal: dict[str, int] = field(default_factory=dict)
    last_failover: int = -1
    failovers: int = 0
    #: each group's leader after the last output absorbed
    leaders: dict[str, str | None] = field(default_factory=dict)
    #: groups whose leader was re-elected since their last completed join phase: Kafka's
    #: choice there is a HashMap's iteration order, so the broker's choice is taken
    leader_open: set[str] = field(default_factory=set)
    #: per group, the broker's generation minus the reference's, adopted after a divergence
    #: (a broker numbering generations differently is judged on everything else)
    gen_delta: dict[str, int] = field(default_factory=dict)
    #: seq of the last divergence whose effect the state may still carry (None: none, or a
    #: completed join phase agreed with the broker since)
    open_divergence: int | None = None
    #: members the reference removed when their session expired: member id -> (the expiry's
    #: time, the session timeout), to name the expiry when the broker still knows them
    expired: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: members whose session deadline the broker may have set later than the replay did:
    #: the request that set it was answered more than the slack after it was sent (a
    #: loaded broker reads late). (group, member) -> (the deadline the replay set, the
    #: latest the broker's may be)
    late_armed: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    #: members whose session deadline the last failover's reload set and nothing has set
    #: since: (group, member) -> that deadline. The replay loads the group when a
    #: coordinator error reveals the failover; the broker loaded it at some time after the
    #: last request it answered before (GroupMetadataManager.onLoaded schedules each
    #: member's session from the load), so these deadlines may all lie earlier by the same
    #: amount, up to :attr:`reload_slack`
    reload_armed: dict[tuple[str, str], int] = field(default_factory=dict)
    #: how much earlier the reload may still have happened
    reload_slack: int = 0
    #: per group, how a read at the shard's last committed write may describe it: the group
    #: as described (DescribeGroups version 0, or ConsumerGroupDescribe; None: unknown, as
    #: before its first record) after each change, each with
    #: the time until which a read may still see it (None: until the group's next written
    #: record). See ``Replayer._note_views``
    read_views: dict[str, list[tuple[_View | None, float | None]]] = field(default_factory=dict)


def _copy_branch(b: _Branch) -> _Branch:
    """A deep copy of ``b`` (:func:`copy_state`), its lists of exchange indices copied by
    slicing: they hold one int per exchange not yet handled (or handled), and a pickle round
    trip of 28,000 ints takes 7 ms where a slice takes microseconds; that made each
    alternative cost some 30 ms on the oracle campaign's 90-MB traces
    (sync-leader-assignment-to-all, seeds past its 60-s limit). Ints are immutable, so the
    slice is as deep a copy."""
    remaining, processed = b.remaining, b.processed
    b.remaining = b.processed = []
    try:
        copied = copy_state(b)
    finally:
        b.remaining, b.processed = remaining, processed
    copied.remaining = remaining[:]
    copied.processed = processed[:]
    return copied


@dataclass(frozen=True)
class _Decision:
    index: int
    #: "normal": fire timers due by the request's time; "defer": leave those within slack
    #: for after it; "early": handle it up to slack later, after timers due by then;
    #: "late": handle it at ``at``, a deadline past the slack but before its response
    #: arrived (the broker read it late), after the timers due by then; "stretch": the
    #: session deadlines of :meth:`Replayer._stretchable` run past it; "reload-earlier":
    #: the last failover's reload happened early enough for a session it set to run out
    #: by this request (:meth:`Replayer._reload_shift`)
    timers: str = "normal"
    #: "handle"; for coordinator errors "failover" or "noise" (or "failover-early": at the
    #: replay's clock rather than the request's send time); for no response "lost"; for
    #: a heartbeat answered NONE right after a failover "loading" (answered, not handled);
    #: "failover-first": the coordinator failed over just before this request
    how: str = "handle"
    #: the request is handled before one sent earlier on another connection
    moved: bool = False
    #: a consumer group's pending regex resolution: "complete" just before this request,
    #: "wait" (it completes later); "" when none is pending
    regex: str = ""
    #: when ``timers`` is "late": the time the request is handled at
    at: int = 0


_new = object.__new__
_setattr = object.__setattr__


def _plain_decision(i: int, how: str, moved: bool) -> _Decision:
    """``_Decision(i, "normal", how, moved)`` as its generated ``__init__`` makes it, given
    its field dict at once (a frozen dataclass sets each field through
    ``object.__setattr__``; the replay makes one or two per exchange)."""
    d = _new(_Decision)
    _setattr(d, "__dict__", {"index": i, "timers": "normal", "how": how, "moved": moved, "regex": "",
                             "at": 0})
    return d


#: The decisions a branch took since its checkpoint, newest first (shared tails).
_Link = tuple[_Decision, "_Link | None"]

#: the requests whose response may wait for other members' (JoinGroup, SyncGroup)
_MAY_PARK = frozenset({"JoinGroup", "SyncGroup"})
#: the most "late" alternatives a request gets (one per deadline between its send time
#: plus the slack and its response, nearest first)
LATE_OPTIONS = 3

#: Decisions between two copies of the replay state, while the search is backtracking
#: (after a failure, until it resynchronises): its choice points are revisited often.
CHECKPOINT_EVERY = 32
#: The same before the search's first failure since it started or resynchronised: most of
#: these choice points are never revisited (a conforming stretch of trace), and the few
#: that are lie within the failure's horizon, near the end; each pays the decisions since
#: its checkpoint once (it becomes its own checkpoint then). A copy holds the branch's
#: lists of requests, so copying less often saves work that grows with the group's size.
QUIET_CHECKPOINT_EVERY = 256


@dataclass
class _Mark:
    """A choice point to come back to: a copy of an earlier state of the branch (never
    driven itself, only copied), the member-id counter then, and the decisions taken
    from there up to the choice point."""

    checkpoint: _Branch
    fallback: int
    since: _Link | None


class _Fail(Exception):
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


class _Seen(Exception):
    """A choice point in a state the search has already been at since its last divergence:
    everything from there was tried (and failed), so the branch is abandoned."""


class _Diverged(Exception):
    """An optimistic replay (``Replayer(optimistic=True)``) met a divergence: the search
    must be run again with its choice points (:func:`_run`)."""


#: APIs whose handling changes nothing in the coordinator: handling one before requests sent
#: earlier matters only to its own answer
_NO_EFFECT = frozenset({"OffsetFetch", "DescribeGroups", "ListGroups", "FindCoordinator"})
#: the coordinator's reads among them: Kafka answers them at the last committed offset, so
#: a read may see the group as before a write whose records had not committed yet (see
#: Replayer._search, where a pruned move of a read that diverges is tried again)
_COMMITTED_READS = frozenset({"OffsetFetch", "DescribeGroups", "ListGroups"})

#: APIs whose handling never adds or removes a member, changes the generation or starts a
#: rebalance (a SyncGroup parks, completes the join's second phase, or is answered): a
#: broker answer that needs such a change is not explained by moving one of them
_NO_MEMBERSHIP_EFFECT = frozenset({"SyncGroup"})
#: broker errors that say the group's members, generation or state differed from the
#: reference's: a rebalance in progress, another generation, an unknown or fenced member
_MEMBERSHIP_ERRORS = frozenset({Error.REBALANCE_IN_PROGRESS, Error.ILLEGAL_GENERATION,
                                Error.UNKNOWN_MEMBER_ID, Error.FENCED_INSTANCE_ID})


#: the classic protocol's membership APIs: a group with any of them may have classic members
#: (and adopt a generation offset), which :meth:`Replayer._commit_unexplainable` leaves alone
_CLASSIC_MEMBERSHIP = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"})


#: groups of at most this many exchanges get a budget of PER_EXCHANGE_BUDGET per exchange
SMALL_GROUP_EXCHANGES = 200
PER_EXCHANGE_BUDGET = 100


#: how many of the group's last heartbeats a ConsumerReconciliation divergence may reorder
_RECONCILIATION_LOOKBACK = 8


def effective_budget(cfg: ReplayConfig, exchanges: int) -> int:
    """The search budget of a group of ``exchanges`` exchanges (see ReplayConfig.budget)."""
    if exchanges <= SMALL_GROUP_EXCHANGES:
        return max(cfg.budget, PER_EXCHANGE_BUDGET * exchanges)
    return cfg.budget


#: what the reference's handling of a request or a timer raises on an input it cannot
#: process (a request no well-formed client sends, a state Kafka itself fails in): the branch
#: fails there as unprocessable, and the divergence is inconclusive, not a crash
_UNPROCESSABLE = (ValueError, AssertionError, ReplayError, NotModelled, KeyError, TypeError)


def _needs_membership_change(f: Failure) -> bool:
    """Whether the broker's answer of the diverging exchange is an error only a change of
    the group's members, generation or rebalance state can explain."""
    return main_error(f.exchange.event.response) in _MEMBERSHIP_ERRORS


#: APIs whose answers change nothing the later exchanges depend on: a divergence there
#: leaves the reference's state as the broker's
_READ_ONLY = frozenset({"Heartbeat", "OffsetFetch", "DescribeGroups", "ListGroups", "FindCoordinator"})


def _opens(f: Failure) -> bool:
    """Whether the reference's state may differ from the broker's after divergence ``f``."""
    return f.exchange.event.api not in _READ_ONLY and broker_rule(
        f.exchange.event.api, main_error(f.exchange.event.response)) is None


def _same_answer(expected: m.Response, actual: m.Response) -> bool:
    """Whether the broker's heartbeat or commit answer is the fast path's one as it is (the
    same error; the same partitions in the same order, each NONE), which ``compare`` accepts:
    the usual case, told without building the maps ``compare`` compares. False says nothing
    (``compare`` decides then)."""
    cls = type(actual)
    if cls is not type(expected):
        return False
    if cls is m.HeartbeatResponse:
        assert isinstance(expected, m.HeartbeatResponse) and isinstance(actual, m.HeartbeatResponse)
        return expected.error is actual.error
    if cls is m.OffsetCommitResponse:
        assert isinstance(expected, m.OffsetCommitResponse) and isinstance(actual, m.OffsetCommitResponse)
        ours, theirs = expected.partitions, actual.partitions
        if len(ours) != len(theirs):
            return False
        for p, q in zip(ours, theirs, strict=True):
            if q.error is not _NONE or p.error is not _NONE or p.partition != q.partition or p.topic != q.topic:
                return False
        return True
    return False


def _session_deadline(state: CoordinatorState, group_id: str, member_id: str) -> int | None:
    """A member's session deadline: a classic group's member's, or a consumer group's."""
    g = state.groups.get(group_id)
    if g is not None:
        mem = g.members.get(member_id)
        return mem.heartbeat_deadline_ms if mem is not None else None
    cg = state.consumer_groups.get(group_id)
    return cg.session_deadlines.get(member_id) if cg is not None else None


def _set_session_deadline(state: CoordinatorState, group_id: str, member_id: str, at: int) -> None:
    g = state.groups.get(group_id)
    if g is not None:
        g.members[member_id].heartbeat_deadline_ms = at
    else:
        state.consumer_groups[group_id].session_deadlines[member_id] = at


def _member_key(e: WireExchange) -> tuple[str, str]:
    """(group, member) of a request, the member "" when it names none."""
    mid = getattr(e.request, "member_id", None)
    return e.group_id, mid if isinstance(mid, str) else ""


def _floor(x: float) -> int:
    return math.floor(x) if math.isfinite(x) else 2**62


@dataclass
class _Prepared:
    """What the replay derives from a group's exchanges alone, computed once per group
    (:func:`replay_group` replays the same exchanges under several configurations)."""

    #: whether each exchange's response is a coordinator error (NOT_COORDINATOR, ...)
    coordinator_error: list[bool]
    coordinator_errors: list[int]
    index: dict[int, int]
    #: for each exchange, the latest send time of a later request on its connection
    #: (None: none), the evidence that the connection stayed open
    open_until: list[float | None]
    #: some member subscribes by regular expression (KIP-848)
    regex: bool
    #: each exchange's send time in whole ms (``_floor(x.sent)``)
    sent_ms: list[int]
    #: each exchange has a response that is not a coordinator error
    answered: list[bool]
    #: for each exchange, the first later request on its connection the broker answered
    #: (index; None: none): on a TCP connection the broker answers requests in order
    answered_later: list[int | None]


def _coordinator_error(x: Exchange) -> bool:
    """``coordinator_moving(api, response)`` of exchange ``x``; a heartbeat answered NONE
    (half of a trace's exchanges) told at once: its one error field is no error."""
    resp = x.event.response
    if type(resp) is m.HeartbeatResponse and resp.error is _NONE:
        return False
    return coordinator_moving(x.event.api, resp)


def _prepare(exchanges: list[Exchange]) -> _Prepared:
    coordinator_error = list(map(_coordinator_error, exchanges))
    open_until: list[float | None] = [None] * len(exchanges)
    answered_later: list[int | None] = [None] * len(exchanges)
    last: dict[str, float] = {}
    #: per connection, the first answered request sent after the one at hand
    next_answered: dict[str, int] = {}
    sent = [x.sent for x in exchanges]
    for i in sorted(range(len(exchanges)), key=sent.__getitem__, reverse=True):
        conn = exchanges[i].event.connection
        open_until[i] = last.get(conn)
        answered_later[i] = next_answered.get(conn)
        if conn not in last:
            last[conn] = exchanges[i].sent
        if exchanges[i].event.response is not None:
            next_answered[conn] = i
    return _Prepared(
        coordinator_error, [i for i, err in enumerate(coordinator_error) if err],
        {id(x): i for i, x in enumerate(exchanges)}, open_until,
        any(isinstance(x.event.request, ConsumerGroupHeartbeatRequest)
            and x.event.request.subscribed_topic_regex for x in exchanges),
        [_floor(t) for t in sent],
        [x.event.response is not None and not err for x, err in zip(exchanges, coordinator_error, strict=True)],
        answered_later,
    )


class Replayer:
    def __init__(self, exchanges: list[Exchange], config: ReplayConfig,
                 prepared: _Prepared | None = None, offsets_check_ms: int | None = None,
                 optimistic: bool = False) -> None:
        self.x = exchanges
        self.cfg = config
        #: take every step's first option and keep no choice point; at the first divergence
        #: raise _Diverged (see _run). A search that meets no divergence never goes back to
        #: a choice point, so without one it takes the same steps and gives the same result
        self.optimistic = optimistic
        #: a time the periodic expiry check runs at (None: the trace's clock zero)
        self.offsets_check_ms = offsets_check_ms
        self.budget = effective_budget(config, len(exchanges))
        self.slot: dict[str, str | None] = {"next": None}
        self.fallback = 0
        #: every answer the reference gave each exchange (by seq) in the branches explored
        #: (None: it kept the request parked), described only for the diverging one
        self.answers: dict[int, list[m.Response | None]] = {}
        #: the checkpoint the current branch's decisions are counted from, and how many
        self._base: _Mark | None = None
        self._since_count = 0
        pre = prepared if prepared is not None else _prepare(exchanges)
        #: whether each exchange's response is a coordinator error (NOT_COORDINATOR, ...)
        self.coordinator_error = pre.coordinator_error
        #: each exchange has a response, not a coordinator error (see _hows)
        self._answered = pre.answered
        self._coordinator_errors = pre.coordinator_errors
        self.coordinator_moved = bool(self._coordinator_errors)
        self._index = pre.index
        #: for each exchange, the latest send time of a later request on its connection
        #: (None: none), the evidence that the connection stayed open
        self._open_until = pre.open_until
        self._answered_later = pre.answered_later
        self._sent_ms = pre.sent_ms
        #: the trace describes groups: the replay keeps how reads may see them (_note_views)
        self._describes = any(type(ex.event.request) in _GROUP_READS for ex in exchanges)
        #: the plain decisions (timers "normal", no regex resolution) made so far, by
        #: (index, how, moved): a decision is immutable, and most are made again and again
        self._decisions: dict[tuple[int, str, bool], _Decision] = {}
        #: of those, the most made: each exchange handled in send order (index -> decision)
        self._handles: list[_Decision | None] = [None] * len(exchanges)
        #: and each handled ahead of a request sent before it (moved)
        self._moved_handles: list[_Decision | None] = [None] * len(exchanges)
        #: the step being taken is a sole option (``_sole_option``) or the first of
        #: ``_options``' when it found no timer near: no timer is due by the request's time
        #: plus the slack
        self._quiet_step = False
        #: the last ``_options`` found no timer due by its first option's time plus the slack
        self._options_quiet = False
        #: exchanges whose divergence was recorded (and its rule): the replay takes the
        #: broker's answer there
        self.accept: dict[int, str] = {}
        #: divergences found while taking such an answer (a second difference in it), by
        #: seq and rule: the failure, the reference's answer, the divergence it may follow from
        self.secondary: dict[tuple[int, str], tuple[Failure, tuple[str, ...], int | None, int | None]] = {}
        #: seq of the divergence whose broker answer is being taken (None: none now)
        self._resyncing: int | None = None
        #: a join completion forced by a broker's answer is being compared
        self._forcing = False
        #: heartbeat expiries fired in the current advance, with the member's session timeout
        self._fired: list[tuple[Expiry, int]] = []
        self._firing: _Branch | None = None
        #: the decision being taken (None: the check of the requests parked at the end)
        self._current: _Decision | None = None
        #: fingerprints of the choice points' states met since the search's last failure
        #: began backtracking (None: not backtracking); see :meth:`_fingerprint`
        self._seen: set[bytes] | None = None
        #: only choice points up to the deepest failure are fingerprinted: past it, the
        #: branch is in new territory (and a conforming trace that backtracked once pays
        #: nothing for the rest of its replay)
        self._memo_depth = -1
        #: branches abandoned because their state had been explored (memoised)
        self.pruned = 0
        #: some member subscribes by regular expression (KIP-848)
        self._regex = pre.regex
        #: per consumer-protocol member id, the indices of its ConsumerGroupHeartbeats (by
        #: the request's member id or, for a v0 join, the response's), computed on first use
        #: (see :meth:`_commit_unexplainable`); None for a group with classic exchanges
        self._member_heartbeats: dict[str, list[int]] | None = None
        self._member_heartbeats_done = False
        #: the commits found unexplainable, by index (what decided it cannot change but by
        #: an exchange accepted later, which only makes fewer commits unexplainable)
        self._unexplainable: dict[int, tuple[int, bool]] = {}
        #: search segments ended early because their divergence had no explanation
        self.decided = 0

    # ------------------------------------------------------------------ search
    def run(self, initial_delay_ms: int) -> ReplayResult:
        try:
            return self._search(initial_delay_ms)
        finally:
            # the checkpoints' coordinators call back into this replayer (member ids): drop
            # them, so that the replay's state is freed by reference counting when it returns
            # (the validator runs with the cycle collector paused)
            self._base = None

    def _search(self, initial_delay_ms: int) -> ReplayResult:
        cc = dataclasses.replace(
            self.cfg.coordinator, group_initial_rebalance_delay_ms=initial_delay_ms
        )

        def member_ids(client_id: str, group_instance_id: str | None) -> str:
            # a plain function (not a bound method), so copies of the state share it
            return self._member_id(client_id, group_instance_id)

        def consumer_member_ids() -> str:
            return self._member_id("", None)

        interval = cc.offsets_retention_check_interval_ms
        # (the checks fall at offsets_check_ms + k * interval: the first one interval after
        # the coordinator "loaded" at that instant's phase less an interval)
        loaded = 0 if self.offsets_check_ms is None else self.offsets_check_ms % interval - interval
        coord = Coordinator(cc, member_ids=member_ids, consumer_member_ids=consumer_member_ids,
                            loaded_at_ms=loaded)
        self._set_metadata(coord, -math.inf)
        branch = _Branch(coord, list(range(len(self.x))))
        if self.optimistic:
            try:
                self._drive_first_options(branch)
            except _Fail:
                raise _Diverged() from None
            return self._result(initial_delay_ms, [], 0, branch.failovers, False)
        self._rebase(_copy_branch(branch), self.fallback)
        stack: list[tuple[int, _Mark, list[_Decision]]] = []
        #: the deepest failure of this search segment: where it broke, the branch's state
        #: just before the step that broke (a mark), that step, and the divergence it was in
        best: tuple[Failure, _Mark, _Decision | None, int | None] | None = None
        found: list[Found] = []
        explored = 0
        segment = 0
        pending: _Decision | None = None
        #: the exchanges that diverged in this search segment (by index)
        failed_here: set[int] = set()
        #: the earliest horizon of the failures in this search segment (see below)
        horizon = math.inf
        #: moves of a read pruned in this segment, by the read's index: the choice point's
        #: time and mark, and the decision
        pruned_reads: dict[int, list[tuple[int, _Mark, _Decision]]] = {}
        while True:
            try:
                self._drive(branch, stack, pending)
                return self._result(initial_delay_ms, self._merged(found), explored, branch.failovers, False)
            except _Fail as f:
                fail = f.failure
                if best is None or fail.depth > best[0].depth:
                    assert self._base is not None
                    best = (fail, _Mark(self._base.checkpoint, self._base.fallback, self._base.since),
                            self._current, branch.open_divergence)
                horizon = min(horizon, self._horizon(branch, fail))
                failed_here.add(self._index.get(id(fail.exchange), -1))
                again = pruned_reads.pop(self._index.get(id(fail.exchange), -1), None)
                if again:
                    # a read diverged whose move ahead of other requests had been pruned
                    # (it changes nothing, and another exchange had diverged then). Kafka
                    # answers a read at the shard's last committed offset
                    # (GroupCoordinatorService.fetchOffsets without require_stable,
                    # describeGroups and listGroups schedule read operations; the runtime's
                    # CoordinatorReadEvent runs them against lastCommittedOffset), and a
                    # write is answered only once its records committed: a read whose
                    # interval overlaps a write's may see the group as before that write,
                    # which is the read handled first (an order the intervals allow in any
                    # case). Those moves are tried again (each where its time puts it on
                    # the stack: it passed the horizon when it was pruned, and the horizon
                    # only moves back)
                    for at, snap, d in again:
                        k = len(stack)
                        while k and stack[k - 1][0] > at:
                            k -= 1
                        stack.insert(k, (at, snap, [d]))
                if self._seen is None:
                    self._seen = set()
                self._memo_depth = max(self._memo_depth, fail.depth)
                if self._commit_unexplainable(fail):
                    # no order, timer placement or failover explains this commit's answer
                    # (see _commit_unexplainable): every branch the stack holds fails at it
                    # or before, so the search segment ends here with the deepest failure
                    # found, as the whole search would end (only sooner)
                    stack.clear()
                    self.decided += 1
            except _Seen:
                self.pruned += 1
            pending = None
            while stack:
                at, snap, alts = stack[-1]
                if at < horizon:
                    # choices before the horizon cannot explain the failure: the search
                    # segment ends. The horizon is the earliest of the segment's failures,
                    # not the last one's: a branch that gets past a failure and fails
                    # later (its horizon later) must not clear the alternatives left for
                    # the earlier failure, one of which may explain both
                    stack.clear()
                    break
                if not alts:
                    stack.pop()
                    continue
                pending = alts.pop(0)
                # (a request that diverged itself somewhere in this search, not only the one
                # that diverged last, is never pruned: the deepest branch may be a dead end
                # past which only moving that request helps)
                if (pending.moved and pending.index not in failed_here
                        # a request ahead of the diverging one on its connection is moved to
                        # let that one move too: never pruned
                        and self.x[pending.index].event.connection != fail.exchange.event.connection
                        and (self.x[pending.index].event.api in _NO_EFFECT
                             or (self.x[pending.index].event.api in _NO_MEMBERSHIP_EFFECT
                                 and _needs_membership_change(fail)
                                 and not self._unblocks_membership_change(pending.index, fail)))
                        and not (_needs_membership_change(fail)
                                 and self._widens_window(pending.index, fail))):
                    # what the failure rules out: moving a request that changes nothing
                    # earlier cannot change the answer that diverged (another exchange's);
                    # nor can moving one that never changes the group's members, generation
                    # or rebalance state, when only such a change explains the broker's answer
                    self.pruned += 1
                    if self.x[pending.index].event.api in _COMMITTED_READS:
                        pruned_reads.setdefault(pending.index, []).append((at, snap, pending))
                    pending = None
                    continue
                branch = self._restore(snap)
                explored += 1
                segment += 1
                break
            if pending is not None and segment <= self.budget:
                continue
            # No explanation: the divergence stands. Record it, then resynchronise: take the
            # branch that went furthest back to just before the step that broke, and take
            # that step again accepting the broker's answer (adopting from it what the
            # protocol state can be derived from), so the rest of the trace is judged too.
            assert best is not None
            fail, mark, decision, after = best
            bound = segment > self.budget
            found.append(Found(fail, self._allowed(fail), bound, segment, after))
            index = self._index.get(id(fail.exchange))
            if (len(found) >= self.cfg.max_divergences or bound or index is None
                    or index in self.accept):
                return self._result(initial_delay_ms, self._merged(found), explored, branch.failovers, True)
            self.accept[index] = fail.rule.name
            stack.clear()
            horizon = math.inf
            branch = self._restore(mark)
            self._resyncing = fail.exchange.seq
            if _opens(fail):
                branch.open_divergence = fail.exchange.seq
                # the marks of the search from here copy this state, not the one before
                self._rebase(_copy_branch(branch), self.fallback)
            pending = decision
            best = None
            segment = 0
            failed_here = set()
            pruned_reads = {}
            self._seen = None
            self._memo_depth = -1

    def _heartbeats_by_member(self) -> dict[str, list[int]] | None:
        """Each consumer-protocol member's ConsumerGroupHeartbeats (indices, in send order),
        or None when the group has classic membership exchanges (then a member id may also
        be a classic member's, and a generation offset may be adopted: not decided here)."""
        if not self._member_heartbeats_done:
            self._member_heartbeats_done = True
            out: dict[str, list[int]] = {}
            for i, x in enumerate(self.x):
                e = x.event
                if e.api in _CLASSIC_MEMBERSHIP:
                    return None
                req = e.request
                if not isinstance(req, ConsumerGroupHeartbeatRequest):
                    continue
                mid = req.member_id
                if not mid and isinstance(e.response, ConsumerGroupHeartbeatResponse):
                    mid = e.response.member_id or ""
                if mid:
                    out.setdefault(mid, []).append(i)
            self._member_heartbeats = out
        return self._member_heartbeats

    def _commit_unexplainable(self, fail: Failure) -> bool:
        """Whether no branch of the search can answer the diverging exchange as the broker
        did: an OffsetCommit of a consumer-protocol member M at member epoch ``e`` >= 0 that
        the broker accepted (some partition answered NONE by the coordinator) although M's
        epoch cannot be ``e`` when it arrives, in any order the intervals allow.

        Why that is decided by the trace alone (Kafka's rules, and the reference's):

        - A commit passes the coordinator's check only if M is a member at epoch ``e``
          (ConsumerGroup.validateOffsetCommit: getOrMaybeCreateMember, UNKNOWN_MEMBER_ID;
          validateMemberEpoch, STALE_MEMBER_EPOCH; OffsetMetadataManager.validateOffsetCommit
          answers every partition with the error; an unknown group GROUP_ID_NOT_FOUND). The
          group has no classic membership exchange, so M is no classic member and no
          generation offset applies.
        - M's epoch changes only by M's own ConsumerGroupHeartbeat (GroupMetadataManager
          consumerGroupHeartbeat: maybeReconcile writes M's ConsumerGroupCurrentMemberAssignment
          record, the static leave its epoch -2), and M leaves the group by its leave, its
          session or rebalance timeout, or a static replacement (removeMember): never does
          another request, timer or regex resolution give M an epoch. A failover reloads the
          epoch last written; none is tried here (the trace has no coordinator error).
        - Every branch that reaches the commit answered each of M's heartbeats it handled as
          the broker did (the member epoch is compared): after heartbeat h, M's epoch is h's
          recorded one (when h is answered NONE, not a coordinator error, and not a
          divergence taken as the broker's answer, whose state stays the reference's).
        - The heartbeats of M on the commit's connection sent before it are handled before
          it (Kafka reads a connection's next request only after answering the last); L, the
          last of them, is. A heartbeat h on another connection can come between L and the
          commit only if it was sent before the commit was answered and answered after L was
          sent (_options offers no request sent after the earliest answer among those left).

        So M's epoch at the commit is absent or the recorded epoch of L or of one such h; if
        none is ``e``, no branch accepts the commit, and searching the others only costs
        (the explored orders of heartbeats and commits around it, 11,601 alternatives
        without an answer on the oracle campaign's consumer-commit-accepts-stale-epoch,
        seed 1008). Any condition not met (a heartbeat without answer or with an error,
        one taken as a divergence, a coordinator error in the trace): False, and the search
        goes on as before."""
        ex = fail.exchange
        e = ex.event
        req = e.request
        if (e.api != "OffsetCommit" or not isinstance(req, m.OffsetCommitRequest)
                or not isinstance(e.response, m.OffsetCommitResponse)
                or req.generation_id < 0 or not req.member_id or self.coordinator_moved):
            return False
        i = self._index.get(id(ex))
        if i is None:
            return False
        known = self._unexplainable.get(i)
        if known is not None and known[0] == len(self.accept):
            return known[1]
        if i in self.accept or not any(p.error is _NONE for p in e.response.partitions):
            decided = False
        else:
            decided = self._epoch_excluded(i, req.member_id, req.generation_id)
        self._unexplainable[i] = (len(self.accept), decided)
        return decided

    def _epoch_excluded(self, i: int, member: str, epoch: int) -> bool:
        """Whether member ``member`` cannot be at ``epoch`` when commit ``i`` arrives (see
        :meth:`_commit_unexplainable`)."""
        by_member = self._heartbeats_by_member()
        if by_member is None:
            return False
        commit = self.x[i]
        conn = commit.event.connection
        mine = by_member.get(member, ())
        last: int | None = None
        for j in mine:
            xj = self.x[j]
            if xj.event.connection == conn and xj.sent < commit.sent:
                last = j
        if last is None:
            return False
        since = self.x[last].sent
        for j in mine:
            xj = self.x[j]
            if j != last and (xj.event.connection == conn or xj.sent > commit.received
                              or xj.received < since):
                continue  # handled before L, or after the commit, in every order
            resp = xj.event.response
            if (not isinstance(resp, ConsumerGroupHeartbeatResponse) or resp.error is not _NONE
                    or self.coordinator_error[j] or j in self.accept):
                return False  # M's epoch after it is not its recorded one
            if resp.member_epoch == epoch:
                return False
        return True

    def _unblocks_membership_change(self, i: int, fail: Failure) -> bool:
        """Whether handling exchange ``i`` earlier can let a request behind it on its
        connection, one that may change the group's members, generation or rebalance state,
        be handled before the diverging request: a leader's SyncGroup moved ahead lets its
        member's next JoinGroup start a rebalance before the other members' SyncGroups
        (recorded against Kafka 4.1.2 with `conformance --jitter-ms 80`)."""
        conn = self.x[i].event.connection
        quiet = _NO_EFFECT | _NO_MEMBERSHIP_EFFECT
        for j in range(i + 1, len(self.x)):
            e = self.x[j]
            if e.sent >= fail.exchange.received:
                return False
            if e.event.connection == conn and e.event.api not in quiet:
                return True
        return False

    def _widens_window(self, i: int, fail: Failure) -> bool:
        """Whether handling exchange ``i`` first can make a request a candidate that was not
        one: ``_options`` offers only requests sent before the earliest answer among the
        candidates, so once ``i`` (answered early) is handled, a request sent after ``i``'s
        answer but before the diverging request's may be handled ahead of the diverging one.
        Moving ``i`` then changes more than its own answer, and is not pruned when such a
        request may change the group and the broker's answer (a membership error) needs
        such a change. Seen on Kafka 4.1.2 (the wire fuzzer): a leader's
        SyncGroup, a DescribeGroups answered while its assignment was being written, and a
        LeaveGroup that started a rebalance before that write completed; only handling the
        DescribeGroups first lets the LeaveGroup precede the SyncGroup."""
        quiet = _NO_EFFECT | _NO_MEMBERSHIP_EFFECT
        answered = self.x[i].received
        for j in range(i + 1, len(self.x)):
            e = self.x[j]
            if e.sent >= fail.exchange.received:
                return False
            if e.sent > answered and e.event.api not in quiet:
                return True
        return False

    def _merged(self, found: list[Found]) -> list[Found]:
        """The divergences in the order found, each followed by those found at the same
        exchange while resynchronising after it."""
        out: list[Found] = []
        for x in found:
            out.append(x)
            out += [Found(f, allowed, False, 0, after, by)
                    for (_, _), (f, allowed, after, by) in self.secondary.items()
                    if by == x.failure.exchange.seq]
        return out[: max(self.cfg.max_divergences, len(found))]

    def _fingerprint(self, b: _Branch) -> bytes:
        """What decides the rest of a branch's replay: the coordinator's state and clock, the
        requests left, parked and unchecked, and the replay's own bookkeeping, with the
        order requests were handled in forgotten (two orders of independent requests that
        lead to the same state lead to the same outcome)."""
        c = b.coord
        data = (
            # (not b.remaining: it is every exchange not in b.processed, in send order, as
            # each step moves one from the one to the other)
            c.state, c._last_now_ms, c._next_offsets_check_ms,
            tuple(sorted(b.parked)), tuple(sorted(b.unchecked)), tuple(sorted(b.processed)), b.clock,
            tuple(sorted(b.introduced)), tuple(sorted(b.last_normal.items())), b.last_failover,
            b.failovers, tuple(sorted((k, v or "") for k, v in b.leaders.items())),
            tuple(sorted(b.leader_open)), tuple(sorted(b.gen_delta.items())), b.open_divergence,
            tuple(sorted(b.late_armed.items())), tuple(sorted(b.reload_armed.items())), b.reload_slack,
            self.fallback,
        )
        return hashlib.blake2b(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).digest()

    def _allowed(self, f: Failure) -> tuple[str, ...]:
        if f.rule.name == "AnsweredWhenDue":
            return (f.allowed,)  # the same answer, but by a time: that is what differs
        return tuple(sorted({summary(a) for a in self.answers.get(f.exchange.seq, ())}))

    def _result(self, delay: int, found: list[Found], explored: int, failovers: int,
                truncated: bool) -> ReplayResult:
        if not found:
            return ReplayResult(True, delay, explored=explored, failovers=failovers,
                                offsets_check_ms=self.offsets_check_ms)
        first = found[0]
        return ReplayResult(False, delay, first.failure, first.allowed, explored, first.bound_hit,
                            failovers, tuple(found), truncated, self.offsets_check_ms)

    def _horizon(self, b: _Branch, f: Failure) -> float:
        start = f.exchange.sent
        # a member id the failing request names was handed out by an earlier response:
        # choices since then (a failover before it, say) may explain the divergence
        # (only in traces where the coordinator moved: there, what a member did before a
        # failover may be lost with it; elsewhere widening the horizon would only make the
        # search explode)
        member = getattr(f.exchange.event.request, "member_id", "")
        if member and self.coordinator_moved:
            start = min(start, self._handed_out(b, {member}))
        if (isinstance(f.exchange.event.request, ConsumerGroupHeartbeatRequest)
                and f.rule.name == "ConsumerReconciliation"):
            # an assignment is the target some earlier heartbeat computed: the order of two
            # heartbeats that changed the group long before (nearly at once, their answers
            # alike) shows only now. Choices back to the heartbeat that last bumped the group
            # epoch before the one now answered may explain it (recorded against Kafka 4.1.2 by
            # the wire fuzzer: two subscription changes 0.1 ms apart, seen 900 ms later)
            seen = 0
            for i in reversed(b.processed):
                if isinstance(self.x[i].event.request, ConsumerGroupHeartbeatRequest):
                    start = min(start, self.x[i].sent)
                    seen += 1
                    if seen >= _RECONCILIATION_LOOKBACK:
                        break
        unknown = self._unknown_to_broker(f.exchange)
        if unknown and any(type(self.x[i].event.request) is m.DeleteGroupsRequest for i in b.processed):
            # the broker no longer knows a member the request names: a DeleteGroups handled
            # after the member's id was handed out (a pending member's, say) may have taken
            # it with the group; choices back to that answer may explain it (recorded
            # against Kafka 4.1.2 by the wire fuzzer: a DeleteGroups answered 6 ms after a
            # MEMBER_ID_REQUIRED sent later than it)
            start = min(start, self._handed_out(b, unknown))
        if isinstance(f.exchange.event.request, m.DescribeGroupsRequest):
            # a DescribeGroups shows the group's state, which may have differed since the last
            # answer that showed it (a JoinGroup completing a join phase): choices since then
            # (a zero-delay join timer fired before or after a LeaveGroup, say) may explain it
            # (recorded against Kafka 4.1.2 by the wire fuzzer)
            for i in reversed(b.processed):
                resp = self.x[i].event.response
                if isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
                    start = min(start, self.x[i].sent)
                    break
        req = f.exchange.event.request
        if isinstance(req, m.OffsetFetchRequest):
            # an offset is what the last commit of its partition wrote, unless a write the
            # broker ordered after that commit removed it (a DeleteGroups, an OffsetDelete
            # sent just before the commit and answered after it): choices back to that commit
            # may explain it (recorded against Kafka 4.1.2 by the wire fuzzer: a simple
            # commit answered inside a DeleteGroups, and a fetch of all offsets 1.1 s later
            # that the broker answered with none)
            asked = None if req.partitions is None else set(req.partitions)
            for i in reversed(b.processed):
                c = self.x[i].event.response
                if isinstance(c, m.OffsetCommitResponse) and any(
                        p.error is _NONE and (asked is None or (p.topic, p.partition) in asked)
                        for p in c.partitions):
                    committed = self.x[i].sent
                    start = min(start, committed, *(self.x[j].sent for j in b.processed
                                                    if self.x[j].received >= committed))
                    break
        for i in b.parked:
            start = min(start, self.x[i].sent)
        for i in b.processed:
            if self.x[i].received >= f.exchange.sent:
                start = min(start, self.x[i].sent)
        return start - self.cfg.slack_ms

    def _handed_out(self, b: _Branch, members: set[str]) -> float:
        """When the request was sent whose JoinGroup answer first handed out one of
        ``members`` among the exchanges ``b`` handled (infinity: none did)."""
        for i in b.processed:
            resp = self.x[i].event.response
            if isinstance(resp, m.JoinGroupResponse) and resp.member_id in members:
                return self.x[i].sent
        return math.inf

    @staticmethod
    def _unknown_to_broker(ex: Exchange) -> set[str]:
        """The member ids ``ex``'s request names that the broker answered UNKNOWN_MEMBER_ID."""
        req, resp = ex.event.request, ex.event.response
        if isinstance(req, m.LeaveGroupRequest) and isinstance(resp, m.LeaveGroupResponse):
            if resp.error is _UNKNOWN_MEMBER_ID:
                return {x.member_id for x in req.members if x.member_id}
            return {x.member_id for x in resp.members if x.error is _UNKNOWN_MEMBER_ID and x.member_id}
        member = getattr(req, "member_id", "")
        if member and isinstance(member, str) and main_error(resp) is _UNKNOWN_MEMBER_ID:
            return {member}
        return set()

    def _set_metadata(self, coord: Coordinator, t: float) -> None:
        """The metadata image of the latest metadata event at or before ``t`` (or the
        first one, before it), given to the reference when it changed."""
        events = self.cfg.metadata
        if not events:
            return
        latest = events[0]
        for ev in events:
            if ev.at_ms > t:
                break
            latest = ev
        image = {x.name: TopicMetadata(x.topic_id, x.name, x.partitions) for x in latest.topics}
        if self._regex and self.cfg.metadata_as_learned:
            # a group subscribing by regex: the broker resolves it against every topic it
            # has, the recorder learns a topic only once a client asks for it (after it was
            # assigned): topics the trace names later are taken to exist already (a
            # divergence that may come from one created later is inconclusive: _unmodelled)
            used = {int(x.topic_id) for x in image.values()}
            for ev in events:
                for x in ev.topics:
                    # (a topic id another event gave another name is not a second topic)
                    if x.name not in image and int(x.topic_id) not in used:
                        image[x.name] = TopicMetadata(x.topic_id, x.name, x.partitions)
                        used.add(int(x.topic_id))
        if image != coord.state.topics:
            coord.set_topics(image.values())

    def _member_id(self, client_id: str, group_instance_id: str | None) -> str:
        chosen = self.slot["next"]
        if chosen:
            return chosen
        self.fallback += 1
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-unrecorded-{self.fallback}"

    # ------------------------------------------------------------------ choice points
    def _rebase(self, checkpoint: _Branch, fallback: int) -> None:
        """Count the current branch's decisions from ``checkpoint`` (its state now)."""
        self._base = _Mark(checkpoint, fallback, None)
        self._since_count = 0

    def _mark(self, b: _Branch) -> _Mark:
        """Remember the branch's state now, a choice point: by the decisions since the
        checkpoint, or by a new checkpoint when there have been many."""
        every = CHECKPOINT_EVERY if self._seen is not None else QUIET_CHECKPOINT_EVERY
        if self._base is None or self._since_count >= every:
            self._rebase(_copy_branch(b), self.fallback)
        assert self._base is not None
        return _Mark(self._base.checkpoint, self._base.fallback, self._base.since)

    def _note(self, d: _Decision) -> None:
        base = self._base
        assert base is not None
        # in place: the base mark itself is never handed out (_mark and the search copy it)
        base.since = (d, base.since)
        self._since_count += 1

    def _restore(self, mark: _Mark) -> _Branch:
        """The branch as it was at ``mark``: the checkpoint copied, the decisions since it
        taken again. The state reached becomes the mark's checkpoint, so the next
        alternative at the same choice point costs one copy."""
        b = _copy_branch(mark.checkpoint)
        self.fallback = mark.fallback
        if mark.since is not None:
            steps: list[_Decision] = []
            link: _Link | None = mark.since
            while link is not None:
                steps.append(link[0])
                link = link[1]
            for d in reversed(steps):
                self._step(b, d)
            mark.checkpoint = _copy_branch(b)
            mark.fallback = self.fallback
            mark.since = None
        self._rebase(mark.checkpoint, mark.fallback)
        return b

    # ------------------------------------------------------------------ one branch
    def _drive(self, b: _Branch, stack: list[tuple[int, _Mark, list[_Decision]]],
               first: _Decision | None) -> None:
        while b.remaining:
            if first is not None:
                d, first = first, None
            else:
                sole = self._sole_option(b) if fast_path.ENABLED else None
                options = [sole] if sole is not None else self._options(b)
                d = options[0]
                if len(options) > 1:
                    if self._seen is not None and len(b.processed) <= self._memo_depth:
                        key = self._fingerprint(b)
                        if key in self._seen:
                            raise _Seen()
                        self._seen.add(key)
                    # the choice takes effect when its first request is handled (not at the
                    # clock before it): the horizon compares with that time
                    at = max(b.clock, self._sent_ms[options[0].index])
                    stack.append((at, self._mark(b), options[1:]))
                # the first option is taken: quiet when no timer is due by its time plus
                # the slack (a sole option's condition; _options notes it for its first)
                self._quiet_step = sole is not None or self._options_quiet
            self._current = d
            try:
                self._step(b, d)
            finally:
                self._quiet_step = False
            self._note(d)
            self._resyncing = None
        self._current = None
        self._settle_at_end(b)

    def _settle_at_end(self, b: _Branch) -> None:
        """The end of a branch: every parked request the broker answered must be answered
        in time."""
        for i in sorted(b.parked, key=lambda i: self.x[i].received):
            if i in b.parked:
                self._settle(b, i)

    def _drive_first_options(self, b: _Branch) -> None:
        """``_drive`` from the start when every step takes its first option and nothing is
        kept to come back to (an optimistic replay)."""
        while b.remaining:
            d, self._quiet_step = self._first_option(b)
            self._current = d
            try:
                self._step(b, d)
            finally:
                self._quiet_step = False
            self._resyncing = None
        self._current = None
        self._settle_at_end(b)

    def _first_option(self, b: _Branch) -> tuple[_Decision, bool]:
        """The first decision ``_options`` would offer (or ``_sole_option``, the same), and
        whether its step is quiet (no timer near), found without listing the others: the
        next request in send order, handled the first of its ways (``_hows``), its regex
        resolution complete when one is under way."""
        i = b.remaining[0]
        if self._answered[i]:
            # (an answered request that is not a coordinator error: its first way is
            # handling it, after a failover too, where "loading" comes second)
            d = self._handles[i]
            if d is None:
                d = self._decision(i, "handle", False)
        else:
            d = self._decision(i, self._hows(b, i)[0], False)
        state = b.coord.state
        if state.regex_tasks:
            d = dataclasses.replace(d, regex="complete")
        # (_options' "near": a timer due by the time the broker read the request at the
        # latest. A sole option is one only when none is)
        near = bool(state.consumer_groups) or \
            fast_path.earliest_deadline(state) <= self._read_by(i, max(b.clock, self._sent_ms[i]))
        return d, not near

    def _sole_option(self, b: _Branch) -> _Decision | None:
        """The one decision ``_options`` would offer, when the next request is a Heartbeat
        or OffsetCommit that nothing else may precede (no request on another connection
        overlaps it, no timer is near, no failover or regex resolution to place): handle it, normally.
        None when that is not sure: then ``_options`` decides. Equivalence:
        tests/test_fast_path.py and tests/test_injected_verdicts.py."""
        rem = b.remaining
        i = rem[0]
        ex = self.x[i]
        e = ex.event
        if e.api != "Heartbeat" and e.api != "OffsetCommit":
            return None
        if len(rem) > 1 and not self.x[rem[1]].sent > ex.received:
            # requests sent before this one's answer: a candidate too (_options) unless on
            # this connection, where the broker reads them only after answering this one
            conn = e.connection
            min_received = ex.received
            x = self.x
            for j in rem[1:]:
                xj = x[j]
                if xj.sent > min_received:
                    break
                if xj.event.connection != conn:
                    return None  # another request is a candidate too
                if xj.received < min_received:
                    min_received = xj.received
        if e.response is None or self.coordinator_error[i]:
            return None  # "lost", "failover" and "noise" (_hows)
        if b.failovers and self._may_be_loading(b, e):
            return None  # the "loading" alternative (_hows)
        state = b.coord.state
        if state.consumer_groups or state.regex_tasks:
            return None
        t = max(b.clock, self._sent_ms[i])
        if fast_path.earliest_deadline(state) <= self._read_by(i, t):
            return None  # a timer to fire before or after it (_options)
        if b.reload_armed and self._reload_shift(b, t) is not None:
            return None  # a session the reload set may have run out by now (_options)
        return self._decision(i, "handle", False)

    def _read_by(self, i: int, t: int) -> int:
        """The latest time the broker may have read request ``i``, handled at ``t``: the
        slack after it or, when the response came later, the response's arrival (a loaded
        broker reads late). Not for a JoinGroup or SyncGroup answered NONE, whose answer
        may have waited for others (a late answer says nothing of when it was read; an
        error one may too, but the alternatives it gets are few), nor a request without a
        response (replayed or taken as lost)."""
        until = t + self.cfg.slack_ms
        ex = self.x[i]
        resp = ex.event.response
        if resp is None or (ex.event.api in _MAY_PARK and main_error(resp) is _NONE):
            return until
        return max(until, _floor(ex.received))

    def _decision(self, i: int, how: str, moved: bool) -> _Decision:
        """``_Decision(i, "normal", how, moved)``, made once per replay."""
        if how == "handle":
            handles = self._moved_handles if moved else self._handles
            h = handles[i]
            if h is None:
                h = handles[i] = _plain_decision(i, how, moved)
            return h
        key = (i, how, moved)
        d = self._decisions.get(key)
        if d is None:
            d = self._decisions[key] = _plain_decision(i, how, moved)
        return d

    def _fast_step(self, b: _Branch, d: _Decision) -> bool:
        """Take step ``d`` at once when it handles a Heartbeat or OffsetCommit that a Stable
        or PreparingRebalance group answers as the broker did: ``_step`` and ``_absorb``
        would do no more than handle it (no timer due, no parked request to settle, no clock
        problem) and find the answer equal. Their effects on the branch and the replayer are then made directly (the
        coordinator's through coordinator/classic/fast_path.py) and True is returned;
        otherwise nothing is changed and False is returned (the slow path takes the step).
        Equivalence: tests/test_fast_path.py and tests/test_injected_verdicts.py."""
        i = d.index
        ex = self.x[i]
        e = ex.event
        if e.api != "Heartbeat" and e.api != "OffsetCommit":
            return False
        if d.timers != "normal" or d.how != "handle" or d.regex:
            return False
        actual = e.response
        if actual is None or i in self.accept:
            return False
        coord = b.coord
        state = coord.state
        if state.consumer_groups or state.regex_tasks or b.gen_delta.get(e.group_id, 0):
            return False
        t = max(b.clock, self._sent_ms[i])
        if t > ex.received or t < coord._last_now_ms or coord._next_offsets_check_ms <= t:
            return False
        # requests parked (JoinGroups while the group prepares a rebalance) that the broker
        # answered by now are settled first, on the slow path; the others stay parked, as
        # handling a heartbeat or commit answers none of them
        if b.parked and any(self._overdue(self.x[j], t) or self._read_after(self.x[j], ex)
                            for j in b.parked):
            return False
        # (a sole option, or _options' first, was taken with no timer due by t + slack:
        # none is due by t)
        if not (self._quiet_step and self.cfg.slack_ms >= 0) and \
                fast_path.earliest_deadline(state) <= t:
            return False  # a timer fires first
        # (fast_path.plan's output without its records: take makes their changes)
        decided = fast_path.decide(state, coord.config, e.request, t)
        if decided is None:
            return False
        resp = decided[2]
        if not _same_answer(resp, actual) and compare(e.api_version, resp, actual) is not None:
            return False  # a divergence: the slow path records it
        # what _step, _advance and _absorb do here
        b.remaining.remove(i)
        b.processed.append(i)
        coord._last_now_ms = t
        fast_path.take(state, e.request, decided, t)
        if e.api == "OffsetCommit":
            views = b.read_views.get(e.group_id) if self._describes else None
            if views is not None:
                self._committed(views, t, t + self.cfg.slack_ms)  # the commit's offsets are written
        b.clock = t
        b.last_normal[e.connection] = t
        for gid, grp in state.groups.items():
            b.leaders[gid] = grp.leader_id
        self.answers.setdefault(ex.seq, []).append(resp)
        if b.reload_armed:
            self._settle_reload(b)  # as _step does after a slow step
        return True

    def _options(self, b: _Branch) -> list[_Decision]:
        cands: list[int] = []
        seen_conn: set[str] = set()
        min_received = math.inf
        x = self.x
        max_reorder = self.cfg.max_reorder
        for i in b.remaining:
            e = x[i]
            if e.sent > min_received:
                break
            conn = e.event.connection
            if conn not in seen_conn:
                cands.append(i)
                if len(cands) > max_reorder:
                    break
                seen_conn.add(conn)
            if e.received < min_received:
                min_received = e.received
        out: list[_Decision] = []
        answered = self._answered
        handles, moved_handles = self._handles, self._moved_handles
        for k, i in enumerate(cands):
            # (only SyncGroups commute: _commute is False for any other request)
            if (k and isinstance(self.x[i].event.request, m.SyncGroupRequest)
                    and any(self._commute(b, j, i) for j in cands[:k])):
                # partial-order reduction: i commutes with a request sent before it, so
                # handling i first reaches the same state and answers as the send order;
                # commuting requests are only tried in send order
                continue
            if answered[i] and not b.failovers:
                # what _hows gives such a request (answered, not a coordinator error, no
                # failover to be loading after): handling it, the one way (the decision
                # made once per replay, as _decision makes it)
                h = moved_handles[i] if k else handles[i]
                out.append(h if h is not None else self._decision(i, "handle", k > 0))
                continue
            for how in self._hows(b, i):
                out.append(self._decision(i, how, i != cands[0]))
        # a failover that a later coordinator error reveals may have happened before this
        # request: try that after the orders above
        # (only for a JoinGroup, the next in send order: what a JoinGroup creates before a
        # failover, a pending id or a parked join, is not persisted and is lost with it; the
        # other requests' effects survive or are re-learned, so trying it there would only
        # widen the search)
        i0 = cands[0]
        if (
            self.x[i0].event.api == "JoinGroup"
            and "handle" in self._hows(b, i0)
            and self._failover_window_open(b, i0)
        ):
            out.append(_Decision(i0, "normal", "failover-first"))
        # timers near the first candidate's time: both sides of the request
        i0 = cands[0]
        t = max(b.clock, self._sent_ms[i0])
        s = self.cfg.slack_ms
        state = b.coord.state
        # the broker read the request at some time before its response arrived: a timer
        # due up to then may have fired first, however long after the send time that is
        until = self._read_by(i0, t)
        near = bool(state.consumer_groups) or fast_path.earliest_deadline(state) <= until
        # (no timer due by the first option's time plus the slack, nor by its response:
        # its step is quiet)
        self._options_quiet = not near
        if near and any(t - s < deadline <= t + s for deadline in deadlines(state)):
            how0 = out[0].how
            out.insert(1, _Decision(i0, "defer", how0))
            out.insert(2, _Decision(i0, "early", how0))
        if near and until > t + s:
            # read later than the slack allows for (a loaded broker): at each deadline up to
            # the response, after the timers due by then (the nearest few; tried last)
            late = sorted({dl for dl in deadlines(state) if t + s < dl <= until})[:LATE_OPTIONS]
            out.extend(_Decision(i0, "late", out[0].how, at=dl) for dl in late)
        if b.late_armed and self._stretchable(b, t):
            # a session deadline due by now, set by a request the broker read late: it
            # may run past this request (tried last)
            out.append(_Decision(i0, "stretch", out[0].how))
        if b.reload_armed and self._reload_shift(b, t) is not None:
            # a session the last failover's reload set runs out by now if the broker loaded
            # the group earlier than the replay did (tried last)
            out.append(_Decision(i0, "reload-earlier", out[0].how))
        tasks = b.coord.state.regex_tasks
        if tasks:
            # the executor's regex resolution ends at a time the wire does not show: before
            # this request (Kafka's usual case: it takes milliseconds), or, when this request
            # comes soon after the heartbeat that scheduled it, after it
            now = [dataclasses.replace(d, regex="complete") for d in out]
            scheduled = min(task.scheduled_ms for task in tasks.values())
            if t <= scheduled + self.cfg.regex_resolution_ms:
                out = now + [dataclasses.replace(d, regex="wait") for d in out]
            else:
                out = now
        return out

    def _commute(self, b: _Branch, i: int, j: int) -> bool:
        """Whether exchanges ``i`` and ``j`` commute: two answered SyncGroups of one group
        from two members, neither the leader nor carrying assignments. Such a SyncGroup
        parks, is answered from the stored assignment, or is refused (another generation, a
        rebalance in progress, an unknown member) and takes its member off the pending-sync
        set: neither changes what the other is answered, nor any timer but the sync timer,
        which the last of them cancels whichever it is."""
        ei, ej = self.x[i].event, self.x[j].event
        ri, rj = ei.request, ej.request
        if not (isinstance(ri, m.SyncGroupRequest) and isinstance(rj, m.SyncGroupRequest)):
            return False
        if ei.response is None or ej.response is None or ri.assignments or rj.assignments:
            return False
        if ri.group_id != rj.group_id or ri.member_id == rj.member_id:
            return False
        g = b.coord.state.groups.get(ri.group_id)
        return g is not None and not g.is_leader(ri.member_id) and not g.is_leader(rj.member_id)

    def _failover_window_open(self, b: _Branch, i: int) -> bool:
        """Whether a coordinator failover may have happened just before exchange ``i``: a
        later exchange on another connection got a coordinator error, and nothing since
        that connection's last normal exchange (before ``i``) explains it. The failover then
        lies anywhere between that exchange and the error (GroupMetadataManager onUnloaded
        is not visible on the wire), not necessarily at the error."""
        if not self._coordinator_errors:
            return False
        t = max(b.clock, self._sent_ms[i])
        conn = self.x[i].event.connection
        remaining = set(b.remaining)
        for j in self._coordinator_errors:
            if j == i or j not in remaining:
                continue
            ej = self.x[j].event
            if ej.connection == conn:
                continue
            since = b.last_normal.get(ej.connection, -1)
            if since < t <= self.x[j].received and b.last_failover < since:
                return True
        return False

    def _hows(self, b: _Branch, i: int) -> list[str]:
        e = self.x[i].event
        if e.response is None:
            if self.cfg.reliable_connections and self._open_until[i] is not None:
                # the client sent on the connection after it: TCP delivered it to the broker
                return ["handle"]
            return ["handle", "lost"]
        if self.coordinator_error[i]:
            moved = b.last_normal.get(e.connection, -1) > b.last_failover
            hows = ["failover", "noise", "handle"] if moved else ["noise", "failover", "handle"]
            if b.clock < self._sent_ms[i]:
                # the failover the error reveals may have happened any time since the last
                # request handled, not only when this one was sent: a reloaded group's
                # session timers run from the load (GroupMetadataManager.onLoaded), so a
                # member that died before the failover expires that much sooner. Tried last
                hows.append("failover-early")
            return hows
        if self._may_be_loading(b, e):
            return ["handle", "loading"]
        return ["handle"]

    @staticmethod
    def _may_be_loading(b: _Branch, e: WireExchange) -> bool:
        """Whether ``e`` is a heartbeat answered NONE by a new coordinator that may still
        have been loading the group: GroupCoordinatorService answers a heartbeat then NONE
        without touching the group (heartbeat, the COORDINATOR_LOAD_IN_PROGRESS branch);
        anything handled since the failover shows that the load has finished."""
        return (
            b.failovers > 0
            and isinstance(e.response, m.HeartbeatResponse)
            and e.response.error is _NONE
            and all(t <= b.last_failover for t in b.last_normal.values())
        )

    def _step(self, b: _Branch, d: _Decision) -> None:
        i = d.index
        read_late = _floor(self.x[i].received) - self._sent_ms[i] > self.cfg.slack_ms
        if d.how != "handle" or not (read_late or b.late_armed):
            if not (fast_path.ENABLED and self._fast_step(b, d)):
                self._slow_step(b, d)
            if b.reload_armed:
                self._settle_reload(b)
            return
        # a request handled: when it was answered more than the slack after it was sent and
        # set its member's session deadline, the broker may have set that deadline as much
        # later (noted); otherwise any earlier note for the member is void
        e = self.x[i].event
        key = _member_key(e)
        before = _session_deadline(b.coord.state, *key)
        t = self._handled_at(b, d)
        if not (fast_path.ENABLED and self._fast_step(b, d)):
            self._slow_step(b, d)
        after = _session_deadline(b.coord.state, *key)
        # (a request left parked was read when it came, as far as the replay can tell: its
        # answer waits for others)
        if (read_late and after is not None and after != before and e.response is not None
                and i not in b.parked):
            b.late_armed[key] = (after, after + _floor(self.x[i].received) - t)
        else:
            b.late_armed.pop(key, None)
        if b.reload_armed:
            self._settle_reload(b)

    def _reload_shift(self, b: _Branch, t: int) -> int | None:
        """How much earlier the last failover's reload must have happened for a session it
        set (and nothing has set since) to run out by ``t``: the least such amount within
        :attr:`_Branch.reload_slack`; None when no such session."""
        shifts = [dl - t for dl in b.reload_armed.values() if t < dl <= t + b.reload_slack]
        return min(shifts) if shifts else None

    def _settle_reload(self, b: _Branch) -> None:
        """After a step: a member whose reload-set session deadline something else changed
        (its own request, a completed join, its expiry) is no longer the reload's; the
        reload cannot have happened so early that this deadline had passed by then (it was
        running, or it ran out now), which bounds how much earlier it may still be."""
        state = b.coord.state
        for key, dl in list(b.reload_armed.items()):
            if _session_deadline(state, *key) != dl:
                del b.reload_armed[key]
                b.reload_slack = min(b.reload_slack, max(0, dl - b.clock - 1))
        if b.reload_slack <= 0:
            b.reload_armed.clear()
            b.reload_slack = 0

    def _stretchable(self, b: _Branch, t: int) -> list[tuple[tuple[str, str], int]]:
        """The session deadlines of :attr:`_Branch.late_armed` that would expire by ``t``
        and that the broker may have set late enough to run past it: each with the latest
        it may be."""
        state = b.coord.state
        return [(key, latest) for key, (deadline, latest) in b.late_armed.items()
                if b.clock < deadline <= t < latest and _session_deadline(state, *key) == deadline]

    def _handled_at(self, b: _Branch, d: _Decision) -> int:
        """The time step ``d`` handles its request at: the send time (or the replay's clock,
        if later), up to the slack later when "early", at ``d.at`` when "late"."""
        t = max(b.clock, self._sent_ms[d.index])
        if d.timers == "early":
            return max(t, min(t + self.cfg.slack_ms, _floor(self.x[d.index].received)))
        if d.timers == "late":
            return max(t, d.at)
        return t

    def _slow_step(self, b: _Branch, d: _Decision) -> None:
        ex = self.x[d.index]
        e = ex.event
        s = self.cfg.slack_ms
        t = self._handled_at(b, d)
        if d.timers == "stretch":
            # the request that set these deadlines was read late: the broker's run past this
            # request (a later one may find them run out, or stretch them again, up to the
            # latest they may be)
            for key, latest in self._stretchable(b, t):
                _set_session_deadline(b.coord.state, *key, t + 1)
                b.late_armed[key] = (t + 1, latest)
        if d.timers == "reload-earlier":
            # the last failover's reload happened this much earlier: every session it set
            # and nothing has set since runs out that much sooner, the nearest by now
            shift = self._reload_shift(b, t)
            if shift is not None:
                for key, dl in b.reload_armed.items():
                    _set_session_deadline(b.coord.state, *key, dl - shift)
                    b.reload_armed[key] = dl - shift
                b.reload_slack -= shift
        if t > ex.received:
            if d.index in self.accept:
                # resynchronising past it: the request is taken as never handled
                b.remaining.remove(d.index)
                b.processed.append(d.index)
                return
            raise _Fail(Failure(-1, ex, "", "", rule_for(e.api, None),
                                "no order of the requests fits the recorded time intervals"))
        # requests the broker answered before now must have been answered by the reference;
        # an earlier request on this connection was answered before this one was read (the
        # broker reads a connection's next request only after answering the last), so its
        # timers get no slack past this request's send time
        for i in sorted(b.parked, key=lambda i: self.x[i].received):
            if i not in b.parked:
                continue
            xi = self.x[i]
            if self._overdue(xi, t):
                self._settle(b, i)
            elif self._read_after(xi, ex):
                self._settle(b, i, cap=t)
        if d.how == "failover-early":
            # at the replay's clock, before the timers that fall due up to this request
            self._failover(b, b.clock)
        upto = t - s if d.timers == "defer" else t
        # a timer due at the clock itself (armed with no delay by the request just handled,
        # e.g. group.initial.rebalance.delay.ms 0) fires before this one unless deferred:
        # Kafka runs it as its own event, before or after the next request
        if upto > b.clock or (upto == b.clock and any(dl <= upto for dl in deadlines(b.coord.state))):
            self._absorb(b, self._advance(b, upto, ex), upto, by=upto)
            b.clock = upto
        if d.regex == "complete" and b.coord.state.regex_tasks:
            # the pending regex resolution ends now, against the topics known now
            at = max(b.clock, upto)
            self._set_metadata(b.coord, at)
            self._absorb(b, b.coord.complete_regex_resolutions(at), at)
            b.clock = at
        b.remaining.remove(d.index)
        b.processed.append(d.index)
        if d.how == "lost":
            return
        if d.how in ("failover", "noise", "loading", "failover-early"):
            if d.how == "failover":
                self._failover(b, t)
            return
        if d.how == "failover-first":
            self._failover(b, t)
        req = e.request
        if isinstance(req, m.DescribeGroupsRequest):
            # the answer depends on the version (GroupMetadataManager.describeGroups); traces
            # written before the request carried it have it in the exchange
            v = min(e.api_version, m.DESCRIBE_GROUPS_MAX_VERSION)
            if req.version != v:
                req = dataclasses.replace(req, version=v)
        if (isinstance(req, m.OffsetDeleteRequest) and isinstance(e.response, m.OffsetDeleteResponse)
                and e.response.error is _NONE):
            # partitions the broker's API layer answered itself (an unknown topic or
            # partition, an unauthorised topic: KafkaApis.handleOffsetDeleteRequest) never
            # reached the coordinator
            kept = api_layer_partitions(e.response)
            if kept:
                req = dataclasses.replace(req, partitions=tuple(tp for tp in req.partitions if tp not in kept))
        if isinstance(req, m.TxnOffsetCommitRequest) and isinstance(e.response, m.TxnOffsetCommitResponse):
            # the same for TxnOffsetCommit (KafkaApis.handleTxnOffsetCommitRequest)
            kept = api_layer_partitions(e.response)
            if kept:
                req = dataclasses.replace(req, partitions=tuple(
                    p for p in req.partitions if (p.topic, p.partition) not in kept))
        if isinstance(req, m.OffsetCommitRequest) and isinstance(e.response, m.OffsetCommitResponse):
            # the same for OffsetCommit (KafkaApis.handleOffsetCommitRequest: a topic its
            # metadata cache does not have, a partition it has no leader for, an unauthorised
            # topic); when none is left, the coordinator is not asked at all, so nothing of
            # the group is checked (recorded against Kafka 4.1.2 by the wire fuzzer)
            kept = api_layer_partitions(e.response)
            if kept:
                req = dataclasses.replace(req, partitions=tuple(
                    p for p in req.partitions if (p.topic, p.partition) not in kept))
        if b.gen_delta:
            delta = b.gen_delta.get(e.group_id, 0)
            if delta and isinstance(req, (m.SyncGroupRequest, m.HeartbeatRequest, m.OffsetCommitRequest,
                                          m.TxnOffsetCommitRequest)) \
                    and req.generation_id >= 0:
                req = dataclasses.replace(req, generation_id=req.generation_id - delta)
        rid = d.index
        resp = e.response
        self.slot["next"] = None
        if (
            isinstance(req, m.JoinGroupRequest)
            and req.member_id == m.UNKNOWN_MEMBER_ID
            and isinstance(resp, m.JoinGroupResponse)
            and resp.member_id
        ):
            if d.index not in self.accept:
                self._check_fresh(b, ex, req, resp)
                self.slot["next"] = resp.member_id
            elif not self._in_use(b, req, resp):
                self.slot["next"] = resp.member_id
        if (
            isinstance(req, ConsumerGroupHeartbeatRequest)
            and req.member_id == ""
            and isinstance(resp, ConsumerGroupHeartbeatResponse)
            and resp.member_id
        ):
            # v0: the broker names the member (as JoinGroup's MEMBER_ID_REQUIRED does)
            self.slot["next"] = resp.member_id
        if isinstance(req, ConsumerGroupHeartbeatRequest):
            self._set_metadata(b.coord, t)
        if resp is None:
            b.unchecked.add(rid)
        b.parked[rid] = None
        # what the broker's API layer answers itself, or changes, before the coordinator
        # (coordinator/kafka_apis.py: the rules decided on the wire version)
        early = kafka_apis.answer_before_coordinator(e.api_version, req)
        if isinstance(req, m.OffsetCommitRequest) and not req.partitions:
            early = m.OffsetCommitResponse(partitions=())
        elif isinstance(req, m.TxnOffsetCommitRequest):
            if not req.partitions:
                early = m.TxnOffsetCommitResponse(partitions=())
            elif isinstance(resp, m.TxnOffsetCommitResponse) and transaction_refused(resp):
                # the transaction's verification refused it before the group coordinator
                # (compare.TRANSACTION_ERROR_CODES): the broker's answer is taken, and the
                # group is not asked
                early = resp
        try:
            out = Output([(rid, early)]) if early is not None else \
                b.coord.handle(rid, kafka_apis.as_coordinator_sees(req), t)
        except _UNPROCESSABLE as err:
            if d.index in self.accept:
                # resynchronising past it: the request is taken as never handled
                b.parked.pop(rid, None)
                return
            raise self._unprocessable(b, ex, f"process this request: {err}") from None
        finally:
            self.slot["next"] = None
        if isinstance(resp, (m.DescribeGroupsResponse, ConsumerGroupDescribeResponse)):
            self._allow_uncommitted_groups(b, rid, out, resp)
        elif type(req) is m.ListGroupsRequest:
            self._listing_of_group(b, rid, out, e)
        b.clock = t
        b.last_normal[e.connection] = t
        if isinstance(resp, m.JoinGroupResponse) and resp.member_id:
            b.introduced.add(resp.member_id)
        if isinstance(req, ConsumerGroupHeartbeatRequest) and req.member_epoch == 0:
            # a consumer-protocol member is introduced by its joining heartbeat (v1: with
            # the id it generated; v0: with the one the broker answers)
            joined = req.member_id or (resp.member_id if isinstance(resp, ConsumerGroupHeartbeatResponse)
                                       else None)
            if joined:
                b.introduced.add(joined)
        self._absorb(b, out, t, by=ex.received, trigger=d.index)

    def _note_views(self, b: _Branch, out: Output, at: int, answered: float | None) -> None:
        """Keep ``b.read_views`` for the groups ``out`` (made at ``at``; ``answered``: when
        the request that made it was answered, None for timers) changed. Kafka's reads
        (DescribeGroups, ConsumerGroupDescribe, ListGroups) look the group up in the shard's
        groups map at its last committed write (GroupCoordinatorService.describeGroups and
        listGroups schedule read operations, which CoordinatorRuntime runs at the last
        committed offset). A write is committed some time after it is made (the append's
        linger, group.coordinator.append.linger.ms, then the log's commit), and answers may
        go out before that (a new group's first JoinGroup answer,
        GroupMetadataManager.classicGroupJoin appending the group's first record). A group
        created by an operation that writes no record enters the map a read sees only once a
        later write on the same __consumer_offsets partition has committed, which may be
        another group's, which a group's replay does not see: until its first written
        record has committed, a read may find the group unknown. A classic group found there
        is its ClassicGroup object, whose state and members are plain fields: a read sees
        them as they are now, and a group the map no longer holds (deleted) as it was, for
        the slack after the write that removed it. A consumer group's state is versioned
        with the map (timeline objects), it writes a record for every change, and its
        heartbeat is answered once the write has committed (CoordinatorRuntime completes a
        write's response on commit): a read may see it as before a write until that answer,
        and no longer."""
        state = b.coord.state
        changed: dict[str, tuple[bool, bool]] = {}  # group -> (described differently, written)
        for rec in out.records:
            kind = type(rec)
            if kind in _TIMERS_ONLY:
                continue
            gid = rec.group_id
            was = changed.get(gid, (False, False))
            changed[gid] = (was[0] or kind not in _UNDESCRIBED,
                            was[1] or rec.persisted or kind is GroupLoaded)
        for gid, (differs, wrote) in changed.items():
            views = b.read_views.get(gid)
            until = (answered if answered is not None and gid in state.consumer_groups
                     else at + self.cfg.slack_ms)
            if not differs:
                if views is not None:
                    self._committed(views, at, until)
                continue
            view: _View = (describe_consumer_group(Txn(state, b.coord.config, at), gid)
                           if gid in state.consumer_groups else described_group(state.groups.get(gid), gid, 0))
            if views is None:
                views = b.read_views[gid] = [(None, None)]
            if _classic_in_map(view):
                # a classic group's state and members are plain fields of its ClassicGroup,
                # changed in place: a read that finds the group in the map at the committed
                # offset sees them as they are now (GroupMetadataManager.describeGroups and
                # listGroups read the group's current state), so no earlier state of this
                # object is seen again. Views a write ended (``until`` set) stay: those of a
                # group object the map no longer holds (deleted, or converted to the other
                # protocol) until that write commits
                views[:] = [(v, u) for v, u in views if u is not None or not _classic_in_map(v)]
                if wrote:
                    self._written(views, at, until)
                views.append((view, None))
                continue
            if wrote:
                self._written(views, at, until)
                if views[-1][0] == view:
                    views[-1] = (view, None)
                else:
                    views.append((view, None))
            elif views[-1][0] != view:
                views.append((view, None))
                if len(views) > _MAX_READ_VIEWS:
                    del views[0]

    def _committed(self, views: list[tuple[_View | None, float | None]], at: int, until: float) -> None:
        """A record was written at ``at`` that changes nothing a description shows (an
        offset): the group as it is now, the last of ``views``, is what reads see once the
        write has committed (by ``until``)."""
        if len(views) > 1:
            self._written(views, at, until)
            views[-1] = (views[-1][0], None)

    def _written(self, views: list[tuple[_View | None, float | None]], at: int, until: float) -> None:
        """A record of the group was written at ``at``: what reads could see of it until
        then they see until the write has committed (by ``until``), and no longer."""
        views[:] = [(v, until if u is None else u) for v, u in views if u is None or u >= at]

    def _allow_uncommitted_groups(self, b: _Branch, rid: int, out: Output,
                                  actual: m.DescribeGroupsResponse | ConsumerGroupDescribeResponse) -> None:
        """A group may be described as it was at the shard's last committed write
        (``_note_views``): where the broker's entry for a group differs from the reference's
        and equals the reference's description of one of the states the read may see (those
        since the group's last written record, and those before a write not yet committed
        when the read was sent; unknown before its first), the broker's entry is taken as
        the reference's. Recorded against Kafka 4.1.2 by the wire fuzzer: a group described
        Dead just after a new member's MEMBER_ID_REQUIRED, and just after a JoinGroup v3
        completed the group's first join phase; a consumer group described without the
        member whose joining heartbeat was being written."""
        if not b.read_views:
            return
        req = self.x[rid].event.request
        assert isinstance(req, (m.DescribeGroupsRequest, ConsumerGroupDescribeRequest))
        version = req.version
        sent = self._sent_ms[rid]
        kind = type(actual)
        broker = {g.group_id: g for g in actual.groups}
        for k, (r_id, r) in enumerate(out.responses):
            if r_id != rid or type(r) is not kind:
                continue
            described: list[Any] = list(r.groups)
            for j, d in enumerate(described):
                theirs = broker.get(d.group_id)
                views = b.read_views.get(d.group_id)
                if theirs is None or views is None or len(views) < 2 or _alike(kind, version, d, theirs):
                    continue
                for view, until in views[:-1]:
                    if until is not None and until < sent:
                        continue
                    if view is None:  # the group unknown
                        candidate: Any = (described_group(None, d.group_id, version)
                                          if kind is m.DescribeGroupsResponse else unknown_consumer_group(d.group_id))
                    elif type(view) is not type(d):
                        continue  # the group was of the other protocol then
                    else:
                        candidate = dataclasses.replace(view, error=d.error)
                    if _alike(kind, version, candidate, theirs):
                        described[j] = theirs
                        break
            out.responses[k] = (r_id, dataclasses.replace(r, groups=tuple(described)))  # type: ignore[arg-type]

    def _listing_of_group(self, b: _Branch, rid: int, out: Output, e: WireExchange) -> None:
        """A ListGroups answer is judged for the replayed group alone (grouping.py
        ``list_groups_per_group`` gives each group the broker's entries for it): the
        reference's answer keeps that group's entries. Kafka lists the groups of its map as
        of the shard's last committed write (GroupCoordinatorService.listGroups,
        GroupMetadataManager.listGroups), so, as for a describe (``_note_views``), the
        broker's entry may show any state a read may still see, or none where the group was
        unknown; a v5 answer that leaves the group out is not judged when the trace did not
        record its types filter."""
        gid = e.group_id
        actual = e.response
        req = e.request
        assert isinstance(req, m.ListGroupsRequest)
        version = e.api_version
        for k, (r_id, r) in enumerate(out.responses):
            if r_id != rid or type(r) is not m.ListGroupsResponse:
                continue
            mine = tuple(g for g in r.groups if g.group_id == gid)
            if isinstance(actual, m.ListGroupsResponse) and actual.error is _NONE and r.error is _NONE:
                theirs = actual.groups
                if not theirs and version >= LIST_GROUPS_TYPE_MIN_VERSION and req.types_filter is None:
                    mine = ()  # the types filter was not recorded: a group left out is not judged
                elif not _same_listing(version, mine, theirs):
                    views = b.read_views.get(gid) or []
                    sent = self._sent_ms[rid]
                    for view, until in views[:-1]:
                        if (until is None or until >= sent) and \
                                _same_listing(version, _listed(view, gid, req), theirs):
                            mine = theirs
                            break
            out.responses[k] = (r_id, dataclasses.replace(r, groups=mine))

    def _overdue(self, parked: Exchange, t: int) -> bool:
        """The broker answered ``parked`` (a request the reference keeps parked) more than the
        slack before ``t``: the reference must have answered it before handling anything at
        ``t`` (``_settle``)."""
        return parked.received + self.cfg.slack_ms < t

    @staticmethod
    def _read_after(parked: Exchange, ex: Exchange) -> bool:
        """``ex`` came on ``parked``'s connection after the broker answered ``parked``: the
        broker reads a connection's next request only after answering the last, so the
        reference must have answered ``parked`` before handling ``ex``."""
        return parked.event.connection == ex.event.connection and parked.received <= ex.sent

    def _check_fresh(
        self, b: _Branch, ex: Exchange, req: m.JoinGroupRequest, resp: m.JoinGroupResponse
    ) -> None:
        """The id a broker hands a new member is not one in use (ClassicGroup.java
        generateMemberId: client id or instance id, a dash, a random UUID)."""
        if self._in_use(b, req, resp):
            detail = f"member id {resp.member_id} is already in use"
            users = [self.x[i] for i in b.processed
                     if getattr(self.x[i].event.request, "member_id", None) == resp.member_id]
            other = next((u for u in reversed(users) if u.event.connection != ex.event.connection), None)
            if other is not None:
                # two processes (connections) would act as one member
                who = f" (peer {other.event.peer})" if other.event.peer else ""
                detail += (f" by the process on connection {other.event.connection}{who}, last at seq "
                           f"{other.seq}; this JoinGroup came on connection {ex.event.connection}")
                if req.group_instance_id is not None:
                    detail += (f": Kafka gives a static member ({req.group_instance_id}) that joins "
                               "without its id a fresh one and fences the old process")
            raise _Fail(self._failure(
                b, ex, summary(resp), "a fresh member id", RULES["MemberIdFresh"], detail,
            ))

    @staticmethod
    def _in_use(b: _Branch, req: m.JoinGroupRequest, resp: m.JoinGroupResponse) -> bool:
        """Whether the id the broker handed this JoinGroup (sent with no member id) is one
        in use. No exemption for a static member's own id: Kafka replaces a static member
        that rejoins without its id by a fresh one and fences the old
        (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin), so a broker
        handing the new process the old id lets two processes act as one member."""
        g = b.coord.state.groups.get(req.group_id)
        if g is None or resp.error not in (_MEMBER_ID_REQUIRED, _NONE):
            return False
        return resp.member_id in g.members or resp.member_id in g.pending_members

    def _settle(self, b: _Branch, i: int, cap: int | None = None) -> None:
        """The broker answered parked request ``i`` at its received time: let the reference's
        timers run to then (plus slack, but not past ``cap``) and require the answer."""
        ex = self.x[i]
        upto = _floor(ex.received) + self.cfg.slack_ms
        if cap is not None:
            upto = min(upto, cap)
        if upto > b.clock:
            self._absorb(b, self._advance(b, upto, ex), upto)
            b.clock = upto
        if i not in b.parked:
            return
        if i in b.unchecked:
            return
        resp = ex.event.response
        if coordinator_moving(ex.event.api, resp):
            self._failover(b, max(b.clock, _floor(ex.received)))
            if i not in b.parked:
                return
        self.answers.setdefault(ex.seq, []).append(None)
        if i in self.accept:
            # resynchronising past it: the broker's answer stands. A JoinGroup it answered
            # NONE ended the join phase then: so does the reference (and its answers are
            # compared, adopting the broker's numbering and leader); anything else it still
            # waits for is taken as answered, its own answer (when it comes) not checked
            if isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
                self._force_join(b, ex, b.clock)
            if i in b.parked:
                del b.parked[i]
            return
        raise _Fail(self._failure(
            b, ex, summary(resp), summary(None), rule_for(ex.event.api, None),
            f"the broker answered at {ex.received:.0f} ms; the reference still waits then "
            f"(group {self._state_text(b, ex.event.group_id)})",
        ))

    def _failover(self, b: _Branch, t: int) -> None:
        t = max(t, b.clock)
        # the last request the old coordinator answered was read by then (b.clock may be
        # later: the timers due by this request's time have fired)
        since = max([b.last_failover, *b.last_normal.values()])
        out = b.coord.failover(t)
        b.clock = t
        b.last_failover = t
        b.failovers += 1
        # the broker loaded the groups at some time in (since, t]: the sessions the reload
        # scheduled may run out up to t - since sooner ("reload-earlier")
        armed: dict[tuple[str, str], int] = {}
        if t > since:
            state = b.coord.state
            for gid, g in state.groups.items():
                for mid, mem in g.members.items():
                    if mem.heartbeat_deadline_ms is not None:
                        armed[(gid, mid)] = mem.heartbeat_deadline_ms
            for gid, cg in state.consumer_groups.items():
                for mid, dl in cg.session_deadlines.items():
                    armed[(gid, mid)] = dl
        b.reload_armed = armed
        b.reload_slack = t - since if armed else 0
        self._absorb(b, out, t)

    def _absorb(self, b: _Branch, out: Output, at: int, by: float | None = None,
                trigger: int | None = None) -> None:
        """Compare the reference's answers in ``out`` (produced at ``at``) with the broker's.
        ``by``: the latest time the broker can have produced them: the received time of the
        request ``trigger`` that completed them, or (no trigger) the timers' time."""
        self._adopt_leader(b, out, at)
        if out.records and self._describes:
            self._note_views(b, out, at, by if trigger is not None else None)
        for k, (rid, resp) in enumerate(out.responses):
            if rid not in b.parked:
                continue
            del b.parked[rid]
            if rid in b.unchecked:
                self._check_unanswered(b, rid, resp, at)
                continue
            ex = self.x[rid]
            actual = ex.event.response
            assert actual is not None
            if b.gen_delta:
                resp = self._translate(b, ex.event.group_id, resp)
            self.answers.setdefault(ex.seq, []).append(resp)
            mismatch = compare(ex.event.api_version, resp, actual, coordinator_assignment=(
                type(resp) is m.SyncGroupResponse and ex.event.group_id in b.coord.state.consumer_groups))
            if mismatch is not None and self.cfg.txn_commits and type(actual) is m.OffsetFetchResponse:
                mismatch = compare(ex.event.api_version, resp, actual, self._txn_offsets(ex.received))
            if mismatch is None:
                if (b.open_divergence is not None and isinstance(resp, m.JoinGroupResponse)
                        and resp.error is _NONE and resp.members):
                    # a completed join phase the broker agrees with: the group's state is
                    # determined again (generation, leader, members, protocol)
                    b.open_divergence = None
            elif rid in self.accept or self._forcing:
                # the broker's answer is taken here (or in the join completion that taking
                # it forced): a difference other than the one recorded is recorded too
                fail = self._mismatch(b, ex, resp, actual, mismatch)
                if fail.rule.name != self.accept.get(rid):
                    # the answer the broker gave where the recorded divergence is differs in
                    # another way too: a divergence of its own, at the same exchange
                    origin = self._resyncing
                    after = b.open_divergence if b.open_divergence not in (ex.seq, origin) else None
                    self.secondary.setdefault((ex.seq, fail.rule.name), (fail, self._allowed(fail) if
                                              fail.rule.name == "AnsweredWhenDue" else (summary(resp),),
                                              after, origin))
                self._adopt_answer(b, out, k, resp, actual, at)
                continue
            else:
                raise _Fail(self._mismatch(b, ex, resp, actual, mismatch))
            if (by is not None and rid != trigger and ex.received > by + self.cfg.slack_ms
                    and rid not in self.accept):
                # what completes a parked request answers it at once (completeClassicGroupJoin,
                # setAndPropagateAssignment): an answer far later than that is late
                if trigger is None:
                    why = "a coordinator timer"
                else:
                    tx = self.x[trigger]
                    why = f"the {tx.event.api} at seq {tx.seq}, answered at {tx.received:.0f} ms,"
                raise _Fail(self._failure(
                    b, ex, summary(actual), f"{summary(resp)} by {by:.0f} ms", RULES["AnsweredWhenDue"],
                    f"the broker answered at {ex.received:.0f} ms; Kafka answers when {why} "
                    f"completes the request, {ex.received - by:.0f} ms earlier",
                ))
            if at > ex.received + self.cfg.slack_ms and rid not in self.accept:
                raise _Fail(self._failure(
                    b, ex, summary(actual), f"{summary(resp)} but only at {at} ms",
                    rule_for(ex.event.api, None),
                    f"the broker answered at {ex.received:.0f} ms, before the reference would",
                ))

    def _check_unanswered(self, b: _Branch, rid: int, resp: m.Response, at: int) -> None:
        """The reference answers ``rid``, which the trace shows unanswered, at ``at``: with
        reliable connections that is a divergence when the client went on sending on the
        same connection well after ``at`` (the answer would have reached it first)."""
        if not self.cfg.reliable_connections or rid in self.accept:
            return
        ex = self.x[rid]
        later = self._answered_later[rid]
        if later is not None:
            # the broker answered a request sent after it on the same connection: it reads
            # a connection's next request only once it has answered the one before
            # (SocketServer mutes a channel while its request is in flight), so this one was
            # answered first, and a recording would show it
            lx = self.x[later]
            raise _Fail(self._failure(
                b, ex, "no answer", f"{summary(resp)} before seq {lx.seq}'s answer", RULES["AnsweredBeforeLaterRequests"],
                f"the broker answered {lx.event.api} seq {lx.seq}, sent after this {ex.event.api} on connection "
                f"{ex.event.connection}, at {lx.received:.0f} ms, but never this one: Kafka answers a "
                "connection's requests one at a time, in order",
            ))
        open_until = self._open_until[rid]
        if open_until is None or open_until <= at + self.cfg.slack_ms:
            return
        raise _Fail(self._failure(
            b, ex, "no answer", f"{summary(resp)} by {at} ms", RULES["AnsweredBeforeLaterRequests"],
            f"Kafka answers this {ex.event.api} by {at} ms; the client was still sending on "
            f"connection {ex.event.connection} at {open_until:.0f} ms and the broker never answered it",
        ))

    def _mismatch(self, b: _Branch, ex: Exchange, resp: m.Response, actual: m.Response,
                  mismatch: Mismatch) -> Failure:
        """The divergence of the broker's answer ``actual`` from the reference's ``resp``,
        named after its first cause."""
        api = ex.event.api
        detail = f"{mismatch.what} differs" + (f": {mismatch.how}" if mismatch.how else "")
        fixed = broker_rule(api, main_error(actual))
        if fixed is not None:
            # wrong in every state: no history before the trace explains it
            return Failure(len(b.processed), ex, summary(actual), summary(resp), fixed, detail)
        rule = rule_for(api, main_error(resp))
        if (isinstance(resp, m.OffsetDeleteResponse) and isinstance(actual, m.OffsetDeleteResponse)
                and resp.error is _NONE and actual.error is _NONE):
            # named after what Kafka answers the first partition that differs
            got = {(p.topic, p.partition): p.error for p in actual.partitions}
            first = next((p for p in resp.partitions if got.get((p.topic, p.partition)) is not p.error), None)
            if first is not None:
                rule = rule_for(api, first.error)
        mid = getattr(ex.event.request, "member_id", "")
        if (main_error(resp) is _UNKNOWN_MEMBER_ID and main_error(actual) is not _UNKNOWN_MEMBER_ID
                and isinstance(mid, str) and mid in b.expired):
            # the member is unknown because its session expired: name the expiry
            at, session = b.expired[mid]
            rule = RULES["SessionExpiryRemovesMember"]
            detail = (f"member {mid}'s session expired at {at} ms (session timeout {session} ms, "
                      f"no heartbeat since {at - session} ms): Kafka removed it then, and the broker "
                      f"still treats it as a member at {ex.sent:.0f} ms")
        elif (isinstance(resp, m.JoinGroupResponse) and isinstance(actual, m.JoinGroupResponse)
                and resp.error is _NONE and actual.error is _NONE
                and resp.generation_id != actual.generation_id):
            # the generation is what differs first: say so, whatever else follows from it
            raw = resp.generation_id - b.gen_delta.get(ex.event.group_id, 0)
            if raw == 1 and actual.generation_id == 0:
                rule = RULES["GenerationStartsAtOne"]
                detail = ("the broker numbers the group's first generation 0; in Kafka a new group "
                          "is at generation 0 and its first completed join phase makes it 1")
            else:
                rule = RULES["GenerationIncrements"]
                detail = (f"the broker's generation {actual.generation_id} where the reference's "
                          f"numbering gives {resp.generation_id}")
        prehistory = mismatch.prehistory
        if prehistory and mismatch.partition is not None and self._deleted_before(ex, mismatch.partition):
            # the broker itself answered an OffsetDelete of this partition NONE earlier in
            # the trace: whatever it held before the trace was deleted then
            prehistory = False
        fail = self._failure(b, ex, summary(actual), summary(resp), rule, detail, prehistory=prehistory)
        if self.cfg.txn_commits and mismatch.partition is not None and isinstance(actual, m.OffsetFetchResponse):
            txn = self._txn_unmodelled(ex, mismatch.partition)
            if txn:
                fail = dataclasses.replace(fail, unmodelled=txn)
        return fail

    def _deleted_before(self, ex: Exchange, tp: tuple[str, int]) -> bool:
        """An OffsetDelete of ``ex``'s group, answered before ``ex`` was sent, deleted ``tp``
        by the broker's own answer (NONE for it)."""
        gid = ex.event.group_id
        for x in self.x:
            if x.sent >= ex.sent:
                break
            resp = x.event.response
            if (isinstance(resp, m.OffsetDeleteResponse) and x.event.group_id == gid and x.received < ex.sent
                    and resp.error is _NONE
                    and any((p.topic, p.partition) == tp and p.error is _NONE for p in resp.partitions)):
                return True
        return False

    def _advance(self, b: _Branch, upto: int, ex: Exchange) -> Output:
        """Fire the reference's timers due by ``upto``, noting the members a session expiry
        removes (GroupMetadataManager expireClassicGroupMemberHeartbeat). A timer whose effect
        the reference does not model (NotModelled: a downgrade of a mixed group, a join
        completion Kafka fails) or cannot process (the errors a request's handling may
        raise) fails the branch at ``ex``, the exchange being replayed, as an unprocessable
        request does."""
        self._firing = b
        try:
            out = b.coord.advance(upto, on_fire=self._note_expiry)
        except _UNPROCESSABLE as err:
            raise self._unprocessable(b, ex, f"process a timer due by then: {err}") from None
        finally:
            self._firing = None  # no reference from the replayer to a branch is kept
        if self._fired:
            state = b.coord.state
            for e, session in self._fired:
                g = state.groups.get(e.group_id)
                if g is None or e.member_id not in g.members:
                    b.expired[e.member_id] = (e.deadline_ms, session)
            self._fired.clear()
        return out

    def _note_expiry(self, e: Expiry) -> None:
        if e.kind is TimerKind.ExpireHeartbeat and self._firing is not None:
            g = self._firing.coord.state.groups.get(e.group_id)
            mem = g.members.get(e.member_id) if g is not None else None
            if mem is not None:
                self._fired.append((e, mem.session_timeout_ms))

    def _force_join(self, b: _Branch, ex: Exchange, at: int) -> None:
        """End the group of ``ex`` (a JoinGroup the broker answered NONE)'s join phase now,
        as when its timer expires (GroupMetadataManager.completeClassicGroupJoin): the
        broker's answer says it ended. A completion the reference cannot make (Kafka's own
        fails there: NotModelled) fails the branch at ``ex`` as an unprocessable request."""
        g = b.coord.state.groups.get(ex.event.group_id)
        if g is None or g.state is not GroupState.PreparingRebalance:
            return
        txn = Txn(b.coord.state, b.coord.config, at)
        try:
            complete_join(txn, g)
        except _UNPROCESSABLE as err:
            raise self._unprocessable(b, ex, f"complete the join phase the broker's answer ended: {err}") from None
        self._forcing = True
        try:
            self._absorb(b, txn.out, at)
        finally:
            self._forcing = False

    @staticmethod
    def _translate(b: _Branch, group_id: str, resp: m.Response) -> m.Response:
        """The reference's answer in the broker's numbering of generations."""
        delta = b.gen_delta.get(group_id, 0)
        if delta and isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
            return dataclasses.replace(resp, generation_id=resp.generation_id + delta)
        return resp

    def _adopt_answer(self, b: _Branch, out: Output, k: int, resp: m.Response,
                      actual: m.Response, at: int) -> None:
        """Resynchronise on the broker's answer to ``out.responses[k]``, a divergence already
        recorded, where the protocol state follows from it: a completed join phase's
        generation (kept as an offset between the broker's numbering and the reference's)
        and its leader (when a member; the answers of the same completion follow it). Other
        answers change nothing: the reference's state stays its own, and the divergences it
        may cause are marked as possible consequences until a join phase agrees again."""
        if not (isinstance(resp, m.JoinGroupResponse) and isinstance(actual, m.JoinGroupResponse)
                and resp.error is _NONE and actual.error is _NONE):
            return
        rid = out.responses[k][0]
        gid = self.x[rid].event.group_id
        if actual.generation_id != resp.generation_id:
            b.gen_delta[gid] = b.gen_delta.get(gid, 0) + actual.generation_id - resp.generation_id
        g = b.coord.state.groups.get(gid)
        leader = actual.leader
        if leader == resp.leader or g is None or leader not in g.members:
            return
        same = [j for j, (r, x) in enumerate(out.responses)
                if isinstance(x, m.JoinGroupResponse) and x.error is _NONE
                and self.x[r].event.group_id == gid]
        roster = next((x.members for j in same for x in [out.responses[j][1]]
                       if isinstance(x, m.JoinGroupResponse) and x.members), ())
        Txn(b.coord.state, b.coord.config, at).emit(LeaderChanged(gid, leader))
        b.leaders[gid] = leader
        for j in same:
            if j > k:
                r, x = out.responses[j]
                assert isinstance(x, m.JoinGroupResponse)
                out.responses[j] = (r, dataclasses.replace(
                    x, leader=leader, members=roster if x.member_id == leader else ()))

    def _adopt_leader(self, b: _Branch, out: Output, at: int) -> None:
        """Take the broker's choice of a re-elected leader.

        Kafka re-elects a leader in two places, both by the iteration order of the
        members' HashMap (group-coordinator/.../classic/ClassicGroup.java: ``remove`` when
        the leader leaves, ``maybeElectNewJoinedLeader`` when it did not rejoin); the
        reference takes the first member in insertion order. When the reference
        re-elected since the group's last completed join phase, and the broker's leader
        at the completion is a member that rejoined in it, the reference adopts that
        leader: its state, and the JoinGroup answers of this completion (the member list
        goes to the leader only). A leader that was kept (it rejoined) is never replaced.
        """
        replaced: dict[str, str] = {}
        for rec in out.records:
            if isinstance(rec, StaticMemberReplaced):
                replaced[rec.old_member_id] = rec.new_member_id
            elif isinstance(rec, LeaderChanged):
                before = b.leaders.get(rec.group_id)
                if before is not None and rec.leader_id is not None and replaced.get(before) != rec.leader_id:
                    b.leader_open.add(rec.group_id)
                b.leaders[rec.group_id] = rec.leader_id
        completions: dict[str, list[int]] = {}
        for k, (rid, resp) in enumerate(out.responses):
            if isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
                completions.setdefault(self.x[rid].event.group_id, []).append(k)
        for gid, ks in completions.items():
            if gid not in b.leader_open:
                continue
            b.leader_open.discard(gid)
            ours: dict[str, m.JoinGroupResponse] = {}
            actual: m.Response | None = None
            for k in ks:
                rid, resp = out.responses[k]
                assert isinstance(resp, m.JoinGroupResponse)
                ours[resp.member_id] = resp
                if actual is None and rid in b.parked and rid not in b.unchecked:
                    actual = self.x[rid].event.response
            if not isinstance(actual, m.JoinGroupResponse) or actual.error is not _NONE:
                continue
            leader = actual.leader
            chosen = next(iter(ours.values())).leader
            g = b.coord.state.groups.get(gid)
            if leader == chosen or leader not in ours or g is None or leader not in g.members:
                continue
            roster = next((r.members for r in ours.values() if r.members), ())
            Txn(b.coord.state, b.coord.config, at).emit(LeaderChanged(gid, leader))
            b.leaders[gid] = leader
            for k in ks:
                rid, resp = out.responses[k]
                assert isinstance(resp, m.JoinGroupResponse)
                out.responses[k] = (rid, dataclasses.replace(
                    resp, leader=leader, members=roster if resp.member_id == leader else ()))
        for gid, grp in b.coord.state.groups.items():
            b.leaders[gid] = grp.leader_id
        for gid in completions:
            b.leader_open.discard(gid)

    def _unprocessable(self, b: _Branch, ex: Exchange, what: str) -> _Fail:
        """The branch fails at ``ex`` because the reference cannot ``what`` (an input it
        cannot process: the divergence is inconclusive, not judged)."""
        return _Fail(self._failure(b, ex, summary(ex.event.response), "", rule_for(ex.event.api, None),
                                   f"the reference cannot {what}", unprocessable=True))

    def _failure(self, b: _Branch, ex: Exchange, broker: str, allowed: str, rule: Rule,
                 detail: str, prehistory: bool = False, unprocessable: bool = False) -> Failure:
        req = ex.event.request
        mid = getattr(req, "member_id", "")
        if isinstance(req, m.LeaveGroupRequest):
            mid = next((x.member_id for x in req.members if x.member_id not in b.introduced), "")
        if isinstance(mid, str) and mid and mid not in b.introduced:
            prehistory = True
        return Failure(len(b.processed), ex, broker, allowed, rule, detail, prehistory, unprocessable,
                       self._unmodelled(b, ex))

    def _unmodelled(self, b: _Branch, ex: Exchange) -> str:
        """What a consumer group's answer may depend on that the reference does not have: a
        subscribed topic no Metadata response had named by then (the broker knew it; the
        recording did not yet), by name or, for a group subscribing by regex, any topic
        (the broker resolves regexes against every topic it has)."""
        req = ex.event.request
        if not isinstance(req, ConsumerGroupHeartbeatRequest):
            return ""
        g = b.coord.state.consumer_groups.get(req.group_id)
        members = list(g.members.values()) if g is not None else []
        if self._regex and self.cfg.metadata and self.cfg.metadata_as_learned:
            first_seen: dict[str, float] = {}
            for ev in self.cfg.metadata:
                for x in ev.topics:
                    first_seen.setdefault(x.name, ev.at_ms)
            if not first_seen:
                return ("the topics a regular-expression subscription matches, of which no "
                        "Metadata response named any")
            first = min(first_seen.values())
            late = sorted(n for n, at in first_seen.items() if at > first + self.cfg.slack_ms
                          and at > ex.sent)
            if late:
                # taken to exist from the start (_set_metadata); they may have been created later
                return (f"when topic(s) {', '.join(late)}, first named by a Metadata response "
                        "after this request, were created (the group subscribes by regex)")
        names = set(req.subscribed_topic_names or ()).union(*(m.subscribed_topic_names for m in members))
        unknown = sorted(n for n in names if n not in b.coord.state.topics)
        if unknown and self.cfg.metadata:
            return (f"the metadata of subscribed topic(s) {', '.join(unknown)}, which no Metadata "
                    "response had named by then")
        return ""

    def _txn_offsets(self, before: float) -> TxnOffsets:
        """What the group's TxnOffsetCommits sent before ``before`` committed, by partition
        (a commit without metadata is stored as "", as a plain commit's)."""
        out: dict[tuple[str, int], set[tuple[int, str | None, int]]] = {}
        for x in self.cfg.txn_commits:
            if x.sent < before:
                for p in txn_accepted(x.event):
                    meta = "" if p.committed_metadata is None else p.committed_metadata
                    out.setdefault((p.topic, p.partition), set()).add((p.committed_offset, meta,
                                                                       p.committed_leader_epoch))
        return out

    def _txn_unmodelled(self, ex: Exchange, tp: tuple[str, int]) -> str:
        """An OffsetFetch answer differing on a partition an earlier TxnOffsetCommit of the
        group named: its committed offset depends on transactions, which are not modelled."""
        lines = [str(x.line) for x in self.cfg.txn_commits
                 if x.sent < ex.received and any((p.topic, p.partition) == tp for p in txn_accepted(x.event))]
        if not lines:
            return ""
        return (f"the outcome of the transaction(s) of the TxnOffsetCommit at line(s) {', '.join(lines)}, "
                f"which named {tp[0]}-{tp[1]} (transactions are not modelled: its committed offset is "
                "unknown from then on)")

    @staticmethod
    def _state_text(b: _Branch, group_id: str) -> str:
        g = b.coord.state.groups.get(group_id)
        if g is None:
            return "unknown"
        waiting = [mid for mid, mem in g.members.items() if not mem.is_awaiting_join]
        extra = f", not yet rejoined: {', '.join(waiting)}" if g.state.value == "PreparingRebalance" and waiting else ""
        return f"{g.state.value}, generation {g.generation_id}{extra}"


def replay_group(exchanges: list[Exchange], config: ReplayConfig | None = None,
                 on_try: Callable[[int], None] | None = None) -> ReplayResult:
    """Replay one group's exchanges under each candidate broker configuration; the first
    that explains the trace wins, else the one whose explanation went furthest."""
    cfg = config or ReplayConfig()
    # each configuration is tried up to its first divergence only (what decides between
    # them); the one chosen is then replayed to the end, past every divergence
    first_only = dataclasses.replace(cfg, max_divergences=1)
    best: ReplayResult | None = None
    prepared = _prepare(exchanges)
    by_delay: list[ReplayResult] = []
    for delay in cfg.initial_delays_ms:
        if on_try is not None:
            on_try(delay)
        result = _run(exchanges, first_only, prepared, None, delay)
        if result.ok:
            return result
        by_delay.append(result)
        if best is None or (result.failure is not None and best.failure is not None
                            and result.failure.depth > best.failure.depth):
            best = result
    assert best is not None
    first = best
    if cfg.offsets_check_phase_known is False and best.failure is not None:
        # the placements for the divergence; where one gets further and diverges later, the
        # placements for that divergence too (a check must fall where the earlier one needs
        # it and not where the later one forbids it), at most OFFSETS_CHECK_ROUNDS times
        tried: set[int] = set()
        for _ in range(OFFSETS_CHECK_ROUNDS):
            assert best.failure is not None
            failed = best.failure.exchange
            for check in offsets_check_candidates(exchanges, failed,
                                                  cfg.coordinator.offsets_retention_check_interval_ms):
                if check in tried:
                    continue
                tried.add(check)
                for delay in cfg.initial_delays_ms:
                    result = _run(exchanges, first_only, prepared, check, delay)
                    if result.ok:
                        return result
                    if result.failure is not None and best.failure is not None \
                            and result.failure.depth > best.failure.depth:
                        best = result
            if best.failure is None or best.failure.exchange is failed:
                break
    if cfg.max_divergences > 1 and not best.bound_hit:
        # (searches from the start: these configurations are known to diverge, where an
        # optimistic replay would only stop)
        full = Replayer(exchanges, cfg, prepared, best.offsets_check_ms).run(best.initial_delay_ms)
        if best is first:
            # delays whose first divergence came as deep (the same exchange, say a read
            # both answer alike) are told apart by the rest of the trace: the one with
            # fewer divergences explains more of it (the first tried, on a tie). Taking the
            # first tried alone let one early divergence decide the delay, and a wrong
            # delay made every later join a divergence of its own
            for other in by_delay:
                if (other is best or other.bound_hit or other.failure is None or best.failure is None
                        or other.failure.depth != best.failure.depth):
                    continue
                alt = Replayer(exchanges, cfg, prepared, other.offsets_check_ms).run(other.initial_delay_ms)
                if len(alt.found) < len(full.found):
                    full = alt
        best = full
    return best


def _run(exchanges: list[Exchange], config: ReplayConfig, prepared: _Prepared, offsets_check_ms: int | None,
         initial_delay_ms: int) -> ReplayResult:
    """``Replayer(...).run(initial_delay_ms)``: first optimistically, without choice points
    (most groups of a trace conform, and their search never goes back to one); at a
    divergence, again from the start as a search with them. The result is the search's
    either way (tests/test_fast_path.py, tests/test_injected_verdicts.py)."""
    if OPTIMISTIC:
        try:
            return Replayer(exchanges, config, prepared, offsets_check_ms, optimistic=True).run(initial_delay_ms)
        except _Diverged:
            pass
    return Replayer(exchanges, config, prepared, offsets_check_ms).run(initial_delay_ms)


#: whether replay_group replays optimistically first (_run); False only to compare
OPTIMISTIC = True

#: at most this many placements of the periodic expiry check are tried for one divergence
OFFSETS_CHECK_CANDIDATES = 8
#: and for at most this many divergences, each further than the one before
OFFSETS_CHECK_ROUNDS = 3


def offsets_check_candidates(exchanges: list[Exchange], failed: Exchange, interval_ms: int) -> list[int]:
    """Instants to place the coordinator's periodic group and offset expiry check at, when
    its phase is unknown (ReplayConfig.offsets_check_phase_known False) and the replay with
    the trace's clock zero diverged at ``failed``. One check falls in every interval, so one
    falls in the interval before the divergence; where it falls among that interval's
    exchanges is what changes the answers (an Empty group without offsets is deleted by it:
    offsets.py expire_offsets). Tried: just after each of the last exchanges sent before the
    divergence within the interval (the latest first), and just after the interval began
    (before all of them). Exchanges further back than :data:`OFFSETS_CHECK_CANDIDATES` are
    not tried: a group that was eligible for deletion long before sees few requests."""
    t = _floor(failed.sent)
    before = sorted({_floor(x.sent) for x in exchanges if t - interval_ms < x.sent <= failed.sent},
                    reverse=True)
    out = [s + 1 for s in before[:OFFSETS_CHECK_CANDIDATES]]
    out.append(t - interval_ms + 1)
    # the default (the clock's zero) was tried first
    return [c for c in dict.fromkeys(out) if c % interval_ms != 0]

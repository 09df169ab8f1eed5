"""Client-side rules: what a Kafka consumer does with the coordinator's answers, judged on
a group's events. Each finding names the client that deviated (its client id and
connection); the broker is not at fault for any of these.

The Java consumer is the reference (clients/.../consumer/internals/ in kafka-clients):

- **ClientFetchesOwnedOnly**: a member fetches only partitions it owns. Ownership starts when
  its SyncGroup answer arrives (ConsumerCoordinator.onJoinComplete assigns exactly the new
  assignment, so a cooperative member's revoked partitions go there); an eager member gives
  up everything before it sends JoinGroup (onJoinPrepare), a cooperative one what it no
  longer reports as owned; an error that resets the generation loses everything
  (AbstractCoordinator.resetStateAndGeneration, then onPartitionsLost), as does LeaveGroup,
  except one answering the commit of onJoinPrepare (a commit sent after the member was told
  of a rebalance): ConsumerCoordinator.onJoinPrepare decides by the generation it was
  called with, so a cooperative member keeps what its JoinGroup then reports owned. A
  consumer-protocol (KIP-848) member owns at most what its ConsumerGroupHeartbeats last
  reported owning and the last assignment it was sent (ConsumerMembershipManager's
  reconciliation), nothing once it rejoins at epoch 0 or leaves (:func:`_consumer_ownership`;
  judged where the trace's metadata names the assignment's topic ids).
- **ClientCommitsOwnedOnly**: an OffsetCommit carries the member's generation
  (generationIfStable) and the partitions it consumed, which are those assigned to it in
  that generation; a cooperative member may also commit the partitions it was just told to
  revoke (its onPartitionsRevoked runs in onJoinComplete, after the new generation).
- **CooperativeOwnedIsAssigned** / **EagerRevokesBeforeJoin**: the JoinGroup subscription
  reports ``subscriptions.assignedPartitions()`` and the generation
  (ConsumerCoordinator.metadata): for a cooperative member a subset of its assignment in
  that generation, for an eager one nothing (onJoinPrepare revoked everything). A
  cooperative member reporting partitions at no generation (-1) kept them through a reset
  of its generation, which onJoinPrepare's check makes lost (KAFKA-12983's bug skipped that
  check), unless the reset came from onJoinPrepare's own commit (see ClientFetchesOwnedOnly).
- **ClientIgnoresStaleErrors**: ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID
  answering a heartbeat sent with an older generation than the member now has is ignored
  (HeartbeatResponseHandler, generationUnchanged; KAFKA-9823): the member does not rejoin
  with its member id or generation reset because of it.
- **ClientKeepsMemberId**: a dynamic member keeps its member id through ILLEGAL_GENERATION
  (resetStateOnResponseError with shouldResetMemberId false; KAFKA-13419), REBALANCE_IN_PROGRESS
  and coordinator errors (markCoordinatorUnknown; KAFKA-13214): only UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID or leaving the group (resetGenerationOnLeaveGroup) drops it. Judged on
  one connection (see :func:`keeps_member_id`).
- **ClientStopsWhenFenced**: after such an error for its current member id and generation,
  the member resets them (resetStateOnResponseError) and never heartbeats or commits with
  that pair again.
- **LeaderSyncsItsGeneration**: a member told it leads generation G sends SyncGroup G
  before it rejoins (JoinGroupResponseHandler -> onLeaderElected; KAFKA-13406).
- **ConsumerClientRejoinsAtZero** (KIP-848): a member fenced (FENCED_MEMBER_EPOCH,
  UNKNOWN_MEMBER_ID) or that left rejoins at epoch 0, never with its old epoch
  (KAFKA-16251) nor as a leave (KAFKA-19335); AbstractMembershipManager.
- **ConsumerClientRequestValid** (KIP-848): a ConsumerGroupHeartbeat carries what its epoch
  requires (GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid; KAFKA-16190).
- **HeartbeatKeepsSessionAlive**: the heartbeat interval is below the session timeout
  (Heartbeat.java refuses anything else), so gaps between a member's session-refreshing
  requests longer than its session timeout come from pauses; the same process showing
  such a gap again and again (:data:`CADENCE_GAPS` times) heartbeats too slowly.

A process is a client id (the simulator's member name, a recorded client's client.id)
unless one client id serves two members of one generation (a shared default client id);
rules that need to follow a process across member ids skip such client ids. Timing rules
allow :data:`SLACK_MS` for a response to reach the client and the client to act on it.
The seam: :func:`client_findings` takes a group's events (and what the replay knows,
unused yet) and returns findings; the validator appends them to the group's verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeGuard

from groupspec.coordinator.consumer.heartbeat import request_error
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Subscription, pairs
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import FetchEvent
from groupspec.validate.checks import COOPERATIVE_ASSIGNORS, decode_assignment, subscription
from groupspec.validate.grouping import Exchange, GroupTrace
from groupspec.validate.rules import RULES, Rule

TP = tuple[str, int]

#: time a client may take to see and act on a response (the recorder's clock is not the client's)
SLACK_MS = 1000.0
#: gaps longer than the session timeout, per process, that make a cadence rather than a pause
CADENCE_GAPS = 3
#: the errors that tell a member its id or generation is no longer valid
FENCING = frozenset({Error.UNKNOWN_MEMBER_ID, Error.ILLEGAL_GENERATION, Error.FENCED_INSTANCE_ID})
#: assignors that follow the eager protocol (RebalanceProtocol.EAGER)
EAGER_ASSIGNORS = frozenset({"range", "roundrobin", "sticky"})
#: Error members bound once: looking one up on its Enum class costs as much
#: as a function call, and these are read for nearly every event
_COORDINATOR_NOT_AVAILABLE = Error.COORDINATOR_NOT_AVAILABLE
_NONE = Error.NONE
_NOT_COORDINATOR = Error.NOT_COORDINATOR


@dataclass(frozen=True)
class ClientFinding:
    seq: int
    line: int
    rule: Rule
    #: what the client sent (the counterpart of a broker finding's answer)
    sent: str
    #: what a Kafka client does instead
    expected: str
    detail: str
    api: str
    connection: str
    client_id: str
    side: str = "client"


_UNKNOWN_MEMBER_ID = Error.UNKNOWN_MEMBER_ID
_ILLEGAL_GENERATION = Error.ILLEGAL_GENERATION
_FENCED_INSTANCE_ID = Error.FENCED_INSTANCE_ID
_FENCED_MEMBER_EPOCH = Error.FENCED_MEMBER_EPOCH


def _fencing(err: Error | None) -> TypeGuard[Error]:
    """``err in FENCING``, by identity (an Error's hash is a Python-level call)."""
    return err is _UNKNOWN_MEMBER_ID or err is _ILLEGAL_GENERATION or err is _FENCED_INSTANCE_ID


def _keeps_generation(req: object, err: Error | None) -> bool:
    """Whether the Java client keeps its member id, generation and partitions on fencing
    error ``err`` answering ``req``: an OffsetCommit's or SyncGroup's FENCED_INSTANCE_ID
    resets nothing (the error goes to the application; ConsumerCoordinator
    OffsetCommitResponseHandler, AbstractCoordinator SyncGroupResponseHandler), and the
    heartbeat thread goes on until a heartbeat is fenced itself."""
    return err is _FENCED_INSTANCE_ID and isinstance(req, m.OffsetCommitRequest | m.SyncGroupRequest)


#: response classes with one ``error`` field
_ERROR_FIELD = frozenset({m.HeartbeatResponse, m.JoinGroupResponse, m.SyncGroupResponse,
                          m.LeaveGroupResponse, m.OffsetFetchResponse, m.FindCoordinatorResponse})


_REBALANCING = Error.REBALANCE_IN_PROGRESS


def _error(resp: m.Response | None) -> Error | None:
    """The response's error; for an OffsetCommit, its fencing error of the lowest code."""
    if resp is None:
        return None
    if type(resp) in _ERROR_FIELD:
        err = getattr(resp, "error", None)
        return err if isinstance(err, Error) else None
    if isinstance(resp, m.OffsetCommitResponse):
        best: Error | None = None
        for p in resp.partitions:
            e = p.error
            if _fencing(e) and (best is None or e.value < best.value):
                best = e
        return best
    err = getattr(resp, "error", None)
    return err if isinstance(err, Error) else None


def _parts(x: Iterable[TP]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(x))


def _subscriptions(req: m.JoinGroupRequest) -> list[tuple[str, Subscription]]:
    out = []
    for p in req.protocols:
        sub = subscription(p.metadata)
        if sub is not None:
            out.append((p.name, sub))
    return out


def _protocol_kind(names: Iterable[str]) -> str | None:
    """The rebalance protocol a member offering these assignors follows: the highest one
    that every assignor supports (ConsumerCoordinator's constructor keeps the protocols
    common to all of them and takes the last after sorting). Cooperative when each is
    cooperative-sticky; eager as soon as one supports only eager (range, roundrobin and
    sticky: ConsumerPartitionAssignor.supportedProtocols' default), whatever the others,
    so the Java default ``[range, cooperative-sticky]`` and KIP-429's first upgrade bounce
    are eager; None when, besides cooperative-sticky, it offers only assignors the validator
    does not know."""
    names = set(names)
    if names & EAGER_ASSIGNORS:
        return "eager"
    if names and names <= COOPERATIVE_ASSIGNORS:
        return "cooperative"
    return None


@dataclass
class _Facts:
    """What the group's exchanges say about each member and process."""

    #: (generation, member key) -> [(partitions, SyncGroup exchange)], in the order answered;
    #: key: instance id or member id. One assignment per generation in a classic group; in
    #: a consumer group a classic member's generation is its member epoch, at which its
    #: SyncGroup answers grow as partitions are released to it (or shrink as it revokes):
    #: see :meth:`assignment_at`
    assigned: dict[tuple[int, str], list[tuple[set[TP], Exchange]]] = field(default_factory=dict)
    #: generation -> protocol name chosen
    protocol: dict[int, str] = field(default_factory=dict)
    #: (generation, member key) -> the partitions the member's JoinGroup answered with that
    #: generation reported owned: what its onJoinComplete may revoke (and commit) after the
    #: SyncGroup, whatever member id it had before
    reported: dict[tuple[int, str], set[TP]] = field(default_factory=dict)
    #: client ids that served two members of one generation
    ambiguous: set[str] = field(default_factory=set)
    #: client id -> [(received, generation, member id)] of its successful JoinGroups
    joined: dict[str, list[tuple[float, int, str]]] = field(default_factory=dict)
    #: client id -> its exchanges, in the order given (by send time)
    by_client: dict[str, list[Exchange]] = field(default_factory=dict)
    #: ``_error`` of each exchange (by ``id``) whose answer is not NONE; see :meth:`error`
    errors: dict[int, Error | None] = field(default_factory=dict)

    def error(self, x: Exchange) -> Error | None:
        """``_error(x.event.response)``, computed once per exchange by :func:`_facts`."""
        return self.errors.get(id(x), _NONE)

    def assignment_at(self, generation: int, key: str, at: float) -> tuple[set[TP], Exchange] | None:
        """The member's last assignment in ``generation`` answered by ``at`` (None: none yet).
        In a consumer group a classic member's generation is its member epoch, and the
        coordinator answers its SyncGroup with what it holds then
        (GroupMetadataManager.classicGroupSyncToConsumerGroup): partitions still held by
        another member come later at the same epoch, after a heartbeat answered
        REBALANCE_IN_PROGRESS and a rejoin (classicGroupHeartbeatToConsumerGroup), and a
        cooperative member is told to revoke at its current epoch. The client takes each
        answer as its assignment (ConsumerCoordinator.onJoinComplete)."""
        best = None
        for entry in self.assigned.get((generation, key), ()):
            if entry[1].received > at:
                break
            best = entry
        return best


def _key(req: Any) -> str:
    return str(req.group_instance_id or req.member_id)


def _facts(xs: list[Exchange]) -> _Facts:
    """The facts of exchanges ``xs`` (in send order), in one pass over them."""
    f = _Facts()
    members_of: dict[tuple[int, str], set[str]] = {}
    by_client, errors = f.by_client, f.errors
    for x in xs:
        req, resp = x.event.request, x.event.response
        cid = x.event.client_id
        mine = by_client.get(cid)
        if mine is None:
            by_client[cid] = [x]
        else:
            mine.append(x)
        err = _error(resp)
        if err is not _NONE:
            errors[id(x)] = err
        if isinstance(req, m.SyncGroupRequest) and isinstance(resp, m.SyncGroupResponse) and resp.error is _NONE:
            parts = decode_assignment(resp.assignment)
            if parts is None:
                continue
            f.assigned.setdefault((req.generation_id, _key(req)), []).append((parts, x))
        elif isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
            if resp.protocol_name:
                f.protocol[resp.generation_id] = resp.protocol_name
            if isinstance(req, m.JoinGroupRequest):
                subs = _subscriptions(req)
                if subs and subs[0][1].owned_partitions:
                    f.reported[(resp.generation_id, str(req.group_instance_id or resp.member_id))] = \
                        pairs(subs[0][1].owned_partitions)
            f.joined.setdefault(x.event.client_id, []).append((x.received, resp.generation_id, resp.member_id))
            members_of.setdefault((resp.generation_id, x.event.client_id), set()).add(resp.member_id)
    f.ambiguous = {cid for (_, cid), ms in members_of.items() if len(ms) > 1}
    for answers in f.assigned.values():
        if len(answers) > 1:
            answers.sort(key=lambda a: (a[1].received, a[1].seq))
    for v in f.joined.values():
        v.sort()
    return f


def _finding(x: Exchange, rule: str, sent: str, expected: str, detail: str) -> ClientFinding:
    e = x.event
    return ClientFinding(x.seq, x.line, RULES[rule], sent, expected, detail, e.api, e.connection, e.client_id)


# ------------------------------------------------------------------ commits and reported ownership
def commits_owned_only(xs: list[Exchange], f: _Facts) -> list[ClientFinding]:
    out: list[ClientFinding] = []
    #: member key -> the generations it was assigned partitions in (made when first needed)
    generations: dict[str, list[int]] | None = None
    for x in xs:
        req = x.event.request
        if not isinstance(req, m.OffsetCommitRequest) or req.generation_id < 0 or not req.member_id:
            continue
        key = _key(req)
        mine = f.assignment_at(req.generation_id, key, x.sent)
        if mine is None:
            continue  # the member's assignment in that generation is not in the trace
        allowed = mine[0]
        # (cooperative, or an assignor the validator does not know, which may be: Kafka
        # Streams' "stream" commits the tasks it revokes in onPartitionsRevoked, after the
        # SyncGroup, at the new generation)
        if f.protocol.get(req.generation_id) not in EAGER_ASSIGNORS:
            # what its JoinGroup of this generation reported owned, revoked after the
            # SyncGroup (also by a member whose id changed on the way: a cooperative member
            # keeps its partitions through onJoinPrepare's fenced commit and rejoins anew)
            allowed = allowed | f.reported.get((req.generation_id, key), set())
            same = f.assigned[(req.generation_id, key)]
            at = next(i for i, entry in enumerate(same) if entry is mine)
            if at > 0:
                # revoked at the same generation (a classic member of a consumer group):
                # committed in the callback
                allowed = allowed | same[at - 1][0]
            else:
                if generations is None:
                    generations = {}
                    for g, k in f.assigned:
                        generations.setdefault(k, []).append(g)
                older = [g for g in generations.get(key, ()) if g < req.generation_id]
                if older:
                    # just revoked: committed in the callback
                    allowed = allowed | f.assigned[(max(older), key)][-1][0]
        extra = {(p.topic, p.partition) for p in req.partitions} - allowed
        if extra:
            out.append(_finding(
                x, "ClientCommitsOwnedOnly", f"OffsetCommit of {_parts(extra)} with generation {req.generation_id}",
                f"commits of the partitions assigned in generation {req.generation_id} ({_parts(allowed) or 'none'})",
                f"{req.member_id} commits {_parts(extra)}, not assigned to it in generation {req.generation_id} "
                f"(SyncGroup seq {mine[1].seq})",
            ))
    return out


def reported_ownership(xs: list[Exchange], f: _Facts) -> list[ClientFinding]:
    out: list[ClientFinding] = []
    for x in xs:
        req = x.event.request
        if not isinstance(req, m.JoinGroupRequest):
            continue
        subs = _subscriptions(req)
        kind = _protocol_kind(name for name, _ in subs)
        for _name, sub in subs[:1]:  # every protocol carries the same ownership
            owned = pairs(sub.owned_partitions)
            if kind == "eager" and owned:
                out.append(_finding(
                    x, "EagerRevokesBeforeJoin", f"JoinGroup reporting {_parts(owned)} owned",
                    "an eager member rejoins owning nothing",
                    f"{req.member_id or '(new member)'} still reports {_parts(owned)} as owned "
                    f"(generation {sub.generation_id}) in an eager rebalance",
                ))
            elif kind == "cooperative" and owned and sub.generation_id < 0:
                if _subscription_version(req) < 2:
                    continue  # no generation field (kafka-python's v1): -1 says nothing
                cid = x.event.client_id
                if cid in f.ambiguous or _kept_by_join_prepare(f.by_client.get(cid, []), x.sent):
                    continue
                out.append(_finding(
                    x, "CooperativeOwnedIsAssigned", f"JoinGroup reporting {_parts(owned)} owned at no generation",
                    "nothing owned after a reset of the generation (onJoinPrepare loses the partitions)",
                    f"{req.member_id or '(new member)'} reports {_parts(owned)} owned with generation "
                    f"{sub.generation_id}: it kept partitions its reset generation lost",
                ))
            elif kind == "cooperative" and owned and sub.generation_id >= 0:
                key = req.group_instance_id or req.member_id
                mine = f.assignment_at(sub.generation_id, key, x.sent)
                if mine is None:
                    continue
                extra = owned - mine[0]
                if extra:
                    out.append(_finding(
                        x, "CooperativeOwnedIsAssigned", f"JoinGroup reporting {_parts(extra)} owned",
                        f"owned partitions within its generation-{sub.generation_id} assignment "
                        f"({_parts(mine[0]) or 'none'})",
                        f"{req.member_id} reports {_parts(extra)} owned in generation {sub.generation_id}, "
                        f"but its SyncGroup (seq {mine[1].seq}) did not assign them: they were revoked",
                    ))
    return out


def _told(x: Exchange, err: Error | None, generation: int, told: float | None) -> float | None:
    """When the member was told of a rebalance in ``generation``: ``told``, or, if not yet,
    when ``x``'s answer (``err``) was REBALANCE_IN_PROGRESS to a request of that generation."""
    if told is None and err is _REBALANCING and getattr(x.event.request, "generation_id", None) == generation:
        return x.received
    return told


def _join_prepare_commit(x: Exchange, told: float | None) -> bool:
    """Whether ``x`` is onJoinPrepare's commit: an OffsetCommit sent after its member was told
    of a rebalance in its generation (at ``told``: a REBALANCE_IN_PROGRESS answer received)."""
    return isinstance(x.event.request, m.OffsetCommitRequest) and told is not None and x.sent >= told


def _subscription_version(req: m.JoinGroupRequest) -> int:
    """The version of the JoinGroup's first subscription (ConsumerProtocolSubscription; its
    generation field came with version 2)."""
    meta = req.protocols[0].metadata if req.protocols else b""
    return int.from_bytes(meta[:2], "big", signed=True) if len(meta) >= 2 else -1


def _kept_by_join_prepare(mine: list[Exchange], before: float) -> bool:
    """Whether the process's last reset of its generation before ``before`` was the fencing
    error of onJoinPrepare's commit (a commit sent after it was told of a rebalance in that
    generation): ConsumerCoordinator.onJoinPrepare then decides by the generation it was
    called with, and a cooperative member keeps its partitions."""
    generation, told, kept = -1, None, False
    for x in sorted(mine, key=lambda x: (x.received, x.seq)):
        if x.received > before:
            break
        req, resp = x.event.request, x.event.response
        err = _error(resp)
        if isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
            generation, told = resp.generation_id, None
        elif _fencing(err) and getattr(req, "generation_id", generation) == generation:
            kept = _join_prepare_commit(x, told)
        else:
            told = _told(x, err, generation, told)
    return kept


# ------------------------------------------------------------------ fencing and stale errors
def stops_when_fenced(xs: list[Exchange], f: _Facts) -> list[ClientFinding]:
    """ClientStopsWhenFenced over ``xs`` (in send order), read from ``f = _facts(xs)``."""
    fenced: dict[tuple[str, int], Exchange] = {}
    # (those fenced, in the order given, then by receive time: a stable sort of the few,
    # as of all exchanges by receive time; ``f.errors`` holds each answer that is not NONE)
    errors = f.errors
    # a consumer-protocol member (KIP-848) whose ConsumerGroupHeartbeat at member epoch E is
    # answered FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID drops E: the Java client's heartbeat
    # manager calls transitionToFenced, which resets the epoch and tells the commit manager
    # (AbstractHeartbeatRequestManager onErrorResponse; AbstractMembershipManager
    # transitionToFenced, resetEpoch, notifyEpochChange), whose OffsetCommits and
    # OffsetFetches are built with the member's epoch of the moment (CommitRequestManager
    # onMemberEpochUpdated): none later carries E (a leaving member's fencing excepted: it
    # stops, and sends nothing more that carries an epoch)
    for x in sorted((x for x in xs if id(x) in errors), key=lambda x: x.received):
        req = x.event.request
        err = errors[id(x)]
        if type(req) is ConsumerGroupHeartbeatRequest:
            if req.member_id and req.member_epoch > 0 and (err is _FENCED_MEMBER_EPOCH or err is _UNKNOWN_MEMBER_ID):
                fenced.setdefault((req.member_id, req.member_epoch), x)
            continue
        if not _fencing(err) or not isinstance(req, (m.HeartbeatRequest, m.OffsetCommitRequest, m.SyncGroupRequest)):
            continue
        if _keeps_generation(req, err):
            continue
        if req.generation_id >= 0 and req.member_id:
            fenced.setdefault((req.member_id, req.generation_id), x)
    out: list[ClientFinding] = []
    if not fenced:
        return out  # (most groups: no request is checked against anything)
    # a consumer-protocol member (KIP-848) learns it is fenced from its heartbeat alone: an
    # OffsetCommit answered UNKNOWN_MEMBER_ID fails that commit and changes nothing
    # (CommitRequestManager's OffsetCommit handler; the epoch a commit carries moves only
    # with the member's, onMemberEpochUpdated), so its next commits may carry the same
    consumers = {x.event.request.member_id for x in xs
                 if type(x.event.request) is ConsumerGroupHeartbeatRequest and x.event.request.member_id}
    if consumers:
        fenced = {pair: x for pair, x in fenced.items()
                  if not (pair[0] in consumers and isinstance(x.event.request, m.OffsetCommitRequest))}
    # a member id and generation a JoinGroup answer gives again after the fencing (a new
    # coordinator that reloaded the group as it was before the generation was persisted
    # hands the member the same number again) are the member's own once more
    # (or a ConsumerGroupHeartbeat answer the member epoch)
    regranted: dict[tuple[str, int], float] = {}
    for x in xs:
        resp = x.event.response
        if isinstance(resp, m.JoinGroupResponse | ConsumerGroupHeartbeatResponse) and resp.error is _NONE \
                and x.received is not None:
            if isinstance(resp, m.JoinGroupResponse):
                pair = (resp.member_id, resp.generation_id)
            else:
                req = x.event.request
                assert isinstance(req, ConsumerGroupHeartbeatRequest)
                pair = (resp.member_id or req.member_id, resp.member_epoch)
            hit = fenced.get(pair)
            if hit is not None and x.received > hit.received and pair not in regranted:
                regranted[pair] = x.received
    reported: set[tuple[str, int]] = set()
    for y in xs:
        req = y.event.request
        if isinstance(req, m.HeartbeatRequest | m.OffsetCommitRequest):
            pair = (req.member_id, req.generation_id)
        elif isinstance(req, m.OffsetFetchRequest) and req.member_id and req.member_epoch > 0:
            pair = (req.member_id, req.member_epoch)
        else:
            continue
        hit = fenced.get(pair)
        if hit is None or pair in reported or y.sent <= hit.received + SLACK_MS:
            continue
        again = regranted.get(pair)
        if again is not None and y.sent >= again:
            continue
        x = hit
        reported.add(pair)
        err = _error(x.event.response)
        assert err is not None
        what = "member epoch" if type(x.event.request) is ConsumerGroupHeartbeatRequest else "generation"
        out.append(_finding(
            y, "ClientStopsWhenFenced", f"{y.event.api} as {pair[0]} {what} {pair[1]}",
            f"no request with a member id and {what} the coordinator rejected",
            f"{x.event.api} seq {x.seq} was answered {err.name} at {x.received:.0f} ms for "
            f"{pair[0]} {what} {pair[1]}; {y.event.api} sent at {y.sent:.0f} ms still uses them",
        ))
    return out


def _current(f: _Facts, cid: str, at: float) -> tuple[int, str] | None:
    best = _current_join(f, cid, at)
    return None if best is None else (best[1], best[2])


def _current_join(f: _Facts, cid: str, at: float) -> tuple[float, int, str] | None:
    """The process's last successful JoinGroup answered by ``at``: (when, generation, id)."""
    best = None
    for joined in f.joined.get(cid, ()):
        if joined[0] > at:
            break
        best = joined
    return best


def ignores_stale_errors(xs: list[Exchange], f: _Facts) -> list[ClientFinding]:
    """ClientIgnoresStaleErrors over ``xs`` (in send order), read from ``f = _facts(xs)``."""
    out: list[ClientFinding] = []
    for cid, mine in f.by_client.items():
        if cid in f.ambiguous:
            continue
        for x in mine:
            req, err = x.event.request, f.error(x)
            if not isinstance(req, m.HeartbeatRequest) or not _fencing(err):
                continue
            joined = _current_join(f, cid, x.received)
            if joined is None or joined[1] <= req.generation_id:
                continue  # not stale: the member acts on it
            cur = (joined[1], joined[2])
            # from the instant the answer arrived: a client rejoins in the same millisecond
            # (AbstractCoordinator.joinGroupIfNeeded runs in the poll that handled it)
            later = sorted((y for y in mine if y is not x and y.sent >= x.received), key=lambda y: y.sent)
            for y in later:
                yreq, yerr = y.event.request, f.error(y)
                if isinstance(yreq, m.LeaveGroupRequest):
                    break
                if _fencing(yerr) and not (
                    isinstance(yreq, m.HeartbeatRequest)
                    and (c := _current(f, cid, y.received)) is not None and c[0] > yreq.generation_id
                ):
                    break  # a current error: the member rightly resets
                if (isinstance(yreq, m.JoinGroupRequest) and yreq.member_id == ""
                        and y.event.connection != x.event.connection
                        and not any(z.event.connection == y.event.connection and z.sent < y.sent for z in mine)):
                    # the first request of a new connection, without a member id: a restarted
                    # process (a static member's restart, with its group.instance.id) or a
                    # reconnect; the wire does not tell a reset from a new process
                    break
                if isinstance(yreq, m.JoinGroupRequest):
                    subs = _subscriptions(yreq)
                    gen_reset = any(s.generation_id < 0 for _, s in subs[:1]) and _reported_generation(mine, y) >= 0
                    if (yreq.member_id == "" or gen_reset) and _current_error_between(f, cid, mine, x, y, joined[0]):
                        break  # a request in flight with the stale one got a current error
                    if yreq.member_id == "" or gen_reset:
                        what = "member id" if yreq.member_id == "" else "generation"
                        out.append(_finding(
                            y, "ClientIgnoresStaleErrors", f"JoinGroup with its {what} reset",
                            f"a rejoin as {cur[1]} with generation {cur[0]} (the stale error ignored)",
                            f"Heartbeat seq {x.seq} carried generation {req.generation_id} and was answered "
                            f"{err.name} at {x.received:.0f} ms, when {cid} already had generation {cur[0]} "
                            f"as {cur[1]}; {cid} then reset its {what}",
                        ))
                    break
    return out


def _current_error_between(f: _Facts, cid: str, mine: list[Exchange], stale: Exchange, join: Exchange,
                           since: float) -> bool:
    """Whether a request other than ``stale`` and ``join``, carrying the member's current
    generation, was answered a fencing error after the member joined that generation (at
    ``since``) and by the time ``join`` was sent: a SyncGroup in flight with a stale
    heartbeat and answered UNKNOWN_MEMBER_ID (the member was removed), or a commit of the
    current generation answered ILLEGAL_GENERATION, resets the member rightly, whatever the
    heartbeat's answer."""
    for z in mine:
        if (z is stale or z is join or z.received < since or z.received > join.sent
                or not _fencing(f.error(z))):
            continue
        gen = getattr(z.event.request, "generation_id", None)
        if isinstance(gen, int) and (c := _current(f, cid, z.received)) is not None and c[0] > gen:
            continue  # another request of an older generation (a heartbeat, a commit)
        return True
    return False


def _reported_generation(mine: list[Exchange], before: Exchange) -> int:
    """The generation the process reported in its JoinGroup before ``before`` (-1: none)."""
    gen = -1
    for x in mine:
        if x.sent >= before.sent:
            break
        req = x.event.request
        if isinstance(req, m.JoinGroupRequest):
            subs = _subscriptions(req)
            if subs:
                gen = subs[0][1].generation_id
    return gen


# ------------------------------------------------------------------ member id kept
#: JoinGroup answers that give the member the id they carry (AbstractCoordinator's
#: JoinGroupResponseHandler: a completed join, or KIP-394's MEMBER_ID_REQUIRED)
_GIVES_ID = (_NONE, Error.MEMBER_ID_REQUIRED)
_INF = float("inf")
#: Kafka Streams' embedded consumer names its protocol so; it runs with
#: internal.leave.group.on.close false, so maybeLeaveGroup (a poll timeout, unsubscribe)
#: drops its member id without a LeaveGroup
_STREAMS_PROTOCOL = "stream"


def keeps_member_id(xs: list[Exchange], f: _Facts, judged: frozenset[int] | set[int] = frozenset()
                    ) -> list[ClientFinding]:
    """ClientKeepsMemberId over ``xs`` (in send order), read from ``f = _facts(xs)``; the
    JoinGroups of seqs ``judged`` are left out (ClientIgnoresStaleErrors named them: a reset
    on an error meant for an older generation).

    Judged per connection (a TCP connection belongs to one process, and the Java client
    opens a new one after a coordinator change, markCoordinatorUnknown disconnecting; a
    restart opens new ones too): a JoinGroup without a member id and without a
    group.instance.id, sent on a connection where the process already held member id M
    (given to it by a JoinGroup answer, and carried by its last request on that connection
    or given by an answer received on it since), is
    a finding unless by then the process sent a LeaveGroup naming M or had an answer
    UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID to a request carrying M (on any of its
    connections). Not judged: a member whose session had run out (see
    :func:`_session_ran_out`), static members (maybeLeaveGroup resets their id without a
    LeaveGroup), Kafka Streams' consumers (see :data:`_STREAMS_PROTOCOL`), and a rejoin whose
    subscription names other topics than the member's last JoinGroup on the connection (an
    application that unsubscribed while unjoined, when maybeLeaveGroup sends nothing)."""
    out: list[ClientFinding] = []
    for cid, mine in f.by_client.items():
        # most processes send one JoinGroup without a member id, the first on its connection
        seen: set[str] = set()
        suspect = False
        for x in mine:
            conn = x.event.connection
            req = x.event.request
            if (type(req) is m.JoinGroupRequest and not req.member_id and req.group_instance_id is None
                    and conn in seen):
                suspect = True
                break
            seen.add(conn)
        if suspect:
            out += [c for c in _member_id_drops(cid, mine, f) if c.seq not in judged]
    return out


def _timeline(xs: Iterable[Exchange], answer: Callable[[Exchange], bool]) -> list[tuple[bool, Exchange]]:
    """``xs`` as their process lived them: each request at its send time and, where
    ``answer`` says so, its answer at its receive time (an answer before a request of the
    same instant, then by seq); True marks a request."""
    marks: list[tuple[float, int, int, Exchange]] = []
    for x in xs:
        marks.append((x.sent, 1, x.seq, x))
        if answer(x):
            marks.append((x.received, 0, x.seq, x))
    marks.sort(key=lambda t: (t[0], t[1], t[2]))
    return [(is_request == 1, x) for _, is_request, _, x in marks]


def _gives_id(x: Exchange) -> bool:
    """Whether ``x`` is a JoinGroup answered with a member id for the member to use."""
    resp = x.event.response
    return (type(resp) is m.JoinGroupResponse and bool(resp.member_id) and resp.error in _GIVES_ID
            and x.event.received_ms is not None)


def _member_id_drops(cid: str, mine: list[Exchange], f: _Facts) -> list[ClientFinding]:
    out: list[ClientFinding] = []
    #: the member ids the coordinator gave this process, and when it first did: a request
    #: carrying an id not yet given to it (a tool sending other members' ids, a recording
    #: that starts mid-way) is not judged, nor is an id given to a static member
    given: dict[str, float] = {}
    static: set[str] = set()
    by_conn: dict[str, list[Exchange]] = {}
    for x in mine:
        by_conn.setdefault(x.event.connection, []).append(x)
        if _gives_id(x):
            resp = x.event.response
            assert isinstance(resp, m.JoinGroupResponse)
            if x.received < given.get(resp.member_id, _INF):
                given[resp.member_id] = x.received
            if getattr(x.event.request, "group_instance_id", None) is not None:
                static.add(resp.member_id)
    for conn_xs in by_conn.values():
        held = ""
        since: Exchange | None = None  # where the process showed ``held`` on this connection
        held_at = 0.0  # when
        topics: tuple[str, ...] | None = None
        for is_request, x in _timeline(conn_xs, _gives_id):
            req = x.event.request
            if not is_request:
                resp = x.event.response
                assert isinstance(resp, m.JoinGroupResponse)
                held, since, held_at = resp.member_id, x, x.received
                continue
            if isinstance(req, m.LeaveGroupRequest):
                if any(mi.member_id == held for mi in req.members):
                    held, since = "", None
                continue
            member = getattr(req, "member_id", None)
            if not isinstance(req, m.JoinGroupRequest):
                if isinstance(member, str) and member:
                    if member != held:
                        held_at = x.sent
                    held, since = (member, x) if given.get(member, _INF) <= x.sent else ("", None)
                continue
            subs = _subscriptions(req)
            now_topics = tuple(sorted(subs[0][1].topics)) if subs else None
            last_topics, topics = topics, now_topics
            if req.member_id or req.group_instance_id is not None:
                if req.member_id != held:
                    held_at = x.sent
                held, since = (req.member_id, x) if given.get(req.member_id, _INF) <= x.sent else ("", None)
                continue
            if (held and since is not None and held not in static
                    and not any(p.name == _STREAMS_PROTOCOL for p in req.protocols)
                    and (last_topics is None or now_topics is None or last_topics == now_topics)
                    and not _gave_up(held, held_at, x, mine, f)
                    and not _session_ran_out(held, x, mine)):
                out.append(_finding(
                    x, "ClientKeepsMemberId", "JoinGroup without a member id",
                    f"a rejoin as {held}: only UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID or leaving the group "
                    "drops a member id",
                    f"{cid} held member id {held} on connection {x.event.connection} "
                    f"({since.event.api} seq {since.seq}){_last_error(held, x, mine, f)}; "
                    "no LeaveGroup or UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID answer for it came before "
                    f"this JoinGroup at {x.sent:.0f} ms",
                ))
            held, since = "", None
    return out


def _gave_up(member: str, held_at: float, join: Exchange, mine: list[Exchange], f: _Facts) -> bool:
    """Whether the process left as ``member`` or was told it is unknown or fenced by the
    time ``join`` was sent; or was told UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID for another
    request of its around the time it came to hold ``member`` (``held_at``, within the
    slack) or since: a client resetting on an error meant for an older id (librdkafka does,
    for a heartbeat still in flight as it rejoins) resets on a stale error, which is
    ClientIgnoresStaleErrors' to judge, not a loss without a word."""
    for z in mine:
        req = z.event.request
        if isinstance(req, m.LeaveGroupRequest):
            if z.sent <= join.sent and any(mi.member_id == member for mi in req.members):
                return True
        elif (z.received <= join.sent and f.error(z) in (_UNKNOWN_MEMBER_ID, _FENCED_INSTANCE_ID)
              and (getattr(req, "member_id", None) == member or z.received >= held_at - SLACK_MS)):
            return True
    return False


def _session_ran_out(member: str, join: Exchange, mine: list[Exchange]) -> bool:
    """Whether ``member``'s session had run out by the time ``join`` was sent: longer than
    the session timeout of its last JoinGroup since an answer without error to a request
    that carried it (or the JoinGroup answer that gave it). The coordinator has removed such a member (session expiry), and a
    client may drop the id (librdkafka does on its own session timeout; the Java client
    rejoins with it and is told UNKNOWN_MEMBER_ID): not KAFKA-13419's loss of a live id."""
    last_ok = None
    session = None
    for z in mine:
        if z.sent >= join.sent:
            break
        req = z.event.request
        if isinstance(req, m.JoinGroupRequest):
            session = req.session_timeout_ms
        resp = z.event.response
        if z.received <= join.sent and (last_ok is None or z.received > last_ok) and (
                (getattr(req, "member_id", None) == member and getattr(resp, "error", None) is _NONE)
                or (type(resp) is m.JoinGroupResponse and resp.member_id == member and resp.error in _GIVES_ID)):
            last_ok = z.received
    return last_ok is None or session is None or join.sent - last_ok > session


def _last_error(member: str, join: Exchange, mine: list[Exchange], f: _Facts) -> str:
    """The last error answering a request carrying ``member`` before ``join`` (text)."""
    last: Exchange | None = None
    for z in mine:
        err = f.error(z)
        if (err is not None and err is not _NONE and z.received <= join.sent
                and getattr(z.event.request, "member_id", None) == member
                and (last is None or z.received >= last.received)):
            last = z
    if last is None:
        return ""
    err = f.error(last)
    assert err is not None
    return f"; its last error was {err.name} answering {last.event.api} seq {last.seq} at {last.received:.0f} ms"


# ------------------------------------------------------------------ the leader's SyncGroup
def leader_syncs(xs: list[Exchange]) -> list[ClientFinding]:
    """LeaderSyncsItsGeneration over ``xs`` (in send order): a member told it leads
    generation G (a JoinGroup answered NONE whose leader is its own member id) sends SyncGroup
    G before its next JoinGroup on that connection: AbstractCoordinator's
    JoinGroupResponseHandler runs onLeaderElected (the assignment, then SyncGroup) before
    anything else can rejoin; KAFKA-13406's leader failed its own assignment's validation
    and rejoined instead, again and again. Not judged: a member that sent a LeaveGroup
    meanwhile (the answer then finds it unjoined: UnjoinedGroupException), or whose next
    request on that connection is a LeaveGroup (close, the poll timeout)."""
    by_conn: dict[str, list[Exchange]] = {}
    for x in xs:
        t = type(x.event.request)
        if t is m.JoinGroupRequest or t is m.SyncGroupRequest or t is m.LeaveGroupRequest:
            by_conn.setdefault(x.event.connection, []).append(x)
    out: list[ClientFinding] = []
    for mine in by_conn.values():
        for i, x in enumerate(mine):
            resp = x.event.response
            if (type(resp) is not m.JoinGroupResponse or resp.error is not _NONE or not resp.member_id
                    or resp.leader != resp.member_id):
                continue
            later = [y for y in mine[i + 1:] if y.sent >= x.received]
            if any(type(y.event.request) is m.LeaveGroupRequest and y.sent < x.received for y in mine[i + 1:]):
                continue
            if not later:
                continue
            y = later[0]
            req = y.event.request
            if type(req) is m.SyncGroupRequest and req.generation_id == resp.generation_id:
                continue
            if type(req) is not m.JoinGroupRequest:
                continue  # a LeaveGroup, or a SyncGroup of another generation (judged elsewhere)
            out.append(_finding(
                y, "LeaderSyncsItsGeneration", "JoinGroup before the leader's SyncGroup",
                f"SyncGroup of generation {resp.generation_id} with the leader's assignment",
                f"JoinGroup seq {x.seq} made {resp.member_id} leader of generation {resp.generation_id} at "
                f"{x.received:.0f} ms; its next JoinGroup went out at {y.sent:.0f} ms with no SyncGroup between "
                "(KAFKA-13406)",
            ))
    return out


# ------------------------------------------------------------------ KIP-848 member epochs
#: answers that put a consumer-protocol member out of the group (transitionToFenced)
_OUT_OF_GROUP = (Error.FENCED_MEMBER_EPOCH, _UNKNOWN_MEMBER_ID)


def _answered(x: Exchange) -> bool:
    return x.event.response is not None


def rejoins_at_epoch_zero(xs: list[Exchange]) -> list[ClientFinding]:
    """ConsumerClientRejoinsAtZero over ``xs``: per member id, its ConsumerGroupHeartbeats
    and their answers in time order (an answer before a request sent in its millisecond).
    FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID puts the member out of the group
    (AbstractMembershipManager.transitionToFenced: FENCED, resetEpoch to 0, no heartbeat
    while FENCED, shouldSkipHeartbeat), and so does its leave (epoch -1 or -2) answered NONE
    (UNSUBSCRIBED; a new subscription rejoins through transitionToJoining, resetEpoch). Out
    of the group its next heartbeat more than :data:`SLACK_MS` later is a join, epoch 0: a
    positive epoch after fencing is KAFKA-16251 (heartbeats with the fenced epoch while the
    lost-partitions callback ran), a positive one after leaving too, and a leave epoch
    carrying what a join carries (a rebalance timeout, a subscription) KAFKA-19335 (the
    rejoin sent as a leave, epoch -1). A bare leave after fencing or after leaving is let
    be (the Java client sends none, AbstractMembershipManager.leaveGroup, but another
    client's unsubscribe and close may send two)."""
    mine: dict[str, list[Exchange]] = {}
    for x in xs:
        req = x.event.request
        if type(req) is ConsumerGroupHeartbeatRequest and req.member_id:
            mine.setdefault(req.member_id, []).append(x)
    out: list[ClientFinding] = []
    for member, beats in mine.items():
        timeline = _timeline(beats, _answered)
        if len(timeline) < 3:
            continue  # a join and its answer: nothing to judge after
        why: Exchange | None = None  # the answer that put the member out of the group
        joined_at = -_INF  # when the member last sent a join (epoch 0)
        for is_request, x in timeline:
            req = x.event.request
            assert isinstance(req, ConsumerGroupHeartbeatRequest)
            if not is_request:
                # an answer to a request sent before the member's last join says nothing of
                # it now (the Java client rejoins as soon as it has sent its leave)
                err = getattr(x.event.response, "error", None)
                if x.sent >= joined_at and (err in _OUT_OF_GROUP or (err is _NONE and req.member_epoch < 0)):
                    why = x
                continue
            epoch = req.member_epoch
            if epoch == 0:
                why, joined_at = None, x.sent
                continue
            if why is None:
                continue
            if x.sent <= why.received + SLACK_MS:
                continue
            left = why.event.request.member_epoch < 0  # type: ignore[union-attr]
            # after a leave, a leave again is let be unless it carries what a join does
            # (KAFKA-19335's rejoin: a JOINING member's full request with the leave's epoch)
            joining = (req.rebalance_timeout_ms != -1 or req.subscribed_topic_names is not None
                       or req.subscribed_topic_regex is not None)
            if epoch > 0 or (left and joining):
                answer = getattr(why.event.response, "error", None)
                name = answer.name if isinstance(answer, Error) else str(answer)
                how = (f"its leave (epoch {why.event.request.member_epoch}, seq {why.seq}) was answered {name}"  # type: ignore[union-attr]
                       if left else f"{name} answered its heartbeat seq {why.seq} at {why.received:.0f} ms")
                out.append(_finding(
                    x, "ConsumerClientRejoinsAtZero", f"ConsumerGroupHeartbeat as {member} at epoch {epoch}",
                    "a join at epoch 0 (the member is out of the group)",
                    f"{how}; the next heartbeat, sent at {x.sent:.0f} ms, carries epoch {epoch}"
                    + (" (KAFKA-19335)" if left else " (KAFKA-16251)"),
                ))
                why = None  # one finding per time out of the group
    return out


def heartbeats_valid(xs: list[Exchange]) -> list[ClientFinding]:
    """ConsumerClientRequestValid over ``xs``: each ConsumerGroupHeartbeat judged by the
    checks the coordinator service makes before it looks at any group
    (:func:`groupspec.coordinator.consumer.heartbeat.request_error`,
    GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid). One the broker
    must refuse as INVALID_REQUEST is the client's deviation, whatever the broker answered
    (the replay judges the answer): the Java client sends every field its epoch requires
    (a join at epoch 0 is a full request: KAFKA-16190). An unknown server assignor
    (UNSUPPORTED_ASSIGNOR) is a setting the broker lacks, not judged here."""
    out: list[ClientFinding] = []
    for x in xs:
        req = x.event.request
        if type(req) is not ConsumerGroupHeartbeatRequest:
            continue
        bad = request_error(req, ())
        if bad is None or bad.error is not Error.INVALID_REQUEST:
            continue
        out.append(_finding(
            x, "ConsumerClientRequestValid",
            f"ConsumerGroupHeartbeat as {req.member_id or '(no member id)'} at epoch {req.member_epoch}",
            "a request with every field its epoch requires",
            f"the coordinator must refuse it as INVALID_REQUEST: {bad.message}",
        ))
    return out


# ------------------------------------------------------------------ heartbeat cadence
def heartbeat_cadence(xs: list[Exchange], f: _Facts) -> list[ClientFinding]:
    """HeartbeatKeepsSessionAlive over ``xs`` (in send order), read from ``f = _facts(xs)``:
    each process's exchanges, in send order."""
    out: list[ClientFinding] = []
    errors = f.errors  # (f.error, without a call per exchange)
    for cid, mine in sorted(f.by_client.items()):
        if cid in f.ambiguous:
            continue
        session = None
        last: Exchange | None = None  # the last session-refreshing request while in a generation
        gaps: list[tuple[Exchange, Exchange]] = []
        for x in mine:
            req = x.event.request
            err = errors.get(id(x), _NONE)
            if isinstance(req, m.JoinGroupRequest):
                session = req.session_timeout_ms
                last = None  # rejoining: the join phase has its own timeout
            elif isinstance(req, m.FindCoordinatorRequest) or err in (_NOT_COORDINATOR, _COORDINATOR_NOT_AVAILABLE):
                last = None  # looking for the coordinator: no heartbeats to send
            elif isinstance(req, m.LeaveGroupRequest):
                last = None
            elif isinstance(req, (m.SyncGroupRequest, m.HeartbeatRequest)):
                if last is not None and session is not None and x.sent - last.sent > session:
                    gaps.append((last, x))
                # a member told to rejoin (or whose SyncGroup failed) stops heartbeating until it has
                last = None if _fencing(err) or (isinstance(req, m.SyncGroupRequest) and err is not _NONE) else x
        if len(gaps) >= CADENCE_GAPS and session is not None:
            first, x = gaps[CADENCE_GAPS - 1]
            out.append(_finding(
                x, "HeartbeatKeepsSessionAlive",
                f"{len(gaps)} gaps longer than the session timeout ({session} ms)",
                "a heartbeat at least once per session timeout",
                f"{cid} let {len(gaps)} gaps exceed its session timeout of {session} ms, e.g. "
                f"{x.sent - first.sent:.0f} ms from seq {first.seq} to seq {x.seq}",
            ))
    return out


# ------------------------------------------------------------------ fetches
@dataclass
class _Ownership:
    """A process's owned partitions over time: (from time, partitions) steps."""

    steps: list[tuple[float, frozenset[TP]]] = field(default_factory=list)

    def step(self, at: float, parts: Iterable[TP]) -> None:
        self.steps.append((at, frozenset(parts)))

    def owned_within(self, start: float, end: float) -> set[TP]:
        out: set[TP] = set()
        current: frozenset[TP] = frozenset()
        for at, parts in self.steps:
            if at <= start:
                current = parts
            elif at <= end:
                out |= parts
        return out | current


def _ownership(mine: list[Exchange], f: _Facts) -> tuple[_Ownership, float | None]:
    """The process's ownership steps, and when it first joined (None: never)."""
    steps: list[tuple[float, int, Any]] = []
    for x in mine:
        req, resp = x.event.request, x.event.response
        if isinstance(req, (m.JoinGroupRequest, m.LeaveGroupRequest)):
            steps.append((x.sent, 0, x))
        if resp is not None:
            steps.append((x.received, 1, x))
    steps.sort(key=lambda s: (s[0], s[1], s[2].seq))
    own = _Ownership()
    owned: set[TP] = set()
    joined: float | None = None
    generation = -1
    told: float | None = None  # when it was told of a rebalance in this generation
    for at, phase, x in steps:
        req, resp = x.event.request, x.event.response
        if phase == 0 and isinstance(req, m.JoinGroupRequest):
            joined = at if joined is None else joined
            subs = _subscriptions(req)
            kind = _protocol_kind(name for name, _ in subs)
            if kind != "eager" and subs:
                # a cooperative member keeps what it reports owned; so may one of an
                # assignor the validator does not know (Kafka Streams' "stream" is
                # cooperative: the protocol is what all the assignors support,
                # ConsumerCoordinator's constructor), and an eager client reports nothing
                # here, having revoked it all in onJoinPrepare
                owned &= pairs(subs[0][1].owned_partitions)
            else:
                owned = set()
        elif phase == 0:
            owned = set()  # LeaveGroup
        elif isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE:
            generation, told = resp.generation_id, None
            continue
        elif isinstance(resp, m.SyncGroupResponse) and isinstance(req, m.SyncGroupRequest) and resp.error is _NONE:
            # this answer's own assignment (a classic member of a consumer group gets
            # several at one generation, its member epoch)
            got = decode_assignment(resp.assignment)
            owned = set(got) if got is not None else owned
        elif (_fencing(err := _error(resp)) and getattr(req, "generation_id", generation) == generation
              and not _keeps_generation(req, err)):
            if _join_prepare_commit(x, told):
                # the call goes on with the generation it began with; the JoinGroup that
                # follows says what is kept (cooperative)
                continue
            owned = set()  # the generation is reset: partitions lost
        else:
            told = _told(x, _error(resp), generation, told)
            continue
        own.step(at, owned)
    return own, joined


def _named(tps: Iterable[HeartbeatTopicPartitions], names: Mapping[TopicId, str]) -> set[TP] | None:
    """A ConsumerGroupHeartbeat's partitions by topic name (None: a topic id the trace's
    metadata does not name)."""
    out: set[TP] = set()
    for t in tps:
        name = names.get(t.topic_id)
        if name is None:
            return None
        out.update((name, p) for p in t.partitions)
    return out


def _interleaved(ids: list[str]) -> bool:
    """Whether a client id's member ids (in send order) interleave: two processes sharing the
    client id, rather than one after the other."""
    done: set[str] = set()
    last = None
    for member in ids:
        if member != last:
            if member in done:
                return True
            if last is not None:
                done.add(last)
            last = member
    return False


def _consumer_ownership(mine: list[Exchange], names: Mapping[TopicId, str]) -> tuple[_Ownership, float | None] | None:
    """A consumer-protocol (KIP-848) process's ownership steps and when it first joined, from
    its ConsumerGroupHeartbeats; None when they cannot be followed (a topic id the metadata
    does not name, two processes sharing the client id). The Java client
    (ConsumerMembershipManager, AbstractMembershipManager) owns at any time at most what it
    last reported owning (the request's TopicPartitions, sent only when they changed) and
    the last assignment the coordinator sent it: reconciling, it stops fetching the
    partitions to revoke before it reports them gone, and starts fetching the added ones
    before it reports them. It owns nothing when it joins at epoch 0 unless it reports
    partitions (after a fencing it clears its assignment before rejoining, and a new
    process has none) nor when it leaves (it releases everything before the leave's
    heartbeat). A fencing answer changes nothing by itself: the partitions are lost once
    onPartitionsLost has run, which the epoch-0 rejoin follows."""
    beats = [x for x in mine if isinstance(x.event.request, ConsumerGroupHeartbeatRequest)]
    if not beats or any(isinstance(x.event.request, m.JoinGroupRequest) for x in mine):
        return None  # the client id is a classic member's too: not followed here
    requests = [x.event.request for x in beats]
    if _interleaved([r.member_id for r in requests if isinstance(r, ConsumerGroupHeartbeatRequest) and r.member_id]):
        return None
    steps: list[tuple[float, int, Exchange]] = []
    for x in beats:
        steps.append((x.sent, 0, x))
        if isinstance(x.event.response, ConsumerGroupHeartbeatResponse):
            steps.append((x.received, 1, x))
    steps.sort(key=lambda s: (s[0], s[1], s[2].seq))
    own = _Ownership()
    reported: set[TP] = set()
    target: set[TP] = set()
    joined: float | None = None
    for at, phase, x in steps:
        req, resp = x.event.request, x.event.response
        assert isinstance(req, ConsumerGroupHeartbeatRequest)
        if phase == 0:
            got = set() if req.topic_partitions is None else _named(req.topic_partitions, names)
            if got is None:
                return None
            if req.member_epoch == 0:
                joined = at if joined is None else joined
                reported, target = got, set()
            elif req.member_epoch < 0:
                reported, target = set(), set()  # a leave: everything released before it
            elif req.topic_partitions is not None:
                reported = got
            else:
                continue
        else:
            assert isinstance(resp, ConsumerGroupHeartbeatResponse)
            if resp.error is not _NONE or resp.assignment is None:
                continue
            got = _named(resp.assignment.topic_partitions, names)
            if got is None:
                return None
            target = got
        own.step(at, reported | target)
    return own, joined


def fetches_owned_only(g: GroupTrace, f: _Facts, names: Mapping[TopicId, str] | None = None) -> list[ClientFinding]:
    """ClientFetchesOwnedOnly: classic members by their JoinGroup and SyncGroup exchanges
    (:func:`_ownership`), consumer-protocol members by their ConsumerGroupHeartbeats
    (:func:`_consumer_ownership`, which needs ``names``, the trace's topic ids by name)."""
    out: list[ClientFinding] = []
    if not g.fetches:
        return out
    by_client: dict[str, list[Exchange]] = {}
    for x in g.exchanges:
        by_client.setdefault(x.event.client_id, []).append(x)
    cache: dict[str, tuple[_Ownership, float | None] | None] = {}
    reported: set[tuple[str, TP]] = set()
    for line, fe in sorted(g.fetches, key=lambda lf: (lf[1].sent_ms, lf[1].seq)):
        cid = fe.client_id
        if cid in f.ambiguous or cid not in by_client:
            continue
        if cid not in cache:
            mine = sorted(by_client[cid], key=lambda x: x.sent)
            if any(isinstance(x.event.request, ConsumerGroupHeartbeatRequest) for x in mine):
                cache[cid] = _consumer_ownership(mine, names) if names else None
            else:
                cache[cid] = _ownership(mine, f)
        followed = cache[cid]
        if followed is None:
            continue
        own, joined = followed
        if joined is None or fe.sent_ms < joined:
            continue
        asked = {(p.topic, p.partition) for p in fe.partitions}
        extra = asked - own.owned_within(fe.sent_ms - SLACK_MS, fe.sent_ms)
        extra = {tp for tp in extra if (cid, tp) not in reported}
        if extra:
            reported |= {(cid, tp) for tp in extra}
            offsets = {(p.topic, p.partition): p.fetch_offset for p in fe.partitions}
            out.append(_fetch_finding(line, fe, extra, offsets))
    return out


def _fetch_finding(line: int, fe: FetchEvent, extra: set[TP], offsets: dict[TP, int]) -> ClientFinding:
    what = ", ".join(f"{t}-{p}@{offsets[(t, p)]}" for t, p in sorted(extra))
    return ClientFinding(
        fe.seq, line, RULES["ClientFetchesOwnedOnly"], f"Fetch of {what}",
        "fetches of owned partitions only", f"{fe.client_id}{f' ({fe.member_id})' if fe.member_id else ''} "
        f"fetches {what} at {fe.sent_ms:.0f} ms, which it did not own then (not assigned, revoked, or given up "
        f"before rejoining): records another member may consume too",
        "Fetch", fe.connection, fe.client_id,
    )


#: the order the rules read a group's exchanges in: by send time, then seq
_SENT_SEQ = attrgetter("sent", "seq")


def client_findings(g: GroupTrace, replay: object | None = None,
                    topic_names: Mapping[TopicId, str] | None = None) -> list[ClientFinding]:
    """Every client-side finding of one group, by seq. ``replay`` is the replay's result
    (unused yet: the rules need only the exchanges' own answers); ``topic_names``: the
    trace's topic ids by name (its metadata events), without which a consumer-protocol
    member's fetches are not judged (its assignments name topics by id)."""
    xs = sorted(g.exchanges, key=_SENT_SEQ)
    f = _facts(xs)
    stale = ignores_stale_errors(xs, f)
    out = (
        fetches_owned_only(g, f, topic_names)
        + commits_owned_only(xs, f)
        + reported_ownership(xs, f)
        + stops_when_fenced(xs, f)
        + stale
        + keeps_member_id(xs, f, judged={c.seq for c in stale})
        + leader_syncs(xs)
        + rejoins_at_epoch_zero(xs)
        + heartbeats_valid(xs)
        + heartbeat_cadence(xs, f)
    )
    return sorted(out, key=lambda c: (c.seq, c.rule.name))

"""Checks that need no replay: evidence in the trace that is a violation whatever order the
requests were handled in and whatever the broker's configuration.

- StaleCommitAccepted: an OffsetCommit accepted (some partition NONE) although a JoinGroup
  response of a *newer* generation had already been received before the commit was sent:
  the group was past the commit's generation when it arrived (ClassicGroup.validateOffsetCommit
  compares the generation exactly). In a group with consumer-protocol (KIP-848) members,
  per member: an epoch below the one that member id was last given.
- OneOwnerPerGenerationInv: two members handed the same partition in SyncGroup results of
  one generation (owners are group.instance.ids for static members, which keep their
  assignment across a replacement, KIP-345).
- The assignor contract, on the leader's SyncGroup: partitions of subscribed topics only,
  no partition twice, and for cooperative assignors no partition handed to a member while
  another member with a valid claim still owns it (KIP-429; ConsumerCoordinator
  validateCooperativeAssignment). The assignment itself is the leader's choice: any
  assignment that keeps the contract conforms.
- The record invariants of :mod:`groupspec.invariants`, when the trace carries reference
  records (simulator traces).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import lru_cache

from groupspec.assignors.cooperative_sticky import premature_handovers
from groupspec.invariants import InvariantMonitor, check_state
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.consumer_protocol import Assignment, Subscription, pairs
from groupspec.protocol.errors import Error
from groupspec.protocol.records import (
    CoordinatorUnloaded,
    GroupCreated,
    GroupLoaded,
    HeartbeatScheduled,
    OffsetCommitted,
)
from groupspec.protocol.wire import DecodeError
from groupspec.trace.events import ClosedEvent, RecordEvent
from groupspec.validate.compare import summary
from groupspec.validate.grouping import Exchange
from groupspec.validate.rules import RULES, Rule

#: Error members bound once: looking one up on its Enum class costs as much
#: as a function call, and these are read for nearly every event
_NONE = Error.NONE

TP = tuple[str, int]

#: assignors that follow the cooperative protocol (RebalanceProtocol.COOPERATIVE)
COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})


@dataclass(frozen=True)
class Finding:
    seq: int
    line: int
    rule: Rule
    broker: str
    allowed: str
    detail: str
    api: str = ""
    connection: str = ""
    client_id: str = ""


def _finding(x: Exchange, rule: str, allowed: str, detail: str) -> Finding:
    e = x.event
    return Finding(x.seq, x.line, RULES[rule], summary(e.response), allowed, detail,
                   e.api, e.connection, e.client_id)


def closed_unanswered(closed: list[tuple[Exchange, ClosedEvent]]) -> list[Finding]:
    """The group's requests the broker closed their connection on without answering, while
    it stayed up (grouping.closed_unanswered): rule AnsweredBeforeClose."""
    out = []
    for x, close in closed:
        e = x.event
        out.append(Finding(
            x.seq, x.line, RULES["AnsweredBeforeClose"],
            f"{e.api} v{e.api_version} unanswered; the broker closed connection {e.connection}",
            f"an answer to {e.api} v{e.api_version} (Kafka answers every request it can parse)",
            f"{e.api} sent at {x.sent:.0f} ms on connection {e.connection} was never answered: the broker "
            f"closed the connection at {close.at_ms:.0f} ms with {close.pending} request(s) of groups "
            "pending, and closed no idle connection near then (not a shutdown)",
            e.api, e.connection, e.client_id))
    return out


#: the member epochs of a ConsumerGroupHeartbeat that leaves the group (dynamic, static)
_LEAVE_EPOCHS = (-1, -2)


def heartbeat_intervals(exchanges: list[Exchange], interval_ms: int | None) -> list[Finding]:
    """ConsumerHeartbeatInterval: each accepted ConsumerGroupHeartbeat tells the member the
    group's heartbeat interval, ``interval_ms`` (None: the broker's setting is not known, and
    nothing is judged). Kafka sets it on every answer of consumerGroupHeartbeat (the group's
    consumer.heartbeat.interval.ms, else group.consumer.heartbeat.interval.ms:
    GroupMetadataManager.consumerGroupHeartbeatIntervalMs) and none (0) on a leave's
    (consumerGroupLeave, epoch -1, and the static member's temporary leave, epoch -2). What
    the answer must say follows from the request and the configuration alone, whatever the
    order of the requests, so it is judged without the replay (which does not compare it:
    a search for an order that explains it could only find a worse explanation). An error
    answer's interval is not judged (the service layer's error response leaves it 0). When
    the setting is not known, a leave's answer must still carry 0 and any other accepted
    answer a positive interval (group.consumer.heartbeat.interval.ms and a group's
    consumer.heartbeat.interval.ms are at least 1: GroupCoordinatorConfig, GroupConfig)."""
    out = []
    for x in exchanges:
        e = x.event
        req, resp = e.request, e.response
        if (not isinstance(req, ConsumerGroupHeartbeatRequest) or not isinstance(resp, ConsumerGroupHeartbeatResponse)
                or resp.error is not _NONE):
            continue
        leave = req.member_epoch in _LEAVE_EPOCHS
        got = resp.heartbeat_interval_ms
        want = 0 if leave else interval_ms
        if got == want or (want is None and got >= 1):
            continue
        if leave:
            what = "a leave's answer carries no interval (0)"
            how = (f"the broker answered the leave of {req.member_id} (epoch {req.member_epoch}) with heartbeat "
                   f"interval {got} ms; Kafka sets none on a leave's answer")
        else:
            what = f"heartbeat_interval_ms {want}" if want is not None else "a positive heartbeat_interval_ms"
            how = (f"the broker told {resp.member_id or req.member_id} to heartbeat every {got} ms; "
                   + (f"the group's interval is {want} ms" if want is not None else
                      "an interval is at least 1 ms (the broker's setting is not known)"))
        out.append(Finding(x.seq, x.line, RULES["ConsumerHeartbeatInterval"],
                           f"{summary(resp)} heartbeat_interval_ms={got}", what, how,
                           e.api, e.connection, e.client_id))
    return out


def _commit_timeline(exchanges: list[Exchange], answers: tuple[type, ...]) -> list[tuple[float, int, Exchange]]:
    """The commits (kind 0, at their send time), the answers of types ``answers`` that gave a
    generation or epoch (kind 1) and the DeleteGroups that deleted a group (kind 2), at their
    receive time, in time order; at equal times a commit comes first: only a response
    received strictly before it counts."""
    timeline: list[tuple[float, int, Exchange]] = []
    for x in exchanges:
        e = x.event
        if isinstance(e.request, m.OffsetCommitRequest):
            timeline.append((x.sent, 0, x))
        elif isinstance(e.response, answers) and getattr(e.response, "error", None) is _NONE:
            timeline.append((x.received, 1, x))
        elif isinstance(e.response, m.DeleteGroupsResponse) and any(
            r.error is _NONE for r in e.response.results
        ):
            timeline.append((x.received, 2, x))
    timeline.sort(key=lambda t: (t[0], t[1], t[2].seq))
    return timeline


def stale_commits_accepted(exchanges: list[Exchange]) -> list[Finding]:
    if any(isinstance(x.event.request, ConsumerGroupHeartbeatRequest) for x in exchanges):
        return _stale_member_commits_accepted(exchanges)
    timeline = _commit_timeline(exchanges, (m.JoinGroupResponse,))
    newest = -1
    newest_at: Exchange | None = None
    out: list[Finding] = []
    for _, kind, x in timeline:
        e = x.event
        if kind == 1:
            assert isinstance(e.response, m.JoinGroupResponse)
            if e.response.generation_id > newest:
                newest, newest_at = e.response.generation_id, x
        elif kind == 2:
            newest, newest_at = -1, None  # a deleted group starts again at generation 0
        else:
            req, resp = e.request, e.response
            assert isinstance(req, m.OffsetCommitRequest)
            if not isinstance(resp, m.OffsetCommitResponse) or req.generation_id < 0:
                continue
            accepted = [p for p in resp.partitions if p.error is _NONE]
            if accepted and req.generation_id < newest and newest_at is not None:
                out.append(_finding(
                    x, "StaleCommitAccepted", "ILLEGAL_GENERATION (or another rejection)",
                    f"commit from {req.member_id} with generation {req.generation_id} accepted for "
                    f"{', '.join(f'{p.topic}-{p.partition}' for p in accepted)}, but generation "
                    f"{newest} had completed (JoinGroup response seq {newest_at.seq}, received "
                    f"{newest_at.received:.0f} ms) before the commit was sent at {x.sent:.0f} ms",
                ))
    return out


def _stale_member_commits_accepted(exchanges: list[Exchange]) -> list[Finding]:
    """StaleCommitAccepted in a group some member of which speaks the consumer protocol
    (KIP-848): a consumer group has no generation its members share. A member's commit must
    carry its own member epoch, whichever protocol it speaks (ConsumerGroup.
    validateOffsetCommit, validateMemberEpoch: exactly, in Kafka 4.1), a classic member's
    generation being its member epoch (classicGroupJoinToConsumerGroup answers it). A
    member's epoch does not go back while it is a member (a rejoin, a conversion either way
    keeps or raises it), so a commit accepted with less than the generation the same
    classic member was last given (a JoinGroup answer received before the commit was sent)
    was stale. A consumer-protocol member's stale commit is left to the replay, whose rule
    (CommitMemberEpoch) names Kafka's answer, STALE_MEMBER_EPOCH. Other members' epochs say
    nothing about it, so the group-wide rule of classic groups does not apply to the whole
    trace."""
    timeline = _commit_timeline(exchanges, (m.JoinGroupResponse, ConsumerGroupHeartbeatResponse))
    given: dict[str, tuple[int, Exchange]] = {}  # member id -> the epoch last given, where
    out: list[Finding] = []
    for _, kind, x in timeline:
        e = x.event
        resp = e.response
        if kind == 1:
            if isinstance(resp, m.JoinGroupResponse):
                given[resp.member_id] = (resp.generation_id, x)
            elif isinstance(resp, ConsumerGroupHeartbeatResponse) and resp.member_id:
                # the member speaks the consumer protocol now: its commits are the replay's
                # to judge (CommitMemberEpoch names a STALE_MEMBER_EPOCH Kafka would answer)
                given.pop(resp.member_id, None)
        elif kind == 2:
            given.clear()
        else:
            req = e.request
            assert isinstance(req, m.OffsetCommitRequest)
            if not isinstance(resp, m.OffsetCommitResponse) or req.generation_id < 0:
                continue
            last = given.get(req.member_id)
            accepted = [p for p in resp.partitions if p.error is _NONE]
            if accepted and last is not None and req.generation_id < last[0]:
                epoch, at = last
                out.append(_finding(
                    x, "StaleCommitAccepted", "ILLEGAL_GENERATION (or another rejection)",
                    f"commit from {req.member_id} with generation {req.generation_id} accepted for "
                    f"{', '.join(f'{p.topic}-{p.partition}' for p in accepted)}, but the member had "
                    f"been given generation {epoch} (seq {at.seq}, received {at.received:.0f} ms) before "
                    f"the commit was sent at {x.sent:.0f} ms",
                ))
    return out


@lru_cache(maxsize=4096)
def _assignment(data: bytes) -> Assignment | None:
    """``Assignment.decode(data)``, None when it does not decode. Remembered: the same bytes
    come in the leader's SyncGroup and in its member's answer, and several rules (here and
    in :mod:`.client_rules`) read each; the objects are only read, never changed."""
    try:
        return Assignment.decode(data)
    except (DecodeError, ValueError):
        return None


@lru_cache(maxsize=4096)
def subscription(data: bytes) -> Subscription | None:
    """``Subscription.decode(data)`` (a JoinGroup protocol's metadata), None when it does
    not decode; remembered as :func:`_assignment` (a member's JoinGroup and the leader's
    member list carry the same bytes)."""
    try:
        return Subscription.decode(data)
    except (DecodeError, ValueError):
        return None


def decode_assignment(data: bytes) -> set[TP] | None:
    """The partitions an assignment's bytes give (a new set), None when they do not decode."""
    got = _assignment(data)
    return None if got is None else pairs(got.partitions)


def one_owner_per_generation(exchanges: list[Exchange]) -> list[Finding]:
    owners: dict[int, dict[TP, tuple[str, Exchange]]] = {}
    out: list[Finding] = []
    # a static member is its group.instance.id, whether or not a request names it: the
    # member id a JoinGroup answered NONE gave an instance (a SyncGroup may leave the
    # instance id out, and a replaced static member keeps its assignment under a new id)
    instance_of: dict[str, str] = {}
    for x in exchanges:
        req, resp = x.event.request, x.event.response
        if (isinstance(req, m.JoinGroupRequest) and req.group_instance_id
                and isinstance(resp, m.JoinGroupResponse) and resp.error is _NONE and resp.member_id):
            instance_of.setdefault(resp.member_id, req.group_instance_id)
    syncs = [x for x in exchanges if isinstance(x.event.response, m.SyncGroupResponse)]
    for x in sorted(syncs, key=lambda x: (x.received, x.seq)):
        req, resp = x.event.request, x.event.response
        assert isinstance(req, m.SyncGroupRequest) and isinstance(resp, m.SyncGroupResponse)
        if resp.error is not _NONE:
            continue
        parts = decode_assignment(resp.assignment)
        if parts is None:
            continue
        who = req.group_instance_id or instance_of.get(req.member_id, req.member_id)
        gen = owners.setdefault(req.generation_id, {})
        clash = sorted(tp for tp in parts if tp in gen and gen[tp][0] != who)
        if clash:
            other, first = gen[clash[0]]
            out.append(_finding(
                x, "OneOwnerPerGenerationInv", f"no partition already given to another member in generation {req.generation_id}",
                f"generation {req.generation_id}: {', '.join(f'{t}-{p}' for t, p in clash)} given to "
                f"{who} and already to {other} (SyncGroup seq {first.seq})",
            ))
        for tp in parts:
            gen.setdefault(tp, (who, x))
    return out


def assignor_contract(exchanges: list[Exchange]) -> list[Finding]:
    """The leader's assignment against the subscriptions it was given for that generation."""
    joins: dict[tuple[int, str], m.JoinGroupResponse] = {}
    for x in exchanges:
        r = x.event.response
        if isinstance(r, m.JoinGroupResponse) and r.error is _NONE and r.members:
            joins[(r.generation_id, r.member_id)] = r
    out: list[Finding] = []
    for x in exchanges:
        req = x.event.request
        if not isinstance(req, m.SyncGroupRequest) or not req.assignments:
            continue
        join = joins.get((req.generation_id, req.member_id))
        if join is None:
            continue
        subs: dict[str, Subscription] = {}
        for mem in join.members:
            sub = subscription(mem.metadata)
            if sub is not None:
                subs[mem.member_id] = sub
        given: dict[str, set[TP]] = {}
        for a in req.assignments:
            parts = decode_assignment(a.assignment)
            if parts is not None:
                given[a.member_id] = parts
        f = _contract(x, join, subs, given)
        if f is not None:
            out.append(f)
    return out


def _contract(x: Exchange, join: m.JoinGroupResponse, subs: dict[str, Subscription],
              given: dict[str, set[TP]]) -> Finding | None:
    seen: dict[TP, str] = {}
    for mid in sorted(given):
        for tp in sorted(given[mid]):
            if tp in seen:
                return _finding(x, "AssignDisjoint", "each partition to at most one member",
                                f"{tp[0]}-{tp[1]} assigned to both {seen[tp]} and {mid}")
            seen[tp] = mid
    for mid, parts in sorted(given.items()):
        sub = subs.get(mid)
        if sub is None:
            continue
        extra = sorted({t for t, _ in parts} - set(sub.topics))
        if extra:
            return _finding(x, "AssignSubscribedTopicsOnly", f"only topics {sorted(sub.topics)}",
                            f"{mid} is assigned topic(s) {', '.join(extra)} it did not subscribe to")
    if join.protocol_name in COOPERATIVE_ASSIGNORS and subs:
        # Kafka 4.1's claim validation and cooperative adjustment, exactly
        # (assignors/cooperative_sticky.py premature_handovers; E2 in PROTOCOL.md section 12)
        early = premature_handovers(subs, {mid: parts for mid, parts in given.items() if mid in subs})
        if early:
            (t, p), mid, holder = early[0]
            more = f" (and {len(early) - 1} more)" if len(early) > 1 else ""
            if holder is None:
                what = (f"{t}-{p} handed to {mid} although two members claimed it in the same "
                        f"generation: Kafka gives it to nobody in this rebalance{more}")
            else:
                what = f"{t}-{p} handed to {mid} while {holder} still owns it{more}"
            return _finding(
                x, "CooperativeRevokeFirst",
                "a partition moves only after its owner revoked it (a follow-up rebalance)", what,
            )
    return None


@dataclass(frozen=True)
class RecordCoverage:
    """How far the record invariants got: records checked of the group's records, and why
    checking stopped early (a record that does not fit the state), if it did."""

    checked: int
    total: int
    stopped: str | None = None
    stopped_line: int | None = None


#: a (line, RecordEvent) pair's event, and an event's record
_EVENT = operator.itemgetter(1)
_RECORD = operator.attrgetter("record")

#: the records that (re)introduce a group after its coordinator unloaded it
_RELOADS = (GroupLoaded, GroupCreated)


def _own_unloads(records: list[tuple[int, RecordEvent]]) -> list[tuple[int, RecordEvent]]:
    """The records without the coordinator unloads that do not concern the group.

    A CoordinatorUnloaded record carries no group: in a file that merges several
    coordinators' records (a cluster), it is given to every group, though only the groups of
    the coordinator that moved were unloaded. A group was unloaded by it when its next record
    is its reload (GroupLoaded) or, for a group with nothing persisted, its re-creation
    (GroupCreated); otherwise the unload was another coordinator's, and the group's state
    goes on (GroupMetadataManager onUnloaded / onLoaded act on one coordinator's groups)."""
    # (the classes present found without a Python frame per record: most groups have no
    # unload; isinstance asked once per record class present, not once per record)
    if not any(issubclass(k, CoordinatorUnloaded)
               for k in set(map(type, map(_RECORD, map(_EVENT, records))))):
        return list(records)
    kinds = [type(item[1].record) for item in records]
    unload = {k: issubclass(k, CoordinatorUnloaded) for k in set(kinds)}
    out: list[tuple[int, RecordEvent]] = []
    # walked backwards: ``reloads`` says whether the next record that is not an unload is
    # the group's reload or re-creation (one pass, not a scan ahead from every unload)
    reloads = False
    for item, kind in zip(reversed(records), reversed(kinds), strict=True):
        if unload[kind]:
            if not reloads:
                continue
        else:
            reloads = issubclass(kind, _RELOADS)
        out.append(item)
    out.reverse()
    return out


#: record kinds that change nothing a state invariant reads (a member's or pending member's
#: session deadline, a committed offset): after a run of only these, the state invariants
#: hold if they held before it
_STATE_NEUTRAL = frozenset({HeartbeatScheduled, OffsetCommitted})


def record_invariants(records: list[tuple[int, RecordEvent]]) -> tuple[list[Finding], RecordCoverage]:
    """The record invariants over a trace's reference records, and how many were checked."""
    mon = InvariantMonitor()
    out: list[Finding] = []
    total = len(records)
    records = _own_unloads(records)
    checked = total - len(records)
    # The state invariants hold between inputs, not inside one; records of one millisecond
    # are checked as one input (they may be several: the invariants hold after each).
    # What InvariantMonitor.apply_input does for each input, with the state check left out
    # after an input of state-neutral records when the last check found nothing (it would
    # find nothing again).
    clean = False
    apply = mon.apply_records
    n = len(records)
    k = 0
    while k < n:
        line, ev = records[k]
        at = ev.at_ms
        rec = ev.record
        run = [rec]
        neutral = type(rec) in _STATE_NEUTRAL
        end = k + 1
        while end < n:
            e = records[end][1]
            if e.at_ms != at:
                break
            rec = e.record
            run.append(rec)
            if neutral and type(rec) not in _STATE_NEUTRAL:
                neutral = False
            end += 1
        try:
            found = apply(run, at)
            if not (clean and neutral):
                now = check_state(mon.state, at)
                clean = not now
                after = [v for v in now if v not in mon.violations]
                mon.violations.extend(after)
                found += after
        except Exception as e:  # a corrupt record: stop checking records, say why
            return out, RecordCoverage(checked, total,
                                       f"line {line}: a record does not fit the replayed state ({e})", line)
        checked += end - k
        k = end
        for v in found:
            rule = RULES.get(v.invariant)
            if rule is None:
                continue
            out.append(Finding(ev.seq, line, rule, f"records at {ev.at_ms} ms", "", v.detail, "record"))
    return out, RecordCoverage(checked, total)

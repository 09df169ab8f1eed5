"""Comparing a broker's response with the reference's, field by field, as far as the wire
version carries the field; and one-line summaries of responses for verdicts.

Member lists are compared as sets (Kafka iterates a HashMap; the order is not part of the
protocol). Error responses are compared by error alone: which other fields Kafka fills on
an error differs between versions and is not a rule.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
    DescribedAssignment,
    DescribedGroup,
    HeartbeatAssignment,
)
from groupspec.protocol.consumer_protocol import Assignment
from groupspec.protocol.errors import Error
from groupspec.protocol.wire import DecodeError

#: JoinGroup v9 added skipAssignment (KIP-814); LeaveGroup v3 answers per member (KIP-345).
SKIP_ASSIGNMENT_MIN_VERSION = 9
#: JoinGroup v7 added the protocol type to the response and made the protocol name nullable
#: (KIP-559)
JOIN_PROTOCOL_TYPE_MIN_VERSION = 7
#: JoinGroup v5 added each member's group instance id to the leader's member list (KIP-345)
JOIN_INSTANCE_ID_MIN_VERSION = 5
LEAVE_MEMBERS_MIN_VERSION = 3
#: SyncGroup v5 added the protocol type and name to the request and the response (KIP-559)
SYNC_PROTOCOL_MIN_VERSION = 5
#: ListGroups v4 added the states filter and each listed group's state (KIP-518), v5 the
#: types filter and each listed group's type (KIP-848)
LIST_GROUPS_STATE_MIN_VERSION = 4
LIST_GROUPS_TYPE_MIN_VERSION = 5
#: Error members bound once: looking one up on its Enum class costs as much
#: as a function call, and these are read for nearly every event
_MEMBER_ID_REQUIRED = Error.MEMBER_ID_REQUIRED
_NONE = Error.NONE
#: Answers a broker may give whenever the group's coordinator is elsewhere or moving.
COORDINATOR_ERRORS = frozenset(
    {Error.NOT_COORDINATOR, Error.COORDINATOR_NOT_AVAILABLE, Error.COORDINATOR_LOAD_IN_PROGRESS}
)


@dataclass(frozen=True)
class Mismatch:
    what: str
    #: the difference itself, where naming the field is not enough
    how: str = ""
    #: the broker knew something from before the trace started (an offset, a member)
    prehistory: bool = False
    #: the partition whose offset differs (OffsetFetch)
    partition: tuple[str, int] | None = None


#: the per-partition errors of an OffsetDelete or OffsetCommit answer that the broker's API
#: layer gives before the coordinator sees the request (KafkaApis.handleOffsetDeleteRequest,
#: handleOffsetCommitRequest, core/src/main/scala/kafka/server/KafkaApis.scala): a topic or
#: partition its metadata cache does not have, a topic the client may not read. Those
#: partitions never reach the coordinator, and the group protocol's trace cannot tell either
#: condition, so they are not judged.
API_LAYER_PARTITION_ERRORS = frozenset({Error.UNKNOWN_TOPIC_OR_PARTITION,
                                        Error.TOPIC_AUTHORIZATION_FAILED})


#: the same errors as wire codes, as a TxnOffsetCommit answer carries them
_API_LAYER_CODES = frozenset(e.code for e in API_LAYER_PARTITION_ERRORS)

#: the errors a TxnOffsetCommit gets from the transaction's verification, before the group
#: coordinator sees it (CoordinatorRuntime.scheduleTransactionalWriteOperation asks the
#: transaction coordinator, through the broker's partition writer, whether the producer's
#: transaction holds the offsets partition; the log's append checks the producer's epoch):
#: INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING,
#: CONCURRENT_TRANSACTIONS, UNKNOWN_PRODUCER_ID, PRODUCER_FENCED, TRANSACTION_ABORTABLE, by
#: wire code. Transactions are not modelled, so such an answer is taken as the broker's
#: (the request then never reached the group).
TRANSACTION_ERROR_CODES = frozenset({47, 48, 49, 51, 59, 90, 120})


def api_layer_partitions(
        resp: m.OffsetCommitResponse | m.OffsetDeleteResponse | m.TxnOffsetCommitResponse) -> set[tuple[str, int]]:
    """The partitions of ``resp`` the broker's API layer answered itself
    (API_LAYER_PARTITION_ERRORS): the replay takes them out of the request it hands the
    reference."""
    if isinstance(resp, m.TxnOffsetCommitResponse):
        return {(p.topic, p.partition) for p in resp.partitions if p.error_code in _API_LAYER_CODES}
    return {(p.topic, p.partition) for p in resp.partitions if p.error in API_LAYER_PARTITION_ERRORS}


def transaction_refused(resp: m.TxnOffsetCommitResponse) -> bool:
    """Whether the broker answered the TxnOffsetCommit ``resp`` from its transaction's
    verification (TRANSACTION_ERROR_CODES on every partition its API layer did not answer):
    the group coordinator never saw it."""
    rest = [p.error_code for p in resp.partitions if p.error_code not in _API_LAYER_CODES]
    return bool(rest) and all(c == rest[0] for c in rest) and rest[0] in TRANSACTION_ERROR_CODES


def _code_name(code: int | None) -> str:
    """A wire error code by name (a code outside the vocabulary by number)."""
    if code is None:
        return "nothing"
    e = Error.known(code)
    return e.name if e is not None else f"error {code}"

#: the per-partition errors an OffsetFetch answer may carry: UNSTABLE_OFFSET_COMMIT for a
#: partition with a pending transactional offset when the request requires stable offsets
#: (OffsetMetadataManager.fetchOffsets, fetchAllOffsets; transactions are not modelled), and
#: the API layer's authorization error (KafkaApis.handleOffsetFetchRequest)
OFFSET_FETCH_PARTITION_ERRORS = frozenset({Error.UNSTABLE_OFFSET_COMMIT, Error.TOPIC_AUTHORIZATION_FAILED})

#: (topic, partition) -> the (offset, metadata, leader epoch) TxnOffsetCommits named for it:
#: what an OffsetFetch may answer for it besides the reference's offset (a transaction that
#: committed)
TxnOffsets = Mapping[tuple[str, int], Collection[tuple[int, str | None, int]]]


def _from_txn(version: int, p: m.OffsetFetchPartitionResponse, txn: TxnOffsets | None) -> bool:
    """Whether the OffsetFetch answer ``p`` is an offset a TxnOffsetCommit named, with its
    metadata and (from v5, where the answer carries it) its leader epoch. A TxnOffsetCommit
    naming epoch -1 matches any: a trace line leaves a -1 epoch out, and traces recorded
    before the vocabulary had the field leave out every epoch, so -1 may be unknown."""
    if not txn:
        return False
    epochs = version >= m.OFFSET_FETCH_LEADER_EPOCH_MIN_VERSION
    return any(o == p.committed_offset and md == p.metadata and (not epochs or ep in (-1, p.committed_leader_epoch))
               for o, md, ep in txn.get((p.topic, p.partition), ()))

#: response classes whose ``error`` field (always an Error) decides them
_ERROR_FIELD = frozenset({m.HeartbeatResponse, m.JoinGroupResponse, m.SyncGroupResponse,
                          m.LeaveGroupResponse, m.OffsetFetchResponse, ConsumerGroupHeartbeatResponse})


def main_error(resp: m.Response | None) -> Error | None:
    """The error that decides a response (for OffsetCommit and TxnOffsetCommit, the first
    non-NONE partition). None: no response, or a TxnOffsetCommit's error that is not a group
    protocol error (a transaction's)."""
    if resp is None:
        return None
    cls = type(resp)
    if cls in _ERROR_FIELD:  # the responses with one error field, most of a trace's
        err = getattr(resp, "error", None)
        return err if isinstance(err, Error) else None
    if isinstance(resp, m.OffsetCommitResponse):
        for p in resp.partitions:
            if p.error is not _NONE and p.error not in API_LAYER_PARTITION_ERRORS:
                return p.error
        return _NONE
    if isinstance(resp, m.DescribeGroupsResponse):
        return resp.groups[0].error if resp.groups else _NONE
    if isinstance(resp, m.TxnOffsetCommitResponse):
        # (an error outside the group protocol's vocabulary, a transaction's: None)
        for t in resp.partitions:
            if t.error_code != 0 and t.error_code not in _API_LAYER_CODES:
                return Error.known(t.error_code)
        return _NONE
    if isinstance(resp, m.DeleteGroupsResponse):
        return resp.results[0].error if resp.results else _NONE
    if isinstance(resp, m.OffsetDeleteResponse):
        if resp.error is not _NONE:
            return resp.error
        for q in resp.partitions:
            if q.error is not _NONE and q.error not in API_LAYER_PARTITION_ERRORS:
                return q.error
        return _NONE
    err = getattr(resp, "error", None)
    return err if isinstance(err, Error) else None


def leave_error(resp: m.LeaveGroupResponse) -> Error:
    """The one error a LeaveGroup v0-2 response carries: the top-level error, else the first
    member error that is not NONE (LeaveGroupResponse.java getError)."""
    if resp.error is not _NONE:
        return resp.error
    return next((x.error for x in resp.members if x.error is not _NONE), _NONE)


def _assignment_text(data: bytes) -> str:
    try:
        a = Assignment.decode(data)
    except (DecodeError, ValueError):
        return f"<{len(data)} bytes: {base64.b64encode(data[:24]).decode()}>"
    parts = ", ".join(f"{t}-{p}" for t, ps in a.partitions.items() for p in ps)
    return "{" + parts + "}"


def _fetched_metadata(p: m.OffsetFetchPartitionResponse) -> str:
    """A committed offset's metadata when it is not the usual "" (null or text), so that the
    evidence of a metadata mismatch shows it."""
    if p.committed_offset == -1 or p.metadata == "":
        return ""
    return f" (metadata {json.dumps(p.metadata)})"


def summary(resp: m.Response | None) -> str:
    """A one-line description of a response (None: "no answer yet (parked)")."""
    if resp is None:
        return "no answer yet (the request stays parked)"
    if isinstance(resp, m.JoinGroupResponse):
        if resp.error is not _NONE:
            extra = f" member_id={resp.member_id}" if resp.error is _MEMBER_ID_REQUIRED else ""
            return f"JoinGroup {resp.error.name}{extra}"
        members = f", members=[{', '.join(sorted(x.member_id for x in resp.members))}]" if resp.members else ""
        return (
            f"JoinGroup NONE generation={resp.generation_id} protocol={resp.protocol_name} "
            f"leader={resp.leader} member_id={resp.member_id}{members}"
        )
    if isinstance(resp, m.SyncGroupResponse):
        if resp.error is not _NONE:
            return f"SyncGroup {resp.error.name}"
        return f"SyncGroup NONE assignment={_assignment_text(resp.assignment)}"
    if isinstance(resp, m.OffsetCommitResponse):
        errs = sorted({p.error.name for p in resp.partitions})
        return f"OffsetCommit {'/'.join(errs) or 'NONE (no partitions)'}"
    if isinstance(resp, m.TxnOffsetCommitResponse):
        codes = sorted({p.error_code for p in resp.partitions})
        return f"TxnOffsetCommit {'/'.join(map(_code_name, codes)) or 'NONE (no partitions)'}"
    if isinstance(resp, m.OffsetFetchResponse):
        parts = ", ".join(f"{p.topic}-{p.partition}@{p.committed_offset}{_fetched_metadata(p)}"
                          for p in resp.partitions)
        return f"OffsetFetch {resp.error.name} [{parts}]"
    if isinstance(resp, m.LeaveGroupResponse):
        per = ", ".join(f"{x.member_id}:{x.error.name}" for x in resp.members)
        return f"LeaveGroup {resp.error.name}" + (f" [{per}]" if per else "")
    if isinstance(resp, m.DescribeGroupsResponse):
        gs = ", ".join(f"{g.group_id}:{g.error.name}:{g.group_state}:{len(g.members)} member(s)" for g in resp.groups)
        return f"DescribeGroups [{gs}]"
    if isinstance(resp, m.ListGroupsResponse):
        if resp.error is not _NONE:
            return f"ListGroups {resp.error.name}"
        gs = ", ".join(f"{g.group_id}:{g.protocol_type or '-'}:{g.group_state or '-'}" for g in resp.groups)
        return f"ListGroups NONE [{gs}]"
    if isinstance(resp, m.DeleteGroupsResponse):
        return "DeleteGroups [" + ", ".join(f"{x.group_id}:{x.error.name}" for x in resp.results) + "]"
    if isinstance(resp, m.OffsetDeleteResponse):
        if resp.error is not _NONE:
            return f"OffsetDelete {resp.error.name}"
        parts = ", ".join(f"{p.topic}-{p.partition}:{p.error.name}" for p in resp.partitions)
        return f"OffsetDelete NONE [{parts}]"
    if isinstance(resp, ConsumerGroupDescribeResponse):
        return "ConsumerGroupDescribe [" + "; ".join(_described_text(g) for g in resp.groups) + "]"
    if isinstance(resp, ConsumerGroupHeartbeatResponse):
        if resp.error is not _NONE:
            return f"ConsumerGroupHeartbeat {resp.error.name}"
        a = "" if resp.assignment is None else " assignment=" + _heartbeat_assignment_text(resp.assignment)
        return (f"ConsumerGroupHeartbeat NONE member_id={resp.member_id} "
                f"member_epoch={resp.member_epoch}{a}")
    err = main_error(resp)
    return f"{m.api_name(resp)} {err.name if err else ''}".strip()


def _heartbeat_assignment_text(a: HeartbeatAssignment) -> str:
    parts = ", ".join(f"{t.topic_id}-{p}" for t in a.topic_partitions for p in sorted(t.partitions))
    return "{" + parts + "}"


def _heartbeat_assignment(a: HeartbeatAssignment | None) -> frozenset[tuple[int, int]] | None:
    if a is None:
        return None
    return frozenset((int(t.topic_id), p) for t in a.topic_partitions for p in t.partitions)


def _consumer_heartbeat(e: ConsumerGroupHeartbeatResponse,
                        a: ConsumerGroupHeartbeatResponse) -> Mismatch | None:
    """Errors alike; on NONE the member id, the member epoch, and the assignment (as a set
    of partitions, sent or not as the reference sends it). The heartbeat interval is broker
    configuration the trace does not carry, so it is not compared."""
    if e.error is not a.error:
        return Mismatch("error")
    if e.error is not _NONE:
        return None
    if e.member_id != a.member_id:
        return Mismatch("member_id")
    if e.member_epoch != a.member_epoch:
        return Mismatch("member_epoch")
    if a.error_message is not None and e.error_message is None:
        # an answer without error carries no message (consumerGroupHeartbeat leaves it null)
        return Mismatch("error_message", how=f"an answer without error carries the message {a.error_message!r}")
    if (e.assignment is None) != (a.assignment is None):
        return Mismatch("whether the assignment is sent")
    if _heartbeat_assignment(e.assignment) != _heartbeat_assignment(a.assignment):
        return Mismatch("assignment")
    # Kafka writes a member's assignment from a map of topic ids to partition sets
    # (GroupMetadataManager.createConsumerGroupResponseAssignment): each partition once
    twice = _listed_twice(a.assignment) if a.assignment is not None else ""
    if twice:
        return Mismatch("assignment", how=f"a partition or topic listed more than once: {twice}")
    return None


def _listed_twice(a: HeartbeatAssignment) -> str:
    """The topics and partitions a heartbeat's assignment lists more than once ("" when
    none)."""
    topics = Counter(int(t.topic_id) for t in a.topic_partitions)
    parts = Counter((t.topic_id, p) for t in a.topic_partitions for p in t.partitions)
    twice = [f"topic {t.topic_id}" for t in a.topic_partitions if topics[int(t.topic_id)] > 1][:1]
    twice += sorted({f"{t}-{p}" for (t, p), n in parts.items() if n > 1})[:3]
    return ", ".join(twice)


def _described_assignment(a: DescribedAssignment) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple(sorted((str(tp.topic_id), tuple(sorted(tp.partitions))) for tp in a.topic_partitions
                        if tp.partitions))


def _described_text(g: DescribedGroup) -> str:
    if g.error is not _NONE:
        return f"{g.group_id}:{g.error.name}"
    members = ", ".join(
        f"{x.member_id}@{x.member_epoch}"
        f" owns {{{', '.join(f'{tp.topic_name}-{p}' for tp in x.assignment.topic_partitions for p in sorted(tp.partitions))}}}"
        for x in sorted(g.members, key=lambda x: x.member_id))
    return (f"{g.group_id}:{g.group_state} epoch={g.group_epoch} assignment_epoch={g.assignment_epoch} "
            f"assignor={g.assignor_name} [{members}]")


#: ConsumerGroupDescribe v1 added each member's MemberType (KIP-1099); v0 answers carry none
#: (read back as -1, unknown)
DESCRIBE_MEMBER_TYPE_MIN_VERSION = 1


def described_key(g: DescribedGroup, api_version: int = DESCRIBE_MEMBER_TYPE_MIN_VERSION) -> tuple[object, ...]:
    """What a ConsumerGroupDescribe answer says of a group, in no particular order: the
    error, state, epochs and assignor, and per member its epoch, ids, subscription,
    assignment and target (ConsumerGroup.asDescribedGroup, ConsumerGroupMember.
    asConsumerGroupDescribeMember). The order of members, topics and partitions is the
    iteration order of Kafka's maps, not protocol; the error message is Kafka's text."""
    if g.error is not _NONE:
        return (g.error,)
    return (g.error, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name,
            tuple(sorted((x.member_id, x.instance_id, x.rack_id, x.member_epoch, x.client_id,
                          tuple(sorted(x.subscribed_topic_names)), x.subscribed_topic_regex,
                          _described_assignment(x.assignment), _described_assignment(x.target_assignment),
                          x.member_type if api_version >= DESCRIBE_MEMBER_TYPE_MIN_VERSION else None)
                         for x in g.members)))


def _consumer_describe(version: int, e: ConsumerGroupDescribeResponse,
                       a: ConsumerGroupDescribeResponse) -> Mismatch | None:
    ek = sorted(((g.group_id, described_key(g, version)) for g in e.groups), key=repr)
    ak = sorted(((g.group_id, described_key(g, version)) for g in a.groups), key=repr)
    if ek == ak:
        return None
    for (eg, ekey), (ag, akey) in zip(ek, ak, strict=False):
        if (eg, ekey) == (ag, akey):
            continue  # (the first group that differs names the difference)
        if eg != ag:
            return Mismatch("groups described")
        if ekey[0] != akey[0]:
            return Mismatch("error")
        if ekey[1:5] != akey[1:5]:
            return Mismatch("group state, epochs or assignor")
        return Mismatch("members")
    return Mismatch("groups described")


def _same_partitions(a: bytes, b: bytes) -> bool:
    """Two serialized assignments alike but for the order of their topics and partitions."""
    try:
        x, y = Assignment.decode(a), Assignment.decode(b)
    except DecodeError:
        return False
    return (a[:2] == b[:2] and x.user_data == y.user_data
            and {t: sorted(ps) for t, ps in x.partitions.items()}
            == {t: sorted(ps) for t, ps in y.partitions.items()})


def compare(api_version: int, expected: m.Response, actual: m.Response,
            txn: TxnOffsets | None = None, coordinator_assignment: bool = False) -> Mismatch | None:
    """None when ``actual`` (the broker's) is what the protocol allows given ``expected``
    (the reference's answer in the same state). ``txn``: for an OffsetFetch, what earlier
    TxnOffsetCommits of the group committed if their transactions did (not modelled), an
    answer the broker may also give. ``coordinator_assignment``: a SyncGroup answer the
    coordinator serialized itself (a classic member of a consumer group:
    GroupMetadataManager.prepareAssignment), whose topics come in the order of a HashMap of
    topic ids, so only the partitions, version and user data are compared (a classic
    group's leader-chosen bytes are compared as they are)."""
    if type(expected) is not type(actual):
        return Mismatch(f"a {type(actual).__name__} where a {type(expected).__name__} was due")
    # (the response classes are unrelated: one branch applies; the most frequent first)
    if isinstance(expected, m.HeartbeatResponse) and isinstance(actual, m.HeartbeatResponse):
        return None if expected.error is actual.error else Mismatch("error")
    if isinstance(expected, m.OffsetCommitResponse) and isinstance(actual, m.OffsetCommitResponse):
        e2 = {(p.topic, p.partition): p.error for p in expected.partitions}
        # (partitions the API layer answered were not replayed: API_LAYER_PARTITION_ERRORS)
        # (NONE, the usual answer, tested first by identity: an Error's hash is a
        # Python-level call)
        a2 = {(p.topic, p.partition): p.error for p in actual.partitions
              if p.error is _NONE or p.error not in API_LAYER_PARTITION_ERRORS
              or (p.topic, p.partition) in e2}
        if e2 != a2:
            return Mismatch("partition errors")
        if len(e2) != len(expected.partitions) or len(a2) != len(actual.partitions):
            # a partition answered more than once: Kafka answers each partition the request
            # names, once per time it names it (OffsetMetadataManager.commitOffset)
            return _answered_times([(p.topic, p.partition, p.error.name) for p in expected.partitions],
                                   [(p.topic, p.partition, p.error.name) for p in actual.partitions
                                    if (p.topic, p.partition) in e2 or p.error not in API_LAYER_PARTITION_ERRORS])
        return None
    if isinstance(expected, m.JoinGroupResponse) and isinstance(actual, m.JoinGroupResponse):
        return _join(api_version, expected, actual)
    if isinstance(expected, m.TxnOffsetCommitResponse) and isinstance(actual, m.TxnOffsetCommitResponse):
        # as OffsetCommit's, by wire code
        e5 = {(p.topic, p.partition): p.error_code for p in expected.partitions}
        a5 = {(p.topic, p.partition): p.error_code for p in actual.partitions
              if p.error_code not in _API_LAYER_CODES or (p.topic, p.partition) in e5}
        if e5 == a5:
            if len(e5) == len(expected.partitions) and len(a5) == len(actual.partitions):
                return None
            return _answered_times([(p.topic, p.partition, _code_name(p.error_code)) for p in expected.partitions],
                                   [(p.topic, p.partition, _code_name(p.error_code)) for p in actual.partitions
                                    if (p.topic, p.partition) in e5 or p.error_code not in _API_LAYER_CODES])
        diffs = [f"{t}-{p}: answered {_code_name(a5.get((t, p)))}, Kafka {_code_name(e5.get((t, p)))}"
                 for t, p in sorted(e5.keys() | a5.keys()) if e5.get((t, p)) != a5.get((t, p))]
        return Mismatch("partition errors", how="; ".join(diffs[:4]))
    if isinstance(expected, m.SyncGroupResponse) and isinstance(actual, m.SyncGroupResponse):
        if expected.error is not actual.error:
            return Mismatch("error")
        if expected.error is _NONE:
            if expected.assignment != actual.assignment and not (
                    coordinator_assignment and _same_partitions(expected.assignment, actual.assignment)):
                return Mismatch("assignment")
            for f in ("protocol_type", "protocol_name"):
                # from v5 Kafka answers both (the group's protocol type and name:
                # GroupMetadataManager.classicGroupSync); before, the wire has neither
                a = getattr(actual, f)
                if (a is not None or api_version >= SYNC_PROTOCOL_MIN_VERSION) and a != getattr(expected, f):
                    return Mismatch(f, how=f"{a!r}, due {getattr(expected, f)!r}")
        return None
    if isinstance(expected, m.LeaveGroupResponse) and isinstance(actual, m.LeaveGroupResponse):
        if api_version < LEAVE_MEMBERS_MIN_VERSION:
            # v0-2 carry one error: the top-level one, or else the first member's
            # (LeaveGroupResponse.java, the constructor taking a version)
            return None if leave_error(expected) is leave_error(actual) else Mismatch("error")
        if expected.error is not actual.error:
            return Mismatch("error")
        if api_version >= LEAVE_MEMBERS_MIN_VERSION and expected.error is _NONE:
            e = sorted((x.member_id, x.group_instance_id or "", x.error.value) for x in expected.members)
            a = sorted((x.member_id, x.group_instance_id or "", x.error.value) for x in actual.members)
            if e != a:
                return Mismatch("per-member errors")
        return None
    if isinstance(expected, m.OffsetFetchResponse) and isinstance(actual, m.OffsetFetchResponse):
        if expected.error is not actual.error:
            return Mismatch("error")
        e3 = {(p.topic, p.partition): p for p in expected.partitions}
        answered = {(p.topic, p.partition) for p in actual.partitions}
        for q in expected.partitions:
            if (q.topic, q.partition) not in answered:
                # every partition asked for is answered, and fetching all lists every
                # committed offset (OffsetMetadataManager.fetchOffsets, fetchAllOffsets)
                return Mismatch(f"offset of {q.topic}-{q.partition} (not answered)",
                                partition=(q.topic, q.partition))
        stated = expected.error is _NONE  # (the partitions an error answer lists are not a rule)
        if stated and (len(actual.partitions) != len(answered) or len(expected.partitions) != len(e3)):
            # each partition is answered once per time the request names it
            # (OffsetMetadataManager.fetchOffsets); fetching all lists each once
            mismatch = _answered_times([(p.topic, p.partition, "") for p in expected.partitions],
                                       [(p.topic, p.partition, "") for p in actual.partitions], "partitions answered")
            if mismatch is not None:
                return mismatch
        for p in actual.partitions:
            committed = e3.get((p.topic, p.partition))
            if committed is not None and committed.error is Error.UNSTABLE_OFFSET_COMMIT:
                # pending in a transaction for the reference, whose marker is not on the
                # wire: the broker may still answer UNSTABLE_OFFSET_COMMIT, or by now the
                # transaction's offset (committed); anything else (the earlier offset of an
                # aborted transaction, say) is for the replay to call undecided
                if p.error is Error.UNSTABLE_OFFSET_COMMIT or _from_txn(api_version, p, txn):
                    continue
                return Mismatch(f"offset of {p.topic}-{p.partition} (pending in a transaction)",
                                partition=(p.topic, p.partition))
            want = -1 if committed is None else committed.committed_offset
            if p.error is not _NONE:
                if p.error not in OFFSET_FETCH_PARTITION_ERRORS:
                    return Mismatch(f"error of {p.topic}-{p.partition} ({p.error.name})",
                                    partition=(p.topic, p.partition))
                continue
            if _from_txn(api_version, p, txn):
                continue
            if p.committed_offset != want:
                return Mismatch(f"offset of {p.topic}-{p.partition}", prehistory=want == -1,
                                partition=(p.topic, p.partition))
            if want == -1 and stated:
                if committed is None:
                    # neither asked for nor committed: fetching all lists committed offsets
                    # only, and a request's own partitions are all in the reference's answer
                    return Mismatch(f"offset of {p.topic}-{p.partition} (answered, but neither asked for "
                                    "nor committed)", partition=(p.topic, p.partition))
                if p.metadata != "" or (api_version >= m.OFFSET_FETCH_LEADER_EPOCH_MIN_VERSION
                                        and p.committed_leader_epoch != -1):
                    # no offset: no metadata ("") and no leader epoch (-1)
                    # (OffsetMetadataManager.fetchOffsets, the partition without an offset)
                    return Mismatch(f"metadata of {p.topic}-{p.partition} (no committed offset, answered metadata "
                                    f"{json.dumps(p.metadata)} and leader epoch {p.committed_leader_epoch}; "
                                    'Kafka answers "" and -1)', partition=(p.topic, p.partition))
                continue
            # the metadata committed with it, "" for none (OffsetAndMetadata.fromRequest);
            # a partition with no commit in the trace may hold one from before it
            if committed is not None and want != -1 and p.metadata != committed.metadata:
                return Mismatch(f"metadata of {p.topic}-{p.partition} (answered {json.dumps(p.metadata)}, "
                                f"committed {json.dumps(committed.metadata)})", partition=(p.topic, p.partition))
            # v5+: the leader epoch committed with it, -1 for none (fetchOffsets:
            # OffsetAndMetadata.leaderEpoch.orElse(-1)); a commit before the trace is unknown
            if (committed is not None and want != -1 and api_version >= m.OFFSET_FETCH_LEADER_EPOCH_MIN_VERSION
                    and p.committed_leader_epoch != committed.committed_leader_epoch):
                return Mismatch(f"leader epoch of {p.topic}-{p.partition} (answered {p.committed_leader_epoch}, "
                                f"committed {committed.committed_leader_epoch})", partition=(p.topic, p.partition))
        return None
    if isinstance(expected, m.DescribeGroupsResponse) and isinstance(actual, m.DescribeGroupsResponse):
        # one entry per group asked for, in the order the service answers them
        # (GroupCoordinatorService.describeGroups: by partition, each partition's in request
        # order; coordinator/service_order.py)
        if [g.group_id for g in actual.groups] != [g.group_id for g in expected.groups]:
            return Mismatch("groups described", how=f"described {[g.group_id for g in actual.groups]}, "
                                                    f"due {[g.group_id for g in expected.groups]}")
        for eg, ag in zip(expected.groups, actual.groups, strict=True):
            mismatch = _described_classic(api_version, eg, ag)
            if mismatch is not None:
                return mismatch
        return None
    if isinstance(expected, m.ListGroupsResponse) and isinstance(actual, m.ListGroupsResponse):
        return _list_groups(api_version, expected, actual)
    if isinstance(expected, m.DeleteGroupsResponse) and isinstance(actual, m.DeleteGroupsResponse):
        e4 = sorted((x.group_id, x.error.value) for x in expected.results)
        a4 = sorted((x.group_id, x.error.value) for x in actual.results)
        return None if e4 == a4 else Mismatch("results")
    if isinstance(expected, ConsumerGroupHeartbeatResponse) and isinstance(actual, ConsumerGroupHeartbeatResponse):
        return _consumer_heartbeat(expected, actual)
    if isinstance(expected, m.OffsetDeleteResponse) and isinstance(actual, m.OffsetDeleteResponse):
        return _offset_delete(expected, actual)
    if isinstance(expected, ConsumerGroupDescribeResponse) and isinstance(actual, ConsumerGroupDescribeResponse):
        return _consumer_describe(api_version, expected, actual)
    return None if expected == actual else Mismatch("response")


def _answered_times(expected: list[tuple[str, int, str]], actual: list[tuple[str, int, str]],
                    what: str = "partition errors") -> Mismatch | None:
    """Per-partition answers compared with their multiplicity (the dictionaries compared
    first keep one answer per partition): None when each (topic, partition, error; the
    error "" when only the partitions count) comes as many times in both."""
    e, a = Counter(expected), Counter(actual)
    if e == a:
        return None
    diffs = [f"{t}-{p}{' ' + err if err else ''}: answered {a[(t, p, err)]} times, Kafka {e[(t, p, err)]}"
             for t, p, err in sorted(e.keys() | a.keys()) if e[(t, p, err)] != a[(t, p, err)]]
    return Mismatch(what, how="; ".join(diffs[:4]))


def _join(version: int, e: m.JoinGroupResponse, a: m.JoinGroupResponse) -> Mismatch | None:
    if e.error is not a.error:
        return Mismatch("error")
    if e.error is _MEMBER_ID_REQUIRED:
        return None if e.member_id == a.member_id else Mismatch("member_id")
    if e.error is not _NONE:
        return None
    for f in ("generation_id", "leader", "member_id"):
        if getattr(e, f) != getattr(a, f):
            return Mismatch(f)
    # (v7 made the protocol name nullable and added the protocol type: a completed join's
    # answer carries both, the group's; GroupMetadataManager.completeClassicGroupJoin)
    strict = version >= JOIN_PROTOCOL_TYPE_MIN_VERSION
    if (a.protocol_name is not None or strict) and a.protocol_name != e.protocol_name:
        return Mismatch("protocol_name", how=f"{a.protocol_name!r}, due {e.protocol_name!r}")
    if (a.protocol_type is not None or strict) and a.protocol_type != e.protocol_type:
        return Mismatch("protocol_type", how=f"{a.protocol_type!r}, due {e.protocol_type!r}")
    if version >= SKIP_ASSIGNMENT_MIN_VERSION and a.skip_assignment != e.skip_assignment:
        return Mismatch("skip_assignment")
    em = dict((x.member_id, x.metadata) for x in e.members)
    am = dict((x.member_id, x.metadata) for x in a.members)
    if em != am:
        return Mismatch("members", how=_members_difference(em, am))
    if len(am) != len(a.members):
        # the leader's list holds each member once (ClassicGroup's members, a map by id)
        twice = sorted({x.member_id for x in a.members if sum(y.member_id == x.member_id for y in a.members) > 1})
        return Mismatch("members", how=f"listed more than once: {', '.join(twice)}")
    if version >= JOIN_INSTANCE_ID_MIN_VERSION:
        ei = {x.member_id: x.group_instance_id for x in e.members}
        for x in a.members:
            if x.group_instance_id != ei[x.member_id]:
                return Mismatch("members", how=f"member {x.member_id} listed with instance id "
                                f"{x.group_instance_id!r}, due {ei[x.member_id]!r}")
    return None


def _members_difference(expected: dict[str, bytes], actual: dict[str, bytes]) -> str:
    """What differs between two JoinGroup member lists, named member by member (the
    summary of an answer shows the ids only: a difference in metadata alone is otherwise
    invisible)."""
    extra = sorted(set(actual) - set(expected))
    missing = sorted(set(expected) - set(actual))
    meta = sorted(x for x in set(expected) & set(actual) if expected[x] != actual[x])
    parts = []
    if extra:
        parts.append(f"listed but not a member: {', '.join(extra)}")
    if missing:
        parts.append(f"a member but not listed: {', '.join(missing)}")
    for x in meta[:3]:
        parts.append(f"{x}'s metadata {actual[x].hex()[:80]} where its join sent {expected[x].hex()[:80]}")
    return "; ".join(parts)


#: DescribeGroups v4 added each member's group instance id (KIP-345)
DESCRIBE_INSTANCE_ID_MIN_VERSION = 4


def _described_classic(version: int, e: m.DescribedGroup, a: m.DescribedGroup) -> Mismatch | None:
    """A DescribeGroups entry (GroupMetadataManager.describeGroups): its error; the group's
    state, protocol type and protocol (the protocol only when Stable); its members by id, in
    any order (Kafka iterates a HashMap), each with its instance id (v4+), client id,
    metadata (only when Stable: ClassicGroupMember.describe / describeNoMetadata) and
    assignment. The client host is not compared: a recording proxy stands between the
    clients and the broker, which sees the proxy's address."""
    if e.error is not a.error:
        return Mismatch("error")
    if e.error is not _NONE:
        return None
    if a.group_state != e.group_state:
        return Mismatch("group state")
    if a.protocol_type != e.protocol_type:
        return Mismatch("protocol type", f"{a.protocol_type!r}, due {e.protocol_type!r}")
    if a.protocol_data != e.protocol_data:
        return Mismatch("protocol", f"{a.protocol_data!r}, due {e.protocol_data!r}")
    ours = {x.member_id: x for x in e.members}
    theirs = {x.member_id: x for x in a.members}
    if ours.keys() != theirs.keys() or len(theirs) != len(a.members):
        return Mismatch("members")
    for mid, x in ours.items():
        y = theirs[mid]
        if version >= DESCRIBE_INSTANCE_ID_MIN_VERSION and x.group_instance_id != y.group_instance_id:
            return Mismatch(f"instance id of member {mid}")
        if x.client_id != y.client_id:
            return Mismatch(f"client id of member {mid}")
        if x.member_metadata != y.member_metadata:
            return Mismatch(f"metadata of member {mid}")
        if x.member_assignment != y.member_assignment:
            return Mismatch(f"assignment of member {mid}")
    return None


def _listed_key(version: int, g: m.ListedGroup, typed: bool) -> tuple[str, str, str, str | None]:
    """What a ListGroups answer at ``version`` says of a group: its id, protocol type, from
    v4 its state, and from v5 its type (when ``typed``: the broker's answer was recorded with
    the types)."""
    return (g.group_id, g.protocol_type, g.group_state if version >= LIST_GROUPS_STATE_MIN_VERSION else "",
            g.group_type if typed and version >= LIST_GROUPS_TYPE_MIN_VERSION else None)


def _typed_listing(groups: Sequence[m.ListedGroup]) -> bool:
    """A broker's listing recorded with each group's type (a trace written before the field
    has None)."""
    return all(g.group_type is not None for g in groups)


def _list_groups(version: int, e: m.ListGroupsResponse, a: m.ListGroupsResponse) -> Mismatch | None:
    """The groups listed, as a multiset (Kafka lists a shard's groups in its map's order and
    the shards in the runtime's; a listing of one group, as the replay compares it, has no
    order), each by :func:`_listed_key`."""
    if e.error is not a.error:
        return Mismatch("error")
    typed = _typed_listing(a.groups)
    due = sorted(_listed_key(version, g, typed) for g in e.groups)
    listed = sorted(_listed_key(version, g, typed) for g in a.groups)
    if listed != due:
        return Mismatch("groups listed", f"listed {_listed_text(listed)}, due {_listed_text(due)}")
    return None


def _listed_text(keys: list[tuple[str, str, str, str | None]]) -> str:
    return "[" + ", ".join(f"{gid} ({ptype or 'no protocol type'}{', ' + state if state else ''}"
                           f"{', type ' + gtype if gtype else ''})"
                           for gid, ptype, state, gtype in keys) + "]" if keys else "nothing"


def _offset_delete(e: m.OffsetDeleteResponse, a: m.OffsetDeleteResponse) -> Mismatch | None:
    """The top-level error; on NONE each partition's error, as a set (Kafka answers topic by
    topic, the API layer's partitions first). A partition the broker answered with an API
    layer error (API_LAYER_PARTITION_ERRORS) was taken out of the request the reference
    handled, so it is not in ``e``. A group the reference does not know may have existed
    before the trace started."""
    if e.error is not a.error:
        return Mismatch("error", prehistory=e.error is Error.GROUP_ID_NOT_FOUND)
    if e.error is not _NONE:
        return None
    want = {(p.topic, p.partition): p.error for p in e.partitions}
    got = {(p.topic, p.partition): p.error for p in a.partitions
           if (p.topic, p.partition) in want or p.error not in API_LAYER_PARTITION_ERRORS}
    if want == got:
        if len(want) == len(e.partitions) and len(got) == len(a.partitions):
            return None
        # a partition answered more often than the request names it (OffsetMetadataManager.
        # deleteOffsets answers each partition of the request)
        return _answered_times([(p.topic, p.partition, p.error.name) for p in e.partitions],
                               [(p.topic, p.partition, p.error.name) for p in a.partitions
                                if (p.topic, p.partition) in want or p.error not in API_LAYER_PARTITION_ERRORS])
    diffs = [f"{t}-{p}: answered {got[(t, p)].name if (t, p) in got else 'nothing'}, "
             f"Kafka {want[(t, p)].name if (t, p) in want else 'nothing'}"
             for t, p in sorted(want.keys() | got.keys()) if want.get((t, p)) is not got.get((t, p))]
    return Mismatch("partition errors", how="; ".join(diffs[:4]))

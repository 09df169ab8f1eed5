"""Splitting a loaded trace into groups, and the file-level checks that need no protocol.

Each group gets its wire exchanges (the requests the coordinator answers), its records, and
the *gaps* that concern it: lines that did not parse but name the group, requests without a
response, undecodable frames on a connection the group used, and file-wide gaps (events
dropped, a line whose group cannot be told). A gap never stops validation; it can only
turn a divergence into an inconclusive verdict (see :mod:`groupspec.validate.verdict`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from groupspec.trace.events import (
    APIS,
    ApiVersionsEvent,
    ClosedEvent,
    DecodeErrorEvent,
    Event,
    ExpiryEvent,
    FetchEvent,
    Header,
    MetadataEvent,
    RecordEvent,
    WireExchange,
)
from groupspec.validate.compare import COORDINATOR_ERRORS, main_error
from groupspec.validate.load import EventColumns, LoadedTrace
from groupspec.validate.problems import InputProblem

#: APIs whose requests the reference coordinator answers per group (ListGroups is
#: cluster-wide; FindCoordinator only locates the coordinator).
REPLAYED_APIS = frozenset(
    {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
     "DescribeGroups", "DeleteGroups", "ConsumerGroupHeartbeat", "OffsetDelete",
     "ConsumerGroupDescribe", "TxnOffsetCommit"}
)
#: a transactional producer's offset commit: replayed (the group's check of the member,
#: generation and instance it names: KIP-447's fencing), and also kept aside with its group,
#: whose committed offsets of the partitions it names are unknown from its time on (the
#: transaction's outcome, written by markers, is not on the wire: not modelled)
TXN_OFFSET_COMMIT = "TxnOffsetCommit"
#: replayed APIs that Kafka answers for the empty group id too: OffsetCommit takes "" as an
#: ordinary group, OffsetDelete and TxnOffsetCommit refuse it (INVALID_GROUP_ID,
#: GroupCoordinatorService.deleteOffsets, commitTransactionalOffsets); the other APIs' ""
#: exchanges name no single group and are not replayed
_EMPTY_ID_REPLAYED = frozenset({"OffsetCommit", "OffsetDelete", "TxnOffsetCommit"})
#: the api keys of the replayed APIs (an undecodable frame with one of these keys may have
#: changed a group)
_GROUP_API_KEYS = frozenset(APIS[name][0] for name in REPLAYED_APIS)


@dataclass(frozen=True)
class Gap:
    """Something missing that may explain a divergence. ``at_ms`` is when it happened, if
    known (a request without a response cannot explain what happened before it was sent)."""

    problem: InputProblem
    at_ms: float | None = None


@dataclass(frozen=True)
class Exchange:
    """A wire exchange and the line it came from.

    ``seq``, ``sent`` and ``received`` are the event's seq, send time and receive time
    (infinite when no response was seen), kept as attributes: the checks, the client rules
    and the replay read them hundreds of thousands of times per trace (as properties they
    were a twentieth of the validator's time). They are not compared, hashed or shown
    (they follow from ``event``)."""

    line: int
    event: WireExchange
    seq: int = field(init=False, repr=False, compare=False)
    sent: float = field(init=False, repr=False, compare=False)
    received: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        e = self.event
        r = e.received_ms
        d = self.__dict__
        d["seq"] = e.seq
        d["sent"] = e.sent_ms
        d["received"] = _INF if r is None else r


_INF = float("inf")
_new = object.__new__
_setattr = object.__setattr__


def exchange(line: int, ev: WireExchange) -> Exchange:
    """``Exchange(line, ev)`` as its generated ``__init__`` and ``__post_init__`` make it,
    given its field dict at once (a frozen dataclass sets each field through
    ``object.__setattr__``; grouping makes one per request of a trace)."""
    x = _new(Exchange)
    r = ev.received_ms
    _setattr(x, "__dict__", {"line": line, "event": ev, "seq": ev.seq, "sent": ev.sent_ms,
                             "received": _INF if r is None else r})
    return x


@dataclass
class GroupTrace:
    group_id: str
    exchanges: list[Exchange] = field(default_factory=list)
    records: list[tuple[int, RecordEvent]] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    #: lines with FindCoordinator and other exchanges not replayed
    other: int = 0
    #: v1.1 Fetch events of this group's consumers (line, event): those naming the group,
    #: and those naming none whose client id is one of the group's (client-side rules)
    fetches: list[tuple[int, FetchEvent]] = field(default_factory=list)
    #: TxnOffsetCommit exchanges naming the group (see TXN_OFFSET_COMMIT)
    txn_commits: list[Exchange] = field(default_factory=list)
    #: requests of the group the broker left unanswered and closed their connection on,
    #: while it stayed up (:func:`closed_unanswered`), each with that close
    closed_unanswered: list[tuple[Exchange, ClosedEvent]] = field(default_factory=list)
    #: ``records`` are known to be in seq order (:func:`group_trace` found the file's events
    #: in line and seq order); False: not known, the validator sorts them
    records_in_seq_order: bool = False


@dataclass
class GroupedTrace:
    source: str
    groups: dict[str, GroupTrace]
    problems: list[InputProblem]
    header: Header | None
    events: int


@dataclass
class _Sequenced:
    """The file's events checked for their order (:func:`_sequence`): those kept, by line."""

    lines: list[int]
    events: list[Event]
    #: their seqs, and record groups (:class:`~groupspec.validate.load.EventColumns`)
    seqs: list[int]
    record_groups: list[str | None]
    header: Header | None
    #: every event came in line order and in seq order
    ordered: bool
    #: seq -> line of the events kept (None: not made, the seqs kept increase strictly)
    seq_line: dict[int, int] | None


def _sequence(columns: EventColumns, problem: Callable[[str, int, Event, str], object]) -> _Sequenced:
    """The header, and the events kept: a header that is not the first event and a repeated
    seq are reported (``problem``) and dropped, as is a seq smaller than one before it
    (reported, kept). Most files need none of that (the lines and seqs increase, one header
    first), which is told by comparing the columns whole, without a step per event."""
    lines = columns.lines
    events = columns.events
    if not events:
        return _Sequenced(lines, events, [], [], None, True, {})
    first = events[0]
    header = first if isinstance(first, Header) else None
    skip = 1 if header is not None else 0
    seqs = columns.seqs
    if (not any(issubclass(t, Header) for t in set(map(type, events[1:])))
            and lines[0] > -1 and all(map(operator.lt, lines, lines[1:]))
            and all(map(operator.lt, seqs[skip:], seqs[skip + 1:]))):
        if header is None:
            problem("missing_header", lines[0], first, "the trace does not start with a header line")
        return _Sequenced(lines[skip:], events[skip:], seqs[skip:], columns.record_groups[skip:],
                          header, True, None)

    header = None
    ordered = True
    last_line = -1
    seen_seq: set[int] = set()
    last_seq: int | None = None
    seq_line: dict[int, int] = {}
    kept_lines: list[int] = []
    kept: list[Event] = []
    kept_seqs: list[int] = []
    kept_groups: list[str | None] = []
    for i, (line, ev, rgid) in enumerate(zip(lines, events, columns.record_groups, strict=True)):
        cls = type(ev)
        if line <= last_line:
            ordered = False
        last_line = line
        if cls is not RecordEvent and cls is not WireExchange and isinstance(ev, Header):
            if i != 0 or header is not None:
                problem("out_of_order", line, ev, "a header that is not the first event; ignored")
            else:
                header = ev
            continue
        if i == 0:
            problem("missing_header", line, ev, "the trace does not start with a header line")
        seq = seqs[i]
        if seq in seen_seq:
            problem("duplicate_event", line, ev, f"seq {seq} appears again; the repeat is ignored")
            continue
        seen_seq.add(seq)
        if last_seq is None or seq > last_seq:
            last_seq = seq
        elif seq < last_seq:
            ordered = False
            problem("out_of_order", line, ev, f"seq {seq} comes after seq {last_seq}")
        seq_line[seq] = line
        kept_lines.append(line)
        kept.append(ev)
        kept_seqs.append(seq)
        kept_groups.append(rgid)
    return _Sequenced(kept_lines, kept, kept_seqs, kept_groups, header, ordered, seq_line)


def _dropped(seq: _Sequenced, accounted: set[int], source: str) -> list[InputProblem]:
    """Seq numbers that never appear: events dropped, reported where the numbering resumes.
    ``accounted``: the seqs of lines that did not parse (they are not missing)."""
    if seq.seq_line is None:  # the seqs kept increase: contiguous needs no look-up
        kept = seq.seqs
        start = 1 if seq.header is not None else (kept[0] if kept else 1)
        if not accounted and (not kept or (kept[0] == start and kept[-1] == start + len(kept) - 1)):
            return []
        seq.seq_line = dict(zip(kept, seq.lines, strict=True))
    seq_line = seq.seq_line
    top = max(seq_line, default=0)
    present = sorted(seq_line.keys() | {s for s in accounted if s <= top})
    start = 1 if seq.header is not None else (present[0] if present else 1)
    contiguous = bool(present) and present[0] == start and present[-1] == start + len(present) - 1
    out: list[InputProblem] = []
    for before, after in zip([start - 1, *present], present if not contiguous else (), strict=False):
        if after > before + 1 and after in seq_line:
            n = after - before - 1
            out.append(InputProblem(
                "missing_events", source, seq_line[after],
                f"seq {before + 1}{f'..{after - 1}' if n > 1 else ''} missing before seq {after}: "
                f"{n} event(s) dropped", None, after,
            ))
    return out


#: the requests that may name several groups: the field naming them, the response class,
#: and its field of per-group entries (each with a ``group_id``)
_PER_GROUP: dict[type, tuple[str, type, str]] = {
    m.DeleteGroupsRequest: ("groups_names", m.DeleteGroupsResponse, "results"),
    m.DescribeGroupsRequest: ("groups", m.DescribeGroupsResponse, "groups"),
    ConsumerGroupDescribeRequest: ("group_ids", ConsumerGroupDescribeResponse, "groups"),
}
#: their APIs
_PER_GROUP_APIS = frozenset(name for name, (_, request, _) in APIS.items() if request in _PER_GROUP)


def per_group(ev: WireExchange) -> list[WireExchange]:
    """A DeleteGroups, DescribeGroups or ConsumerGroupDescribe naming several groups (or one group several times)
    as one exchange per group: the request naming that group once and the response's entry
    for it. The coordinator handles each group on its own (GroupCoordinatorService groups
    the ids by partition; KafkaApis.handleDeleteGroupsRequest takes the distinct names), so
    each group's replay sees its part; without this, a DeleteGroups of two groups deleted
    neither in the reference. Empty: not such an exchange (or no group named)."""
    req, resp = ev.request, ev.response
    spec = _PER_GROUP.get(type(req))
    if spec is None:
        return []
    names, response_cls, entries = spec
    out: list[WireExchange] = []
    for name in dict.fromkeys(getattr(req, names)):
        if not name:
            continue
        part = resp
        if isinstance(resp, response_cls):
            mine = tuple(x for x in getattr(resp, entries) if x.group_id == name)
            part = dataclasses.replace(cast(Any, resp), **{entries: mine})
        out.append(dataclasses.replace(ev, group_id=name, response=part,
                                       request=dataclasses.replace(cast(Any, req), **{names: (name,)})))
    return out


def list_groups_per_group(listings: list[tuple[int, WireExchange]], groups: dict[str, GroupTrace]) -> None:
    """Each ListGroups answer (``listings``: (line, exchange), answered NONE or with an error
    other than a coordinator error) as one exchange
    per replayed group it can be judged for: the request as it was, the response holding the
    broker's entries for that group. ListGroups is cluster-wide (each broker lists the groups
    of the __consumer_offsets partitions it leads, GroupCoordinatorService.listGroups), so a
    group is judged by an answer that lists it, or by one that came on a connection that
    carried the group's own requests (the same broker, its coordinator). A group whose
    requests met a coordinator error in the trace (its coordinator moved, or was loading)
    is judged by none: which broker held it when is not on the wire."""
    # each listing's entries by group id, made once (a listing of a shared broker may name
    # thousands of groups, and a trace may replay as many)
    by_group: list[dict[str, list[m.ListedGroup]]] = []
    for _, ev in listings:
        resp = ev.response
        assert isinstance(resp, m.ListGroupsResponse)
        entries: dict[str, list[m.ListedGroup]] = {}
        for x in resp.groups:
            entries.setdefault(x.group_id, []).append(x)
        by_group.append(entries)
    for gid, g in groups.items():
        if not g.exchanges or not gid:
            continue
        if any(main_error(x.event.response) in COORDINATOR_ERRORS for x in g.exchanges):
            continue
        conns = {x.event.connection for x in g.exchanges}
        for (line, ev), entries in zip(listings, by_group, strict=True):
            mine = entries.get(gid)
            if mine or ev.connection in conns:
                g.exchanges.append(exchange(line, dataclasses.replace(
                    ev, group_id=gid, response=dataclasses.replace(
                        cast(m.ListGroupsResponse, ev.response), groups=tuple(mine or ())))))


#: how near two of the broker's connection closes must be to be taken as one shutdown
SHUTDOWN_WINDOW_MS = 1000.0


def closed_unanswered(closes: list[ClosedEvent], api_versions: dict[str, ApiVersionsEvent],
                      groups: dict[str, GroupTrace]) -> None:
    """Note in each group the requests the broker closed their connection on without
    answering (``GroupTrace.closed_unanswered``), where the broker did not shut down: Kafka
    answers every request it can parse (a version it offers, a body its schema reads, as the
    recorder decoded it) and closes a connection otherwise only when it is idle or the broker
    stops (SocketServer's processors close a connection on a request that fails to parse,
    on connections.max.idle.ms, and all of them at shutdown). Taken as a shutdown, and not
    judged: a close within SHUTDOWN_WINDOW_MS of the broker closing an idle connection, or
    from that long before a coordinator error the broker answered (a restarted broker loads
    its groups again). A request at a version the broker's ApiVersions answer on that
    connection (or, where that connection asked none, the trace's first) did not offer is
    the client's fault (Kafka closes the connection on a request it does not support), and a
    request with no ApiVersions answer in the trace is not judged either: what the broker
    offered is unknown."""
    idle = [c.at_ms for c in closes if c.pending == 0]
    by_conn: dict[str, list[ClosedEvent]] = {}
    for c in closes:
        if c.pending > 0 and not any(abs(t - c.at_ms) <= SHUTDOWN_WINDOW_MS for t in idle):
            by_conn.setdefault(c.connection, []).append(c)
    if not by_conn:
        return
    first_offer = next(iter(api_versions.values()), None)
    moved = [x.received for g in groups.values() for x in g.exchanges
             if main_error(x.event.response) in COORDINATOR_ERRORS]
    for g in groups.values():
        for x in g.exchanges:
            e = x.event
            if e.response is not None:
                continue
            close = next((c for c in by_conn.get(e.connection, ()) if c.at_ms >= x.sent), None)
            if close is None or any(t >= close.at_ms - SHUTDOWN_WINDOW_MS for t in moved):
                continue
            offered = api_versions.get(e.connection) or first_offer
            if offered is None or not any(
                    r.api_key == e.api_key and r.min_version <= e.api_version <= r.max_version
                    for r in offered.api_keys):
                continue
            g.closed_unanswered.append((x, close))


def txn_accepted(ev: WireExchange) -> tuple[m.TxnOffsetCommitPartition, ...]:
    """The partitions of the TxnOffsetCommit ``ev`` whose offsets its transaction may have
    committed: those the broker answered NONE, or all of them when it did not answer (a
    partition refused, by the group or the transaction, was never written)."""
    req, resp = ev.request, ev.response
    if not isinstance(req, m.TxnOffsetCommitRequest):
        return ()
    if not isinstance(resp, m.TxnOffsetCommitResponse):
        return req.partitions
    ok = {(p.topic, p.partition) for p in resp.partitions if p.error_code == 0}
    return tuple(p for p in req.partitions if (p.topic, p.partition) in ok)


def group_trace(loaded: LoadedTrace) -> GroupedTrace:
    source = loaded.source
    problems = list(loaded.problems)
    groups: dict[str, GroupTrace] = {}
    file_gaps: list[Gap] = []

    def group(gid: str) -> GroupTrace:
        g = groups.get(gid)
        if g is None:
            g = groups[gid] = GroupTrace(gid)
        return g

    for p in loaded.problems:
        if p.group_id is not None:
            group(p.group_id).gaps.append(Gap(p))
        else:
            file_gaps.append(Gap(p))

    conn_groups: dict[str, set[str]] = {}
    decode_errors: list[tuple[int, DecodeErrorEvent]] = []
    unattributed_fetches: list[tuple[int, FetchEvent]] = []
    coordinator_wide: list[tuple[int, RecordEvent]] = []
    listings: list[tuple[int, WireExchange]] = []
    closes: list[ClosedEvent] = []
    api_versions: dict[str, ApiVersionsEvent] = {}

    def problem(kind: str, line: int, ev: Event, msg: str, gid: str | None = None) -> InputProblem:
        p = InputProblem(kind, source, line, msg, gid, ev.seq)
        problems.append(p)
        return p

    def served(conn: str, gid: str) -> None:
        owners = conn_groups.get(conn)
        if owners is None:
            conn_groups[conn] = {gid}
        else:
            owners.add(gid)

    def add_exchange(line: int, ev: WireExchange) -> None:
        """A request (not seen before) to its group's exchanges, or counted as another
        request of its group when the reference does not replay it."""
        gid = ev.group_id
        if gid and ev.api == "FindCoordinator" and getattr(ev.request, "key_type", 0) != 0:
            # a transactional producer looking up its transaction coordinator (key type 1):
            # a recorder before this rule named the transactional id as the group
            gid = ""
        if ev.api not in REPLAYED_APIS or (gid == "" and ev.api not in _EMPTY_ID_REPLAYED):
            if gid:
                g = group(gid)
                g.other += 1
                served(ev.connection, gid)
            return
        served(ev.connection, gid)
        g = group(gid)
        if ev.api == TXN_OFFSET_COMMIT and gid and txn_accepted(ev):
            g.txn_commits.append(Exchange(line, ev))
        if ev.received_ms is not None and ev.received_ms < ev.sent_ms:
            p = problem(
                "bad_interval", line, ev,
                f"{ev.api} received at {ev.received_ms} ms before it was sent at {ev.sent_ms} ms",
                gid,
            )
            g.gaps.append(Gap(p))
            return
        if ev.response is None:
            p = problem(
                "missing_response", line, ev,
                f"{ev.api} sent at {ev.sent_ms} ms on connection {ev.connection} has no response",
                gid,
            )
            g.gaps.append(Gap(p, ev.sent_ms))
        g.exchanges.append(exchange(line, ev))

    sequenced = _sequence(loaded.event_columns(), problem)
    header = sequenced.header
    seen_request: set[tuple[str, int, str]] = set()
    #: a group's record list by group id (the group made on its first event, in file order)
    records_of: dict[str, list[tuple[int, RecordEvent]]] = {}
    for line, ev, rgid in zip(sequenced.lines, sequenced.events, sequenced.record_groups, strict=True):
        # a RecordEvent (``rgid`` is its record's group id, None for other kinds): the most
        # frequent kind first, grouped without a visit to the event (ev is a RecordEvent)
        if rgid is not None:
            if rgid:
                recs = records_of.get(rgid)
                if recs is None:
                    recs = records_of[rgid] = group(rgid).records
                recs.append((line, ev))  # type: ignore[arg-type]  # a RecordEvent, see above
            else:  # CoordinatorUnloaded: every group's in-memory state goes
                coordinator_wide.append((line, ev))  # type: ignore[arg-type]
        elif isinstance(ev, WireExchange):
            gid = ev.group_id
            key = (ev.connection, ev.correlation_id, ev.api)
            if key in seen_request:
                problem(
                    "duplicate_event", line, ev,
                    f"{ev.api} with correlation id {ev.correlation_id} on connection "
                    f"{ev.connection} appears again; the repeat is ignored", gid,
                )
                continue
            seen_request.add(key)
            # one exchange about several groups: each group replays its own part
            parts = per_group(ev) if gid == "" and ev.api in _PER_GROUP_APIS else None
            for x in parts or (ev,):
                add_exchange(line, x)
            resp = ev.response
            # (an error answer too, unless a coordinator error: Kafka answers ListGroups
            # NONE but while a coordinator is loading or not yet active)
            if (type(resp) is m.ListGroupsResponse and resp.error not in COORDINATOR_ERRORS
                    and ev.received_ms is not None and ev.received_ms >= ev.sent_ms):
                listings.append((line, ev))
        elif isinstance(ev, RecordEvent):
            if ev.record.group_id:
                group(ev.record.group_id).records.append((line, ev))
            else:  # CoordinatorUnloaded: every group's in-memory state goes
                coordinator_wide.append((line, ev))
        elif isinstance(ev, DecodeErrorEvent):
            decode_errors.append((line, ev))
        elif isinstance(ev, ClosedEvent):
            closes.append(ev)
        elif isinstance(ev, ApiVersionsEvent):
            if ev.error_code == 0:
                api_versions[ev.connection] = ev
        elif isinstance(ev, ExpiryEvent | MetadataEvent):
            pass  # the reference fires its own timers; expiries are informational
        elif isinstance(ev, FetchEvent):
            if ev.group_id:
                group(ev.group_id).fetches.append((line, ev))
            else:
                unattributed_fetches.append((line, ev))

    accounted = {p.seq for p in loaded.problems if p.seq is not None}  # lines that did not parse
    for p in _dropped(sequenced, accounted, source):
        problems.append(p)
        file_gaps.append(Gap(p))

    for line, de in decode_errors:
        p = InputProblem(
            "decode_error", source, line,
            f"undecodable {de.direction} frame on connection {de.connection}: {de.error}", None, de.seq,
        )
        problems.append(p)
        owners = conn_groups.get(de.connection)
        if owners:
            for gid in owners:
                groups[gid].gaps.append(Gap(p, de.at_ms))
        elif de.api_key in _GROUP_API_KEYS:
            # a group request (or its answer) on a connection that served no group we saw:
            # it may have changed any group, so every group's verdict allows for it
            file_gaps.append(Gap(p, de.at_ms))
        # Otherwise the frame is charged to its connection alone (listed as a problem, a gap
        # of no group): it names no group API (garbage, a cut-off frame, another API), the
        # recorder decodes with Kafka's own schemas so the broker could not act on it either,
        # and one misbehaving client on a shared broker must not spoil every verdict.

    if unattributed_fetches:
        # a recorded Fetch names no group: it belongs to the groups its client id acts in
        by_client: dict[str, list[str]] = {}
        for gid, g in groups.items():
            for cid in {x.event.client_id for x in g.exchanges}:
                by_client.setdefault(cid, []).append(gid)
        for line, fe in unattributed_fetches:
            for gid in by_client.get(fe.client_id, ()):
                groups[gid].fetches.append((line, fe))
    if listings:
        list_groups_per_group(listings, groups)
    if closes:
        closed_unanswered(closes, api_versions, groups)
    for g in groups.values():
        g.gaps.extend(file_gaps)
        if coordinator_wide and g.records:
            g.records = sorted(g.records + coordinator_wide, key=_LINE)
        g.exchanges.sort(key=_SEND_ORDER)
        g.records_in_seq_order = sequenced.ordered
    problems.sort(key=lambda p: (p.line, p.kind))
    return GroupedTrace(source, groups, problems, header, len(loaded.events))


#: sort keys: a record's line; an exchange's send time, then correlation id and seq
_LINE = operator.itemgetter(0)
_SEND_ORDER = operator.attrgetter("sent", "event.correlation_id", "seq")

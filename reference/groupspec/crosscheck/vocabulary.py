"""The one abstraction function: reference coordinator state to the spec's ``group``.

Both directions of the cross-check stand on this module:

- :func:`abstract_group` maps a reference :class:`~groupspec.coordinator.classic.group.Group` to
  the value of the spec's variable ``group`` (spec/ConsumerGroup.tla), and
  :func:`abstract_response` maps a reference response to the spec's response message;
- :func:`concrete_group` and :func:`concrete_request` go the other way, for the
  exhaustive direction, which builds a reference state for every spec state and checks
  ``abstract_group(concrete_group(s)) == s`` before using it.

Values are in one canonical, hashable form (:data:`SpecValue`): integers, booleans and
strings (a TLA+ string and a model value are both ``str``), ``frozenset`` for sets,
:class:`Rec` for records and :class:`Fn` for functions. :func:`from_tlc` turns a value TLC
printed into that form and :func:`to_tla` renders it as a TLA+ expression.

Naming is the identity wherever it can be: a spec member id ``m1`` is the reference member
id ``"m1"``, a client ``c1`` is the client id (and, for a static client, the
group.instance.id) ``"c1"``. Partitions are ``p<N>``, the reference's topic ``t``
partition N. A connection ``[client, inc]`` (a client incarnation's socket) is a request
id (:func:`request_id`).

What the abstraction drops, and why (spec/README.md, "Abstractions"): deadlines (time is
abstract), offsets (the spec keeps no offsets), the protocol name and type (one protocol
per behaviour), ``is_new`` and ``new_member_added`` (the new-member join timeout and the
extension of the initial delay are not modelled), and the spec's ``used_ids`` (bookkeeping
for fresh member ids that the reference has no counterpart for).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from groupspec.coordinator.classic.group import Group, Member
from groupspec.modelcheck.values import Function, Record, TlaSet, Value
from groupspec.protocol import messages as msg
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.records import JoinTimer, MemberInfo, SyncTimer


@dataclass(frozen=True)
class Rec:
    """A TLA+ record, fields sorted by name."""

    fields: tuple[tuple[str, SpecValue], ...]

    def __getitem__(self, name: str) -> SpecValue:
        for k, v in self.fields:
            if k == name:
                return v
        raise KeyError(name)

    def replace(self, **changes: SpecValue) -> Rec:
        return Rec(tuple(sorted({**dict(self.fields), **changes}.items())))

    def without(self, *names: str) -> Rec:
        return Rec(tuple((k, v) for k, v in self.fields if k not in names))


@dataclass(frozen=True)
class Fn:
    """A TLA+ function with a finite domain, pairs sorted by key."""

    pairs: tuple[tuple[SpecValue, SpecValue], ...]

    def __getitem__(self, key: SpecValue) -> SpecValue:
        for k, v in self.pairs:
            if k == key:
                return v
        raise KeyError(key)

    def as_dict(self) -> dict[SpecValue, SpecValue]:
        return dict(self.pairs)


SpecValue: TypeAlias = "int | bool | str | frozenset[SpecValue] | Rec | Fn | tuple[SpecValue, ...]"

NO_MEMBER = "NoMember"
NO_CLIENT = "NoClient"
TOPIC = "t"
#: the consumer protocol names the reference uses for the spec's two rebalance protocols
PROTOCOL_NAMES = {"eager": "sticky", "cooperative": "cooperative-sticky"}


def _key(v: SpecValue) -> str:
    return repr(v)


def rec(**fields: SpecValue) -> Rec:
    return Rec(tuple(sorted(fields.items())))


def fn(pairs: Mapping[SpecValue, SpecValue] | Iterable[tuple[SpecValue, SpecValue]]) -> Fn:
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    return Fn(tuple(sorted(items, key=lambda kv: _key(kv[0]))))


# ---------------------------------------------------------------- TLC values and TLA+ text
def from_tlc(v: Value) -> SpecValue:
    """A value parsed from TLC's output (modelcheck.values) in the canonical form."""
    if isinstance(v, bool | int):
        return v
    if isinstance(v, str):
        return str(v)
    if isinstance(v, Record):
        return Rec(tuple(sorted((k, from_tlc(x)) for k, x in v.items())))
    if isinstance(v, Function):
        return fn((from_tlc(k), from_tlc(x)) for k, x in v.items())
    if isinstance(v, frozenset):
        return frozenset(from_tlc(x) for x in v)
    if isinstance(v, tuple):
        return tuple(from_tlc(x) for x in v)
    raise TypeError(f"not a TLC value: {v!r}")


def to_tla(v: SpecValue) -> str:
    """The TLA+ expression for a value (strings quoted: the trace module's constants are
    strings, not model values)."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, Rec):
        return "[" + ", ".join(f"{k} |-> {to_tla(x)}" for k, x in v.fields) + "]"
    if isinstance(v, Fn):
        if not v.pairs:
            return "<<>>"
        return "(" + " @@ ".join(f"{to_tla(k)} :> {to_tla(x)}" for k, x in v.pairs) + ")"
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(to_tla(x) for x in v)) + "}"
    if isinstance(v, tuple):
        return "<<" + ", ".join(to_tla(x) for x in v) + ">>"
    raise TypeError(f"not a spec value: {v!r}")


# ---------------------------------------------------------------- names
def partition_name(topic: str, partition: int) -> str:
    return f"p{partition}" if topic == TOPIC else f"{topic}-{partition}"


def partition_of(name: str) -> tuple[str, int]:
    if name.startswith("p") and name[1:].isdigit():
        return TOPIC, int(name[1:])
    topic, _, index = name.rpartition("-")
    return topic, int(index)


def conn(client: str, inc: int) -> Rec:
    return rec(client=client, inc=inc)


NO_CONN = conn(NO_CLIENT, 0)


@dataclass
class Names:
    """How one run names things: the spec's ids and clients, and the reference's request
    ids for connections (both directions need the same map)."""

    member_ids: tuple[str, ...]
    clients: tuple[str, ...]
    static_clients: frozenset[str]
    partitions: tuple[str, ...]
    #: request id -> connection (client, incarnation)
    connections: dict[int, tuple[str, int]]
    #: client -> its group.instance.id, where that is not the client's name
    instances: dict[str, str] = field(default_factory=dict)

    def instance(self, client: str) -> str:
        return self.instances.get(client, client)

    @property
    def all_ids(self) -> tuple[str, ...]:
        return (*self.member_ids, NO_MEMBER)

    def request_id(self, client: str, inc: int) -> int:
        """A request id for a connection, fixed by (client, incarnation): the spec's
        consumers have at most one request outstanding per incarnation."""
        rid = 1 + self.clients.index(client) * 1000 + inc
        self.connections[rid] = (client, inc)
        return rid

    def connection(self, rid: int | None) -> Rec:
        if rid is None:
            return NO_CONN
        client, inc = self.connections[rid]
        return conn(client, inc)


def member_name(member_id: str) -> str:
    return member_id if member_id else NO_MEMBER


def member_id(name: SpecValue) -> str:
    assert isinstance(name, str)
    return "" if name == NO_MEMBER else name


# ---------------------------------------------------------------- partitions in bytes
def _partitions_of(parts: Mapping[str, Sequence[int]]) -> frozenset[SpecValue]:
    return frozenset(partition_name(t, p) for t, ps in parts.items() for p in ps)


def _topic_partitions(names: Iterable[SpecValue]) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for n in names:
        assert isinstance(n, str)
        t, p = partition_of(n)
        out.setdefault(t, []).append(p)
    return {t: tuple(sorted(ps)) for t, ps in sorted(out.items())}


def metadata_bytes(owned: Iterable[SpecValue]) -> bytes:
    """A member's subscription with the partitions it reports (owned partitions field)."""
    parts = _topic_partitions(owned)
    return Subscription(topics=(TOPIC,), owned_partitions=parts).encode()


def metadata_partitions(data: bytes) -> frozenset[SpecValue]:
    if not data:
        return frozenset()
    return _partitions_of(Subscription.decode(data).owned_partitions)


def assignment_bytes(parts: Iterable[SpecValue]) -> bytes:
    return Assignment(_topic_partitions(parts)).encode()


def assignment_partitions(data: bytes) -> frozenset[SpecValue]:
    return _partitions_of(Assignment.decode(data).partitions)


# ---------------------------------------------------------------- reference -> spec
def _state_name(s: GroupState | None) -> str:
    return "Empty" if s is None else s.value


def _join_timer(t: JoinTimer | None) -> str:
    if t is None:
        return "none"
    return "initial" if t.initial else "rebalance"


def abstract_group(g: Group, names: Names) -> Rec:
    """The spec's ``group`` for a reference group (without ``used_ids``)."""
    ids = names.all_ids
    members = g.members

    def per_member(f: dict[str, SpecValue]) -> Fn:
        return fn((i, f.get(i, frozenset())) for i in ids)

    meta: dict[str, SpecValue] = {
        mid: metadata_partitions(m.metadata(g.protocol_name) if g.protocol_name else
                                 (m.protocols[0].metadata if m.protocols else b""))
        for mid, m in members.items()
    }
    assignment: dict[str, SpecValue] = {
        mid: assignment_partitions(m.assignment) for mid, m in members.items()
    }
    return rec(
        state=_state_name(g.state),
        previous_state=_state_name(g.previous_state),
        generation_id=g.generation_id,
        leader_id=member_name(g.leader_id or ""),
        members=frozenset(members),
        static_members=fn(
            (c, g.static_members.get(names.instance(c), NO_MEMBER))
            for c in sorted(names.static_clients)
        ),
        pending_members=frozenset(g.pending_members),
        metadata=per_member(meta),
        assignment=per_member(assignment),
        join_request=fn(
            (i, names.connection(members[i].join_request) if i in members else NO_CONN)
            for i in ids
        ),
        sync_request=fn(
            (i, names.connection(members[i].sync_request) if i in members else NO_CONN)
            for i in ids
        ),
        pending_sync_members=frozenset(g.pending_sync_members),
        join_timer=_join_timer(g.join_timer),
        sync_timer=g.sync_timer is not None,
    )


def _message(kind: str, c: Rec, names: Names, **fields: SpecValue) -> Rec:
    """A spec message: every field at the default of the spec's ``Msg``."""
    no_plan = fn((i, frozenset()) for i in names.all_ids)
    base: dict[str, SpecValue] = dict(
        type=kind, client=c["client"], inc=c["inc"], member=NO_MEMBER, static=False,
        generation=-1, error="NONE", meta=frozenset(), plan=no_plan, leader=NO_MEMBER,
        joined=frozenset(), meta_of=no_plan, skip=False, assigned=frozenset(),
        # the spec's NoOffsets: the coordinator's answers carry no offsets, and the
        # cross-checked models run without them (MaxOffset = 0)
        offsets=fn((p, -1) for p in names.partitions),
    )
    base.update(fields)
    return rec(**base)


def abstract_response(
    resp: msg.Response, c: Rec, request_member: str, request_generation: int, names: Names
) -> Rec:
    """The spec's response message for a reference response sent on connection ``c``,
    answering a request from ``request_member`` with ``request_generation``."""
    if isinstance(resp, msg.JoinGroupResponse):
        leader_view = bool(resp.members)
        return _message(
            "JoinGroupResponse", c, names,
            member=member_name(resp.member_id), generation=resp.generation_id,
            error=resp.error.name, leader=member_name(resp.leader),
            joined=frozenset(x.member_id for x in resp.members),
            meta_of=fn((i, frozenset()) for i in names.all_ids) if not leader_view else fn(
                (i, next((metadata_partitions(x.metadata) for x in resp.members
                          if x.member_id == i), frozenset()))
                for i in names.all_ids),
            skip=resp.skip_assignment,
        )
    if isinstance(resp, msg.SyncGroupResponse):
        return _message(
            "SyncGroupResponse", c, names, member=member_name(request_member),
            error=resp.error.name,
            assigned=assignment_partitions(resp.assignment) if resp.error is Error.NONE
            else frozenset(),
        )
    if isinstance(resp, msg.HeartbeatResponse):
        return _message("HeartbeatResponse", c, names, member=member_name(request_member),
                        error=resp.error.name)
    if isinstance(resp, msg.LeaveGroupResponse):
        error = resp.error
        if error is Error.NONE and resp.members:
            error = resp.members[0].error
        return _message("LeaveGroupResponse", c, names, member=member_name(request_member),
                        error=error.name)
    if isinstance(resp, msg.OffsetCommitResponse):
        errors = {p.error for p in resp.partitions}
        error = next(iter(errors)) if len(errors) == 1 else Error.UNKNOWN_SERVER_ERROR
        return _message("OffsetCommitResponse", c, names, member=member_name(request_member),
                        generation=request_generation, error=error.name)
    raise TypeError(f"no spec message for {type(resp).__name__}")


def abstract_request(req: msg.Request, c: Rec, client_is_static: bool, names: Names,
                     protocol: str) -> Rec:
    """The spec's request message for a reference request on connection ``c``."""
    if isinstance(req, msg.JoinGroupRequest):
        data = next((p.metadata for p in req.protocols if p.name == PROTOCOL_NAMES[protocol]),
                    req.protocols[0].metadata if req.protocols else b"")
        return _message("JoinGroupRequest", c, names, member=member_name(req.member_id),
                        static=client_is_static, meta=metadata_partitions(data))
    if isinstance(req, msg.SyncGroupRequest):
        plan = {a.member_id: assignment_partitions(a.assignment) for a in req.assignments}
        return _message("SyncGroupRequest", c, names, member=member_name(req.member_id),
                        static=client_is_static, generation=req.generation_id,
                        plan=fn((i, plan.get(i, frozenset())) for i in names.all_ids))
    if isinstance(req, msg.HeartbeatRequest):
        return _message("HeartbeatRequest", c, names, member=member_name(req.member_id),
                        static=client_is_static, generation=req.generation_id)
    if isinstance(req, msg.LeaveGroupRequest):
        who = req.members[0].member_id if req.members else ""
        return _message("LeaveGroupRequest", c, names, member=member_name(who),
                        static=client_is_static)
    if isinstance(req, msg.OffsetCommitRequest):
        return _message("OffsetCommitRequest", c, names, member=member_name(req.member_id),
                        static=client_is_static, generation=req.generation_id)
    raise TypeError(f"no spec message for {type(req).__name__}")


# ---------------------------------------------------------------- spec -> reference
#: far-away deadlines: the exhaustive direction fires timers explicitly
FAR_MS = 10**12
SESSION_MS = 10_000
REBALANCE_MS = 30_000


def _member(mid: str, client: str, instance: str | None, meta: SpecValue, protocol: str) -> Member:
    assert isinstance(meta, frozenset)
    return Member(
        info=MemberInfo(mid, instance, client, "/127.0.0.1", "consumer"),
        rebalance_timeout_ms=REBALANCE_MS,
        session_timeout_ms=SESSION_MS,
        protocols=(msg.JoinGroupProtocol(PROTOCOL_NAMES[protocol], metadata_bytes(meta)),),
        heartbeat_deadline_ms=FAR_MS,
    )


def concrete_group(group_id: str, s: Rec, protocol: str, names: Names,
                   order: Sequence[str] | None = None) -> Group:
    """A reference group whose abstraction is ``s`` (members in ``order``: the reference
    breaks Kafka's arbitrary choices by member order, so each order is one choice)."""
    members = s["members"]
    assert isinstance(members, frozenset)
    statics = s["static_members"]
    assert isinstance(statics, Fn)
    static_of = {str(v): str(k) for k, v in statics.pairs if v != NO_MEMBER}
    meta, assignment = s["metadata"], s["assignment"]
    joins, syncs = s["join_request"], s["sync_request"]
    assert isinstance(meta, Fn) and isinstance(assignment, Fn)
    assert isinstance(joins, Fn) and isinstance(syncs, Fn)
    ordered = list(order) if order is not None else sorted(str(m) for m in members)
    state = GroupState(str(s["state"]))
    has_members = bool(members)
    g = Group(
        group_id=group_id,
        state=state,
        previous_state=GroupState(str(s["previous_state"])),
        generation_id=int(s["generation_id"]),  # type: ignore[arg-type]
        protocol_type="consumer" if has_members or state is not GroupState.Empty else None,
        protocol_name=PROTOCOL_NAMES[protocol] if has_members else None,
        leader_id=None if s["leader_id"] == NO_MEMBER else str(s["leader_id"]),
    )
    for mid in ordered:
        jc, sc = joins[mid], syncs[mid]
        assert isinstance(jc, Rec) and isinstance(sc, Rec)
        client = static_of.get(mid)
        holder = jc if jc != NO_CONN else sc
        if client is None:
            client = str(holder["client"]) if holder != NO_CONN else _client_of(mid, names)
        m = _member(mid, client, names.instance(client) if mid in static_of else None,
                    meta[mid], protocol)
        asg = assignment[mid]
        assert isinstance(asg, frozenset)
        m.assignment = assignment_bytes(asg) if asg else b""
        if jc != NO_CONN:
            m.join_request = names.request_id(str(jc["client"]), int(jc["inc"]))  # type: ignore[arg-type]
        if sc != NO_CONN:
            m.sync_request = names.request_id(str(sc["client"]), int(sc["inc"]))  # type: ignore[arg-type]
        g.members[mid] = m
    for instance, static_id in sorted(statics.pairs, key=lambda kv: _key(kv[0])):
        if static_id != NO_MEMBER:
            g.static_members[names.instance(str(instance))] = str(static_id)
    pending = s["pending_members"]
    assert isinstance(pending, frozenset)
    g.pending_members = {str(p): FAR_MS for p in sorted(pending, key=_key)}
    pend_sync = s["pending_sync_members"]
    assert isinstance(pend_sync, frozenset)
    g.pending_sync_members = {str(p): None for p in ordered if p in pend_sync}
    timer = s["join_timer"]
    if timer != "none":
        initial = timer == "initial"
        g.join_timer = JoinTimer(FAR_MS, initial, 0, 0)
    if s["sync_timer"] is True:
        g.sync_timer = SyncTimer(FAR_MS, g.generation_id)
    return g


def _client_of(mid: str, names: Names) -> str:
    """The client a member without a parked request belongs to is not part of the
    coordinator's abstract state; any client id will do (the coordinator never reads it
    for a dynamic member)."""
    return names.clients[0]


def concrete_request(m: Rec, group_id: str, protocol: str) -> msg.Request:
    """The reference request for a spec request message."""
    kind = m["type"]
    member = member_id(m["member"])
    instance = str(m["client"]) if m["static"] is True else None
    generation = m["generation"]
    assert isinstance(generation, int)
    if kind == "JoinGroupRequest":
        meta = m["meta"]
        assert isinstance(meta, frozenset)
        return msg.JoinGroupRequest(
            group_id=group_id, member_id=member, group_instance_id=instance,
            protocols=(msg.JoinGroupProtocol(PROTOCOL_NAMES[protocol], metadata_bytes(meta)),),
            session_timeout_ms=SESSION_MS, rebalance_timeout_ms=REBALANCE_MS,
            client_id=str(m["client"]),
        )
    if kind == "SyncGroupRequest":
        plan = m["plan"]
        assert isinstance(plan, Fn)
        assignments = tuple(
            msg.SyncGroupAssignment(str(k), assignment_bytes(v))  # type: ignore[arg-type]
            for k, v in plan.pairs if k != NO_MEMBER and v
        )
        return msg.SyncGroupRequest(group_id=group_id, generation_id=generation,
                                    member_id=member, group_instance_id=instance,
                                    assignments=assignments)
    if kind == "HeartbeatRequest":
        return msg.HeartbeatRequest(group_id=group_id, generation_id=generation,
                                    member_id=member, group_instance_id=instance)
    if kind == "LeaveGroupRequest":
        return msg.LeaveGroupRequest(group_id=group_id,
                                     members=(msg.MemberIdentity(member, instance),))
    if kind == "OffsetCommitRequest":
        return msg.OffsetCommitRequest(
            group_id=group_id, generation_id=generation, member_id=member,
            group_instance_id=instance,
            partitions=(msg.OffsetCommitPartition(TOPIC, 1, 0),),
        )
    raise ValueError(f"not a request the coordinator handles: {kind}")


def spec_tla_value(v: Value | SpecValue) -> SpecValue:
    """Either kind of value in the canonical form (TLC's are converted)."""
    if isinstance(v, Record | Function | TlaSet):
        return from_tlc(v)
    return v  # type: ignore[return-value]

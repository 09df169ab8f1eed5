"""Scenario tests as data: a script of requests and clock ticks with its exact expected output.

The format follows etcd-raft's ``testdata/*.txt`` (cockroachdb/datadriven): a file is a
sequence of blocks, each a command line, a ``----`` line, and the expected output, which
ends at the first blank line. Lines starting with ``#`` between blocks are comments and
are kept verbatim when the file is rewritten. This module is pure: :func:`run_scenario`
takes the text of a file and returns the text it should have (the same commands with the
output the coordinator actually produced); the pytest driver compares the two and, with
``GROUPSPEC_REWRITE=1``, writes the new text back.

Commands (arguments are ``key=value``; quote a value with spaces; ``member=`` is the empty
member id, an absent ``instance=`` is a null group.instance.id)::

    config <CoordinatorConfig field>=<int> ...     only before the first other command
    tick ms=N | tick to=T                          advance the clock, firing due timers
    failover [<CoordinatorConfig field>=<int> ...] the coordinator moves (unload + reload),
                                                   the new one with these settings changed
    state [group=G]                                dump group state (all groups by default)
    service active=true|false                      GroupCoordinatorService started / not
                                                   (inactive: every group request answered
                                                   COORDINATOR_NOT_AVAILABLE by the service)
    coordinator-partition group=G [partitions=N]   the __consumer_offsets partition of G
    delete-partitions partitions=topic:partition,...   topic partitions deleted (their
                                                   offsets go from every group)
    FindCoordinator id=N key=G [key_type=0]
    JoinGroup id=N group=G [member=] [instance=] [client=] [host=] [session=] [rebalance=]
              [version=] [type=consumer] protocols=name:meta,name:meta [reason=]
    SyncGroup id=N group=G gen=N member=M [instance=] [type=] [name=] [assign=m:bytes,...]
    Heartbeat id=N group=G gen=N member=M [instance=]
    LeaveGroup id=N group=G members=member[/instance],...    (``/inst`` alone: by instance)
    OffsetCommit id=N group=G [gen=-1] [member=] [instance=] [version=8] [metadata=]
                 [retention=-1] offsets=topic:partition:offset,...
    OffsetFetch id=N group=G [partitions=topic:partition,...] [require_stable=false]
    OffsetDelete id=N group=G partitions=topic:partition,...
    TxnOffsetCommit id=N group=G [gen=-1] [member=] [instance=] [metadata=] [producer=1]
                    [producer_epoch=0] offsets=topic:partition:offset,...
    ListGroups id=N [states=Stable,...]
    DescribeGroups id=N groups=G,... [version=5]     (``groups=""``: the empty group id)
    DeleteGroups id=N groups=G,...

Protocol metadata, assignments and offsets metadata are text; ``@t1+t2`` is a
consumer-protocol Subscription to topics t1 and t2 (the coordinator decodes those for
offset expiry). Member ids come from a deterministic generator: ``<client or instance>-<n>``
with n counting from 1 over the whole scenario.

Output: responses first, one per line, ``#<request id> <API> <ERROR> field=value ...``
(fields equal to their default are left out); then the records the input emitted, in
order, ``+ Name group ...`` for in-memory records and ``* Name group ...`` for persisted
ones (what survives a failover). A tick prints ``@<time> <timer> ...`` for each instant at
which timers fired, followed by what they produced.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable
from enum import Enum
from typing import Any

from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.classic.join_group import MemberIdGenerator
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.find_coordinator import coordinator_partition, java_string_hash
from groupspec.coordinator.state import NotModelled
from groupspec.coordinator.timers import Expiry
from groupspec.protocol import messages as msg
from groupspec.protocol import records as r
from groupspec.protocol.added_fields import added_defaults
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.wire import DecodeError

SEPARATOR = "----"
_MAX_STEPS = 10_000


class ScenarioError(ValueError):
    """Bad script input; the message names the file and line."""


@dataclasses.dataclass
class Block:
    """One command: the comment/blank lines before it, the command, its expected output."""

    before: list[str]
    line: int
    command: str
    expected: list[str]


def parse(text: str, filename: str) -> tuple[list[Block], list[str]]:
    """Split a scenario file into blocks (and trailing comment lines)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    blocks: list[Block] = []
    before: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == "" or line.startswith("#"):
            before.append(line)
            i += 1
            continue
        if line.strip() == SEPARATOR:
            raise ScenarioError(f"{filename}:{i + 1}: '----' without a command before it")
        if i + 1 >= len(lines) or lines[i + 1].strip() != SEPARATOR:
            raise ScenarioError(
                f"{filename}:{i + 1}: expected '----' on the line after command {line.strip()!r}"
            )
        j = i + 2
        expected: list[str] = []
        while j < len(lines) and lines[j].strip() != "":
            expected.append(lines[j])
            j += 1
        blocks.append(Block(before, i + 1, line.strip(), expected))
        before = []
        i = j + 1  # the blank line ending the output is part of the block
    return blocks, before


def render_file(blocks: list[Block], outputs: list[list[str]], trailing: list[str]) -> str:
    out: list[str] = []
    for block, got in zip(blocks, outputs, strict=True):
        out.extend(block.before)
        out.append(block.command)
        out.append(SEPARATOR)
        out.extend(got)
        out.append("")
    out.extend(trailing)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def run_scenario(text: str, filename: str = "<scenario>") -> str:
    """Run every command of ``text``; return the file text with the actual outputs."""
    blocks, trailing = parse(text, filename)
    runner = _Runner(filename)
    outputs = [runner.run(b) for b in blocks]
    return render_file(blocks, outputs, trailing)


# --------------------------------------------------------------------------- arguments
class _Args:
    def __init__(self, tokens: list[str], where: str, command: str) -> None:
        self.where = where
        self.command = command
        self.values: dict[str, str] = {}
        for tok in tokens:
            key, eq, value = tok.partition("=")
            if not eq or not key:
                raise ScenarioError(f"{where}: {command}: expected key=value, got {tok!r}")
            if key in self.values:
                raise ScenarioError(f"{where}: {command}: argument {key!r} given twice")
            self.values[key] = value
        self.used: set[str] = set()

    def error(self, message: str) -> ScenarioError:
        return ScenarioError(f"{self.where}: {self.command}: {message}")

    def has(self, key: str) -> bool:
        return key in self.values

    def text(self, key: str, default: str | None = None) -> str:
        self.used.add(key)
        if key in self.values:
            return self.values[key]
        if default is None:
            raise self.error(f"missing argument {key}=")
        return default

    def opt_text(self, key: str) -> str | None:
        self.used.add(key)
        return self.values.get(key)

    def integer(self, key: str, default: int | None = None) -> int:
        self.used.add(key)
        if key not in self.values:
            if default is None:
                raise self.error(f"missing argument {key}=")
            return default
        try:
            return int(self.values[key])
        except ValueError:
            raise self.error(f"{key}= must be an integer, got {self.values[key]!r}") from None

    def items(self, key: str, default: str | None = None) -> list[str]:
        raw = self.text(key, default)
        return [x for x in raw.split(",") if x != ""]

    def group_ids(self, key: str) -> list[str]:
        """A list of group ids, the empty one included (``groups=""`` is [""], ``a,,b``
        has "" between a and b)."""
        return self.text(key).split(",")

    def done(self) -> None:
        unknown = sorted(set(self.values) - self.used)
        if unknown:
            raise self.error(f"unknown argument(s) {', '.join(unknown)}")


def _text_bytes(s: str) -> bytes:
    if s.startswith("@"):
        topics = tuple(t for t in s[1:].split("+") if t)
        return Subscription(topics=topics).encode()
    return s.encode("utf-8")


# --------------------------------------------------------------------------- rendering
def _bytes(b: bytes) -> str:
    if b == b"":
        return '""'
    try:
        sub = Subscription.decode(b)
        if Subscription(topics=sub.topics).encode() == b:
            return "@" + "+".join(sub.topics)
    except (DecodeError, ValueError):
        pass
    try:
        s = b.decode("ascii")
    except UnicodeDecodeError:
        return "0x" + b.hex()
    if s.isprintable() and not any(c in s for c in ' ,:=[]"'):
        return s
    return "0x" + b.hex()


def _str(s: str) -> str:
    if s == "" or any(c.isspace() for c in s) or '"' in s:
        return '"' + s.replace('"', '\\"') + '"'
    return s


def _value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Error):
        return v.name
    if isinstance(v, bytes):
        return _bytes(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Enum):
        return str(v.name)  # other enums (GroupState)
    if isinstance(v, tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        special = _SPECIAL.get(type(v))
        if special is not None:
            return special(v)
        return "(" + " ".join(f"{k}={_value(x)}" for k, x in _fields(v)) + ")"
    return _str(str(v))


def _fields(v: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(v, f.name)) for f in dataclasses.fields(v)]


def _who(member_id: str, instance: str | None) -> str:
    return _str(member_id) + (f"/{instance}" if instance is not None else "")


def _protocol(p: msg.JoinGroupProtocol) -> str:
    return f"{p.name}:{_bytes(p.metadata)}"


def _persisted_member(m: r.PersistedMember) -> str:
    protocols = ",".join(_protocol(p) for p in m.protocols)
    return (
        f"{_who(m.info.member_id, m.info.group_instance_id)}(client={_str(m.info.client_id)} "
        f"session={m.session_timeout_ms} rebalance={m.rebalance_timeout_ms} "
        f"protocols={protocols} assignment={_bytes(m.assignment)})"
    )


_SPECIAL: dict[type, Callable[[Any], str]] = {
    msg.JoinGroupProtocol: _protocol,
    msg.JoinGroupResponseMember: lambda m: f"{_who(m.member_id, m.group_instance_id)}:{_bytes(m.metadata)}",
    msg.LeaveGroupMemberResponse: lambda m: f"{_who(m.member_id, m.group_instance_id)}:{m.error.name}",
    msg.OffsetCommitPartitionResponse: lambda p: f"{p.topic}:{p.partition}:{p.error.name}",
    msg.OffsetDeletePartitionResponse: lambda p: f"{p.topic}:{p.partition}:{p.error.name}",
    msg.TxnOffsetCommitPartitionResponse: lambda p: f"{p.topic}:{p.partition}:{_error_code(p.error_code)}",
    msg.OffsetFetchPartitionResponse: lambda p: (
        f"{p.topic}:{p.partition}={p.committed_offset}"
        + (f"({_value(p.metadata)})" if p.metadata else "")
        + (f":{p.error.name}" if p.error is not Error.NONE else "")
    ),
    msg.ListedGroup: lambda g: f"{_str(g.group_id)}({_str(g.protocol_type)},{g.group_state})",
    msg.DeletableGroupResult: lambda g: f"{_str(g.group_id)}:{g.error.name}",
    msg.DescribedGroupMember: lambda m: (
        f"{_who(m.member_id, m.group_instance_id)}(client={_str(m.client_id)} "
        f"host={_str(m.client_host)} metadata={_bytes(m.member_metadata)} "
        f"assignment={_bytes(m.member_assignment)})"
    ),
    msg.DescribedGroup: lambda g: (
        f"{_str(g.group_id)}(error={g.error.name} state={_str(g.group_state)} "
        f"protocol_type={_str(g.protocol_type)} protocol_data={_str(g.protocol_data)} "
        f"members={_value(g.members)})"
    ),
    r.PersistedMember: _persisted_member,
}


def render_response(request_id: int, response: msg.Response) -> str:
    parts = [f"#{request_id}", msg.api_name(response)]
    fields = _fields(response)
    error = dict(fields).get("error")
    if isinstance(error, Error):
        parts.append(error.name)
    for f in dataclasses.fields(response):
        if f.name == "error":
            continue
        v = getattr(response, f.name)
        if f.default is not dataclasses.MISSING and v == f.default:
            continue
        if f.default_factory is not dataclasses.MISSING and v == f.default_factory():
            continue
        parts.append(f"{f.name}={_value(v)}")
    return " ".join(parts)


def render_record(rec: r.Record) -> str:
    parts = ["*" if rec.persisted else "+", r.record_name(rec)]
    if rec.group_id:
        parts.append(_str(rec.group_id))
    # a field added to the vocabulary later (the committed leader epochs, the expire
    # timestamps) is printed only when set: scenario files written before it say nothing of it
    cls: type = type(rec)  # (a type, not type[Record], for the cached lookup)
    added = added_defaults(cls)
    for name, v in _fields(rec):
        if name == "group_id" or (name in added and v == added[name]):
            continue
        if isinstance(v, r.MemberInfo):
            parts.append(_who(v.member_id, v.group_instance_id))
            parts.append(f"client={_str(v.client_id)} host={_str(v.client_host)}")
            parts.append(f"protocol_type={_str(v.protocol_type)}")
        elif isinstance(v, r.GroupSnapshot):
            parts.extend(f"{k}={_value(x)}" for k, x in _fields(v))
        elif isinstance(v, tuple) and name == "protocols":
            parts.append(f"{name}=" + ",".join(_protocol(p) for p in v))
        else:
            parts.append(f"{name}={_value(v)}")
    return " ".join(parts)


def render_output(out: Output) -> list[str]:
    lines = [render_response(rid, resp) for rid, resp in out.responses]
    lines.extend(render_record(rec) for rec in out.records)
    return lines


def render_group(g: Group) -> list[str]:
    lines = [
        f"group {_str(g.group_id)} state={g.state.value} generation_id={g.generation_id} "
        f"protocol_type={_value(g.protocol_type)} protocol_name={_value(g.protocol_name)} "
        f"leader_id={_value(g.leader_id)} state_timestamp_ms={g.state_timestamp_ms}"
    ]
    for m in g.members.values():
        extra = ""
        if m.join_request is not None:
            extra += f" awaiting_join=#{m.join_request}"
        if m.sync_request is not None:
            extra += f" awaiting_sync=#{m.sync_request}"
        if m.is_new:
            extra += " new"
        lines.append(
            f"  member {_who(m.member_id, m.group_instance_id)} "
            f"session={m.session_timeout_ms} rebalance={m.rebalance_timeout_ms} "
            f"protocols={','.join(_protocol(p) for p in m.protocols)} "
            f"assignment={_bytes(m.assignment)} heartbeat_deadline={_value(m.heartbeat_deadline_ms)}"
            + extra
        )
    for mid, deadline in g.pending_members.items():
        lines.append(f"  pending {_str(mid)} deadline={deadline}")
    if g.pending_sync_members:
        lines.append("  pending_sync " + ",".join(g.pending_sync_members))
    if g.join_timer is not None:
        lines.append(f"  join_timer {_value(g.join_timer)}")
    if g.sync_timer is not None:
        lines.append(f"  sync_timer {_value(g.sync_timer)}")
    for (topic, partition), c in sorted(g.offsets.items()):
        lines.append(
            f"  offset {topic}:{partition}={c.committed_offset} metadata={_value(c.metadata)} "
            f"commit_timestamp_ms={c.commit_timestamp_ms}"
            + ("" if c.expire_timestamp_ms is None else f" expire_timestamp_ms={c.expire_timestamp_ms}")
        )
    return lines


# --------------------------------------------------------------------------- running
class _Runner:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.coord: Coordinator | None = None
        self.now_ms = 0
        self.request_ids: set[int] = set()

    def coordinator(self) -> Coordinator:
        if self.coord is None:
            self.coord = Coordinator(CoordinatorConfig(), member_ids=_short_member_ids())
        return self.coord

    def run(self, block: Block) -> list[str]:
        name, args = _parsed(block, self.filename)
        if name == "config":
            return self._config(args)
        if name == "tick":
            return self._tick(args)
        if name == "failover":
            coord = self.coordinator()
            # The new coordinator may run with other settings (Kafka's onLoaded re-checks
            # group.max.size "in case the max size config has changed").
            overrides = self._settings(args)
            if overrides:
                try:
                    coord.config = dataclasses.replace(coord.config, **overrides)
                except ValueError as e:
                    raise args.error(str(e)) from None
            return render_output(coord.failover(self.now_ms))
        if name == "state":
            return self._state(args)
        if name == "delete-partitions":
            parts = _partitions(args)
            args.done()
            return render_output(self.coordinator().delete_partitions(parts, self.now_ms))
        if name == "service":
            value = args.text("active")
            args.done()
            if value not in ("true", "false"):
                raise args.error(f"active= must be true or false, got {value!r}")
            self.coordinator().active = value == "true"
            return []
        if name == "coordinator-partition":
            gid = args.text("group")
            n = args.integer("partitions", 50)
            args.done()
            return [f"partition={coordinator_partition(gid, n)} java_hash={java_string_hash(gid)}"]
        build = _REQUESTS.get(name)
        if build is None:
            known = ", ".join(["config", "tick", "failover", "state", "service", "delete-partitions",
                               "coordinator-partition",
                               *sorted(_REQUESTS)])
            raise ScenarioError(f"{args.where}: unknown command {name!r} (known: {known})")
        rid = args.integer("id")
        if rid in self.request_ids:
            raise args.error(f"request id {rid} was already used")
        self.request_ids.add(rid)
        request = _built(build, args)
        try:
            out = self.coordinator().handle(rid, request, self.now_ms)
        except (ValueError, AssertionError, NotModelled) as e:
            return [f"raised {type(e).__name__}: {e}"]
        return render_output(out)

    def _config(self, args: _Args) -> list[str]:
        if self.coord is not None:
            raise args.error("config must come before every other command")
        kwargs = self._settings(args)
        try:
            config = CoordinatorConfig(**kwargs)
        except ValueError as e:
            raise args.error(str(e)) from None
        self.coord = Coordinator(config, member_ids=_short_member_ids())
        return []

    def _settings(self, args: _Args) -> dict[str, Any]:
        names = {f.name for f in dataclasses.fields(CoordinatorConfig)}
        kwargs: dict[str, Any] = {}
        for key in list(args.values):
            if key not in names:
                raise args.error(f"unknown setting {key!r} (known: {', '.join(sorted(names))})")
            kwargs[key] = args.integer(key)
        args.done()
        return kwargs

    def _tick(self, args: _Args) -> list[str]:
        if args.has("ms") == args.has("to"):
            raise args.error("give exactly one of ms= and to=")
        target = self.now_ms + args.integer("ms") if args.has("ms") else args.integer("to")
        args.done()
        if target < self.now_ms:
            raise args.error(f"time cannot go backwards ({target} < {self.now_ms})")
        coord = self.coordinator()
        lines: list[str] = []
        for _ in range(_MAX_STEPS):
            nd = coord.next_deadline()
            step = nd if nd is not None and nd <= target else target
            fired: list[Expiry] = []
            out = coord.advance(step, on_fire=fired.append)
            self.now_ms = step
            if fired or out.responses or out.records:
                fired_text = "; ".join(e.describe() for e in fired)
                lines.append(f"@{step} {fired_text}".rstrip())
                lines.extend(render_output(out))
            if step == target and (nd is None or nd > target):
                return lines
        raise args.error(f"timers keep firing: more than {_MAX_STEPS} steps")

    def _state(self, args: _Args) -> list[str]:
        gid = args.opt_text("group")
        args.done()
        groups = self.coordinator().state.groups
        if gid is not None:
            g = groups.get(gid)
            return render_group(g) if g is not None else [f"group {_str(gid)} absent"]
        lines: list[str] = []
        for g in groups.values():
            lines.extend(render_group(g))
        return lines or ["no groups"]


def _short_member_ids() -> MemberIdGenerator:
    """``<client id or instance id>-<n>``: Kafka's prefix, a counter for the UUID."""
    n = 0

    def generate(client_id: str, group_instance_id: str | None) -> str:
        nonlocal n
        n += 1
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{n}"

    return generate


# --------------------------------------------------------------------------- requests
def _protocols(args: _Args) -> tuple[msg.JoinGroupProtocol, ...]:
    out = []
    for item in args.items("protocols"):
        name, _, meta = item.partition(":")
        out.append(msg.JoinGroupProtocol(name, _text_bytes(meta)))
    return tuple(out)


def _join(a: _Args) -> msg.Request:
    return msg.JoinGroupRequest(
        group_id=a.text("group"),
        member_id=a.text("member", ""),
        group_instance_id=a.opt_text("instance"),
        protocol_type=a.text("type", "consumer"),
        protocols=_protocols(a),
        session_timeout_ms=a.integer("session", 10_000),
        rebalance_timeout_ms=a.integer("rebalance", 30_000),
        client_id=a.text("client", "consumer"),
        client_host=a.text("host", "/127.0.0.1"),
        version=a.integer("version", msg.JOIN_GROUP_MAX_VERSION),
        reason=a.opt_text("reason"),
    )


def _sync(a: _Args) -> msg.Request:
    assignments = []
    for item in a.items("assign", ""):
        mid, sep, data = item.partition(":")
        if not sep:
            raise a.error(f"assign= entries are member:bytes, got {item!r}")
        assignments.append(msg.SyncGroupAssignment(mid, _text_bytes(data)))
    return msg.SyncGroupRequest(
        group_id=a.text("group"),
        generation_id=a.integer("gen"),
        member_id=a.text("member"),
        group_instance_id=a.opt_text("instance"),
        protocol_type=a.opt_text("type"),
        protocol_name=a.opt_text("name"),
        assignments=tuple(assignments),
    )


def _heartbeat(a: _Args) -> msg.Request:
    return msg.HeartbeatRequest(
        group_id=a.text("group"),
        generation_id=a.integer("gen"),
        member_id=a.text("member"),
        group_instance_id=a.opt_text("instance"),
    )


def _leave(a: _Args) -> msg.Request:
    idents = []
    for item in a.items("members"):
        mid, sep, inst = item.partition("/")
        idents.append(msg.MemberIdentity(mid, inst if sep else None, a.opt_text("reason")))
    return msg.LeaveGroupRequest(group_id=a.text("group"), members=tuple(idents))


def _commit_partitions(a: _Args) -> tuple[msg.OffsetCommitPartition, ...]:
    """``offsets=topic:partition:offset,...`` with ``metadata=`` (default "")."""
    parts = []
    meta = a.text("metadata", "")
    for item in a.items("offsets"):
        bits = item.split(":")
        if len(bits) != 3:
            raise a.error(f"offsets= entries are topic:partition:offset, got {item!r}")
        try:
            parts.append(msg.OffsetCommitPartition(bits[0], int(bits[1]), int(bits[2]), meta))
        except ValueError:
            raise a.error(f"offsets= entries are topic:partition:offset, got {item!r}") from None
    return tuple(parts)


def _commit(a: _Args) -> msg.Request:
    return msg.OffsetCommitRequest(
        group_id=a.text("group"),
        generation_id=a.integer("gen", msg.UNKNOWN_GENERATION_ID),
        member_id=a.text("member", ""),
        group_instance_id=a.opt_text("instance"),
        partitions=_commit_partitions(a),
        version=a.integer("version", 8),
        retention_time_ms=a.integer("retention", msg.DEFAULT_RETENTION_TIME),
    )


def _txn_commit(a: _Args) -> msg.Request:
    c = _commit_partitions(a)
    return msg.TxnOffsetCommitRequest(
        group_id=a.text("group"),
        transactional_id="transactional-id",
        producer_id=a.integer("producer", 1),
        producer_epoch=a.integer("producer_epoch", 0),
        generation_id=a.integer("gen", msg.UNKNOWN_GENERATION_ID),
        member_id=a.text("member", ""),
        group_instance_id=a.opt_text("instance"),
        partitions=tuple(msg.TxnOffsetCommitPartition(p.topic, p.partition, p.committed_offset, p.committed_metadata)
                         for p in c),
    )


def _error_code(code: int) -> str:
    """A wire error code by its name when the vocabulary has one (a TxnOffsetCommit's)."""
    e = Error.known(code)
    return e.name if e is not None else str(code)


def _partitions(a: _Args) -> tuple[tuple[str, int], ...]:
    tps = []
    for item in a.items("partitions"):
        topic, _, p = item.rpartition(":")
        try:
            tps.append((topic, int(p)))
        except ValueError:
            raise a.error(f"partitions= entries are topic:partition, got {item!r}") from None
    return tuple(tps)


def _fetch(a: _Args) -> msg.Request:
    partitions = _partitions(a) if a.has("partitions") else None
    stable = a.text("require_stable", "false")
    if stable not in ("true", "false"):
        raise a.error(f"require_stable= is true or false, got {stable!r}")
    return msg.OffsetFetchRequest(group_id=a.text("group"), partitions=partitions,
                                  require_stable=stable == "true")


def _parsed(block: Block, filename: str) -> tuple[str, _Args]:
    """A block's command name and its arguments (errors named at the file and line)."""
    where = f"{filename}:{block.line}"
    try:
        tokens = shlex.split(block.command)
    except ValueError as e:
        raise ScenarioError(f"{where}: cannot split command: {e}") from None
    return tokens[0], _Args(tokens[1:], where, tokens[0])


def _built(build: Callable[[_Args], msg.Request], args: _Args) -> msg.Request:
    """The request ``build`` makes of ``args``, every argument used; a value the request
    refuses is the scenario's error, naming the place."""
    try:
        request = build(args)
    except (ValueError, TypeError) as e:
        if isinstance(e, ScenarioError):
            raise
        raise args.error(f"invalid request: {e}") from None
    args.done()
    return request


_REQUESTS: dict[str, Callable[[_Args], msg.Request]] = {
    "FindCoordinator": lambda a: msg.FindCoordinatorRequest(
        key=a.text("key"), key_type=a.integer("key_type", 0)
    ),
    "JoinGroup": _join,
    "SyncGroup": _sync,
    "Heartbeat": _heartbeat,
    "LeaveGroup": _leave,
    "OffsetCommit": _commit,
    "OffsetFetch": _fetch,
    "OffsetDelete": lambda a: msg.OffsetDeleteRequest(group_id=a.text("group"), partitions=_partitions(a)),
    "TxnOffsetCommit": _txn_commit,
    "ListGroups": lambda a: msg.ListGroupsRequest(states_filter=tuple(a.items("states", ""))),
    "DescribeGroups": lambda a: msg.DescribeGroupsRequest(
        groups=tuple(a.group_ids("groups")), version=a.integer("version", 5)
    ),
    "DeleteGroups": lambda a: msg.DeleteGroupsRequest(groups_names=tuple(a.group_ids("groups"))),
}


# --------------------------------------------------------------------------- commands as data
@dataclasses.dataclass(frozen=True)
class Command:
    """One block's command as data, for tools that replay a scenario on another coordinator
    (tests/test_scenarios_kafka_jar.py replays every file on Kafka's own shard)."""

    #: "config", "tick", "failover", "state", ... or a request's API name ("JoinGroup", ...)
    name: str
    #: a request's id and the message the coordinator handles (None for other commands)
    request_id: int | None = None
    request: msg.Request | None = None
    #: config and failover: the CoordinatorConfig settings given
    settings: dict[str, int] = dataclasses.field(default_factory=dict)
    #: tick: ``ms=`` (relative) or ``to=`` (absolute), exactly one set
    tick_ms: int | None = None
    tick_to: int | None = None
    #: the other commands' arguments, as written
    arguments: dict[str, str] = dataclasses.field(default_factory=dict)


def command(block: Block, filename: str = "<scenario>") -> Command:
    """The command of ``block``, with the request it sends built as :func:`run_scenario`
    builds it (same defaults, same checks)."""
    name, args = _parsed(block, filename)
    build = _REQUESTS.get(name)
    if build is not None:
        rid = args.integer("id")
        return Command(name, request_id=rid, request=_built(build, args))
    if name in ("config", "failover"):
        return Command(name, settings=_Runner(filename)._settings(args))
    if name == "tick":
        if args.has("ms") == args.has("to"):
            raise args.error("give exactly one of ms= and to=")
        ms = args.integer("ms") if args.has("ms") else None
        to = args.integer("to") if args.has("to") else None
        args.done()
        return Command(name, tick_ms=ms, tick_to=to)
    return Command(name, arguments=dict(args.values))

"""Large synthetic trace collections for ``groupspec pipeline validate``.

A collection is a directory of trace files (format v1, Parquet or JSON Lines), one per
*cluster*, each holding many consumer groups. Every group is one simulator run
(:mod:`groupspec.sim`) with its own random shape and fault schedule: eager, cooperative or
static members, 2-4 members, one or two topics, and faults drawn from :data:`FAULTS` (crash,
clean close and rejoin, GC pause, slow poll, scale-out, static restart, coordinator
failover). The members speak the classic protocol, or KIP-848's (``group_protocol``
"consumer": the same shapes and faults, the broker assigning with a server-side assignor
drawn per group), or each group either (:data:`GROUP_PROTOCOLS`). A cluster's groups are
merged into one file in time order, as one recorder in front of the cluster would have
written them: seq numbers are renumbered and connection names get the group id as a prefix
(each simulator run numbers its own connections).

``inject`` protocol violations are put into as many groups (at most one per group), each
at a known event (:mod:`groupspec.pipeline.inject` says which kinds and how), and listed in
``manifest.json`` with the cluster, file, group, seq, line and kind.

Everything is deterministic in the seed. With a SparkSession each cluster is one Spark task
that writes its own file (on a cluster, ``out`` must be storage the executors share);
without one the clusters are generated in this process.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import math
import random
import time
import types
from binascii import b2a_base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from itertools import count, repeat
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from groupspec.assignors.registry import SERVER_ASSIGNOR_NAMES
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.gc_pause import paused_gc
from groupspec.pipeline.inject import VIOLATION_KINDS, inject
from groupspec.protocol.added_fields import added_defaults
from groupspec.sim.render import broker_config
from groupspec.sim.runner import simulate, simulate_trace
from groupspec.sim.scenario import apply_overrides, parse_scenario
from groupspec.trace import events as ev
from groupspec.trace.codec import default_test, field_names, to_json, type_hints
from groupspec.trace.columnar_write import write_events
from groupspec.trace.jsonl import event_to_json

#: fault patterns a group's schedule is drawn from
FAULTS: tuple[str, ...] = ("crash", "close-rejoin", "pause", "slow-poll", "scale-out",
                           "static-restart", "failover")

#: the members' group protocol: classic (JoinGroup/SyncGroup), consumer (KIP-848,
#: ConsumerGroupHeartbeat), or each group one or the other at even odds
GROUP_PROTOCOLS: tuple[str, ...] = ("classic", "consumer", "both")

#: every generated group's session timeout and heartbeat interval: what a classic member asks
#: for, and a consumer group's broker settings (group.consumer.session.timeout.ms and
#: group.consumer.heartbeat.interval.ms), so that a fault lasts as long against either protocol
SESSION_MS = 10_000
HEARTBEAT_MS = 3_000

#: events per cluster file when the caller does not choose
DEFAULT_EVENTS_PER_CLUSTER = 25_000


@dataclass(frozen=True)
class ClusterPlan:
    cluster: str
    index: int
    seed: int
    target_events: int
    #: kinds of the violations to inject into this cluster's groups, one group each
    inject: tuple[str, ...]
    out: str
    fmt: str
    #: only these fault patterns
    faults: tuple[str, ...] = FAULTS
    #: one of :data:`GROUP_PROTOCOLS`
    group_protocol: str = "classic"


@dataclass(frozen=True)
class Injected:
    cluster: str
    source: str
    group_id: str
    seq: int
    line: int
    kind: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "rules": list(VIOLATION_KINDS[self.kind])}


@dataclass(frozen=True)
class ClusterResult:
    cluster: str
    source: str
    events: int
    groups: int
    injected: tuple[Injected, ...]


# ---------------------------------------------------------------- one group's scenario
def group_scenario(group_id: str, rng: random.Random, faults: tuple[str, ...] = FAULTS,
                   group_protocol: str = "classic") -> dict[str, Any]:
    """A random scenario (simulator JSON) for one group, its members speaking
    ``group_protocol`` (one of :data:`GROUP_PROTOCOLS`). A classic group draws nothing more
    from ``rng`` than it did before there was a choice (the same seed, the same groups)."""
    scenario, chosen = _classic_scenario(group_id, rng, faults)
    if group_protocol == "classic" or (group_protocol == "both" and rng.random() < 0.5):
        return scenario
    return _as_consumer_group(scenario, chosen, rng)


def _as_consumer_group(scenario: dict[str, Any], chosen: list[str], rng: random.Random) -> dict[str, Any]:
    """The scenario with every member on the consumer protocol (KIP-848): the same members,
    static or not, topics and faults; the broker assigns, with a server-side assignor drawn
    here, and its consumer-group session and heartbeat interval are the classic members'
    (``chosen``: the scenario's fault patterns, for its description)."""
    out: dict[str, Any] = apply_overrides(scenario, group_protocol="consumer")
    # the broker assigns from its own view of the topics: in a file of many groups, each
    # consumer group has topics of its own (the classic groups' "orders" differ in size)
    out["topics"] = {f"{scenario['group_id']}.{name}": n for name, n in scenario["topics"].items()}
    remote = rng.choice(SERVER_ASSIGNOR_NAMES)
    out["defaults"]["remote_assignor"] = remote
    out["defaults"].pop("assignors", None)
    out["coordinator"]["consumer_group_session_timeout_ms"] = SESSION_MS
    out["coordinator"]["consumer_group_heartbeat_interval_ms"] = HEARTBEAT_MS
    static = any(x.get("static") for x in out["members"])
    out["description"] = (f"generated group {scenario['group_id']}: consumer{' static' if static else ''} "
                          f"{remote} (server-side), faults {', '.join(chosen)}")
    return out


def _classic_scenario(group_id: str, rng: random.Random,
                      faults: tuple[str, ...]) -> tuple[dict[str, Any], list[str]]:
    """The classic group's scenario, and the fault patterns it drew."""
    protocol = rng.choice(("eager", "cooperative", "static"))
    assignor = {"eager": rng.choice(("range", "roundrobin")), "cooperative": "cooperative-sticky",
                "static": rng.choice(("range", "cooperative-sticky"))}[protocol]
    n = rng.randint(2, 4)
    names = [f"c{i + 1}" for i in range(n)]
    topics = {"orders": rng.randint(2, 8)}
    if rng.random() < 0.4:
        topics["payments"] = rng.randint(1, 4)
    until = rng.randint(60, 110) * 1000
    members: list[dict[str, Any]] = [
        {"name": nm, "start_ms": i * 100, **({"static": True} if protocol == "static" else {})}
        for i, nm in enumerate(names)
    ]
    usable = [f for f in faults if f != "static-restart" or protocol == "static"]
    chosen = rng.sample(usable, k=min(len(usable), rng.randint(1, 2)))
    schedule: list[dict[str, Any]] = []
    t = rng.randint(15, 25) * 1000
    for kind in chosen:
        who = rng.choice(names[1:])
        if kind == "crash":
            schedule.append({"at_ms": t, "kind": "crash", "member": who})
        elif kind == "close-rejoin":
            spare = f"r{len(members)}"
            members.append({"name": spare, "start_ms": None,
                            **({"static": True} if protocol == "static" else {})})
            schedule.append({"at_ms": t, "kind": "close", "member": who})
            schedule.append({"at_ms": t + rng.randint(2, 6) * 1000, "kind": "join", "member": spare})
        elif kind == "pause":
            schedule.append({"at_ms": t, "kind": "pause", "member": who,
                             "duration_ms": rng.choice((4000, 15000))})
        elif kind == "slow-poll":
            schedule.append({"at_ms": t, "kind": "slow_poll", "member": who,
                             "duration_ms": rng.choice((10000, 35000))})
        elif kind == "scale-out":
            extra = f"x{len(members)}"
            members.append({"name": extra, "start_ms": None,
                            **({"static": True} if protocol == "static" else {})})
            schedule.append({"at_ms": t, "kind": "join", "member": extra})
        elif kind == "static-restart":
            schedule.append({"at_ms": t, "kind": "static_restart", "member": who,
                             "downtime_ms": rng.choice((3000, 6000))})
        elif kind == "failover":
            schedule.append({"at_ms": t, "kind": "failover"})
        t += rng.randint(15, 25) * 1000
    until = max(until, t + 20_000)
    return {
        "name": group_id,
        "description": f"generated group {group_id}: {protocol} {assignor}, faults {', '.join(chosen)}",
        "group_id": group_id,
        "seed": rng.randrange(2**31),
        "until_ms": until,
        "topics": topics,
        "defaults": {"assignors": [assignor],
                     "session_timeout_ms": SESSION_MS, "heartbeat_interval_ms": HEARTBEAT_MS,
                     "max_poll_interval_ms": 30000, "auto_commit_interval_ms": 5000},
        "members": members,
        "coordinator": {"group_initial_rebalance_delay_ms": rng.choice((0, 3000))},
        "network": {"delay_ms": rng.randint(1, 5)},
        "faults": schedule,
    }, chosen


def simulate_group(group_id: str, rng: random.Random, faults: tuple[str, ...] = FAULTS,
                   group_protocol: str = "classic") -> list[ev.Event]:
    """One group's events (no header), connections prefixed with the group id."""
    # a lean run leaves out the v1.1 consumption (Fetch) events and the requests still
    # unanswered when the run stopped: the collection stays what it was (answered
    # group-protocol exchanges); see simulate_group_reference for the events it must equal
    scenario = parse_scenario(group_scenario(group_id, rng, faults, group_protocol), group_id)
    return simulate_trace(scenario, connection_prefix=f"{group_id}/")


def simulate_group_reference(group_id: str, rng: random.Random, faults: tuple[str, ...] = FAULTS,
                             group_protocol: str = "classic") -> list[ev.Event]:
    """:func:`simulate_group` the long way, kept for comparison (tests/test_generate_fast.py):
    a full simulator run, its trace filtered and its connections renamed afterwards."""
    scenario = parse_scenario(group_scenario(group_id, rng, faults, group_protocol), group_id)
    out: list[ev.Event] = []
    for e in simulate(scenario).trace:
        if isinstance(e, ev.FetchEvent) or (isinstance(e, ev.WireExchange) and e.response is None):
            continue
        if isinstance(e, ev.WireExchange | ev.DecodeErrorEvent):
            e = dataclasses.replace(e, connection=f"{group_id}/{e.connection}")
        out.append(e)
    return out


# ---------------------------------------------------------------- a cluster's file
def _when(e: ev.Event) -> float:
    # the generator's events, by exact class first (most are records and exchanges)
    if type(e) is ev.RecordEvent:
        return float(e.at_ms)
    if type(e) is ev.WireExchange:
        return e.received_ms if e.received_ms is not None else e.sent_ms
    if isinstance(e, ev.WireExchange):
        return e.received_ms if e.received_ms is not None else e.sent_ms
    if isinstance(e, ev.DecodeErrorEvent):
        return e.at_ms
    if isinstance(e, ev.RecordEvent | ev.ExpiryEvent):
        return float(e.at_ms)
    return 0.0


def merge(groups: list[list[ev.Event]], in_place: bool = False) -> Iterator[tuple[int, int, ev.Event]]:
    """The groups' events in time order (each group's own order kept), renumbered from seq
    1: (group index, index within the group, event). The events are copies with their new
    seq, or, ``in_place``, the groups' own events with their seq changed (for a caller whose
    events nothing else holds: the generator's, made for the file they are merged into)."""
    renumbered = _renumber_in_place if in_place else _renumbered
    # (time, group index, index, event): two streams' heads never tie on (time, group
    # index), and a stream has one item in the merge's heap at a time, so comparing the
    # tuples orders them as a key of (time, group index) would, without calling a key
    whens = [list(map(_when, events)) for events in groups]
    if all(w == sorted(w) for w in whens):
        # each group in time order (the simulator's are): the merge's order is that of one
        # stable sort of all the events by time, the groups one after another (ties keep
        # group index, then index), which sorts the times in C instead of popping a heap
        # per event
        flat = [e for events in groups for e in events]
        gis = [gi for gi, events in enumerate(groups) for _ in events]
        eis = [ei for events in groups for ei in range(len(events))]
        times = [t for w in whens for t in w]
        for seq, i in enumerate(sorted(range(len(flat)), key=times.__getitem__), start=1):
            yield gis[i], eis[i], renumbered(flat[i], seq)
        return
    streams = [zip(whens[gi], repeat(gi), count(), events) for gi, events in enumerate(groups)]
    for seq, (_, gi, ei, e) in enumerate(heapq.merge(*streams), start=1):
        yield gi, ei, renumbered(e, seq)


def _renumbered(e: ev.Event, seq: int) -> ev.Event:
    """``dataclasses.replace(e, seq=seq)`` for the trace events (frozen dataclasses without
    ``__post_init__`` or slots): a copy of the fields with ``seq`` changed, without calling
    ``__init__`` again."""
    new = object.__new__(type(e))
    d = new.__dict__
    d.update(e.__dict__)
    d["seq"] = seq
    return new


def _renumber_in_place(e: ev.Event, seq: int) -> ev.Event:
    """``e`` itself with ``seq`` changed (a frozen dataclass: its ``__dict__`` directly)."""
    e.__dict__["seq"] = seq
    return e


def _take_images(events: list[ev.Event], gi: int, topics: dict[str, ev.MetadataTopic],
                 image_at: tuple[int, int] | None) -> tuple[list[ev.Event], tuple[int, int] | None]:
    """Group ``gi``'s events without its metadata images, their topics added to ``topics`` (by name);
    the first image of the file is kept (its place returned) to become the file's. A
    generated group's topics never change (every image is at the run's start, and its topic
    names are its own)."""
    out: list[ev.Event] = []
    for e in events:
        if type(e) is ev.MetadataEvent:
            assert e.at_ms == 0, "a generated group's topics change"
            topics.update((t.name, t) for t in e.topics)
            if image_at is None:
                image_at = (gi, len(out))
                out.append(e)
            continue
        out.append(e)
    return out, image_at


def generate_cluster(plan: ClusterPlan) -> ClusterResult:
    """Simulate the cluster's groups, inject its violations, write its file."""
    # the cluster's events are many small frozen dataclasses in no reference cycle (nor are
    # the lean runs that make them): the cycle collector would walk them again and again
    with paused_gc():
        return _generate_cluster(plan)


def _generate_cluster(plan: ClusterPlan) -> ClusterResult:
    rng = random.Random(f"{plan.seed}/{plan.cluster}")
    groups: list[list[ev.Event]] = []
    names: list[str] = []
    total = 0
    pending = list(plan.inject)
    changed: dict[int, tuple[int, str, str]] = {}  # group index -> (event index, kind, detail)
    # KIP-848 groups: the broker's topics, one image for the file (a metadata event is the
    # whole image: one per group would leave the last group's topics only); kept where the
    # first consumer group's run put its own, (group index, event index)
    topics: dict[str, ev.MetadataTopic] = {}
    image_at: tuple[int, int] | None = None
    while total < plan.target_events or pending:
        gid = f"{plan.cluster}-g{len(groups):04d}"
        events = simulate_group(gid, rng, plan.faults, plan.group_protocol)
        if plan.group_protocol != "classic":
            events, image_at = _take_images(events, len(groups), topics, image_at)
        if pending and len(groups) % 2 == 0:
            # every other group may carry a violation; a group that cannot is left alone
            hit = inject(pending[0], events, rng)
            if hit is not None:
                index, events, detail = hit
                changed[len(groups)] = (index, pending.pop(0), detail)
        groups.append(events)
        names.append(gid)
        total += len(events)
        if len(groups) > 50 + 4 * (len(plan.inject) + plan.target_events // 200):
            raise RuntimeError(f"{plan.cluster}: no group to inject {pending[0]} into")
    header = ev.Header(source="groupspec pipeline generate", cluster=plan.cluster,
                       note=f"{len(groups)} generated groups, seed {plan.seed}")
    if plan.group_protocol != "classic":
        # the consumer groups' session and heartbeat interval are the broker's, which the
        # wire does not show (trace v1.2); a classic collection's header is as it was
        header = dataclasses.replace(header, minor=2, broker_config=broker_config(CoordinatorConfig(
            consumer_group_session_timeout_ms=SESSION_MS, consumer_group_heartbeat_interval_ms=HEARTBEAT_MS)))
    if image_at is not None:
        gi, ei = image_at
        image = groups[gi][ei]
        assert isinstance(image, ev.MetadataEvent)
        groups[gi][ei] = dataclasses.replace(image, topics=tuple(topics[name] for name in sorted(topics)))
    merged: list[ev.Event] = [header]
    injected: list[Injected] = []
    suffix = "parquet" if plan.fmt == "parquet" else "jsonl"
    source = str(Path(plan.out) / f"{plan.cluster}.{suffix}")
    # the groups' events are this file's alone (an injected group's list shares its other
    # events with the list it was made from, which is dropped): renumbered in place
    for gi, ei, e in merge(groups, in_place=True):
        merged.append(e)
        change = changed.get(gi)
        if change is not None and change[0] == ei:
            injected.append(Injected(plan.cluster, source, names[gi], e.seq, e.seq + 1, change[1], change[2]))
    write_trace_file(merged, source, plan.fmt)
    return ClusterResult(plan.cluster, source, total, len(groups), tuple(injected))


#: an event's JSON value as its line's text (the events' values hold no cycles to check for)
_json_encoder = json.JSONEncoder(separators=(",", ":"), check_circular=False)
_dumps = _json_encoder.encode


def _line_encoder() -> Callable[[Any], str]:
    """:data:`_dumps` without its two Python calls and the C encoder it makes per value:
    ``JSONEncoder.encode`` of a dict is the join of what ``json.encoder.c_make_encoder``
    (the C encoder, made with the encoder's own settings) returns for it, which is made
    once here."""
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the encoder's own path
        return _dumps
    e = _json_encoder
    strings = json.encoder.encode_basestring_ascii if e.ensure_ascii else json.encoder.encode_basestring
    encode = make(None, e.default, strings, None,
                  e.key_separator, e.item_separator, e.sort_keys, e.skipkeys, e.allow_nan)
    join = "".join

    def line(value: Any) -> str:
        return join(encode(value, 0))

    return line


_line = _line_encoder()


# ---------------------------------------------------------------- an event's line as text
#: a JSON string as the C encoder writes it (ASCII, as :data:`_json_encoder`)
_esc: Callable[[str], str] = json.encoder.encode_basestring_ascii
def _qb64(value: bytes) -> str:
    """Bytes as the JSON string of what :func:`to_json` makes of them: base64 text, whose
    characters (letters, digits, ``+``, ``/``, ``=``) a JSON string holds unescaped."""
    return '"' + b2a_base64(value, newline=False).decode("ascii") + '"'


#: what a line encoder's source runs with: the exact types a plain field's value must have
#: to be written as the text below it
_TEXT_SCOPE: dict[str, Any] = {
    "_type": type, "_str": str, "_int": int, "_bool": bool, "_float": float, "_inf": math.inf,
    "_esc": _esc, "_frepr": float.__repr__, "_tuple": tuple, "_bytes": bytes, "_qb64": _qb64,
}


def _plain_text(x: str, hint: Any) -> tuple[str, str] | None:
    """For variable ``x`` of a field typed ``hint``: (the test that its value is one the
    f-string replacement field after it writes as the JSON encoder would, that field), if
    ``hint`` is str, int, bool, float or one of those or None; else None. The json module
    writes an int and a finite float as their ``__repr__`` (an f-string formats an int as
    that, and ``!r`` a float)."""
    if hint is str:
        return f"_type({x}) is _str", f"{{_esc({x})}}"
    if hint is bool:
        return f"_type({x}) is _bool", f'{{"true" if {x} else "false"}}'
    if hint is int:
        return f"_type({x}) is _int", f"{{{x}}}"
    if hint is float:  # NaN and the infinities are left to the encoder
        return f"(_type({x}) is _float and -_inf < {x} < _inf)", f"{{{x}!r}}"
    if hint is bytes:
        return f"_type({x}) is _bytes", f"{{_qb64({x})}}"
    args = get_args(hint)
    if get_origin(hint) in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        other = args[0] if args[1] is type(None) else args[1]
        inner = _plain_text(x, other)
        if inner is not None:
            value = {str: f"_esc({x})", bool: f'("true" if {x} else "false")', int: x,
                     float: f"_frepr({x})", bytes: f"_qb64({x})"}[other]
            return f"({x} is None or {inner[0]})", f'{{"null" if {x} is None else {value}}}'
    return None


def _const(text: str) -> str:
    """Constant text as a piece of a single-quoted f-string."""
    if "'" in text or "\\" in text:
        raise ValueError(f"not a constant of a line encoder: {text!r}")
    return text.replace("{", "{{").replace("}", "}}")


def _object_text(cls: type, var: str, first: str, lines: list[str], tests: list[str],
                 parts: list[str], scope: dict[str, Any], special: dict[str, str] | None = None) -> None:
    """Source that writes dataclass ``var`` (of class ``cls``) as its JSON object: reads
    of its fields into ``lines``, the tests its plain values must pass into ``tests``, the
    pieces of the f-string that writes it into ``parts``; ``first`` is the object's first
    entries (``"kind":"record"``). A field in ``special`` is that piece (``{x}`` its
    variable); an enum (not an int or str one) is its name, the class put in ``scope``;
    any other that is not plain, the encoder's text of its :func:`to_json` value
    (``_any``)."""
    special = special or {}
    omitted = added_defaults(cls)
    parts.append(_const("{" + first))
    written = bool(first)
    for i, name in enumerate(field_names(cls)):
        x = f"{var}_{i}"
        lines.append(f"    {x} = {var}.{name}")
        if name in omitted:
            # left out at its default (a field added to the vocabulary later); any other
            # value is written by the encoder
            tests.append(default_test(x, omitted[name]))
            continue
        parts.append(_const(("," if written else "") + json.dumps(name) + ":"))
        written = True
        if name in special:
            parts.append(special[name].format(x=x))
            continue
        hint = type_hints(cls)[name]
        plain = _plain_text(x, hint)
        if plain is None and isinstance(hint, type) and issubclass(hint, Enum) \
                and not issubclass(hint, int | float | str):
            # to_json writes an enum member as its name
            k = f"_k{len(scope)}"
            scope[k] = hint
            plain = f"_type({x}) is {k}", f"{{_esc({x}._name_)}}"
        if plain is None:
            plain = _items_text(x, hint, scope)
        if plain is None:
            parts.append(f"{{_any({x})}}")
        else:
            tests.append(plain[0])
            parts.append(plain[1])
    parts.append(_const("}"))


def _items_text(x: str, hint: Any, scope: dict[str, Any]) -> tuple[str, str] | None:
    """:func:`_plain_text` for a field typed ``tuple[C, ...]``, ``C`` a dataclass whose
    fields are all plain or enums (an OffsetCommit's partitions): a tuple value is the
    JSON array of its items' texts, each written by an encoder of ``C``'s objects (the
    encoder's own text of an item of another class or with another value, as the encoder
    writes a list: its items' texts between brackets, separated by commas). Else None."""
    if get_origin(hint) is not tuple:
        return None
    args = get_args(hint)
    item = args[0] if len(args) == 2 and args[1] is Ellipsis else None
    if not (isinstance(item, type) and dataclasses.is_dataclass(item)) or not all(
            _plain_text("v", h) is not None
            or (isinstance(h, type) and issubclass(h, Enum) and not issubclass(h, int | float | str))
            for h in (type_hints(item)[n] for n in field_names(item))):
        return None
    k = f"_k{len(scope)}"
    scope[k] = _item_text_encoder(item)
    return f"_type({x}) is _tuple", f'[{{",".join(map({k}, {x}))}}]'


def _item_text_encoder(cls: type) -> Callable[[Any], str]:
    """``_line(to_json(v))`` for a dataclass ``v`` of class ``cls`` (plain or enum
    fields), written out; a value of another class, or with a field of another type than
    its hint's, is the encoder's."""
    lines: list[str] = []
    tests: list[str] = []
    parts: list[str] = []
    classes: dict[str, Any] = {"_cls": cls}
    _object_text(cls, "v", "", lines, tests, parts, classes)
    body = "\n".join(lines)
    test = " and ".join(tests) or "True"
    source = (f"def item(v):\n    if _type(v) is not _cls:\n        return _any(v)\n{body}\n"
              f"    if not ({test}):\n        return _any(v)\n    return f'{''.join(parts)}'\n")
    scope = {**_TEXT_SCOPE, **classes, "_any": _any_text}
    exec(source, scope)  # the source is built from field names and type hints alone
    item: Callable[[Any], str] = scope["item"]
    return item


def _compile_line(lines: list[str], tests: list[str], parts: list[str],
                  classes: dict[str, Any]) -> Callable[[Any], str]:
    body = "\n".join(lines)
    test = " and ".join(tests) or "True"
    source = (f"def line(e):\n{body}\n    if not ({test}):\n        return _slow(e)\n"
              f"    return f'{''.join(parts)}'\n")
    scope = {**_TEXT_SCOPE, **classes, "_any": _any_text, "_slow": _slow_line}
    exec(source, scope)  # the source is built from field names and type hints alone
    line: Callable[[Any], str] = scope["line"]
    return line


def _any_text(value: Any) -> str:
    return _line(to_json(value))


def _slow_line(e: ev.Event) -> str:
    return _line(event_to_json(e))


def _event_text_encoder(t: type) -> Callable[[Any], str]:
    """``_line(event_to_json(e))`` for events of class ``t`` (not RecordEvent), written
    out: the plain fields' text made here, the others' by the encoder."""
    lines: list[str] = []
    tests: list[str] = []
    parts: list[str] = []
    classes: dict[str, Any] = {}
    _object_text(t, "e", f'"kind":{json.dumps(ev.KINDS[t])}', lines, tests, parts, classes)
    return _compile_line(lines, tests, parts, classes)


def _exchange_text_encoder(req: type, resp: type) -> Callable[[Any], str]:
    """:func:`_event_text_encoder` for exchanges of request class ``req`` and response
    class ``resp`` (NoneType: none), their objects written out too."""
    lines: list[str] = []
    tests: list[str] = []
    parts: list[str] = []
    classes: dict[str, Any] = {}
    names = field_names(ev.WireExchange)
    _object_text(ev.WireExchange, "e", '"kind":"exchange"', lines, tests, parts, classes,
                 special={"request": "<{x}>", "response": "<{x}>"})
    for var, t in ((f"e_{names.index('request')}", req), (f"e_{names.index('response')}", resp)):
        inner: list[str] = []
        if t is type(None):
            inner.append("null")
        elif dataclasses.is_dataclass(t):
            _object_text(t, var, "", lines, tests, inner, classes)
        else:
            inner.append(f"{{_any({var})}}")
        at = parts.index(f"<{var}>")
        parts[at:at + 1] = inner
    return _compile_line(lines, tests, parts, classes)


def _record_text_encoder(rt: type) -> Callable[[Any], str]:
    """``_line(event_to_json(e))`` for record events of record class ``rt``: written out
    if every field of the record is plain, else the encoder's."""
    if any(_plain_text("x", type_hints(rt)[n]) is None for n in field_names(rt)):
        return _slow_line
    lines: list[str] = []
    tests: list[str] = []
    parts: list[str] = []
    record = f"e_{field_names(ev.RecordEvent).index('record')}"
    classes: dict[str, Any] = {}
    _object_text(ev.RecordEvent, "e", '"kind":"record"', lines, tests, parts, classes,
                 special={"record": "<{x}>"})
    # the record's object (its "type" first, as event_to_json writes it) for that value
    inner: list[str] = []
    _object_text(rt, record, f'"type":{json.dumps(rt.__name__)}', lines, tests, inner, classes)
    at = parts.index(f"<{record}>")
    parts[at:at + 1] = inner
    return _compile_line(lines, tests, parts, classes)


#: event class -> its line's encoder; record class -> a record event's; (request class,
#: response class) -> an exchange's
_EVENT_LINES: dict[type, Callable[[Any], str]] = {}
_RECORD_LINES: dict[type, Callable[[Any], str]] = {}
_EXCHANGE_LINES: dict[tuple[type, type], Callable[[Any], str]] = {}


def _exchange_line(e: Any) -> str:  # a WireExchange
    key = (type(e.request), type(e.response))
    enc = _EXCHANGE_LINES.get(key)
    if enc is None:
        enc = _EXCHANGE_LINES[key] = _exchange_text_encoder(*key)
    return enc(e)


def _record_event_line(e: Any) -> str:  # a RecordEvent
    rt = type(e.record)
    enc = _RECORD_LINES.get(rt)
    if enc is None:
        enc = _RECORD_LINES[rt] = _record_text_encoder(rt)
    return enc(e)


def _event_line(e: ev.Event) -> str:
    """``_line(event_to_json(e))``: the text of the plain values (strings, ints, finite
    floats, booleans, nulls) written out per class, without the dict the encoder reads;
    a value of another type than its field's falls back to that encoder."""
    t = type(e)
    enc = _EVENT_LINES.get(t)
    if enc is None:
        if t is ev.RecordEvent:
            enc = _record_event_line
        elif t is ev.WireExchange:
            enc = _exchange_line
        else:
            enc = _event_text_encoder(t) if t in ev.KINDS else _slow_line
        _EVENT_LINES[t] = enc
    return enc(e)


def write_trace_file(events: list[ev.Event], path: str, fmt: str) -> None:
    """Events (the header first) as a trace file; line n holds seq n - 1. Each event is
    encoded once: JSON Lines are its line; Parquet (the columnar layout) is written from
    the event objects a column at a time (:mod:`groupspec.trace.columnar_write`), as
    :func:`groupspec.trace.parquet.write_events` writes them, without making each line and
    parsing it back (tests/test_generate_fast.py compares the two)."""
    if fmt == "parquet":
        # the generator's events come back from their JSON lines unchanged, as that
        # writer requires
        write_events(events, path)
        return
    # the lines as the trace writer writes them, ASCII (json.dumps escapes the rest): the
    # file's text encoded once
    text = "\n".join(map(_event_line, events))
    with open(path, "wb") as fh:
        fh.write((text + "\n" if events else "").encode("ascii"))


# ---------------------------------------------------------------- the collection
def plan_clusters(events: int, out: Path, inject_k: int = 0, seed: int = 1, fmt: str = "parquet",
                  clusters: int | None = None, faults: tuple[str, ...] = FAULTS,
                  group_protocol: str = "classic") -> list[ClusterPlan]:
    """Split ``events`` over clusters (about :data:`DEFAULT_EVENTS_PER_CLUSTER` each) and
    the violations over the clusters, kinds taking turns."""
    if events < 1:
        raise ValueError("--events: must be at least 1")
    if inject_k < 0:
        raise ValueError("--inject-violations: must be >= 0")
    if fmt not in ("parquet", "jsonl"):
        raise ValueError(f"--format: parquet or jsonl, not {fmt!r}")
    if group_protocol not in GROUP_PROTOCOLS:
        raise ValueError(f"--group-protocol: {', '.join(GROUP_PROTOCOLS)}, not {group_protocol!r}")
    n = clusters or max(1, math.ceil(events / DEFAULT_EVENTS_PER_CLUSTER))
    kinds = list(VIOLATION_KINDS)
    rng = random.Random(seed)
    order = [kinds[i % len(kinds)] for i in range(inject_k)]
    rng.shuffle(order)
    per: list[list[str]] = [[] for _ in range(n)]
    for i, kind in enumerate(order):
        per[i % n].append(kind)
    return [
        ClusterPlan(f"cluster-{i:03d}", i, seed, events // n + (1 if i < events % n else 0),
                    tuple(per[i]), str(out), fmt, faults, group_protocol)
        for i in range(n)
    ]


@dataclass(frozen=True)
class Collection:
    out: Path
    clusters: list[ClusterResult]
    elapsed_s: float

    @property
    def events(self) -> int:
        return sum(c.events for c in self.clusters)

    @property
    def injected(self) -> list[Injected]:
        return [i for c in self.clusters for i in c.injected]

    def manifest(self, seed: int, group_protocol: str = "classic") -> dict[str, Any]:
        return {
            "generator": "groupspec pipeline generate",
            "seed": seed,
            "group_protocol": group_protocol,
            "events": self.events,
            "groups": sum(c.groups for c in self.clusters),
            "clusters": [{"cluster": c.cluster, "source": c.source, "events": c.events, "groups": c.groups}
                         for c in self.clusters],
            "injected": [i.to_json() for i in self.injected],
            "elapsed_s": round(self.elapsed_s, 1),
        }


def generate(events: int, out: Path, inject_k: int = 0, seed: int = 1, fmt: str = "parquet",
             clusters: int | None = None, spark: Any = None,
             progress: Callable[[int, int], None] | None = None,
             faults: tuple[str, ...] = FAULTS, group_protocol: str = "classic") -> Collection:
    """Write a collection of about ``events`` events (at least that many) to ``out`` and its
    ``manifest.json``; with ``spark``, one Spark task per cluster."""
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    plans = plan_clusters(events, out, inject_k, seed, fmt, clusters, faults, group_protocol)
    results: list[ClusterResult] = []
    if spark is None:
        for i, plan in enumerate(plans):
            results.append(generate_cluster(plan))
            if progress is not None:
                progress(i + 1, len(plans))
    else:
        results = _on_spark(spark, plans, progress)
    results.sort(key=lambda c: c.cluster)
    collection = Collection(out, results, time.perf_counter() - t0)
    (out / "manifest.json").write_text(json.dumps(collection.manifest(seed, group_protocol), indent=1) + "\n", encoding="utf-8")
    return collection


def _on_spark(spark: Any, plans: list[ClusterPlan], progress: Callable[[int, int], None] | None) -> list[ClusterResult]:
    from groupspec.pipeline.validate_job import run_with_progress

    sc = spark.sparkContext
    done = sc.accumulator(0)

    def task(plan: ClusterPlan) -> ClusterResult:
        result = generate_cluster(plan)
        done.add(1)
        return result

    rdd = sc.parallelize(plans, max(len(plans), 1)).map(task)
    results: list[ClusterResult] = run_with_progress(
        rdd.collect, lambda: int(done.value), len(plans), progress)
    return results

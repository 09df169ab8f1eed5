"""Scenarios: who joins the group, which topics exist, and what goes wrong when.

A scenario is JSON (bundled ones live in ``groupspec/sim/scenarios/``)::

    {"name": "...", "description": "...", "group_id": "g", "seed": 1, "until_ms": 240000,
     "topics": {"orders": 6},
     "defaults": {"assignors": ["cooperative-sticky"], "session_timeout_ms": 10000, ...},
     "members": [{"name": "c1", "start_ms": 0, "static": false, ...}],
     "coordinator": {"group_initial_rebalance_delay_ms": 3000},
     "network": {"delay_ms": 2},
     "faults": [{"at_ms": 30000, "kind": "crash", "member": "c2"}]}

Fault kinds (``FAULT_KINDS``): crash, pause (``duration_ms``), slow_poll (``duration_ms``),
static_restart (``downtime_ms``), close, join, failover, delay (``delay_ms``,
``duration_ms``), loss (``probability``, ``duration_ms``), new_topic (``topic``,
``partitions``), add_partitions (``topic``, ``partitions``: the new count).

Every error names the place: ``scenario.json: faults[2].member: unknown member 'c9'``.
"""

from __future__ import annotations

import functools
import json
import typing
from dataclasses import dataclass, field, fields
from typing import Any

from groupspec.assignors.base import RebalanceProtocol
from groupspec.assignors.registry import get_assignor
from groupspec.client.config import ConsumerConfig
from groupspec.coordinator.config import CoordinatorConfig

FAULT_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "crash": (("member",), "the member's process dies; no LeaveGroup, nothing more is sent"),
    "pause": (("member", "duration_ms"), "the process freezes (GC pause): no heartbeat, no poll"),
    "slow_poll": (("member", "duration_ms"), "processing stalls: heartbeats go on, poll() does not (max.poll.interval.ms)"),
    "static_restart": (("member", "downtime_ms"), "a static member's process restarts without LeaveGroup and rejoins with its group.instance.id"),
    "close": (("member",), "the consumer closes cleanly (commit, revoke, LeaveGroup if dynamic)"),
    "join": (("member",), "a member defined with start_ms = null starts now (scale-out)"),
    "failover": ((), "the group coordinator moves: parked requests get NOT_COORDINATOR, the group reloads"),
    "delay": (("delay_ms", "duration_ms"), "every message takes delay_ms for duration_ms"),
    "loss": (("probability", "duration_ms"), "every message is lost with this probability for duration_ms"),
    "new_topic": (("topic", "partitions"), "a topic is created (pattern subscriptions may gain it)"),
    "add_partitions": (("topic", "partitions"), "a topic grows to this many partitions"),
}


class ScenarioError(ValueError):
    pass


#: Limits that bound the work of one run (docs/simulator.md): partitions per topic, members,
#: simulated time (seven days).
MAX_PARTITIONS = 10_000
MAX_MEMBERS = 10_000
MAX_SIMULATED_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class Fault:
    at_ms: int
    kind: str
    member: str | None = None
    duration_ms: int = 0
    downtime_ms: int = 0
    delay_ms: int = 0
    probability: float = 0.0
    topic: str | None = None
    partitions: int = 0

    def describe(self) -> str:
        k = self.kind
        who = f" {self.member}" if self.member else ""
        if k in ("pause", "slow_poll", "delay", "loss"):
            extra = {"delay": f" {self.delay_ms} ms", "loss": f" p={self.probability}"}.get(k, "")
            return f"{k}{who}{extra} for {self.duration_ms} ms"
        if k == "static_restart":
            return f"static restart{who} (down {self.downtime_ms} ms)"
        if k in ("new_topic", "add_partitions"):
            return f"{k} {self.topic} -> {self.partitions} partitions"
        return f"{k}{who}"


@dataclass(frozen=True)
class MemberSpec:
    name: str
    config: ConsumerConfig
    start_ms: int | None = 0


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    group_id: str
    seed: int
    until_ms: int
    topics: dict[str, int]
    members: tuple[MemberSpec, ...]
    coordinator: CoordinatorConfig
    network_delay_ms: int
    faults: tuple[Fault, ...]
    #: records appended per partition per second (the producers)
    produce_rate_per_s: int = 20
    #: KIP-848: how long after the heartbeat that scheduled it the coordinator's executor
    #: finishes a group's regex resolution (Kafka: a few milliseconds)
    regex_resolution_ms: int = 5
    extra: dict[str, Any] = field(default_factory=dict)


_CONSUMER_KEYS = {f.name for f in fields(ConsumerConfig)} - {"group_id", "client_id", "group_instance_id"}
_COORD_KEYS = {f.name for f in fields(CoordinatorConfig)}
_TOP_KEYS = {"name", "description", "group_id", "seed", "until_ms", "topics", "defaults", "members",
             "coordinator", "network", "faults", "produce_rate_per_s",
             "regex_resolution_ms"}


def _at(where: str, key: str) -> str:
    """``FILE: PLACE.key``; ``where`` ending in ':' is a file with no place yet."""
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}"


def _bounded(value: Any, where: str, lo: int, hi: int) -> int:
    """An integer in [lo, hi] (the limits bound the work a scenario can ask for)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScenarioError(f"{where}: expected an integer, got {_short(value)}")
    if not lo <= value <= hi:
        raise ScenarioError(f"{where}: expected {lo:,} to {hi:,}, got {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 3000 else "a huge integer"
    return text if len(text) <= 40 else text[:30] + "..."


def _require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise ScenarioError(f"{_at(where, key)}: missing")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ScenarioError(f"{_at(where, key)}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The config class's type hints, evaluated once (the generator parses a scenario per
    group; evaluating the annotations' text was about 5% of its simulator's time)."""
    return typing.get_type_hints(cls)


def _check_types(cls: type, raw: dict[str, Any], where: str) -> None:
    """Integer settings are integers in Kafka's int range (no NaN, no floats, no booleans) and
    boolean settings booleans: the config classes take what they are given."""
    hints = _hints(cls)
    for key, value in raw.items():
        hint = hints.get(key)
        if hint is int:
            _bounded(value, f"{where}.{key}", 0, 2**31 - 1)
        elif hint is bool and not isinstance(value, bool):
            raise ScenarioError(f"{where}.{key}: expected true or false, got {_short(value)}")


def _consumer_config(raw: dict[str, Any], where: str, group_id: str, name: str, static: bool) -> ConsumerConfig:
    unknown = set(raw) - _CONSUMER_KEYS
    if unknown:
        raise ScenarioError(f"{where}: unknown consumer setting(s) {sorted(unknown)}; known: {sorted(_CONSUMER_KEYS)}")
    _check_types(ConsumerConfig, raw, where)
    values = dict(raw)
    for key in ("assignors", "topics"):
        if key in values:
            if not isinstance(values[key], list) or not all(isinstance(x, str) for x in values[key]):
                raise ScenarioError(f"{where}.{key}: expected a list of strings")
            values[key] = tuple(values[key])
    try:
        return ConsumerConfig(
            group_id=group_id,
            client_id=name,
            group_instance_id=f"{name}-instance" if static else None,
            **values,
        )
    except (TypeError, ValueError) as e:
        raise ScenarioError(f"{where}: {e}") from None


def parse_scenario(data: Any, source: str = "scenario", fault_places: dict[int, str] | None = None) -> Scenario:
    """Build a scenario from parsed JSON; ScenarioError names the bad place. ``fault_places``
    names faults that did not come from the file (``--fault[0]``), by index."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a JSON object")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ScenarioError(f"{source}: unknown key(s) {sorted(unknown)}; known: {sorted(_TOP_KEYS)}")
    group_id = data.get("group_id", "group")
    for key in ("name", "description", "group_id"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(f"{source}: {key}: expected a string, got {_short(data[key])}")
    for key, kind, noun in (("coordinator", dict, "an object"), ("faults", list, "a list")):
        if key in data and not isinstance(data[key], kind):
            raise ScenarioError(f"{source}: {key}: expected {noun}, got {_short(data[key])}")
    topics = _require(data, "topics", dict, f"{source}:")
    for t, n in topics.items():
        _bounded(n, f"{source}: topics.{t}", 1, MAX_PARTITIONS)
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ScenarioError(f"{source}: defaults: expected an object")
    members: list[MemberSpec] = []
    raw_members = _require(data, "members", list, f"{source}:")
    if not raw_members:
        raise ScenarioError(f"{source}: members: at least one member is needed")
    if len(raw_members) > MAX_MEMBERS:
        raise ScenarioError(f"{source}: members: {len(raw_members):,} members; the limit is {MAX_MEMBERS:,}")
    until_ms = _bounded(_require(data, "until_ms", int, f"{source}:"), f"{source}: until_ms", 0, MAX_SIMULATED_MS)
    for i, raw in enumerate(raw_members):
        where = f"{source}: members[{i}]"
        if not isinstance(raw, dict):
            raise ScenarioError(f"{where}: expected an object")
        name = _require(raw, "name", str, where)
        if any(ms.name == name for ms in members):
            raise ScenarioError(f"{where}.name: duplicate member name {name!r}")
        static = raw.get("static", False)
        if not isinstance(static, bool):
            raise ScenarioError(f"{where}.static: expected true or false, got {_short(static)}")
        start = raw.get("start_ms", 0)
        if start is not None:
            _bounded(start, f"{where}.start_ms", 0, MAX_SIMULATED_MS)
        settings = {**defaults, **{k: v for k, v in raw.items() if k not in ("name", "static", "start_ms")}}
        settings.setdefault("topics", sorted(topics) if "pattern" not in settings else [])
        members.append(MemberSpec(name, _consumer_config(settings, where, group_id, name, static), start))
    coord_raw = data.get("coordinator", {})
    unknown = set(coord_raw) - _COORD_KEYS
    if unknown:
        raise ScenarioError(f"{source}: coordinator: unknown setting(s) {sorted(unknown)}")
    _check_types(CoordinatorConfig, coord_raw, f"{source}: coordinator")
    try:
        coordinator = CoordinatorConfig(**coord_raw)
    except (TypeError, ValueError) as e:
        raise ScenarioError(f"{source}: coordinator: {e}") from None
    names = {ms.name for ms in members}
    faults: list[Fault] = []
    for i, raw in enumerate(data.get("faults", [])):
        where = (fault_places or {}).get(i, f"{source}: faults[{i}]")
        if not isinstance(raw, dict):
            raise ScenarioError(f"{where}: expected an object")
        kind = _require(raw, "kind", str, where)
        if kind not in FAULT_KINDS:
            raise ScenarioError(f"{where}.kind: unknown fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
        needed, _ = FAULT_KINDS[kind]
        for key in ("at_ms", *needed):
            if key not in raw:
                raise ScenarioError(f"{where}.{key}: missing (a {kind} fault needs {', '.join(('at_ms', *needed))})")
        allowed = {"at_ms", "kind", *needed}
        extra = set(raw) - allowed
        if extra:
            raise ScenarioError(f"{where}: unexpected key(s) {sorted(extra)} for a {kind} fault")
        for key in ("member", "topic"):
            if key in raw and not isinstance(raw[key], str):
                raise ScenarioError(f"{where}.{key}: expected a string, got {_short(raw[key])}")
        member = raw.get("member")
        if member is not None and member not in names:
            raise ScenarioError(f"{where}.member: unknown member {member!r}")
        try:
            fault = Fault(**raw)
        except TypeError as e:
            raise ScenarioError(f"{where}: {e}") from None
        for key in ("at_ms", "duration_ms", "downtime_ms", "delay_ms"):
            _bounded(getattr(fault, key), f"{where}.{key}", 0, MAX_SIMULATED_MS)
        if kind in ("new_topic", "add_partitions"):
            _bounded(fault.partitions, f"{where}.partitions", 1, MAX_PARTITIONS)
        p = fault.probability
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            raise ScenarioError(f"{where}.probability: expected a number from 0 to 1, got {_short(p)}")
        if kind == "static_restart" and next(ms for ms in members if ms.name == member).config.group_instance_id is None:
            raise ScenarioError(f"{where}.member: {member!r} is not static")
        faults.append(fault)
    network = data.get("network", {})
    if not isinstance(network, dict):
        raise ScenarioError(f"{source}: network: expected an object")
    unknown_net = set(network) - {"delay_ms"}
    if unknown_net:
        raise ScenarioError(f"{source}: network: unknown setting(s) {sorted(unknown_net)}; known: ['delay_ms']")
    delay_ms = _bounded(network.get("delay_ms", 1), f"{source}: network.delay_ms", 0, MAX_SIMULATED_MS)
    rate = _bounded(data.get("produce_rate_per_s", 20), f"{source}: produce_rate_per_s", 0, 100_000)
    regex_ms = _bounded(data.get("regex_resolution_ms", 5), f"{source}: regex_resolution_ms", 0, 600_000)
    seed = _bounded(data.get("seed", 0), f"{source}: seed", -(2**63), 2**63 - 1)
    return Scenario(
        name=data.get("name", source),
        description=data.get("description", ""),
        group_id=group_id,
        seed=seed,
        until_ms=until_ms,
        topics=dict(topics),
        members=tuple(members),
        coordinator=coordinator,
        network_delay_ms=delay_ms,
        faults=tuple(sorted(faults, key=lambda f: f.at_ms)),
        produce_rate_per_s=rate,
        regex_resolution_ms=regex_ms,
    )


def load_scenario_text(text: str, source: str, fault_places: dict[int, str] | None = None) -> Scenario:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{source}: line {e.lineno} column {e.colno}: not valid JSON: {e.msg}") from None
    except (ValueError, RecursionError) as e:  # nested too deep, a number too long
        raise ScenarioError(f"{source}: not readable JSON: {e}") from None
    return parse_scenario(data, source, fault_places)


def parse_fault_spec(spec: str, where: str = "--fault") -> dict[str, Any]:
    """``KIND@MS[:key=value,...]`` -> the JSON object of a fault, e.g.
    ``pause@20000:member=c1,duration_ms=15000`` or ``failover@50000``."""
    head, _, rest = spec.partition(":")
    kind, at, at_ms = head.partition("@")[0], head.partition("@")[1], head.partition("@")[2]
    if not at or not at_ms.strip().isdigit():
        raise ScenarioError(f"{where} {spec!r}: expected KIND@MS[:key=value,...], e.g. crash@30000:member=c2")
    if kind not in FAULT_KINDS:
        raise ScenarioError(f"{where} {spec!r}: unknown fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
    out: dict[str, Any] = {"at_ms": int(at_ms), "kind": kind}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ScenarioError(f"{where} {spec!r}: {item!r} is not key=value")
        key = key.strip()
        if key in ("member", "topic"):
            out[key] = value.strip()
        elif key == "probability":
            try:
                out[key] = float(value)
            except ValueError:
                raise ScenarioError(f"{where} {spec!r}: {key}: not a number: {value!r}") from None
        else:
            try:
                out[key] = int(value)
            except ValueError:
                raise ScenarioError(f"{where} {spec!r}: {key}: not an integer: {value!r}") from None
    return out


def apply_overrides(
    data: Any,
    *,
    members: int | None = None,
    protocol: str | None = None,
    assignor: str | None = None,
    static: bool = False,
    seed: int | None = None,
    until_ms: int | None = None,
    faults: list[dict[str, Any]] | None = None,
    replace_faults: bool = False,
    group_protocol: str | None = None,
) -> Any:
    """The scenario JSON with command-line overrides applied (a new object).

    ``members``: keep the first N members, or add dynamic members ``cK`` started 200 ms apart
    after the last one. ``protocol`` eager / cooperative: every member uses ``range`` /
    ``cooperative-sticky`` unless ``assignor`` names one. ``static``: every member gets a
    group.instance.id. ``faults`` are added to the scenario's (or replace them).
    ``group_protocol`` "consumer": every member speaks KIP-848 (``group.protocol``)."""
    if not isinstance(data, dict):
        return data
    if (not isinstance(data.get("faults", []), list) or not isinstance(data.get("members", []), list)
            or not isinstance(data.get("defaults", {}), dict)):
        return data  # parse_scenario names the bad field; overriding it would only hide it
    out = json.loads(json.dumps(data))
    raw_members = out.get("members")
    if members is not None and isinstance(raw_members, list):
        if members < 1:
            raise ScenarioError("--members: at least one member is needed")
        kept = raw_members[:members]
        names = {x.get("name") for x in kept if isinstance(x, dict)}
        starts = [x.get("start_ms") or 0 for x in kept if isinstance(x, dict)]
        t = max(starts, default=0)
        k = 1
        while len(kept) < members:
            while f"c{k}" in names:
                k += 1
            t += 200
            kept.append({"name": f"c{k}", "start_ms": t})
            names.add(f"c{k}")
        out["members"] = kept
        dropped = [f for f in out.get("faults", []) if isinstance(f, dict) and f.get("member") not in (None, *names)]
        out["faults"] = [f for f in out.get("faults", []) if f not in dropped]
    if protocol is not None or assignor is not None:
        if protocol not in (None, "eager", "cooperative"):
            raise ScenarioError(f"--protocol: expected eager or cooperative, got {protocol!r}")
        name = assignor or ("range" if protocol == "eager" else "cooperative-sticky")
        try:
            supported = get_assignor(name).supported_protocols
        except ValueError as e:
            raise ScenarioError(f"--assignor: {e}") from None
        chosen = [name]
        if protocol == "cooperative" and RebalanceProtocol.COOPERATIVE not in supported:
            raise ScenarioError(f"--assignor {name} supports only the eager protocol")
        if protocol == "eager" and RebalanceProtocol.COOPERATIVE in supported:
            # As Kafka's upgrade path: listing an eager-only assignor second makes the
            # common (highest shared) protocol EAGER while the vote still picks `name`.
            chosen.append("range")
        out.setdefault("defaults", {})["assignors"] = chosen
        for x in out.get("members", []):
            if isinstance(x, dict):
                x.pop("assignors", None)
    if static:
        for x in out.get("members", []):
            if isinstance(x, dict):
                x["static"] = True
    if group_protocol is not None:
        if group_protocol not in ("classic", "consumer"):
            raise ScenarioError(f"--group-protocol: expected classic or consumer, got {group_protocol!r}")
        out.setdefault("defaults", {})["group_protocol"] = group_protocol
        for x in out.get("members", []):
            if isinstance(x, dict):
                x.pop("group_protocol", None)
    if seed is not None:
        out["seed"] = seed
    if until_ms is not None:
        out["until_ms"] = until_ms
    if faults is not None:
        out["faults"] = ([] if replace_faults else list(out.get("faults", []))) + faults
    return out

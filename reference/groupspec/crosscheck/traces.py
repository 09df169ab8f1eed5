"""Reference to spec: traces of the reference checked against the spec by TLC.

A run of the simulator (reference coordinator and reference consumers, with a fault
schedule) is recorded at the coordinator's boundary: every request the coordinator
handles and every timer that changes the group is one step, written in the spec's
vocabulary by the abstraction function (vocabulary.py): the spec action, the request as
the spec's message, the group after the step and the responses sent. The steps are
rendered as a TLA+ constant (a module ``MCTrace`` that extends
spec/TraceConsumerGroup.tla) and TLC answers whether the spec's coordinator can take the
same steps (the etcd-raft / CCF method). A trace that is not a behaviour of the spec gets
a :class:`Divergence`: the first step the spec cannot take, the state before it in both
vocabularies, what the reference did and what the spec allows there (a second TLC run that
leaves that step's outcome open), with the spec action and the Python handler involved.

Scenarios come from the pipeline's generator (pipeline/generate.py ``group_scenario``):
eager, cooperative and static groups with crashes, clean leaves and rejoins, pauses, slow
polls and scale-outs. Coordinator failover is left out: the spec models one coordinator
(spec/README.md, "Deviations").
"""

from __future__ import annotations

import contextlib
import random
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import groupspec.coordinator.coordinator as coordinator_module
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.context import Output, Txn
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.timers import Expiry, TimerKind
from groupspec.crosscheck.exhaustive import COORDINATOR_ACTIONS
from groupspec.crosscheck.vocabulary import (
    NO_CLIENT,
    NO_CONN,
    NO_MEMBER,
    Fn,
    Names,
    Rec,
    SpecValue,
    abstract_group,
    abstract_request,
    abstract_response,
    conn,
    fn,
    from_tlc,
    partition_name,
    rec,
    to_tla,
)
from groupspec.modelcheck.models import spec_dir
from groupspec.modelcheck.tlc import run_tlc
from groupspec.modelcheck.values import parse_value
from groupspec.pipeline.generate import FAULTS, group_scenario
from groupspec.protocol import messages as msg
from groupspec.sim.runner import Simulation
from groupspec.sim.scenario import Scenario, parse_scenario

#: the generator's faults the spec models (not coordinator failover)
TRACE_FAULTS = tuple(f for f in FAULTS if f != "failover")
_REQUEST_ACTIONS = {
    msg.JoinGroupRequest: "JoinGroup", msg.SyncGroupRequest: "SyncGroup",
    msg.HeartbeatRequest: "Heartbeat", msg.LeaveGroupRequest: "LeaveGroup",
    msg.OffsetCommitRequest: "OffsetCommit",
}


@dataclass(frozen=True)
class Step:
    """One coordinator step in the spec's vocabulary."""

    action: str
    req: Rec | None
    member: str
    group: Rec
    out: frozenset[SpecValue]
    at_ms: int
    #: what the reference did, in its own words (for reports)
    what: str
    #: the reference's group before the step, in the reference's vocabulary
    ref_before: str = ""


@dataclass
class RecordedTrace:
    name: str
    protocol: str
    description: str
    names: Names
    steps: list[Step] = field(default_factory=list)
    initial: Rec | None = None


class TraceRecordingError(RuntimeError):
    """The run did something this direction cannot express (named in the message)."""


def describe_reference(g: Group) -> str:
    """The reference's group in its own vocabulary (coordinator/classic/group.py), one line per
    part, for divergence reports."""
    lines = [
        f"Group {g.group_id!r}: state={g.state.value} previous_state="
        f"{g.previous_state.value if g.previous_state else None} generation_id={g.generation_id} "
        f"protocol_name={g.protocol_name} leader_id={g.leader_id}",
    ]
    for mid, m in g.members.items():
        parked = []
        if m.join_request is not None:
            parked.append(f"JoinGroup parked (request {m.join_request})")
        if m.sync_request is not None:
            parked.append(f"SyncGroup parked (request {m.sync_request})")
        lines.append(
            f"  member {mid} instance={m.group_instance_id} "
            f"assignment={sorted(map(str, abstract_assignment(m.assignment)))} "
            + ", ".join(parked))
    lines.append(f"  pending_members={sorted(g.pending_members)} "
                 f"pending_sync_members={list(g.pending_sync_members)}")
    lines.append(f"  join_timer={g.join_timer} sync_timer={g.sync_timer}")
    return "\n".join(lines)


def abstract_assignment(data: bytes) -> frozenset[SpecValue]:
    from groupspec.crosscheck.vocabulary import assignment_partitions
    return assignment_partitions(data)


class _Recorder:
    """Wraps the simulator's coordinator: every handled request and fired timer becomes a
    step (timers that change nothing are not steps)."""

    def __init__(self, sim: Simulation, group_id: str, protocol: str, names: Names) -> None:
        self.sim, self.group_id, self.protocol, self.names = sim, group_id, protocol, names
        self.steps: list[Step] = []
        #: request id -> (member id, generation) of the request, for the responses
        self.requests: dict[int, tuple[str, int]] = {}
        self._before: Rec | None = None

    def group(self) -> Group:
        g = self.sim.coordinator.state.groups.get(self.group_id)
        return g if g is not None else Group(self.group_id)

    def abstract(self) -> Rec:
        return abstract_group(self.group(), self.names)

    def responses(self, out: Output) -> frozenset[SpecValue]:
        res: set[SpecValue] = set()
        for rid, resp in out.responses:
            if rid not in self.names.connections:
                continue
            who, generation = self.requests.get(rid, ("", -1))
            res.add(abstract_response(resp, self.names.connection(rid), who, generation, self.names))
        return frozenset(res)

    def on_request(self, rid: int, req: msg.Request, out: Output, before: Rec,
                   ref_before: str) -> None:
        action = _REQUEST_ACTIONS.get(type(req))
        owner = self.sim.rid_owner.get(rid)
        if action is None or owner is None:
            if self.abstract() != before:
                raise TraceRecordingError(
                    f"{type(req).__name__} changed the group: not a step the spec has")
            return
        client, inc = owner[0], owner[1]
        self.names.connections[rid] = (client, inc)
        generation = getattr(req, "generation_id", -1)
        member = getattr(req, "member_id", "")
        if isinstance(req, msg.LeaveGroupRequest) and req.members:
            member = req.members[0].member_id
        self.requests[rid] = (member, generation)
        spec_req = abstract_request(req, conn(client, inc), client in self.names.static_clients,
                                    self.names, self.protocol)
        self.steps.append(Step(action, spec_req, NO_MEMBER, self.abstract(), self.responses(out),
                               self.sim.now, f"{type(req).__name__} from {client}", ref_before))

    def on_timer(self, e: Expiry, out: Output, before: Rec, ref_before: str) -> None:
        if e.kind is TimerKind.ExpireOffsets:
            return
        after = self.abstract()
        responses = self.responses(out)
        if after == before and not responses:
            return  # a timer that found nothing to do (rescheduled, or already satisfied)
        self.steps.append(Step(e.kind.name, None, e.member_id or NO_MEMBER, after, responses,
                               e.deadline_ms, f"{e.kind.name} {e.member_id}".strip(), ref_before))


class _RecordingCoordinator(Coordinator):
    recorder: _Recorder

    def handle(self, request_id: int, request: msg.Request, now_ms: int) -> Output:
        before = self.recorder.abstract()
        ref_before = describe_reference(self.recorder.group())
        out = super().handle(request_id, request, now_ms)
        self.recorder.on_request(request_id, request, out, before, ref_before)
        return out


@contextlib.contextmanager
def _recording_timers(recorder: _Recorder) -> Iterator[None]:
    namespace = coordinator_module.__dict__
    original = namespace["fire"]

    def fire(txn: Txn, e: Expiry) -> None:
        before = recorder.abstract()
        ref_before = describe_reference(recorder.group())
        mark = len(txn.out.responses)
        original(txn, e)
        out = Output(responses=txn.out.responses[mark:])
        recorder.on_timer(e, out, before, ref_before)

    namespace["fire"] = fire
    try:
        yield
    finally:
        namespace["fire"] = original


def generated_scenario(index: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed * 1_000_003 + index)
    return group_scenario(f"trace-{index:04d}", rng, TRACE_FAULTS)


def _member_ids(scenario: Scenario, sim_factory: Callable[[Scenario], Simulation]) -> tuple[str, ...]:
    """The member ids a run hands out (the run is deterministic: a first pass finds them;
    the spec's per-member functions range over all of them from the start)."""
    sim = sim_factory(scenario)
    seen: list[str] = []
    generate = sim.coordinator.member_ids

    def collect(client_id: str, instance: str | None) -> str:
        mid = generate(client_id, instance)
        seen.append(mid)
        return mid

    sim.coordinator.member_ids = collect
    sim.run()
    return tuple(seen)


def record(raw: dict[str, Any], sim_factory: Callable[[Scenario], Simulation] | None = None
           ) -> RecordedTrace:
    """Run one simulator scenario (simulator JSON) and record its coordinator steps."""
    scenario = parse_scenario(raw, str(raw.get("name", "trace")))
    return record_scenario(scenario, str(raw.get("name")), str(raw.get("description", "")),
                           sim_factory)


def scenario_protocol(scenario: Scenario) -> str:
    """"cooperative" when any member offers cooperative-sticky, else "eager"."""
    offered = {a for ms in scenario.members for a in ms.config.assignors}
    return "cooperative" if "cooperative-sticky" in offered else "eager"


def record_scenario(scenario: Scenario, name: str, description: str,
                    sim_factory: Callable[[Scenario], Simulation] | None = None
                    ) -> RecordedTrace:
    """Run one parsed scenario (from JSON, or built by a Hypothesis strategy) and record
    its coordinator steps."""
    factory = sim_factory or Simulation
    protocol = scenario_protocol(scenario)
    ids = _member_ids(scenario, factory)
    sim = factory(scenario)
    clients = tuple(ms.name for ms in scenario.members)
    instances = {ms.name: ms.config.group_instance_id for ms in scenario.members
                 if ms.config.group_instance_id is not None}
    partitions = tuple(partition_name(t, p) for t, n in sorted(scenario.topics.items())
                       for p in range(n))
    names = Names(ids, clients, frozenset(instances), partitions, {}, instances)
    recorder = _Recorder(sim, scenario.group_id, protocol, names)
    coord = _RecordingCoordinator(scenario.coordinator)
    coord.member_ids = sim.coordinator.member_ids
    coord.recorder = recorder
    sim.coordinator = coord
    with _recording_timers(recorder):
        sim.run()
    trace = RecordedTrace(name, protocol, description, names)
    trace.steps = recorder.steps
    trace.initial = abstract_group(Group(scenario.group_id), names)
    return trace


# ---------------------------------------------------------------- TLA+ rendering
@dataclass(frozen=True)
class Universe:
    """The names every trace of a batch shares (one TLC run checks them all)."""

    member_ids: tuple[str, ...]
    clients: tuple[str, ...]
    static_clients: tuple[str, ...]
    partitions: tuple[str, ...]

    @classmethod
    def of(cls, traces: list[RecordedTrace]) -> Universe:
        def union(get: Callable[[RecordedTrace], Any]) -> tuple[str, ...]:
            return tuple(sorted({x for tr in traces for x in get(tr)}))
        return cls(union(lambda tr: tr.names.member_ids), union(lambda tr: tr.names.clients),
                   union(lambda tr: tr.names.static_clients),
                   union(lambda tr: tr.names.partitions))


def _pad(f: SpecValue, keys: tuple[str, ...], default: SpecValue) -> Fn:
    assert isinstance(f, Fn)
    base: dict[SpecValue, SpecValue] = {k: default for k in keys}
    base.update(f.as_dict())
    return fn(base)


def pad_group(g: Rec, u: Universe) -> Rec:
    """A trace's group with its per-member and per-client functions over the batch's names."""
    ids = (*u.member_ids, NO_MEMBER)
    return g.replace(
        metadata=_pad(g["metadata"], ids, frozenset()),
        assignment=_pad(g["assignment"], ids, frozenset()),
        join_request=_pad(g["join_request"], ids, NO_CONN),
        sync_request=_pad(g["sync_request"], ids, NO_CONN),
        static_members=_pad(g["static_members"], u.static_clients, NO_MEMBER),
        used_ids=frozenset(),
    )


def pad_message(m: Rec, u: Universe) -> Rec:
    ids = (*u.member_ids, NO_MEMBER)
    return m.replace(plan=_pad(m["plan"], ids, frozenset()),
                     meta_of=_pad(m["meta_of"], ids, frozenset()),
                     offsets=_pad(m["offsets"], u.partitions, -1))


def rename(v: SpecValue, names: dict[str, str]) -> SpecValue:
    """Every string that is a key of ``names`` replaced (member ids to short names and
    back: the reference's ids are long, and TLC's parsing time grows with the text)."""
    if isinstance(v, str):
        return names.get(v, v)
    if isinstance(v, Rec):
        return Rec(tuple((k, rename(x, names)) for k, x in v.fields))
    if isinstance(v, Fn):
        return fn((rename(k, names), rename(x, names)) for k, x in v.pairs)
    if isinstance(v, frozenset):
        return frozenset(rename(x, names) for x in v)
    if isinstance(v, tuple):
        return tuple(rename(x, names) for x in v)
    return v


def short_ids(u: Universe) -> dict[str, str]:
    return {mid: f"m{k + 1}" for k, mid in enumerate(u.member_ids)}


_DEFAULTS: tuple[tuple[SpecValue, str], ...] = ((frozenset(), "NoSetF"), (NO_CONN, "NoConnF"))


def _tla(v: SpecValue, all_ids: frozenset[SpecValue]) -> str:
    """to_tla, with functions over every member id written as their exceptions to a
    default (``(m2 :> {"p1"}) @@ NoSetF``): most of a group's per-member values are
    empty."""
    if isinstance(v, Fn) and frozenset(k for k, _ in v.pairs) == all_ids:
        for default, name in _DEFAULTS:
            rest = [(k, x) for k, x in v.pairs if x != default]
            if len(rest) < len(v.pairs):
                if not rest:
                    return name
                return ("(" + " @@ ".join(f"{to_tla(k)} :> {_tla(x, all_ids)}" for k, x in rest)
                        + f") @@ {name}")
    if isinstance(v, Rec):
        fields = dict(v.fields)
        if "type" in fields and set(fields) == set(_MSG_DEFAULTS) | {"type", "client", "inc"}:
            # a message: TMsg(type, client, inc) and the fields that differ from its defaults
            changed = [(k, x) for k, x in v.fields
                       if k in _MSG_DEFAULTS and not _is_default(x, _MSG_DEFAULTS[k])]
            head = f"TMsg({to_tla(fields['type'])}, {to_tla(fields['client'])}, {to_tla(fields['inc'])})"
            if not changed:
                return head
            return (f"[{head} EXCEPT "
                    + ", ".join(f"!.{k} = {_tla(x, all_ids)}" for k, x in changed) + "]")
        return "[" + ", ".join(f"{k} |-> {_tla(x, all_ids)}" for k, x in v.fields) + "]"
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(_tla(x, all_ids) for x in v)) + "}"
    return to_tla(v)


#: the spec's Msg defaults (ConsumerGroup.tla), "NoSetF" standing for NoPlan
_MSG_DEFAULTS: dict[str, SpecValue] = {
    "member": NO_MEMBER, "static": False, "generation": -1, "error": "NONE", "meta": frozenset(),
    "plan": "NoSetF", "leader": NO_MEMBER, "joined": frozenset(), "meta_of": "NoSetF",
    "skip": False, "assigned": frozenset(), "offsets": "NoOffF",
}


def _is_default(x: SpecValue, default: SpecValue) -> bool:
    if default == "NoSetF":
        return isinstance(x, Fn) and all(v == frozenset() for _, v in x.pairs)
    if default == "NoOffF":
        return isinstance(x, Fn) and all(v == -1 for _, v in x.pairs)
    return x == default and type(x) is type(default)


def render(traces: list[RecordedTrace], explain: int = 0) -> tuple[str, str]:
    """The TraceData module for a batch of traces and the configuration of the run."""
    u = Universe.of(traces)
    short = short_ids(u)
    ids = tuple(short[m] for m in u.member_ids)
    all_ids = frozenset((*ids, NO_MEMBER))
    blocks = []
    for tr in traces:
        default_req = pad_message(_default_request(tr), u)
        rows = []
        previous = pad_group(tr.initial, u) if tr.initial is not None else None
        for s in tr.steps:
            group = pad_group(s.group, u)
            same = group == previous
            rows.append(_tla(rename(rec(
                action=s.action,
                req=pad_message(s.req, u) if s.req is not None else default_req,
                member=s.member, group=frozenset() if same else group, same=same,
                out=frozenset(pad_message(o, u) for o in s.out)),  # type: ignore[arg-type]
                short), all_ids))
            previous = group
        blocks.append(f"  \\* {tr.name}: {tr.description}\n  <<" + ",\n    ".join(rows) + ">>")
    module = "\n".join([
        "----------------------------- MODULE TraceData -----------------------------",
        "(* Written by groupspec crosscheck (crosscheck/traces.py). Member ids are",
        "   renamed m1, m2, ... in the order of the reference's ids:",
        *[f"   {short[m]} = {m}" for m in u.member_ids],
        "*)",
        "EXTENDS Integers, TLC",
        "TraceClients == " + to_tla(frozenset(u.clients)),
        "TraceStatic == " + to_tla(frozenset(u.static_clients)),
        "TraceIds == " + to_tla(frozenset(ids)),
        "TracePartitions == " + to_tla(frozenset(u.partitions)),
        "TraceProtocols == " + to_tla(tuple(tr.protocol for tr in traces)),
        "TracePartitionsOf == " + to_tla(tuple(frozenset(tr.names.partitions) for tr in traces)),
        f'NoSetF == [x \\in TraceIds \\cup {{"{NO_MEMBER}"}} |-> {{}}]',
        f'NoConnF == [x \\in TraceIds \\cup {{"{NO_MEMBER}"}} |-> {to_tla(NO_CONN)}]',
        "NoOffF == [x \\in TracePartitions |-> -1]",
        "TMsg(type, c, inc) ==",
        "    [type |-> type, client |-> c, inc |-> inc, member |-> \"NoMember\", static |-> FALSE,",
        "     generation |-> -1, error |-> \"NONE\", meta |-> {}, plan |-> NoSetF,",
        "     leader |-> \"NoMember\", joined |-> {}, meta_of |-> NoSetF, skip |-> FALSE,",
        "     assigned |-> {}, offsets |-> NoOffF]",
        "Traces == <<\n" + ",\n".join(blocks) + "\n>>",
        "=" * 77,
        "",
    ])
    config = "\n".join([
        "CONSTANTS",
        "    Clients <- TraceClients",
        "    StaticClients <- TraceStatic",
        f'    NoClient = "{NO_CLIENT}"',
        "    MemberIds <- TraceIds",
        f'    NoMember = "{NO_MEMBER}"',
        "    Partitions <- TracePartitions",
        '    RebalanceProtocols = {"eager", "cooperative"}',
        '    AssignorContract = "balanced"',
        "    MemberIdRequired = TRUE",
        "    MaxFaults = 0",
        "    AllowDeleteGroup = FALSE",
        "    MaxOffset = 0",
        "    FailoverFaults = FALSE",
        f"    Explain = {explain}",
        "INIT TraceInit",
        "NEXT TraceNext",
        "VIEW TraceView",
        "CHECK_DEADLOCK FALSE",
        "",
    ])
    return module, config


def _default_request(trace: RecordedTrace) -> Rec:
    return abstract_request(msg.HeartbeatRequest(group_id="g", generation_id=-1, member_id=""),
                            conn(NO_CLIENT, 0), False, trace.names, trace.protocol)


# ---------------------------------------------------------------- running TLC
_DUMP_VAR = re.compile(r"^/\\ (t|i|group|msgs) = (.*)$")


@dataclass
class BatchResult:
    #: per trace (in order): how many steps TLC matched
    reached: list[int]
    seconds: float
    distinct: int


def run_trace_spec(
    module: str, config: str, traces: int, *, spec: str, data_module: str, model: str,
    dump_var: re.Pattern[str], on_state: Callable[[dict[str, str]], None] | None = None,
) -> BatchResult:
    """Check ``traces`` rendered traces with TLC: ``spec/`` copied to a scratch directory,
    its ``data_module`` replaced by ``module`` (the traces as data), ``spec`` checked with
    ``config``, every reached state dumped. Returns per trace the furthest step matched
    (the dump's ``t`` and ``i``); ``on_state`` sees each dumped state's variables that
    ``dump_var`` picks out. Shared by both protocols' trace directions."""
    with tempfile.TemporaryDirectory(prefix=f"groupspec-{model}-") as scratch:
        work = Path(scratch)
        for f in spec_dir().glob("*.tla"):
            if f.name != f"{data_module}.tla":
                shutil.copy(f, work / f.name)
        (work / f"{data_module}.tla").write_text(module, encoding="utf-8")
        (work / "MCTrace.cfg").write_text(config, encoding="utf-8")
        dump = work / "states"
        result = run_tlc(spec, "MCTrace.cfg", work, model=model, workers=1,
                         extra=["-dump", str(dump)])
        if result.verdict != "pass":
            raise TraceCheckError(f"TLC could not check the traces: {result.verdict}: "
                                  f"{result.explanation}")
        reached = [0] * traces
        state: dict[str, str] = {}

        def flush() -> None:
            if "t" in state and "i" in state:
                k = int(state["t"]) - 1
                reached[k] = max(reached[k], int(state["i"]))
                if on_state is not None:
                    on_state(state)

        with open(f"{dump}.dump", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("State "):
                    flush()
                    state = {}
                    continue
                m = dump_var.match(line.rstrip("\n"))
                if m:
                    state[m.group(1)] = m.group(2)
        flush()
        return BatchResult(reached, result.seconds, result.distinct or 0)


def _run(traces: list[RecordedTrace], explain: int,
         on_state: Callable[[dict[str, str]], None] | None = None) -> BatchResult:
    module, config = render(traces, explain)
    return run_trace_spec(module, config, len(traces), spec="TraceConsumerGroup",
                          data_module="TraceData", model="trace", dump_var=_DUMP_VAR,
                          on_state=on_state)


class TraceCheckError(RuntimeError):
    """TLC failed on a batch (not a divergence: the run itself broke)."""


@dataclass(frozen=True)
class Divergence:
    trace: str
    step: int
    action: str
    handler: str
    at_ms: int
    what: str
    before_spec: Rec
    before_reference: str
    reference_after: Rec
    reference_out: frozenset[SpecValue]
    #: what the spec's coordinator can do at that step (group, responses)
    spec_allows: list[tuple[Rec, frozenset[SpecValue]]]
    reason: str


@dataclass
class TraceVerdict:
    trace: RecordedTrace
    matched: int
    divergence: Divergence | None = None

    @property
    def ok(self) -> bool:
        return self.divergence is None and self.matched == len(self.trace.steps)


def check(traces: list[RecordedTrace], batch: int = 50,
          progress: Callable[[int, int], None] | None = None,
          explain_first: int = 5) -> list[TraceVerdict]:
    """Check every trace; explain the first ``explain_first`` divergences (each
    explanation is one more TLC run)."""
    verdicts: list[TraceVerdict] = []
    for start in range(0, len(traces), batch):
        chunk = traces[start:start + batch]
        res = _run(chunk, 0)
        for tr, reached in zip(chunk, res.reached, strict=True):
            v = TraceVerdict(tr, reached)
            if reached < len(tr.steps) and explain_first > 0:
                explain_first -= 1
                v.divergence = explain(tr, reached + 1)
            verdicts.append(v)
        if progress is not None:
            progress(len(verdicts), len(traces))
    return verdicts


_GROUP_FUNCTIONS = ("metadata", "assignment", "join_request", "sync_request", "static_members")
_MESSAGE_FUNCTIONS = ("plan", "meta_of")


def _functions(r: Rec, names: tuple[str, ...]) -> Rec:
    """TLC prints a function whose domain is strings as a record, and the empty function
    as ``<<>>``: the trace's values are strings, so these fields are turned back into
    functions."""
    changes: dict[str, SpecValue] = {}
    for name in names:
        v = r[name]
        if isinstance(v, Rec):
            changes[name] = fn(v.fields)
        elif v == ():
            changes[name] = fn(())
    return r.replace(**changes) if changes else r


def explain(trace: RecordedTrace, step: int) -> Divergence:
    """What the spec allows at the first step it cannot match."""
    u = Universe.of([trace])
    back = {v: k for k, v in short_ids(u).items()}
    alternatives: list[tuple[Rec, frozenset[SpecValue]]] = []

    def on_state(st: dict[str, str]) -> None:
        if int(st["i"]) == step:
            g = from_tlc(parse_value(st["group"]))
            out = from_tlc(parse_value(st["msgs"]))
            assert isinstance(g, Rec) and isinstance(out, frozenset)
            g = _functions(g, _GROUP_FUNCTIONS)
            out = frozenset(_functions(x, _MESSAGE_FUNCTIONS) for x in out)  # type: ignore[arg-type]
            g2, out2 = rename(g.replace(used_ids=frozenset()), back), rename(out, back)
            assert isinstance(g2, Rec) and isinstance(out2, frozenset)
            alternatives.append((g2, out2))

    _run([trace], step, on_state)
    s = trace.steps[step - 1]
    before = pad_group(trace.steps[step - 2].group, u) if step >= 2 else None
    after = pad_group(s.group, u)
    out = frozenset(pad_message(o, u) for o in s.out)  # type: ignore[arg-type]
    if not alternatives:
        reason = ("the spec's coordinator has no step for this input in this state"
                  + (" (the timer may not fire here)" if s.req is None else ""))
    elif any(a == (after, out) for a in alternatives):
        reason = ("the reference's outcome is one the spec's coordinator allows, but the "
                  "leader's plan breaks the assignors' contract (AssignmentContractOK)")
    else:
        reason = "the reference's outcome is not one the spec's coordinator allows"
    return Divergence(
        trace.name, step, s.action, COORDINATOR_ACTIONS.get(s.action, "?"), s.at_ms, s.what,
        before if before is not None else rec(), s.ref_before, after, out,
        sorted(alternatives, key=repr)[:4], reason,
    )

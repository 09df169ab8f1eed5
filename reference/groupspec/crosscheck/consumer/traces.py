"""Reference to spec for the consumer protocol (KIP-848): simulator runs checked by TLC.

A simulator run of KIP-848 consumers (client/consumer/consumer.py) against the reference
coordinator, with a fault schedule, is recorded at the coordinator's boundary: every
ConsumerGroupHeartbeat and OffsetCommit the coordinator handles and every session or
rebalance timer that changes the group is one step, in the spec's vocabulary (the
abstraction function of vocabulary.py): the spec action, the request as the spec's
message, the group after the step and the answers sent. The steps become a TLA+ module of
definitions (``TraceConsumerData``, written next to a copy of the spec for each run) and
TLC checks spec/TraceConsumerProtocol.tla: the recorded request is put in flight alone
and the spec's own coordinator action (HandleHeartbeat, HandleLeave, HandleCommit,
ExpireSession, ExpireRebalance) must reach the recorded group and answers; a new target
must be one the spec allows (TargetValid: the spec's target is any valid balanced
choice, the reference's uniform assignor picks one).

Member ids (the consumers' own, long) are renamed ``m1``, ``m2``, ... per trace in the
order they appear. Scenarios are generated here: two or three consumers on one or two
topics, with crashes, clean closes and rejoins, pauses, slow polls (past the rebalance
timeout) and scale-outs. Static membership and coordinator failover are left out: the
spec has neither.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import groupspec.coordinator.coordinator as coordinator_module
from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.context import Output, Txn
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.timers import Expiry, TimerKind
from groupspec.crosscheck.consumer.exhaustive import COORDINATOR_ACTIONS
from groupspec.crosscheck.consumer.vocabulary import (
    NO_CONSUMER,
    NO_MEMBER,
    Names,
    abstract_group,
    abstract_request,
    abstract_response,
    message,
)
from groupspec.crosscheck.traces import TraceCheckError, TraceRecordingError, rename, run_trace_spec
from groupspec.crosscheck.vocabulary import Fn, Rec, SpecValue, fn, rec, to_tla
from groupspec.protocol import messages as msg
from groupspec.protocol.consumer_group_messages import ConsumerGroupHeartbeatRequest
from groupspec.sim.runner import Simulation
from groupspec.sim.scenario import Scenario, parse_scenario

__all__ = ["TraceCheckError", "TraceRecordingError"]

#: the fault kinds of generated scenarios (the spec has no static members, no failover)
TRACE_FAULTS = ("crash", "close-rejoin", "pause", "slow-poll", "scale-out")


@dataclass(frozen=True)
class Step:
    """One coordinator step in the spec's vocabulary."""

    action: str
    #: the request (None for a timer)
    req: Rec | None
    #: the member a timer concerns
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
    description: str
    names: Names
    steps: list[Step] = field(default_factory=list)


def describe_reference(g: ConsumerGroup | None) -> str:
    """The reference's consumer group in its own vocabulary (coordinator/consumer/group.py),
    one line per member, for divergence reports."""
    if g is None:
        return "no consumer group yet"
    lines = [f"ConsumerGroup {g.group_id!r}: group_epoch={g.group_epoch} "
             f"assignment_epoch={g.assignment_epoch} state={g.state.value}"]
    for mid, m in g.members.items():
        timer = g.rebalance_timers.get(mid)
        lines.append(
            f"  member {mid} epoch={m.member_epoch} previous={m.previous_member_epoch} "
            f"state={m.state.name} assigned={_fmt(m.assigned)} "
            f"pending_revocation={_fmt(m.pending_revocation)} target={_fmt(g.target.get(mid, {}))}"
            + (f" rebalance_timer(epoch {timer.member_epoch})" if timer else ""))
    return "\n".join(lines)


def _fmt(a: Any) -> str:
    return "{" + ", ".join(f"{t}:{sorted(ps)}" for t, ps in a.items()) + "}"


class _Recorder:
    """Wraps the simulator's coordinator: every handled request and fired timer becomes a
    step (timers that change nothing are not steps)."""

    def __init__(self, sim: Simulation, group_id: str, names: Names) -> None:
        self.sim, self.group_id, self.names = sim, group_id, names
        self.steps: list[Step] = []

    def group(self) -> ConsumerGroup | None:
        return self.sim.coordinator.state.consumer_groups.get(self.group_id)

    def abstract(self) -> Rec:
        return abstract_group(self.group(), self.names)

    def on_request(self, rid: int, req: msg.Request, out: Output, before: Rec,
                   ref_before: str, group_before: ConsumerGroup | None) -> None:
        owner = self.sim.rid_owner.get(rid)
        if not isinstance(req, ConsumerGroupHeartbeatRequest | msg.OffsetCommitRequest) \
                or owner is None:
            if self.abstract() != before:
                raise TraceRecordingError(
                    f"{type(req).__name__} changed the group: not a step the spec has")
            return
        client, conn = owner[0], owner[1]
        spec_req = abstract_request(req, client, conn, self.names, group_before)
        if isinstance(req, ConsumerGroupHeartbeatRequest):
            action = "HandleHeartbeat" if req.member_epoch >= 0 else "HandleLeave"
        else:
            action = "HandleCommit"
        after = self.abstract()
        answers: set[SpecValue] = set()
        for r_id, resp in out.responses:
            if r_id == rid:
                x = abstract_response(resp, spec_req, after, self.names)  # type: ignore[arg-type]
                if x is not None:
                    answers.add(x)
        self.steps.append(Step(action, spec_req, NO_MEMBER, after, frozenset(answers),
                               self.sim.now, f"{type(req).__name__} from {client}", ref_before))

    def on_timer(self, e: Expiry, before: Rec, ref_before: str) -> None:
        kinds = {TimerKind.ExpireConsumerSession: "ExpireSession",
                 TimerKind.ExpireConsumerRebalance: "ExpireRebalance"}
        action = kinds.get(e.kind)
        after = self.abstract()
        if after == before:
            return  # a timer that found nothing to do
        if action is None:
            raise TraceRecordingError(f"timer {e.kind.name} changed the consumer group")
        self.steps.append(Step(action, None, e.member_id, after, frozenset(), e.deadline_ms,
                               f"{e.kind.name} {e.member_id}", ref_before))


class _RecordingCoordinator(Coordinator):
    recorder: _Recorder

    def handle(self, request_id: int, request: msg.Request, now_ms: int) -> Output:
        before = self.recorder.abstract()
        g = self.recorder.group()
        ref_before = describe_reference(g)
        out = super().handle(request_id, request, now_ms)
        self.recorder.on_request(request_id, request, out, before, ref_before, g)
        return out


@contextlib.contextmanager
def _recording_timers(recorder: _Recorder) -> Iterator[None]:
    namespace = coordinator_module.__dict__
    original = namespace["fire"]

    def fire(txn: Txn, e: Expiry) -> None:
        before = recorder.abstract()
        ref_before = describe_reference(recorder.group())
        original(txn, e)
        recorder.on_timer(e, before, ref_before)

    namespace["fire"] = fire
    try:
        yield
    finally:
        namespace["fire"] = original


def generated_scenario(index: int, seed: int) -> dict[str, Any]:
    """A random KIP-848 scenario (simulator JSON)."""
    rng = random.Random(seed * 1_000_003 + index * 7 + 848)
    n = rng.randint(2, 3)
    names = [f"c{i + 1}" for i in range(n)]
    # At most four partitions in all: TLC enumerates the spec's candidate targets (every
    # owner function, ids + 1 to the power of the partitions of the whole batch).
    topics = {"orders": rng.randint(2, 4)}
    if rng.random() < 0.3 and topics["orders"] < 4:
        topics["payments"] = 1
    members: list[dict[str, Any]] = [{"name": nm, "start_ms": i * 150} for i, nm in enumerate(names)]
    chosen = rng.sample(TRACE_FAULTS, k=rng.randint(1, 2))
    schedule: list[dict[str, Any]] = []
    t = rng.randint(8, 15) * 1000
    for kind in chosen:
        who = rng.choice(names[1:])
        if kind == "crash":
            schedule.append({"at_ms": t, "kind": "crash", "member": who})
        elif kind == "close-rejoin":
            spare = f"r{len(members)}"
            members.append({"name": spare, "start_ms": None})
            schedule.append({"at_ms": t, "kind": "close", "member": who})
            schedule.append({"at_ms": t + rng.randint(1, 4) * 1000, "kind": "join", "member": spare})
        elif kind == "pause":
            schedule.append({"at_ms": t, "kind": "pause", "member": who,
                             "duration_ms": rng.choice((3000, 12000))})
        elif kind == "slow-poll":
            schedule.append({"at_ms": t, "kind": "slow_poll", "member": who,
                             "duration_ms": rng.choice((5000, 25000))})
        elif kind == "scale-out":
            extra = f"x{len(members)}"
            members.append({"name": extra, "start_ms": None})
            schedule.append({"at_ms": t, "kind": "join", "member": extra})
        t += rng.randint(10, 18) * 1000
    return {
        "name": f"kip848-{index:04d}",
        "description": f"generated KIP-848 group: {n} consumers, topics "
                       f"{', '.join(f'{k}:{v}' for k, v in topics.items())}, faults "
                       f"{', '.join(chosen)}",
        "group_id": f"kip848-{index:04d}",
        "seed": rng.randrange(2**31),
        "until_ms": t + 15_000,
        "topics": topics,
        "defaults": {"group_protocol": "consumer", "session_timeout_ms": 10000,
                     "heartbeat_interval_ms": 3000, "max_poll_interval_ms": 15000,
                     "auto_commit_interval_ms": 2000},
        "coordinator": {"consumer_group_session_timeout_ms": 6000,
                        "consumer_group_heartbeat_interval_ms": 1000},
        # a slow network too: the member's heartbeat timer runs from each send and its
        # auto-commit timer from each commit (AbstractHeartbeatRequestManager,
        # CommitRequestManager), so on a fast network a commit keeps its phase against the
        # heartbeats and never meets one that moved its epoch (no STALE_MEMBER_EPOCH for the
        # trace direction to judge)
        "network": {"delay_ms": rng.choice((1, 5, 40, 300))},
        "members": members,
        "faults": schedule,
    }


def _member_ids(scenario: Scenario) -> tuple[str, ...]:
    """The member ids a run uses, in order of appearance (the run is deterministic: a
    first pass finds them; the spec's per-member functions range over all of them)."""
    sim = Simulation(scenario)
    seen: dict[str, None] = {}
    original = sim.coordinator.handle

    def handle(rid: int, req: msg.Request, now_ms: int) -> Output:
        if isinstance(req, ConsumerGroupHeartbeatRequest) and req.member_id:
            seen.setdefault(req.member_id, None)
        return original(rid, req, now_ms)

    sim.coordinator.handle = handle  # type: ignore[method-assign, assignment]
    sim.run()
    return tuple(seen)


def record(raw: dict[str, Any]) -> RecordedTrace:
    """Run one simulator scenario (simulator JSON) and record its coordinator steps."""
    scenario = parse_scenario(raw, str(raw.get("name", "trace")))
    return record_scenario(scenario, str(raw.get("name")), str(raw.get("description", "")))


def record_scenario(scenario: Scenario, name: str, description: str) -> RecordedTrace:
    if any(ms.config.group_instance_id is not None for ms in scenario.members):
        raise TraceRecordingError(f"{name}: static members (the spec has dynamic members only)")
    ids = _member_ids(scenario)
    sim = Simulation(scenario)
    clients = tuple(ms.name for ms in scenario.members)
    names = Names(ids, clients, dict(sorted(scenario.topics.items())))
    recorder = _Recorder(sim, scenario.group_id, names)
    coord = _RecordingCoordinator(scenario.coordinator)
    coord.set_topics(names.metadata())
    coord.recorder = recorder
    sim.coordinator = coord
    with _recording_timers(recorder):
        sim.run()
    trace = RecordedTrace(name, description, names)
    trace.steps = recorder.steps
    return trace


# ---------------------------------------------------------------- TLA+ rendering
def _short(trace: RecordedTrace) -> dict[str, str]:
    return {mid: f"m{k + 1}" for k, mid in enumerate(trace.names.member_ids)}


_NEW_MEMBER = rec(member_epoch=0, previous_member_epoch=-1, state="STABLE",
                  assigned=frozenset(), pending_revocation=frozenset(),
                  subscription=frozenset(), rebalance_timer=-1)


def _group_tla(g: Rec, ids: tuple[str, ...]) -> str:
    """A group with its per-member functions over ``ids`` written as their exceptions to
    the defaults (NewMember, no target): most entries are defaults."""
    per, target = g["member"], g["target"]
    assert isinstance(per, Fn) and isinstance(target, Fn)
    pm = [(k, v) for k, v in per.pairs if v != _NEW_MEMBER]
    pt = [(k, v) for k, v in target.pairs if v != frozenset()]
    for k, _ in (*pm, *pt):
        assert k in ids, k

    def over(pairs: list[tuple[SpecValue, SpecValue]], default: str) -> str:
        if not pairs:
            return default
        return "(" + " @@ ".join(f"{to_tla(k)} :> {to_tla(v)}" for k, v in pairs) + f") @@ {default}"

    return (f"[group_epoch |-> {to_tla(g['group_epoch'])}, "
            f"assignment_epoch |-> {to_tla(g['assignment_epoch'])}, "
            f"members |-> {to_tla(g['members'])}, member |-> {over(pm, 'NewMemberF')}, "
            f"target |-> {over(pt, 'NoTargetF')}]")


def render(traces: list[RecordedTrace], explain: int = 0) -> tuple[str, str]:
    """The TraceConsumerData module for a batch of traces and the configuration."""
    width = max((len(tr.names.member_ids) for tr in traces), default=1) or 1
    ids = tuple(f"m{k + 1}" for k in range(width))
    consumers = sorted({c for tr in traces for c in tr.names.consumers})
    partitions = sorted({p for tr in traces for p in tr.names.partitions()})
    no_req = message("NoRequest", NO_CONSUMER, 0)
    blocks = []
    for tr in traces:
        short = _short(tr)
        rows = []
        previous: Rec | None = None
        for s in tr.steps:
            g = rename(s.group, short)
            assert isinstance(g, Rec)
            g = g.replace(member=fn(_pad(g["member"], ids, _NEW_MEMBER)),
                          target=fn(_pad(g["target"], ids, frozenset())))
            same = g == previous
            req = rename(s.req, short) if s.req is not None else no_req
            out = rename(s.out, short)
            rows.append(
                f"[action |-> {to_tla(s.action)}, req |-> {to_tla(req)}, "
                f"member |-> {to_tla(short.get(s.member, s.member))}, same |-> {to_tla(same)}, "
                f"group |-> {'NoGroup' if same else _group_tla(g, ids)}, out |-> {to_tla(out)}]")
            previous = g
        blocks.append(f"  \\* {tr.name}: {tr.description}\n  <<" + ",\n    ".join(rows) + ">>")
    module = "\n".join([
        "-------------------------- MODULE TraceConsumerData --------------------------",
        "(* Written by groupspec crosscheck --group-protocol consumer",
        "   (crosscheck/consumer/traces.py). Member ids are renamed m1, m2, ... per trace",
        "   in order of appearance. *)",
        "EXTENDS Integers, TLC",
        "TraceConsumers == " + to_tla(frozenset(consumers)),
        "TraceIds == " + to_tla(frozenset(ids)),
        "TracePartitions == " + to_tla(frozenset(partitions)),
        "NewMemberF == [x \\in TraceIds |-> " + to_tla(_NEW_MEMBER) + "]",
        "NoTargetF == [x \\in TraceIds |-> {}]",
        "NoGroup == [group_epoch |-> -1]",
        "Traces == <<\n" + ",\n".join(blocks) + "\n>>",
        "=" * 77,
        "",
    ])
    config = "\n".join([
        "CONSTANTS",
        "    Consumers <- TraceConsumers",
        f'    NoConsumer = "{NO_CONSUMER}"',
        "    MemberIds <- TraceIds",
        f'    NoMember = "{NO_MEMBER}"',
        "    Partitions <- TracePartitions",
        "    Subscriptions = {}",
        "    MaxSubscriptionChanges = 0",
        "    FaultKinds = {}",
        "    MaxFaults = 0",
        f"    Explain = {explain}",
        "INIT TraceInit",
        "NEXT TraceNext",
        "VIEW TraceView",
        "CHECK_DEADLOCK FALSE",
        "",
    ])
    return module, config


def _pad(f: SpecValue, keys: tuple[str, ...], default: SpecValue) -> list[tuple[SpecValue, SpecValue]]:
    assert isinstance(f, Fn)
    base: dict[SpecValue, SpecValue] = {k: default for k in keys}
    base.update(f.as_dict())
    return list(base.items())


# ---------------------------------------------------------------- running TLC
_DUMP_VAR = re.compile(r"^/\\ (t|i|ready|group|msgs) = (.*)$")


def _run(traces: list[RecordedTrace], explain: int,
         on_state: Callable[[dict[str, str]], None] | None = None) -> list[int]:
    module, config = render(traces, explain)
    return run_trace_spec(module, config, len(traces), spec="TraceConsumerProtocol",
                          data_module="TraceConsumerData", model="trace848", dump_var=_DUMP_VAR,
                          on_state=on_state).reached


@dataclass(frozen=True)
class Divergence:
    trace: str
    step: int
    action: str
    handler: str
    at_ms: int
    what: str
    before_spec: Rec | None
    before_reference: str
    request: Rec | None
    reference_after: Rec
    reference_out: frozenset[SpecValue]
    #: how many outcomes the spec's coordinator allows for that input there
    spec_outcomes: int
    reason: str


@dataclass
class TraceVerdict:
    trace: RecordedTrace
    matched: int
    divergence: Divergence | None = None

    @property
    def ok(self) -> bool:
        return self.divergence is None and self.matched == len(self.trace.steps)


def check(traces: list[RecordedTrace], batch: int = 40,
          progress: Callable[[int, int], None] | None = None,
          explain_first: int = 3) -> list[TraceVerdict]:
    """Check every trace; explain the first ``explain_first`` divergences (each
    explanation is one more TLC run)."""
    verdicts: list[TraceVerdict] = []
    for start in range(0, len(traces), batch):
        chunk = traces[start:start + batch]
        reached = _run(chunk, 0)
        for tr, n in zip(chunk, reached, strict=True):
            v = TraceVerdict(tr, n)
            if n < len(tr.steps):
                v.divergence = explain(tr, n + 1) if explain_first > 0 else _divergence(tr, n + 1, -1)
                explain_first -= 1
            verdicts.append(v)
        if progress is not None:
            progress(len(verdicts), len(traces))
    return verdicts


def _divergence(trace: RecordedTrace, step: int, outcomes: int) -> Divergence:
    s = trace.steps[step - 1]
    before = trace.steps[step - 2].group if step >= 2 else abstract_group(None, trace.names)
    if outcomes < 0:
        reason = "not explained (only the first divergences are)"
    elif outcomes == 0:
        reason = ("the spec's coordinator has no step for this input in this state"
                  + (" (the timer cannot fire here)" if s.req is None else ""))
    else:
        reason = (f"the spec's coordinator allows {outcomes} outcome(s) here, none of them "
                  "the reference's (group or answers differ)")
    return Divergence(trace.name, step, s.action, COORDINATOR_ACTIONS.get(s.action, "?"),
                      s.at_ms, s.what, before, s.ref_before, s.req, s.group, s.out,
                      outcomes, reason)


def explain(trace: RecordedTrace, step: int) -> Divergence:
    """How many outcomes the spec allows at the first step it cannot match."""
    outcomes: set[tuple[str, str]] = set()

    def on_state(st: dict[str, str]) -> None:
        if int(st["i"]) == step and st.get("ready") == "FALSE":
            outcomes.add((st.get("group", ""), st.get("msgs", "")))

    _run([trace], step, on_state)
    return _divergence(trace, step, len(outcomes))

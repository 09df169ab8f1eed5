"""Spec to reference for the consumer protocol (KIP-848), exhaustively on a bounded model.

For every state of the model's reachable graph (TLC's ``-dump dot,actionlabels``, read by
crosscheck/graph.py) the reference coordinator is put in the corresponding state
(vocabulary.concrete_group, checked to abstract back to the spec's ``group``) and given
every input the spec's coordinator could take there: each ConsumerGroupHeartbeat and
OffsetCommit in flight, each member's session timer and each armed rebalance timer. Kafka's
one arbitrary choice the reference resolves by data, the order its member map iterates in
(the uniform assignor breaks ties by it), is enumerated: every order of the members is
tried.

Per coordinator action and input (a request, or a timer's member) the successors,
abstracted to ``(group, msgs)``, are compared:

(b) every reference successor is a spec successor, except where the model's bounds rule
    the step out (a group epoch past MaxGroupEpoch; a timer that fires early, i.e. while
    the member's consumer still acts as it, once the fault budget is spent or when early
    timers are not among the model's FaultKinds); these are counted, not compared;
(a) every spec successor is reproduced, except that where the step computes a new target
    the spec allows any valid balanced one (TargetValid) and the reference's server-side
    assignor picks one of them: the spec successors with another target are counted as
    "other valid targets", provided the reference reached one of the spec's successors for
    that input.

Consumer and fault steps are the context the states come from; the reference consumer is
checked by the trace direction (traces.py).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.consumer.heartbeat import _metadata_hash
from groupspec.coordinator.context import Output, Txn
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.timers import Expiry, TimerKind, fire
from groupspec.crosscheck.consumer.vocabulary import (
    FAR_MS,
    GROUP_ID,
    Names,
    abstract_group,
    abstract_response,
    concrete_group,
    concrete_request,
)
from groupspec.crosscheck.exhaustive import Mismatch, Succ
from groupspec.crosscheck.graph import StateGraph, ValueCache
from groupspec.crosscheck.vocabulary import Fn, Rec, SpecValue, from_tlc

#: the coordinator's actions (spec/ConsumerProtocol.tla CoordinatorNext) and the
#: reference path each stands for
COORDINATOR_ACTIONS: dict[str, str] = {
    "HandleHeartbeat": "handle(ConsumerGroupHeartbeat, epoch >= 0) -> heartbeat._heartbeat, "
                       "reconciliation.reconcile",
    "HandleLeave": "handle(ConsumerGroupHeartbeat, epoch -1) -> heartbeat._leave, fence_members",
    "HandleCommit": "handle(OffsetCommit v9) -> offsets.validate_consumer_offset_commit",
    "ExpireSession": "timers.fire(ExpireConsumerSession) -> heartbeat.expire_session",
    "ExpireRebalance": "timers.fire(ExpireConsumerRebalance) -> heartbeat.expire_rebalance",
}

#: a request message, or a timer's member id
Input = SpecValue


@dataclass
class Coverage:
    states: int = 0
    edges: int = 0
    #: spec edges per action (every action of the model)
    edges_by_action: Counter[str] = field(default_factory=Counter)
    #: spec coordinator edges the reference reproduced, per action
    matched_by_action: Counter[str] = field(default_factory=Counter)
    #: spec edges with another valid target than the reference's assignor chose
    alternatives_by_action: Counter[str] = field(default_factory=Counter)
    #: reference paths taken on inputs whose outcome the spec has (action, path) -> count
    paths: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: reference steps excluded by the model's bounds, per reason
    bounded: Counter[str] = field(default_factory=Counter)
    reference_runs: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    concretization_errors: list[str] = field(default_factory=list)

    def uncovered(self, required: list[str]) -> list[str]:
        return [a for a in required if self.matched_by_action.get(a, 0) == 0]


@dataclass
class ModelBounds:
    member_ids: tuple[str, ...]
    consumers: tuple[str, ...]
    partitions: tuple[str, ...]
    fault_kinds: frozenset[str]
    max_faults: int
    #: the model's CONSTRAINT: TLC keeps no state past this group epoch
    max_group_epoch: int


ReferenceFactory = Callable[[], Coordinator]


def _default_coordinator() -> Coordinator:
    return Coordinator(CoordinatorConfig())


def _s(v: SpecValue) -> frozenset[SpecValue]:
    assert isinstance(v, frozenset)
    return v


def _r(v: SpecValue) -> Rec:
    assert isinstance(v, Rec)
    return v


def _f(v: SpecValue) -> Fn:
    assert isinstance(v, Fn)
    return v


def _path(action: str, before: Rec, after: Rec, inp: Input, out: frozenset[SpecValue]) -> str:
    """The reference path a step took, in words (the coverage table's rows)."""
    if action in ("HandleHeartbeat", "HandleCommit"):
        req = _r(inp)
        answer = "HeartbeatResponse" if action == "HandleHeartbeat" else "OffsetCommitResponse"
        resp = [x for x in out if isinstance(x, Rec) and x["client"] == req["client"]
                and x["conn"] == req["conn"] and x["type"] == answer]
        error = str(resp[0]["error"]) if resp else "no answer"
        if action == "HandleCommit" or error != "NONE":
            return f"error {error}" if error != "NONE" else "commit stored"
        m = str(req["member"])
        joined = m not in _s(before["members"])
        fresh = after["assignment_epoch"] != before["assignment_epoch"]
        state = _r(_f(after["member"])[m])["state"]
        return (f"{'join' if joined else 'member'}, "
                f"{'new target' if fresh else 'same target'}, {state}")
    if action == "HandleLeave":
        return "member fenced" if after != before else "unknown member: nothing"
    if action == "ExpireSession":
        return "member fenced"
    m = str(inp)
    return "member fenced" if m not in _s(after["members"]) else "timer cleared (epoch moved on)"


class Exhaustive:
    """Compares the spec's coordinator steps with the reference's on every state."""

    def __init__(self, bounds: ModelBounds, coordinator: ReferenceFactory | None = None) -> None:
        self.b = bounds
        self.make = coordinator or _default_coordinator
        self.values = ValueCache(from_tlc)  # type: ignore[arg-type]
        self._ref_cache: dict[tuple[str, str], dict[tuple[str, Input], set[tuple[Succ, str]]]] = {}
        self.runs = 0
        self._bounded: Counter[str] = Counter()
        #: group text -> whether its reference counterpart abstracts back to it
        self._roundtrip: dict[str, bool] = {}

    def names(self) -> Names:
        return Names(self.b.member_ids, self.b.consumers, {p: 1 for p in self.b.partitions})

    def value(self, text: str) -> SpecValue:
        return self.values(text)  # type: ignore[return-value]

    # ------------------------------------------------------------ the reference side
    def _run(self, group: Rec, order: tuple[str, ...], names: Names,
             step: Callable[[Coordinator], Output]) -> tuple[Rec, Output]:
        coord = self.make()
        coord.set_topics(names.metadata())
        g = concrete_group(group, names, order)
        if g is not None:
            members = g.members.values()
            g.metadata_hash = _metadata_hash(
                Txn(coord.state, coord.config, 0),
                {t for m in members for t in m.subscribed_topic_names})
            coord.state.consumer_groups[GROUP_ID] = g
            coord.state.group_order.put(GROUP_ID)
        out = step(coord)
        return abstract_group(coord.state.consumer_groups.get(GROUP_ID), names), out

    def reference_successors(self, group: Rec, msgs: frozenset[SpecValue]
                             ) -> dict[tuple[str, Input], set[tuple[Succ, str]]]:
        """Per (action, input): (successor, the reference path that produced it)."""
        out: dict[tuple[str, Input], set[tuple[Succ, str]]] = {}
        members = _s(group["members"])
        orders = list(itertools.permutations(sorted(str(m) for m in members))) or [()]

        for m in sorted(msgs, key=repr):
            req = _r(m)
            kind = req["type"]
            if kind == "HeartbeatRequest":
                action = "HandleHeartbeat" if _int(req["epoch"]) >= 0 else "HandleLeave"
            elif kind == "OffsetCommitRequest":
                action = "HandleCommit"
            else:
                continue
            for order in orders:
                names = self.names()
                request = concrete_request(req, names)
                rid = names.request_id(str(req["client"]), _int(req["conn"]))

                def handle(coord: Coordinator, request: object = request, rid: int = rid) -> Output:
                    return coord.handle(rid, request, now_ms=0)  # type: ignore[arg-type]

                g2, o = self._run(group, order, names, handle)
                self.runs += 1
                responses: set[SpecValue] = set()
                for r_id, resp in o.responses:
                    assert r_id == rid
                    x = abstract_response(resp, req, g2, names)  # type: ignore[arg-type]
                    if x is not None:
                        responses.add(x)
                msgs2 = (msgs - {req}) | frozenset(responses)
                out.setdefault((action, req), set()).add(
                    ((g2, msgs2), _path(action, group, g2, req, frozenset(responses))))

        per = _f(group["member"])
        timers = [("ExpireSession", TimerKind.ExpireConsumerSession, str(x))
                  for x in sorted(members, key=str)]
        timers += [("ExpireRebalance", TimerKind.ExpireConsumerRebalance, str(x))
                   for x in sorted(members, key=str) if _r(per[x])["rebalance_timer"] != -1]
        for (action, kind_, who), order in itertools.product(timers, orders):
            names = self.names()

            def fire_step(coord: Coordinator, kind_: TimerKind = kind_, who: str = who) -> Output:
                txn = Txn(coord.state, coord.config, FAR_MS)
                fire(txn, Expiry(FAR_MS, kind_, GROUP_ID, who))
                return txn.out

            g2, _ = self._run(group, order, names, fire_step)
            self.runs += 1
            out.setdefault((action, who), set()).add(
                ((g2, msgs), _path(action, group, g2, who, msgs)))
        return out

    # ------------------------------------------------------------ fault budget
    def _early(self, action: str, m: str, group: Rec, st: dict[str, SpecValue],
               msgs: frozenset[SpecValue]) -> bool:
        """InUse(m) (and, for the rebalance timeout, not StuckAs(m)): the timer is early."""
        cs, cm, ce = _f(st["client_state"]), _f(st["client_member"]), _f(st["client_epoch"])
        owned, conn, stuck = _f(st["owned"]), _f(st["client_conn"]), _f(st["stuck"])
        members = _s(group["members"])
        in_use = stuck_as = False
        for c in self.b.consumers:
            if cs[c] not in ("joining", "member") or cm[c] != m:
                continue
            if stuck[c] is True:
                stuck_as = True
            ok_epoch = False
            if m in members:
                mem = _r(_f(group["member"])[m])
                e, me = _int(ce[c]), _int(mem["member_epoch"])
                ok_epoch = not (e > me or (e < me and (
                    e != mem["previous_member_epoch"]
                    or not _s(owned[c]) <= _s(mem["assigned"]))))
            answered = any(_r(x)["type"] == "HeartbeatResponse" and _r(x)["error"] == "NONE"
                           and _r(x)["client"] == c and _r(x)["conn"] == conn[c] for x in msgs)
            if _s(owned[c]) or ok_epoch or answered:
                in_use = True
        if action == "ExpireRebalance":
            return in_use and not stuck_as
        return in_use

    # ------------------------------------------------------------ the comparison
    def check(self, graph: StateGraph, progress: Callable[[int, int], None] | None = None,
              stop_after: int | None = None) -> Coverage:
        """Compare on every state (or until ``stop_after`` mismatches: the mutants)."""
        cov = Coverage(states=len(graph.states), edges=len(graph.edges))
        self._bounded = cov.bounded
        self.runs = 0
        out_edges: dict[str, list[tuple[str, str]]] = {}
        for src, action, dst in graph.edges:
            cov.edges_by_action[action] += 1
            if action in COORDINATOR_ACTIONS and dst in graph.states:
                out_edges.setdefault(src, []).append((action, dst))
        for n, (sid, texts) in enumerate(graph.states.items()):
            if progress is not None and n % 5000 == 0:
                progress(n, len(graph.states))
            self._check_state(graph, sid, texts, out_edges.get(sid, []), cov)
            if stop_after is not None and len(cov.mismatches) >= stop_after:
                break
        cov.reference_runs = self.runs
        return cov

    def _spec_input(self, action: str, group: Rec, msgs: frozenset[SpecValue],
                    tg: Rec, tm: frozenset[SpecValue]) -> Input:
        if action in ("HandleHeartbeat", "HandleLeave", "HandleCommit"):
            gone = [x for x in msgs - tm if str(_r(x)["type"]).endswith("Request")]
            assert len(gone) == 1, gone
            return gone[0]
        removed = _s(group["members"]) - _s(tg["members"])
        if removed:
            return next(iter(removed))
        per, per2 = _f(group["member"]), _f(tg["member"])
        changed = [m for m in _s(group["members"]) if per[m] != per2[m]]
        assert len(changed) == 1, changed
        return changed[0]

    def _check_state(self, graph: StateGraph, sid: str, texts: dict[str, str],
                     spec_out: list[tuple[str, str]], cov: Coverage) -> None:
        group, msgs = _r(self.value(texts["group"])), _s(self.value(texts["msgs"]))
        roundtrip = self._roundtrip.get(texts["group"])
        if roundtrip is None:
            names = self.names()
            roundtrip = abstract_group(concrete_group(group, names), names) == group
            self._roundtrip[texts["group"]] = roundtrip
        if not roundtrip:
            cov.concretization_errors.append(sid)
            return
        key = (texts["group"], texts["msgs"])
        ref = self._ref_cache.get(key)
        if ref is None:
            ref = self.reference_successors(group, msgs)
            if len(self._ref_cache) < 200_000:
                self._ref_cache[key] = ref
        faults = self.value(texts["faults"])
        budget_left = isinstance(faults, int) and faults < self.b.max_faults
        st = {k: self.value(texts[k]) for k in ("client_state", "client_member", "client_epoch",
                                                "owned", "client_conn", "stuck")}
        spec: dict[tuple[str, Input], set[Succ]] = {}
        for action, dst in spec_out:
            t = graph.states[dst]
            tg, tm = _r(self.value(t["group"])), _s(self.value(t["msgs"]))
            inp = self._spec_input(action, group, msgs, tg, tm)
            spec.setdefault((action, inp), set()).add((tg, tm))
        for k in set(spec) | set(ref):
            action, inp = k
            spec_succ = spec.get(k, set())
            ref_succ: dict[Succ, str] = {}
            for succ, path in ref.get(k, set()):
                if succ in spec_succ:
                    ref_succ[succ] = path
                    continue
                if _int(succ[0]["group_epoch"]) > self.b.max_group_epoch:
                    cov.bounded[f"{action} past the model's group epoch bound"] += 1
                    continue
                if action in ("ExpireSession", "ExpireRebalance") and self._early(
                        action, str(inp), group, st, msgs):
                    kind = "early_session" if action == "ExpireSession" else "early_rebalance"
                    if not budget_left or kind not in self.b.fault_kinds:
                        cov.bounded[f"{action} early, not allowed by the model's fault budget"] += 1
                        continue
                cov.mismatches.append(Mismatch(
                    sid, action, "reference-only",
                    f"the reference's step ({path}) on {_describe(inp)} is not a spec step",
                    group, succ))
                ref_succ[succ] = path
            reached = [s for s in spec_succ if s in ref_succ]
            for succ in spec_succ:
                if succ in ref_succ:
                    cov.matched_by_action[action] += 1
                    cov.paths[(action, ref_succ[succ])] += 1
                elif reached and succ[0]["assignment_epoch"] != group["assignment_epoch"]:
                    cov.alternatives_by_action[action] += 1
                else:
                    cov.mismatches.append(Mismatch(
                        sid, action, "spec-only",
                        f"a spec step on {_describe(inp)} the reference does not reproduce "
                        "with any member order", group, succ))


def _int(v: SpecValue) -> int:
    assert isinstance(v, int) and not isinstance(v, bool)
    return v


def _describe(inp: Input) -> str:
    if isinstance(inp, Rec):
        return (f"{inp['type']} from {inp['client']} (conn {inp['conn']}) member "
                f"{inp['member']} epoch {inp['epoch']}")
    return f"the timer of member {inp}"

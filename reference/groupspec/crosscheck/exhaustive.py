"""Spec to reference, exhaustively on a bounded model.

For every state of the model's reachable graph (graph.py) the reference coordinator is put
in the corresponding state (vocabulary.concrete_group, checked to abstract back to the
spec's state) and given every input the spec's coordinator could take there: each request
in flight, each timer, an administrator's DeleteGroups. For each coordinator action kind
the two sets of successors, abstracted to (group, messages in flight), are compared:

(a) every spec edge is reproduced by the reference: for each spec successor there is an
    input and a resolution of Kafka's arbitrary choices (the fresh member id, and which
    member leads when the leader must be replaced: the reference takes the first member in
    insertion order, so every order of the members is tried) for which the reference
    reaches it;
(b) everything the reference does is a spec edge: each reference successor is one of the
    spec's, except where the spec's bounds forbid the step (no fresh member id left in the
    model; a timer that fires early when the fault budget is spent), which is counted
    separately.

The coordinator's clients are not part of this direction: their steps (Send*, Receive*,
faults) are counted in the coverage table as the context that produced the states, and the
reference client is checked against the spec by the trace direction (traces.py).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.context import Output, Txn
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.timers import Expiry, TimerKind, fire
from groupspec.crosscheck.graph import StateGraph, ValueCache
from groupspec.crosscheck.vocabulary import (
    FAR_MS,
    NO_MEMBER,
    Fn,
    Names,
    Rec,
    SpecValue,
    abstract_group,
    abstract_response,
    concrete_group,
    concrete_request,
    conn,
    from_tlc,
    member_id,
)
from groupspec.protocol import messages as msg

GROUP_ID = "g"

#: the coordinator's action kinds (spec/ConsumerGroup.tla CoordinatorNext, FaultNext's
#: DeleteGroup) and the reference input each stands for
COORDINATOR_ACTIONS: dict[str, str] = {
    "JoinGroup": "Coordinator.handle(JoinGroupRequest) -> join_group.handle_join_group",
    "SyncGroup": "Coordinator.handle(SyncGroupRequest) -> sync_group.handle_sync_group",
    "Heartbeat": "Coordinator.handle(HeartbeatRequest) -> heartbeat.handle_heartbeat",
    "LeaveGroup": "Coordinator.handle(LeaveGroupRequest) -> leave_group.handle_leave_group",
    "OffsetCommit": "Coordinator.handle(OffsetCommitRequest) -> offsets.handle_offset_commit",
    "ExpireHeartbeat": "timers.fire(ExpireHeartbeat)",
    "ExpirePendingMember": "timers.fire(ExpirePendingMember)",
    "ExpireJoin": "timers.fire(ExpireJoin)",
    "ExpireSync": "timers.fire(ExpireSync)",
    "DeleteGroup": "Coordinator.handle(DeleteGroupsRequest) -> admin.handle_delete_groups",
}
_REQUEST_ACTION = {
    "JoinGroupRequest": "JoinGroup", "SyncGroupRequest": "SyncGroup",
    "HeartbeatRequest": "Heartbeat", "LeaveGroupRequest": "LeaveGroup",
    "OffsetCommitRequest": "OffsetCommit",
}

Succ = tuple[Rec, frozenset[SpecValue]]


@dataclass(frozen=True)
class Mismatch:
    state: str
    action: str
    direction: str  # "spec-only" (a) or "reference-only" (b)
    detail: str
    before: Rec
    successor: Succ


@dataclass
class Coverage:
    states: int = 0
    edges: int = 0
    #: spec edges per action (every action of the model)
    edges_by_action: Counter[str] = field(default_factory=Counter)
    #: coordinator edges reproduced by the reference, per action
    matched_by_action: Counter[str] = field(default_factory=Counter)
    #: reference steps excluded by the model's bounds, per reason
    bounded: Counter[str] = field(default_factory=Counter)
    reference_runs: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    #: states whose reference counterpart does not abstract back to them
    concretization_errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        uncovered = [a for a in COORDINATOR_ACTIONS if self.matched_by_action[a] == 0]
        return not self.mismatches and not self.concretization_errors and not uncovered

    def uncovered(self, required: list[str]) -> list[str]:
        return [a for a in required if self.matched_by_action.get(a, 0) == 0]


@dataclass
class ModelBounds:
    member_ids: tuple[str, ...]
    clients: tuple[str, ...]
    static_clients: frozenset[str]
    partitions: tuple[str, ...]
    max_faults: int
    allow_delete: bool
    #: the model's CONSTRAINT: TLC keeps no state past this generation
    max_generation: int


ReferenceFactory = Callable[[], Coordinator]


def _default_coordinator() -> Coordinator:
    return Coordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=0))


class Exhaustive:
    """Compares the spec's coordinator steps with the reference's on every state."""

    def __init__(self, bounds: ModelBounds, coordinator: ReferenceFactory | None = None) -> None:
        self.b = bounds
        self.make = coordinator or _default_coordinator
        self.values = ValueCache(from_tlc)  # type: ignore[arg-type]
        self._ref_cache: dict[tuple[str, str, str], dict[str, set[tuple[Succ, str]]]] = {}

    def names(self) -> Names:
        return Names(self.b.member_ids, self.b.clients, self.b.static_clients,
                     self.b.partitions, {})

    def value(self, text: str) -> SpecValue:
        return self.values(text)  # type: ignore[return-value]

    # ------------------------------------------------------------ the reference side
    def _run(self, group: Rec, protocol: str, order: tuple[str, ...], names: Names,
             step: Callable[[Coordinator, Names], Output],
             ) -> tuple[Rec, Output]:
        coord = self.make()
        g = concrete_group(GROUP_ID, group, protocol, names, order)
        coord.state.groups[GROUP_ID] = g
        coord.state.group_order.put(GROUP_ID)
        out = step(coord, names)
        after = coord.state.groups.get(GROUP_ID, g)
        return abstract_group(after, names), out

    def _responses(self, out: Output, names: Names, parked: dict[int, str],
                   current: tuple[int, str, int] | None) -> frozenset[SpecValue]:
        res: set[SpecValue] = set()
        for rid, resp in out.responses:
            c = names.connection(rid)
            if current is not None and rid == current[0]:
                who, generation = current[1], current[2]
            else:
                who, generation = parked.get(rid, ""), -1
            res.add(abstract_response(resp, c, who, generation, names))
        return frozenset(res)

    def reference_successors(self, group: Rec, protocol: str, msgs: frozenset[SpecValue]
                             ) -> dict[str, set[tuple[Succ, str]]]:
        """Per action kind: (successor, the input that produced it)."""
        out: dict[str, set[tuple[Succ, str]]] = {a: set() for a in COORDINATOR_ACTIONS}
        members = group["members"]
        assert isinstance(members, frozenset)
        orders = list(itertools.permutations(sorted(str(m) for m in members))) or [()]
        used = group["used_ids"]
        assert isinstance(used, frozenset)
        free = [i for i in self.b.member_ids if i not in used]
        base = group.without("used_ids")
        joins, syncs = group["join_request"], group["sync_request"]
        assert isinstance(joins, Fn) and isinstance(syncs, Fn)

        def parked(names: Names) -> dict[int, str]:
            p: dict[int, str] = {}
            for table in (joins, syncs):
                for mid, c in table.pairs:
                    assert isinstance(c, Rec)
                    if c["client"] != "NoClient":
                        p[names.request_id(str(c["client"]), int(c["inc"]))] = str(mid)  # type: ignore[arg-type]
            return p

        def record(action: str, g2: Rec, out_msgs: frozenset[SpecValue], label: str) -> None:
            if g2 == base and out_msgs == msgs:
                return  # the reference did nothing: not a transition
            out[action].add(((g2, out_msgs), label))

        for m in sorted(msgs, key=repr):
            assert isinstance(m, Rec)
            kind = str(m["type"])
            action = _REQUEST_ACTION.get(kind)
            if action is None:
                continue
            new_member = action == "JoinGroup" and m["member"] == NO_MEMBER
            choices: list[str | None] = list(free) if new_member else [None]
            if new_member and not free:
                self._bounded["no fresh member id left in the model"] += 1
                continue
            for fresh, order in itertools.product(choices, orders):
                names = self.names()
                req = concrete_request(m, GROUP_ID, protocol)
                rid = names.request_id(str(m["client"]), int(m["inc"]))  # type: ignore[arg-type]
                generation = m["generation"]
                assert isinstance(generation, int)

                def step(coord: Coordinator, nm: Names, req: msg.Request = req, rid: int = rid,
                         fresh: str | None = fresh) -> Output:
                    def ids(client_id: str, instance: str | None) -> str:
                        return fresh if fresh is not None else "unexpected-fresh-id"
                    coord.member_ids = ids
                    return coord.handle(rid, req, now_ms=0)

                g2, o = self._run(group, protocol, order, names, step)
                responses = self._responses(o, names, parked(names),
                                            (rid, member_id(m["member"]), generation))
                self.runs += 1
                record(action, g2, (msgs - {m}) | responses,
                       f"{kind} from {m['client']} member {m['member']}"
                       + (f" (fresh id {fresh})" if fresh else ""))

        timers: list[tuple[str, TimerKind, str]] = []
        timers += [("ExpireHeartbeat", TimerKind.ExpireHeartbeat, str(x)) for x in sorted(members, key=str)]
        pend = group["pending_members"]
        assert isinstance(pend, frozenset)
        timers += [("ExpirePendingMember", TimerKind.ExpirePendingMember, str(x)) for x in sorted(pend, key=str)]
        if group["join_timer"] != "none":
            timers.append(("ExpireJoin", TimerKind.ExpireJoin, ""))
        if group["sync_timer"] is True:
            timers.append(("ExpireSync", TimerKind.ExpireSync, ""))
        for (action, kind_, who), order in itertools.product(timers, orders):
            names = self.names()

            def fire_step(coord: Coordinator, nm: Names, kind_: TimerKind = kind_, who: str = who) -> Output:
                txn = Txn(coord.state, coord.config, FAR_MS)
                fire(txn, Expiry(FAR_MS, kind_, GROUP_ID, who))
                return txn.out

            g2, o = self._run(group, protocol, order, names, fire_step)
            self.runs += 1
            record(action, g2, msgs | self._responses(o, names, parked(names), None),
                   f"{action} {who}".strip())

        if group["state"] == "Empty":
            names = self.names()

            def delete(coord: Coordinator, nm: Names) -> Output:
                coord.handle(999_999, msg.DeleteGroupsRequest(groups_names=(GROUP_ID,)), now_ms=0)
                return Output()

            g2, _ = self._run(group, protocol, (), names, delete)
            self.runs += 1
            record("DeleteGroup", g2, msgs, "DeleteGroups")
        return out

    # ------------------------------------------------------------ fault budget
    def _held(self, m: str, st: dict[str, SpecValue], msgs: frozenset[SpecValue]) -> bool:
        """HeldByLiveClient(m)."""
        cs, cm, ci = st["client_state"], st["client_member"], st["client_inc"]
        assert isinstance(cs, Fn) and isinstance(cm, Fn) and isinstance(ci, Fn)
        for c in self.b.clients:
            if cs[c] == "down":
                continue
            if cm[c] == m:
                return True
            for x in msgs:
                assert isinstance(x, Rec)
                if x["client"] == c and x["inc"] == ci[c] and x["member"] == m:
                    return True
        return False

    def _is_fault(self, label: str, group: Rec, st: dict[str, SpecValue],
                  msgs: frozenset[SpecValue]) -> bool:
        action, _, who = label.partition(" ")
        joins, syncs = group["join_request"], group["sync_request"]
        assert isinstance(joins, Fn) and isinstance(syncs, Fn)
        members = group["members"]
        assert isinstance(members, frozenset)
        if action in ("ExpireHeartbeat", "ExpirePendingMember"):
            return self._held(who, st, msgs)
        if action == "ExpireJoin":
            return group["join_timer"] == "rebalance" and any(
                joins[m] == conn("NoClient", 0) and self._held(str(m), st, msgs) for m in members)
        if action == "ExpireSync":
            pend = group["pending_sync_members"]
            assert isinstance(pend, frozenset)
            return any(self._held(str(m), st, msgs) for m in pend)
        return action == "DeleteGroups"

    # ------------------------------------------------------------ the comparison
    def check(self, graph: StateGraph, progress: Callable[[int, int], None] | None = None,
              stop_after: int | None = None) -> Coverage:
        """Compare on every state (or until ``stop_after`` mismatches: the mutants)."""
        cov = Coverage(states=len(graph.states), edges=len(graph.edges))
        self._bounded: Counter[str] = cov.bounded
        self.runs = 0
        out_edges: dict[str, dict[str, set[str]]] = {}
        for src, action, dst in graph.edges:
            cov.edges_by_action[action] += 1
            if action in COORDINATOR_ACTIONS:
                out_edges.setdefault(src, {}).setdefault(action, set()).add(dst)
        for n, (sid, texts) in enumerate(graph.states.items()):
            if progress is not None and n % 2000 == 0:
                progress(n, len(graph.states))
            self._check_state(graph, sid, texts, out_edges.get(sid, {}), cov)
            if stop_after is not None and len(cov.mismatches) >= stop_after:
                break
        cov.reference_runs = self.runs
        return cov

    def _check_state(self, graph: StateGraph, sid: str, texts: dict[str, str],
                     spec_out: dict[str, set[str]], cov: Coverage) -> None:
        group = self.value(texts["group"])
        msgs = self.value(texts["msgs"])
        protocol = self.value(texts["protocol"])
        assert isinstance(group, Rec) and isinstance(msgs, frozenset) and isinstance(protocol, str)
        base = group.without("used_ids")
        # the reference state must abstract back to the spec state
        names = self.names()
        probe = concrete_group(GROUP_ID, base, protocol, names)
        if abstract_group(probe, names) != base:
            cov.concretization_errors.append(sid)
            return
        key = (texts["group"], texts["msgs"], texts["protocol"])
        ref = self._ref_cache.get(key)
        if ref is None:
            ref = self.reference_successors(group, protocol, msgs)
            if len(self._ref_cache) < 200_000:
                self._ref_cache[key] = ref
        faults = self.value(texts["faults"])
        budget_left = isinstance(faults, int) and faults < self.b.max_faults
        st = {k: self.value(texts[k]) for k in ("client_state", "client_member", "client_inc")}
        for action in COORDINATOR_ACTIONS:
            spec_succ: set[Succ] = set()
            for dst in spec_out.get(action, ()):
                t = graph.states[dst]
                tg = self.value(t["group"])
                tm = self.value(t["msgs"])
                assert isinstance(tg, Rec) and isinstance(tm, frozenset)
                spec_succ.add((tg.without("used_ids"), tm))
            ref_succ: dict[Succ, str] = {}
            for succ, label in ref.get(action, ()):
                if action == "DeleteGroup" and not self.b.allow_delete:
                    cov.bounded["DeleteGroup not allowed by the model"] += 1
                    continue
                generation = succ[0]["generation_id"]
                if isinstance(generation, int) and generation > self.b.max_generation:
                    cov.bounded[f"{action} past the model's generation bound"] += 1
                    continue
                if not budget_left and self._is_fault(label, group, st, msgs):
                    cov.bounded[f"{action} early with the fault budget spent"] += 1
                    continue
                ref_succ.setdefault(succ, label)
            for succ in spec_succ:
                if succ in ref_succ:
                    cov.matched_by_action[action] += 1
                else:
                    cov.mismatches.append(Mismatch(
                        sid, action, "spec-only",
                        "a spec step the reference does not reproduce with any input or choice",
                        base, succ))
            for succ, label in ref_succ.items():
                if succ not in spec_succ:
                    cov.mismatches.append(Mismatch(
                        sid, action, "reference-only",
                        f"the reference's step on {label} is not a spec step", base, succ))

    def iter_actions(self) -> Iterator[str]:
        yield from COORDINATOR_ACTIONS

"""The protocol's invariants as plain functions, shared by the Hypothesis machines, the
simulator and (later) the trace validator.

Three kinds:

- state invariants: over one coordinator state (``check_state``);
- record invariants: over a record and the state just before it (``check_record``): valid
  state transitions, generations growing by one, no commit stored from a stale generation,
  an unknown member or a fenced instance;
- ownership invariants: over who owns which partition (``one_owner_per_generation`` over
  the assignments members received, ``concurrent_owners`` over what consumers hold at one
  instant).

:class:`InvariantMonitor` applies records through the one replay function and runs the
first two kinds around each, so any record stream (a live run, a trace) can be checked.
Names match the TLA+ spec's ``...Inv`` operators (``LeaderIsMemberInv`` etc.).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.consumer.group import ConsumerGroup
from groupspec.coordinator.replay import apply_record
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol import records as r
from groupspec.protocol.group_state import GroupState, is_valid_transition

S = GroupState
TP = tuple[str, int]


@dataclass(frozen=True)
class Violation:
    invariant: str
    group_id: str
    detail: str
    at_ms: int | None = None

    def __str__(self) -> str:
        at = f" at {self.at_ms} ms" if self.at_ms is not None else ""
        return f"{self.invariant} violated in group {self.group_id!r}{at}: {self.detail}"


# ---------------------------------------------------------------- state invariants
def leader_is_member(g: Group) -> str | None:
    """LeaderIsMemberInv: a group with members has a leader, and the leader is a member;
    CompletingRebalance and Stable always have members."""
    if g.state in (S.CompletingRebalance, S.Stable) and not g.members:
        return f"{g.state.value} with no members"
    if g.members and g.leader_id not in g.members:
        return f"leader {g.leader_id!r} is not among members {sorted(g.members)}"
    return None


def static_members_consistent(g: Group) -> str | None:
    """StaticMembersInv: group.instance.id -> member id is injective and points at members
    carrying that instance id."""
    seen: set[str] = set()
    for iid, mid in g.static_members.items():
        if mid in seen:
            return f"member {mid!r} is mapped by two instance ids"
        seen.add(mid)
        m = g.members.get(mid)
        if m is None:
            return f"instance {iid!r} maps to non-member {mid!r}"
        if m.group_instance_id != iid:
            return f"instance {iid!r} maps to {mid!r}, which carries {m.group_instance_id!r}"
    for mid, m in g.members.items():
        if m.group_instance_id is not None and g.static_members.get(m.group_instance_id) != mid:
            return f"static member {mid!r} is not mapped by its instance id"
    return None


def pending_members_disjoint(g: Group) -> str | None:
    """PendingMembersInv: a KIP-394 pending id is never also a member."""
    both = set(g.pending_members) & set(g.members)
    return f"pending and member at once: {sorted(both)}" if both else None


def parked_requests_fit_state(g: Group) -> str | None:
    """ParkedRequestsInv: JoinGroups wait only in PreparingRebalance, SyncGroups only in
    CompletingRebalance."""
    for m in g.members.values():
        if m.is_awaiting_join and g.state is not S.PreparingRebalance:
            return f"{m.member_id!r} parked in JoinGroup while {g.state.value}"
        if m.is_awaiting_sync and g.state is not S.CompletingRebalance:
            return f"{m.member_id!r} parked in SyncGroup while {g.state.value}"
    return None


STATE_INVARIANTS = {
    "LeaderIsMemberInv": leader_is_member,
    "StaticMembersInv": static_members_consistent,
    "PendingMembersInv": pending_members_disjoint,
    "ParkedRequestsInv": parked_requests_fit_state,
}


def check_state(state: CoordinatorState, at_ms: int | None = None) -> list[Violation]:
    out = []
    for g in state.groups.values():
        for name, fn in STATE_INVARIANTS.items():
            detail = fn(g)
            if detail is not None:
                out.append(Violation(name, g.group_id, detail, at_ms))
    return out


# ---------------------------------------------------------------- record invariants
#: the most frequent record (a session deadline moved): no record invariant concerns it
UNCHECKED_RECORD = r.HeartbeatScheduled


def check_record(
    before: CoordinatorState,
    rec: r.Record,
    at_ms: int | None = None,
    previous: r.Record | None = None,
) -> list[Violation]:
    """Invariants of one record against the state just before it is applied;
    ``previous`` is the record applied just before it to the same group, if any."""
    out: list[Violation] = []
    cls = type(rec)
    if cls is UNCHECKED_RECORD:
        return out
    g = before.groups.get(rec.group_id)
    if isinstance(rec, r.StateChanged):
        if g is None:
            return out
        if not is_valid_transition(g.state, rec.state):
            out.append(Violation("ValidTransitionInv", rec.group_id,
                                 f"{g.state.value} -> {rec.state.value} is not in the table", at_ms))
        ends_join = g.state is S.PreparingRebalance and rec.state in (S.CompletingRebalance, S.Empty)
        if ends_join and not isinstance(previous, r.GenerationStarted):
            # Every join completion starts a generation, also the one that ends Empty.
            out.append(Violation(
                "GenerationMonotonicInv", rec.group_id,
                f"join phase ended ({rec.state.value}) without a new generation", at_ms,
            ))
    elif isinstance(rec, r.GenerationStarted):
        if g is None:
            return out
        if rec.generation_id != g.generation_id + 1:
            out.append(Violation(
                "GenerationMonotonicInv", rec.group_id,
                f"generation {g.generation_id} followed by {rec.generation_id}", at_ms,
            ))
    elif isinstance(rec, r.OffsetCommitted) and rec.producer_id == -1:
        # (a transactional commit is pending, and is checked by other rules: no state is
        # enforced, an anonymous one is accepted; ClassicGroup.validateOffsetCommit)
        cg = before.consumer_groups.get(rec.group_id)
        detail = stale_consumer_commit(cg, rec) if cg is not None else stale_commit(g, rec)
        if detail is not None:
            out.append(Violation("NoStaleCommitInv", rec.group_id, detail, at_ms))
    return out


def stale_consumer_commit(g: ConsumerGroup, rec: r.OffsetCommitted) -> str | None:
    """NoStaleCommitInv for a consumer group (KIP-848): a stored commit came from a member
    at its current member epoch, or is an epoch-less commit to an empty group (a commit
    replayed by a coordinator loading the group carries epoch -1 and no member)."""
    where = f"{rec.topic}-{rec.partition}@{rec.committed_offset}"
    if rec.generation_id < 0:
        if g.members and rec.member_id:
            return f"epoch-less commit {where} stored while the group has members"
        return None
    m = g.members.get(rec.member_id)
    if m is None:
        return f"commit {where} stored from non-member {rec.member_id!r}"
    if rec.generation_id != m.member_epoch:
        return (f"commit {where} at member epoch {rec.generation_id} stored while "
                f"{rec.member_id} is at epoch {m.member_epoch}")
    return None


def stale_commit(g: Group | None, rec: r.OffsetCommitted) -> str | None:
    """NoStaleCommitInv: a stored commit came from a current member in the current
    generation (Stable or PreparingRebalance), or is a generation-less commit to an Empty
    (or new) group."""
    where = f"{rec.topic}-{rec.partition}@{rec.committed_offset}"
    if rec.generation_id < 0:
        if g is not None and g.state is not S.Empty:
            return f"generation-less commit {where} stored while the group is {g.state.value}"
        return None
    if g is None:
        return f"commit {where} with generation {rec.generation_id} stored for an unknown group"
    if rec.member_id not in g.members:
        return f"commit {where} stored from non-member {rec.member_id!r}"
    if rec.generation_id != g.generation_id:
        return (
            f"commit {where} from generation {rec.generation_id} stored while the group is at "
            f"generation {g.generation_id}"
        )
    if g.state not in (S.Stable, S.PreparingRebalance):
        return f"commit {where} stored while the group is {g.state.value}"
    return None


@dataclass
class InvariantMonitor:
    """Applies records and checks the record invariants at each one and the state
    invariants after each input's records (an input is atomic, as a TLA+ action is: inside
    one, the state may pass through shapes such as a member added before it is named
    leader)."""

    state: CoordinatorState = field(default_factory=CoordinatorState)
    violations: list[Violation] = field(default_factory=list)
    _last: dict[str, r.Record] = field(default_factory=dict)

    def apply(self, rec: r.Record, at_ms: int | None = None) -> list[Violation]:
        """Apply one record; return the record invariants it breaks."""
        return self.apply_records((rec,), at_ms)

    def apply_records(self, records: Iterable[r.Record], at_ms: int | None = None) -> list[Violation]:
        """Apply records in order, as :meth:`apply` one at a time (one loop, for the trace
        validator's runs of records); return the record invariants they break. A record
        that does not fit the state raises ReplayError; those before it stay applied."""
        state, last = self.state, self._last
        found: list[Violation] = []
        for rec in records:
            gid = rec.group_id
            # (check_record returns [] at once for UNCHECKED_RECORD)
            now = check_record(state, rec, at_ms, last.get(gid)) if type(rec) is not UNCHECKED_RECORD else None
            apply_record(state, rec)
            last[gid] = rec
            if now:
                self.violations.extend(now)
                found += now
        return found

    def apply_input(self, records: Iterable[r.Record], at_ms: int | None = None) -> list[Violation]:
        """Apply the records of one input, then check the state invariants."""
        found = self.apply_records(records, at_ms)
        after = [v for v in check_state(self.state, at_ms) if v not in self.violations]
        self.violations.extend(after)
        return found + after


# ---------------------------------------------------------------- ownership invariants
def one_owner_per_generation(
    assignments: Mapping[int, Mapping[str, Iterable[TP]]],
) -> list[tuple[int, TP, list[str]]]:
    """OneOwnerPerGenerationInv: in each generation no partition is given to two members.
    ``assignments``: generation -> owner -> partitions it was handed in SyncGroup, where the
    owner is the group.instance.id of a static member (a static member replaced in Stable
    keeps its assignment under its new member id, KIP-345) and the member id otherwise.
    Returns (generation, partition, owners) for every conflict."""
    out: list[tuple[int, TP, list[str]]] = []
    for gen in sorted(assignments):
        owners: dict[TP, list[str]] = {}
        for member, parts in sorted(assignments[gen].items()):
            for tp in parts:
                owners.setdefault(tp, []).append(member)
        out.extend((gen, tp, ms) for tp, ms in sorted(owners.items()) if len(ms) > 1)
    return out


def concurrent_owners(owned: Mapping[str, Iterable[TP]]) -> dict[TP, list[str]]:
    """NoConcurrentOwnersInv: partitions held by more than one consumer at one instant."""
    owners: dict[TP, list[str]] = {}
    for member, parts in sorted(owned.items()):
        for tp in parts:
            owners.setdefault(tp, []).append(member)
    return {tp: ms for tp, ms in sorted(owners.items()) if len(ms) > 1}


def unassigned(expected: Iterable[TP], owned: Mapping[str, Iterable[TP]]) -> set[TP]:
    """Partitions of ``expected`` that no consumer holds (for the liveness check)."""
    held: set[TP] = set()
    for parts in owned.values():
        held.update(parts)
    return set(expected) - held

"""The coordinator state machine, and proof that each invariant can fail.

Each mutant removes one protocol rule from the coordinator (monkeypatched for the test
only); the machine must then find a counterexample that names exactly the invariant that
rule protects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import groupspec.coordinator.classic.rebalance as rebalance
import groupspec.coordinator.context as context
import groupspec.coordinator.offsets as offsets
import groupspec.coordinator.replay as replay
import groupspec.invariants as invariants
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.classic.membership import validate_member
from groupspec.coordinator.context import Txn
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import OffsetCommitRequest, SyncGroupResponse
from properties.coordinator_machine import CoordinatorMachine, InvariantViolated

TestCoordinatorMachine = CoordinatorMachine.TestCase

# Independent of the loaded profile (dev, ci, nightly), so a hunt finds the same thing
# wherever it runs.
HUNT = settings(
    settings.get_profile("default"),
    max_examples=400,
    stateful_step_count=30,
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
    # only which invariant fails matters here, not a minimal story: no shrinking
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _commit_without_generation_check(group: Group, req: OffsetCommitRequest) -> Error:
    """Stale-generation rule removed: a known member may commit with any generation."""
    if group.state is GroupState.Dead:
        return Error.COORDINATOR_NOT_AVAILABLE
    if req.generation_id < 0 and group.state is GroupState.Empty:
        return Error.NONE
    return validate_member(group, req.member_id, req.group_instance_id)


def _remove_without_leader_handover(txn: Txn, group: Group, member_id: str, reason: str) -> None:
    """Leader re-election rule removed: a departing leader leaves leader_id dangling."""
    if member_id in group.pending_members:
        txn.emit(r.PendingMemberRemoved(group.group_id, member_id, reason))
    if member_id in group.members:
        txn.emit(r.MemberRemoved(group.group_id, member_id, reason))


def _skip_completing_rebalance(txn: Txn, group: Group, target: GroupState) -> None:
    """The CompletingRebalance step removed: the join phase goes straight to Stable."""
    if target is GroupState.CompletingRebalance:
        target = GroupState.Stable
    txn.emit(r.StateChanged(group.group_id, target, txn.now_ms))


def _everyone_gets_the_leaders_assignment(txn: Txn, group: Group, error: Error) -> None:
    """'Each member gets its own assignment' removed: the leader's is handed to all."""
    leader = group.members.get(group.leader_id or "")
    for mem in list(group.members.values()):
        given = leader.assignment if leader is not None else mem.assignment
        rebalance.complete_sync_future(
            txn,
            group,
            mem,
            SyncGroupResponse(
                error=error,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                assignment=given,
            ),
        )


def _emit_without_empty_generation(self: Txn, record: r.Record) -> None:
    """The generation bump on the way to Empty removed."""
    if isinstance(record, r.GenerationStarted) and record.protocol_name is None:
        return
    replay.apply_record(self.state, record)
    self.out.records.append(record)


def _apply_skip_completing_rebalance(mp: pytest.MonkeyPatch) -> None:
    # The replay's own table check is switched off too, so the monitor must catch it.
    mp.setattr(replay, "is_valid_transition", lambda a, b: True)
    mp.setattr(rebalance, "transition", _skip_completing_rebalance)


def _commit_without_completing_rebalance_check(group: Group, req: OffsetCommitRequest) -> Error:
    """REBALANCE_IN_PROGRESS between JoinGroup and SyncGroup removed: the new generation
    may commit before it has its assignment."""
    error = ORIGINAL_VALIDATE_OFFSET_COMMIT(group, req)
    if error is Error.REBALANCE_IN_PROGRESS and group.state is GroupState.CompletingRebalance:
        return Error.NONE
    return error


ORIGINAL_VALIDATE_OFFSET_COMMIT = offsets.validate_offset_commit
ORIGINAL_APPLY_RECORD = replay.apply_record


def _patch_replay(mp: pytest.MonkeyPatch, apply: Callable[[CoordinatorState, r.Record], None]) -> None:
    """A bug in the record semantics: the coordinator (Txn.emit), a failover's reload and
    the invariant monitor all replay through the one function, so all get the bug."""
    for module in (replay, context, invariants):
        mp.setattr(module, "apply_record", apply)


def _apply_keeping_static_mapping(state: CoordinatorState, rec: r.Record) -> None:
    """MemberRemoved no longer drops the instance's mapping (the spec's
    mutant-static-mapping-kept)."""
    kept: tuple[str, str] | None = None
    if isinstance(rec, r.MemberRemoved):
        g = state.groups.get(rec.group_id)
        mem = g.members.get(rec.member_id) if g is not None else None
        if mem is not None and mem.group_instance_id is not None:
            kept = (mem.group_instance_id, mem.member_id)
    ORIGINAL_APPLY_RECORD(state, rec)
    if kept is not None:
        state.groups[rec.group_id].static_members[kept[0]] = kept[1]


def _apply_keeping_pending_id(state: CoordinatorState, rec: r.Record) -> None:
    """MemberAdded no longer drops the KIP-394 pending id it turns into a member (the
    spec's mutant-pending-kept)."""
    g = state.groups.get(rec.group_id)
    pending = (g.pending_members.get(rec.info.member_id)
               if g is not None and isinstance(rec, r.MemberAdded) else None)
    ORIGINAL_APPLY_RECORD(state, rec)
    if pending is not None and isinstance(rec, r.MemberAdded):
        state.groups[rec.group_id].pending_members[rec.info.member_id] = pending


def _parked_syncs_not_failed(txn: Txn, group: Group, error: Error) -> None:
    """A rebalance starting in CompletingRebalance no longer fails the parked SyncGroups
    (the spec's mutant-parked-sync-dropped): they stay parked into PreparingRebalance."""
    txn.emit(r.AssignmentsSet(group.group_id, group.generation_id, ()))


MUTANTS: dict[str, tuple[str, Callable[[pytest.MonkeyPatch], None]]] = {
    "stale-commit-accepted": (
        "NoStaleCommitInv",
        lambda mp: mp.setattr(offsets, "validate_offset_commit", _commit_without_generation_check),
    ),
    "leader-not-reelected": (
        "LeaderIsMemberInv",
        lambda mp: mp.setattr(rebalance, "remove_member", _remove_without_leader_handover),
    ),
    "completing-rebalance-skipped": ("ValidTransitionInv", _apply_skip_completing_rebalance),
    "assignment-of-leader-to-all": (
        "OneOwnerPerGenerationInv",
        lambda mp: mp.setattr(
            rebalance, "propagate_assignment", _everyone_gets_the_leaders_assignment
        ),
    ),
    "no-generation-on-empty": (
        "GenerationMonotonicInv",
        lambda mp: mp.setattr(Txn, "emit", _emit_without_empty_generation),
    ),
    "commit-in-completing-rebalance": (
        "NoStaleCommitInv",
        lambda mp: mp.setattr(
            offsets, "validate_offset_commit", _commit_without_completing_rebalance_check
        ),
    ),
    "static-mapping-kept": (
        "StaticMembersInv",
        lambda mp: _patch_replay(mp, _apply_keeping_static_mapping),
    ),
    "pending-kept": ("PendingMembersInv", lambda mp: _patch_replay(mp, _apply_keeping_pending_id)),
    "parked-sync-kept": (
        "ParkedRequestsInv",
        lambda mp: mp.setattr(
            rebalance, "reset_and_propagate_assignment_with_error", _parked_syncs_not_failed
        ),
    ),
}


@pytest.fixture
def patch() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_machine_catches_mutant(mutant: str, patch: pytest.MonkeyPatch) -> None:
    expected, apply = MUTANTS[mutant]
    apply(patch)
    with pytest.raises(InvariantViolated) as caught:
        run_state_machine_as_test(CoordinatorMachine, settings=HUNT)
    assert caught.value.invariant == expected, str(caught.value)


def test_machine_hunt_finds_nothing_on_the_reference() -> None:
    """The mutant-hunting budget on the unmutated coordinator: no invariant fails. (This
    is what catches a rule removed from the reference itself, e.g. an OffsetCommit
    accepted in CompletingRebalance, bench/mutants.toml.)"""
    run_state_machine_as_test(CoordinatorMachine, settings=HUNT)

"""The coordinator state machine, and proof that each invariant can fail.

Each mutant removes one protocol rule from the coordinator (monkeypatched for the test
only); the machine must then find a counterexample that names exactly the invariant that
rule protects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

import groupspec.coordinator.offsets as offsets
import groupspec.coordinator.rebalance as rebalance
import groupspec.coordinator.replay as replay
from groupspec.coordinator.context import Txn
from groupspec.coordinator.membership import validate_member
from groupspec.coordinator.state import Group
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import OffsetCommitRequest, SyncGroupResponse
from properties.coordinator_machine import CoordinatorMachine, InvariantViolated

TestCoordinatorMachine = CoordinatorMachine.TestCase

HUNT = settings(
    max_examples=400,
    stateful_step_count=30,
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
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


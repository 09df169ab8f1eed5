"""The KIP-848 consumer group state machine, and proof that its invariants can fail.

Each mutant removes one rule from the consumer group's coordinator (monkeypatched for the
test only); the machine must then find a counterexample naming the invariant that rule
protects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import groupspec.coordinator.consumer.heartbeat as heartbeat
import groupspec.coordinator.consumer.reconciliation as reconciliation
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from properties.consumer_group_machine import ConsumerGroupMachine, InvariantViolated

TestConsumerGroupMachine = ConsumerGroupMachine.TestCase

HUNT = settings(
    settings.get_profile("default"),
    max_examples=300,
    stateful_step_count=30,
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _assign_before_release(original: Callable[..., ConsumerMember]) -> Callable[..., ConsumerMember]:
    """Reconciliation without the unreleased-partition rule: a partition goes to its new
    owner while the old one still holds it."""
    def reconcile(member: ConsumerMember, target_epoch: int, target: Assignment,
                  partition_epoch: Callable[..., int],
                  owned: Sequence[HeartbeatTopicPartitions] | None) -> ConsumerMember:
        return original(member, target_epoch, target, lambda t, p: -1, owned)
    return reconcile


def _no_revocation_wait(original: Callable[..., bool]) -> Callable[..., bool]:
    """A member is taken to have revoked as soon as it is asked to."""
    def owns_any(owned: object, revoking: object) -> bool:
        return False
    return owns_any


def _accept_any_epoch(original: Callable[..., None]) -> Callable[..., None]:
    def check(*args: object) -> None:
        return None
    return check


@pytest.mark.parametrize(
    ("target", "attribute", "mutate", "invariants"),
    [
        (heartbeat, "reconcile", _assign_before_release, {"NoPartitionTwiceInv"}),
        (reconciliation, "_owns_any", _no_revocation_wait, {"ClientOwnsRecordedInv"}),
        (heartbeat, "_check_epoch", _accept_any_epoch, {"StaleEpochFencedInv"}),
    ],
    ids=["assign-before-release", "no-revocation-wait", "accept-any-epoch"],
)
def test_each_rule_is_guarded_by_its_invariant(
    monkeypatch: pytest.MonkeyPatch, target: object, attribute: str,
    mutate: Callable[[Callable[..., object]], Callable[..., object]], invariants: set[str],
) -> None:
    monkeypatch.setattr(target, attribute, mutate(getattr(target, attribute)))
    with pytest.raises(InvariantViolated) as caught:
        run_state_machine_as_test(ConsumerGroupMachine, settings=HUNT)
    assert caught.value.invariant in invariants

"""The simulator with KIP-848 members (``--group-protocol consumer``): the bundled scenarios
keep every invariant and converge, their traces are conforming, and a coordinator that
takes partitions as revoked the moment it asks for them (so hands them over while their
owner still holds them) is caught: NoConcurrentOwnersInv in the simulator, a
ConsumerReconciliation divergence in the validator."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from groupspec.cli.simulate import bundled_scenarios
from groupspec.client.consumer.consumer import ConsumerProtocolConsumer
from groupspec.coordinator.consumer import reconciliation
from groupspec.coordinator.consumer.member import Assignment
from groupspec.protocol.consumer_group_messages import HeartbeatTopicPartitions
from groupspec.sim.render import write_trace
from groupspec.sim.runner import Simulation, simulate
from groupspec.sim.scenario import apply_overrides, parse_scenario
from groupspec.validate import CONFORMING, validate_bytes

BUNDLED = bundled_scenarios()


def _scenario(name: str, **overrides: object) -> object:
    data = apply_overrides(json.loads(BUNDLED[name]), group_protocol="consumer", **overrides)  # type: ignore[arg-type]
    return parse_scenario(data, name)


def _trace(result: object) -> bytes:
    import io

    buf = io.StringIO()
    write_trace(result, buf)  # type: ignore[arg-type]
    return buf.getvalue().encode()


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_scenarios_hold_with_kip848_members(name: str) -> None:
    sc = _scenario(name)
    result = simulate(sc)  # type: ignore[arg-type]
    failed = [v for v in result.verdicts if not v.ok and v.name != "LivenessProp"]
    assert not failed, failed
    assert all(isinstance(m.consumer, ConsumerProtocolConsumer) or m.consumer is None
               for m in Simulation(sc).members.values())  # type: ignore[arg-type]
    report = validate_bytes(_trace(result), name)
    assert all(g.verdict == CONFORMING for g in report.groups), [
        (g.group_id, g.verdict, g.divergence) for g in report.groups]


def test_the_default_scenario_converges_and_counts_epochs() -> None:
    result = simulate(_scenario("default"))  # type: ignore[arg-type]
    assert result.ok, [v for v in result.verdicts if not v.ok]
    assert result.metrics["final_generation"] >= 2  # a group epoch, bumped by each change
    assert result.rebalances and all(rb.ended_ms is not None for rb in result.rebalances[:-1])


def _revoked_at_once(owned: Sequence[HeartbeatTopicPartitions] | None, revoking: Assignment) -> bool:
    """A coordinator that takes partitions to be revoked as soon as it asks for them."""
    return False


def test_a_slow_revocation_keeps_the_partition_from_its_next_owner() -> None:
    sc = _scenario("default", faults=[{"at_ms": 109_500, "kind": "slow_poll", "member": "c3",
                                      "duration_ms": 8_000}])
    result = simulate(sc)  # type: ignore[arg-type]
    assert result.ok, [v for v in result.verdicts if not v.ok]


def test_a_coordinator_that_hands_over_before_release_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # c3 is slow to run its revocation callback when c5 joins: it still holds what it must give up
    sc = _scenario("default", faults=[{"at_ms": 109_500, "kind": "slow_poll", "member": "c3",
                                      "duration_ms": 8_000}])
    monkeypatch.setattr(reconciliation, "_owns_any", _revoked_at_once)
    result = simulate(sc)  # type: ignore[arg-type]
    owners = next(v for v in result.verdicts if v.name == "NoConcurrentOwnersInv")
    assert not owners.ok, owners
    monkeypatch.undo()
    report = validate_bytes(_trace(result), "mutant")
    [g] = report.groups
    assert g.violation is not None and g.violation.rule == "ConsumerReconciliation"

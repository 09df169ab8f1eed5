"""The TLA+ spec's models, checked by TLC as spec/models.json says they must turn out:
the CI models pass with the distinct-state counts the manifest records, and every mutant
of the spec is caught by the invariant or property it names (so each invariant is shown
able to fail). Nightly models are left to the nightly run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from groupspec.modelcheck.check import check_model, judge
from groupspec.modelcheck.models import load_manifest

MODELS = load_manifest()
CI_MODELS = [m for m in MODELS.values() if not m.nightly]

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_manifest_lists_a_small_and_a_ci_model_and_a_mutant_per_invariant() -> None:
    assert {"small", "ci", "live", "storm", "offsets", "nightly", "nightly-simulate"} <= set(MODELS)
    assert "-simulate" in MODELS["nightly-simulate"].tlc_args
    assert MODELS["nightly"].nightly
    caught = {m.violates for m in MODELS.values() if m.is_mutant}
    invariants = {
        "LeaderIsMemberInv",
        "StaticMembersInv",
        "PendingMembersInv",
        "ParkedRequestsInv",
        "ValidTransitionInv",
        "OneOwnerPerGenerationInv",
        "NoConcurrentOwnersInv",
        "NoConcurrentCommittersInv",
        "GenerationMonotonicProp",
        "NoStaleCommitProp",
        "ConvergenceProp",
        "SyncAnsweredProp",
        "BalancedAssignmentProp",
        "StickyAssignmentProp",
        "StormBoundInv",
        "AtLeastOnceInv",
        "CommittedMonotonicProp",
        "ReconsumedOnlyUncommittedProp",
    }
    assert invariants <= caught, f"no mutant for {sorted(invariants - caught)}"
    for m in MODELS.values():
        if m.expect == "pass" and not m.nightly:
            assert m.distinct_states is not None, f"{m.name}: no recorded state count"


@pytest.mark.parametrize("name", [m.name for m in CI_MODELS])
def test_model_turns_out_as_the_manifest_says(name: str) -> None:
    model = MODELS[name]
    result = check_model(model)
    outcome = judge(model, result)
    assert outcome.ok, f"{name}: {outcome.reason}\n{result.errors[:5]}"
    if model.is_mutant:
        assert result.violation is not None and len(result.violation.trace) >= 2
        assert result.violation.trace[0].action == "Init"


def test_simulation_profile_runs_tlc_in_simulation_mode() -> None:
    """The nightly simulation profile, cut to two short behaviours: its TLC options reach
    the command line and the random behaviours keep every invariant."""
    model = replace(
        MODELS["nightly-simulate"], tlc_args=("-simulate", "num=2", "-depth", "60", "-seed", "1")
    )
    result = check_model(model, workers=1)
    assert "-simulate" in result.command and "-seed" in result.command
    assert judge(model, result).ok, f"{result.explanation}\n{result.errors[:5]}"
    assert (result.generated or 0) > 2

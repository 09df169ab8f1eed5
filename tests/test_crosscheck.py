"""The spec and the reference coordinator, checked against each other both ways.

Spec to reference: the cross-check model's whole state graph (TLC) is replayed on the
reference, and every coordinator step must agree both ways, with every coordinator action
covered. Reference to spec: 60 simulator traces, and the runs of 12 fault schedules drawn
by Hypothesis (properties/group_faults.py), are checked by TLC against
spec/TraceConsumerGroup.tla (200 and 24 under the nightly profile: ci/nightly). And each seeded mutant of the reference is caught by at least
one direction. Needs Java and TLC (ci/setup installs them); never skipped.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from groupspec.crosscheck.exhaustive import COORDINATOR_ACTIONS, Exhaustive
from groupspec.crosscheck.graph import StateGraph, export
from groupspec.crosscheck.mutants import MUTANTS
from groupspec.crosscheck.run import MODELS, Report, crosscheck, divergence_report, model_bounds
from groupspec.crosscheck.traces import (
    RecordedTrace,
    check,
    generated_scenario,
    record,
    record_scenario,
)
from groupspec.crosscheck.vocabulary import Rec, from_tlc, rec, to_tla
from groupspec.modelcheck.values import parse_value
from groupspec.sim.scenario import Fault
from properties import by_profile
from properties.group_faults import faults, scenario_with

SEED = 1
#: simulator traces checked by TLC (reference -> spec): CI's size and the nightly profile's
TRACES = by_profile(60, 200)
#: Hypothesis fault schedules recorded at the coordinator (besides the two pinned ones)
FAULT_SCHEDULES = by_profile(12, 24)


@pytest.fixture(scope="module")
def graph() -> StateGraph:
    return export(MODELS["small"])


@pytest.fixture(scope="module")
def small_report(graph: StateGraph) -> Report:
    return crosscheck("small", traces=TRACES, seed=SEED, graph=graph, progress=lambda _: None)


def test_spec_values_render_and_parse_back() -> None:
    g = rec(members=frozenset({"m1"}), leader_id="m1", generation_id=3, sync_timer=True,
            state="Stable")
    assert from_tlc(parse_value(to_tla(g))) == g


def test_every_spec_state_has_a_reference_counterpart_and_they_agree(small_report: Report) -> None:
    cov = small_report.coverage
    assert cov is not None
    assert cov.states > 10_000 and cov.edges > cov.states
    assert cov.concretization_errors == []
    assert cov.mismatches == [], small_report.render()


def test_every_coordinator_action_is_covered(small_report: Report) -> None:
    cov = small_report.coverage
    assert cov is not None
    for action in COORDINATOR_ACTIONS:
        assert cov.edges_by_action[action] > 0, action
        assert cov.matched_by_action[action] > 0, action
    assert small_report.uncovered == []


def test_reference_traces_are_behaviours_of_the_spec(small_report: Report) -> None:
    assert len(small_report.traces) == TRACES
    diverged = [v for v in small_report.traces if not v.ok]
    assert diverged == [], small_report.render()
    actions = {s.action for v in small_report.traces for s in v.trace.steps}
    # simulated consumers always use a pending id at once: ExpirePendingMember and DeleteGroup
    # occur only in the exhaustive direction
    assert actions >= set(COORDINATOR_ACTIONS) - {"DeleteGroup", "ExpirePendingMember", "ExpireSync"}
    kinds = {v.trace.description.split(": ")[1].split(" ")[0] for v in small_report.traces}
    assert kinds == {"eager", "cooperative", "static"}


def test_the_report_names_each_part(small_report: Report) -> None:
    text = small_report.render()
    assert "spec -> reference" in text and "reference -> spec" in text
    for action in COORDINATOR_ACTIONS:
        assert action in text
    assert text.rstrip().endswith("cross-check: OK")


@pytest.mark.parametrize("name, action", [("stale-commit-accepted", "OffsetCommit"),
                                          ("follower-sync-answered-early", "SyncGroup")])
def test_coordinator_mutants_are_caught_spec_to_reference(graph: StateGraph, name: str,
                                                          action: str) -> None:
    with MUTANTS[name].patch():
        cov = Exhaustive(model_bounds(MODELS["small"])).check(graph, stop_after=1)
    assert cov.mismatches and cov.mismatches[0].action == action


def _traces_under(name: str, want: str, n: int) -> list[RecordedTrace]:
    """Traces whose scenario exercises what the mutant breaks, recorded with it active."""
    raws = [generated_scenario(k, SEED) for k in range(400)]
    chosen = [r for r in raws if want in str(r["description"])][:n]
    assert len(chosen) == n
    with MUTANTS[name].patch():
        return [record(r) for r in chosen]


def test_static_rejoin_mutant_is_caught_reference_to_spec() -> None:
    traces = _traces_under("static-rejoin-rebalances", "static-restart", 6)
    verdicts = check(traces, explain_first=1)
    diverged = [v for v in verdicts if not v.ok]
    assert diverged
    d = diverged[0].divergence
    assert d is not None and d.action == "JoinGroup"
    assert "not one the spec's coordinator allows" in d.reason
    assert d.reference_after["state"] == "PreparingRebalance"
    assert all(g["state"] == "Stable" for g, _ in d.spec_allows)


def test_cooperative_handover_mutant_is_caught_reference_to_spec() -> None:
    traces = _traces_under("cooperative-handover-before-revoke", "cooperative-sticky, faults", 8)
    verdicts = check(traces, explain_first=1)
    diverged = [v for v in verdicts if not v.ok]
    assert diverged
    d = diverged[0].divergence
    assert d is not None and d.action == "SyncGroup"
    assert "AssignmentContractOK" in d.reason


def test_a_tampered_trace_diverges_at_the_tampered_step() -> None:
    trace = record(generated_scenario(0, SEED))
    k = next(i for i, s in enumerate(trace.steps) if s.action == "Heartbeat" and s.out)
    step = trace.steps[k]
    (resp,) = step.out
    assert isinstance(resp, Rec)
    wrong = resp.replace(error="REBALANCE_IN_PROGRESS" if resp["error"] == "NONE" else "NONE")
    trace.steps[k] = dataclasses.replace(step, out=frozenset({wrong}))
    (v,) = check([trace])
    assert v.matched == k and v.divergence is not None and v.divergence.step == k + 1
    assert v.divergence.action == "Heartbeat"
    assert [o for _, o in v.divergence.spec_allows] == [step.out]


@pytest.fixture()
def cli() -> Iterator[list[str]]:
    yield [sys.executable, "-m", "groupspec", "crosscheck"]


def test_cli_rejects_an_unknown_model(cli: list[str]) -> None:
    proc = subprocess.run([*cli, "--model", "huge"], capture_output=True, text=True)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_cli_traces_only(cli: list[str]) -> None:
    proc = subprocess.run([*cli, "--no-exhaustive", "--traces", "4"], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reference -> spec: 4 simulator traces" in proc.stdout
    assert "4 behaviours of the spec, 0 diverged" in proc.stdout
    assert "recorded 4/4 traces" in proc.stderr


# --------------------------------------------------------- traces from the Hypothesis machine
#: The group-fault property's faults the spec models (coordinator failover it does not).
SPEC_FAULTS = faults().filter(lambda f: f.kind != "failover")


def _hypothesis_traces(mutant: str | None = None) -> list[RecordedTrace]:
    """The runs of properties/group_faults.py, recorded at the coordinator: Hypothesis
    draws the fault schedules (crashes, pauses, slow polls, static restarts, closes,
    joins, network delay and loss); derandomized, so every run draws the same ones. The
    draws follow the test's source, so two pinned schedules (one eager, one cooperative)
    make sure a crash, a pause and a static restart are always among them."""
    recorded: list[RecordedTrace] = []
    pinned = [Fault(20_000, "crash", member="c2"),
              Fault(40_000, "pause", member="c1", duration_ms=5_000),
              Fault(60_000, "static_restart", member="s1", downtime_ms=4_000)]

    @settings(max_examples=FAULT_SCHEDULES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @example(fs=pinned, eager=True, seed=1)
    @example(fs=pinned, eager=False, seed=2)
    @given(fs=st.lists(SPEC_FAULTS, max_size=3), eager=st.booleans(), seed=st.integers(0, 999))
    def collect(fs: list[Fault], eager: bool, seed: int) -> None:
        sc = scenario_with(fs, eager, seed)
        schedule = ", ".join(f"{f.kind}@{f.at_ms}" for f in sc.faults) or "no faults"
        recorded.append(record_scenario(
            sc, f"hyp-{len(recorded):02d}", f"hypothesis: {'eager' if eager else 'cooperative'}"
            f" seed {seed}, {schedule}"))

    if mutant is None:
        collect()
    else:
        with MUTANTS[mutant].patch():
            collect()
    return recorded


def test_hypothesis_fault_schedules_are_behaviours_of_the_spec() -> None:
    recorded = _hypothesis_traces()
    assert len(recorded) >= FAULT_SCHEDULES - 4
    assert {tr.protocol for tr in recorded} == {"eager", "cooperative"}
    kinds = {f.split("@")[0] for tr in recorded for f in tr.description.split(", ")[1:]}
    assert {"crash", "pause", "static_restart"} <= kinds, kinds
    verdicts = check(recorded, explain_first=1)
    diverged = [v for v in verdicts if not v.ok]
    assert diverged == [], "\n".join(divergence_report(v) for v in diverged[:1])


def test_hypothesis_traces_catch_the_static_rejoin_mutant() -> None:
    recorded = [tr for tr in _hypothesis_traces("static-rejoin-rebalances")
                if "static_restart" in tr.description]
    assert recorded
    verdicts = check(recorded, explain_first=1)
    diverged = [v for v in verdicts if not v.ok]
    assert diverged
    d = diverged[0].divergence
    assert d is not None and d.action == "JoinGroup"

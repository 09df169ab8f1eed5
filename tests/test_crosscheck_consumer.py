"""The KIP-848 spec (spec/ConsumerProtocol.tla) and the reference consumer-group
coordinator, checked against each other both ways.

Spec to reference: the whole state graph of spec/MCcross-consumer-small.cfg (TLC) is
replayed on the reference; every coordinator step must agree, the reference's target must
be one of the spec's valid balanced successors, and every coordinator action must be
covered. Reference to spec: simulator runs of KIP-848 consumers are checked by TLC against
spec/TraceConsumerProtocol.tla. Seeded mutants of the reference are caught by each
direction. Needs Java and TLC (ci/setup installs them); never skipped. About two minutes
on two cores.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from groupspec.crosscheck.consumer.exhaustive import COORDINATOR_ACTIONS
from groupspec.crosscheck.consumer.mutants import MUTANTS
from groupspec.crosscheck.consumer.run import (
    MODELS,
    MODULE,
    Report,
    crosscheck,
    model_bounds,
    run_mutant,
)
from groupspec.crosscheck.consumer.traces import generated_scenario, record
from groupspec.crosscheck.consumer.vocabulary import Names, abstract_group, concrete_group
from groupspec.crosscheck.graph import StateGraph, export

SEED = 1
TRACES = 12


@pytest.fixture(scope="module")
def graph() -> StateGraph:
    return export(MODELS["small"], module=MODULE)


@pytest.fixture(scope="module")
def report(graph: StateGraph) -> Report:
    return crosscheck("small", traces=TRACES, seed=SEED, graph=graph, progress=lambda _: None)


def test_the_exhaustive_direction_agrees_and_covers_every_coordinator_action(report: Report) -> None:
    cov = report.coverage
    assert cov is not None
    assert cov.states > 50_000 and cov.edges > cov.states
    assert not cov.concretization_errors
    assert not cov.mismatches, report.render()
    assert report.uncovered == []
    for action in COORDINATOR_ACTIONS:
        assert cov.matched_by_action[action] > 0, action
    # the paths that matter were exercised: joins with a new target, revocation and
    # release, both commit errors, the unknown member, a leave, both timers fencing
    paths = {p for (_, p) in cov.paths}
    for path in ("join, new target, UNRELEASED_PARTITIONS", "member, new target, "
                 "UNREVOKED_PARTITIONS", "error STALE_MEMBER_EPOCH", "error UNKNOWN_MEMBER_ID",
                 "member fenced", "commit stored"):
        assert path in paths, path
    # the spec's target choice is wider than the reference's assignor: some spec edges
    # chose another valid target, and every one of those steps had the reference's too
    assert cov.alternatives_by_action["HandleHeartbeat"] > 0
    # the bounds were met: steps past them are counted, not compared
    assert any("group epoch bound" in r for r in cov.bounded)


def test_simulator_traces_are_behaviours_of_the_spec(report: Report) -> None:
    assert len(report.traces) == TRACES
    bad = [v for v in report.traces if not v.ok]
    assert not bad, report.render()
    actions = {s.action for v in report.traces for s in v.trace.steps}
    assert {"HandleHeartbeat", "HandleCommit", "HandleLeave"} <= actions
    assert "cross-check (KIP-848): OK" in report.render()


def test_the_abstraction_round_trips_on_a_recorded_state() -> None:
    trace = record(generated_scenario(0, SEED))
    names = trace.names
    for step in trace.steps[:200]:
        g = concrete_group(step.group, names)
        assert abstract_group(g, names) == step.group


def test_a_coordinator_mutant_is_caught_by_the_exhaustive_direction(graph: StateGraph) -> None:
    bounds = model_bounds(MODELS["small"])
    result = run_mutant(MUTANTS["consumer-stale-commit-accepted"], bounds, graph, traces=0,
                        seed=SEED, progress=lambda _: None)
    assert result.exhaustive_mismatches, "the exhaustive direction missed the stale commit"


def test_a_commit_mutant_is_caught_by_the_trace_direction() -> None:
    # 20 generated traces (seed 1; some on a slow network) include a commit at a member epoch the coordinator has
    # moved past; the mutant stores it, the spec answers STALE_MEMBER_EPOCH
    bounds = model_bounds(MODELS["small"])
    result = run_mutant(MUTANTS["consumer-stale-commit-accepted"], bounds, None, traces=20,
                        seed=SEED, progress=lambda _: None)
    assert result.trace_divergences, "the trace direction missed the stale commit"


def test_the_mutants_are_restored() -> None:
    for mut in MUTANTS.values():
        with mut.patch():
            pass
    trace = record(generated_scenario(1, SEED))
    assert trace.steps


def test_cli_rejects_a_classic_only_model() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "groupspec", "crosscheck", "--group-protocol", "consumer",
         "--model", "ci", "--traces", "0"],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "--model" in proc.stderr


def test_names_cover_multi_partition_topics() -> None:
    names = Names(("m1",), ("c1",), {"orders": 3, "p1": 1})
    assert names.partitions() == ("orders-0", "orders-1", "orders-2", "p1")
    assert names.of_topics(["orders"]) == frozenset({"orders-0", "orders-1", "orders-2"})
    assert names.abstract(names.concrete({"orders-1", "p1"})) == frozenset({"orders-1", "p1"})

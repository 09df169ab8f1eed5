"""The oracle's mutation campaign, CI profile (bench/oracle_eval.py --quick): a broker answer
bug, a broker timer/state patch and two client bugs are each caught on a couple of seeds,
the unmutated runs give no violation, and mutants leave the reference unmutated after
their run. The full campaign (every mutant, 200 baseline seeds) is `python -m bench.oracle_eval`
(nightly: ci/nightly)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import oracle_eval
from bench.mutants import all_mutants
from groupspec.coordinator import coordinator
from groupspec.coordinator.classic import group
from groupspec.validate import validate_bytes


def test_mutants_are_named_documented_and_many() -> None:
    mutants = all_mutants()
    names = [m.name for m in mutants]
    assert len(names) == len(set(names)) >= 30
    assert {m.side for m in mutants} == {"broker", "client"}
    assert all(m.description and m.expected for m in mutants)


def test_quick_campaign_catches_each_kind_and_is_quiet_unmutated() -> None:
    known = {m.name: m for m in all_mutants()}
    chosen = [known[n] for n in oracle_eval.QUICK_MUTANTS]
    originals = (group.Group.has_all_members_joined, vars(coordinator)["fire"])
    res = oracle_eval.campaign(chosen, runs=2, seeds=3)
    assert (group.Group.has_all_members_joined, vars(coordinator)["fire"]) == originals  # patches undone
    rows = {r["mutant"]: r for r in res["mutants"]}
    for name in oracle_eval.QUICK_MUTANTS:
        assert rows[name]["exercised"] > 0, name
        assert rows[name]["caught"], (name, rows[name])
    assert rows["heartbeats-after-fencing"]["sides"] == {"client": rows["heartbeats-after-fencing"]["violation"]}
    assert res["baseline"]["violations"] == []
    assert res["baseline"]["seeds"] == 3


def test_the_table_renders_every_mutant() -> None:
    row = {"mutant": "x", "side": "broker", "expected": "R", "description": "d", "runs": 2, "exercised": 1,
           "violation": 1, "inconclusive": 0, "conforming": 1, "error": 0, "rules": {"R": 1},
           "sides": {"broker": 1}, "caught": True, "errors": []}
    res = {"started": "s", "finished": "f", "mutants": [row], "caught": 1, "total": 1,
           "baseline": {"seeds": 2, "verdicts": {"conforming": 2}, "violations": [], "inconclusive": []}}
    text = oracle_eval.markdown(res, "python -m bench.oracle_eval")
    assert "| `x` | broker | R | 2 | 1 | 1 / 0 / 1 | R x1 (broker) | yes |" in text
    assert "caught: 1 of 1 mutants (100%)" in text


def test_the_mutants_only_the_campaigns_own_patterns_reach_are_caught() -> None:
    """A rebalance timeout that never fires, a departed static leader kept, a SyncGroup in
    PreparingRebalance answered UNKNOWN_MEMBER_ID: no group_scenario fault reaches these
    bugs (a crashed member's session ends its join phase first; a SyncGroup follows its
    JoinGroup within milliseconds), the patterns crash-then-join and late-sync do; nor do
    they reach seven bugs Kafka had (KAFKA-12890, KAFKA-8220, KAFKA-10284 after a static
    restart and a failover, KAFKA-13435 after the static leader's restart, KAFKA-8500 and
    KAFKA-9801 after a static restart during a rebalance, KAFKA-12983 after a pause that
    outlasts the join phase). Each is exercised and named on a seed of its own pattern, and
    the same seeds unmutated conform."""
    known = {m.name: m for m in all_mutants()}
    cases = (("rebalance-timeout-ignored", 1000, {"HeartbeatUnknownMember", "JoinCompletion",
                                                  "JoinWaitsForAllMembers"}),
             ("rebalance-timeout-ignored", 1002, {"HeartbeatUnknownMember", "JoinCompletion",
                                                  "JoinWaitsForAllMembers"}),
             ("departed-leader-stays-leader", 1000, {"JoinCompletion"}),
             ("sync-rebalance-as-unknown", 1074, {"SyncDuringPreparingRebalance"}),
             # Kafka's own historical bugs, each on its pattern
             ("kafka-12890-sync-timeout-ignored", 1000, {"HeartbeatSignalsRebalance"}),
             ("kafka-8220-static-removed-at-join-end", 1000, {"JoinCompletion"}),
             ("kafka-10284-static-replacement-not-persisted", 1000, {"CommitAccepted", "HeartbeatAnswer"}),
             ("kafka-13435-replaced-leader-told-follower", 1000, {"JoinCompletion"}),
             # the restarted instance handed the member id still in use by the one it replaced
             ("kafka-8500-static-rejoin-keeps-old-id", 1000, {"MemberIdFresh"}),
             # no rebalance: the SyncGroups waiting for the leader are answered, not failed
             ("kafka-9801-static-rejoin-in-sync-no-rebalance", 1002, {"SyncDuringPreparingRebalance"}),
             # the partitions lost with the member id are still reported owned (at no
             # generation) and fetched
             ("kafka-12983-rejoin-skips-join-prepare", 1001, {"CooperativeOwnedIsAssigned",
                                                               "ClientFetchesOwnedOnly"}))
    for name, seed, rules in cases:
        mutant = known[name]
        assert mutant.patterns, name
        run = oracle_eval.run_one(mutant, seed, 0)
        assert run.hits > 0, (name, seed, run)
        assert run.verdict == "violation" and run.rule in rules, (name, seed, run)
        data = oracle_eval.scenario_data(seed, mutant.protocols, mutant.patterns[0])
        base = validate_bytes(*_unmutated_trace(data, seed))
        assert base.worst() == "conforming", (name, seed, [g.divergence for g in base.groups])


def _unmutated_trace(data: dict[str, object], seed: int) -> tuple[bytes, str]:
    from groupspec.sim.render import broker_config
    from groupspec.sim.runner import Simulation
    from groupspec.sim.scenario import parse_scenario

    sc = parse_scenario(data, f"seed-{seed}")
    result = Simulation(sc).run()
    return oracle_eval.wire_trace(result.trace, broker_config(sc.coordinator)), f"seed-{seed}"


def test_kafka_13406_a_leader_that_never_syncs_is_named() -> None:
    """KAFKA-13406's leader (its assignment fails its own check, it rejoins with no
    SyncGroup) on a plain seed: the client rule LeaderSyncsItsGeneration names it."""
    mutant = {m.name: m for m in all_mutants()}["kafka-13406-leader-rejoins-without-sync"]
    run = oracle_eval.run_one(mutant, 3, 0)
    assert run.hits > 0 and run.verdict == "violation" and run.rule == "LeaderSyncsItsGeneration", run

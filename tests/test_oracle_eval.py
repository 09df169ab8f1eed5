"""The oracle's mutation campaign, CI profile (bench/oracle_eval.py --quick): a broker answer
bug, a broker timer/state patch and two client bugs are each caught on a couple of seeds,
the unmutated runs give no violation, and mutants leave the reference unmutated after
their run. The full campaign (37 mutants, 200 baseline seeds) is `python -m bench.oracle_eval`
(nightly: ci/nightly)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import oracle_eval
from bench.mutants import all_mutants
from groupspec.coordinator import coordinator
from groupspec.coordinator.classic import group


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

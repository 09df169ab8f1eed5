"""Per-run and per-rebalance metrics, in process: they agree with the simulator's own totals,
churn schedules are shared by every strategy, and the numbers move the way the protocols
say they should."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from groupspec.pipeline.config import RunSpec, parse_config
from groupspec.pipeline.metrics import NONDETERMINISTIC, RunRecord, run_one
from groupspec.pipeline.probe import probe
from groupspec.pipeline.scenarios import build_scenario

CONSUMER = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 2000, "max_poll_interval_ms": 20000,
            "poll_interval_ms": 500}
CHURN = {"rolling-restart": {"start_ms": 10_000, "interval_ms": 8000, "downtime_ms": 3000},
         "crash": {"start_ms": 10_000}, "crash-restart": {"start_ms": 10_000, "restart_after_ms": 9000},
         "scale-out": {"start_ms": 10_000}, "flapping": {"start_ms": 10_000, "times": 2, "period_ms": 15_000,
                                                         "pause_ms": 8000}}


def specs(**grid: Any) -> list[RunSpec]:
    g: dict[str, Any] = {"group_size": 3, "partitions": 6, "assignor": "cooperative-sticky"}
    g.update(grid)
    cfg = parse_config({"seeds": 1, "settle_ms": 15_000, "consumer": CONSUMER, "churn": CHURN, "grid": g}, "t")
    return cfg.runs()


def one(**grid: Any) -> RunRecord:
    (spec,) = specs(**grid)
    return run_one(spec)


@pytest.mark.parametrize("churn", sorted(CHURN))
@pytest.mark.parametrize("protocol", ["eager", "cooperative", "static-cooperative"])
def test_metrics_add_up_to_the_simulators_totals(churn: str, protocol: str) -> None:
    (spec,) = specs(churn=churn, protocol=protocol)
    built = build_scenario(spec)
    pr = probe(built.scenario)
    rec = run_one(spec)
    run = rec.run
    # The step record integrates to the runner's own partition_unowned_ms ...
    assert run["total_unavailable_partition_ms"] == pr.result.metrics["partition_unowned_ms"]
    # ... and the per-generation moves add up to its partitions_moved.
    assert sum(r["partitions_moved"] for r in rec.rebalances) == run["total_partitions_moved"]
    assert run["total_rebalances"] == len(pr.result.rebalances) == pr.result.metrics["rebalances"]
    churn_rbs = [r for r in rec.rebalances if r["phase"] == "churn"]
    assert all(r["started_ms"] >= built.churn_start_ms for r in churn_rbs)
    assert all(r["started_ms"] < built.churn_start_ms for r in rec.rebalances if r["phase"] == "formation")
    assert run["churn_stw_partition_ms"] == sum(r["unowned_partition_ms"] for r in churn_rbs)
    assert 0 <= run["churn_stw_partition_ms"] <= run["churn_unavailable_partition_ms"] <= run["total_unavailable_partition_ms"]
    windows = sorted((r["started_ms"], r["started_ms"] + r["duration_ms"]) for r in rec.rebalances)
    assert all(a[1] <= b[0] for a, b in pairwise(windows))  # no overlap
    assert run["verdicts_ok"], run["failed_verdicts"]
    assert rec.violations == ()


def test_same_run_same_rows() -> None:
    (spec,) = specs(churn="crash-restart", protocol="cooperative")
    a, b = run_one(spec), run_one(spec)
    strip = {k: v for k, v in a.run.items() if k not in NONDETERMINISTIC}
    assert strip == {k: v for k, v in b.run.items() if k not in NONDETERMINISTIC}
    assert a.rebalances == b.rebalances


def test_every_strategy_meets_the_same_churn() -> None:
    runs = specs(churn="rolling-restart", protocol=["eager", "cooperative", "static-eager"])
    faults = [build_scenario(s).scenario.faults for s in runs]
    assert faults[0] == faults[1] == faults[2]
    assert {f.kind for f in faults[0]} == {"close", "join"}
    other_seed = parse_config({"seeds": [2], "churn": CHURN, "consumer": CONSUMER,
                               "grid": {"churn": "rolling-restart", "protocol": "eager", "assignor": "range",
                                        "group_size": 3, "partitions": 6}}, "t").runs()[0]
    assert build_scenario(other_seed).scenario.faults != faults[0]


def test_static_membership_rides_out_a_rolling_restart_without_rebalancing() -> None:
    static = one(churn="rolling-restart", protocol="static-cooperative").run
    dynamic = one(churn="rolling-restart", protocol="cooperative").run
    assert static["churn_rebalances"] == 0 and static["churn_partitions_moved"] == 0
    assert dynamic["churn_rebalances"] >= 3 and dynamic["churn_partitions_moved"] > 0
    # A static member's partitions wait for it: 3 restarts x 2 partitions x 3 s down, at least.
    assert static["churn_unavailable_partition_ms"] >= 3 * 2 * 3000


def test_eager_revokes_everything_cooperative_only_what_moves() -> None:
    eager = one(churn="scale-out", protocol="eager")
    coop = one(churn="scale-out", protocol="cooperative")
    # Eager: in its rebalance every partition is revoked at once (unowned partition-time
    # spreads over all 6); cooperative moves fewer partitions over two rebalances.
    assert coop.run["churn_partitions_moved"] < eager.run["churn_partitions_moved"]
    assert coop.run["churn_rebalances"] == 2 * eager.run["churn_rebalances"]


def test_kip415_delay_holds_the_crashed_members_partitions() -> None:
    delay = 20_000
    base = one(churn="crash", protocol="cooperative").run
    held = one(churn="crash", protocol="cooperative", delay_ms=delay).run
    extra = held["churn_unavailable_partition_ms"] - base["churn_unavailable_partition_ms"]
    # The crashed member's 2 partitions (6 over 3 members) wait the whole delay, longer.
    assert 2 * delay <= extra <= 2 * delay + 2 * 6000
    assert held["churn_rebalances"] == base["churn_rebalances"] + 1  # the delayed follow-up
    assert held["verdicts_ok"]


def test_kip848_cells_run_consumer_protocol_members_assigned_by_the_broker() -> None:
    rec = one(churn="scale-out", protocol="consumer", assignor="uniform")
    assert rec.run["verdicts_ok"]
    # the scale-out moves partitions to the new members, counted from the epochs' assignments
    assert rec.run["churn_partitions_moved"] > 0
    static = one(churn="crash-restart", protocol="static-consumer", assignor="range").run
    assert static["verdicts_ok"]


def test_kip848_cells_need_a_server_side_assignor() -> None:
    cfg = parse_config({"seeds": 1, "grid": [{"churn": "crash", "protocol": ["consumer", "cooperative"],
                                               "assignor": ["uniform", "cooperative-sticky"],
                                               "group_size": 3, "partitions": 6}]}, "s")
    kept = {(c.protocol, c.assignor) for c in cfg.cells}
    assert kept == {("consumer", "uniform"), ("cooperative", "cooperative-sticky")}
    reasons = {(s.cell.protocol, s.cell.assignor): s.reason for s in cfg.skipped}
    assert "assigned by the broker" in reasons[("consumer", "cooperative-sticky")]
    assert "runs on the broker" in reasons[("cooperative", "uniform")]

"""A whole sweep: config -> runs on Spark -> Parquet tables -> report.

The output directory gets ``runs.parquet``, ``rebalances.parquet``, ``violations.parquet``
(one row per run, per rebalance, per violated invariant and run), the aggregated
``by_strategy.parquet``, ``rebalance_stats.parquet`` and ``violations_by_kind.parquet``,
``sweep.json`` (the resolved configuration, skipped cells, timings), ``plots/*.png`` and ``plots/*.svg``,
``report.md`` and ``report.html``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from groupspec.pipeline.config import SweepConfig
from groupspec.pipeline.metrics import (
    REBALANCE_COLUMNS,
    RUN_COLUMNS,
    VIOLATION_COLUMNS,
    RunRecord,
)
from groupspec.pipeline.report import write_report
from groupspec.pipeline.spark import (
    BY_STRATEGY_COLUMNS,
    REBALANCE_STATS_COLUMNS,
    VIOLATIONS_BY_KIND_COLUMNS,
    aggregate,
    run_on_spark,
)
from groupspec.pipeline.tables import write_table


@dataclass(frozen=True)
class SweepOutcome:
    out: Path
    records: list[RunRecord]
    summary: list[str]
    elapsed_s: float


def write_tables(out: Path, records: list[RunRecord], aggregates: dict[str, list[dict[str, object]]]) -> None:
    write_table(out / "runs.parquet", [r.run for r in records], RUN_COLUMNS)
    write_table(out / "rebalances.parquet", [x for r in records for x in r.rebalances], REBALANCE_COLUMNS)
    write_table(out / "violations.parquet", [x for r in records for x in r.violations], VIOLATION_COLUMNS)
    write_table(out / "by_strategy.parquet", aggregates["by_strategy"], BY_STRATEGY_COLUMNS)
    write_table(out / "rebalance_stats.parquet", aggregates["rebalance_stats"], REBALANCE_STATS_COLUMNS)
    write_table(out / "violations_by_kind.parquet", aggregates["violations_by_kind"], VIOLATIONS_BY_KIND_COLUMNS)


def run_sweep(
    config: SweepConfig,
    out: Path,
    spark: SparkSession,
    log: Callable[[str], None] = print,
    progress: Callable[[int, int], None] | None = None,
) -> SweepOutcome:
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for line in config.skip_lines():
        log(line)
    specs = config.runs()
    log(f"sweep {config.name}: {len(config.cells)} cell(s) x {len(config.seeds)} seed(s) = "
        f"{len(specs)} runs on {spark.sparkContext.master} "
        f"({spark.sparkContext.defaultParallelism} parallel tasks)")
    records = run_on_spark(spark, specs, progress)
    run_s = time.perf_counter() - t0
    log(f"simulated {len(specs)} runs in {run_s:.1f} s; aggregating")
    aggregates = aggregate(spark, records)
    write_tables(out, records, aggregates)
    meta = {
        "name": config.name,
        "description": config.description,
        "source": config.source,
        "baseline": config.baseline,
        "seeds": list(config.seeds),
        "cells": len(config.cells),
        "runs": len(specs),
        "settings": asdict(config.settings),
        "skipped": config.skip_lines(),
        "master": spark.sparkContext.master,
        "run_s": round(run_s, 1),
        "elapsed_s": round(time.perf_counter() - t0, 1),
    }
    (out / "sweep.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    summary = write_report(out)
    elapsed = time.perf_counter() - t0
    meta["elapsed_s"] = round(elapsed, 1)
    (out / "sweep.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return SweepOutcome(out, records, summary, elapsed)

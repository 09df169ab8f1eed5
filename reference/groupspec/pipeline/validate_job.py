"""``groupspec pipeline validate``: trace collections validated per group on Spark.

1. The input files (JSON Lines or Parquet traces; directories are searched for ``*.jsonl``
   and ``*.parquet``) are scanned one Spark task per file
   (:func:`groupspec.pipeline.validate_rows.scan_file`, with ``mapInArrow``) into scan rows,
   written to ``DIR/_scan`` so later steps do not redo them.
2. The quarantine (every input problem, with the line's text and the reason) and the
   per-file table come straight from the scan rows.
3. The group rows are repartitioned by (cluster, source, group), sorted by event order
   within partitions, and streamed group by group through the validator's per-group
   checker with ``mapInArrow`` (:class:`~groupspec.pipeline.validate_rows.GroupChecker`).
4. Verdicts, violations and per-rebalance metrics are written as Parquet, and a summary is
   computed with Spark SQL.

The output directory (on a cluster: storage every executor and the driver can reach)
holds ``groups.parquet``, ``violations.parquet``, ``rebalances.parquet``,
``quarantine.parquet``, ``files.parquet`` and ``summary.json``.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from groupspec.pipeline.validate_metrics import REBALANCE_FIELDS
from groupspec.pipeline.validate_rows import GROUP_COLUMNS, SCAN_COLUMNS, GroupChecker, scan_file
from groupspec.validate.replay import ReplayConfig

T = TypeVar("T")

_SPARK_TYPES: dict[str, DataType] = {"string": StringType(), "int64": LongType(), "bool": BooleanType(),
                                     "str": StringType(), "int": LongType(), "float": DoubleType()}
_ARROW_TYPES: dict[str, Any] = {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_()}

#: rows per Arrow batch the tasks emit
BATCH_ROWS = 2000


def _spark_schema(columns: Sequence[tuple[str, str]]) -> StructType:
    return StructType([StructField(n, _SPARK_TYPES[t], True) for n, t in columns])


def _arrow_schema(columns: Sequence[tuple[str, str]]) -> Any:
    return pa.schema([(n, _ARROW_TYPES[t]) for n, t in columns])


SCAN_SCHEMA = _spark_schema(SCAN_COLUMNS)
GROUP_SCHEMA = _spark_schema(GROUP_COLUMNS)
REBALANCE_SCHEMA = ArrayType(_spark_schema(REBALANCE_FIELDS))


def find_inputs(inputs: Sequence[str]) -> list[str]:
    """Files named, and the ``*.jsonl`` / ``*.parquet`` files under directories named, in
    order; a path that does not exist is kept (its scan quarantines it as unreadable)."""
    out: list[str] = []
    for raw in inputs:
        p = Path(raw)
        if p.is_dir():
            out += sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix in (".jsonl", ".parquet")
                          and not any(part.startswith(("_", ".")) for part in f.relative_to(p).parts))
        else:
            out.append(raw)
    return list(dict.fromkeys(out))


def run_with_progress(job: Callable[[], T], done: Callable[[], int], total: int,
                      progress: Callable[[int, int], None] | None, poll_s: float = 0.5) -> T:
    """Run ``job`` (a Spark action) on a thread, reporting ``done()`` of ``total`` while it runs."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(job())
        except BaseException as e:  # re-raised on the calling thread
            failure.append(e)

    worker = threading.Thread(target=run, name="groupspec-pipeline-job", daemon=True)
    worker.start()
    shown = -1
    while worker.is_alive():
        worker.join(poll_s)
        n = done()
        if progress is not None and n != shown and worker.is_alive():
            progress(n, total)
            shown = n
    if failure:
        raise failure[0]
    if progress is not None:
        progress(total, total)
    return result[0]


def _batches(rows: Iterator[dict[str, Any]], schema: Any) -> Iterator[Any]:
    buf: list[dict[str, Any]] = []
    for row in rows:
        buf.append(row)
        if len(buf) >= BATCH_ROWS:
            yield pa.RecordBatch.from_pylist(buf, schema=schema)
            buf = []
    if buf:
        yield pa.RecordBatch.from_pylist(buf, schema=schema)


@dataclass
class ValidateOutcome:
    out: Path
    summary: dict[str, Any]
    lines: list[str] = field(default_factory=list)


Progress = Callable[[str, int, int], None]


def run_validate(spark: SparkSession, inputs: Sequence[str], out: Path,
                 config: ReplayConfig | None = None, progress: Progress | None = None,
                 log: Callable[[str], None] = print, keep_scan: bool = False,
                 partitions: int | None = None) -> ValidateOutcome:
    t0 = time.perf_counter()
    files = find_inputs(inputs)
    if not files:
        raise ValueError("INPUT: no trace files (*.jsonl, *.parquet) found")
    out.mkdir(parents=True, exist_ok=True)
    sc = spark.sparkContext
    log(f"validating {len(files)} trace file(s) on {sc.master} ({sc.defaultParallelism} parallel tasks)")

    # 1. scan, one task per file
    scanned = sc.accumulator(0)
    scan_schema = _arrow_schema(SCAN_COLUMNS)

    def scan(batches: Iterable[Any]) -> Iterator[Any]:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                yield from _batches(scan_file(path), scan_schema)
                scanned.add(1)

    paths = spark.createDataFrame([(f,) for f in files], "path string").repartition(len(files))
    scan_dir = out / "_scan"
    run_with_progress(
        lambda: paths.mapInArrow(scan, SCAN_SCHEMA).write.mode("overwrite").parquet(str(scan_dir)),
        lambda: int(scanned.value), len(files), (lambda d, n: progress("files scanned", d, n)) if progress else None,
    )
    rows = spark.read.parquet(str(scan_dir))
    t_scan = time.perf_counter() - t0

    # 2. quarantine and files
    (rows.where(F.col("role") == "problem")
     .select("cluster", "source", "line", "seq", "group_id", F.col("kind").alias("problem"),
             "reason", "dropped", "text")
     .orderBy("cluster", "source", "line")
     .write.mode("overwrite").parquet(str(out / "quarantine.parquet")))
    file_json = StructType([StructField("events", LongType()), StructField("lines", LongType()),
                            StructField("groups", LongType()), StructField("problems", LongType()),
                            StructField("error", StringType())])
    files_df = (rows.where(F.col("role") == "file")
                .select("cluster", "source", F.from_json("text", file_json).alias("f"))
                .select("cluster", "source", "f.*"))
    files_df.write.mode("overwrite").parquet(str(out / "files.parquet"))
    files_df = spark.read.parquet(str(out / "files.parquet"))
    totals = files_df.agg(F.sum("events").alias("events"), F.sum("groups").alias("groups")).collect()[0]
    n_events, n_groups = int(totals["events"] or 0), int(totals["groups"] or 0)

    # 3. per group: repartition by (cluster, source, group), sort, stream through the checker
    checked = sc.accumulator(0)
    group_schema = _arrow_schema(GROUP_COLUMNS)

    def check(batches: Iterable[Any]) -> Iterator[Any]:
        checker = GroupChecker(config)

        def rows_of() -> Iterator[dict[str, Any]]:
            for batch in batches:
                cols = {name: batch.column(name).to_pylist() for name in
                        ("role", "cluster", "source", "group_id", "ord", "line", "text")}
                for i in range(batch.num_rows):
                    yield {name: col[i] for name, col in cols.items()}

        def verdicts() -> Iterator[dict[str, Any]]:
            for row in checker.feed(rows_of()):
                checked.add(1)
                yield row
            for row in checker.close():
                checked.add(1)
                yield row

        # one group row per batch keeps progress moving; they are small
        for row in verdicts():
            yield pa.RecordBatch.from_pylist([row], schema=group_schema)

    n_parts = partitions or max(sc.defaultParallelism * 4, min(n_groups // 25, 400), 1)
    grouped = (rows.where(F.col("role").isin("group", "gap", "exchange", "record", "fetch"))
               .select("role", "cluster", "source", "group_id", "ord", "line", "text")
               .repartition(n_parts, "cluster", "source", "group_id")
               .sortWithinPartitions("cluster", "source", "group_id", "ord"))
    t1 = time.perf_counter()
    run_with_progress(
        lambda: grouped.mapInArrow(check, GROUP_SCHEMA).write.mode("overwrite").parquet(str(out / "groups.parquet")),
        lambda: int(checked.value), n_groups, (lambda d, n: progress("groups checked", d, n)) if progress else None,
    )
    t_check = time.perf_counter() - t1

    # 4. violations, rebalances, summary
    groups = spark.read.parquet(str(out / "groups.parquet"))
    (groups.where(F.col("verdict") == "violation")
     .select("cluster", "source", "group_id", F.col("violation_seq").alias("seq"),
             F.col("violation_line").alias("line"), F.col("violation_rule").alias("rule"),
             F.col("violation_api").alias("api"), F.col("violation_connection").alias("connection"),
             "broker_answered", "protocol_allows", F.col("violation_detail").alias("detail"), "kafka_source")
     .orderBy("cluster", "source", "group_id")
     .write.mode("overwrite").parquet(str(out / "violations.parquet")))
    (groups.select("cluster", "source", "group_id",
                   F.posexplode(F.from_json("rebalances_json", REBALANCE_SCHEMA)).alias("index", "r"))
     .select("cluster", "source", "group_id", "index", "r.*")
     .write.mode("overwrite").parquet(str(out / "rebalances.parquet")))

    summary = _summary(spark, out, files, n_events, groups)
    elapsed = time.perf_counter() - t0
    summary["timing_s"] = {"scan": round(t_scan, 1), "check": round(t_check, 1), "total": round(elapsed, 1)}
    summary["events_per_s"] = round(n_events / elapsed, 1) if elapsed > 0 else None
    summary["master"] = sc.master
    if not keep_scan:
        shutil.rmtree(scan_dir, ignore_errors=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return ValidateOutcome(out, summary, summary_lines(summary))


def _summary(spark: SparkSession, out: Path, files: list[str], events: int, groups: DataFrame) -> dict[str, Any]:
    verdicts = {r["verdict"]: int(r["count"]) for r in groups.groupBy("verdict").count().collect()}
    rules = {r["violation_rule"]: int(r["count"]) for r in
             groups.where(F.col("verdict") == "violation").groupBy("violation_rule").count().collect()}
    q = spark.read.parquet(str(out / "quarantine.parquet"))
    problems = {r["problem"]: int(r["count"]) for r in q.groupBy("problem").count().collect()}
    dropped = q.where(F.col("dropped")).count()
    rb = spark.read.parquet(str(out / "rebalances.parquet"))
    stats = rb.agg(F.count(F.lit(1)).alias("n"), F.avg("duration_ms").alias("mean"),
                   F.expr("percentile(duration_ms, 0.95)").alias("p95"),
                   F.sum("partitions_moved").alias("moved"),
                   F.sum("unowned_partition_ms").alias("unowned")).collect()[0]
    return {
        "files": len(files),
        "events": events,
        "groups": sum(verdicts.values()),
        "verdicts": dict(sorted(verdicts.items())),
        "violations_by_rule": dict(sorted(rules.items())),
        "problems_by_kind": dict(sorted(problems.items())),
        "quarantined_lines": int(dropped),
        "rebalances": {"count": int(stats["n"] or 0),
                       "mean_duration_ms": round(float(stats["mean"] or 0.0), 1),
                       "p95_duration_ms": round(float(stats["p95"] or 0.0), 1),
                       "partitions_moved": int(stats["moved"] or 0),
                       "unowned_partition_ms": round(float(stats["unowned"] or 0.0), 1)},
    }


def summary_lines(s: dict[str, Any]) -> list[str]:
    v = s["verdicts"]
    lines = [
        f"{s['events']:,} events in {s['files']} file(s), {s['groups']:,} group(s): "
        + ", ".join(f"{v.get(k, 0):,} {k}" for k in ("conforming", "violation", "inconclusive")),
    ]
    if s["violations_by_rule"]:
        lines.append("violations by rule: " + ", ".join(f"{k} {n}" for k, n in s["violations_by_rule"].items()))
    if s["problems_by_kind"]:
        lines.append(f"input problems: {sum(s['problems_by_kind'].values()):,} ("
                     + ", ".join(f"{k} {n}" for k, n in s["problems_by_kind"].items())
                     + f"); {s['quarantined_lines']:,} line(s) not validated, see quarantine.parquet")
    r = s["rebalances"]
    lines.append(f"rebalances: {r['count']:,}, mean {r['mean_duration_ms'] / 1000:.1f} s, p95 "
                 f"{r['p95_duration_ms'] / 1000:.1f} s, {r['partitions_moved']:,} partition moves")
    if "timing_s" in s:
        t = s["timing_s"]
        lines.append(f"time: {t['total']:.0f} s (scan {t['scan']:.0f} s, check {t['check']:.0f} s), "
                     f"{s['events_per_s']:,.0f} events/s on {s['master']}")
    return lines


def exit_status(summary: dict[str, Any]) -> int:
    """As ``groupspec validate``: 1 a violation, 2 inconclusive or bad input, 0 otherwise."""
    v = summary["verdicts"]
    if v.get("violation"):
        return 1
    bad = {k: n for k, n in summary["problems_by_kind"].items() if k != "missing_response"}
    if v.get("inconclusive") or bad or not summary["groups"]:
        return 2
    return 0

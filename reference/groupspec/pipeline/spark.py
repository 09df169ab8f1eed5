"""Spark: runs on executors (one task per cell and seed), aggregates with Spark SQL.

:func:`spark_session` starts (or, under spark-submit, joins) a session; without a master
URL Spark's own default applies, ``local[*]``. :func:`run_on_spark` sends each run as JSON
to an executor, which simulates it (:func:`groupspec.pipeline.metrics.run_json`), and
reports progress through an accumulator while the job runs. :func:`aggregate` builds the
summary tables with Spark SQL from the collected rows.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from groupspec.pipeline.config import RunSpec
from groupspec.pipeline.metrics import (
    REBALANCE_COLUMNS,
    RUN_COLUMNS,
    VIOLATION_COLUMNS,
    Columns,
    Row,
    RunRecord,
    run_json,
)
from groupspec.pipeline.scenarios import build_scenario

_SPARK: dict[str, DataType] = {"str": StringType(), "int": LongType(), "float": DoubleType(),
                               "bool": BooleanType()}

_CELL = ("churn", "protocol", "assignor", "strategy", "group_size", "partitions", "delay_ms")

BY_STRATEGY_COLUMNS: Columns = (
    ("churn", "str"), ("protocol", "str"), ("assignor", "str"), ("strategy", "str"),
    ("group_size", "int"), ("partitions", "int"), ("delay_ms", "int"),
    ("runs", "int"),
    ("runs_ok", "int"),
    ("violations", "int"),
    ("mean_churn_unavailable_partition_s", "float"),
    ("min_churn_unavailable_partition_s", "float"),
    ("max_churn_unavailable_partition_s", "float"),
    ("mean_churn_stw_partition_s", "float"),
    ("mean_churn_partitions_moved", "float"),
    ("mean_churn_rebalances", "float"),
    ("mean_churn_rebalance_s", "float"),
    ("mean_records_processed_twice", "float"),
)

REBALANCE_STATS_COLUMNS: Columns = (
    ("churn", "str"), ("protocol", "str"), ("assignor", "str"), ("strategy", "str"),
    ("group_size", "int"), ("partitions", "int"), ("delay_ms", "int"),
    ("rebalances", "int"),
    ("completed_rebalances", "int"),
    ("mean_duration_ms", "float"),
    ("p50_duration_ms", "float"),
    ("p95_duration_ms", "float"),
    ("max_duration_ms", "int"),
    ("mean_partitions_moved", "float"),
    ("max_partitions_moved", "int"),
    ("mean_unowned_partition_ms", "float"),
)

VIOLATIONS_BY_KIND_COLUMNS: Columns = (
    ("kind", "str"), ("churn", "str"), ("strategy", "str"), ("violations", "int"), ("runs_with_violation", "int"),
)


def spark_schema(columns: Columns) -> StructType:
    return StructType([StructField(name, _SPARK[kind], True) for name, kind in columns])


#: JVM options for a Spark JVM this process starts in local mode, where the JVM only moves
#: bytes between files and the Python workers that do the work: the C1 compiler alone. C2's
#: optimising compilations of Spark's start-up and planning code cost as much CPU as the
#: rest of the JVM, and in local mode they run beside the Python worker: measured on a
#: 1M-event ``pipeline validate`` on local[1], the JVM used 19.5-21 s of CPU with both
#: compilers and 10-11 s with C1 alone, the job's outputs step took half the time, and
#: the Python workers' CPU did not change (bench/pipeline.md). Not used where the JVM
#: does the heavy work (``pipeline validate --reader parquet``) or where the user sets the
#: driver's JVM options (the ``conf`` given, or spark-defaults.conf).
LIGHT_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
_DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def _user_sets_driver_options() -> bool:
    """Whether spark-defaults.conf (or spark-submit's arguments) set the driver's JVM options."""
    if _DRIVER_JAVA_OPTIONS in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return True
    for conf_dir in (os.environ.get("SPARK_CONF_DIR"),
                     os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None):
        if conf_dir:
            with suppress(OSError):
                text = Path(conf_dir, "spark-defaults.conf").read_text(encoding="utf-8", errors="replace")
                if any(line.split()[:1] == [_DRIVER_JAVA_OPTIONS] for line in text.splitlines()):
                    return True
    return False


def session_conf(master: str | None, conf: Mapping[str, str] | None = None,
                 light_jvm: bool = True) -> dict[str, str]:
    """The settings :func:`spark_session` starts a session with: ``conf``, the console
    progress bar off, and :data:`LIGHT_JVM_OPTIONS` when this process starts a local-mode
    JVM (``master`` local, or none and not under spark-submit) the user has not configured."""
    settings = {"spark.ui.showConsoleProgress": "false", **(conf or {})}
    starts_jvm = "PYSPARK_GATEWAY_PORT" not in os.environ  # spark-submit started the JVM already
    local = (master or "local").startswith("local")
    if (light_jvm and starts_jvm and local and _DRIVER_JAVA_OPTIONS not in settings
            and not _user_sets_driver_options()):
        settings[_DRIVER_JAVA_OPTIONS] = LIGHT_JVM_OPTIONS
    return settings


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                  app_name: str = "groupspec-sweep", light_jvm: bool = True) -> SparkSession:
    """The session: a new one on ``master`` (default: Spark's, ``local[*]``), or the one
    spark-submit made. Executors run this interpreter unless PYSPARK_PYTHON says otherwise.
    ``light_jvm``: start a local JVM with :data:`LIGHT_JVM_OPTIONS` (see :func:`session_conf`)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    for key, value in session_conf(master, conf, light_jvm).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not (spark.sparkContext.master or "local").startswith("local"):
        _ship_package(spark)
    return spark


def _ship_package(spark: SparkSession) -> None:
    """On a cluster, send the groupspec package to the executors (they may not have it)."""
    import groupspec

    root = Path(groupspec.__file__).parent
    tmp = Path(tempfile.mkdtemp(prefix="groupspec-pyfiles-"))
    archive = shutil.make_archive(str(tmp / "groupspec"), "zip", root.parent, root.name)
    spark.sparkContext.addPyFile(archive)


def _cost(spec: RunSpec) -> int:
    """A run's expected cost: members times simulated time."""
    sc = build_scenario(spec).scenario
    return len(sc.members) * sc.until_ms


def run_on_spark(
    spark: SparkSession,
    specs: list[RunSpec],
    progress: Callable[[int, int], None] | None = None,
    poll_s: float = 0.5,
) -> list[RunRecord]:
    """Every run as one Spark task; the records come back in ``specs`` order."""
    sc = spark.sparkContext
    order = sorted(range(len(specs)), key=lambda i: -_cost(specs[i]))  # longest first
    texts = [specs[i].to_json() for i in order]
    done = sc.accumulator(0)

    def task(text: str) -> RunRecord:
        record = run_json(text)
        done.add(1)
        return record

    rdd = sc.parallelize(texts, max(len(texts), 1)).map(task)
    collected: list[RunRecord] = []
    failure: list[BaseException] = []

    def job() -> None:
        try:
            collected.extend(rdd.collect())
        except BaseException as e:  # re-raised on the calling thread
            failure.append(e)

    worker = threading.Thread(target=job, name="groupspec-sweep-job", daemon=True)
    worker.start()
    shown = -1
    while worker.is_alive():
        worker.join(poll_s)
        n = int(done.value)
        if progress is not None and n != shown and worker.is_alive():
            progress(n, len(texts))
            shown = n
    if failure:
        raise failure[0]
    if progress is not None:
        progress(len(texts), len(texts))
    by_id = {rec.run["run_id"]: rec for rec in collected}
    return [by_id[s.run_id] for s in specs]


def _frame(spark: SparkSession, rows: list[Row], columns: Columns) -> DataFrame:
    names = [n for n, _ in columns]
    return spark.createDataFrame([tuple(r[n] for n in names) for r in rows], spark_schema(columns))


def _rows(df: DataFrame, columns: Columns) -> list[Row]:
    out: list[Row] = []
    for r in df.collect():
        d = r.asDict()
        out.append({n: (int(d[n]) if k == "int" and d[n] is not None
                        else float(d[n]) if k == "float" and d[n] is not None else d[n])
                    for n, k in columns})
    return out


def aggregate(spark: SparkSession, records: list[RunRecord]) -> dict[str, list[Row]]:
    """The aggregated tables (by_strategy, rebalance_stats, violations_by_kind), with Spark SQL."""
    runs = _frame(spark, [r.run for r in records], RUN_COLUMNS)
    rbs = _frame(spark, [x for r in records for x in r.rebalances], REBALANCE_COLUMNS)
    viol = _frame(spark, [x for r in records for x in r.violations], VIOLATION_COLUMNS)

    def seconds(col: str) -> Any:
        return F.col(col) / F.lit(1000.0)

    by_strategy = (
        runs.groupBy(*_CELL)
        .agg(
            F.count(F.lit(1)).alias("runs"),
            F.sum(F.col("verdicts_ok").cast("long")).alias("runs_ok"),
            F.sum("violations").alias("violations"),
            F.avg(seconds("churn_unavailable_partition_ms")).alias("mean_churn_unavailable_partition_s"),
            F.min(seconds("churn_unavailable_partition_ms")).alias("min_churn_unavailable_partition_s"),
            F.max(seconds("churn_unavailable_partition_ms")).alias("max_churn_unavailable_partition_s"),
            F.avg(seconds("churn_stw_partition_ms")).alias("mean_churn_stw_partition_s"),
            F.avg("churn_partitions_moved").alias("mean_churn_partitions_moved"),
            F.avg("churn_rebalances").alias("mean_churn_rebalances"),
            F.avg(seconds("churn_rebalance_ms")).alias("mean_churn_rebalance_s"),
            F.avg("records_processed_twice").alias("mean_records_processed_twice"),
        )
        .orderBy(*_CELL)
    )
    rebalance_stats = (
        rbs.where(F.col("phase") == "churn")
        .groupBy(*_CELL)
        .agg(
            F.count(F.lit(1)).alias("rebalances"),
            F.sum(F.col("completed").cast("long")).alias("completed_rebalances"),
            F.avg("duration_ms").alias("mean_duration_ms"),
            F.expr("percentile(duration_ms, 0.5)").alias("p50_duration_ms"),
            F.expr("percentile(duration_ms, 0.95)").alias("p95_duration_ms"),
            F.max("duration_ms").alias("max_duration_ms"),
            F.avg("partitions_moved").alias("mean_partitions_moved"),
            F.max("partitions_moved").alias("max_partitions_moved"),
            F.avg("unowned_partition_ms").alias("mean_unowned_partition_ms"),
        )
        .orderBy(*_CELL)
    )
    violations_by_kind = (
        viol.groupBy("kind", "churn", "strategy")
        .agg(F.sum("violations").alias("violations"), F.countDistinct("run_id").alias("runs_with_violation"))
        .orderBy("kind", "churn", "strategy")
    )
    return {
        "by_strategy": _rows(by_strategy, BY_STRATEGY_COLUMNS),
        "rebalance_stats": _rows(rebalance_stats, REBALANCE_STATS_COLUMNS),
        "violations_by_kind": _rows(violations_by_kind, VIOLATIONS_BY_KIND_COLUMNS),
    }

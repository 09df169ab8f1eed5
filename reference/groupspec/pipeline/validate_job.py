"""``groupspec pipeline validate``: trace collections validated per group on Spark.

1. Parquet traces are read with Spark's ``binaryFile`` reader (a ``FileScan binaryFile``
   in the plan; whole files packed a few tasks per core), each file's bytes reach a Python
   worker in an Arrow batch (``mapInArrow``), and the worker decodes the file once with
   pyarrow, the columnar layout's typed columns and structs in bulk
   (:func:`groupspec.validate.load.loaded_from_arrow`, no JSON), exactly as ``groupspec
   validate`` does, and judges every group of it
   (:func:`groupspec.pipeline.validate_rows.validate_parquet_buffer`). With ``reader`` =
   ``"parquet"`` Spark's own Parquet reader reads them instead (``FileScan parquet``, one
   file to a task) and their rows reach the workers as Arrow batches
   (:func:`~groupspec.pipeline.validate_rows.rows_of_arrow`); measured, the JVM's decoding
   of the nested structs and their conversion to Arrow alone take about twice as long as
   the in-process validator's whole run, so it is not the default. A group's verdict can depend
   on the rest of its file (seq holes, duplicates, lines whose group cannot be told,
   undecodable frames on a connection it used, the header and the metadata images), so the
   file is what a task holds; groups are judged one by one, as ``groupspec validate``
   judges them. Nothing is written between reading and checking.
2. JSON Lines traces, and files the Parquet reader cannot be given (not Parquet, damaged,
   another layout), are read by path, one task per file
   (:func:`~groupspec.pipeline.validate_rows.scan_file`), giving the same rows.
3. The tasks emit *result rows* only: per file a ``file`` row, per input problem a
   ``problem`` row with the line's text and the reason (the quarantine), per group a
   ``group`` row (verdict, violation, rebalance metrics). They are small (one per group,
   not per event) and are written once, to ``DIR/_results``.
4. Verdicts, violations, per-rebalance metrics, the quarantine and the per-file table are
   written as Parquet from the result rows, and a summary is computed with Spark SQL.

The output directory (on a cluster: storage every executor and the driver can reach)
holds ``groups.parquet``, ``violations.parquet``, ``rebalances.parquet``,
``quarantine.parquet``, ``files.parquet``, ``summary.json`` and ``plan.txt`` (the job's
physical plan).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

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
from groupspec.pipeline.validate_rows import (
    COLUMNAR,
    GROUP_COLUMNS,
    RESULT_COLUMNS,
    TEXT,
    TEXT_COLUMNS,
    rows_of_arrow,
    scan_file,
    validate_parquet_buffer,
)
from groupspec.validate.replay import ReplayConfig

T = TypeVar("T")

_SPARK_TYPES: dict[str, DataType] = {"string": StringType(), "int64": LongType(), "bool": BooleanType(),
                                     "str": StringType(), "int": LongType(), "float": DoubleType()}
_ARROW_TYPES: dict[str, Any] = {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_()}

#: how Parquet traces reach the Python workers: their bytes through Spark's binaryFile
#: reader, decoded there with pyarrow (the default), or their rows through Spark's own
#: Parquet reader (the JVM decodes the columnar layout's nested structs row by row and
#: converts them to Arrow: measured at twice the in-process validator's whole time, see
#: bench/pipeline.md)
BINARY, PARQUET = "binary", "parquet"
READERS = (BINARY, PARQUET)

#: rows per Arrow batch the tasks emit
BATCH_ROWS = 2000

#: larger than any trace file: the Parquet reader then neither splits a file nor packs two
#: into one task (Spark's maxSplitBytes is min(maxPartitionBytes, max(openCost, bytes/core))
#: and every file opened costs openCostInBytes)
_WHOLE_FILES = {"spark.sql.files.maxPartitionBytes": str(1 << 50),
                "spark.sql.files.openCostInBytes": str(1 << 50)}
#: tasks per core the binaryFile reader's files are packed into (a task has a fixed cost,
#: a few tenths of a second, that one task per file would pay hundreds of times; a few
#: tasks per core keep the cores busy to the end)
TASKS_PER_CORE = 4


def spark_file_partitions(sizes: Sequence[int], max_split_bytes: int, open_cost: int = 1) -> list[list[int]]:
    """The sizes of the files each task of Spark's file readers gets, as Spark 3.5 packs
    unsplittable files (``FilePartition.getFilePartitions``: the files by size, largest
    first, each added to the open task unless that would take it past ``max_split_bytes``,
    every file counted with ``open_cost`` more)."""
    tasks: list[list[int]] = []
    current: list[int] = []
    size = 0
    for n in sorted(sizes, reverse=True):
        if current and size + n > max_split_bytes:
            tasks.append(current)
            current, size = [], 0
        current.append(n)
        size += n + open_cost
    if current:
        tasks.append(current)
    return tasks


def balanced_split_bytes(sizes: Sequence[int], tasks: int, open_cost: int = 1) -> int:
    """The smallest split size with which Spark packs ``sizes`` into at most ``tasks``
    tasks. Spark's packing fills each task up to the split size and leaves the rest to a
    last, smaller task: with 400 files of about 1 MB and the split size set to an eighth of
    their bytes, 8 full tasks and one of 4 files, so on 2 cores one core ran a task more
    while the other idled. Packing by this size instead gives ``tasks`` tasks of nearly
    equal bytes (next-fit never needs more tasks for a larger size, so the smallest is
    found by bisection)."""
    if not sizes:
        return 1
    total = sum(sizes) + open_cost * len(sizes)
    lo = max(1, -(-total // max(1, tasks)))
    hi = lo + max(sizes) + open_cost
    while lo < hi:
        mid = (lo + hi) // 2
        if len(spark_file_partitions(sizes, mid, open_cost)) <= tasks:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _packed(spark: SparkSession, files: Sequence[str]) -> dict[str, str]:
    """Reader settings that pack whole files (binaryFile never splits one) into about
    :data:`TASKS_PER_CORE` tasks per core of nearly equal bytes
    (:func:`balanced_split_bytes`), and one file per Arrow batch."""
    sizes = []
    for f in files:
        with suppress(OSError):
            sizes.append(os.path.getsize(f))
    tasks = max(1, min(len(files), spark.sparkContext.defaultParallelism * TASKS_PER_CORE))
    return {"spark.sql.files.maxPartitionBytes": str(balanced_split_bytes(sizes, tasks)),
            "spark.sql.files.openCostInBytes": "1",
            "spark.sql.execution.arrow.maxRecordsPerBatch": "1"}


def _spark_schema(columns: Sequence[tuple[str, str]]) -> StructType:
    return StructType([StructField(n, _SPARK_TYPES[t], True) for n, t in columns])


def _arrow_schema(columns: Sequence[tuple[str, str]]) -> Any:
    return pa.schema([(n, _ARROW_TYPES[t]) for n, t in columns])


RESULT_SCHEMA = _spark_schema(RESULT_COLUMNS)
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


def parquet_layout(path: str) -> str | None:
    """The layout of a Parquet trace whose footer reads (:data:`COLUMNAR` or :data:`TEXT`:
    Spark's reader takes those), or None (not Parquet, damaged, another schema: read by path)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PAR1":
                return None
        import pyarrow.parquet as pq

        from groupspec.trace.columnar import is_columnar_schema

        schema = pq.read_schema(path)
    except Exception:  # unreadable or damaged: the by-path reader says why
        return None
    if is_columnar_schema(schema):
        return COLUMNAR
    types = {f.name: f.type for f in schema}
    if (pa.types.is_integer(types.get("line", pa.null())) and pa.types.is_string(types.get("text", pa.null()))
            and pa.types.is_boolean(types.get("ended", pa.null()))):
        return TEXT
    return None


def damaged_parquet(files: Sequence[str]) -> list[str]:
    """The Parquet files whose footer reads but whose data pyarrow cannot read through (a
    damaged page), batch by batch so a large file is not held whole."""
    import pyarrow.parquet as pq

    bad = []
    for f in files:
        try:
            for _ in pq.ParquetFile(f).iter_batches(batch_size=65536):
                pass
        except Exception:
            bad.append(f)
    return bad


def reader_name(name: str) -> str:
    """A file name as Spark's ``input_file_name`` gives it, as a local path (or as it is)."""
    u = urlparse(name)
    return os.path.normpath(unquote(u.path)) if u.scheme in ("file", "") else name


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


def _batches(rows: Iterable[dict[str, Any]], schema: Any) -> Iterator[Any]:
    buf: list[dict[str, Any]] = []
    for row in rows:
        buf.append(row)
        if len(buf) >= BATCH_ROWS:
            yield pa.RecordBatch.from_pylist(buf, schema=schema)
            buf = []
    if buf:
        yield pa.RecordBatch.from_pylist(buf, schema=schema)


def explain(df: DataFrame, mode: str = "simple") -> str:
    """``df.explain(mode)``'s text (the physical plan), as a string."""
    jvm = df.sparkSession.sparkContext._jvm
    assert jvm is not None
    return str(jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), mode))


@dataclass
class ValidateOutcome:
    out: Path
    summary: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    #: the physical plan of the validation (``explain``), also in ``DIR/plan.txt``
    plan: str = ""


Progress = Callable[[str, int, int], None]


def _input_names(files: list[str]) -> dict[str, str]:
    """The name each input is reported under, by the absolute and the real path Spark's
    readers may give for it."""
    names: dict[str, str] = {}
    for f in files:
        names[os.path.abspath(f)] = f
        names.setdefault(os.path.realpath(f), f)
    return names


def _read_and_validate(spark: SparkSession, files: list[str], layout: str, config: ReplayConfig | None,
                       on_file: Callable[[], None] | None) -> DataFrame:
    """Parquet traces of one layout through Spark's Parquet reader, their rows to the Python
    workers as Arrow batches (``mapInArrow``), each file judged by the task that read it."""
    result_schema = _arrow_schema(RESULT_COLUMNS)
    names = _input_names(files)

    def validate(batches: Iterable[Any]) -> Iterator[Any]:
        local = {reader_name(k): v for k, v in names.items()}

        def renamed() -> Iterator[Any]:
            for b in batches:
                src = pa.array([reader_name(x) for x in b.column("source").to_pylist()], pa.string())
                yield b.set_column(b.schema.get_field_index("source"), "source", src)

        rows = rows_of_arrow(renamed(), local, config, on_file=on_file, layout=layout)
        yield from _batches(rows, result_schema)

    # (a columnar file holds only the struct columns its rows fill: the files' schemas are
    # merged, a column a file lacks read as null in its rows, as the layout says)
    read = spark.read.option("mergeSchema", "true").parquet(*[os.path.abspath(f) for f in files])
    columns = read.columns if layout == COLUMNAR else list(TEXT_COLUMNS)
    return (read.select(F.input_file_name().alias("source"), *columns)
            .mapInArrow(validate, RESULT_SCHEMA))


def _read_bytes_and_validate(spark: SparkSession, files: list[str], config: ReplayConfig | None,
                             on_file: Callable[[], None] | None) -> DataFrame:
    """Parquet traces through Spark's ``binaryFile`` reader, each file's bytes to a Python
    worker in an Arrow batch (``mapInArrow``), decoded there with pyarrow's Parquet reader
    and judged by that task."""
    result_schema = _arrow_schema(RESULT_COLUMNS)
    names = _input_names(files)

    def validate(batches: Iterable[Any]) -> Iterator[Any]:
        local = {reader_name(k): v for k, v in names.items()}
        for b in batches:
            content = b.column("content")
            for i, path in enumerate(b.column("path").to_pylist()):
                name = local.get(reader_name(path), path)
                yield from _batches(validate_parquet_buffer(content[i].as_buffer(), name, config), result_schema)
                if on_file is not None:
                    on_file()

    read = spark.read.format("binaryFile").load([os.path.abspath(f) for f in files])
    return read.select("path", "content").mapInArrow(validate, RESULT_SCHEMA)


def validation_frame(spark: SparkSession, files: Sequence[str], config: ReplayConfig | None = None,
                     partitions: int | None = None, on_file: Callable[[], None] | None = None,
                     reader: str = BINARY, by_path_only: Collection[str] = ()) -> DataFrame:
    """The result rows of ``files`` (see the module docstring), not yet computed: Parquet
    traces (columnar or text layout) through Spark's ``binaryFile`` reader (``reader`` =
    :data:`BINARY`) or its Parquet reader (:data:`PARQUET`) and ``mapInArrow``, the rest by
    path; ``by_path_only`` are read by path whatever they hold (files Spark's Parquet reader
    failed on). Run it within :func:`reader_settings`."""
    if reader not in READERS:
        raise ValueError(f"reader: one of {', '.join(READERS)}, not {reader!r}")
    result_schema = _arrow_schema(RESULT_COLUMNS)
    layouts = {f: None if f in by_path_only else parquet_layout(f) for f in files}
    by_path = [f for f in files if layouts[f] is None]
    frames: list[DataFrame] = []
    if reader == BINARY:
        by_reader = [f for f in files if layouts[f] is not None]
        if by_reader:
            frames.append(_read_bytes_and_validate(spark, by_reader, config, on_file))
    else:
        for layout in (COLUMNAR, TEXT):
            by_reader = [f for f in files if layouts[f] == layout]
            if by_reader:
                frames.append(_read_and_validate(spark, by_reader, layout, config, on_file))
    if by_path:
        def scan(batches: Iterable[Any]) -> Iterator[Any]:
            for batch in batches:
                for path in batch.column("path").to_pylist():
                    yield from _batches(scan_file(path, config), result_schema)
                    if on_file is not None:
                        on_file()

        n = min(len(by_path), partitions or len(by_path))
        paths = spark.createDataFrame([(f,) for f in by_path], "path string").repartition(n)
        frames.append(paths.mapInArrow(scan, RESULT_SCHEMA))
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


@contextmanager
def reader_settings(spark: SparkSession, files: Sequence[str] = (), reader: str = BINARY) -> Iterator[None]:
    """Within it, Spark's file readers keep each file whole in one task: the Parquet reader
    one file per task, the binaryFile reader whole files packed a few tasks per core."""
    settings = _packed(spark, files) if reader == BINARY else _WHOLE_FILES
    saved = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def run_validate(spark: SparkSession, inputs: Sequence[str], out: Path,
                 config: ReplayConfig | None = None, progress: Progress | None = None,
                 log: Callable[[str], None] = print, keep_scan: bool = False,
                 partitions: int | None = None, reader: str = BINARY) -> ValidateOutcome:
    """Validate the trace files ``inputs`` names into ``out``. ``keep_scan`` keeps the result
    rows in ``DIR/_results``; ``partitions`` caps the tasks reading files by path;
    ``reader``: how Parquet traces are read (:data:`READERS`)."""
    t0 = time.perf_counter()
    files = find_inputs(inputs)
    if not files:
        raise ValueError("INPUT: no trace files (*.jsonl, *.parquet) found")
    out.mkdir(parents=True, exist_ok=True)
    sc = spark.sparkContext
    log(f"validating {len(files)} trace file(s) on {sc.master} ({sc.defaultParallelism} parallel tasks)")

    # 1-3. read, decode once per file, judge every group; only result rows are written
    results_dir = out / "_results"

    def attempt(by_path_only: list[str]) -> str:
        validated = sc.accumulator(0)
        with reader_settings(spark, files, reader):
            frame = validation_frame(spark, files, config, partitions, on_file=lambda: validated.add(1),
                                     reader=reader, by_path_only=by_path_only)
            plan = explain(frame)
            run_with_progress(
                lambda: frame.write.mode("overwrite").parquet(str(results_dir)),
                lambda: int(validated.value), len(files),
                (lambda d, n: progress("files validated", d, n)) if progress else None,
            )
        return plan

    try:
        plan = attempt([])
    except Exception as e:
        # Spark's Parquet reader fails the whole job on one damaged data page (the file's
        # footer read, so it was given to the reader): find every such file with pyarrow,
        # read those by path, which quarantines each with the reason, and run again
        if reader != PARQUET:
            raise
        damaged = damaged_parquet([f for f in files if parquet_layout(f) is not None])
        if not damaged:
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        log(f"Spark's Parquet reader failed ({first[:200]}); {len(damaged)} damaged "
            f"file(s) are read by path instead and quarantined: {', '.join(damaged[:5])}"
            + (" ..." if len(damaged) > 5 else ""))
        plan = attempt(damaged)
    (out / "plan.txt").write_text(plan, encoding="utf-8")
    t_validate = time.perf_counter() - t0
    t1 = time.perf_counter()
    summary = write_outputs(spark, results_dir, out, files)
    elapsed = time.perf_counter() - t0
    summary["timing_s"] = {"validate": round(t_validate, 1), "outputs": round(time.perf_counter() - t1, 1),
                           "total": round(elapsed, 1)}
    summary["events_per_s"] = round(summary["events"] / elapsed, 1) if elapsed > 0 else None
    summary["master"] = sc.master
    if not keep_scan:
        shutil.rmtree(results_dir, ignore_errors=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return ValidateOutcome(out, summary, summary_lines(summary), plan)


def _concurrently(*jobs: Callable[[], T]) -> list[T]:
    """Run Spark jobs from threads of this driver at once, and return their results in
    order (the first error is raised once all have ended)."""
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(job) for job in jobs]
    return [f.result() for f in futures]


def write_outputs(spark: SparkSession, results_dir: Path, out: Path, files: list[str]) -> dict[str, Any]:
    """Step 4: the output tables written from the result rows in ``results_dir``, and the
    summary of them. The tables are small (one row per group, file, input problem and
    rebalance): each is written from one partition, sorted there, without a
    range-partitioning pass. They are independent Spark jobs, each a few tenths of a second
    mostly spent scheduling, so they are run at once from threads (the cores of a
    ``local[N]`` master take them side by side), then the queries of the summary."""
    rows = spark.read.parquet(str(results_dir))
    groups = rows.where(F.col("role") == "group")

    def write(df: DataFrame, name: str, *order: str) -> Callable[[], None]:
        def job() -> None:
            df.coalesce(1).sortWithinPartitions(*order).write.mode("overwrite").parquet(str(out / name))
        return job

    _concurrently(
        write(rows.where(F.col("role") == "problem")
              .select("cluster", "source", "line", "seq", "group_id", F.col("kind").alias("problem"),
                      "reason", "dropped", "text"), "quarantine.parquet", "cluster", "source", "line"),
        write(rows.where(F.col("role") == "file")
              .select("cluster", "source", "events", "lines", "groups", "problems", "error"),
              "files.parquet", "cluster", "source"),
        write(groups.select(*[name for name, _ in GROUP_COLUMNS]), "groups.parquet", "cluster", "source", "group_id"),
        write(groups.where(F.col("verdict") == "violation")
              .select("cluster", "source", "group_id", F.col("violation_seq").alias("seq"),
                      F.col("violation_line").alias("line"), F.col("violation_rule").alias("rule"),
                      F.col("violation_api").alias("api"), F.col("violation_connection").alias("connection"),
                      "broker_answered", "protocol_allows", F.col("violation_detail").alias("detail"),
                      "kafka_source"),
              "violations.parquet", "cluster", "source", "group_id"),
        write(groups.select("cluster", "source", "group_id",
                            F.posexplode(F.from_json("rebalances_json", REBALANCE_SCHEMA)).alias("index", "r"))
              .select("cluster", "source", "group_id", "index", "r.*"),
              "rebalances.parquet", "cluster", "source", "group_id", "index"),
    )
    return _summary(spark, out, files)


def _summary(spark: SparkSession, out: Path, files: list[str]) -> dict[str, Any]:
    """The summary of the written tables, its queries run at once."""
    per_file, by_verdict, by_problem, stats_rows = _concurrently(
        lambda: spark.read.parquet(str(out / "files.parquet")).select("source", "events").collect(),
        lambda: spark.read.parquet(str(out / "groups.parquet")).groupBy("verdict", "violation_rule").count().collect(),
        lambda: spark.read.parquet(str(out / "quarantine.parquet")).groupBy("problem", "dropped").count().collect(),
        lambda: spark.read.parquet(str(out / "rebalances.parquet")).agg(
            F.count(F.lit(1)).alias("n"), F.avg("duration_ms").alias("mean"),
            F.expr("percentile(duration_ms, 0.95)").alias("p95"),
            F.sum("partitions_moved").alias("moved"),
            F.sum("unowned_partition_ms").alias("unowned")).collect(),
    )
    twice = sorted(k for k, n in Counter(r["source"] for r in per_file).items() if n > 1)
    if twice:
        raise RuntimeError(f"files judged in parts (their verdicts would be wrong): {twice[:5]}")
    verdicts: dict[str, int] = {}
    rules: dict[str, int] = {}
    for r in by_verdict:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + int(r["count"])
        if r["verdict"] == "violation":
            rules[r["violation_rule"]] = rules.get(r["violation_rule"], 0) + int(r["count"])
    problems: dict[str, int] = {}
    dropped = 0
    for r in by_problem:
        problems[r["problem"]] = problems.get(r["problem"], 0) + int(r["count"])
        dropped += int(r["count"]) if r["dropped"] else 0
    stats = stats_rows[0]
    return {
        "files": len(files),
        "events": sum(int(r["events"] or 0) for r in per_file),
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
        lines.append(f"time: {t['total']:.0f} s (validation {t['validate']:.0f} s, outputs {t['outputs']:.0f} s), "
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

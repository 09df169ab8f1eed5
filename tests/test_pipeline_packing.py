"""How ``groupspec pipeline validate`` packs trace files into Spark tasks (binaryFile reader):
whole files, about ``TASKS_PER_CORE`` tasks per core, of nearly equal bytes. Spark's own
packing with the split size set to total bytes / tasks leaves a small last task (on 2 cores,
one core runs it while the other idles); :func:`balanced_split_bytes` picks the split size
that gives no more tasks than asked. The model of Spark's packing is checked against what
Spark really does with the same files."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

from groupspec.pipeline.validate_job import (
    TASKS_PER_CORE,
    balanced_split_bytes,
    reader_settings,
    spark_file_partitions,
)


def test_a_collection_like_the_benchmarks_is_packed_in_equal_tasks() -> None:
    # 400 files of about 1 MB (bench/pipeline.md's 10M-event collection) on 2 cores, 8 tasks
    rng = random.Random(7)
    sizes = [rng.randrange(1_000_000, 1_090_000) for _ in range(400)]
    total = sum(sizes) + len(sizes)
    naive = spark_file_partitions(sizes, -(-total // 8))
    assert len(naive) == 9 and len(naive[-1]) < 10  # the small last task the balanced size avoids
    tasks = spark_file_partitions(sizes, balanced_split_bytes(sizes, 8))
    assert len(tasks) == 8
    loads = [sum(t) for t in tasks]
    assert max(loads) - min(loads) <= 2 * max(sizes)
    assert sorted(n for t in tasks for n in t) == sorted(sizes)


@given(st.lists(st.integers(1, 5_000), min_size=1, max_size=60), st.integers(1, 16))
def test_the_balanced_split_size_is_the_smallest_giving_at_most_the_tasks_asked(sizes: list[int], tasks: int) -> None:
    size = balanced_split_bytes(sizes, tasks)
    packed = spark_file_partitions(sizes, size)
    assert len(packed) <= max(tasks, 1)
    assert sorted(n for t in packed for n in t) == sorted(sizes)
    lower_bound = -(-(sum(sizes) + len(sizes)) // tasks)  # no size below this can do
    if size > lower_bound:
        assert len(spark_file_partitions(sizes, size - 1)) > tasks


def test_spark_packs_the_files_as_modelled(spark: Any, tmp_path: Path) -> None:
    rng = random.Random(3)
    sizes = [rng.randrange(2_000, 40_000) for _ in range(37)]
    files = []
    for i, n in enumerate(sizes):
        f = tmp_path / f"f{i:02d}.bin"
        f.write_bytes(b"x" * n)
        files.append(str(f))
    parallelism = spark.sparkContext.defaultParallelism
    with reader_settings(spark, files):
        df = spark.read.format("binaryFile").load([os.path.abspath(f) for f in files]).select("length")
        got = (df.select(F.spark_partition_id().alias("p"), "length").collect())
    by_task: dict[int, list[int]] = {}
    for r in got:
        by_task.setdefault(r["p"], []).append(int(r["length"]))
    want = spark_file_partitions(sizes, balanced_split_bytes(sizes, parallelism * TASKS_PER_CORE))
    assert len(by_task) == len(want) == parallelism * TASKS_PER_CORE
    assert sorted(Counter(v).most_common() for v in by_task.values()) == sorted(Counter(t).most_common() for t in want)

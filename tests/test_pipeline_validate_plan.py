"""``groupspec pipeline validate`` reads Parquet traces (the columnar layout) with Spark's
readers and hands them to the Python workers as Arrow batches (issue 20): by default each
file's bytes through Spark's binaryFile reader (decoded in the worker with pyarrow, as
``groupspec validate`` decodes it), or, with ``reader="parquet"``, its rows through Spark's
own Parquet reader. Either way the committed injected collection (examples/injected/, as
Parquet) gets exactly the in-process verdicts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from groupspec.pipeline.validate_job import (
    BINARY,
    PARQUET,
    explain,
    reader_settings,
    run_validate,
    validation_frame,
)
from groupspec.trace.parquet import jsonl_to_parquet
from groupspec.validate import validate_path

INJECTED = Path(__file__).resolve().parent.parent / "examples" / "injected"


@pytest.fixture(scope="module")
def injected(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[Path]]:
    """The collection as JSON Lines and as Parquet."""
    tmp = tmp_path_factory.mktemp("injected")
    jsonl, parquet = [], []
    for f in sorted(INJECTED.glob("cluster-*.jsonl.gz")):
        src = tmp / f.name.removesuffix(".gz")
        src.write_bytes(gzip.decompress(f.read_bytes()))
        dst = tmp / "parquet" / src.with_suffix(".parquet").name
        dst.parent.mkdir(exist_ok=True)
        jsonl_to_parquet(src, dst)
        jsonl.append(src)
        parquet.append(dst)
    assert len(parquet) == 3
    return jsonl, parquet


@pytest.fixture(scope="module", params=[BINARY, PARQUET])
def outcome(request: pytest.FixtureRequest, spark: Any, injected: tuple[list[Path], list[Path]],
            tmp_path_factory: pytest.TempPathFactory) -> Any:
    _, parquet = injected
    return run_validate(spark, [str(parquet[0].parent)], tmp_path_factory.mktemp("out"), log=lambda _: None,
                        reader=request.param)


def test_plan_reads_with_spark_and_uses_arrow(outcome: Any) -> None:
    plan = outcome.plan
    assert "MapInArrow" in plan, plan
    if "FileScan parquet" in plan:
        assert "req_JoinGroup" in plan and "decoded" in plan  # the columnar layout's typed columns, not JSON text
    else:
        assert "FileScan binaryFile" in plan, plan
    # decoded once: no second pass over the events, no exchange of the events between tasks
    assert plan.count("FileScan") == 1 and "Exchange" not in plan, plan
    assert (outcome.out / "plan.txt").read_text() == plan


def test_both_readers_are_planned(spark: Any, injected: tuple[list[Path], list[Path]]) -> None:
    _, parquet = injected
    files = [str(p) for p in parquet]
    with reader_settings(spark, files, PARQUET):
        assert "FileScan parquet" in explain(validation_frame(spark, files, reader=PARQUET))
    with reader_settings(spark, files):
        assert "FileScan binaryFile" in explain(validation_frame(spark, files))
    with pytest.raises(ValueError, match="reader"):
        validation_frame(spark, files, reader="csv")


def test_injected_collection_verdicts_equal_in_process(injected: tuple[list[Path], list[Path]], outcome: Any) -> None:
    jsonl, _ = injected
    reports = {p.stem: validate_path(p) for p in jsonl}
    want = {(stem, g.group_id): json.loads(json.dumps(g.to_json())) for stem, r in reports.items() for g in r.groups}
    rows = pq.read_table(outcome.out / "groups.parquet").to_pylist()
    got = {(Path(r["source"]).stem, r["group_id"]): json.loads(r["verdict_json"]) for r in rows}
    assert len(got) == len(rows) == len(want)
    assert got == want
    # the committed verdicts, too (tests/test_injected_verdicts.py keeps them current)
    golden = json.loads((INJECTED / "verdicts.json").read_text())
    for name, report in golden.items():
        for g in report["groups"]:
            assert got[(Path(name).stem, g["group_id"])] == g
    manifest = json.loads((INJECTED / "manifest.json").read_text())
    violations = pq.read_table(outcome.out / "violations.parquet").to_pylist()
    assert {(Path(v["source"]).stem, v["group_id"]) for v in violations} == {
        (i["cluster"], i["group_id"]) for i in manifest["injected"]}
    assert outcome.summary["events"] == sum(r.events for r in reports.values())

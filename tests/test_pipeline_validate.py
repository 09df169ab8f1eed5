"""``groupspec pipeline validate`` on Spark gives the verdicts in-process ``groupspec validate``
gives (conforming, violating and damaged inputs), finds every injected violation of a
generated collection and no other, and quarantines bad records with their reasons."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from groupspec.pipeline.generate import generate
from groupspec.pipeline.inject import VIOLATION_KINDS
from groupspec.pipeline.validate_job import exit_status, run_validate
from groupspec.pipeline.validate_rows import check_rows, scan_file
from groupspec.trace.parquet import TEXT, jsonl_to_parquet
from groupspec.validate import exit_code, validate_path


def _in_process(paths: list[Path]) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for p in paths:
        for g in validate_path(p).groups:
            out[(str(p), g.group_id)] = json.loads(json.dumps(g.to_json()))
    return out


def _table(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Two clusters of generated groups with four injected violations, plus damaged copies."""
    root = tmp_path_factory.mktemp("collection")
    c = generate(9000, root / "gen", inject_k=4, seed=7, fmt="jsonl", clusters=2)
    manifest = json.loads((root / "gen" / "manifest.json").read_text())
    assert manifest["events"] == c.events >= 9000 and len(manifest["injected"]) == 4
    first = Path(c.clusters[0].source)
    lines = first.read_text().splitlines(keepends=True)
    damaged = root / "gen" / "damaged.jsonl"
    # a malformed line naming a group, a line whose group cannot be told, a dropped event,
    # a duplicated event, and a truncated last line
    bad = [*lines[:40], '{"kind":"exchange","group_id":"cluster-000-g0001","seq":40,\n', "not json at all\n"]
    bad += lines[41:300] + lines[301:500] + [lines[499]] + lines[500:900] + [lines[900][:55]]
    damaged.write_text("".join(bad))
    jsonl_to_parquet(damaged, root / "gen" / "damaged-copy.parquet")  # the columnar layout
    jsonl_to_parquet(damaged, root / "gen" / "damaged-text.parquet", layout=TEXT)  # the older text layout
    jsonl_to_parquet(c.clusters[1].source, root / "gen" / "cluster-001-copy.parquet")
    (root / "gen" / "unreadable.parquet").write_bytes(b"PAR1 this is not parquet")
    return root / "gen", manifest


@pytest.fixture(scope="module")
def outcome(spark: Any, collection: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Any:
    src, _ = collection
    out = tmp_path_factory.mktemp("validated")
    seen: list[tuple[str, int, int]] = []
    result = run_validate(spark, [str(src)], out, progress=lambda w, d, n: seen.append((w, d, n)),
                          log=lambda _: None, partitions=3)
    assert ("files validated", result.summary["files"], result.summary["files"]) in seen
    return result


def test_spark_verdicts_equal_in_process(collection: tuple[Path, dict[str, Any]], outcome: Any) -> None:
    src, _ = collection
    files = sorted(p for p in src.iterdir() if p.suffix in (".jsonl", ".parquet") and p.name != "unreadable.parquet")
    expected = _in_process(files)
    got = {(r["source"], r["group_id"]): json.loads(r["verdict_json"]) for r in _table(outcome.out / "groups.parquet")}
    assert got == expected
    verdicts = {v["verdict"] for v in got.values()}
    assert verdicts == {"conforming", "violation", "inconclusive"}  # all three kinds compared
    # the Parquet copies give what their JSON Lines originals give
    for a, b in (("damaged.jsonl", "damaged-copy.parquet"), ("damaged.jsonl", "damaged-text.parquet"),
                 ("cluster-001.jsonl", "cluster-001-copy.parquet")):
        left = {g: v for (s, g), v in got.items() if s == str(src / a)}
        right = {g: v for (s, g), v in got.items() if s == str(src / b)}
        assert left and left == right
    # the exit status agrees with groupspec validate's
    reports = [validate_path(f) for f in files]
    assert exit_status(outcome.summary) == exit_code(reports) == 1


def test_every_injected_violation_found_and_no_other(collection: tuple[Path, dict[str, Any]], outcome: Any) -> None:
    _src, manifest = collection
    injected = {(i["source"], i["group_id"]): i for i in manifest["injected"]}
    generated = {c["source"] for c in manifest["clusters"]}
    groups = [r for r in _table(outcome.out / "groups.parquet") if r["source"] in generated]
    violations = {(r["source"], r["group_id"]): r for r in _table(outcome.out / "violations.parquet")
                  if r["source"] in generated}
    assert set(violations) == set(injected)
    for key, inj in injected.items():
        v = violations[key]
        assert (v["seq"], v["line"]) == (inj["seq"], inj["line"]), (inj, v)
        assert v["rule"] in VIOLATION_KINDS[inj["kind"]]
    assert {inj["kind"] for inj in injected.values()} == set(VIOLATION_KINDS)
    assert all(r["verdict"] == "conforming" for r in groups if (r["source"], r["group_id"]) not in injected)
    assert len(groups) == manifest["groups"]


def test_quarantine_holds_bad_records_with_reasons(collection: tuple[Path, dict[str, Any]], outcome: Any) -> None:
    src, _ = collection
    q = _table(outcome.out / "quarantine.parquet")
    damaged = [r for r in q if r["source"] == str(src / "damaged.jsonl")]
    kinds = {r["problem"] for r in damaged}
    assert {"malformed_json", "truncated", "missing_events", "duplicate_event"} <= kinds
    dropped = {r["line"]: r for r in damaged if r["dropped"]}
    assert dropped[41]["group_id"] == "cluster-000-g0001" and dropped[41]["text"].startswith('{"kind":"exchange"')
    assert dropped[42]["text"] == "not json at all" and dropped[42]["reason"].startswith("not valid JSON")
    assert all(r["reason"] for r in q)
    # the same problems from the Parquet copy, line for line
    for name in ("damaged-copy.parquet", "damaged-text.parquet"):
        copy = [r for r in q if r["source"] == str(src / name)]
        assert [(r["line"], r["problem"], r["text"]) for r in copy] == [
            (r["line"], r["problem"], r["text"]) for r in damaged], name
    [unreadable] = [r for r in q if r["source"] == str(src / "unreadable.parquet")]
    assert unreadable["problem"] == "unreadable_file" and "Parquet" in unreadable["reason"]
    assert outcome.summary["quarantined_lines"] == sum(1 for r in q if r["dropped"])


def test_rebalance_metrics_and_summary(outcome: Any) -> None:
    rbs = _table(outcome.out / "rebalances.parquet")
    assert rbs and all(r["duration_ms"] >= 0 and r["members"] >= 1 and r["generation"] >= 1 for r in rbs)
    assert any(r["partitions_moved"] > 0 for r in rbs) and any(r["unowned_partition_ms"] > 0 for r in rbs)
    s = json.loads((outcome.out / "summary.json").read_text())
    groups = _table(outcome.out / "groups.parquet")
    assert s["verdicts"] == dict(sorted(Counter(r["verdict"] for r in groups).items()))
    assert s["verdicts"]["violation"] >= 4 + 2  # injected, and cluster-001's again in its Parquet copy
    assert s["events"] > 9000 and s["rebalances"]["count"] == len(rbs)
    assert any("events/s" in line for line in outcome.lines)
    assert not (outcome.out / "_results").exists()


def test_spark_parquet_reader_gives_the_same_tables(spark: Any, collection: tuple[Path, dict[str, Any]],
                                                    outcome: Any, tmp_path: Path) -> None:
    """Spark's own Parquet reader (both layouts) instead of its binaryFile reader: the same
    verdicts and the same quarantine."""
    src, _ = collection
    other = run_validate(spark, [str(src)], tmp_path / "out", log=lambda _: None, reader="parquet")
    assert "FileScan parquet" in other.plan
    for table in ("groups.parquet", "quarantine.parquet", "files.parquet"):
        def key(r: dict[str, Any]) -> str:
            return json.dumps(r, sort_keys=True, default=str)

        assert sorted(map(key, _table(other.out / table))) == sorted(map(key, _table(outcome.out / table))), table


def test_rows_without_spark_match(collection: tuple[Path, dict[str, Any]]) -> None:
    """The executor-side code alone (result rows in any order) gives the same verdicts."""
    src, _ = collection
    path = src / "damaged.jsonl"
    rows = list(scan_file(str(path)))[::-1]
    got = {r["group_id"]: json.loads(r["verdict_json"]) for r in check_rows(rows)}
    assert got == {g: v for (_, g), v in _in_process([path]).items()}


def test_cli_generate_and_validate(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from groupspec.cli.main import main

    gen = tmp_path / "gen"
    assert main(["pipeline", "generate", "--events", "1500", "--out", str(gen), "--inject-violations", "1",
                 "--seed", "3", "--no-spark"]) == 0
    manifest = json.loads((gen / "manifest.json").read_text())
    assert manifest["events"] >= 1500 and len(manifest["injected"]) == 1
    assert main(["pipeline", "validate", str(gen), "--out", str(tmp_path / "out"), "--partitions", "2"]) == 1
    out = capsys.readouterr().out
    assert "1 violation" in out and "events/s" in out
    # --reader picks how Parquet traces reach the workers; the verdicts are the same
    assert main(["pipeline", "validate", str(gen), "--out", str(tmp_path / "out-pq"), "--reader", "parquet"]) == 1
    assert "1 violation" in capsys.readouterr().out
    assert "FileScan parquet" in (tmp_path / "out-pq" / "plan.txt").read_text()
    assert "FileScan binaryFile" in (tmp_path / "out" / "plan.txt").read_text()
    shutil.rmtree(gen)  # a path that is gone is bad input, reported before Spark is asked
    assert main(["pipeline", "validate", str(gen), "--out", str(tmp_path / "out2")]) == 2
    assert f"error: INPUT: {gen}: no such file or directory" in capsys.readouterr().err
    assert not (tmp_path / "out2").exists()


def test_rows_without_spark_match_on_recordings_with_fetches(tmp_path: Path) -> None:
    """Recorder traces carry fetches (client rules) and are judged as reliable connections
    (AnsweredBeforeLaterRequests): the executor-side rows give the in-process verdicts, on
    Kafka's recordings and on one with a client bug and one with a broker that never answered."""
    recordings = sorted((Path(__file__).parents[1] / "examples/conformance/kafka-4.1.2").glob("*.jsonl"))
    objs = [json.loads(line) for line in recordings[0].read_text().splitlines() if line]
    fetches = [o for o in objs if o["kind"] == "fetch"]
    assert fetches, "the recording has fetches"
    exchanges = [o for o in objs if o["kind"] == "exchange"]
    hb = next(o for o in exchanges if o["api"] == "Heartbeat" and o["response"] is not None
              and any(x["connection"] == o["connection"] and x["sent_ms"] > o["received_ms"] + 1000
                      for x in exchanges))
    hb["response"], hb["received_ms"] = None, None
    silent = tmp_path / "silent-broker.jsonl"
    silent.write_text("".join(json.dumps(o) + "\n" for o in objs))
    for path in [*recordings, silent]:
        rows = list(scan_file(str(path)))
        got = {r["group_id"]: json.loads(r["verdict_json"]) for r in check_rows(rows)}
        assert got == {g: v for (_, g), v in _in_process([path]).items()}, path.name
    [verdict] = _in_process([silent]).values()
    assert verdict["verdict"] == "violation"


def test_rows_carry_the_kip848_metadata_and_broker_settings(tmp_path: Path, kip848_paused_trace: bytes) -> None:
    """A KIP-848 trace's metadata events and broker settings reach the per-group check of
    the pipeline as they reach the in-process validator: the same verdict."""
    path = tmp_path / "kip848.jsonl"
    path.write_bytes(kip848_paused_trace)
    [row] = check_rows(list(scan_file(str(path))))
    [g] = validate_path(path).groups
    assert row["verdict"] == g.verdict == "conforming"


def _damage_a_data_page(src: Path, dst: Path) -> None:
    """A copy of ``src`` whose footer reads but one column's first data page is garbage."""
    data = bytearray(src.read_bytes())
    col = pq.ParquetFile(src).metadata.row_group(0).column(5)
    for i in range(col.data_page_offset + 8, col.data_page_offset + min(60, col.total_compressed_size)):
        data[i] ^= 0x5A
    dst.write_bytes(bytes(data))


def test_spark_parquet_reader_quarantines_a_damaged_data_page(
        spark: Any, collection: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Spark's Parquet reader fails its whole job on one damaged page of a file whose footer
    reads; the job then reads that file by path (quarantined, with pyarrow's reason) and
    gives the tables the binaryFile reader gives."""
    src, _ = collection
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(src / "cluster-001-copy.parquet", inputs / "good.parquet")
    _damage_a_data_page(src / "cluster-001-copy.parquet", inputs / "damaged-page.parquet")
    pq.read_schema(inputs / "damaged-page.parquet")  # the footer reads ...
    with pytest.raises(OSError):
        pq.read_table(inputs / "damaged-page.parquet")  # ... the data does not
    said: list[str] = []
    by_spark = run_validate(spark, [str(inputs)], tmp_path / "pq", log=said.append, reader="parquet")
    assert any(line.startswith("Spark's Parquet reader failed") and "1 damaged file(s)" in line
               and line.endswith(str(inputs / "damaged-page.parquet")) for line in said), said
    by_bytes = run_validate(spark, [str(inputs)], tmp_path / "bin", log=lambda _: None)
    for table in ("groups.parquet", "quarantine.parquet", "files.parquet"):
        assert (sorted(json.dumps(r, sort_keys=True, default=str) for r in _table(by_spark.out / table))
                == sorted(json.dumps(r, sort_keys=True, default=str) for r in _table(by_bytes.out / table))), table
    [problem] = _table(by_spark.out / "quarantine.parquet")
    assert problem["source"] == str(inputs / "damaged-page.parquet") and problem["problem"] == "unreadable_file"
    assert problem["reason"].startswith(f"{inputs / 'damaged-page.parquet'}: not a readable Parquet trace: ")
    assert {r["source"] for r in _table(by_spark.out / "groups.parquet")} == {str(inputs / "good.parquet")}

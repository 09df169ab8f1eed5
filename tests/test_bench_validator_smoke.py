"""The validator benchmark's machinery on a tiny collection: rows and targets are there and
consistent. No timing is asserted (benchmarks measure; tests do not time)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import validator as bench


def test_in_process_rows_and_targets_on_a_tiny_collection() -> None:
    report = bench.run(1500, 1)
    assert report["events"] >= 1500
    rows = report["rows"]
    assert [(r["engine"], r["input"]) for r in rows] == [
        ("in-process (1 core)", "parquet"),
        ("in-process (1 core)", "parquet-text"),
        ("in-process (1 core)", "jsonl"),
    ]
    for r in rows:
        assert r["events"] == report["events"]
        assert r["events_per_s"] > 0 and r["peer_events_per_s"] > 0
        assert abs(r["ratio"] - r["seconds"] / r["peer_seconds"]) < 1e-9
        assert abs(r["validate_vs_floor"] * r["ratio"] - 1) < 1e-9
    [(name, measured, verdict)] = bench.targets(report)
    assert "250,000" in name and "events/s" in measured
    assert verdict == "met" or verdict.startswith("gap")
    text = bench.readme(report)
    assert "| in-process (1 core) | parquet |" in text and "## Targets" in text
    ab = report["optimistic"]
    assert ab["optimistic_cpu_seconds"] > 0 and ab["search_only_cpu_seconds"] > 0
    assert "with every replay a search from the start" in text

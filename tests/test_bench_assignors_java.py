"""The Java side-by-side assignor bench (bench/assignors_java.py) on a tiny non-uniform group:
both sides answer identically, times and ratios are there, and the README section is
written between its markers (replaced, not duplicated, on a second run). Needs Java."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import assignors_java as bench

pytestmark = pytest.mark.java


def test_tiny_group_matches_the_jar_and_renders(tmp_path: Path) -> None:
    shape = bench.Shape(members=12, topics=10, partitions=6, classes=10)
    assert len(set(bench.subscriptions(shape))) == 10
    disjoint = bench.subscriptions(shape, "disjoint")
    assert len(set(disjoint)) == 10
    assert not set(disjoint[0]) & set(disjoint[1])  # each class its own topics
    rows = bench.run(shape, runs=1, warmup=0) + bench.run(shape, 1, 0, layout="disjoint")
    assert [(r["layout"], r["scenario"]) for r in rows] == [
        ("overlapping", "fresh"),
        ("overlapping", "leave"),
        ("disjoint", "fresh"),
        ("disjoint", "leave"),
    ]
    for r in rows:
        assert r["identical"] is True
        assert r["groupspec_s"] > 0 and r["java_s"] > 0
        assert r["ratio"] == pytest.approx(r["java_s"] / r["groupspec_s"])
    readme = tmp_path / "README.md"
    readme.write_text("# Bench\n\nkept\n")
    bench.write_section(readme, bench.section(shape, rows, ["--quick"]))
    bench.write_section(readme, bench.section(shape, rows, ["--quick"]))
    text = readme.read_text()
    assert text.startswith("# Bench\n\nkept\n")
    assert text.count(bench.BEGIN) == 1 and text.count(bench.END) == 1
    assert "| overlapping | fresh |" in text and "| disjoint | leave |" in text


def test_java_not_finishing_in_time_is_a_lower_bound_row(tmp_path: Path) -> None:
    """With --java-timeout, a Java answer that does not come in time stops the JVM (the next
    scenario starts a new one) and the row says so, with the ratio as a lower bound."""
    shape = bench.Shape(members=12, topics=10, partitions=6, classes=10)
    rows = bench.run(shape, runs=1, warmup=3_000, java_timeout_s=1e-6)
    assert [r["scenario"] for r in rows] == ["fresh", "leave"]
    for r in rows:
        assert r["java_s"] is None and r["identical"] is None
        assert r["ratio"] == pytest.approx(r["java_waited_s"] / r["groupspec_s"])
    text = bench.section(shape, rows, ["--java-timeout", "0"])
    assert text.count("| did not finish in ") == 2 and "| > " in text
    assert bench.run(shape, runs=1, warmup=0, scenarios=("leave",))[0]["identical"] is True

"""The sweep through Spark: the tiny CI sweep on a local session gives exactly the rows the
same runs give in this process, its aggregates match a plain computation, and the report
has its summary and every plot. Spark must start: a failure to start fails these tests."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.pipeline.bootstrap import ratio_ci
from groupspec.pipeline.config import SweepConfig, load_config
from groupspec.pipeline.metrics import NONDETERMINISTIC, Row, RunRecord, run_inprocess
from groupspec.pipeline.report import PLOTS, write_report
from groupspec.pipeline.sweep import SweepOutcome, run_sweep
from groupspec.pipeline.tables import TABLES, read_table, write_table

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "examples/sweeps/tiny.toml"
PNG = b"\x89PNG\r\n\x1a\n"


def strip(row: Row) -> Row:
    return {k: v for k, v in row.items() if k not in NONDETERMINISTIC}


class Swept:
    def __init__(self, config: SweepConfig, outcome: SweepOutcome, progress: list[tuple[int, int]],
                 local: list[RunRecord]) -> None:
        self.config, self.outcome, self.progress, self.local = config, outcome, progress, local
        self.out = outcome.out


@pytest.fixture(scope="module")
def swept(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Swept:
    config = load_config(str(TINY))
    out = tmp_path_factory.mktemp("tiny-sweep")
    seen: list[tuple[int, int]] = []
    outcome = run_sweep(config, out, spark, log=lambda line: None, progress=lambda d, t: seen.append((d, t)))
    return Swept(config, outcome, seen, run_inprocess(config.runs()))


def test_spark_rows_equal_the_in_process_rows(swept: Swept) -> None:
    local = swept.local
    assert len(local) == 10
    assert [strip(r.run) for r in swept.outcome.records] == [strip(r.run) for r in local]
    runs = read_table(swept.out / "runs.parquet")
    assert [strip(r) for r in runs] == [strip(r.run) for r in local]
    assert read_table(swept.out / "rebalances.parquet") == [x for r in local for x in r.rebalances]
    assert read_table(swept.out / "violations.parquet") == [x for r in local for x in r.violations]
    # Something happened in every cell: the rows are not trivially equal.
    assert all(r.run["churn_rebalances"] >= 1 for r in local)
    assert all(r.run["verdicts_ok"] for r in local)


def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (Spark SQL's exact percentile)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def test_aggregates_equal_a_plain_computation(swept: Swept) -> None:
    by_strategy = read_table(swept.out / "by_strategy.parquet")
    stats = read_table(swept.out / "rebalance_stats.parquet")
    assert len(by_strategy) == len(swept.config.cells) == 5
    for row in by_strategy:
        runs = [r.run for r in swept.local if r.run["cell_id"].startswith(
            f"{row['churn']}/{row['strategy']}/n{row['group_size']}/p{row['partitions']}/d{row['delay_ms']}")]
        assert row["runs"] == len(runs) == 2
        assert row["runs_ok"] == sum(r["verdicts_ok"] for r in runs)
        assert row["mean_churn_unavailable_partition_s"] == pytest.approx(
            statistics.mean(r["churn_unavailable_partition_ms"] / 1000 for r in runs))
        assert row["max_churn_unavailable_partition_s"] == pytest.approx(
            max(r["churn_unavailable_partition_ms"] / 1000 for r in runs))
        assert row["mean_churn_partitions_moved"] == pytest.approx(
            statistics.mean(r["churn_partitions_moved"] for r in runs))
        assert row["mean_churn_rebalances"] == pytest.approx(statistics.mean(r["churn_rebalances"] for r in runs))
    for row in stats:
        rbs = [x for r in swept.local for x in r.rebalances
               if x["phase"] == "churn" and x["strategy"] == row["strategy"] and x["churn"] == row["churn"]
               and x["delay_ms"] == row["delay_ms"]]
        durations = [float(x["duration_ms"]) for x in rbs]
        assert row["rebalances"] == len(rbs)
        assert row["p50_duration_ms"] == pytest.approx(statistics.median(durations))
        assert row["p95_duration_ms"] == pytest.approx(_percentile(durations, 0.95))
        assert row["max_partitions_moved"] == max(x["partitions_moved"] for x in rbs)
    assert read_table(swept.out / "violations_by_kind.parquet") == []


def test_progress_counts_up_to_every_run(swept: Swept) -> None:
    assert swept.progress[-1] == (10, 10)
    done = [d for d, _ in swept.progress]
    assert done == sorted(done) and all(t == 10 for _, t in swept.progress)


def test_report_has_the_summary_numbers_and_every_plot(swept: Swept) -> None:
    out = swept.out
    for name in TABLES:
        assert (out / f"{name}.parquet").is_file()
    html = (out / "report.html").read_text(encoding="utf-8")
    md = (out / "report.md").read_text(encoding="utf-8")
    # every plot with something to show is there as PNG and SVG, with n on it; the tiny
    # sweep violates nothing, so the violations plot is a sentence instead of a panel
    drawn = [name for name in PLOTS if name != "violations"]
    for name in drawn:
        png, svg = out / "plots" / f"{name}.png", out / "plots" / f"{name}.svg"
        assert png.read_bytes().startswith(PNG)
        text = svg.read_text(encoding="utf-8")
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "n=2" in text, name  # two seeds: two runs per cell
        assert f"![{name}](plots/{name}.png)" in md and f"([SVG](plots/{name}.svg))" in md
        assert f"<figure id='{name}'><img alt='{name}' src='data:image/png;base64,iVBORw0KGgo" in html
        assert f"<a href='plots/{name}.svg'>SVG</a>" in html
    assert not (out / "plots" / "violations.png").exists() and not (out / "plots" / "violations.svg").exists()
    assert "No invariant was violated in any of the 10 runs, so there is no violations plot." in md
    assert "<figure id='violations'>" not in html
    # the box plots' median line is explained, in the text and under each box plot
    assert "the orange line inside the box: the median" in md
    assert md.count("the orange line inside the box: the median") == 4  # the text and 3 captions
    # The summary opens the report and states the rolling-restart and KIP-415 numbers.
    assert md.index("## Summary") < md.index("## Plots")
    rows = {(r["churn"], r["strategy"], r["delay_ms"]): r for r in read_table(out / "by_strategy.parquet")}
    eager = rows[("rolling-restart", "eager/range", 0)]
    coop = rows[("rolling-restart", "cooperative/cooperative-sticky", 0)]
    summary = swept.outcome.summary
    assert summary[0].startswith("**Rolling restart** (3 members, 6 partitions")
    assert f"leaves partitions without an owner for {eager['mean_churn_unavailable_partition_s']:.1f} partition-s" in summary[0]
    coop_line = next(line for line in summary if line.startswith("Cooperative rebalancing, cooperative/cooperative-sticky:"))
    assert f"({coop['mean_churn_unavailable_partition_s']:.1f} partition-s" in coop_line
    # every percentage quoted carries its bootstrap interval
    runs = read_table(out / "runs.parquet")

    def per_run(strategy: str, churn: str, delay: int, key: str, scale: float = 1.0) -> list[float]:
        return [r[key] / scale for r in runs if (r["strategy"], r["churn"], r["delay_ms"]) == (strategy, churn, delay)]

    ci = ratio_ci(per_run("cooperative/cooperative-sticky", "rolling-restart", 0, "churn_unavailable_partition_ms", 1000),
                  per_run("eager/range", "rolling-restart", 0, "churn_unavailable_partition_ms", 1000))
    assert ci is not None and ci.n_new == ci.n_old == 2 and ci.low <= ci.change <= ci.high
    assert f"({ci.text()})" in coop_line
    for line in summary:
        bare = re.sub(r"[+-]\d+%, 95% CI [+-]\d+% to [+-]\d+%", "", line)
        assert not re.search(r"[+-]\d+%", bare), f"a percentage without its interval: {line}"
    held, base = rows[("crash", "cooperative/cooperative-sticky", 10_000)], rows[("crash", "cooperative/cooperative-sticky", 0)]
    kip = next(line for line in summary if line.startswith("**KIP-415 after a crash**"))
    u, b = held["mean_churn_unavailable_partition_s"], base["mean_churn_unavailable_partition_s"]
    assert u > b  # the crashed member's partitions wait out the delay
    assert f"without a delay, {b:.1f} partition-s without an owner" in kip
    assert f"a 10 s delay adds {u - b:.1f} partition-s" in kip and f"{u:.1f} in all" in kip
    assert "95% confidence interval from a percentile bootstrap (2000 resamples of each cell's 2 runs" in md
    assert summary[-1] == "Every invariant held in all 10 runs."
    assert "Every invariant held in all 10 runs." in html and "<strong>Rolling restart</strong>" in html
    # no Python repr in the report (None, True, quoted lists and dicts, enum names)
    for text in (md, html):
        hit = re.search(r"\bNone\b|\b(True|False)\b|\[\('|\{'|'\w+': |<[\w.]+ object at 0x", text)
        assert hit is None, text[max(hit.start() - 80, 0):hit.end() + 80]
    # one meaning per column name: per-run means and all-run counts are told apart
    assert "| rebalances / run |" in md and "| rebalances (all runs) |" in md
    assert "| rebalances |" not in md and "| moves |" not in md


def test_report_is_the_same_when_drawn_again(swept: Swept, tmp_path: Path) -> None:
    out = tmp_path / "again"
    shutil.copytree(swept.out, out)
    write_report(out)
    for name in ("plots/unavailability.svg", "plots/rebalance_duration.svg"):
        assert (out / name).read_bytes() == (swept.out / name).read_bytes(), name

    def text(d: Path) -> list[str]:  # the Setup line's timings are sweep.json's, rewritten after the report
        return [x for x in (d / "report.md").read_text(encoding="utf-8").splitlines() if "Spark master" not in x]

    assert text(out) == text(swept.out)


def test_the_html_report_renders_in_a_real_browser(swept: Swept, render_in_browser: Any) -> None:
    """Chromium draws the sweep's page: not blank, and the plots are on it (the
    unavailability plot's bar colours), not broken-image boxes."""
    shown = render_in_browser(swept.out / "report.html", (1280, 3000))
    colours = shown.colours()
    assert len(colours) > 500, f"{len(colours)} colours: a blank or broken page"
    assert colours.get((255, 255, 255), 0) < 0.97 * sum(colours.values()), "the page is (almost) all white"
    for name, rgb in (("stop-the-world bar", (0xC0, 0x39, 0x2B)), ("outside-rebalance bar", (0xF5, 0xB0, 0x41))):
        assert colours.get(rgb, 0) > 500, f"no {name} on the page: the plot did not render"
    assert "<h2>Summary</h2>" in shown.dom and "95% CI" in shown.dom


def test_report_shows_violations_when_there_are_some(swept: Swept, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(swept.out, out)
    runs = read_table(out / "runs.parquet")
    runs[0]["verdicts_ok"] = False
    from groupspec.pipeline.metrics import RUN_COLUMNS
    from groupspec.pipeline.spark import VIOLATIONS_BY_KIND_COLUMNS

    write_table(out / "runs.parquet", runs, RUN_COLUMNS)
    write_table(out / "violations_by_kind.parquet",
                [{"kind": "NoConcurrentOwnersInv", "churn": "crash", "strategy": "cooperative/cooperative-sticky",
                  "violations": 3, "runs_with_violation": 1}], VIOLATIONS_BY_KIND_COLUMNS)
    summary = write_report(out)
    assert summary[-1].startswith("Invariants failed in 1 of 10 runs")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<td>NoConcurrentOwnersInv</td>" in html and "<figure id='violations'>" in html
    assert (out / "plots/violations.png").read_bytes().startswith(PNG)
    assert "n = 10 runs" in (out / "plots/violations.svg").read_text(encoding="utf-8")
    assert "so there is no violations plot" not in (out / "report.md").read_text(encoding="utf-8")


def test_cli_sweep_runs_on_the_active_session_and_leaves_it_running(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli"
    assert main(["pipeline", "sweep", str(TINY), "--out", str(out), "--seeds", "1"]) == 0
    captured = capsys.readouterr()
    assert "cells done 5/5 (100%)" in captured.err
    assert "done in" in captured.out and "report.html" in captured.out
    assert len(read_table(out / "runs.parquet")) == 5
    assert spark.range(3).count() == 3  # the test session is still up
    assert main(["pipeline", "report", str(out)]) == 0
    assert main(["pipeline", "report", str(tmp_path)]) == 2


@pytest.mark.slow
def test_spark_submit_runs_the_sweep(tmp_path: Path) -> None:
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    script = ROOT / "reference/groupspec/pipeline/submit.py"
    out = tmp_path / "submitted"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false", str(script),
         "sweep", str(TINY), "--out", str(out), "--seeds", "1"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "on local[1]" in proc.stdout
    assert len(read_table(out / "runs.parquet")) == 5
    assert (out / "report.html").is_file()

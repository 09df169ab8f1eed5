"""The pipeline benchmark's machinery on a tiny collection, on Spark and in process: the three
runs happen, agree, and the ratios are computed from the times they report. No timing is asserted
(benchmarks measure; tests do not time)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import pipeline as bench
from groupspec.pipeline.generate import generate


def test_one_core_against_two_on_a_tiny_collection(tmp_path: Path) -> None:
    col = generate(1500, tmp_path / "col", seed=3)
    report = bench.run(0, 2, tmp_path / "col", seed=3)
    one, two = report["runs"]
    assert (one["cores"], two["cores"]) == (1, 2)
    # the job counts each file's header line as an event; the manifest does not
    assert report["events"] == col.events + len(col.clusters)
    for r in (one, two):
        # the JVM and the Python workers are seen and their CPU counted
        assert r["cpu_jvm_s"] > 0 and r["cpu_python_s"] > 0
        assert r["events"] == report["events"]
        assert 0 < r["job_s"] <= r["wall_s"]
        assert r["validate_s"] + r["outputs_s"] <= r["job_s"] + 0.2  # rounded to 0.1 s each
    base = report["in_process"]
    assert base["events"] == report["events"] and base["verdicts"] == dict(sorted(one["verdicts"].items()))
    assert abs(report["one_core_vs_in_process"] - base["job_s"] / one["job_s"]) < 1e-9
    assert one["verdicts"] == two["verdicts"]
    assert sum(one["verdicts"].values()) == sum(c.groups for c in col.clusters)
    assert abs(report["scaling_job"] - one["job_s"] / two["job_s"]) < 1e-9
    issue8, issue20, in_process = bench.targets(report)
    assert "1.6x one core" in issue8[0] and "1.8x one core" in issue20[0] and "in-process" in in_process[0]
    for _name, measured, verdict in (issue8, issue20, in_process):
        assert "wall time" in measured
        assert verdict == "met" or verdict.startswith("gap")
    text = bench.readme(report)
    assert "| Spark local[1] |" in text and "| Spark local[2] |" in text and "| in process" in text
    assert "## Target" in text


def test_the_cpu_of_a_run_s_process_tree_is_counted() -> None:
    # a child that spends about a second of CPU in a grandchild: both are found under the
    # command's pid, whatever else the machine runs
    burn = "import time; t = time.process_time()\nwhile time.process_time() - t < 1.0: pass"
    spawn = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}], check=True)"
    proc, cpu = bench.run_measured([sys.executable, "-c", spawn])
    assert proc.returncode == 0
    assert cpu["jvm"] == 0
    assert 0.6 <= cpu["python"] <= 3.0

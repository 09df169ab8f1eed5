"""Benchmark the trace validator and the Spark validation pipeline (issue 8).

    python -m bench.validator [--events N] [--out PATH] [--quick]

One run measures, on one generated collection of recorded-wire-format traces (the
simulator with fault schedules, ``groupspec pipeline generate``):

- the in-process validator, one core, from Parquet and from JSON Lines: events per second,
  side by side with its own floor, reading and decoding the same files without validating
  (the ratio says what validation itself costs);
- the Spark job (``groupspec pipeline validate``) on ``local[1]`` and ``local[2]``: events
  per second and the scaling ratio (issue 8's target: N cores reach at least 0.8 x N times
  one core).

Prints a table with the ratios and the targets, writes JSON to bench/results/validator.json
and regenerates bench/validator.md (machine and date included). Timing is never asserted in
the test suite; tests/test_bench_smoke.py only checks that this runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from groupspec.pipeline.generate import generate
from groupspec.validate.load import load_path
from groupspec.validate.validator import validate_path

ROOT = Path(__file__).resolve().parent.parent
TARGET_EVENTS_PER_S = 250_000
TARGET_SCALING = 0.8


def _best(fn: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _files(directory: Path, suffix: str) -> list[Path]:
    return sorted(directory.glob(f"*{suffix}"))


def _spark_seconds(inputs: Path, cores: int) -> tuple[float, str]:
    """Wall time of `groupspec pipeline validate` on local[cores], in a fresh process (so
    each run has its own JVM), and the summary line it printed."""
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "groupspec", "pipeline", "validate", str(inputs),
             "--out", out, "--master", f"local[{cores}]"],
            capture_output=True, text=True, check=False,
        )
        seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"pipeline validate on local[{cores}] failed:\n{proc.stderr[-2000:]}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return seconds, lines[-1] if lines else ""


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": list(os.getloadavg()),
    }


def run(events: int, runs: int, spark: bool) -> dict[str, Any]:
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="bench-validator-") as tmp:
        parquet_dir = Path(tmp) / "parquet"
        jsonl_dir = Path(tmp) / "jsonl"
        print(f"generating about {events:,} events ...", file=sys.stderr, flush=True)
        col = generate(events, parquet_dir, seed=7)
        generate(events, jsonl_dir, seed=7, fmt="jsonl")
        n = col.events
        rows: list[dict[str, Any]] = []
        for fmt, directory, suffix in (("parquet", parquet_dir, ".parquet"),
                                       ("jsonl", jsonl_dir, ".jsonl")):
            files = _files(directory, suffix)
            print(f"in-process, {fmt} ...", file=sys.stderr, flush=True)

            def decode(files: list[Path] = files) -> object:
                return [load_path(f) for f in files]

            def check(files: list[Path] = files) -> object:
                return [validate_path(f) for f in files]

            decode_s = _best(decode, runs)
            validate_s = _best(check, runs)
            rows.append({
                "engine": "in-process (1 core)", "input": fmt, "events": n,
                "seconds": validate_s, "events_per_s": n / validate_s,
                "peer": "read + decode only", "peer_seconds": decode_s,
                "peer_events_per_s": n / decode_s, "ratio": validate_s / decode_s,
            })
        if spark:
            one, _ = _spark_seconds(parquet_dir, 1)
            print(f"spark local[1]: {one:.1f} s", file=sys.stderr, flush=True)
            two, summary = _spark_seconds(parquet_dir, 2)
            print(f"spark local[2]: {two:.1f} s", file=sys.stderr, flush=True)
            rows.append({
                "engine": "spark local[2]", "input": "parquet", "events": n, "seconds": two,
                "events_per_s": n / two, "peer": "spark local[1]", "peer_seconds": one,
                "peer_events_per_s": n / one, "ratio": one / two, "summary": summary,
            })
    return {
        "command": "python -m bench.validator " + " ".join(sys.argv[1:]),
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "events": n,
        "rows": rows,
    }


def targets(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for r in report["rows"]:
        if r["engine"].startswith("in-process") and r["input"] == "parquet":
            got = r["events_per_s"]
            out.append((f"validator >= {TARGET_EVENTS_PER_S:,} events/s, one core, Parquet",
                        f"{got:,.0f} events/s", "met" if got >= TARGET_EVENTS_PER_S else
                        f"gap ({TARGET_EVENTS_PER_S / got:.0f}x short)"))
        if r["engine"] == "spark local[2]":
            need = TARGET_SCALING * 2
            out.append((f"Spark on 2 cores >= {need:.1f}x one core",
                        f"{r['ratio']:.2f}x", "met" if r["ratio"] >= need else "gap"))
    return out


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        "| engine | input | events | seconds | events/s | peer | peer events/s | ratio |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in report["rows"]:
        ratio = (f"{r['ratio']:.2f}x slower than the peer" if r["peer"].startswith("read")
                 else f"{r['ratio']:.2f}x the peer's speed")
        lines.append(
            f"| {r['engine']} | {r['input']} | {r['events']:,} | {r['seconds']:.2f} | "
            f"{r['events_per_s']:,.0f} | {r['peer']} | {r['peer_events_per_s']:,.0f} | {ratio} |"
        )
    return lines


def readme(report: dict[str, Any]) -> str:
    m = report["machine"]
    parts = [
        "# Validator and pipeline benchmarks (issue 8)",
        "",
        "<!-- Generated by `python -m bench.validator`; edit bench/validator.py, not this file. -->",
        "",
        "```sh",
        "python -m bench.validator                  # 200,000 events, in-process and Spark",
        "python -m bench.validator --events 2000000 # larger",
        "python -m bench.validator --quick          # 20,000 events, no Spark",
        "```",
        "",
        "## This run",
        "",
        f"- command: `{report['command']}`",
        f"- date: {report['started']} to {report['finished']} (UTC)",
        f"- machine: {m['cpu']}, {m['cores']} cores, CPython {m['python']}, {m['platform']}",
        f"- load average at the end: {m['load_average']} (a shared machine makes times noisy)",
        f"- collection: {report['events']:,} events from `groupspec pipeline generate` (seed 7)",
        "",
        "## Method",
        "",
        "The in-process rows time `groupspec.validate.validate_path` over every file of the "
        "collection (best of the runs), next to reading and decoding the same files without "
        "validating (`load_path`): the ratio is what validation costs over the I/O floor. The "
        "Spark row times `groupspec pipeline validate` end to end (JVM start included) on "
        "`local[2]` next to `local[1]`, each in a fresh process.",
        "",
        "## Results",
        "",
        *table(report),
        "",
        "## Targets",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
        *[f"| {t} | {g} | {v} |" for t, g, v in targets(report)],
        "",
    ]
    return "\n".join(parts)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.validator", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--runs", type=int, default=2, help="best of this many in-process runs")
    p.add_argument("--no-spark", action="store_true")
    p.add_argument("--quick", action="store_true", help="20,000 events, one run, no Spark, no README")
    p.add_argument("--out", type=Path, default=None, help="JSON results (default bench/results/validator.json)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.events, args.runs, args.no_spark = 20_000, 1, True
    if not args.no_spark and shutil.which("java") is None:
        print("bench.validator: Spark needs Java; use --no-spark", file=sys.stderr)
        return 2
    report = run(args.events, args.runs, spark=not args.no_spark)
    print("\n".join(table(report)))
    print()
    for t, g, v in targets(report):
        print(f"{t}: {g} -> {v}")
    out = args.out or ROOT / "bench" / "results" / ("validator-quick.json" if args.quick else "validator.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not args.quick:
        (ROOT / "bench" / "validator.md").write_text(readme(report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

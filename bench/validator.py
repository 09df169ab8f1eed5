"""Benchmark the trace validator in process, on one core (issue 8).

    python -m bench.validator [--events N] [--out PATH] [--quick]

One run measures, on one generated collection of recorded-wire-format traces (the
simulator with fault schedules, ``groupspec pipeline generate``), the in-process validator
from Parquet and from JSON Lines: events per second, side by side with its own floor,
reading and decoding the same files without validating (the ratio says what validation
itself costs). The Spark pipeline's scaling with cores is :mod:`bench.pipeline`.

Prints a table with the ratios and the targets, writes JSON to bench/results/validator.json
and regenerates bench/validator.md (machine and date included). Timing is never asserted in
the test suite; tests/test_bench_smoke.py only checks that this runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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


def _best(fn: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _files(directory: Path, suffix: str) -> list[Path]:
    return sorted(directory.glob(f"*{suffix}"))


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


def run(events: int, runs: int) -> dict[str, Any]:
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
    return out


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        "| engine | input | events | seconds | events/s | peer | peer events/s | ratio |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in report["rows"]:
        ratio = f"{r['ratio']:.2f}x slower than the peer"
        lines.append(
            f"| {r['engine']} | {r['input']} | {r['events']:,} | {r['seconds']:.2f} | "
            f"{r['events_per_s']:,.0f} | {r['peer']} | {r['peer_events_per_s']:,.0f} | {ratio} |"
        )
    return lines


def readme(report: dict[str, Any]) -> str:
    m = report["machine"]
    parts = [
        "# Validator benchmark (issue 8)",
        "",
        "<!-- Generated by `python -m bench.validator`; edit bench/validator.py, not this file. -->",
        "",
        "```sh",
        "python -m bench.validator                  # 200,000 events",
        "python -m bench.validator --events 2000000 # larger",
        "python -m bench.validator --quick          # 20,000 events, no README",
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
        "Spark pipeline's scaling with cores is in [pipeline.md](pipeline.md) "
        "(`python -m bench.pipeline`).",
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
    p.add_argument("--quick", action="store_true", help="20,000 events, one run, no README")
    p.add_argument("--out", type=Path, default=None, help="JSON results (default bench/results/validator.json)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.events, args.runs = 20_000, 1
    report = run(args.events, args.runs)
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

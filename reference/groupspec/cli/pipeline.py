"""``groupspec pipeline``: research sweeps of simulated consumer groups on Spark.

``sweep CONFIG --out DIR``  run every cell of the grid (x seeds) on Spark executors and
                            write Parquet tables, plots and a report to DIR
``check CONFIG``            validate a sweep and show its cells without running it
``report DIR``              redraw the report of a finished sweep from its tables

CONFIG is a JSON or TOML file (format: :mod:`groupspec.pipeline.config`) or the name of a
bundled sweep (``default``). Under spark-submit, run ``groupspec/pipeline/submit.py`` with
the same arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from groupspec.pipeline.config import (
    CHURN_HELP,
    PROTOCOLS,
    SweepConfig,
    SweepConfigError,
    load_config,
)


def _epilog() -> str:
    lines = ["protocols:"]
    lines += [f"  {name:<20} {what}" for name, (_, _, what) in PROTOCOLS.items()]
    lines += ["", "churn patterns:"]
    lines += [f"  {name:<20} {what}" for name, what in CHURN_HELP.items()]
    lines += [
        "",
        "examples:",
        "  groupspec pipeline check default",
        "  groupspec pipeline sweep default --out sweep-out",
        "  groupspec pipeline sweep examples/sweeps/tiny.toml --out /tmp/tiny --seeds 1",
        "  groupspec pipeline sweep my.toml --out out --master spark://host:7077",
        "",
        "exit status: 0 when the sweep ran (invariant violations are results, in the report), "
        "2 on a bad config.",
    ]
    return "\n".join(lines)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "pipeline",
        help="research sweeps of simulated groups on Spark: Parquet tables, plots, a report",
        description="Sweep a grid of protocols, assignors, group sizes and churn patterns through "
                    "the simulator on Spark; write Parquet tables and a report with plots.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    sw = verbs.add_parser("sweep", help="run a sweep on Spark and write tables and a report")
    sw.add_argument("config", metavar="CONFIG", help="sweep file (JSON or TOML) or bundled name (default)")
    sw.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    sw.add_argument("--master", metavar="URL",
                    help="Spark master (default: local[*], or the one spark-submit was given)")
    sw.add_argument("--seeds", type=int, metavar="N", help="run seeds 1..N per cell instead of the config's")
    sw.set_defaults(func=run_sweep_command)
    ck = verbs.add_parser("check", help="validate a sweep and list its cells without running it")
    ck.add_argument("config", metavar="CONFIG")
    ck.add_argument("--seeds", type=int, metavar="N")
    ck.set_defaults(func=run_check)
    rp = verbs.add_parser("report", help="redraw the report of a finished sweep")
    rp.add_argument("out", metavar="DIR")
    rp.set_defaults(func=run_report)

    def no_verb(args: argparse.Namespace) -> int:
        p.print_help()
        return 2

    p.set_defaults(func=no_verb)


def _load(args: argparse.Namespace) -> SweepConfig | None:
    try:
        config = load_config(args.config)
        if args.seeds is not None:
            config = config.with_seeds(args.seeds)
    except SweepConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return None
    return config


def run_check(args: argparse.Namespace) -> int:
    config = _load(args)
    if config is None:
        return 2
    for line in config.skip_lines():
        print(line)
    for cell in config.cells:
        print(cell.cell_id)
    print(f"{len(config.cells)} cell(s) x {len(config.seeds)} seed(s) = {len(config.runs())} runs")
    return 0


def run_sweep_command(args: argparse.Namespace) -> int:
    config = _load(args)
    if config is None:
        return 2
    from groupspec.pipeline.spark import spark_session
    from groupspec.pipeline.sweep import run_sweep

    tty = sys.stderr.isatty()
    started = time.monotonic()
    shown = {"done": -1, "step": -1, "at": started}

    def progress(done: int, total: int) -> None:
        """Every change on a terminal; otherwise each 5% step, or every 15 s, as a line."""
        if done == shown["done"]:
            return
        now = time.monotonic()
        step = done * 20 // max(total, 1)
        if not tty and done != total and step == shown["step"] and now - shown["at"] < 15:
            return
        shown.update(done=done, step=step, at=now)
        text = (f"cells done {done}/{total} ({done * 100 // max(total, 1)}%), "
                f"{now - started:.0f} s")
        if tty:
            print(f"\r{text}", end="\n" if done == total else "", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    from pyspark.sql import SparkSession

    existing = SparkSession.getActiveSession()
    spark = spark_session(args.master)
    try:
        outcome = run_sweep(config, Path(args.out), spark, progress=progress)
    finally:
        if existing is None:  # stop only the session this command started
            spark.stop()
    print(f"done in {outcome.elapsed_s:.0f} s: {outcome.out}/report.html, {outcome.out}/report.md")
    for line in outcome.summary:
        print(f"  {line.replace('**', '')}")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from groupspec.pipeline.report import write_report

    out = Path(args.out)
    if not (out / "sweep.json").is_file():
        print(f"error: DIR: {out} holds no sweep (no sweep.json)", file=sys.stderr)
        return 2
    for line in write_report(out):
        print(line.replace("**", ""))
    return 0

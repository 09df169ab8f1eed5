"""``groupspec pipeline``: research sweeps of simulated consumer groups on Spark.

``sweep CONFIG --out DIR``  run every cell of the grid (x seeds) on Spark executors and
                            write Parquet tables, plots and a report to DIR
``check CONFIG``            validate a sweep and show its cells without running it
``report DIR``              redraw the report of a finished sweep from its tables
``validate INPUT... --out DIR``  validate trace collections per group (groupspec.pipeline.validate_job)
``generate --events N --out DIR``  write a synthetic trace collection (groupspec.pipeline.generate)

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

from groupspec.cli.inputs import (
    InputError,
    broker_config_arg,
    int_in,
    output_dir,
    report,
    spark_master,
)
from groupspec.pipeline.config import (
    CHURN_HELP,
    MAX_SEEDS,
    PROTOCOLS,
    SweepConfig,
    SweepConfigError,
    load_config,
)
from groupspec.validate.replay import ReplayConfig

#: limits of the pipeline's arguments (docs/pipeline.md): Spark partitions of the per-group
#: step, events and clusters of a generated collection, milliseconds (an int32, as Kafka's)
MAX_SPARK_PARTITIONS = 100_000
MAX_GENERATED_EVENTS = 1_000_000_000
MAX_CLUSTERS = 100_000
MAX_MS = 2**31 - 1


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
    sw.add_argument("--seeds", type=int_in(1, MAX_SEEDS), metavar="N", help="run seeds 1..N per cell instead of the config's")
    sw.set_defaults(func=run_sweep_command)
    ck = verbs.add_parser("check", help="validate a sweep and list its cells without running it")
    ck.add_argument("config", metavar="CONFIG")
    ck.add_argument("--seeds", type=int_in(1, MAX_SEEDS), metavar="N")
    ck.set_defaults(func=run_check)
    va = verbs.add_parser(
        "validate", help="validate trace collections per group on Spark (same checker as groupspec validate)",
        description="Validate many traces (JSON Lines or Parquet; many groups, many clusters) per group "
                    "on Spark with the validator of `groupspec validate`. Writes groups.parquet, "
                    "violations.parquet, rebalances.parquet, quarantine.parquet (bad input, with the "
                    "reason), files.parquet and summary.json to DIR. Exit status as groupspec validate: "
                    "0 all conforming, 1 a violation, 2 inconclusive or bad input.")
    va.add_argument("inputs", nargs="+", metavar="INPUT", help="trace files or directories of them")
    va.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    va.add_argument("--master", metavar="URL",
                    help="Spark master (default: local[*], or the one spark-submit was given)")
    va.add_argument("--partitions", type=int_in(1, MAX_SPARK_PARTITIONS), metavar="N",
                    help=f"at most this many tasks read JSON Lines and unreadable files by path "
                         f"(at most {MAX_SPARK_PARTITIONS:,}; Parquet files are packed a few tasks per core)")
    va.add_argument("--reader", choices=("binary", "parquet"), default="binary",
                    help="how Parquet traces reach the workers: 'binary' (default), each file's bytes "
                         "decoded by pyarrow in the worker; 'parquet', Spark's own Parquet reader "
                         "(slower on the columnar layout's nested columns; docs/pipeline.md)")
    va.add_argument("--slack-ms", type=int_in(0, MAX_MS), default=ReplayConfig.slack_ms, metavar="MS",
                    help=f"as groupspec validate (default {ReplayConfig.slack_ms})")
    va.add_argument("--initial-delay-ms", type=int_in(0, MAX_MS), action="append", metavar="MS",
                    help="as groupspec validate (repeatable; default: try 3000, then 0)")
    va.add_argument("--broker-config", type=broker_config_arg, action="append", default=[], metavar="NAME=VALUE",
                    help="as groupspec validate: a broker setting by Kafka's name (repeatable; default: each "
                         "trace header's, else Kafka's defaults)")
    va.add_argument("--keep-scan", action="store_true", help="keep the per-file result rows in DIR/_results")
    va.set_defaults(func=run_validate_command)
    ge = verbs.add_parser(
        "generate", help="write a large synthetic trace collection, optionally with injected violations",
        description="Simulate many groups with random fault schedules, merged into one trace file per "
                    "cluster, and inject protocol violations at known events (listed in "
                    "DIR/manifest.json).")
    ge.add_argument("--events", type=int_in(1, MAX_GENERATED_EVENTS), required=True, metavar="N", help="at least this many events in all")
    ge.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    ge.add_argument("--inject-violations", type=int_in(0, MAX_GENERATED_EVENTS), default=0, metavar="K",
                    help="put K violations into K groups (kinds: stale_commit, double_owner)")
    ge.add_argument("--seed", type=int_in(-(2**63), 2**63 - 1), default=1, metavar="S")
    ge.add_argument("--clusters", type=int_in(1, MAX_CLUSTERS), metavar="C", help="files to write (default: one per ~25,000 events)")
    ge.add_argument("--format", choices=("parquet", "jsonl"), default="parquet")
    # (groupspec.pipeline.generate.GROUP_PROTOCOLS, not imported to build the parser)
    ge.add_argument("--group-protocol", choices=("classic", "consumer", "both"), default="classic",
                    help="the members' protocol: classic (JoinGroup/SyncGroup, the default), consumer "
                         "(KIP-848, a server-side assignor drawn per group), or both (each group one "
                         "or the other)")
    ge.add_argument("--master", metavar="URL", help="Spark master (default local[*])")
    ge.add_argument("--no-spark", action="store_true", help="generate in this process, without Spark")
    ge.set_defaults(func=run_generate_command)
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
        report(e)
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
    output_dir(args.out, "--out")
    spark_master(args.master)
    config = _load(args)
    if config is None:
        return 2
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

    spark, stop = _session(args.master, "groupspec-sweep")
    try:
        outcome = run_sweep(config, Path(args.out), spark, progress=progress)
    finally:
        if stop:  # stop only the session this command started
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


def _progress_printer(label_total: bool = True) -> Any:
    """A progress callback (what, done, total): a line per 5% step or 15 s (every change on
    a terminal)."""
    tty = sys.stderr.isatty()
    started = time.monotonic()
    shown: dict[str, Any] = {"key": None, "step": -1, "at": started}

    def progress(what: str, done: int, total: int) -> None:
        now = time.monotonic()
        step = done * 20 // max(total, 1)
        if (what, done) == shown["key"]:
            return
        if not tty and done != total and step == shown["step"] and now - shown["at"] < 15:
            return
        shown.update(key=(what, done), step=step, at=now)
        text = f"{what} {done:,}/{total:,} ({done * 100 // max(total, 1)}%), {now - started:.0f} s"
        if tty:
            print(f"\r{text}", end="\n" if done == total else "", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    return progress


def _session(master: str | None, app: str, light_jvm: bool = True) -> tuple[Any, bool]:
    from pyspark.sql import SparkSession

    from groupspec.pipeline.spark import spark_session

    existing = SparkSession.getActiveSession()
    try:
        return spark_session(master, app_name=app, light_jvm=light_jvm), existing is None
    except Exception as e:  # py4j and Spark raise many kinds; the first line says what
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise InputError("--master", f"cannot start Spark on {master or 'local[*]'}: {first}") from None


def run_validate_command(args: argparse.Namespace) -> int:
    delays = tuple(args.initial_delay_ms) if args.initial_delay_ms else ReplayConfig.initial_delays_ms
    # Everything that can be checked is checked before Spark starts (it takes seconds).
    for raw in args.inputs:
        if not Path(raw).exists():
            raise InputError("INPUT", f"{raw}: no such file or directory")
    output_dir(args.out, "--out")
    spark_master(args.master)
    from groupspec.pipeline.validate_job import exit_status, find_inputs, run_validate

    if not find_inputs(args.inputs):
        raise InputError("INPUT", "no trace files (*.jsonl, *.parquet) found")
    from groupspec.validate.validator import with_command_line

    try:
        config = with_command_line(ReplayConfig(initial_delays_ms=delays, slack_ms=args.slack_ms),
                                   dict(args.broker_config), bool(args.initial_delay_ms))
    except ValueError as e:
        raise InputError("--broker-config", str(e)) from None
    # Spark's own Parquet reader decodes in the JVM: it keeps the JVM's optimising compiler
    spark, stop = _session(args.master, "groupspec-validate", light_jvm=args.reader != "parquet")
    try:
        outcome = run_validate(spark, args.inputs, Path(args.out), config, _progress_printer(),
                               keep_scan=args.keep_scan, partitions=args.partitions,
                               reader=args.reader)
    finally:
        if stop:
            spark.stop()
    print(f"done: {outcome.out}/groups.parquet, violations.parquet, rebalances.parquet, quarantine.parquet")
    for line in outcome.lines:
        print(f"  {line}")
    return exit_status(outcome.summary)


def run_generate_command(args: argparse.Namespace) -> int:
    from groupspec.pipeline.generate import generate, plan_clusters

    out = output_dir(args.out, "--out")
    spark_master(args.master)
    try:
        plan_clusters(args.events, out, args.inject_violations, args.seed, args.format, args.clusters,
                      group_protocol=args.group_protocol)
    except ValueError as e:
        return report(e)
    show = _progress_printer()

    def progress(done: int, total: int) -> None:
        show("clusters written", done, total)

    spark, stop = (None, False) if args.no_spark else _session(args.master, "groupspec-generate")
    try:
        c = generate(args.events, out, args.inject_violations, args.seed, args.format, args.clusters,
                     spark=spark, progress=progress, group_protocol=args.group_protocol)
    finally:
        if spark is not None and stop:
            spark.stop()
    print(f"{c.events:,} events, {sum(x.groups for x in c.clusters):,} groups in {len(c.clusters)} file(s) "
          f"under {out}, {len(c.injected)} violation(s) injected; {c.elapsed_s:.0f} s; "
          f"manifest: {out}/manifest.json")
    return 0

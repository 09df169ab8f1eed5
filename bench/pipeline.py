"""Benchmark the Spark validation pipeline against the in-process validator and its
scaling with cores (issues 8 and 20).

    python -m bench.pipeline [--events N] [--cores 2] [--inputs DIR] [--quick]

One run generates a collection of recorded-wire-format traces (``groupspec pipeline
generate``, Parquet; or takes ``--inputs``), then, one after the other on the same files:
``groupspec validate``'s own code (:func:`groupspec.validate.validate_path`, file after
file in one fresh process), and ``groupspec pipeline validate`` on ``local[1]`` and on
``local[N]``, each in a fresh process (its own JVM). It reports:

- end-to-end wall time and events per second (interpreter, JVM and Spark session start
  included);
- the job's own time, which ``pipeline validate`` writes into its ``summary.json``
  (validation + outputs, without starting Spark), and the in-process validator's time
  without the interpreter's start: on a small collection start-up is a large fixed share
  of the wall time, which no number of cores shortens, so the ratios use these times;
- Spark on one core against the in-process validator (issue 20: at least 0.8x), and N
  cores against one (issue 8: at least 0.8 x N; issue 20: at least 0.9 x N).

The verdict counts of the three runs must be equal: a run whose answers differ is an
error, not a measurement. Prints the table, writes JSON to ``bench/results/pipeline.json`` and
regenerates ``bench/pipeline.md``. Timing is never asserted in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.report import machine, publish, targets_table, this_run, verdict

#: issue 8: N cores at least 0.8 x N times one core; issue 20: 0.9 x N
TARGET_SCALING = 0.8
TARGET_SCALING_20 = 0.9
#: issue 20: Spark on one core at least 0.8 x the in-process validator's rate
TARGET_ONE_CORE = 0.8

#: validate_path over the collection's files in this process; prints seconds, events, verdicts
_IN_PROCESS = """
import json, sys, time
from collections import Counter
from groupspec.pipeline.validate_job import find_inputs
from groupspec.validate import validate_path
files = find_inputs(sys.argv[1:])
t0 = time.perf_counter()
reports = [validate_path(f) for f in files]
seconds = time.perf_counter() - t0
verdicts = Counter(g.verdict for r in reports for g in r.groups)
print(json.dumps({"seconds": seconds, "events": sum(r.events for r in reports), "verdicts": dict(verdicts)}))
"""


def _groupspec(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groupspec", *args], capture_output=True, text=True,
                          check=False)


#: how often the CPU time of a run's processes is read (a process's last interval is lost)
_CPU_POLL_S = 0.25


def _proc_table() -> dict[int, tuple[int, float, bool]]:
    """Every process's (parent pid, CPU seconds so far, whether it is a JVM), from /proc."""
    hz = os.sysconf("SC_CLK_TCK")
    table: dict[int, tuple[int, float, bool]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                exe = f.read().split(b"\0", 1)[0]
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # after the command name, which may hold spaces
        table[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / hz,
                             os.path.basename(exe) == b"java")
    return table


def run_measured(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], dict[str, float]]:
    """Run ``argv`` and read, while it runs, the CPU seconds its process tree uses: ``jvm``
    (Spark's JVM) and ``python`` (the command's interpreter and Spark's Python workers). On
    a shared machine this says what the run itself cost, and how many cores it kept busy."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: dict[int, tuple[float, bool]] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            table = _proc_table() if os.path.isdir("/proc") else {}
            tree = {proc.pid}
            grew = True
            while grew:
                grew = False
                for pid, (parent, _, _) in table.items():
                    if parent in tree and pid not in tree:
                        tree.add(pid)
                        grew = True
            for pid in tree & table.keys():
                seen[pid] = table[pid][1], table[pid][2]
            stop.wait(_CPU_POLL_S)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    stop.set()
    watcher.join()
    cpu = {"jvm": sum(c for c, jvm in seen.values() if jvm),
           "python": sum(c for c, jvm in seen.values() if not jvm)}
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), cpu


def generate(events: int, out: Path, seed: int, clusters: int | None = None) -> int:
    """Generate the collection with Spark on every core; returns its event count."""
    proc = _groupspec(["pipeline", "generate", "--events", str(events), "--out", str(out),
                       "--seed", str(seed), "--format", "parquet",
                       *(["--clusters", str(clusters)] if clusters else [])])
    if proc.returncode != 0:
        raise RuntimeError(f"pipeline generate failed:\n{proc.stderr[-2000:]}")
    return count_events(out)


def count_events(inputs: Path) -> int:
    """The events ``pipeline generate`` wrote (its manifest's count, without header lines)."""
    manifest = inputs / "manifest.json"
    return int(json.loads(manifest.read_text(encoding="utf-8"))["events"])


def validate_on(inputs: Path, cores: int) -> dict[str, Any]:
    """One ``pipeline validate`` run on ``local[cores]`` in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out:
        t0 = time.perf_counter()
        proc, cpu = run_measured([sys.executable, "-m", "groupspec", "pipeline", "validate", str(inputs),
                                  "--out", out, "--master", f"local[{cores}]"])
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"pipeline validate on local[{cores}] failed:\n{proc.stderr[-2000:]}")
        summary = json.loads((Path(out) / "summary.json").read_text(encoding="utf-8"))
    return {"cores": cores, "wall_s": wall, "job_s": float(summary["timing_s"]["total"]),
            "validate_s": float(summary["timing_s"]["validate"]), "outputs_s": float(summary["timing_s"]["outputs"]),
            "events": int(summary["events"]), "verdicts": summary["verdicts"],
            "cpu_jvm_s": cpu["jvm"], "cpu_python_s": cpu["python"]}


def validate_in_process(inputs: Path) -> dict[str, Any]:
    """``validate_path`` over the collection's files, one after the other, in a fresh process."""
    t0 = time.perf_counter()
    proc, cpu = run_measured([sys.executable, "-c", _IN_PROCESS, str(inputs)])
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"in-process validation failed:\n{proc.stderr[-2000:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"cores": 1, "wall_s": wall, "job_s": float(got["seconds"]), "events": int(got["events"]),
            "verdicts": dict(sorted(got["verdicts"].items())), "cpu_jvm_s": cpu["jvm"], "cpu_python_s": cpu["python"]}


def run(events: int, cores: int, inputs: Path | None, seed: int, clusters: int | None = None) -> dict[str, Any]:
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-col-") as tmp:
        if inputs is None:
            inputs = Path(tmp) / "collection"
            print(f"generating about {events:,} events (Spark, every core) ...", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            made = generate(events, inputs, seed, clusters)
            print(f"  {made:,} events in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        print("validate_path in process ...", file=sys.stderr, flush=True)
        base = validate_in_process(inputs)
        print(f"  wall {base['wall_s']:.1f} s, validation {base['job_s']:.1f} s", file=sys.stderr, flush=True)
        runs = []
        for c in (1, cores):
            print(f"pipeline validate on local[{c}] ...", file=sys.stderr, flush=True)
            r = validate_on(inputs, c)
            print(f"  wall {r['wall_s']:.1f} s, job {r['job_s']:.1f} s", file=sys.stderr, flush=True)
            runs.append(r)
    one, many = runs
    if one["verdicts"] != many["verdicts"] or one["events"] != many["events"]:
        raise RuntimeError(f"local[1] and local[{cores}] disagree: {one['verdicts']} vs {many['verdicts']}")
    if base["verdicts"] != dict(sorted(one["verdicts"].items())) or base["events"] != one["events"]:
        raise RuntimeError(f"in process and local[1] disagree: {base['verdicts']} vs {one['verdicts']}")
    n = one["events"]  # as the job counts them: the files' header lines too
    return {
        "command": "python -m bench.pipeline " + " ".join(sys.argv[1:]),
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "events": n,
        "cores": cores,
        "in_process": base,
        "runs": runs,
        "scaling_job": one["job_s"] / many["job_s"],
        "scaling_wall": one["wall_s"] / many["wall_s"],
        "one_core_vs_in_process": base["job_s"] / one["job_s"],
        "one_core_vs_in_process_wall": base["wall_s"] / one["wall_s"],
        "verdicts": one["verdicts"],
    }


def _cpu_cells(r: dict[str, Any]) -> str:
    """CPU seconds of the run's processes (JVM, Python) and the cores they kept busy on
    average over the whole command; '-' for a report written before these were read."""
    if "cpu_jvm_s" not in r:
        return "- | - | -"
    total = r["cpu_jvm_s"] + r["cpu_python_s"]
    return f"{r['cpu_jvm_s']:.1f} | {r['cpu_python_s']:.1f} | {total / r['wall_s']:.2f}"


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        "| run | events | wall s | wall events/s | job s | job events/s | validation s | outputs s "
        "| CPU s, JVM | CPU s, Python | cores busy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    b = report["in_process"]
    lines.append(f"| in process (validate_path) | {b['events']:,} | {b['wall_s']:.1f} | {b['events'] / b['wall_s']:,.0f} | "
                 f"{b['job_s']:.1f} | {b['events'] / b['job_s']:,.0f} | {b['job_s']:.1f} | - | {_cpu_cells(b)} |")
    for r in report["runs"]:
        lines.append(
            f"| Spark local[{r['cores']}] | {r['events']:,} | {r['wall_s']:.1f} | {r['events'] / r['wall_s']:,.0f} | "
            f"{r['job_s']:.1f} | {r['events'] / r['job_s']:,.0f} | {r['validate_s']:.1f} | {r['outputs_s']:.1f} | "
            f"{_cpu_cells(r)} |"
        )
    return lines


def targets(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    c = report["cores"]
    got = report["scaling_job"]
    scaled = f"{got:.2f}x (wall time, JVM start included: {report['scaling_wall']:.2f}x)"
    one = report["one_core_vs_in_process"]
    return [
        (f"Spark on {c} cores >= {TARGET_SCALING * c:.1f}x one core (issue 8, job time)", scaled,
         verdict(got, TARGET_SCALING * c)),
        (f"Spark on {c} cores >= {TARGET_SCALING_20 * c:.1f}x one core (issue 20, job time; asked at 10M events)",
         scaled, verdict(got, TARGET_SCALING_20 * c)),
        (f"Spark on one core >= {TARGET_ONE_CORE}x the in-process validator (issue 20, job time)",
         f"{one:.2f}x (wall time, start-up included: {report['one_core_vs_in_process_wall']:.2f}x)",
         verdict(one, TARGET_ONE_CORE)),
    ]


def readme(report: dict[str, Any]) -> str:
    c = report["cores"]
    parts = [
        "# Spark pipeline benchmark (issues 8 and 20)",
        "",
        "<!-- Generated by `python -m bench.pipeline`; edit bench/pipeline.py, not this file. -->",
        "",
        "```sh",
        "python -m bench.pipeline                     # 1,000,000 events, local[1] against local[2]",
        "python -m bench.pipeline --events 10000000   # the issue's size (about 20 min on 2 cores)",
        "python -m bench.pipeline --inputs DIR        # an existing collection",
        "```",
        "",
        *this_run(report, f"{report['events']:,} events from `groupspec pipeline generate`, Parquet"),
        f"- verdicts (equal on all three runs): {json.dumps(report['verdicts'], sort_keys=True)}",
        "",
        "## Method",
        "",
        "On the same files, one after the other: the in-process validator (`validate_path`, file "
        f"after file, one fresh process), then `groupspec pipeline validate` on `local[1]` and on `local[{c}]`, "
        "each in a fresh process. *wall* is the whole command (interpreter, JVM and Spark session "
        "start included); *job* is the time the job itself reports in its `summary.json` "
        "(validation: Spark's binaryFile reader, each file's bytes to a Python worker in an Arrow "
        "batch, decoded once there and every group judged; outputs: the Parquet tables and the "
        "summary), and "
        "for the in-process run the time `validate_path` took. The scaling is the job time on "
        f"one core over the job time on {c}; issue 8 asks for at least {TARGET_SCALING} x {c}, "
        f"issue 20 for {TARGET_SCALING_20} x {c}. One core against the in-process validator is the "
        f"in-process time over the one-core job time; issue 20 asks for at least {TARGET_ONE_CORE}. "
        "The machine is shared: a ratio from one run is more trustworthy than any single rate. "
        "*CPU s* is the CPU time of the run's processes, read from /proc every quarter second while "
        "it runs (a process's last quarter second is not counted): *JVM* is Spark's JVM, *Python* the "
        "command's interpreter and Spark's Python workers; *cores busy* is their sum over the wall time. "
        "Spark's JVM works beside the Python worker even on `local[1]` (reading the files, moving "
        "Arrow batches, writing the results), so a one-core job keeps more than one core busy, and "
        f"on a machine of {c} cores local[{c}] can gain at most about {c} / (cores busy on local[1]) "
        "over it.",
        "",
        "## Results",
        "",
        *table(report),
        "",
        "## Target",
        "",
        *targets_table(targets(report)),
        "",
        "## Notes",
        "",
        "- How the job reads Parquet: Spark's `binaryFile` reader hands each file's bytes to a Python "
        "worker in an Arrow batch (`mapInArrow`), which decodes the columnar layout in bulk with pyarrow "
        "(`loaded_from_arrow`, as `groupspec validate` does) and judges every group of the file. Spark's own "
        "Parquet reader (`reader=\"parquet\"`, `FileScan parquet` -> `MapInArrow`) gives the same verdicts, but "
        "on 1M columnar events (2026-11-26, same machine) its JVM side alone, decoding the layout's nested "
        "structs row by row and converting them to Arrow, took about 45 s per million rows on one core, "
        "twice the in-process validator's whole run (25.5 s); Spark on one core reached 0.22x in process "
        "that way.",
        "- A file, not a group, is the unit a task decodes: a group's verdict depends on the rest of its file "
        "(seq holes, duplicates, lines whose group cannot be told, undecodable frames on its connections, "
        "the header and metadata images), so a group-by shuffle would need every file decoded twice or "
        "its routing rebuilt; files are packed whole, about 4 tasks per core.",
        *_scaling_note(report),
        "- The job's fixed costs (JVM and session start, the first tasks' warm-up, the output step's Spark "
        "jobs) weigh on a 1M-event run and fade at the issue's 10M; at 1M the ratios are lower for that "
        "reason alone. The machine's 2 cores are shared with other engineers' jobs: when they run, a second "
        "Spark core buys little, and single rates move by 2x between runs; compare the ratios within one run.",
        "",
    ]
    return "\n".join(parts)


def _scaling_note(report: dict[str, Any]) -> list[str]:
    """The note on what limits the second core, with this run's own figures."""
    one, many = report["runs"]
    c = many["cores"]
    lines = [
        "- What limits the second core: Spark's JVM works beside the Python worker even on local[1] "
        "(reading files, moving Arrow batches, writing results). With both of HotSpot's compilers it used "
        "about 20 s of CPU on a 1M-event local[1] run (2026-11-27), half of it C2 compiling Spark's own "
        "code; a local JVM groupspec starts now runs with C1 alone "
        "(`groupspec.pipeline.spark.LIGHT_JVM_OPTIONS`, docs/pipeline.md). Files are packed into tasks "
        "of nearly equal bytes, about 4 per core (`balanced_split_bytes`, docs/pipeline.md), so no core "
        "waits on a last small task. The outputs step (a few seconds of small Spark jobs, mostly waiting "
        "on their scheduling) takes as long on several cores as on one.",
    ]
    if "cpu_python_s" in one and one["cpu_python_s"] > 0:
        extra = many["cpu_python_s"] / one["cpu_python_s"] - 1
        lines.append(
            f"- In this run the validation step alone scaled {one['validate_s'] / many['validate_s']:.2f}x "
            f"({one['validate_s']:.1f} s -> {many['validate_s']:.1f} s), the job {report['scaling_job']:.2f}x, "
            f"and the Python workers used {extra:+.1%} CPU time on local[{c}] against local[1] for the same "
            "work. That last figure tells whether the host let the cores run freely: on this shared "
            "machine it has ranged from about 0% (a fair run) to +19% (two busy vCPUs slowing each other, which "
            "caps local[2] near 1.7x whatever the job does), so judge the scaling by a run where it is small."
        )
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.pipeline", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--cores", type=int, default=2, help="cores of the second run (default 2)")
    p.add_argument("--inputs", type=Path, default=None, help="validate this collection instead of generating one")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--clusters", type=int, default=None,
                   help="files of the generated collection (default: one per 25,000 events)")
    p.add_argument("--quick", action="store_true", help="20,000 events in 4 files, no README")
    p.add_argument("--out", type=Path, default=None, help="JSON results (default bench/results/pipeline.json)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.events = 20_000
        args.clusters = args.clusters or 4  # a file is one task: one file would leave a core idle
    if shutil.which("java") is None:
        print("bench.pipeline: Spark needs Java on PATH", file=sys.stderr)
        return 2
    if args.cores < 2:
        print("bench.pipeline: --cores must be at least 2 (it is compared with one core)", file=sys.stderr)
        return 2
    if args.inputs is not None and not args.inputs.is_dir():
        print(f"bench.pipeline: --inputs {args.inputs}: not a directory", file=sys.stderr)
        return 2
    report = run(args.events, args.cores, args.inputs, args.seed, args.clusters)
    publish("pipeline", report, table(report), targets(report), readme, args.quick, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

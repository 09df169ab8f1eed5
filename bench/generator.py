"""Benchmark the collection generator in process, on one core (issue 20, item 5).

    python -m bench.generator [--events N] [--runs R] [--out PATH] [--quick]

One run measures ``groupspec pipeline generate`` (:func:`groupspec.pipeline.generate.generate`,
no Spark) writing Parquet (the columnar layout) and JSON Lines: events per second of one
process, which is one core (the generator is single-threaded; pyarrow's writer threads are
counted in the CPU-time columns). Side by side in the same run, two peers:

- the reference path: the same collection the long way, as the generator made it before
  issue 20 item 5 (every group a full simulator run, with its timeline, invariant checks,
  metrics and Fetch events, filtered afterwards; the files written by the public writers,
  Parquet parsed back from its lines), reported as a speed-up;
- the write floor: writing the same events (already simulated and merged) with no
  simulation, reported as the share of the generator's time that writing takes.

A components table splits one cluster's cost per event: the simulator (scenario, runner,
reference client and coordinator), merging the groups, and encoding and writing.

Prints the tables and the target, writes JSON to bench/results/generator.json and
regenerates bench/generator.md (machine and date included). Timing is never asserted in the
test suite.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.report import best_of, machine, publish, targets_table, this_run, verdict
from groupspec.gc_pause import paused_gc
from groupspec.pipeline import generate as gen
from groupspec.sim.scenario import parse_scenario
from groupspec.trace import events as ev
from groupspec.trace.jsonl import event_to_json

TARGET_EVENTS_PER_S = 60_000
SEED = 7
FORMATS = ("parquet", "jsonl")


def _reference_write(events: list[ev.Event], path: str, fmt: str) -> None:
    """The writers the generator used before: the public Parquet writer (which parses each
    line back), and one ``json.dumps`` and write per JSON Lines line."""
    if fmt == "parquet":
        from groupspec.trace.parquet import write_events

        write_events(events, path)
        return
    with open(path, "w", encoding="utf-8") as fh:
        for e in events:
            fh.write(json.dumps(event_to_json(e), separators=(",", ":")) + "\n")


@contextmanager
def reference_path() -> Iterator[None]:
    """:func:`gen.generate` on the reference path while the block runs."""
    saved = gen.simulate_group, gen.write_trace_file
    gen.simulate_group, gen.write_trace_file = gen.simulate_group_reference, _reference_write
    try:
        yield
    finally:
        gen.simulate_group, gen.write_trace_file = saved


def _digest(directory: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for f in sorted(directory.glob("cluster-*")):
        h.update(f.read_bytes())
    return h.hexdigest()


def components(events: int) -> dict[str, Any]:
    """One cluster of about ``events`` events, by phase, in µs per event (CPU time), the
    cycle collector paused as generate pauses it."""
    with paused_gc():
        return _components(events)


def _components(events: int) -> dict[str, Any]:
    plan = gen.plan_clusters(events, Path("."), 0, SEED, "jsonl", 1)[0]
    rng = random.Random(f"{plan.seed}/{plan.cluster}")
    c0 = time.process_time()
    groups: list[list[ev.Event]] = []
    total = 0
    scenario_s = 0.0
    while total < plan.target_events:
        gid = f"{plan.cluster}-g{len(groups):04d}"
        s0 = time.process_time()
        parse_scenario(gen.group_scenario(gid, random.Random(len(groups)), plan.faults), gid)
        scenario_s += time.process_time() - s0
        groups.append(gen.simulate_group(gid, rng, plan.faults))
        total += len(groups[-1])
    c1 = time.process_time()
    merged: list[ev.Event] = [ev.Header(source="bench", cluster=plan.cluster)]
    merged += [e for _, _, e in gen.merge(groups)]
    c2 = time.process_time()
    out: dict[str, Any] = {"events": total, "groups": len(groups)}
    with tempfile.TemporaryDirectory(prefix="bench-generator-") as tmp:
        for fmt in FORMATS:
            w0 = time.process_time()
            gen.write_trace_file(merged, str(Path(tmp) / f"c.{fmt}"), fmt)
            out[f"write_{fmt}_us"] = (time.process_time() - w0) / total * 1e6
    out["simulate_us"] = (c1 - c0) / total * 1e6
    out["scenario_us"] = scenario_s / total * 1e6  # a second parse, timed apart: part of simulate
    out["merge_us"] = (c2 - c1) / total * 1e6
    return out


def run(events: int, runs: int, reference_events: int) -> dict[str, Any]:
    started = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-generator-") as tmp:
        # one-time costs (imports, pyarrow's first write) are not the rate
        gen.generate(500, Path(tmp) / "warm-p", seed=1, fmt="parquet")
        gen.generate(500, Path(tmp) / "warm-j", seed=1, fmt="jsonl")
        merged = _merged(events)
        for fmt in FORMATS:
            print(f"generate, {fmt} ...", file=sys.stderr, flush=True)
            d = Path(tmp) / fmt

            def new(d: Path = d, fmt: str = fmt) -> gen.Collection:
                return gen.generate(events, d, seed=SEED, fmt=fmt)

            secs, cpu, col = best_of(new, runs)
            assert isinstance(col, gen.Collection)
            n = col.events
            # the reference path on a smaller collection (it is slow): the same seed, so the
            # same first clusters
            print(f"reference path, {fmt} ...", file=sys.stderr, flush=True)
            rd, nd = Path(tmp) / f"ref-{fmt}", Path(tmp) / f"new-{fmt}"

            def ref(rd: Path = rd, fmt: str = fmt) -> gen.Collection:
                with reference_path():
                    return gen.generate(reference_events, rd, seed=SEED, fmt=fmt)

            ref_s, ref_cpu, ref_col = best_of(ref, 1)
            assert isinstance(ref_col, gen.Collection)
            new_small = gen.generate(reference_events, nd, seed=SEED, fmt=fmt)
            same = _digest(rd) == _digest(nd) and new_small.events == ref_col.events
            # the write floor: the same events, simulated and merged already, written again
            print(f"write floor, {fmt} ...", file=sys.stderr, flush=True)
            wd = Path(tmp) / f"floor-{fmt}"
            wd.mkdir()

            def floor(fmt: str = fmt, wd: Path = wd) -> None:
                for i, evs in enumerate(merged):
                    gen.write_trace_file(evs, str(wd / f"c{i}.{fmt}"), fmt)

            floor_s, floor_cpu, _ = best_of(floor, runs)
            floor_n = sum(len(x) - 1 for x in merged)
            rows.append({
                "format": fmt, "events": n, "seconds": secs, "events_per_s": n / secs,
                "cpu_seconds": cpu, "cpu_events_per_s": n / cpu,
                "reference_events": ref_col.events, "reference_seconds": ref_s,
                "reference_events_per_s": ref_col.events / ref_s,
                "reference_cpu_events_per_s": ref_col.events / ref_cpu,
                "speedup": (n / cpu) / (ref_col.events / ref_cpu),
                "byte_identical": same,
                "floor_events_per_s": floor_n / floor_s,
                "floor_cpu_events_per_s": floor_n / floor_cpu,
                "write_share": (floor_cpu / floor_n) / (cpu / n),
            })
    print("components ...", file=sys.stderr, flush=True)
    comp = components(min(events, 25_000))
    return {
        "command": "python -m bench.generator " + " ".join(sys.argv[1:]),
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "events": events,
        "rows": rows,
        "components": comp,
    }


def _merged(events: int) -> list[list[ev.Event]]:
    """The collection's clusters as merged event lists (the header first), as generate has them."""
    out: list[list[ev.Event]] = []
    for plan in gen.plan_clusters(events, Path("."), 0, SEED, "jsonl"):
        rng = random.Random(f"{plan.seed}/{plan.cluster}")
        groups: list[list[ev.Event]] = []
        total = 0
        while total < plan.target_events:
            groups.append(gen.simulate_group(f"{plan.cluster}-g{len(groups):04d}", rng, plan.faults))
            total += len(groups[-1])
        out.append([ev.Header(source="bench", cluster=plan.cluster), *(e for _, _, e in gen.merge(groups))])
    return out


def targets(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for r in report["rows"]:
        got = r["cpu_events_per_s"]
        out.append((f"generator >= {TARGET_EVENTS_PER_S:,} events/s per core, {r['format']}",
                    f"{got:,.0f} events/s by CPU time ({r['events_per_s']:,.0f} by wall clock)",
                    verdict(got, TARGET_EVENTS_PER_S, digits=1)))
    return out


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        "| format | events | seconds | events/s | events/s (CPU time) | reference path events/s (CPU time) "
        "| speed-up (CPU time) | same bytes as the reference | write floor events/s (CPU time) | writing's share |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['format']} | {r['events']:,} | {r['seconds']:.2f} | {r['events_per_s']:,.0f} | "
            f"{r['cpu_events_per_s']:,.0f} | {r['reference_cpu_events_per_s']:,.0f} "
            f"({r['reference_events']:,} events) | {r['speedup']:.1f}x | "
            f"{'yes' if r['byte_identical'] else 'NO'} | {r['floor_cpu_events_per_s']:,.0f} | "
            f"{r['write_share']:.0%} |"
        )
    return lines


def components_table(report: dict[str, Any]) -> list[str]:
    c = report["components"]
    rows = [
        ("simulate (scenario, runner, client, coordinator)", c["simulate_us"]),
        ("  of which building the scenario", c["scenario_us"]),
        ("merge (time order, renumbering)", c["merge_us"]),
        ("encode + write, Parquet", c["write_parquet_us"]),
        ("encode + write, JSON Lines", c["write_jsonl_us"]),
    ]
    budget = 1e6 / TARGET_EVENTS_PER_S
    return [
        f"One cluster, {c['events']:,} events in {c['groups']} groups; µs per event (CPU time). "
        f"The target leaves {budget:.1f} µs per event for everything.",
        "",
        "| component | µs per event |",
        "|---|---:|",
        *[f"| {name} | {us:.1f} |" for name, us in rows],
    ]


def readme(report: dict[str, Any]) -> str:
    parts = [
        "# Generator benchmark (issue 20, item 5)",
        "",
        "<!-- Generated by `python -m bench.generator`; edit bench/generator.py, not this file. -->",
        "",
        "```sh",
        "python -m bench.generator                  # 200,000 events",
        "python -m bench.generator --events 1000000 # larger",
        "python -m bench.generator --quick          # 20,000 events, no README",
        "```",
        "",
        *this_run(report, f"about {report['events']:,} events from `groupspec pipeline generate` (seed {SEED})"),
        "",
        "## Method",
        "",
        "Each row times `groupspec.pipeline.generate.generate(events, dir, seed=7, fmt=...)` in "
        "this process, no Spark (best of the runs): the generator is single-threaded, so events/s "
        "is events/s per core; the CPU-time columns divide by the process's CPU seconds "
        "(`time.process_time`, pyarrow's writer threads included), what the work cost when other "
        "jobs take the cores. The reference path is the code path the generator took before item 5 (a full "
        "simulator run per group, its timeline, invariant checks, metrics and Fetch events "
        "computed and then dropped; the public writers, which for Parquet parse every line back), "
        "run in the same process on a smaller collection of the same seed; \"same bytes\" compares "
        "its cluster files with the new path's. The write floor writes the same events, already "
        "simulated and merged, with no simulation; \"writing's share\" is its cost per event over "
        "the generator's.",
        "",
        "## Results",
        "",
        *table(report),
        "",
        *BEFORE,
        "",
        "## Where the time goes",
        "",
        *components_table(report),
        "",
        *REMAINS,
        "",
        "## Targets",
        "",
        *targets_table(targets(report)),
        "",
    ]
    return "\n".join(parts)


#: the generator before item 5, measured beside it once (not by each run of this module)
BEFORE = [
    "The reference path runs with today's simulator loop, consumer and paused cycle collector, "
    "so its speed-up understates the change. The generator as of commit 553c602 (before item "
    "5), run from a `git archive` of that commit beside the current tree on 2026-11-26 (load "
    "average about 4.2, `generate(40000, seed=7)`, CPU time, two runs each): Parquet 3,278 "
    "and 3,800 events/s before, 15,965 and 16,935 after (4.5-5x); JSON Lines 4,685 and 4,807 "
    "before, 17,063 and 16,978 after (3.5-3.6x). Both wrote the same cluster files byte for "
    "byte (same SHA-256).",
    "",
    "The skipped steps and the other changes of 2026-11-27 (below), measured the same way "
    "against commit 8cafca6 (before them), runs alternating (load average about 1.5 to 4 on "
    "2 cores), commit cd63fd7: JSON Lines 17,622 and 17,490 events/s before, 34,635 and "
    "32,794 after (1.9-2.0x); Parquet 15,409 and 14,938 before, 23,195 and 22,048 after "
    "(1.5x). Same SHA-256 of the cluster files, both formats.",
    "",
    "The column-at-a-time Parquet writer and the simulator changes that followed (below), "
    "measured the same way against commit 78de458 (before them), runs alternating (load "
    "average about 4 to 9 on 2 cores), commit f4221c5: Parquet 27,595, 27,772 and 28,039 "
    "events/s before, 37,855, 36,912 and 36,196 after (1.3x); JSON Lines 33,718, 31,924 and "
    "30,822 before, 38,370, 36,197 and 35,627 after (1.14x). Same SHA-256 of the cluster "
    "files, both formats.",
    "",
    "The shared-schedule skipped steps and the other changes that followed them (below), "
    "measured the same way against commit e2bbde6 (before them), runs alternating, one "
    "`generate(40000, seed=7)` per process after a 500-event warm-up, commit 690456c, on a "
    "machine shared with a CI run, a model checker and other jobs (load average about 4.5 on "
    "2 cores: CPU time of the same code varied up to 1.9x from run to run, so only the best "
    "runs say much): JSON Lines 12,116, 18,157, 12,268, 14,540, 12,268 and 12,620 events/s "
    "before, 16,639, 18,839, 20,491, 13,801, 23,485 and 21,348 after (best 18,157 -> "
    "23,485, 1.29x); Parquet 16,993, 16,557, 13,470, 11,124, 16,156 and 18,728 before, "
    "18,697, 12,234, 14,869, 12,200, 12,106 and 20,521 after (best 18,728 -> 20,521, 1.10x). "
    "Instruction counts do not depend on the load: `generate(10000, seed=7)` JSON Lines "
    "2,428 M -> 1,889 M (-22%), Parquet 2,562 M -> 2,069 M (-19%) (below). Same SHA-256 of "
    "the cluster files, both formats (also with three injected violations). "
    "`generate(40000, seed=7)` counted the same way: JSON Lines 9,638 M -> 7,464 M "
    "instructions (-23%), Parquet 9,865 M -> 7,938 M (-20%). The results table above was "
    "made on that loaded machine too (a model checker took a core): its events/s are about "
    "half what the previous run of this benchmark measured on a quieter one before these "
    "changes (40,568 Parquet, 40,820 JSON Lines by CPU time). Scaled by the instruction "
    "counts, an estimate and not a measurement, the changes are worth about 1.25x on a quiet "
    "machine: some 50,000 events/s, short of 60,000.",
    "",
    "That estimate did not hold: on 2026-11-28 (load average under 1) the same "
    "`generate(40000, seed=7)` took 1.9 s of CPU where the mypyc evaluation's pure build "
    "(bench/mypyc.md, older code executing more instructions) had taken 1.0 s on the morning "
    "of 2026-11-27: this host's speed moves by 2x and more from day to day, which is why each "
    "report now gives the interpreter's speed (a fixed pure-Python loop, `bench.report."
    "interpreter_speed`) beside the load. Commit f4221c5 ran at 11,933 events/s (JSON Lines) "
    "that evening against 36,000-38,000 when it was measured. Then (commits cherry-picked "
    "from 7789ba2, 79d7a28, 0e932f8 and f98ef15): a classic member waiting for its JoinGroup "
    "or SyncGroup answer polls idly (`Consumer.idle_until`: nothing is sent while one is in "
    "flight, a pending rebalance commits nothing), a member whose answer leaves it idle is "
    "marked idle when the answer is delivered, and JSON Lines write each event's line as text "
    "with an encoder made per event, record, request and response class (any value of "
    "another type, and tuples, through the C encoder). Simulation steps of "
    "`generate(40000, seed=7)` 23,102 -> 16,376, full consumer ticks 47,323 -> 15,458. "
    "Instructions (cachegrind, whole process, bytecode compiled in the run): JSON Lines "
    "`generate(10000)` 3,684 M -> 3,265 M, `generate(40000)` 9,262 M -> 7,414 M (-20%); "
    "Parquet 5,447 M -> 5,284 M and 11,351 M -> 10,640 M (-6%); per event past the first "
    "10,000, JSON Lines 186 k -> 138 k instructions (-26%), Parquet 197 k -> 179 k (-9%). "
    "Same SHA-256 of every file written (40,000 events in both formats, with and without "
    "injected violations; 10,000; 60,000 of seed 3 with injected violations).",
]

#: what counters, callgrind and cProfile said of generate(40000, seed=7) (not re-measured by
#: each run: counters wrapped around the runner's and the consumer's methods, instruction
#: counts of the simulator alone, on 2026-11-27)
REMAINS = [
    "After item 5 the simulator's clock was what was left: a group's run stepped the clock at "
    "every member's poll (every 100 ms) as well as at every message and timer, 91,190 clock "
    "steps, 267,651 consumer ticks and 214,354 polls on `generate(40000, seed=7)` (40,548 "
    "events). Since then, with the output unchanged byte for byte: the runner lists the "
    "coordinator's timers once per input to the coordinator instead of twice per step and calls "
    "`advance` only when a timer or the offset-expiry check is due; the producers keep one "
    "float per cohort of partitions that had the same appends; JSON Lines are encoded with "
    "`event_to_json`'s encoders chosen once per type and the file's text encoded once; and "
    "lean runs (the generator's) take the steps that only idle polls make in a loop of their "
    "own (sim/runner.py, \"skipped steps\"). A Stable classic consumer with nothing to send "
    "before its next heartbeat, auto-commit or request timeout is idle "
    "(`Consumer.idle_until`); at each of its polls the loop does what the full step would have "
    "done there: the producers' append (the same floats in the same order) and "
    "`Consumer.idle_poll` (positions only), nothing else being due; an idle member's poll "
    "that falls on a full step (another member's auto-commit, a message) is the same idle "
    "poll. A check that runs at whichever step first follows a time (a poll timeout, offset "
    "expiry) keeps that step a full one. The 91,190 steps are now 26,582 full steps and "
    "63,837 skipped ones (the 771 after a run's last full step are not taken: they can "
    "change nothing written); 46,724 ticks, 21,381 full polls and 190,683 idle ones. Lean "
    "runs are compared with full runs on generated groups with every fault kind, topic "
    "changes, loss, delay and other poll intervals and produce rates "
    "(tests/test_generate_fast.py).",
    "",
    "Parquet is written a column at a time (trace/columnar_write.py): the events are laid out "
    "by kind, API and record type so that each struct column is one run of values between "
    "nulls, each column is read off the objects with one getter and converted by one "
    "`pa.array` (each leaf value by the layout's own encoder), and one `take` restores line "
    "order. The layout's writer made a dict per event and per nested value that `pa.array` "
    "turned back into columns: the table of a 25,454-event cluster took 11.4 µs per event "
    "that way and about 4 µs now, pyarrow's encoding of the ~400 columns about 2.6 µs more. "
    "The files are the same byte for byte (tests compare the two writers on Hypothesis events "
    "of every kind, API and record type and on examples/injected). The simulator lost "
    "costs that changed nothing: evaluating `ConsumerConfig`'s type hints from text for every "
    "group's scenario, a frozen dataclass `__init__` per exchange and record event (the "
    "runner gives them their field dict at once; a test compares them with the classes'), "
    "`min()` calls and `_Msg.__lt__` in the network queue (now tuples). Simulating 10,000 "
    "generated events: 2,252 M instructions before these changes, 1,823 M after (callgrind, "
    "-19%).",
    "",
    "On 2026-11-29 a columnar file came to hold only the struct columns its rows fill "
    "(docs/validator.md, \"Parquet traces\"): a generated classic cluster fills about 40 of "
    "the layout's ~100 (472 leaf columns, 200 of them in use), and Arrow's Parquet writer "
    "spends on every row of every column it writes, null or not. Writing the tables of "
    "`generate(40000, seed=7)` (pyarrow alone, best of 7 rounds alternating in one process): "
    "6.3 µs per row with every column, 3.6 µs with the filled ones; this report's write floor "
    "(Parquet) rose from 8,873 to 13,394 events/s per million interpreter iterations/s "
    "against the report before it (1.5x; the host ran at half that report's speed). The "
    "table's assembly (`events_table`, about 6 µs per event on that host) is now the larger "
    "part of writing; taking each struct column's values straight into line order (a `take` "
    "with null indices instead of padding with nulls) measured no gain and was not kept.",
    "",
    "Later on 2026-11-27 (commits b87b852, 16e20f5, 509a3bd, 0547f67, f5b5ae9), found by "
    "sampling "
    "the stack every 0.5 ms of CPU time over `generate(40000, seed=7)` (JSON Lines: the "
    "JSON encoder 12%, `event_to_json` and `to_json` 13%, the idle polls 10%, dataclass "
    "`__init__`s 7%, the merge 5.5%, the coordinator's `handle` 9%): the skipped steps "
    "run the producers' in-place append inline; the network queue holds a message as one "
    "tuple, not a `_Msg` object; a dataclass's JSON encoder and an event's JSON object are "
    "one function written out per class (attributes read directly, a str, int, float, bool "
    "or None value taken without a `to_json` call); and the merge sorts all the events' "
    "times at once when every group is in time order (the simulator's are; a heap merge "
    "otherwise); and the classic consumer's states and errors that each poll, tick and "
    "response compares with are module constants (an enum member read off its class is a "
    "metaclass lookup each time). `generate(10000, seed=7)`, the whole process less a "
    "one-group run's (callgrind): JSON Lines 2,757 M -> 2,385 M instructions (-13%), "
    "Parquet 2,531 M -> 2,386 M (-6%); `generate(40000, seed=7)` at commit 0547f67 (before "
    "the constants) against commit b651158 (before all of them), runs alternating, best of "
    "four by CPU time (load average about 2): JSON Lines 36,635 -> 38,849 events/s, Parquet "
    "35,594 -> 36,131. Same SHA-256 of the cluster files, both formats.",
    "",
    "Later still (commits 73cb1f0, 6c4e895, c91cfe3, e3b539d, e2fec80, 690456c), found by "
    "cProfile and counters over `generate(40000, seed=7)`: every run of skipped steps that "
    "has an idle member there (3,695 runs, 65,821 steps, 186,523 of the 192,987 idle polls) "
    "has every idle member polling at the same times, every poll interval (members start "
    "100 ms apart and poll every 100 ms). A member caught up with the log end offsets (each "
    "owned partition's position is its offset) then reads at each poll exactly what that "
    "step's append added (one interval's append moves an offset by at most its integer part "
    "plus one, below the 50-record cap; at a rate where it might not, no member is treated "
    "so): its poll reads something if and only if a cohort of its partitions moved, and its "
    "positions after the last poll are the offsets then. Those polls are counted (their Fetch "
    "events' correlation ids), not made; the member's positions and poll clock are set once "
    "after the last step (sim/runner.py, `_shared_steps`); a member not caught up polls for "
    "real until it is. With one cohort and every member caught up, the usual case, a step is "
    "the cohort's float addition and a comparison. The appends are the same float additions "
    "in the same order, so the output is the same byte for byte; `Consumer.idle_poll` is "
    "called 27,866 times instead of 192,987. Also: JSON Lines go through the C encoder that "
    "`JSONEncoder.encode` made per line, made once; the merge renumbers the generator's own "
    "events in place instead of copying each; `_next_time` keeps a running minimum and the "
    "run calls the skipped-step loop only when a member is idle; the coordinator's fast path "
    "makes its `HeartbeatScheduled` and `OffsetCommitted` records (two thirds of a "
    "collection's events) from their field dicts (a test compares them with the classes'). "
    "`generate(10000, seed=7)`, the whole process less one that makes only the 500-event "
    "warm-up collection (cachegrind, instructions), commit e2bbde6 -> 690456c: JSON Lines "
    "2,428 M -> 1,889 M (-22%), Parquet 2,562 M -> 2,069 M (-19%).",
    "",
    "What is left is the simulation itself, about two thirds of the generator: the 16,290 "
    "full steps of `generate(40000, seed=7)` (not counting each run's last), 11,272 of "
    "which deliver messages (about 13,100 exchanges: heartbeats every 3 s, auto-commits "
    "every 5 s, rebalances) and 4,905 of which tick a member with nothing delivered; each "
    "runs the reference coordinator, the consumer and the network in Python. Its 15,458 "
    "full consumer ticks are 13,696 of Stable members (10,591 of them send a Heartbeat or an "
    "OffsetCommit), 1,761 of members outside a group (630 send) and 1 of a member in "
    "PreparingRebalance: the PreparingRebalance polls an earlier version of this paragraph "
    "counted (19,936 full ticks) are idle polls since commits 74b3b58 and e93569e (the "
    "cherry-picks above), so those polls no longer make full steps. The "
    "producers' float is still summed once per step, because a log end offset is a float "
    "summed once per step and a different sum can commit an offset one record off: making it "
    "a closed form of time (`(t - created) * rate // 1000`, integers) would remove the "
    "remaining per-step loop but changes every simulator output that commits an offset "
    "(`groupspec simulate` traces, the sweeps' records processed twice, the committed "
    "examples/injected collection, the pinned digest) and was not done. Compiling the "
    "simulator, client, coordinator, merge and encoders with mypyc gained about 1.3-1.4x "
    "(bench/mypyc.md, measured before these changes), below the 1.5x that would keep a build "
    "step. 60,000 events/s per core leaves 16.7 µs per event for everything, about what the "
    "simulation alone costs in Python objects per message: in pure Python with today's "
    "outputs the target is out of reach on most days of this host (see the targets below: "
    "the same code has measured 1.1x to 4x short of it as the host's speed moved), and a "
    "compiled build's 1.3-1.4x would close it only on the host's fast days.",
]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.generator", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--runs", type=int, default=2, help="best of this many runs")
    p.add_argument("--reference-events", type=int, default=40_000,
                   help="the reference path's collection (it is slow)")
    p.add_argument("--quick", action="store_true", help="20,000 events, one run, no README")
    p.add_argument("--out", type=Path, default=None, help="JSON results (default bench/results/generator.json)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.events, args.runs, args.reference_events = 20_000, 1, 5_000
    report = run(args.events, args.runs, min(args.reference_events, args.events))
    publish("generator", report, [*table(report), "", *components_table(report)], targets(report),
            readme, args.quick, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

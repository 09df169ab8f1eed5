"""Benchmark groupspec's assignors against kafka-python 3.0.12's (issue 8).

    python -m bench.assignors [--sizes S1,S2,...] [--peer-cap SECONDS] [--out PATH] [--quick]

Every (assignor, size, scenario) runs once per implementation, each in its own subprocess
(so one case's memory peak cannot leak into another's), with a time cap per step. Prints a
table with the ratios, writes the rows as JSON (after every case, so an interrupted run
keeps what it measured), checks issue 8's targets, and for full runs regenerates
bench/README.md. ``--from-json`` re-renders the table and README from a saved run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.common import ASSIGNORS, IMPLS, SCENARIOS, SIZES, STICKY, Size, scenarios_for

Row = dict[str, Any]
Measurement = dict[str, Any]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = "bench/results/assignors.json"
QUICK_OUT = "bench/results/assignors-quick.json"
DEFAULT_README = "bench/README.md"
QUICK_SIZES = ("S1", "S2", "S3")
NONUNIFORM = ("nonuniform-fresh", "nonuniform-reassign")


@dataclass(frozen=True)
class Case:
    assignor: str
    size: Size
    scenario: str


def plan(sizes: Sequence[Size], assignors: Sequence[str]) -> list[Case]:
    """Uniform scenarios at every size; the non-uniform ones at the largest size only."""
    cases = [Case(a, s, sc) for s in sizes for a in assignors for sc in scenarios_for(a)]
    if sizes:
        largest = max(sizes, key=lambda s: s.partitions)
        cases += [Case(a, largest, sc) for a in assignors if a in STICKY for sc in NONUNIFORM]
    return cases


def runs_for(impl: str, size: Size) -> int:
    """Best of this many calls (a repeat budget stops slow cases after fewer)."""
    if impl == "groupspec":
        return 5 if size.partitions <= 10_000 else 3
    return 3


# ----------------------------------------------------------------------------- subprocesses


def run_case(impl: str, case: Case, cap_s: float, env: dict[str, str] | None = None) -> Measurement:
    """Run one case in a subprocess: the timed calls must finish within ``cap_s`` of the
    group being ready (building it and, for join-round2, the first round get their own,
    larger allowance)."""
    spec = {
        "impl": impl,
        "assignor": case.assignor,
        "size": case.size.name,
        "scenario": case.scenario,
        "runs": runs_for(impl, case.size),
        "repeat_budget_s": min(10.0, cap_s),
        "memory_limit_s": 30.0 if impl == "groupspec" else 10.0,
    }
    out: Measurement = {"impl": impl, "status": "error", "note": None}
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.worker", json.dumps(spec)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        allowance = {"ready": 2 * cap_s + 120.0, "timed": cap_s, "memory": 3 * cap_s + 120.0}
        waiting = "ready"
        deadline = time.monotonic() + allowance[waiting]
        finished = False
        while not finished:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                proc.kill()
                if waiting == "timed":
                    out["status"] = "timeout"
                    out["note"] = f"did not finish in {cap_s:g} s"
                elif waiting == "ready":
                    out["status"] = "timeout"
                    out["note"] = f"preparing the group took over {allowance['ready']:g} s"
                else:
                    out["memory_note"] = f"not traced: over {allowance['memory']:g} s"
                break
            if line is None:
                finished = True
                break
            event = json.loads(line)
            kind = event.pop("event")
            out.update(event)
            if kind == "ready":
                waiting = "timed"
            elif kind == "timed":
                out["status"] = "ok"
                waiting = "memory"
            elif kind == "memory":
                finished = True
                break
            deadline = time.monotonic() + allowance[waiting]
        proc.wait()
        if out["status"] == "error":
            err.seek(0)
            tail = err.read().strip().splitlines()[-3:]
            out["note"] = " | ".join(tail) or f"exit code {proc.returncode}"
    total = case.size.partitions
    if out.get("status") == "ok":
        out["unassigned"] = total - out["assigned"]
        peak = out.get("peak_bytes")
        out["bytes_per_partition"] = None if peak is None else peak / total
    return out


def skipped(note: str) -> Measurement:
    return {"status": "skipped", "note": note}


def effective_moves(m: Measurement, assignor: str) -> int | None:
    """Moves, counting a cooperative round's withheld partitions (they move next round)."""
    if m.get("status") != "ok":
        return None
    moves: int = m["moves"]
    if assignor == "cooperative-sticky":
        moves += m["unassigned"]
    return moves


def make_row(case: Case, gs: Measurement, peer: Measurement, cap_s: float) -> Row:
    row: Row = {
        "assignor": case.assignor,
        "size": case.size.name,
        "shape": case.size.shape(),
        "members": case.size.members,
        "topics": case.size.topics,
        "partitions_per_topic": case.size.partitions_per_topic,
        "partitions": case.size.partitions,
        "scenario": case.scenario,
        "groupspec": gs,
        "kafka-python": peer,
        "ratio": None,
        "ratio_at_least": None,
    }
    for m in (gs, peer):
        if m.get("status") == "ok":
            m["moves_with_withheld"] = effective_moves(m, case.assignor)
    if gs.get("status") == "ok" and gs["best_s"] > 0:
        if peer.get("status") == "ok":
            row["ratio"] = peer["best_s"] / gs["best_s"]
        elif peer.get("status") == "timeout" and "did not finish" in (peer.get("note") or ""):
            row["ratio_at_least"] = cap_s / gs["best_s"]
    return row


class PeerSkips:
    """Cases the peer is not run for because a smaller or easier one already ran out of time."""

    def __init__(self) -> None:
        self._timeouts: dict[tuple[str, str], int] = {}  # (assignor, scenario) -> partitions

    def reason(self, case: Case) -> str | None:
        keys = [(case.assignor, case.scenario)]
        if case.scenario in NONUNIFORM:
            keys.append((case.assignor, "fresh"))
        if case.scenario == "join-round2":
            keys.append((case.assignor, "join"))
        for key in keys:
            at = self._timeouts.get(key)
            if at is not None and (at < case.size.partitions or key[1] != case.scenario):
                return f"not run: {key[1]} did not finish at {at:,} partitions"
        return None

    def record(self, case: Case, peer: Measurement) -> None:
        if peer.get("status") == "timeout":
            key = (case.assignor, case.scenario)
            self._timeouts[key] = min(
                self._timeouts.get(key, case.size.partitions), case.size.partitions
            )


# ----------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    name: str
    where: str
    value: str
    met: bool | None  # None: not measured


def _find(rows: Iterable[Row], assignor: str, size: str, scenario: str) -> Row | None:
    for r in rows:
        if (r["assignor"], r["size"], r["scenario"]) == (assignor, size, scenario):
            return r
    return None


def _time_target(
    rows: list[Row], name: str, assignor: str, size: str, scenario: str, limit: float
) -> Target:
    r = _find(rows, assignor, size, scenario)
    where = f"{assignor} {size} {scenario}"
    if r is None or r["groupspec"].get("status") != "ok":
        return Target(name, where, "not measured", None)
    t: float = r["groupspec"]["best_s"]
    return Target(name, where, f"{t:.3f} s (limit {limit:g} s)", t <= limit)


def targets(rows: list[Row]) -> list[Target]:
    """Issue 8's targets, each against the rows that measure it."""
    out: list[Target] = []
    for a in STICKY:
        for sc, limit in (("fresh", 0.4), ("leave", 1.0), ("join", 1.0)):
            out.append(_time_target(rows, f"1M uniform {sc} <= {limit:g} s", a, "S5", sc, limit))
        if a == "cooperative-sticky":
            out.append(
                _time_target(rows, "1M uniform join round 2 <= 1 s", a, "S5", "join-round2", 1.0)
            )
        for r in rows:
            if r["assignor"] != a or r["size"] != "S5":
                continue
            gs = r["groupspec"]
            where = f"{a} S5 {r['scenario']}"
            if gs.get("status") != "ok":
                out.append(Target("moves == minimum", where, "not measured", None))
                continue
            moves, low = gs["moves_with_withheld"], gs["min_moves"]
            kind = "" if gs["min_kind"] == "closed form" else f" ({gs['min_kind']})"
            out.append(
                Target("moves == minimum", where, f"{moves:,} vs {low:,}{kind}", moves == low)
            )
            if r["scenario"] in NONUNIFORM:
                continue
            bpp = gs.get("bytes_per_partition")
            out.append(
                Target(
                    "peak memory <= 200 B/partition",
                    where,
                    "not traced" if bpp is None else f"{bpp:.0f} B/partition",
                    None if bpp is None else bpp <= 200,
                )
            )
        for sc in NONUNIFORM:
            out.append(_time_target(rows, "non-uniform 1M <= 10 s", a, "S5", sc, 10.0))
    for r in rows:
        if r["size"] == "S3" and r["assignor"] in STICKY:
            out.append(_ratio_target(r, "10k: >= 1000x kafka-python", 1000.0))
    for r in rows:
        if r["size"] == "S5" and r["assignor"] in ("range", "roundrobin"):
            out.append(_ratio_target(r, "1M: faster than kafka-python", 1.0))
    return out


def _ratio_target(r: Row, name: str, at_least: float) -> Target:
    where = f"{r['assignor']} {r['size']} {r['scenario']}"
    if r["ratio"] is not None:
        ratio: float = r["ratio"]
        return Target(
            name, where, f"{ratio:,.1f}x", ratio >= at_least if at_least > 1 else ratio > 1
        )
    if r["ratio_at_least"] is not None:
        low: float = r["ratio_at_least"]
        return Target(
            name, where, f">= {low:,.0f}x (peer did not finish)", True if low >= at_least else None
        )
    return Target(name, where, "not measured", None)


# ----------------------------------------------------------------------------- rendering


def _secs(m: Measurement) -> str:
    status = m.get("status")
    if status == "ok":
        t: float = m["best_s"]
        return f"{t:.4f}" if t < 1 else f"{t:.2f}"
    if status == "timeout":
        return f"DNF ({m.get('note')})"
    if status == "skipped":
        return "—"
    return f"error: {m.get('note')}"


def _moves(m: Measurement) -> str:
    if m.get("status") != "ok":
        return ""
    moves, low = m["moves_with_withheld"], m["min_moves"]
    mark = "" if moves == low else " ≠"
    text = f"{moves:,} / {low:,}{mark}"
    if m["unassigned"]:
        text += f" ({m['unassigned']:,} withheld)"
    if not m["valid"]:
        text += f" INVALID: {m['problem']}"
    return text


def _mem(m: Measurement) -> str:
    bpp = m.get("bytes_per_partition")
    return "" if bpp is None else f"{bpp:,.0f}"


def _ratio(r: Row) -> str:
    if r["ratio"] is not None:
        return f"{r['ratio']:,.1f}x"
    if r["ratio_at_least"] is not None:
        return f">= {r['ratio_at_least']:,.0f}x"
    return ""


HEADER = (
    "| size | assignor | scenario | groupspec s | B/part | moves / min | "
    "kafka-python s | B/part | moves / min | ratio |"
)


def table(rows: list[Row]) -> list[str]:
    lines = [HEADER, "|---|---|---|---:|---:|---|---:|---:|---|---:|"]
    for r in rows:
        gs, kp = r["groupspec"], r["kafka-python"]
        lines.append(
            f"| {r['size']} | {r['assignor']} | {r['scenario']} | {_secs(gs)} | {_mem(gs)} | {_moves(gs)} "
            f"| {_secs(kp)} | {_mem(kp)} | {_moves(kp)} | {_ratio(r)} |"
        )
    return lines


def target_lines(ts: list[Target]) -> list[str]:
    lines = ["| target | case | measured | verdict |", "|---|---|---|---|"]
    for t in ts:
        verdict = "met" if t.met else ("gap" if t.met is False else "unknown")
        lines.append(f"| {t.name} | {t.where} | {t.value} | {verdict} |")
    return lines


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    ram = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        peer_version = metadata.version("kafka-python")
    except metadata.PackageNotFoundError:
        peer_version = None
    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            or None
        )
    except OSError:
        commit = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_bytes": ram,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "kafka_python": peer_version,
        "platform": platform.platform(),
        "commit": commit,
    }


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def sizes_lines() -> list[str]:
    lines = ["| size | members x topics x partitions/topic | partitions |", "|---|---|---:|"]
    for s in SIZES.values():
        lines.append(f"| {s.name} | {s.shape()} | {s.partitions:,} |")
    return lines


def readme(report: dict[str, Any]) -> str:
    m = report["machine"]
    ram = f"{m['ram_bytes'] / 2**30:.1f} GiB" if m.get("ram_bytes") else "unknown"
    rows: list[Row] = report["rows"]
    ts = targets(rows)
    met = sum(1 for t in ts if t.met)
    gaps = sum(1 for t in ts if t.met is False)
    unknown = sum(1 for t in ts if t.met is None)
    parts = [
        "# Assignor benchmarks (issue 8)",
        "",
        "<!-- Generated by `python -m bench.assignors`; edit bench/assignors.py, not this file. -->",
        "",
        "groupspec's four assignors against kafka-python "
        f"{m.get('kafka_python') or '?'} (`kafka/coordinator/assignors/`: range, roundrobin, sticky, "
        "cooperative_sticky), which ports Kafka's Java assignors to Python. The validator and "
        "Spark pipeline benchmarks are in [validator.md](validator.md) and "
        "[pipeline.md](pipeline.md); the model checker's "
        "run time and distinct states per second are printed by `groupspec spec check`.",
        "",
        "```sh",
        "python -m bench.assignors                 # everything (S1-S5), peer capped at 300 s per case",
        "python -m bench.assignors --quick         # S1-S3, peer capped at 20 s, no README",
        "python -m bench.assignors --sizes S1,S3 --peer-cap 60 --out /tmp/b.json",
        "python -m bench.assignors --from-json bench/results/assignors.json   # re-render only",
        "```",
        "",
        "## This run",
        "",
        f"- command: `{report['command']}`",
        f"- date: {report['started']} to {report['finished']} (UTC)",
        f"- machine: {m['cpu']}, {m['cores']} cores, {ram} RAM, {m['implementation']} {m['python']}, "
        f"{m['platform']}; repository at {m.get('commit') or '?'}",
        f"- load average (1, 5, 15 min) at the start {report.get('load_start')}, at the end "
        f"{report.get('load_end')}. **The machine has 2 cores shared with other engineers' "
        "builds and tests while this ran**, so absolute times are noisy (best-of-k helps with "
        "short calls, not with the single-call peer runs); ratios measured minutes apart carry "
        "that noise too.",
        f"- kafka-python time cap: {report['peer_cap_s']:g} s per case",
        "",
        "## Method",
        "",
        "Sizes (members x topics x partitions per topic; every member subscribes to every topic "
        "except in the non-uniform scenarios). S3 is the issue's 10k shape, S5 is the shape of "
        "Kafka's 1M-partition sticky tests (`AbstractStickyAssignorTest`):",
        "",
        *sizes_lines(),
        "",
        "Scenarios:",
        "",
        *[f"- `{name}`: {text}" for name, text in SCENARIOS.items()],
        "",
        "The balanced assignment before `leave` and `join` is dealt without any assignor "
        "(partition `g` in (topic, partition) order to member `g % members`), so both "
        "implementations start from the same owners. Eager members report it the way their "
        "client does: groupspec's sticky members in Java's `StickyAssignor` user data, "
        "kafka-python's in its own `StickyAssignorUserData` encoding (which adds a version "
        "prefix); decoding it is part of the timed call for both. Cooperative members report it "
        "in the subscription's owned partitions. `nonuniform-reassign` reports groupspec "
        "sticky's fresh assignment, for both implementations. `join-round2` runs round 1 with "
        "the same implementation first (untimed), then times round 2.",
        "",
        "Per case and implementation, one subprocess: build the group, then time the assign "
        "call alone (best of 5 calls up to 10k partitions, best of 3 above, and no further "
        "calls once the calls so far took 10 s), then one more call under `tracemalloc` for "
        "the peak of Python allocations during the call (its result included); divided by the "
        "partitions that is `B/part`. Calls slower than 30 s are not traced. The JSON also "
        "has the RSS high-water-mark delta of the first call (`rss_delta_bytes`, via "
        "`/proc/self/clear_refs`). kafka-python cases that do not finish in the cap are "
        "killed and reported as DNF; the ratio is then a lower bound (cap / groupspec time). "
        "A case kafka-python did not finish at a smaller size (or, for the non-uniform "
        "scenarios, its `fresh`; for `join-round2`, its `join`) is not run again.",
        "",
        "`moves / min`: partitions owned before and after by different members "
        "(`groupspec.assignors.moves.count_moves`), against the minimum "
        "(`minimum_moves_from`, the closed form for identical subscriptions; for "
        "`nonuniform-reassign` 0 is a lower bound, so reaching 0 proves it minimal). A "
        "cooperative round's withheld partitions count as moves (they move in the next "
        "round), so `join` and `join-round2` are both compared with the minimum of the whole "
        "rebalance; `join-round2`'s moves are counted from the owners before round 1. "
        "Every result is also checked: every partition once, only to subscribers. "
        "`ratio` = kafka-python time / groupspec time.",
        "",
        "## Results",
        "",
        "Times in seconds (best call); `B/part` = tracemalloc peak / partitions; DNF = did "
        "not finish within the cap; — = not run (see the JSON's `note`).",
        "",
        *table(rows),
        "",
        "Reading the numbers:",
        "",
        "- `sticky` and `cooperative-sticky` share one algorithm; the eager one's timed call "
        "also decodes every member's user data (at S5, 2,000 blobs naming 1M (topic, "
        "partition) entries), while cooperative members' owned partitions arrive already "
        "decoded in the subscription. That decoding is most of the difference between the two "
        "rows of `leave` and `join`.",
        "- Range and RoundRobin are not sticky: their moves are far above the minimum by "
        "design, and are shown only for comparison.",
        "- In the cooperative `join`, the moves column counts the withheld partitions (they "
        "move in round 2), so round 1 and round 2 are both compared with the rebalance's "
        "minimum.",
        "",
        f"## Targets: {met} met, {gaps} gaps, {unknown} not measured",
        "",
        *target_lines(ts),
        "",
        "Raw numbers: [results/assignors.json](results/assignors.json).",
        "",
    ]
    return "\n".join(parts)


def _write_readme(path: Path, text: str) -> None:
    """Write the README, keeping the section bench/assignors_java.py maintains in it."""
    from bench.assignors_java import BEGIN, END

    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in old and END in old:
        kept = BEGIN + old.split(BEGIN, 1)[1].split(END, 1)[0] + END + "\n"
        text = text.rstrip("\n") + "\n\n" + kept
    path.write_text(text)


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    tmp.replace(path)


def print_report(rows: list[Row]) -> None:
    print()
    print("\n".join(table(rows)))
    print()
    print("\n".join(target_lines(targets(rows))))


# ----------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.assignors",
        description="Benchmark groupspec's assignors against kafka-python's (issue 8).",
    )
    p.add_argument(
        "--sizes", help=f"comma-separated, of {', '.join(SIZES)} (default: all; --quick: S1-S3)"
    )
    p.add_argument("--assignors", help=f"comma-separated, of {', '.join(ASSIGNORS)} (default: all)")
    p.add_argument(
        "--peer-cap",
        type=float,
        default=None,
        help="seconds per kafka-python case (default 300; --quick: 20)",
    )
    p.add_argument("--out", help=f"JSON results (default {DEFAULT_OUT}; --quick: {QUICK_OUT})")
    p.add_argument(
        "--quick", action="store_true", help="smoke run: S1-S3, small peer cap, no README"
    )
    p.add_argument(
        "--readme", help=f"README to regenerate (default {DEFAULT_README} unless --quick)"
    )
    p.add_argument("--no-readme", action="store_true", help="do not write a README")
    p.add_argument("--no-peer", action="store_true", help="groupspec only")
    p.add_argument(
        "--from-json", help="re-render the table and README from a saved run; measure nothing"
    )
    args = p.parse_args(argv)
    if args.peer_cap is None:
        args.peer_cap = 20.0 if args.quick else 300.0
    if args.peer_cap <= 0:
        p.error("--peer-cap must be positive")
    names = args.sizes.split(",") if args.sizes else (QUICK_SIZES if args.quick else tuple(SIZES))
    bad = [n for n in names if n not in SIZES]
    if bad:
        p.error(f"unknown sizes {bad}; known: {', '.join(SIZES)}")
    args.size_list = [SIZES[n] for n in names]
    args.assignor_list = args.assignors.split(",") if args.assignors else list(ASSIGNORS)
    bad = [a for a in args.assignor_list if a not in ASSIGNORS]
    if bad:
        p.error(f"unknown assignors {bad}; known: {', '.join(ASSIGNORS)}")
    if args.out is None:
        args.out = QUICK_OUT if args.quick else DEFAULT_OUT
    if args.readme is None and not args.quick:
        args.readme = DEFAULT_README
    if args.no_readme:
        args.readme = None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_json:
        saved: dict[str, Any] = json.loads(Path(args.from_json).read_text())
        print_report(saved["rows"])
        if args.readme:
            _write_readme(Path(args.readme), readme(saved))
        return 0
    out = ROOT / args.out if not Path(args.out).is_absolute() else Path(args.out)
    report: dict[str, Any] = {
        "command": " ".join(
            ["python -m bench.assignors", *(sys.argv[1:] if argv is None else argv)]
        ),
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "finished": None,
        "machine": machine(),
        "load_start": _load(),
        "load_end": None,
        "peer_cap_s": args.peer_cap,
        "impls": list(IMPLS),
        "rows": [],
    }
    rows: list[Row] = report["rows"]
    cases = plan(args.size_list, args.assignor_list)
    # groupspec first (minutes), then the peer in the same order (up to the cap per case),
    # so an interrupted run still has every groupspec number.
    for i, case in enumerate(cases, 1):
        gs = run_case("groupspec", case, args.peer_cap)
        print(
            f"[{i}/{len(cases)}] {case.size.name} {case.assignor} {case.scenario}: groupspec {_secs(gs)}",
            file=sys.stderr,
            flush=True,
        )
        rows.append(make_row(case, gs, skipped("pending"), args.peer_cap))
        write_json(out, report)
    skips = PeerSkips()
    for i, (case, row) in enumerate(zip(cases, rows, strict=True), 1):
        if args.no_peer:
            peer = skipped("not run: --no-peer")
        else:
            reason = skips.reason(case)
            peer = skipped(reason) if reason else run_case("kafka-python", case, args.peer_cap)
            skips.record(case, peer)
        print(
            f"[{i}/{len(cases)}] {case.size.name} {case.assignor} {case.scenario}: kafka-python {_secs(peer)}",
            file=sys.stderr,
            flush=True,
        )
        rows[i - 1] = make_row(case, row["groupspec"], peer, args.peer_cap)
        write_json(out, report)
    report["finished"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    report["load_end"] = _load()
    write_json(out, report)
    print_report(rows)
    if args.readme:
        _write_readme(Path(args.readme), readme(report))
        print(f"\nwrote {out} and {args.readme}")
    else:
        print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

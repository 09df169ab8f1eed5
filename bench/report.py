"""The parts the validator and pipeline benchmark reports share: the run's provenance, the
targets table, and printing and writing the results."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

Targets = list[tuple[str, str, str]]


def interpreter_speed(rounds: int = 3) -> float:
    """Millions of iterations per second of a fixed pure-Python loop (attribute, dict and
    arithmetic work, the kind the reference does), best of ``rounds``. The machine is shared
    and its speed moves from day to day (up to 2x on the same host): the events/s of two
    reports compare only after dividing by this."""
    n = 400_000

    class Box:
        __slots__ = ("v",)

        def __init__(self) -> None:
            self.v = 0

    best = float("inf")
    for _ in range(rounds):
        box, table = Box(), {}
        start = time.perf_counter()
        for i in range(n):
            box.v += i & 7
            table[i & 255] = box.v
        best = min(best, time.perf_counter() - start)
    return n / best / 1e6


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
        "interpreter_speed": round(interpreter_speed(), 2),
    }


def this_run(report: dict[str, Any], collection: str) -> list[str]:
    """The "This run" section: command, dates, machine, load and the collection measured."""
    m = report["machine"]
    return [
        "## This run",
        "",
        f"- command: `{report['command']}`",
        f"- date: {report['started']} to {report['finished']} (UTC)",
        f"- machine: {m['cpu']}, {m['cores']} cores, CPython {m['python']}, {m['platform']}",
        f"- load average at the end: {m['load_average']} (a shared machine makes times noisy)",
        *([f"- interpreter speed at the end: {m['interpreter_speed']} M iterations/s of a fixed "
           "pure-Python loop (`bench.report.interpreter_speed`; the host's speed moves from day "
           "to day: compare the events/s of two reports after dividing by it)"]
          if "interpreter_speed" in m else []),
        f"- collection: {collection}",
    ]


def verdict(got: float, need: float, digits: int = 2) -> str:
    """A target's verdict: "met", or how many times short of it ``got`` is."""
    return "met" if got >= need else f"gap ({need / got:.{digits}f}x short)"


def targets_table(targets: Targets) -> list[str]:
    return [
        "| target | measured | verdict |",
        "|---|---|---|",
        *[f"| {t} | {g} | {v} |" for t, g, v in targets],
    ]


def publish(name: str, report: dict[str, Any], table: list[str], targets: Targets,
            readme: Callable[[dict[str, Any]], str], quick: bool, out: Path | None) -> None:
    """Print the table and the targets; write the JSON to ``out`` (default
    bench/results/NAME.json, or NAME-quick.json) and, unless ``quick``, bench/NAME.md."""
    print("\n".join(table))
    print()
    for t, g, v in targets:
        print(f"{t}: {g} -> {v}")
    path = out or ROOT / "bench" / "results" / (f"{name}-quick.json" if quick else f"{name}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not quick:
        (ROOT / "bench" / f"{name}.md").write_text(readme(report), encoding="utf-8")


def best_of(fn: Callable[[], object], runs: int) -> tuple[float, float, object]:
    """The best wall-clock seconds of ``runs`` calls, the best CPU seconds of this process
    (``time.process_time``: on a shared machine, what the work itself cost), the last result."""
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu, result

"""Benchmark the server-side (KIP-848) assignors against Kafka 4.1.2's own, side by side.

    python -m bench.server_assignors [--quick] [--out PATH] [--from-json PATH]

Kafka's ``UniformAssignor`` and ``RangeAssignor`` run in the JVM oracle (optimising JIT on,
timed inside the JVM after warm-up calls, see ServerAssignorBench.java); groupspec's run in
this process on the same group: the same member order, topic ids and subscriptions, and for
``leave`` and ``join`` each side starting from its own fresh target (the two are the same
assignment, as the differential test checks, though the orders inside it differ, so which
partitions move in ``join`` may differ; how many may not).

Groups: ``same`` (every member subscribes to every topic) and ``classes`` (ten subscription
classes: member i is in class i % 10, topic j in group j % 10, and a class subscribes to
the five groups from its own on, so every topic has half the members as subscribers and
every two classes overlap differently). Full size: 2000 members x 500 topics x 2000
partitions (1M partitions); ``--quick``: 20 x 10 x 20, for the smoke test.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.report import machine, publish, targets_table
from groupspec.assignors.moves import count_moves
from groupspec.assignors.registry import get_server_assignor
from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    MemberSpec,
    SubscribedTopicMetadata,
    TopicId,
    TopicMetadata,
    topic_id_str,
)
from groupspec.jvm import JvmOracle

NAME = "server_assignors"
CLASSES = 10


@dataclass(frozen=True)
class Size:
    members: int
    topics: int
    partitions: int

    @property
    def total(self) -> int:
        return self.topics * self.partitions


FULL = Size(2000, 500, 2000)
QUICK = Size(20, 10, 20)


@dataclass(frozen=True)
class Case:
    assignor: str
    group: str  # "same" or "classes"
    scenario: str  # "fresh", "leave", "join"


CASES = [
    *(Case("uniform", g, s) for g in ("same", "classes") for s in ("fresh", "leave", "join")),
    Case("range", "same", "fresh"),
    Case("range", "classes", "fresh"),
]


def topic_ids(n: int) -> list[TopicId]:
    rng = random.Random(848)
    return [TopicId(rng.getrandbits(128)) for _ in range(n)]


def subscription(index: int, size: Size, group: str) -> list[int]:
    """Topic indexes member ``index`` subscribes to."""
    if group == "same":
        return list(range(size.topics))
    cls = index % CLASSES
    return [j for j in range(size.topics) if (j % CLASSES - cls) % CLASSES < CLASSES // 2]


def member_id(index: int) -> str:
    return f"member-{index:05d}"


def _spec(
    size: Size, ids: list[TopicId], group: str, indexes: Sequence[int], current: GroupAssignment
) -> GroupSpec:
    return GroupSpec(
        tuple(
            MemberSpec(
                member_id(i),
                tuple(ids[j] for j in subscription(i, size, group)),
                current.get(member_id(i), {}),
            )
            for i in indexes
        )
    )


def run_python(case: Case, size: Size, runs: int) -> dict[str, Any]:
    ids = topic_ids(size.topics)
    topics = SubscribedTopicMetadata.of(
        TopicMetadata(t, f"topic-{k}", size.partitions) for k, t in enumerate(ids)
    )
    assignor = get_server_assignor(case.assignor)
    indexes = list(range(size.members))
    previous: GroupAssignment = {}
    if case.scenario != "fresh":
        previous = assignor.assign(_spec(size, ids, case.group, indexes, {}), topics)
        if case.scenario == "leave":
            indexes.remove(size.members // 2)
        else:
            indexes.append(size.members)
    spec = _spec(size, ids, case.group, indexes, previous)
    times = []
    result: GroupAssignment = {}
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        result = assignor.assign(spec, topics)
        times.append(time.perf_counter() - start)
        del result
        result = {}
    result = assignor.assign(spec, topics)
    per = [sum(len(ps) for ps in parts.values()) for parts in result.values()]

    def named(a: GroupAssignment) -> dict[str, dict[str, tuple[int, ...]]]:
        return {m: {str(t): tuple(ps) for t, ps in parts.items()} for m, parts in a.items()}

    return {
        "times_s": times,
        "best_s": min(times),
        "moves": count_moves(named(previous), named(result)),
        "assigned": sum(per),
        "members": len(result),
        "min_size": min(per, default=0),
        "max_size": max(per, default=0),
    }


def run_java(jvm: JvmOracle, case: Case, size: Size, warmup: int, runs: int) -> dict[str, Any]:
    ids = topic_ids(size.topics)
    out: dict[str, Any] = jvm.call(
        "ServerAssignorBench",
        {
            "assignor": case.assignor,
            "topics": [topic_id_str(t) for t in ids],
            "partitions": size.partitions,
            "members": [
                {"member_id": member_id(i), "topics": subscription(i, size, case.group)}
                for i in range(size.members)
            ],
            "scenario": case.scenario,
            "leaver": size.members // 2,
            "joiner": {
                "member_id": member_id(size.members),
                "topics": subscription(size.members, size, case.group),
            },
            "warmup": warmup,
            "runs": runs,
        },
    )
    out["best_s"] = min(out["times_s"])
    return out


def row(case: Case, py: dict[str, Any], java: dict[str, Any]) -> dict[str, Any]:
    same = all(py[k] == java[k] for k in ("moves", "assigned", "members", "min_size", "max_size"))
    return {
        "assignor": case.assignor,
        "group": case.group,
        "scenario": case.scenario,
        "groupspec": py,
        "kafka": java,
        "ratio": java["best_s"] / py["best_s"] if py["best_s"] > 0 else None,
        "same_shape": same,
    }


def table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| assignor | group | scenario | groupspec s | Kafka (JVM) s | Kafka / groupspec | moves (groupspec / Kafka) | sizes | same shape |",
        "|---|---|---|---:|---:|---:|---|---|---|",
    ]
    for r in rows:
        py, j = r["groupspec"], r["kafka"]
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "n/a"
        lines.append(
            f"| {r['assignor']} | {r['group']} | {r['scenario']} | {py['best_s']:.4f} | "
            f"{j['best_s']:.4f} | {ratio} | {py['moves']:,} / {j['moves']:,} | "
            f"{py['min_size']}-{py['max_size']} | {'yes' if r['same_shape'] else 'NO'} |"
        )
    return lines


def targets(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    out = []
    for r in rows:
        if r["assignor"] == "uniform" and r["group"] == "same" and r["scenario"] != "fresh":
            ratio = r["ratio"]
            verdict = "met" if ratio is not None and ratio >= 1 else "gap"
            out.append(
                (
                    f"uniform {r['scenario']} at least as fast as Kafka's",
                    f"groupspec {r['groupspec']['best_s']:.4f} s, Kafka {r['kafka']['best_s']:.4f} s",
                    verdict,
                )
            )
        out.append(
            (
                f"{r['assignor']} {r['group']} {r['scenario']}: same moves and sizes as Kafka",
                "yes" if r["same_shape"] else "no",
                "met" if r["same_shape"] else "gap",
            )
        )
    return out


def readme(report: dict[str, Any]) -> str:
    m = report["machine"]
    s = report["size"]
    lines = [
        "# Server-side assignor benchmark (issue 17)",
        "",
        "<!-- Generated by `python -m bench.server_assignors`; edit bench/server_assignors.py. -->",
        "",
        (sys.modules[__name__].__doc__ or "").split("\n\n", 2)[2].strip(),
        "",
        "## This run",
        "",
        f"- command: `{report['command']}`",
        f"- date: {report['started']} to {report['finished']} (UTC)",
        f"- machine: {m['cpu']}, {m['cores']} cores, CPython {m['python']}, {m['platform']}",
        f"- load average at the end: {m['load_average']} (2 cores shared with other engineers' work: times are noisy)",
        f"- size: {s['members']} members x {s['topics']} topics x {s['partitions']} partitions",
        f"- groupspec: best of {report['py_runs']} calls; Kafka: best of {report['java_runs']} calls after {report['java_warmup']} warm-up calls, in one JVM (Java 17, -XX:+UseSerialGC, optimising JIT on); the `classes` cases at full size: best of 2 calls, and 3 after 2 warm-up calls",
        "",
        "## Results",
        "",
        *table(report["rows"]),
        "",
        "`moves`: partitions held before and after by different members (for `leave`, the",
        "leaver's count as moved). `sizes`: fewest-most partitions per member (groupspec's).",
        "`same shape`: moves, assigned partitions, member count and min/max sizes equal.",
        "",
        "## Targets",
        "",
        *targets_table(targets(report["rows"])),
        "",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.server_assignors", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="20 x 10 x 20, no README (smoke test)")
    p.add_argument("--out", type=Path, help="where to write the JSON")
    p.add_argument("--cases", help="comma-separated assignor:group:scenario to run (default all)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    size = QUICK if args.quick else FULL
    py_runs, java_warmup, java_runs = (2, 2, 3) if args.quick else (3, 5, 5)
    cases = CASES
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in CASES if f"{c.assignor}:{c.group}:{c.scenario}" in wanted]
        if not cases:
            print(f"error: --cases: none of {sorted(wanted)} is a case", file=sys.stderr)
            return 2
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    rows = []
    with JvmOracle(heap="4g" if not args.quick else "512m", full_jit=True) as jvm:
        for case in cases:
            # The heterogeneous builder takes seconds a call at full size: fewer calls.
            slow = case.group == "classes" and not args.quick
            java = run_java(jvm, case, size, 2 if slow else java_warmup, 3 if slow else java_runs)
            py = run_python(case, size, 2 if slow else py_runs)
            rows.append(row(case, py, java))
            print(table(rows)[-1], flush=True)
    report = {
        "command": "python -m bench.server_assignors" + (" --quick" if args.quick else ""),
        "started": started,
        "finished": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "size": {"members": size.members, "topics": size.topics, "partitions": size.partitions},
        "py_runs": py_runs,
        "java_warmup": java_warmup,
        "java_runs": java_runs,
        "rows": rows,
    }
    publish(NAME, report, table(rows), targets(rows), readme, args.quick or bool(args.cases), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

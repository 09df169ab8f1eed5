"""groupspec's Kafka-exact CooperativeSticky against Kafka 4.1.2's own (the jar, in the JVM
oracle) on a non-uniform group: members in at least ten subscription classes, so both run
Kafka's general path. Two scenarios: ``fresh`` (nobody owns anything) and ``leave`` (from
a balanced assignment, one member leaves; the rest report what they own, in one generation).

    python -m bench.assignors_java            # 1M partitions (1000 members, 100 topics x 10,000)
    python -m bench.assignors_java --quick    # a small group, seconds; checks the machinery
    python -m bench.assignors_java --readme bench/README.md   # also write the section there
    python -m bench.assignors_java --scenarios leave          # one scenario only

Java's time is that of the ``assign`` call inside the JVM (System.nanoTime), after
``--warmup`` untimed calls on the same input in the same JVM (full JIT, not the oracle's
C1-only default); groupspec's is the best of ``--runs`` in-process calls. Both answers must
be identical (else the run fails). Run it alone: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.assignors.base import MemberSubscription
from groupspec.assignors.cooperative_sticky import encode_user_data
from groupspec.assignors.registry import get_assignor
from groupspec.jvm import JvmOracle
from groupspec.jvm.assignor_request import kafka_assignment, kafka_assignor_request
from groupspec.protocol.consumer_protocol import Subscription, TopicPartitions

BEGIN = "<!-- assignors_java: begin (python -m bench.assignors_java --readme bench/README.md) -->"
END = "<!-- assignors_java: end -->"


@dataclass(frozen=True)
class Shape:
    members: int
    topics: int
    partitions: int  # per topic
    classes: int

    @property
    def total(self) -> int:
        return self.topics * self.partitions


FULL = Shape(1000, 100, 10_000, 10)
QUICK = Shape(40, 20, 50, 10)


LAYOUTS = ("overlapping", "disjoint")


def subscriptions(shape: Shape, layout: str = "overlapping") -> list[tuple[str, ...]]:
    """``overlapping``: class k subscribes to half the topics, a window starting at topic
    k * T / K, so no two classes have the same topics and every topic has several classes.
    ``disjoint``: class k subscribes to its own T / K topics (a cluster where each
    application has its own topics but shares one group id); still Kafka's general path,
    since the subscriptions differ."""
    names = [f"topic-{i:03d}" for i in range(shape.topics)]
    if layout == "disjoint":
        width = max(1, shape.topics // shape.classes)
        return [tuple(names[k * width + j] for j in range(width)) for k in range(shape.classes)]
    if layout != "overlapping":
        raise ValueError(f"unknown layout {layout!r} (expected one of {', '.join(LAYOUTS)})")
    half = max(1, shape.topics // 2)
    out = []
    for k in range(shape.classes):
        start = k * shape.topics // shape.classes
        out.append(tuple(names[(start + j) % shape.topics] for j in range(half)))
    return out


def group(
    shape: Shape,
    owned: dict[str, TopicPartitions] | None,
    leaving: str | None,
    layout: str = "overlapping",
) -> tuple[dict[str, int], list[MemberSubscription]]:
    topics = {f"topic-{i:03d}": shape.partitions for i in range(shape.topics)}
    classes = subscriptions(shape, layout)
    members = []
    for i in range(shape.members):
        mid = f"consumer-{i:05d}"
        if mid == leaving:
            continue
        mine = (owned or {}).get(mid, {})
        generation = 1 if owned is not None else -1
        sub = Subscription(
            classes[i % shape.classes], encode_user_data(generation), mine, generation
        )
        members.append(MemberSubscription(mid, sub))
    return topics, members


def measure(
    jvm: JvmOracle,
    topics: dict[str, int],
    members: list[MemberSubscription],
    runs: int,
    warmup: int,
    java_timeout_s: float | None = None,
) -> dict[str, Any]:
    """Both sides on one input. ``java_timeout_s``: stop waiting for Java after this many
    seconds (its JVM is stopped; the row then says Java did not finish, and the ratio is a
    lower bound)."""
    assignor = get_assignor("cooperative-sticky")
    best = float("inf")
    ours: dict[str, TopicPartitions] = {}
    for _ in range(runs):
        start = time.perf_counter()
        result = assignor.assign(topics, members)
        best = min(best, time.perf_counter() - start)
        ours = {m: a.partitions for m, a in result.items()}
    request = kafka_assignor_request("cooperative-sticky", topics, members, repeat=warmup)
    answers: list[Any] = []
    errors: list[BaseException] = []

    def call() -> None:
        try:
            answers.append(jvm.call("KafkaAssignor", request))
        except Exception as e:  # the JVM stopped on the timeout below
            errors.append(e)

    worker = threading.Thread(target=call, daemon=True)
    started = time.perf_counter()
    worker.start()
    worker.join(java_timeout_s)
    if worker.is_alive():
        waited = time.perf_counter() - started
        jvm.stop()
        worker.join(30)
        return {"groupspec_s": best, "java_s": None, "java_waited_s": waited,
                "ratio": waited / best, "identical": None, "assignment": ours}  # fmt: skip
    if errors:
        raise errors[0]
    answer = answers[0]
    theirs = kafka_assignment(answer)
    same = {m: sorted((t, p) for t, ps in v.items() for p in ps) for m, v in ours.items()} == {
        m: sorted((t, p) for t, ps in v.items() for p in ps) for m, v in theirs.items()
    }
    java = answer["nanos"] / 1e9
    return {"groupspec_s": best, "java_s": java, "ratio": java / best, "identical": same,
            "assignment": ours}  # fmt: skip


def run(
    shape: Shape,
    runs: int,
    warmup: int,
    scenarios: Sequence[str] = ("fresh", "leave"),
    layout: str = "overlapping",
    java_timeout_s: float | None = None,
) -> list[dict[str, Any]]:
    """``leave`` starts from a balanced assignment made by ``cooperative-sticky-optimal``
    (fast at any size), so it does not need ``fresh``: Kafka's general path is quadratic
    on a fresh non-uniform group (``performReassignments`` checks ``isBalanced``, a scan of
    every member's topics, before each partition while sizes differ by more than one)."""
    rows = []
    with JvmOracle(heap="6g", flags=("-XX:+UseParallelGC",)) as jvm:
        if "fresh" in scenarios:
            topics, members = group(shape, None, None, layout)
            fresh = measure(jvm, topics, members, runs, warmup, java_timeout_s)
            rows.append(
                {
                    "scenario": "fresh",
                    "layout": layout,
                    **{k: v for k, v in fresh.items() if k != "assignment"},
                }
            )
        if "leave" in scenarios:
            topics, members = group(shape, None, None, layout)
            start = get_assignor("cooperative-sticky-optimal").assign(topics, members)
            owned = {m: a.partitions for m, a in start.items()}
            leaving = f"consumer-{shape.members // 2:05d}"
            topics, members = group(shape, owned, leaving, layout)
            leave = measure(jvm, topics, members, runs, warmup, java_timeout_s)
            rows.append(
                {
                    "scenario": "leave",
                    "layout": layout,
                    **{k: v for k, v in leave.items() if k != "assignment"},
                }
            )
    return rows


def section(shape: Shape, rows: list[dict[str, Any]], argv: Sequence[str]) -> str:
    lines = [
        BEGIN,
        "## Kafka-exact CooperativeSticky against the Kafka 4.1.2 jar (non-uniform, general path)",
        "",
        f"- command: `python -m bench.assignors_java {' '.join(argv)}`".rstrip() + "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"CPython {platform.python_version()}; 2 shared cores",
        f"- group: {shape.members} members in {shape.classes} subscription classes, "
        f"{shape.topics} topics x {shape.partitions:,} partitions = {shape.total:,} partitions; "
        "layout `overlapping`: each class subscribes to half the topics, in overlapping windows; "
        "`disjoint`: each class has its own tenth of the topics",
        "- Java: the `assign` call timed inside the JVM after warm-up calls; groupspec: best of "
        "in-process calls; both answers identical wherever Java finished (a row where it did not "
        "gives the time waited, and the ratio is a lower bound)",
        "",
        "| layout | scenario | groupspec (s) | Java (s) | Java / groupspec |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        if r["java_s"] is None:
            java, ratio = f"did not finish in {r['java_waited_s']:,.0f}", f"> {r['ratio']:,.0f}x"
        else:
            java, ratio = f"{r['java_s']:.3f}", f"{r['ratio']:.2f}x"
        lines.append(
            f"| {r['layout']} | {r['scenario']} | {r['groupspec_s']:.3f} | {java} | {ratio} |"
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_section(path: Path, text: str) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + text + tail
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m bench.assignors_java")
    p.add_argument(
        "--quick", action="store_true", help=f"{QUICK.total} partitions instead of {FULL.total:,}"
    )
    p.add_argument(
        "--runs", type=int, default=None, help="groupspec calls, best kept (default 3; --quick 1)"
    )
    p.add_argument(
        "--warmup", type=int, default=None, help="untimed Java calls first (default 2; --quick 1)"
    )
    p.add_argument("--readme", help="write the results section into this Markdown file")
    p.add_argument(
        "--scenarios", default="fresh,leave", help="comma-separated: fresh, leave (default both)"
    )
    p.add_argument(
        "--layouts",
        default=",".join(LAYOUTS),
        help="comma-separated subscription layouts: overlapping, disjoint (default both)",
    )
    p.add_argument(
        "--partitions", type=int, default=None, help="partitions per topic (overrides the shape's)"
    )
    p.add_argument(
        "--java-timeout",
        type=float,
        default=None,
        help="seconds to wait for Java's answer (warm-up included) before stopping its JVM",
    )
    args = p.parse_args(argv)
    shape = QUICK if args.quick else FULL
    if args.partitions is not None:
        if args.partitions < 1:
            p.error(f"--partitions: must be at least 1, got {args.partitions}")
        shape = Shape(shape.members, shape.topics, args.partitions, shape.classes)
    layouts = args.layouts.split(",")
    for layout in layouts:
        if layout not in LAYOUTS:
            p.error(f"--layouts: unknown layout {layout!r} (expected {', '.join(LAYOUTS)})")
    runs = args.runs if args.runs is not None else (1 if args.quick else 3)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 2)
    rows = [
        row
        for layout in layouts
        for row in run(shape, runs, warmup, args.scenarios.split(","), layout, args.java_timeout)
    ]
    print(json.dumps(rows, indent=1))
    if any(r["identical"] is False for r in rows):
        print("error: groupspec's answer differs from the jar's", file=sys.stderr)
        return 1
    if args.readme:
        write_section(Path(args.readme), section(shape, rows, argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

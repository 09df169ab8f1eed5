"""How often, and by how much, groupspec's ``sticky-optimal`` beats Kafka's ``sticky`` (which
groupspec reproduces exactly, see tests/test_assignors_kafka_jar.py) on random groups with
different subscriptions (Kafka's general path).

    python -m bench.optimal_vs_kafka [--inputs N] [--seed S]

Each input: 2-8 members, 1-5 topics of 1-12 partitions, each member subscribing to a random
non-empty subset; a random previous assignment (each partition owned by one of its
subscribers, or by a member that left, or by nobody), all members in one generation.
Balance is compared by the sum of squared member sizes (lower is more balanced; equal sums
mean equally balanced here) and by max - min size; moves count partitions owned before and
after by different members. Prints a Markdown table (docs/deviations.md quotes it).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Mapping, Sequence

from groupspec.assignors.base import MemberSubscription
from groupspec.assignors.moves import count_moves
from groupspec.assignors.sticky import (
    StickyAssignor,
    StickyOptimalAssignor,
    encode_user_data,
)
from groupspec.protocol.consumer_protocol import Subscription

Parts = Mapping[str, Mapping[str, tuple[int, ...]]]


def random_group(
    rng: random.Random,
) -> tuple[dict[str, int], list[MemberSubscription], dict[str, dict[str, tuple[int, ...]]]]:
    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 5))}
    names = list(topics)
    ids = [f"c{i}" for i in range(rng.randint(2, 8))]
    while True:
        subs = {m: tuple(sorted(rng.sample(names, rng.randint(1, len(names))))) for m in ids}
        if len(set(subs.values())) > 1 or len(names) == 1:
            break
    previous: dict[str, dict[str, list[int]]] = {}
    for t, n in topics.items():
        subscribers = [m for m in ids if t in subs[m]]
        for p in range(n):
            r = rng.random()
            owner = rng.choice(subscribers) if subscribers and r < 0.8 else ("gone" if r < 0.9 else None)
            if owner is not None:
                previous.setdefault(owner, {}).setdefault(t, []).append(p)
    prev = {m: {t: tuple(ps) for t, ps in parts.items()} for m, parts in previous.items()}
    members = [
        MemberSubscription(m, Subscription(subs[m], encode_user_data(prev.get(m, {}), 5), {}, 5))
        for m in ids
    ]
    return topics, members, prev


def shape(parts: Parts) -> tuple[int, int]:
    sizes = [sum(map(len, tps.values())) for tps in parts.values()]
    return sum(n * n for n in sizes), max(sizes) - min(sizes)


def compare(inputs: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    kafka, optimal = StickyAssignor(), StickyOptimalAssignor()
    stats = dict.fromkeys(
        [
            "inputs", "differ", "more_balanced", "less_balanced", "spread_lower",
            "fewer_moves", "more_moves", "fewer_moves_same_balance", "moves_saved", "kafka_moves",
            "squares_saved",
        ],
        0.0,
    )  # fmt: skip
    general = 0
    while general < inputs:
        topics, members, prev = random_group(rng)
        if len({m.subscription.topics for m in members}) == 1:
            continue
        general += 1
        k = {m: a.partitions for m, a in kafka.assign(topics, members).items()}
        o = {m: a.partitions for m, a in optimal.assign(topics, members).items()}
        (ks, kspread), (os_, ospread) = shape(k), shape(o)
        km, om = count_moves(prev, k), count_moves(prev, o)
        stats["inputs"] += 1
        stats["differ"] += k != o
        stats["more_balanced"] += os_ < ks
        stats["less_balanced"] += os_ > ks
        stats["squares_saved"] += ks - os_
        stats["spread_lower"] += ospread < kspread
        stats["fewer_moves"] += om < km
        stats["more_moves"] += om > km
        stats["fewer_moves_same_balance"] += om < km and os_ == ks
        stats["moves_saved"] += km - om
        stats["kafka_moves"] += km
    return stats


def table(stats: Mapping[str, float], seed: int) -> list[str]:
    n = stats["inputs"]

    def pct(key: str) -> str:
        return f"{stats[key]:.0f} ({100 * stats[key] / n:.1f}%)"

    return [
        f"Random groups with different subscriptions: {n:.0f} inputs, seed {seed} "
        "(`python -m bench.optimal_vs_kafka`).",
        "",
        "| sticky-optimal against Kafka's sticky | inputs |",
        "|---|---:|",
        f"| a different assignment | {pct('differ')} |",
        f"| more balanced (lower sum of squared sizes) | {pct('more_balanced')} |",
        f"| less balanced | {pct('less_balanced')} |",
        f"| lower max - min size | {pct('spread_lower')} |",
        f"| fewer moves | {pct('fewer_moves')} |",
        f"| fewer moves at equal balance | {pct('fewer_moves_same_balance')} |",
        f"| more moves (the price of better balance) | {pct('more_moves')} |",
        f"| moves in total: Kafka / optimal | {stats['kafka_moves']:.0f} / "
        f"{stats['kafka_moves'] - stats['moves_saved']:.0f} |",
        f"| sum of squared sizes saved, in total | {stats['squares_saved']:.0f} |",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.optimal_vs_kafka")
    p.add_argument("--inputs", type=int, default=2000)
    p.add_argument("--seed", type=int, default=18)
    args = p.parse_args(argv)
    print("\n".join(table(compare(args.inputs, args.seed), args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""An independent oracle for the sticky assignors' optimality, by constraint solving.

Given the partitions, who may own each (its topic's subscribers) and who owned it before,
z3 finds, over *all* assignments of every partition to one of its subscribers:

1. the least sum of squared member sizes (the most balanced assignment: it minimises every
   convex measure of imbalance and implies Kafka's ``isBalanced`` contract), and then
2. among the assignments reaching that, the fewest moves (a partition whose previous owner
   is a different member, or is gone, or no longer subscribes, counts one move).

It shares no code with :mod:`groupspec.assignors`: one Boolean per (partition, subscriber),
squares encoded in unary (x^2 = 1 + 3 + ... + (2x - 1)), lexicographic objectives. Meant for
small inputs (a dozen partitions, a handful of members).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import z3


@dataclass(frozen=True)
class Optimum:
    sum_of_squares: int
    moves: int
    sizes: dict[str, int]


def optimum(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Sequence[str]],
    previous_owner: Mapping[tuple[str, int], str],
) -> Optimum:
    """Optimum over the partitions of the subscribed topics in ``partitions_per_topic``."""
    members = sorted(subscriptions)
    partitions = [
        (t, p)
        for t in sorted(partitions_per_topic)
        if any(t in subscriptions[m] for m in members)
        for p in range(partitions_per_topic[t])
    ]
    opt = z3.Optimize()
    var: dict[tuple[tuple[str, int], str], z3.BoolRef] = {}
    for tp in partitions:
        eligible = [m for m in members if tp[0] in subscriptions[m]]
        vs = [z3.Bool(f"a_{tp[0]}_{tp[1]}_{m}") for m in eligible]
        for m, v in zip(eligible, vs, strict=True):
            var[(tp, m)] = v
        opt.add(z3.PbEq([(v, 1) for v in vs], 1))
    squares: list[Any] = []
    for m in members:
        mine = [v for (tp, mm), v in var.items() if mm == m]
        levels = [z3.Bool(f"x_{m}_ge_{k}") for k in range(1, len(mine) + 1)]
        size = z3.Sum([z3.If(v, 1, 0) for v in mine]) if mine else z3.IntVal(0)
        opt.add(size == z3.Sum([z3.If(b, 1, 0) for b in levels]) if levels else size == 0)
        for lo, hi in pairwise(levels):
            opt.add(z3.Implies(hi, lo))
        squares.extend(z3.If(b, 2 * k - 1, 0) for k, b in enumerate(levels, start=1))
    moves: list[Any] = []
    for tp in partitions:
        before = previous_owner.get(tp)
        if before is None:
            continue
        stay = var.get((tp, before))
        moves.append(z3.IntVal(1) if stay is None else z3.If(stay, 0, 1))
    h1 = opt.minimize(z3.Sum(squares) if squares else z3.IntVal(0))
    h2 = opt.minimize(z3.Sum(moves) if moves else z3.IntVal(0))
    if opt.check() != z3.sat:
        raise AssertionError("z3 oracle: no assignment exists (cannot happen)")
    model = opt.model()
    sizes = {
        m: sum(1 for (tp, mm), v in var.items() if mm == m and z3.is_true(model.eval(v)))
        for m in members
    }
    return Optimum(int(str(h1.value())), int(str(h2.value())), sizes)

"""The numbers of one run: a row per run, a row per rebalance, a row per violated invariant.

Pure and deterministic (the wall-clock ``wall_ms`` aside): the same run gives the same rows
on a Spark executor and in this process, which the tests check.

Per rebalance (the coordinator's PreparingRebalance until Stable): start and end, duration,
generation, members, the partitions its generation handed to a new owner, and the
partition-milliseconds without an owner inside it, i.e. the stop-the-world unavailability it
caused. A rebalance interrupted by another (back to PreparingRebalance) ends where the next
one starts; one still open at the end ends with the simulation. ``phase`` is ``formation``
for rebalances that started before the first churn event, ``churn`` after.

Per run: rebalance counts and time, partitions without an owner (all of the run, from the
first churn event on, and inside the churn's rebalances), moves, records processed twice,
and the invariant verdicts.

One meaning per column name, across these rows and the aggregates built from them
(``pipeline.spark``): ``total_*`` is a whole run (formation and churn), ``churn_*`` the run
from the first churn event on; ``partitions_moved`` is one rebalance's; ``violations`` is
always a number of invariant violations; ``rebalances`` and ``runs`` in an aggregate count
the rows it was built from; ``mean_X`` is the mean of column ``X`` over them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from groupspec.pipeline.config import RunSpec
from groupspec.pipeline.probe import probe
from groupspec.pipeline.scenarios import build_scenario

Row = dict[str, Any]
#: (column, kind) with kind one of str, int, float, bool; the Parquet and Spark schemas
Columns = tuple[tuple[str, str], ...]

KEY_COLUMNS: Columns = (
    ("run_id", "str"), ("cell_id", "str"), ("churn", "str"), ("protocol", "str"),
    ("assignor", "str"), ("strategy", "str"), ("group_size", "int"), ("partitions", "int"),
    ("delay_ms", "int"), ("seed", "int"),
)

RUN_COLUMNS: Columns = (
    *KEY_COLUMNS,
    ("sim_end_ms", "int"),
    ("churn_start_ms", "int"),
    ("churn_end_ms", "int"),
    ("total_rebalances", "int"),
    ("churn_rebalances", "int"),
    ("total_rebalance_ms", "int"),
    ("churn_rebalance_ms", "int"),
    ("total_unavailable_partition_ms", "int"),
    ("churn_unavailable_partition_ms", "int"),
    ("churn_stw_partition_ms", "int"),
    ("total_partitions_moved", "int"),
    ("churn_partitions_moved", "int"),
    ("records_processed_twice", "int"),
    ("final_generation", "int"),
    ("verdicts_ok", "bool"),
    ("failed_verdicts", "str"),
    ("violations", "int"),
    ("wall_ms", "float"),
)

REBALANCE_COLUMNS: Columns = (
    *KEY_COLUMNS,
    ("index", "int"),
    ("phase", "str"),
    ("started_ms", "int"),
    ("ended_ms", "int"),
    ("completed", "bool"),
    ("duration_ms", "int"),
    ("generation", "int"),
    ("members", "int"),
    ("partitions_moved", "int"),
    ("unowned_partition_ms", "int"),
)

VIOLATION_COLUMNS: Columns = (*KEY_COLUMNS, ("kind", "str"), ("violations", "int"))

#: columns that differ between two runs of the same cell (timing), left out of comparisons
NONDETERMINISTIC = frozenset({"wall_ms"})


@dataclass(frozen=True)
class RunRecord:
    run: Row
    rebalances: tuple[Row, ...]
    violations: tuple[Row, ...]


def key_row(spec: RunSpec) -> Row:
    c = spec.cell
    return {
        "run_id": spec.run_id, "cell_id": c.cell_id, "churn": c.churn, "protocol": c.protocol,
        "assignor": c.assignor, "strategy": c.strategy, "group_size": c.group_size,
        "partitions": c.partitions, "delay_ms": c.delay_ms, "seed": spec.seed,
    }


def run_one(spec: RunSpec) -> RunRecord:
    """Simulate one cell with one seed and derive its rows."""
    t0 = time.perf_counter()
    built = build_scenario(spec)
    pr = probe(built.scenario)
    res = pr.result
    key = key_row(spec)
    moves = pr.moves_by_generation()
    rebalances: list[Row] = []
    rbs = res.rebalances
    for i, rb in enumerate(rbs):
        if rb.ended_ms is not None:
            end = rb.ended_ms
        elif i + 1 < len(rbs):
            end = rbs[i + 1].started_ms
        else:
            end = pr.end_ms
        rebalances.append({
            **key,
            "index": i,
            "phase": "churn" if rb.started_ms >= built.churn_start_ms else "formation",
            "started_ms": rb.started_ms,
            "ended_ms": rb.ended_ms,
            "completed": rb.ended_ms is not None,
            "duration_ms": end - rb.started_ms,
            "generation": rb.generation,
            "members": rb.members,
            "partitions_moved": moves.get(rb.generation, 0) if rb.generation >= 0 else 0,
            "unowned_partition_ms": pr.unowned_ms(rb.started_ms, end),
        })
    churn = [r for r in rebalances if r["phase"] == "churn"]
    counts = pr.violation_counts()
    failed = [v.name for v in res.verdicts if not v.ok]
    mt = res.metrics
    run: Row = {
        **key,
        "sim_end_ms": pr.end_ms,
        "churn_start_ms": built.churn_start_ms,
        "churn_end_ms": built.churn_end_ms,
        "total_rebalances": len(rebalances),
        "churn_rebalances": len(churn),
        "total_rebalance_ms": sum(r["duration_ms"] for r in rebalances if r["completed"]),
        "churn_rebalance_ms": sum(r["duration_ms"] for r in churn),
        "total_unavailable_partition_ms": pr.unowned_ms(0, pr.end_ms),
        "churn_unavailable_partition_ms": pr.unowned_ms(built.churn_start_ms, pr.end_ms),
        "churn_stw_partition_ms": sum(r["unowned_partition_ms"] for r in churn),
        "total_partitions_moved": int(mt["partitions_moved"]),
        "churn_partitions_moved": sum(r["partitions_moved"] for r in churn),
        "records_processed_twice": int(mt["records_processed_twice"]),
        "final_generation": int(mt["final_generation"]),
        "verdicts_ok": res.ok,
        "failed_verdicts": ",".join(failed),
        "violations": sum(counts.values()),
        "wall_ms": round((time.perf_counter() - t0) * 1000.0, 1),
    }
    violations = tuple({**key, "kind": k, "violations": n} for k, n in sorted(counts.items()))
    return RunRecord(run, tuple(rebalances), violations)


def run_json(text: str) -> RunRecord:
    """:func:`run_one` on a :meth:`RunSpec.to_json` text (what an executor receives)."""
    return run_one(RunSpec.from_json(text))


def run_inprocess(specs: list[RunSpec]) -> list[RunRecord]:
    """Every run in this process, one after another (the reference for the Spark path)."""
    return [run_one(s) for s in specs]

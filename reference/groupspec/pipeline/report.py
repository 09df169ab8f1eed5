"""The sweep's report: DIR/report.md and DIR/report.html with tables and plots.

Everything is read back from the sweep directory (the Parquet tables and ``sweep.json``),
so ``groupspec pipeline report DIR`` can redraw a report without running anything. Plots
use matplotlib's Agg canvas (no display, no global pyplot state); the HTML embeds them, the
Markdown links ``plots/*.png``; every plot is also written as SVG beside its PNG. Each plot
says how many values (n) stand behind each bar, box or point; a plot (or a box) with
nothing to draw is left out and the text says so in a sentence. Every percentage in the
summary carries a bootstrap confidence interval (:mod:`.bootstrap`).

The opening summary answers the sweep's questions from the per-strategy means:

* rolling restart: unavailability (partition-seconds without an owner from the first churn
  event on) and partition moves of each protocol against the baseline strategy;
* crash (and crash-restart): what a KIP-415 delay adds in unavailability, and saves in moves,
  against no delay, for the same strategy and group.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from groupspec.pipeline.bootstrap import LEVEL, RESAMPLES, SEED, ratio_ci
from groupspec.pipeline.config import CHURN_HELP, PROTOCOLS
from groupspec.pipeline.metrics import Row
from groupspec.pipeline.tables import read_table

PLOTS: tuple[str, ...] = ("unavailability", "moves_per_rebalance", "rebalance_count",
                          "rebalance_duration", "violations", "kip415")

#: a block of the report: (kind, payload); kinds h2, p, ul, table, img
Block = tuple[str, Any]


@dataclass(frozen=True)
class SweepData:
    meta: dict[str, Any]
    runs: list[Row]
    rebalances: list[Row]
    violations: list[Row]
    by_strategy: list[Row]
    rebalance_stats: list[Row]
    violations_by_kind: list[Row]

    @staticmethod
    def load(out: Path) -> SweepData:
        meta = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
        return SweepData(meta, *(read_table(out / f"{name}.parquet") for name in (
            "runs", "rebalances", "violations", "by_strategy", "rebalance_stats", "violations_by_kind")))


# ---------------------------------------------------------------------------- summary
def _pct(new: float, old: float) -> str:
    if old == 0:
        return "n/a" if new == 0 else "new"
    return f"{(new - old) / old * 100:+.0f}%"


def _change(new: list[float], old: list[float]) -> str:
    """The relative change of the means with its bootstrap interval (or why there is none)."""
    ci = ratio_ci(new, old)
    if ci is None:
        return _pct(_avg(new), _avg(old))
    return ci.text()


def _avg(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _saves(new: list[float], old: list[float], unit: str) -> str:
    """'saves 12.3 partition-s (-40%, 95% CI -52% to -28%)' or 'costs 4.0 partition-s more (...)'."""
    diff = _avg(old) - _avg(new)
    amount = f"{abs(diff):.1f}" if unit != "moves" else f"{abs(diff):.0f}"
    if diff >= 0:
        return f"saves {amount} {unit} ({_change(new, old)})"
    return f"costs {amount} {unit} more ({_change(new, old)})"


def _per_run(runs: list[Row], cell: Row, key: str, scale: float = 1.0) -> list[float]:
    """One value per run (seed) of ``cell``."""
    return [r[key] / scale for r in runs if _same_cell(r, cell)]


def _unavailable(runs: list[Row], cell: Row) -> list[float]:
    return _per_run(runs, cell, "churn_unavailable_partition_ms", 1000.0)


def _moves(runs: list[Row], cell: Row) -> list[float]:
    return _per_run(runs, cell, "churn_partitions_moved")


def _group_label(row: Row) -> str:
    return f"{row['group_size']} members, {row['partitions']} partitions"


def _pick(rows: list[Row], protocol: str, prefer: Sequence[str]) -> Row | None:
    candidates = [r for r in rows if r["protocol"] == protocol]
    for name in prefer:
        for r in candidates:
            if r["assignor"] == name:
                return r
    return candidates[0] if candidates else None


def rolling_restart_summary(by_strategy: list[Row], baseline: str, seeds: int,
                            churn_settings: dict[str, Any], runs: list[Row] | None = None) -> list[str]:
    runs = runs or []
    rows = [r for r in by_strategy if r["churn"] == "rolling-restart" and r["delay_ms"] == 0]
    out: list[str] = []
    groups = sorted({(r["group_size"], r["partitions"]) for r in rows})
    s = churn_settings.get("rolling-restart", {})
    for n, p in groups:
        here = [r for r in rows if (r["group_size"], r["partitions"]) == (n, p)]
        base = next((r for r in here if r["strategy"] == baseline), None) or _pick(here, "eager", ["range"])
        if base is None:
            continue
        head = (f"**Rolling restart** ({n} members, {p} partitions, each member down "
                f"{s.get('downtime_ms', 0) / 1000:g} s, {seeds} seed(s)): the baseline {base['strategy']} "
                f"leaves partitions without an owner for {base['mean_churn_unavailable_partition_s']:.1f} "
                f"partition-s ({base['mean_churn_stw_partition_s']:.1f} inside rebalances) and moves "
                f"{base['mean_churn_partitions_moved']:.0f} partitions in "
                f"{base['mean_churn_rebalances']:.1f} rebalances.")
        out.append(head)
        assignor = base["assignor"]
        for protocol, what in (("cooperative", "Cooperative rebalancing"),
                               ("static-eager", "Static membership (eager)"),
                               ("static-cooperative", "Static membership (cooperative)"),
                               ("consumer", "The consumer protocol (KIP-848)"),
                               ("static-consumer", "The consumer protocol, static (KIP-848)")):
            r = _pick(here, protocol, [assignor, "cooperative-sticky", "uniform"])
            if r is None or r is base:
                continue
            out.append(
                f"{what}, {r['strategy']}: "
                f"{_saves(_unavailable(runs, r), _unavailable(runs, base), 'partition-s')}"
                f" of unavailability and "
                f"{_saves(_moves(runs, r), _moves(runs, base), 'moves')}"
                f" over {base['strategy']} ({r['mean_churn_unavailable_partition_s']:.1f} partition-s, "
                f"{r['mean_churn_partitions_moved']:.0f} moves, {r['mean_churn_rebalances']:.1f} rebalances)."
            )
    return out


def kip415_summary(by_strategy: list[Row], churn_settings: dict[str, Any],
                   runs: list[Row] | None = None) -> list[str]:
    """One line per crash pattern, strategy and group: every delay against none."""
    runs = runs or []
    out: list[str] = []
    for churn in ("crash", "crash-restart"):
        rows = [r for r in by_strategy if r["churn"] == churn]
        keys = sorted({(r["strategy"], r["group_size"], r["partitions"]) for r in rows})
        for strategy, n, p in keys:
            same = sorted((r for r in rows if (r["strategy"], r["group_size"], r["partitions"]) == (strategy, n, p)),
                          key=lambda r: r["delay_ms"])
            base = next((r for r in same if r["delay_ms"] == 0), None)
            delayed = [r for r in same if r["delay_ms"] > 0]
            if base is None or not delayed:
                continue
            back = churn_settings.get(churn, {}).get("restart_after_ms")
            story = ("the member stays down" if churn == "crash"
                     else f"the member is back after {back / 1000:g} s" if back is not None
                     else "the member comes back")
            b = base["mean_churn_unavailable_partition_s"]
            parts = []
            for r in delayed:
                u = r["mean_churn_unavailable_partition_s"]
                parts.append(f"a {r['delay_ms'] / 1000:g} s delay {'adds' if u >= b else 'saves'} "
                             f"{abs(u - b):.1f} partition-s "
                             f"({_change(_unavailable(runs, r), _unavailable(runs, base))}; {u:.1f} in all), "
                             f"{r['mean_churn_partitions_moved']:.1f} partitions moved")
            out.append(
                f"**KIP-415 after a crash** ({story}; {strategy}, {n} members, {p} partitions): "
                f"without a delay, {b:.1f} partition-s without an owner, "
                f"{base['mean_churn_partitions_moved']:.1f} partitions moved; " + "; ".join(parts) + "."
            )
    return out


def summary_lines(data: SweepData) -> list[str]:
    meta = data.meta
    seeds = len(meta.get("seeds", [])) or 1
    churn = meta.get("settings", {}).get("churn", {})
    lines = rolling_restart_summary(data.by_strategy, meta.get("baseline", "eager/range"), seeds, churn, data.runs)
    lines += kip415_summary(data.by_strategy, churn, data.runs)
    if lines:
        lines.append(
            f"Percentages compare the means over seeds of two cells; each comes with a {LEVEL * 100:.0f}% "
            f"confidence interval from a percentile bootstrap ({RESAMPLES} resamples of each cell's "
            f"{seeds} runs, random seed {SEED}, so the report is the same every time it is drawn). "
            "The interval shows how far the choice of seeds alone moves the number.")
    ok = sum(1 for r in data.runs if r["verdicts_ok"])
    total = len(data.runs)
    if ok == total:
        lines.append(f"Every invariant held in all {total} runs.")
    else:
        kinds = sorted({k for r in data.violations for k in [r["kind"]]})
        lines.append(f"Invariants failed in {total - ok} of {total} runs ({', '.join(kinds)}): see Violations.")
    return lines


# ---------------------------------------------------------------------------- plots
#: a plot: the figure, or None when there is nothing to draw, and sentences for the text
#: (what was left out of the figure, or why there is none)
Plot = tuple[Figure | None, list[str]]

BOX_KEY = ("box: the middle half of the values (25th to 75th percentile); the orange line inside "
           "the box: the median (half the values lie below it); triangle: the mean; whiskers: the "
           "furthest values within 1.5 box lengths of the box; circles: values beyond them")


def _varying(rows: list[Row], key: str) -> bool:
    return len({r[key] for r in rows}) > 1


def _labeler(rows: list[Row]) -> Callable[[Row], str]:
    """Label a cell by its strategy plus the axes that vary in the sweep."""
    n, p, d = (_varying(rows, k) for k in ("group_size", "partitions", "delay_ms"))

    def label(r: Row) -> str:
        parts = [r["strategy"]]
        if n:
            parts.append(f"n{r['group_size']}")
        if p:
            parts.append(f"p{r['partitions']}")
        if d:
            parts.append(f"delay {r['delay_ms'] / 1000:g}s")
        return " ".join(parts)

    return label


def _churns(rows: list[Row]) -> list[str]:
    return sorted({r["churn"] for r in rows})


def _figure(rows: int, height_per_row: float, width: float = 10.0) -> Figure:
    fig = Figure(figsize=(width, max(2.5, height_per_row)), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _cell_order(rows: list[Row]) -> list[Row]:
    order = list(PROTOCOLS)
    return sorted(rows, key=lambda r: (order.index(r["protocol"]), r["assignor"], r["group_size"],
                                       r["partitions"], r["delay_ms"]))


def plot_unavailability(data: SweepData) -> Plot:
    rows = data.by_strategy
    churns = _churns(rows)
    if not churns:
        return None, ["No cells in this sweep, so no unavailability to plot."]
    heights = [len([r for r in rows if r["churn"] == c]) for c in churns]
    fig = _figure(len(churns), 0.32 * sum(heights) + 1.1 * len(churns) + 0.4)
    axes = fig.subplots(len(churns), 1, squeeze=False, height_ratios=[h + 2 for h in heights])
    for ax, churn in zip(axes[:, 0], churns, strict=True):
        here = _cell_order([r for r in rows if r["churn"] == churn])
        label = _labeler(here)
        names = [f"{label(r)} (n={r['runs']})" for r in here]
        inside = [r["mean_churn_stw_partition_s"] for r in here]
        total = [r["mean_churn_unavailable_partition_s"] for r in here]
        outside = [t - i for t, i in zip(total, inside, strict=True)]
        y = list(range(len(here)))
        ax.barh(y, inside, color="#c0392b", label="inside rebalances (stop-the-world)")
        ax.barh(y, outside, left=inside, color="#f5b041", label="outside rebalances (detection, downtime, KIP-415 hold)")
        lo = [max(t - r["min_churn_unavailable_partition_s"], 0.0) for t, r in zip(total, here, strict=True)]
        hi = [max(r["max_churn_unavailable_partition_s"] - t, 0.0) for t, r in zip(total, here, strict=True)]
        ax.errorbar(total, y, xerr=[lo, hi], fmt="none", ecolor="#333333", capsize=3, linewidth=1)
        ax.set_yticks(y, names, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{churn}: partition-seconds without an owner (bar: mean over n runs; whiskers: min to max)",
                     fontsize=10)
        ax.set_xlabel("partition-seconds")
        ax.grid(axis="x", alpha=0.3)
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside upper center", ncols=2, fontsize=8)
    return fig, []


def _boxplots(data: SweepData, values: Callable[[Row], list[float]], title: str, xlabel: str,
              counted: str) -> Plot:
    """One panel per churn pattern, a box per cell with values; cells (and panels) without
    any are left out and named in a sentence instead."""
    rows = data.by_strategy
    panels: list[tuple[str, list[tuple[Row, list[float]]]]] = []
    empty: list[str] = []
    for churn in _churns(rows):
        here = _cell_order([r for r in rows if r["churn"] == churn])
        label = _labeler(here)
        with_values = [(r, values(r)) for r in here]
        empty += [f"{churn} {label(r)}" for r, v in with_values if not v]
        kept = [(r, v) for r, v in with_values if v]
        if kept:
            panels.append((churn, kept))
    notes = [f"No {counted} to show for: {', '.join(empty)}."] if empty else []
    if not panels:
        return None, notes
    heights = [len(kept) for _, kept in panels]
    fig = _figure(len(panels), 0.32 * sum(heights) + 1.1 * len(panels))
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=[h + 2 for h in heights])
    for ax, (churn, kept) in zip(axes[:, 0], panels, strict=True):
        label = _labeler([r for r, _ in kept])
        series = [v for _, v in kept]
        ax.boxplot(series, orientation="horizontal",
                   tick_labels=[f"{label(r)} (n={len(v)})" for r, v in kept],
                   showmeans=True, widths=0.6)
        ax.tick_params(axis="y", labelsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{churn}: {title} (n = {counted})", fontsize=10)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    return fig, notes


def _same_cell(a: Row, b: Row) -> bool:
    return all(a[k] == b[k] for k in ("churn", "strategy", "group_size", "partitions", "delay_ms"))


def plot_moves_per_rebalance(data: SweepData) -> Plot:
    churn_rbs = [r for r in data.rebalances if r["phase"] == "churn"]
    return _boxplots(
        data, lambda c: [float(r["partitions_moved"]) for r in churn_rbs if _same_cell(r, c)],
        "partitions moved per rebalance (churn phase)", "partitions moved", "rebalances")


def plot_rebalance_count(data: SweepData) -> Plot:
    return _boxplots(
        data, lambda c: [float(r["churn_rebalances"]) for r in data.runs if _same_cell(r, c)],
        "rebalances per run (churn phase)", "rebalances", "runs")


def plot_rebalance_duration(data: SweepData) -> Plot:
    churn_rbs = [r for r in data.rebalances if r["phase"] == "churn"]
    return _boxplots(
        data, lambda c: [r["duration_ms"] / 1000 for r in churn_rbs if _same_cell(r, c)],
        "rebalance duration, PreparingRebalance to Stable (churn phase)", "seconds", "rebalances")


def plot_violations(data: SweepData) -> Plot:
    totals: dict[str, int] = {}
    for r in data.violations_by_kind:
        totals[r["kind"]] = totals.get(r["kind"], 0) + int(r["violations"])
    if not totals:
        return None, [f"No invariant was violated in any of the {len(data.runs)} runs, so there is no "
                      "violations plot."]
    fig = _figure(1, 3.2, width=8.0)
    ax = fig.subplots()
    kinds = sorted(totals)
    ax.barh(kinds, [totals[k] for k in kinds], color="#8e44ad")
    for y, k in enumerate(kinds):
        ax.text(totals[k], y, f" {totals[k]}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_title(f"invariant violations by kind (n = {len(data.runs)} runs)", fontsize=10)
    ax.set_xlabel("violations")
    ax.grid(axis="x", alpha=0.3)
    return fig, []


def plot_kip415(data: SweepData) -> Plot:
    rows = [r for r in data.by_strategy if r["churn"] in ("crash", "crash-restart")]
    churns = [c for c in _churns(rows) if len({r["delay_ms"] for r in rows if r["churn"] == c}) > 1]
    if not churns:
        return None, ["This sweep has no crash cells with more than one KIP-415 delay, so there is no "
                      "KIP-415 plot."]
    fig = _figure(len(churns), 3.2 * len(churns))
    axes = fig.subplots(len(churns), 2, squeeze=False)
    for (ax_u, ax_m), churn in zip(axes, churns, strict=True):
        here = [r for r in rows if r["churn"] == churn]
        for key in sorted({(r["strategy"], r["group_size"], r["partitions"]) for r in here}):
            line = sorted((r for r in here if (r["strategy"], r["group_size"], r["partitions"]) == key),
                          key=lambda r: r["delay_ms"])
            ns = sorted({r["runs"] for r in line})
            name = f"{key[0]} n{key[1]} p{key[2]} (n={'/'.join(str(x) for x in ns)} runs per point)"
            xs = [r["delay_ms"] / 1000 for r in line]
            ax_u.plot(xs, [r["mean_churn_unavailable_partition_s"] for r in line], marker="o", label=name)
            ax_m.plot(xs, [r["mean_churn_partitions_moved"] for r in line], marker="o", label=name)
        ax_u.set_title(f"{churn}: partition-s without an owner vs KIP-415 delay (mean)", fontsize=10)
        ax_m.set_title(f"{churn}: partitions moved vs KIP-415 delay (mean)", fontsize=10)
        for ax in (ax_u, ax_m):
            ax.set_xlabel("scheduled.rebalance.max.delay.ms (s)")
            ax.grid(alpha=0.3)
        ax_u.legend(fontsize=7)
        ax_m.legend(fontsize=7)
    return fig, []


PLOTTERS: dict[str, Callable[[SweepData], Plot]] = {
    "unavailability": plot_unavailability,
    "moves_per_rebalance": plot_moves_per_rebalance,
    "rebalance_count": plot_rebalance_count,
    "rebalance_duration": plot_rebalance_duration,
    "violations": plot_violations,
    "kip415": plot_kip415,
}

CAPTIONS: dict[str, str] = {
    "unavailability": "Unavailability per strategy: partition-seconds without an owner from the first churn "
                      "event on, split into time inside rebalances and outside them; the bar is the mean over "
                      "the cell's n runs (seeds), the whiskers the smallest and largest run.",
    "moves_per_rebalance": "Partitions handed to a different owner, per rebalance of the churn phase; n counts "
                           "the rebalances of all the cell's runs. " + BOX_KEY[0].upper() + BOX_KEY[1:] + ".",
    "rebalance_count": "How many rebalances each run's churn caused; n counts the runs (seeds). "
                       + BOX_KEY[0].upper() + BOX_KEY[1:] + ".",
    "rebalance_duration": "How long each rebalance of the churn phase took; n counts the rebalances of all the "
                          "cell's runs. " + BOX_KEY[0].upper() + BOX_KEY[1:] + ".",
    "violations": "Invariant violations by kind (groupspec.invariants and the liveness property), over all n runs.",
    "kip415": "KIP-415 delayed imbalance: what each delay costs in unavailability and saves in moves; each "
              "point is the mean over n runs.",
}


# ---------------------------------------------------------------------------- tables
def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) >= 10 or v == 0 else f"{v:.2f}"
    return "" if v is None else str(v)


def _table(rows: list[Row], columns: Sequence[tuple[str, str]]) -> tuple[list[str], list[list[str]]]:
    return [h for _, h in columns], [[_fmt(r[k]) for k, _ in columns] for r in rows]


STRATEGY_TABLE = (
    ("churn", "churn"), ("strategy", "strategy"), ("group_size", "members"), ("partitions", "partitions"),
    ("delay_ms", "KIP-415 delay ms"), ("runs", "runs"), ("runs_ok", "runs OK"),
    ("mean_churn_unavailable_partition_s", "unavailable partition-s / run"),
    ("mean_churn_stw_partition_s", "of which in rebalances / run"),
    ("mean_churn_partitions_moved", "moves / run"), ("mean_churn_rebalances", "rebalances / run"),
    ("mean_churn_rebalance_s", "rebalancing s / run"), ("mean_records_processed_twice", "records twice / run"),
)
REBALANCE_TABLE = (
    ("churn", "churn"), ("strategy", "strategy"), ("group_size", "members"), ("partitions", "partitions"),
    ("delay_ms", "KIP-415 delay ms"), ("rebalances", "rebalances (all runs)"),
    ("completed_rebalances", "completed (all runs)"),
    ("mean_duration_ms", "mean ms"), ("p50_duration_ms", "median ms"), ("p95_duration_ms", "p95 ms"),
    ("max_duration_ms", "max ms"), ("mean_partitions_moved", "moves / rebalance"),
    ("mean_unowned_partition_ms", "unowned partition-ms / rebalance"),
)
VIOLATION_TABLE = (("kind", "invariant"), ("churn", "churn"), ("strategy", "strategy"),
                   ("violations", "violations"), ("runs_with_violation", "runs with it"))


def blocks(data: SweepData, images: dict[str, tuple[str, list[str]]]) -> list[Block]:
    meta = data.meta
    out: list[Block] = [("h1", f"Sweep {meta.get('name', '')}")]
    if meta.get("description"):
        out.append(("p", meta["description"]))
    out.append(("h2", "Summary"))
    out.append(("ul", summary_lines(data)))
    out.append(("h2", "Plots"))
    out.append(("p", "Every plot is here as PNG and as SVG (plots/NAME.png, plots/NAME.svg); n on a plot "
                     "is the number of values behind each bar, box or point. In the box plots, "
                     + BOX_KEY + "."))
    for name in PLOTS:
        image, notes = images.get(name, ("", []))
        if image:
            out.append(("img", (name, image, CAPTIONS[name])))
        for note in notes:
            out.append(("p", note))
    out.append(("h2", "Per strategy (churn phase, mean over seeds)"))
    out.append(("table", _table(data.by_strategy, STRATEGY_TABLE)))
    out.append(("h2", "Rebalances of the churn phase"))
    out.append(("table", _table(data.rebalance_stats, REBALANCE_TABLE)))
    out.append(("h2", "Violations"))
    if data.violations_by_kind:
        out.append(("table", _table(data.violations_by_kind, VIOLATION_TABLE)))
    else:
        out.append(("p", f"No violations: every invariant held in all {len(data.runs)} runs."))
    out.append(("h2", "Setup"))
    settings = meta.get("settings", {})
    setup = [
        f"config {meta.get('source', '')}: {meta.get('cells', 0)} cell(s) x {len(meta.get('seeds', []))} "
        f"seed(s) = {len(data.runs)} runs on Spark master {meta.get('master', '?')} in "
        f"{meta.get('elapsed_s', 0):.0f} s (simulation {meta.get('run_s', 0):.0f} s)",
        "consumer settings: " + ", ".join(f"{k}={v}" for k, v in sorted(settings.get("consumer", {}).items())),
        f"network delay {settings.get('network_delay_ms', '?')} ms per message; "
        f"{settings.get('settle_ms', '?')} ms simulated after the churn plus a session timeout and the delay",
    ]
    used = sorted({r["churn"] for r in data.runs})
    for c in used:
        values = ", ".join(f"{k}={v}" for k, v in settings.get("churn", {}).get(c, {}).items())
        setup.append(f"churn {c}: {CHURN_HELP.get(c, '')} ({values})")
    setup += meta.get("skipped", [])
    out.append(("ul", setup))
    out.append(("h2", "Definitions"))
    out.append(("ul", [
        "how the protocols spend partition-time: an eager rebalance revokes every partition of every "
        "member until SyncGroup hands out the new assignment; a cooperative one revokes only the "
        "partitions that move, which then wait for a follow-up rebalance, which completes only once "
        "every member has heard of it on its next heartbeat (heartbeat_interval_ms); a static member "
        "that restarts within its session timeout causes no rebalance, and its partitions wait for it "
        "through its downtime",
        "unavailable partition-s: for every partition of the topic, the time no live member of the group "
        "held it (the simulator's partition_unowned_ms), from the first churn event to the end, in seconds",
        "of which in rebalances: the part of it between a rebalance's start (PreparingRebalance) and its end "
        "(Stable): the stop-the-world cost; the rest is detection (session timeout), a member's downtime "
        "(static members keep their partitions while away), and KIP-415 holds",
        "moves: partitions a generation handed to another owner than the one that last had them "
        "(group.instance.id for static members, member id otherwise)",
        "rebalances and their durations count only those that started at or after the first churn event; "
        "the group's formation is left out",
        "records twice: records processed by two consumers (the zombie window), as the simulator counts them",
        "/ run: the mean over the cell's runs (one run per seed) of a run's total; / rebalance: the mean over "
        "every rebalance of those runs; (all runs): a count over all of them",
        "median: the middle value (half the values lie below it); in the box plots, the orange line in a box",
    ]))
    return out


def _md(blocks_: list[Block]) -> str:
    out: list[str] = []
    for kind, payload in blocks_:
        if kind == "h1":
            out.append(f"# {payload}\n")
        elif kind == "h2":
            out.append(f"## {payload}\n")
        elif kind == "p":
            out.append(f"{payload}\n")
        elif kind == "ul":
            out.append("\n".join(f"- {x}" for x in payload) + "\n")
        elif kind == "img":
            name, _, caption = payload
            out.append(f"![{name}](plots/{name}.png)\n\n*{caption}* ([SVG](plots/{name}.svg))\n")
        elif kind == "table":
            head, rows = payload
            lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(r) + " |" for r in rows]
            out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _inline_md(text: str) -> str:
    """**bold** of the summary lines, in HTML."""
    parts = html.escape(text).split("**")
    return "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:13px;margin:1em 0}th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f2f2f2}td:nth-child(-n+2){text-align:left}img{max-width:100%;border:1px solid #eee}
figure{margin:1.5em 0}figcaption{font-style:italic;color:#555}"""


def _html(blocks_: list[Block], title: str) -> str:
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
           f"<style>{_CSS}</style></head><body>"]
    for kind, payload in blocks_:
        if kind in ("h1", "h2"):
            out.append(f"<{kind}>{html.escape(payload)}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{_inline_md(payload)}</p>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{_inline_md(x)}</li>" for x in payload) + "</ul>")
        elif kind == "img":
            name, b64, caption = payload
            out.append(f"<figure id='{name}'><img alt='{name}' src='data:image/png;base64,{b64}'>"
                       f"<figcaption>{html.escape(caption)} (<a href='plots/{name}.svg'>SVG</a>, "
                       f"<a href='plots/{name}.png'>PNG</a>)</figcaption></figure>")
        elif kind == "table":
            head, rows = payload
            out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                                 for r in rows) + "</table>")
    out.append("</body></html>")
    return "\n".join(out)


def save(fig: Figure, plots: Path, name: str) -> tuple[Path, Path]:
    """``plots/NAME.png`` and ``plots/NAME.svg``; the SVG without a date and with fixed ids, so
    the same tables give the same file."""
    png, svg = plots / f"{name}.png", plots / f"{name}.svg"
    fig.savefig(png, dpi=100)
    with rc_context({"svg.hashsalt": "groupspec", "svg.fonttype": "none"}):
        fig.savefig(svg, format="svg", metadata={"Date": None})
    return png, svg


def write_report(out: Path) -> list[str]:
    """Draw the plots and write report.md and report.html; returns the summary lines."""
    data = SweepData.load(out)
    plots = out / "plots"
    plots.mkdir(exist_ok=True)
    images: dict[str, tuple[str, list[str]]] = {}
    for name in PLOTS:
        fig, notes = PLOTTERS[name](data)
        for stale in (plots / f"{name}.png", plots / f"{name}.svg"):
            stale.unlink(missing_ok=True)
        if fig is None:
            images[name] = ("", notes)
            continue
        png, _ = save(fig, plots, name)
        images[name] = (base64.b64encode(png.read_bytes()).decode("ascii"), notes)
    bl = blocks(data, images)
    (out / "report.md").write_text(_md(bl), encoding="utf-8")
    (out / "report.html").write_text(_html(bl, f"Sweep {data.meta.get('name', '')}"), encoding="utf-8")
    return summary_lines(data)

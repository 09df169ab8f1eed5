"""``groupspec check``: the project's main job on its embedded default. It model-checks the
spec's ``small`` model with TLC, runs every bundled simulator scenario on the reference
coordinator with its invariant verdicts, cross-checks spec and reference both ways
(``groupspec crosscheck`` on the small model), and prints one verdict table. The exit status is
0 when every row is OK.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.cli.inputs import int_in
from groupspec.cli.simulate import bundled_scenarios
from groupspec.modelcheck.check import check_model, judge
from groupspec.modelcheck.install import ToolError
from groupspec.modelcheck.models import ManifestError, load_manifest
from groupspec.modelcheck.tlc import Progress
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import ScenarioError, load_scenario_text


@dataclass
class Row:
    part: str
    check: str
    ok: bool
    detail: str
    seconds: float


def _spec_rows(models: list[str], workers: int | None) -> list[Row]:
    rows: list[Row] = []
    try:
        manifest = load_manifest()
    except ManifestError as exc:
        return [Row("spec", "models.json", False, str(exc), 0.0)]
    for name in models:
        model = manifest.get(name)
        if model is None:
            rows.append(Row("spec", name, False, "no such model in spec/models.json", 0.0))
            continue

        def progress(p: Progress, name: str = name) -> None:
            print(
                f"  spec {name}: {p.distinct:,} distinct states, queue {p.queue:,}, "
                f"{p.elapsed_s:.0f} s",
                file=sys.stderr,
                flush=True,
            )

        try:
            result = check_model(model, workers=workers, on_progress=progress)
        except ToolError as exc:
            rows.append(Row("spec", f"TLC {name} model", False, str(exc), 0.0))
            continue
        outcome = judge(model, result)
        detail = outcome.reason
        if result.distinct is not None:
            detail += f"; {result.distinct:,} distinct states"
        rows.append(Row("spec", f"TLC {name} model", outcome.ok, detail, result.seconds))
    return rows


def _reference_rows() -> list[Row]:
    rows: list[Row] = []
    for name, text in bundled_scenarios().items():
        start = time.monotonic()
        try:
            result = simulate(load_scenario_text(text, name))
        except ScenarioError as exc:
            rows.append(Row("reference", f"scenario {name}", False, str(exc), 0.0))
            continue
        failed = [v for v in result.verdicts if not v.ok]
        detail = (
            f"{len(result.verdicts)} invariant verdicts hold"
            if not failed
            else "; ".join(f"{v.name}: {v.detail}" for v in failed)
        )
        rows.append(
            Row("reference", f"scenario {name}", not failed, detail, time.monotonic() - start)
        )
    return rows


def _crosscheck_rows(traces: int, workers: int | None) -> list[Row]:
    """Both directions of the cross-check on the small model (crosscheck/run.py)."""
    from groupspec.crosscheck.graph import GraphError
    from groupspec.crosscheck.run import CrosscheckError, crosscheck
    from groupspec.crosscheck.traces import TraceCheckError, TraceRecordingError

    try:
        report = crosscheck("small", traces=traces, workers=workers or 2)
    except (CrosscheckError, GraphError, TraceCheckError, TraceRecordingError, ToolError) as exc:
        return [Row("crosscheck", "spec <-> reference", False, str(exc), 0.0)]
    rows: list[Row] = []
    cov = report.coverage
    if cov is not None:
        bad = len(cov.mismatches) + len(cov.concretization_errors)
        detail = (f"{cov.states:,} states, {cov.edges:,} edges, "
                  f"{sum(cov.matched_by_action.values()):,} coordinator steps reproduced")
        if report.uncovered:
            detail += "; UNCOVERED: " + ", ".join(report.uncovered)
        if bad:
            detail += f"; {bad} disagreements (run groupspec crosscheck for the report)"
        rows.append(Row("crosscheck", "spec -> reference (small)", not bad and not report.uncovered,
                        detail, report.graph_seconds + report.exhaustive_seconds))
    if not report.traces:
        # never a missing row: a direction that checked nothing is not a direction that held
        rows.append(Row("crosscheck", "reference -> spec", False,
                        f"no simulator trace was checked ({traces} requested)", report.trace_seconds))
    else:
        diverged = [v for v in report.traces if not v.ok]
        detail = (f"{len(report.traces) - len(diverged)} of {len(report.traces)} simulator "
                  f"traces are behaviours of the spec")
        if diverged:
            detail += "; diverged: " + ", ".join(v.trace.name for v in diverged[:5])
        rows.append(Row("crosscheck", f"reference -> spec ({len(report.traces)} traces)",
                        not diverged, detail, report.trace_seconds))
    return rows


#: The parts `groupspec check` runs, in order.
PARTS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "spec": lambda args: _spec_rows(args.model, args.workers),
    "reference": lambda args: _reference_rows(),
    "crosscheck": lambda args: _crosscheck_rows(args.traces, args.workers),
}


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="the main job: model-check the small spec model, run the reference's scenarios "
             "and cross-check the two",
        description=(
            "Model-check the spec's small model with TLC, run every bundled scenario on "
            "the reference coordinator, and cross-check spec and reference both ways; print "
            "one verdict table. Exit 0 when all hold."
        ),
    )
    p.add_argument(
        "--model",
        action="append",
        default=None,
        help="spec models to check (default: small); repeatable",
    )
    p.add_argument("--workers", type=int_in(1, 1024), default=None, help="TLC worker threads")
    p.add_argument("--traces", type=int_in(0, 1_000_000), default=50, metavar="N",
                   help="simulator traces the cross-check validates against the spec "
                        "(default 50; groupspec crosscheck runs 200)")
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=sorted(PARTS),
        help="leave out a part (repeatable)",
    )
    p.set_defaults(func=run)


def render_table(rows: list[Row]) -> str:
    header = ("part", "check", "verdict", "time", "detail")
    table = [header] + [
        (r.part, r.check, "OK" if r.ok else "FAIL", f"{r.seconds:.1f} s", r.detail) for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in table
    ]
    lines.insert(1, "-" * min(120, sum(widths) + 8 + max(len(r[4]) for r in table)))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    args.model = args.model or ["small"]
    if set(PARTS) <= set(args.skip):
        print(f"error: check: every part is skipped ({', '.join(PARTS)}): nothing to check",
              file=sys.stderr)
        return 2
    if args.traces < 1 and "crosscheck" not in args.skip:
        print("error: check: --traces: must be at least 1 (the reference -> spec direction "
              f"needs traces; got {args.traces}); use --skip crosscheck to leave it out",
              file=sys.stderr)
        return 2
    rows: list[Row] = []
    for part, produce in PARTS.items():
        if part in args.skip:
            continue
        print(f"== {part}", file=sys.stderr, flush=True)
        rows += produce(args)
    if not rows:
        print("error: check: no check ran, so none can be said to hold", file=sys.stderr)
        return 2
    print(render_table(rows))
    ok = all(r.ok for r in rows)
    print(f"\n{'all checks hold' if ok else 'SOME CHECKS FAILED'} ({len(rows)} checks)")
    return 0 if ok else 1

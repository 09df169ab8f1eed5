"""``groupspec check``: the project's main job on its embedded default. It model-checks the
spec's ``small`` model with TLC, runs every bundled simulator scenario on the reference
coordinator with its invariant verdicts, and prints one verdict table. The exit status is
0 when every row is OK.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


#: The parts `groupspec check` runs, in order (the cross-validation joins when it lands).
PARTS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "spec": lambda args: _spec_rows(args.model, args.workers),
    "reference": lambda args: _reference_rows(),
}


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="the main job: model-check the small spec model and run the reference's scenarios",
        description=(
            "Model-check the spec's small model with TLC and run every bundled scenario on "
            "the reference coordinator; print one verdict table. Exit 0 when all hold."
        ),
    )
    p.add_argument(
        "--model",
        action="append",
        default=None,
        help="spec models to check (default: small); repeatable",
    )
    p.add_argument("--workers", type=int, default=None, help="TLC worker threads")
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
    rows: list[Row] = []
    for part, produce in PARTS.items():
        if part in args.skip:
            continue
        print(f"== {part}", file=sys.stderr, flush=True)
        rows += produce(args)
    print(render_table(rows))
    ok = all(r.ok for r in rows)
    print(f"\n{'all checks hold' if ok else 'SOME CHECKS FAILED'} ({len(rows)} checks)")
    return 0 if ok else 1

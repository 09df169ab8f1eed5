"""``groupspec spec``: the TLA+ specification's models, checked by TLC (or Apalache).

``spec install`` fetches the pinned TLC jar; ``spec list`` shows the models and mutants of
spec/models.json; ``spec check`` runs one or more of them with progress and a verdict,
prints a counterexample as a timeline, and can write it as ITF JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from groupspec.cli.inputs import InputError, float_in, int_in, output_file
from groupspec.modelcheck.apalache import run_apalache
from groupspec.modelcheck.check import Outcome, check_model, judge
from groupspec.modelcheck.install import TLC, ToolError, tlc_jar
from groupspec.modelcheck.itf import write_itf
from groupspec.modelcheck.models import (
    ManifestError,
    Model,
    load_manifest,
    materialize,
    record_distinct_states,
    spec_dir,
)
from groupspec.modelcheck.timeline import render
from groupspec.modelcheck.tlc import Progress

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_TOOL = 0, 1, 2, 3


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "spec",
        help="model-check the TLA+ spec (TLC, or Apalache where installed)",
        description="Model-check spec/ConsumerGroup.tla on the models of spec/models.json.",
    )
    ssub = p.add_subparsers(dest="spec_command", metavar="SUBCOMMAND", required=True)

    inst = ssub.add_parser("install", help=f"download the pinned TLC jar ({TLC.tool_version})")
    inst.set_defaults(func=run_install)

    lst = ssub.add_parser("list", help="list the models and mutants of spec/models.json")
    lst.set_defaults(func=run_list)

    chk = ssub.add_parser(
        "check",
        help="check models and report verdicts",
        description=(
            "Check one or more models with TLC (default: small). A model passes when TLC "
            "finds no violation and the distinct-state count equals the manifest's; a "
            "mutant passes when TLC finds the violation the manifest names. Exit status: "
            "0 all as expected, 1 some model not as expected, 2 bad usage, 3 checker missing."
        ),
    )
    chk.add_argument(
        "--model",
        action="append",
        default=None,
        help="a model or mutant name from `groupspec spec list`; repeatable; 'mutants' "
        "means every mutant (default: small)",
    )
    chk.add_argument("--checker", choices=("tlc", "apalache"), default="tlc")
    chk.add_argument("--workers", type=int_in(1, 1024), default=None, help="TLC worker threads")
    chk.add_argument("--itf", type=Path, help="write a counterexample as ITF JSON to this file")
    chk.add_argument("--length", type=int_in(1, 1000), default=10, help="Apalache: behaviour length bound")
    chk.add_argument(
        "--record",
        action="store_true",
        help="write the distinct-state counts found into spec/models.json",
    )
    chk.add_argument("--json", action="store_true", help="print results as JSON")
    chk.add_argument("--timeout", type=float_in(0, 7 * 24 * 3600, lo_open=True), default=None, help="stop a model after N seconds")
    chk.set_defaults(func=run_check)


def run_install(args: argparse.Namespace) -> int:
    try:
        path = tlc_jar(fetch=True)
    except ToolError as exc:
        print(f"error: spec install: {exc}", file=sys.stderr)
        return EXIT_TOOL
    print(f"TLC ({TLC.tool_version}): {path}")
    return EXIT_OK


def run_list(args: argparse.Namespace) -> int:
    models = load_manifest()
    width = max(len(n) for n in models)
    for m in models.values():
        if m.expect == "pass":
            expect = "pass"
            if m.distinct_states is not None:
                expect += f" ({m.distinct_states:,} states)"
        else:
            expect = f"{m.violates} fails"
        print(f"{m.name:<{width}}  {m.config:<14} {expect:<32} {m.description}")
    return EXIT_OK


def _select(models: dict[str, Model], names: list[str]) -> list[Model]:
    selected: list[Model] = []
    for name in names:
        if name == "mutants":
            selected += [m for m in models.values() if m.is_mutant]
        elif name in models:
            selected.append(models[name])
        else:
            raise ManifestError(
                f"no model named {name!r}; known: {', '.join(models)} (or 'mutants')"
            )
    return selected


class _ProgressPrinter:
    """TLC's progress on one line of stderr (rewritten in place on a terminal)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tty = sys.stderr.isatty()

    def __call__(self, p: Progress) -> None:
        text = (
            f"  {self.name}: {p.distinct:,} distinct states, {p.generated:,} generated, "
            f"queue {p.queue:,}, {p.distinct_per_minute:,} distinct/min, {p.elapsed_s:.0f} s"
        )
        if self.tty:
            print("\r" + text.ljust(100), end="", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def _outcome_json(o: Outcome) -> dict[str, Any]:
    r = o.result
    v = r.violation
    return {
        "model": o.model.name,
        "ok": o.ok,
        "reason": o.reason,
        "verdict": r.verdict,
        "exit_code": r.exit_code,
        "distinct_states": r.distinct,
        "expected_distinct_states": o.model.distinct_states,
        "generated_states": r.generated,
        "depth": r.depth,
        "seconds": round(r.seconds, 2),
        "violated": v.name if v else None,
        "violation_kind": v.kind if v else None,
        "trace_length": len(v.trace) if v else None,
    }


def run_check(args: argparse.Namespace) -> int:
    try:
        models = load_manifest()
        selected = _select(models, args.model or ["small"])
    except ManifestError as exc:
        raise InputError("--model", str(exc)) from None
    if args.itf is not None:  # before any model runs, and nothing is created for it
        output_file(args.itf, "--itf")
    if args.checker == "apalache":
        return _run_apalache(selected, args.length)
    try:
        tlc_jar()
    except ToolError as exc:
        print(f"error: spec check: {exc}", file=sys.stderr)
        return EXIT_TOOL
    outcomes: list[Outcome] = []
    for model in selected:
        printer = _ProgressPrinter(model.name)
        print(f"== {model.name}: {model.description}", file=sys.stderr, flush=True)
        try:
            result = check_model(
                model, workers=args.workers, on_progress=printer, timeout_s=args.timeout
            )
        except (ToolError, ManifestError) as exc:
            printer.done()
            print(f"error: spec check: {model.name}: {exc}", file=sys.stderr)
            return EXIT_TOOL
        printer.done()
        outcome = judge(model, result, compare_counts=not args.record)
        outcomes.append(outcome)
        if not args.json:
            print(render(result))
            print(f"  -> {'OK' if outcome.ok else 'NOT AS EXPECTED'}: {outcome.reason}")
            print()
        if args.itf and result.violation is not None:
            path = args.itf
            if len(selected) > 1:
                path = path.with_name(f"{path.stem}.{model.name}{path.suffix}")
            write_itf(result.violation, path, model=model.name, source=f"TLC {TLC.tool_version}")
            print(f"  counterexample written as ITF to {path}", file=sys.stderr)
        if args.record and result.verdict == "pass" and result.distinct is not None:
            record_distinct_states(model.name, result.distinct, spec_dir(), seconds=result.seconds,
                                   workers=args.workers or model.workers)
            print(f"  recorded {result.distinct:,} distinct states for {model.name}", file=sys.stderr)
    if args.json:
        print(json.dumps([_outcome_json(o) for o in outcomes], indent=2))
    else:
        print(summary_table(outcomes))
    return EXIT_OK if all(o.ok for o in outcomes) else EXIT_FAILED


def summary_table(outcomes: list[Outcome]) -> str:
    rows = [("model", "expected", "result", "distinct states", "time", "verdict")]
    for o in outcomes:
        r = o.result
        expected = "pass" if o.model.expect == "pass" else f"{o.model.violates} fails"
        if r.verdict == "violation" and r.violation is not None:
            got = f"{r.violation.name or r.violation.kind} violated"
        else:
            got = r.verdict
        rows.append(
            (
                o.model.name,
                expected,
                got,
                f"{r.distinct:,}" if r.distinct is not None else "-",
                f"{r.seconds:.1f} s",
                "OK" if o.ok else "FAIL",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)


def _run_apalache(selected: list[Model], length: int) -> int:
    worst = EXIT_OK
    for model in selected:
        with tempfile.TemporaryDirectory(prefix=f"groupspec-{model.name}-") as scratch:
            spec = materialize(model, spec_dir(), Path(scratch)) if model.is_mutant else spec_dir()
            result = run_apalache(spec, model.config, length=length)
        if result.verdict == "not-installed":
            print(f"error: spec check: {result.explanation}", file=sys.stderr)
            return EXIT_TOOL
        expected = "pass" if model.expect == "pass" else "violation"
        ok = result.verdict == expected
        print(f"{model.name}: Apalache {result.verdict} ({result.explanation}, {result.seconds:.1f} s)"
              f" -> {'OK' if ok else 'NOT AS EXPECTED'}")
        if result.verdict == "error":
            print(result.output_tail, file=sys.stderr)
        if not ok:
            worst = EXIT_FAILED
    return worst

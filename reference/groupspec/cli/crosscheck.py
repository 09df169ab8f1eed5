"""``groupspec crosscheck``: the spec and the reference coordinator checked against each
other, both ways, with a coverage table (crosscheck/run.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from groupspec.cli.inputs import fail, int_in, output_file
from groupspec.crosscheck.consumer.run import MODELS as CONSUMER_MODELS
from groupspec.crosscheck.consumer.run import Report as ConsumerReport
from groupspec.crosscheck.consumer.run import crosscheck as crosscheck_consumer
from groupspec.crosscheck.graph import GraphError
from groupspec.crosscheck.run import MODELS, CrosscheckError, Report, crosscheck
from groupspec.crosscheck.traces import TraceCheckError, TraceRecordingError
from groupspec.modelcheck.install import ToolError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "crosscheck",
        help="cross-validate the TLA+ spec and the reference coordinator, both ways",
        description=(
            "Spec to reference: every state of a bounded model's state graph (TLC) is "
            "rebuilt on the reference coordinator and every coordinator step compared, both "
            "ways. Reference to spec: simulator runs of the reference with fault schedules "
            "are checked by TLC against spec/TraceConsumerGroup.tla. Prints the coverage "
            "per action; with --mutants, also shows that seeded bugs of the reference are "
            "caught. --group-protocol consumer does the same for KIP-848 "
            "(spec/ConsumerProtocol.tla, spec/MCcross-consumer-small.cfg, "
            "spec/TraceConsumerProtocol.tla)."
        ),
    )
    p.add_argument("--group-protocol", choices=("classic", "consumer"), default="classic",
                   help="classic (spec/ConsumerGroup.tla, the default) or consumer (KIP-848, "
                        "spec/ConsumerProtocol.tla)")
    p.add_argument("--model", choices=sorted(set(MODELS) | set(CONSUMER_MODELS)), default="small",
                   help="the model whose state graph is replayed (default small; ci is "
                        "nightly-sized, classic only)")
    p.add_argument("--traces", type=int_in(0, 1_000_000), default=None, metavar="N",
                   help="simulator traces to validate against the spec (default 200 classic, "
                        "100 consumer; 0 skips)")
    p.add_argument("--seed", type=int, default=1, help="seed of the generated scenarios")
    p.add_argument("--mutants", action="store_true",
                   help="also run every seeded mutant of the reference and report which "
                        "direction caught it")
    p.add_argument("--no-exhaustive", action="store_true",
                   help="skip the spec-to-reference direction")
    p.add_argument("--workers", type=int_in(1, 1024), default=2, help="TLC worker threads")
    p.add_argument("--report", type=Path, default=None, metavar="FILE",
                   help="also write the report to FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.mutants and args.no_exhaustive:
        # Coordinator-side mutants are caught only by the spec-to-reference direction, so
        # without it they would read as "not caught": a finding the input made up.
        return fail("--no-exhaustive", "cannot be combined with --mutants (the mutants need the "
                                       "spec-to-reference direction to be caught)")
    if args.report is not None:
        output_file(args.report, "--report")
    consumer = args.group_protocol == "consumer"
    models = CONSUMER_MODELS if consumer else MODELS
    if args.model not in models:
        return fail("--model", f"no {args.group_protocol} cross-check model {args.model!r} "
                               f"(have: {', '.join(sorted(models))})")
    traces = args.traces if args.traces is not None else (100 if consumer else 200)
    run_check = crosscheck_consumer if consumer else crosscheck
    try:
        report: Report | ConsumerReport = run_check(
            model=args.model, traces=traces, seed=args.seed, mutants=args.mutants,
            exhaustive=not args.no_exhaustive, workers=args.workers)
    except (CrosscheckError, GraphError, TraceCheckError, TraceRecordingError, ToolError) as exc:
        return fail("crosscheck", str(exc))
    text = report.render()
    print(text)
    if args.report is not None:
        args.report.write_text(text + "\n", encoding="utf-8")
    return 0 if report.ok else 1

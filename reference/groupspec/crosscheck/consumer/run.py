"""Both directions of the consumer protocol's cross-check, the mutants, and one report.

:func:`crosscheck` runs (1) the exhaustive spec-to-reference comparison on the state
graph of spec/MCcross-consumer-small.cfg, (2) trace validation of simulator runs of KIP-848
consumers against spec/TraceConsumerProtocol.tla, and optionally (3) every seeded mutant
of the reference through both; :class:`Report` renders the coverage table that
`groupspec crosscheck --group-protocol consumer` prints.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from groupspec.crosscheck.consumer.exhaustive import (
    COORDINATOR_ACTIONS,
    Coverage,
    Exhaustive,
    ModelBounds,
)
from groupspec.crosscheck.consumer.mutants import MUTANTS
from groupspec.crosscheck.consumer.traces import (
    RecordedTrace,
    TraceVerdict,
    check,
    generated_scenario,
    record,
)
from groupspec.crosscheck.graph import StateGraph, export
from groupspec.crosscheck.mutants import Mutant
from groupspec.crosscheck.run import CrosscheckError, MutantResult
from groupspec.crosscheck.vocabulary import Rec, to_tla
from groupspec.modelcheck.models import spec_dir

#: the consumer cross-check models: name -> configuration in spec/
MODELS: dict[str, str] = {"small": "MCcross-consumer-small.cfg"}
#: the TLC module the models are configurations of
MODULE = "MCCrossConsumer"


def model_bounds(config: str) -> ModelBounds:
    """The constants of a consumer cross-check model's configuration."""
    text = (spec_dir() / config).read_text(encoding="utf-8")
    consts: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("\\*", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z]\w*)\s*=\s*(.+)", line)
        if m:
            consts[m.group(1)] = m.group(2).strip()

    def names(key: str) -> tuple[str, ...]:
        raw = consts.get(key)
        if raw is None or not (raw.startswith("{") and raw.endswith("}")):
            raise CrosscheckError(f"spec/{config}: {key} must be a set of model values")
        return tuple(x.strip().strip('"') for x in raw[1:-1].split(",") if x.strip())

    def number(key: str) -> int:
        try:
            return int(consts[key])
        except (KeyError, ValueError) as exc:
            raise CrosscheckError(f"spec/{config}: {key} must be an integer") from exc

    return ModelBounds(
        member_ids=names("MemberIds"), consumers=names("Consumers"),
        partitions=names("Partitions"), fault_kinds=frozenset(names("FaultKinds")),
        max_faults=number("MaxFaults"), max_group_epoch=number("MaxGroupEpoch"),
    )


@dataclass
class Report:
    model: str
    coverage: Coverage | None = None
    graph_seconds: float = 0.0
    exhaustive_seconds: float = 0.0
    traces: list[TraceVerdict] = field(default_factory=list)
    trace_seconds: float = 0.0
    mutants: list[MutantResult] = field(default_factory=list)

    @property
    def uncovered(self) -> list[str]:
        if self.coverage is None:
            return []
        return self.coverage.uncovered(list(COORDINATOR_ACTIONS))

    @property
    def ok(self) -> bool:
        exhaustive_ok = self.coverage is None or (
            not self.coverage.mismatches and not self.coverage.concretization_errors
            and not self.uncovered)
        return (exhaustive_ok and all(v.ok for v in self.traces)
                and all(m.caught_by for m in self.mutants))

    def render(self) -> str:
        out: list[str] = []
        cov = self.coverage
        if cov is not None:
            out.append(f"spec -> reference (KIP-848): model {self.model} "
                       f"(spec/{MODELS[self.model]}), exhaustive")
            out.append(f"  states {cov.states:,}   edges {cov.edges:,}   reference runs "
                       f"{cov.reference_runs:,}   ({self.graph_seconds:.0f} s TLC, "
                       f"{self.exhaustive_seconds:.0f} s replay)")
            out.append(f"  {'action':<18}{'spec edges':>12}{'reproduced':>12}"
                       f"{'other target':>14}  reference path")
            for action, handler in COORDINATOR_ACTIONS.items():
                mark = "" if cov.matched_by_action.get(action, 0) else "   <- UNCOVERED"
                out.append(f"  {action:<18}{cov.edges_by_action.get(action, 0):>12,}"
                           f"{cov.matched_by_action.get(action, 0):>12,}"
                           f"{cov.alternatives_by_action.get(action, 0):>14,}  {handler}{mark}")
                for (a, path), n in sorted(cov.paths.items()):
                    if a == action:
                        out.append(f"  {'':<18}{'':>12}{n:>12,}{'':>14}    {path}")
            others = {a: n for a, n in cov.edges_by_action.items() if a not in COORDINATOR_ACTIONS}
            out.append("  consumer and fault steps (the context the states come from; the "
                       "reference consumer is checked by the trace direction):")
            out.append("    " + ", ".join(f"{a} {n:,}" for a, n in sorted(others.items())))
            if cov.bounded:
                out.append("  reference steps outside the model's bounds (not compared):")
                for reason, n in sorted(cov.bounded.items()):
                    out.append(f"    {reason}: {n:,}")
            verdict = "AGREE" if not cov.mismatches and not cov.concretization_errors else "DISAGREE"
            out.append(f"  verdict: {verdict} ({len(cov.mismatches)} mismatches, "
                       f"{len(cov.concretization_errors)} states without a reference counterpart)")
            for mm in cov.mismatches[:5]:
                out.append(f"    state {mm.state} {mm.action} ({mm.direction}): {mm.detail}")
                out.append(f"      before: {to_tla(mm.before)[:600]}")
                out.append(f"      after:  {to_tla(mm.successor[0])[:600]}")
        if self.traces:
            steps = Counter(s.action for v in self.traces for s in v.trace.steps)
            errors = Counter(str(o["error"]) for v in self.traces for s in v.trace.steps
                             for o in s.out if isinstance(o, Rec) and o["error"] != "NONE")
            diverged = [v for v in self.traces if not v.ok]
            out.append("")
            out.append(f"reference -> spec (KIP-848): {len(self.traces)} simulator traces, "
                       f"{sum(steps.values()):,} coordinator steps, checked by TLC against "
                       f"spec/TraceConsumerProtocol.tla ({self.trace_seconds:.0f} s)")
            out.append("  steps per action: "
                       + ", ".join(f"{a} {steps.get(a, 0):,}" for a in COORDINATOR_ACTIONS))
            out.append("  error answers: "
                       + (", ".join(f"{e} {n:,}" for e, n in sorted(errors.items())) or "none"))
            out.append(f"  verdict: {len(self.traces) - len(diverged)} behaviours of the spec, "
                       f"{len(diverged)} diverged")
            for v in diverged[:5]:
                out.extend("    " + line for line in divergence_report(v).splitlines())
        if self.mutants:
            out.append("")
            out.append("mutants of the reference (each must be caught):")
            for r in self.mutants:
                by = ", ".join(r.caught_by) or "NOT CAUGHT"
                ex = ("not run" if r.exhaustive_mismatches is None
                      else f"{r.exhaustive_mismatches} mismatches")
                tr = ("not run" if r.trace_divergences is None
                      else f"{r.trace_divergences} traces diverged")
                out.append(f"  {r.mutant.name:<34} caught by: {by}  "
                           f"(spec->reference: {ex}; reference->spec: {tr})")
        out.append("")
        out.append("cross-check (KIP-848): " + ("OK" if self.ok else "FAILED"))
        return "\n".join(out)


def divergence_report(v: TraceVerdict) -> str:
    d = v.divergence
    if d is None:
        return f"{v.trace.name}: matched {v.matched} of {len(v.trace.steps)} steps"
    return "\n".join([
        f"{d.trace} ({v.trace.description}): diverged at step {d.step} of "
        f"{len(v.trace.steps)} (t = {d.at_ms} ms)",
        f"  reference did:  {d.what}  [Python: {d.handler}]",
        f"  spec action:    {d.action} (spec/ConsumerProtocol.tla)",
        f"  why:            {d.reason}",
        "  state before (reference):",
        *("    " + x for x in d.before_reference.splitlines()),
        f"  state before (spec):  {to_tla(d.before_spec) if d.before_spec else '?'}",
        f"  request (spec):       {to_tla(d.request) if d.request else 'timer'}",
        f"  reference after:      {to_tla(d.reference_after)}",
        f"  reference answers:    {to_tla(d.reference_out)}",
    ])


Progress = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def record_traces(n: int, seed: int, progress: Progress = _stderr) -> list[RecordedTrace]:
    traces = []
    for k in range(n):
        traces.append(record(generated_scenario(k, seed)))
        if (k + 1) % 25 == 0 or k + 1 == n:
            progress(f"  recorded {k + 1}/{n} traces")
    return traces


def crosscheck(
    model: str = "small",
    traces: int = 100,
    seed: int = 1,
    mutants: bool = False,
    exhaustive: bool = True,
    workers: int = 2,
    progress: Progress = _stderr,
    graph: StateGraph | None = None,
) -> Report:
    if model not in MODELS:
        raise CrosscheckError(f"no consumer cross-check model {model!r} (have: {', '.join(MODELS)})")
    report = Report(model)
    bounds = model_bounds(MODELS[model])
    if exhaustive:
        t0 = time.monotonic()
        if graph is None:
            progress(f"== spec -> reference (KIP-848): exporting the state graph of "
                     f"{MODELS[model]} with TLC")
            graph = export(MODELS[model], workers=workers, module=MODULE,
                           on_progress=lambda p: progress(
                               f"  TLC: {p.distinct:,} distinct states, queue {p.queue:,}"))
        report.graph_seconds = time.monotonic() - t0
        progress(f"  {len(graph.states):,} states, {len(graph.edges):,} edges; replaying")
        t1 = time.monotonic()
        report.coverage = Exhaustive(bounds).check(
            graph, progress=lambda n, total: progress(f"  replayed {n:,}/{total:,} states"))
        report.exhaustive_seconds = time.monotonic() - t1
    if traces:
        t2 = time.monotonic()
        progress(f"== reference -> spec (KIP-848): recording {traces} simulator traces")
        recorded = record_traces(traces, seed, progress)
        report.traces = check(recorded, progress=lambda n, total: progress(
            f"  TLC checked {n}/{total} traces"))
        report.trace_seconds = time.monotonic() - t2
    if mutants:
        for mut in MUTANTS.values():
            progress(f"== mutant {mut.name}")
            report.mutants.append(run_mutant(mut, bounds, graph, max(10, min(traces, 20)), seed,
                                             progress))
    return report


def run_mutant(mut: Mutant, bounds: ModelBounds, graph: StateGraph | None, traces: int,
               seed: int, progress: Progress = _stderr, both: bool = False) -> MutantResult:
    """One mutant through the exhaustive direction (stopping at its first mismatch) and,
    unless that caught it (or ``both``), the trace direction."""
    mismatches: int | None = None
    diverged: int | None = None
    with mut.patch():
        if graph is not None:
            mismatches = len(Exhaustive(bounds).check(graph, stop_after=1).mismatches)
        if traces and (both or not mismatches):
            verdicts = check(record_traces(traces, seed, progress), explain_first=0)
            diverged = sum(1 for v in verdicts if not v.ok)
    return MutantResult(mut, mismatches, diverged)

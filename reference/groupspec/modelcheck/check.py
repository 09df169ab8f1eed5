"""Checking a model of the manifest and judging the result against what the manifest
expects: a ``pass`` model must pass with the recorded distinct-state count; a mutant must
be caught, by the operator it names.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from groupspec.modelcheck.models import Model, materialize, spec_dir
from groupspec.modelcheck.tlc import CheckResult, Progress, run_tlc


@dataclass
class Outcome:
    """A model's result and whether it is what the manifest expects."""

    model: Model
    result: CheckResult
    ok: bool
    reason: str

    @property
    def counts_match(self) -> bool | None:
        if self.model.distinct_states is None or self.result.distinct is None:
            return None
        return self.model.distinct_states == self.result.distinct


def judge(model: Model, result: CheckResult, *, compare_counts: bool = True) -> Outcome:
    """Whether ``result`` is what ``model`` expects, and why not."""
    if result.verdict == "error":
        return Outcome(model, result, False, f"TLC failed: {result.explanation}")
    if model.expect == "pass":
        if result.verdict != "pass":
            v = result.violation
            named = v.name or v.kind if v else "?"
            return Outcome(model, result, False, f"expected to pass, but {named} is violated")
        expected = model.distinct_states
        if compare_counts and expected is not None and result.distinct != expected:
            return Outcome(
                model,
                result,
                False,
                f"distinct states changed: manifest says {expected:,}, TLC found "
                f"{result.distinct or 0:,} (if the spec change is intended, record the new "
                f"count with `groupspec spec check --model {model.name} --record`)",
            )
        return Outcome(model, result, True, "passes as expected")
    # a mutant: must be caught, by the named operator
    if result.verdict != "violation" or result.violation is None:
        return Outcome(model, result, False, f"mutant not caught: expected {model.violates} to fail")
    v = result.violation
    if v.name is not None and v.name != model.violates:
        return Outcome(
            model, result, False, f"caught by {v.name}, but the manifest expects {model.violates}"
        )
    if v.name is None and v.kind not in ("liveness", model.expect):
        return Outcome(model, result, False, f"caught as a {v.kind}, expected {model.expect}")
    caught_by = v.name or f"{model.violates} (TLC reports temporal violations without a name)"
    return Outcome(model, result, True, f"caught by {caught_by}")


def check_model(
    model: Model,
    *,
    workers: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    spec: Path | None = None,
    timeout_s: float | None = None,
) -> CheckResult:
    """Run TLC on ``model`` (on a mutated copy of the spec for a mutant)."""
    spec = spec or spec_dir()
    with tempfile.TemporaryDirectory(prefix=f"groupspec-{model.name}-") as scratch:
        directory = materialize(model, spec, Path(scratch)) if model.is_mutant else spec
        return run_tlc(
            model.module,
            model.config,
            directory,
            model=model.name,
            workers=workers or model.workers,
            on_progress=on_progress,
            extra=model.tlc_args,
            timeout_s=timeout_s,
        )

"""The validator runs with the cycle collector paused (groupspec.gc_pause): that is only
sound if validating leaves no reference cycle behind, or a long collection would pile up
garbage until the pause ends. These tests validate generated traces, conforming ones and
ones with injected violations (whose replay fails and backtracks), with the collector off,
and count what a collection finds afterwards."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from groupspec.pipeline.generate import generate
from groupspec.validate.validator import validate_path


@pytest.mark.parametrize("inject", [0, 3])
def test_validating_leaves_no_reference_cycle(tmp_path: Path, inject: int) -> None:
    col = generate(3000, tmp_path, inject_k=inject, seed=5, fmt="jsonl")
    files = sorted(tmp_path.glob("*.jsonl"))
    assert files
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        reports = [validate_path(f) for f in files]
        found = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    violations = sum(1 for r in reports for g in r.groups if g.verdict == "violation")
    assert violations == (inject if inject else 0), col
    assert found == 0, f"validating left {found} objects in reference cycles"


def test_the_collector_is_back_on_after_validating(tmp_path: Path) -> None:
    generate(500, tmp_path, seed=6, fmt="jsonl")
    assert gc.isenabled()
    for f in sorted(tmp_path.glob("*.jsonl")):
        validate_path(f)
    assert gc.isenabled()

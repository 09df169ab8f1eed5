"""Random fault schedules over a whole simulated group: every verdict must hold."""

from __future__ import annotations

from hypothesis import given, note, settings
from hypothesis import strategies as st

from groupspec.sim.scenario import Fault
from properties.group_faults import failed_verdicts, faults, run_with


@settings(max_examples=15, deadline=None)
@given(fs=st.lists(faults(), min_size=1, max_size=4), eager=st.booleans(), seed=st.integers(0, 1000))
def test_every_verdict_holds_under_random_faults(fs: list[Fault], eager: bool, seed: int) -> None:
    for f in fs:
        note(f"t={f.at_ms} {f.describe()}")
    result = run_with(fs, eager, seed)
    assert failed_verdicts(result) == []


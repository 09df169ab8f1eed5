"""Random fault schedules over a whole simulated group: every verdict must hold. The
example count comes from the Hypothesis profile (``properties.whole_runs``): 15 in CI,
500 in the nightly run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from groupspec.sim.scenario import Fault
from properties import whole_runs
from properties.group_faults import failed_verdicts, faults, run_with


@whole_runs()
@given(fs=st.lists(faults(), min_size=1, max_size=4), eager=st.booleans(), seed=st.integers(0, 1000))
def test_every_verdict_holds_under_random_faults(fs: list[Fault], eager: bool, seed: int) -> None:
    for f in fs:
        note(f"t={f.at_ms} {f.describe()}")
    result = run_with(fs, eager, seed)
    assert failed_verdicts(result) == []


@contextmanager
def _profile(name: str) -> Iterator[None]:
    before = settings()
    settings.load_profile(name)
    try:
        yield
    finally:
        settings.register_profile("_restore", before)
        settings.load_profile("_restore")


@pytest.mark.parametrize("name", ["dev", "ci", "nightly"])
def test_the_profile_decides_the_example_count(name: str) -> None:
    with _profile(name):
        runs = whole_runs()
        assert runs.max_examples == max(5, settings.get_profile(name).max_examples // 4)
    # the property itself carries the settings of the profile loaded when it was imported
    used = test_every_verdict_holds_under_random_faults._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert used.max_examples == whole_runs().max_examples

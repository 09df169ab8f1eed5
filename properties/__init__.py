"""Hypothesis state machines and properties for groupspec, importable by other projects
(as zarr ships ``zarr.testing.stateful``): tests/ holds thin pytest wrappers.

Profiles (``settings.load_profile(NAME)``, or ``GROUPSPEC_HYPOTHESIS_PROFILE=NAME``):

- ``dev``: fast feedback while editing (few examples);
- ``ci``: Hypothesis's built-in ``ci`` profile (derandomized, no database, no deadline),
  which loads by itself when the ``CI`` environment variable is set, extended with this
  project's step count and example budget;
- ``nightly``: many more examples and longer runs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    parent=settings.get_profile("ci"),
    max_examples=60,
    stateful_step_count=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "dev",
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "nightly",
    max_examples=2_000,
    stateful_step_count=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

_profile = os.environ.get("GROUPSPEC_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else None)
if _profile is not None:
    settings.load_profile(_profile)


def whole_runs() -> settings:
    """Settings for properties whose every example is a whole simulated group run (about a
    second each): a quarter of the loaded profile's examples, at least 5, no deadline. The
    profile (dev, ci, nightly) decides the count; a test never hard-codes it."""
    current = settings()
    return settings(current, max_examples=max(5, current.max_examples // 4), deadline=None)


def by_profile(ci: int, nightly: int) -> int:
    """A size for work that is not a Hypothesis example count (traces to model-check, runs
    to record): ``nightly`` under the nightly profile, ``ci`` otherwise, so CI stays small
    and ``GROUPSPEC_HYPOTHESIS_PROFILE=nightly`` runs the same test large."""
    return nightly if _profile == "nightly" else ci

"""Bootstrap confidence intervals for the ratios a sweep report quotes.

A report line compares two cells of the sweep by their means over seeds: "cooperative saves
40% of eager's unavailability" is ``mean(new) / mean(old) - 1``. The interval is a
percentile bootstrap: each cell's runs are resampled with replacement (the two cells
independently, as their seeds are), the relative change of the means is computed on each of
``RESAMPLES`` resamples, and the central ``LEVEL`` of those values is the interval. The
random numbers come from a generator seeded with ``SEED``, so a report is the same every
time it is drawn from the same tables.

With as few runs as a sweep has per cell (5 to 10 seeds) the interval is rough, and with
identical runs it has no width; it still says how far the seeds alone move the number.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

RESAMPLES = 2000
LEVEL = 0.95
SEED = 415


@dataclass(frozen=True)
class RatioCI:
    """The relative change ``mean(new) / mean(old) - 1`` and its bootstrap interval."""

    change: float
    low: float
    high: float
    n_new: int
    n_old: int

    def text(self) -> str:
        """``-40%, 95% CI -52% to -28%``."""
        return (f"{self.change * 100:+.0f}%, {LEVEL * 100:.0f}% CI "
                f"{self.low * 100:+.0f}% to {self.high * 100:+.0f}%")


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks."""
    pos = q * (len(sorted_xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def ratio_ci(new: Sequence[float], old: Sequence[float], *, resamples: int = RESAMPLES,
             seed: int = SEED) -> RatioCI | None:
    """None when there is nothing to compare: a cell without runs, or an old mean of 0.
    Resamples whose old mean is 0 are drawn again (they have no ratio)."""
    if not new or not old or _mean(old) == 0:
        return None
    rng = random.Random(seed)
    values: list[float] = []
    tries = 0
    while len(values) < resamples and tries < resamples * 20:
        tries += 1
        o = _mean([old[rng.randrange(len(old))] for _ in old])
        if o == 0:
            continue
        n = _mean([new[rng.randrange(len(new))] for _ in new])
        values.append(n / o - 1)
    values.sort()
    tail = (1 - LEVEL) / 2
    return RatioCI(_mean(new) / _mean(old) - 1, _quantile(values, tail), _quantile(values, 1 - tail),
                   len(new), len(old))

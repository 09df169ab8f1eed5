"""The bootstrap intervals of the sweep report's ratios: deterministic, around the point
estimate, as wide as the spread of the runs, and absent where there is no ratio."""

from __future__ import annotations

import pytest

from groupspec.pipeline.bootstrap import ratio_ci


def test_the_interval_is_deterministic_and_holds_the_point_estimate() -> None:
    new, old = [6.0, 7.0, 5.0, 8.0, 6.5], [10.0, 12.0, 9.0, 11.0, 10.5]
    ci = ratio_ci(new, old)
    assert ci is not None
    assert ci == ratio_ci(new, old)  # same seed, same interval
    assert ci.change == pytest.approx(32.5 / 52.5 - 1)
    assert ci.low < ci.change < ci.high < 0  # clearly a saving, with a spread
    assert ci.text() == f"{ci.change * 100:+.0f}%, 95% CI {ci.low * 100:+.0f}% to {ci.high * 100:+.0f}%"


def test_identical_runs_give_an_interval_without_width() -> None:
    ci = ratio_ci([3.0] * 5, [4.0] * 5)
    assert ci is not None and ci.low == ci.change == ci.high == pytest.approx(-0.25)


def test_wider_spread_gives_a_wider_interval() -> None:
    narrow = ratio_ci([9.0, 10.0, 11.0] * 2, [10.0] * 6)
    wide = ratio_ci([2.0, 10.0, 18.0] * 2, [10.0] * 6)
    assert narrow is not None and wide is not None
    assert wide.high - wide.low > 3 * (narrow.high - narrow.low)


def test_no_ratio_without_runs_or_with_a_zero_baseline() -> None:
    assert ratio_ci([], [1.0]) is None
    assert ratio_ci([1.0], []) is None
    assert ratio_ci([1.0, 2.0], [0.0, 0.0]) is None
    # a baseline that is zero in some resamples only: those are drawn again
    ci = ratio_ci([1.0, 1.0], [0.0, 2.0])
    assert ci is not None and ci.change == pytest.approx(0.0) and ci.low >= -0.5

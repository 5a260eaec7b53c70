"""bench/common.py's paired_ratios: the round-paired comparison the stack
doctor benchmark prints, checked on known values and by simulation (its
interval's coverage and its verdicts' error rates on a drifting host).

Needs no built tree: bench/common.py is a standard-library module.
"""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

import pytest

COMMON = Path(__file__).resolve().parents[2] / "bench" / "common.py"
_spec = importlib.util.spec_from_file_location("paradnn_bench_common", COMMON)
bench_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_common)
paired_ratios = bench_common.paired_ratios


def test_known_rounds_give_their_median_extremes_and_verdict() -> None:
    base = [100.0, 80.0, 120.0, 100.0, 90.0, 110.0]
    other = [110.0, 96.0, 156.0, 115.0, 112.5, 115.5]  # ratios 1.1 1.2 1.3 1.15 1.25 1.05
    median, low, high, confidence, verdict = paired_ratios(base, other)
    assert median == pytest.approx(1.175)
    assert (low, high) == (pytest.approx(1.05), pytest.approx(1.3))
    assert confidence == pytest.approx(1 - 2 / 64)
    assert verdict == "faster"
    assert paired_ratios(other, base)[4] == "slower"
    assert paired_ratios(base, other, higher="more", lower="less")[4] == "more"


def test_an_interval_that_holds_one_shows_no_difference() -> None:
    assert paired_ratios([1.0] * 6, [0.9, 1.1, 1.0, 1.2, 0.95, 1.05])[4] == "no difference shown"


def test_too_few_rounds_give_no_verdict() -> None:
    _, _, _, confidence, verdict = paired_ratios([1.0] * 4, [2.0] * 4)
    assert confidence == pytest.approx(0.875)
    assert verdict == "4 rounds: too few for a verdict (6 give 97 %)"


def test_unpaired_values_are_refused_with_their_counts() -> None:
    with pytest.raises(ValueError, match="3 base and 2 other values"):
        paired_ratios([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="0 base and 0 other"):
        paired_ratios([], [])


def _simulate(true_ratio: float, trials: int, rng: random.Random) -> tuple[float, float, float]:
    """Coverage of the true ratio, and the shares of 'faster' and 'slower'
    verdicts, over `trials` benchmarks of 6 rounds on a host whose speed
    drifts 30 % between rounds (shared by both sides of a round) with 10 %
    noise per run."""
    covered = faster = slower = 0
    for _ in range(trials):
        base, other = [], []
        for _ in range(6):
            drift = math.exp(rng.gauss(0, 0.3))
            base.append(100 * drift * math.exp(rng.gauss(0, 0.1)))
            other.append(100 * true_ratio * drift * math.exp(rng.gauss(0, 0.1)))
        _, low, high, _, verdict = paired_ratios(base, other)
        covered += low <= true_ratio <= high
        faster += verdict == "faster"
        slower += verdict == "slower"
    return covered / trials, faster / trials, slower / trials


def test_the_interval_holds_the_true_ratio_as_often_as_it_says() -> None:
    rng = random.Random(20261206)
    trials = 4000
    coverage, faster, slower = _simulate(1.0, trials, rng)
    # 1 - 2/64 = 96.9 %; three standard errors of a 4000-trial share below it.
    expected = 1 - 2 / 64
    assert coverage >= expected - 3 * math.sqrt(expected * (1 - expected) / trials)
    # No true difference: a verdict either way is an error, each 1/64 of the time.
    assert faster + slower <= 2 / 64 + 3 * math.sqrt((2 / 64) * (1 - 2 / 64) / trials)


def test_a_real_difference_is_found_through_the_drift() -> None:
    rng = random.Random(4)
    coverage, faster, slower = _simulate(1.3, 2000, rng)
    # Each round's ratio is above 1 with P = Phi(ln 1.3 / (0.1 * sqrt 2)) = 0.969;
    # all six: 0.83. The drift (30 %, three times the effect's noise) cancels.
    assert faster >= 0.78
    assert slower == 0
    assert coverage >= 0.95

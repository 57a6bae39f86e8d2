"""Stragglers: a synchronous step ends when the slowest of p ranks finishes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral

import numpy as np

from core.checks import positive, whole_number

# Integration grid for E[max of p N(0,1)]: the integrand decays like phi(x) on both sides, so
# [-12, 12] loses < 1e-30; the trapezoid rule is spectrally accurate for such smooth, decaying
# functions.
MAX_DRAWS = 50_000_000  # Monte Carlo draws per call (~0.4 GB of float64 at most, ~1 s)
_GRID_STEP = 2e-3
_GRID_HALF_WIDTH = 12.0


@lru_cache(maxsize=1)
def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.arange(-_GRID_HALF_WIDTH, _GRID_HALF_WIDTH + _GRID_STEP / 2, _GRID_STEP)
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    # log Phi via erfc keeps precision in the far left tail where Phi ~ 1e-33.
    log_cdf = np.log(np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x]))
    return x, pdf, log_cdf


def _ranks(num_ranks) -> int:
    return whole_number("num_ranks", num_ranks, fix="a step needs ≥ 1 rank; use e.g. 8, 64 or 512")


def expected_max_std_normal(num_ranks: int) -> float:
    """E[max of p iid N(0,1)] = ∫ x p φ(x) Φ(x)^(p-1) dx, by the trapezoid rule."""
    num_ranks = _ranks(num_ranks)
    x, pdf, log_cdf = _grid()
    # docs/notes/collectives.md §5: density of the maximum of p iid normals is p φ(x) Φ(x)^(p-1).
    density = num_ranks * pdf * np.exp((num_ranks - 1) * log_cdf)
    return float(np.trapezoid(x * density, x))


def prob_step_slow(num_ranks: int, slow_prob: float) -> float:
    """P(at least one of p ranks hiccups) = 1 - (1 - q)^p (Dean & Barroso, CACM 2013)."""
    num_ranks = _ranks(num_ranks)
    slow_prob = positive(
        "slow_prob",
        slow_prob,
        fix="it is a probability: use e.g. 0.01 for a 1% chance per rank per step",
        allow_zero=True,
        hi=1.0,
    )
    return 1.0 - (1.0 - slow_prob) ** num_ranks


@dataclass(frozen=True, kw_only=True)
class StragglerCurve:
    """Expected synchronous step vs rank count: closed form beside a seeded Monte Carlo."""

    rank_counts: tuple[int, ...]
    mean_step_s: float
    jitter_s: float
    expected_max_z: tuple[float, ...]  # E[max of p N(0,1)], numerical integration
    expected_step_s: tuple[float, ...]  # mu + sigma E[max]
    mc_step_s: tuple[float, ...]  # mean over trials of max over p sampled rank times
    mc_stderr_s: tuple[float, ...]  # standard error of that mean
    slowdown: tuple[float, ...]  # expected_step_s / mean_step_s
    slow_prob: float
    prob_step_slow: tuple[float, ...]  # 1 - (1-q)^p
    num_trials: int
    seed: int


def straggler_curve(
    *,
    rank_counts: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
    mean_step_s: float = 0.100,
    jitter_s: float = 0.005,
    slow_prob: float = 0.01,
    num_trials: int = 400,
    seed: int = 0,
) -> StragglerCurve:
    """Expected step time of p ranks with per-rank time N(mu, sigma^2), closed form and Monte
    Carlo.
    """
    mean_step_s = positive("mean_step_s", mean_step_s, fix="use e.g. 0.1 s")
    jitter_s = positive("jitter_s", jitter_s, fix="use e.g. 0.005 s", allow_zero=True)
    num_trials = whole_number("num_trials", num_trials, fix="use e.g. 400")
    if num_trials < 2:
        raise ValueError(
            f"num_trials={num_trials}: a Monte Carlo mean with an error bar needs ≥ 2 "
            "trials; use e.g. 400"
        )
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ValueError(f"seed={seed!r} must be a whole number ≥ 0; use e.g. 0")
    rank_counts = tuple(_ranks(p) for p in rank_counts)
    if not rank_counts:
        raise ValueError("rank_counts is empty: give at least one rank count, e.g. (8, 64, 512)")
    if (draws := num_trials * sum(rank_counts)) > MAX_DRAWS:
        raise ValueError(
            f"num_trials × Σ rank_counts = {draws:,} normal draws, more than {MAX_DRAWS:,} (the "
            "bound on one call's time and memory): use fewer trials for large rank counts"
        )
    rng = np.random.default_rng(seed)
    z = [expected_max_std_normal(p) for p in rank_counts]
    mc, err = [], []
    for p in rank_counts:
        maxima = mean_step_s + jitter_s * rng.standard_normal((num_trials, p)).max(axis=1)
        mc.append(float(maxima.mean()))
        err.append(float(maxima.std(ddof=1) / math.sqrt(num_trials)))
    expected = [mean_step_s + jitter_s * v for v in z]
    return StragglerCurve(
        rank_counts=rank_counts,
        mean_step_s=mean_step_s,
        jitter_s=jitter_s,
        expected_max_z=tuple(z),
        expected_step_s=tuple(expected),
        mc_step_s=tuple(mc),
        mc_stderr_s=tuple(err),
        slowdown=tuple(e / mean_step_s for e in expected),
        slow_prob=slow_prob,
        prob_step_slow=tuple(prob_step_slow(p, slow_prob) for p in rank_counts),
        num_trials=num_trials,
        seed=seed,
    )

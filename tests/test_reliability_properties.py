"""Property tests of the reliability formulas: optimality, bounds and monotonicity."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.reliability import (
    daly_interval_s,
    interruptions,
    optimal_interval_s,
    waste,
    young_interval_s,
)

checkpoint_s = st.floats(1.0, 3600.0)
mtbf_s = st.floats(600.0, 1e6)
restart_s = st.floats(0.0, 3600.0)


def _goodput(tau, d, r, m):
    return waste(interval_s=tau, checkpoint_s=d, restart_s=r, mtbf_s=m).goodput


@given(checkpoint_s, mtbf_s, restart_s, st.floats(0.5, 2.0))
def test_exact_optimum_is_no_worse_than_nearby_intervals(d, m, r, factor):
    opt = optimal_interval_s(checkpoint_s=d, mtbf_s=m)
    assert _goodput(opt, d, r, m) >= _goodput(opt * factor, d, r, m) * (1 - 1e-12)


@given(checkpoint_s, mtbf_s, restart_s)
def test_young_and_daly_never_beat_the_exact_optimum(d, m, r):
    best = _goodput(optimal_interval_s(checkpoint_s=d, mtbf_s=m), d, r, m)
    for tau in (
        young_interval_s(checkpoint_s=d, mtbf_s=m),
        daly_interval_s(checkpoint_s=d, mtbf_s=m),
    ):
        assert _goodput(tau, d, r, m) <= best * (1 + 1e-12)


@given(st.floats(1e-6, 1.99))
def test_daly_is_closer_than_young_to_the_exact_optimum(ratio):
    # Daly's expansion refines Young's for every delta < 2M (checked over the whole range).
    m = 10_000.0
    opt = optimal_interval_s(checkpoint_s=ratio * m, mtbf_s=m)
    young = young_interval_s(checkpoint_s=ratio * m, mtbf_s=m)
    daly = daly_interval_s(checkpoint_s=ratio * m, mtbf_s=m)
    assert abs(daly - opt) <= abs(young - opt)


@given(st.floats(1.0, 5.0), st.floats(0.0, 3600.0), mtbf_s, restart_s)
def test_goodput_in_unit_interval_and_fractions_sum_to_one(tau_over_m, d, m, r):
    w = waste(interval_s=tau_over_m * m, checkpoint_s=d, restart_s=r, mtbf_s=m)
    assert 0.0 < w.goodput <= 1.0
    parts = (w.checkpoint_fraction, w.lost_work_fraction, w.restart_fraction)
    assert all(p >= 0 for p in parts)
    assert w.goodput + sum(parts) == pytest.approx(1.0, abs=1e-12)


@given(st.floats(1.0, 1e5), checkpoint_s, mtbf_s, restart_s)
def test_more_reliable_jobs_have_more_goodput(tau, d, m, r):
    assert _goodput(tau, d, r, 2 * m) >= _goodput(tau, d, r, m)


@given(st.floats(10.0, 3600.0), st.floats(1e5, 1e7), st.floats(0.0, 600.0))
def test_first_order_waste_is_the_small_ratio_limit(tau, d_ratio_inv, r):
    # With delta << tau and tau, R << M the exact waste approaches delta/tau + (tau/2 + R)/M
    # (the exact checkpoint share is delta/(tau + delta), so delta/tau must be small too).
    m, d = 1e9, tau / d_ratio_inv
    w = waste(interval_s=tau, checkpoint_s=d, restart_s=r, mtbf_s=m)
    exact = w.wasted_fraction
    assert exact == pytest.approx(w.first_order_waste, rel=1e-4, abs=1e-9)


@given(st.integers(1, 1 << 20), st.floats(1e4, 1e9), st.floats(60.0, 1e7))
def test_doubling_gpus_halves_mtbf_and_doubles_interruptions(n, gpu_mtbf, run):
    a = interruptions(num_gpus=n, run_s=run, gpu_mtbf_s=gpu_mtbf)
    b = interruptions(num_gpus=2 * n, run_s=run, gpu_mtbf_s=gpu_mtbf)
    assert b.job_mtbf_s == pytest.approx(a.job_mtbf_s / 2, rel=1e-12)
    assert b.expected_interruptions == pytest.approx(2 * a.expected_interruptions, rel=1e-12)
    assert b.prob_no_failure == pytest.approx(a.prob_no_failure**2, rel=1e-9, abs=1e-300)
    assert math.isclose(a.expected_interruptions, n * run / gpu_mtbf, rel_tol=1e-12)

"""Reliability core: hand-worked cases, docs/notes/planner.md §4's worked example, Monte Carlo."""

import math

import numpy as np
import pytest

from core.model import ParamsOnly, preset
from core.pipeline import simulate
from core.reliability import (
    DAY_S,
    HOUR_S,
    LLAMA3_GPU_MTBF_S,
    LLAMA3_JOB_MTBF_S,
    checkpoint,
    daly_interval_s,
    goodput_curve,
    interruptions,
    optimal_interval_s,
    simulate_goodput,
    useful_devices,
    waste,
    young_interval_s,
)

# --- failures ---------------------------------------------------------------------------------


def test_job_mtbf_is_gpu_mtbf_over_gpu_count():
    # 50,000 h per GPU over 16,384 GPUs: 50000 / 16384 = 3.0517578125 h exactly.
    r = interruptions(num_gpus=16_384, run_s=7 * DAY_S, gpu_mtbf_s=50_000 * HOUR_S)
    assert r.job_mtbf_s == pytest.approx(3.0517578125 * HOUR_S, rel=1e-12)
    # 7 days = 168 h -> 168 / 3.0517578125 = 55.050... expected interruptions.
    assert r.expected_interruptions == pytest.approx(168 / 3.0517578125, rel=1e-12)
    assert r.prob_no_failure == pytest.approx(math.exp(-55.05024), rel=1e-5)


def test_failure_rate_and_mtbf_inputs_agree():
    by_rate = interruptions(num_gpus=1000, run_s=DAY_S, gpu_failure_rate_per_s=1 / (2e4 * HOUR_S))
    assert by_rate.job_mtbf_s == pytest.approx(20 * HOUR_S, rel=1e-12)  # 20,000 h / 1000
    assert by_rate.expected_interruptions == pytest.approx(24 / 20, rel=1e-12)


def test_llama3_snapshot_implies_about_three_hours_and_50677_gpu_hours():
    # docs/notes/planner.md §4: 54 x 24 h / 419 ≈ 3.09 h; x 16,384 GPUs = 21,233,664 / 419 GPU-h.
    assert LLAMA3_JOB_MTBF_S / HOUR_S == pytest.approx(1296 / 419, rel=1e-12)
    assert round(LLAMA3_JOB_MTBF_S / HOUR_S, 2) == 3.09
    assert LLAMA3_GPU_MTBF_S / HOUR_S == pytest.approx(
        21_233_664 / 419, rel=1e-12
    )  # 50,677 h ≈ 5.8 y
    r = interruptions(num_gpus=16_384, run_s=54 * DAY_S, gpu_mtbf_s=LLAMA3_GPU_MTBF_S)
    assert r.expected_interruptions == pytest.approx(419, rel=1e-12)


# --- checkpoint size --------------------------------------------------------------------------


def test_checkpoint_bytes_for_70b_params_by_hand():
    m = ParamsOnly(num_params=70_000_000_000)
    ck = checkpoint(model=m, write_bandwidth_bytes_per_s=100e9)
    # mixed-precision Adam: 2 B bf16 weights + 12 B fp32 master, m, v = 14 B/param (ZeRO Sec. 3.1).
    assert ck.bytes_per_param == 14 and ck.size_bytes == 980_000_000_000
    assert ck.write_s == pytest.approx(9.8, rel=1e-12)
    assert (
        checkpoint(model=m, write_bandwidth_bytes_per_s=1e9, contents="weights").size_bytes == 140e9
    )
    full = checkpoint(model=m, write_bandwidth_bytes_per_s=1e9, contents="all model states")
    assert full.size_bytes == 16 * 70e9 and full.write_s == pytest.approx(1120.0)
    assert (
        checkpoint(
            model=m,
            write_bandwidth_bytes_per_s=1e9,
            recipe="megatron_fp32_grads",
            contents="all model states",
        ).bytes_per_param
        == 18
    )


def test_checkpoint_of_llama2_7b_preset_uses_its_published_parameter_count():
    # meta-llama/Llama-2-7b-hf has 6,738,415,616 parameters.
    ck = checkpoint(model=preset("Llama-2 7B"), write_bandwidth_bytes_per_s=50e9)
    assert ck.size_bytes == 14 * 6_738_415_616
    assert ck.write_s == pytest.approx(14 * 6_738_415_616 / 50e9, rel=1e-12)


# --- intervals --------------------------------------------------------------------------------


def test_young_by_hand_five_minutes_three_hours():
    # sqrt(2 x 300 x 10800) = sqrt(6,480,000) = 1800 sqrt(2) = 2545.584 s ≈ 42.4 min.
    assert young_interval_s(checkpoint_s=300, mtbf_s=3 * HOUR_S) == pytest.approx(
        1800 * math.sqrt(2)
    )


def test_daly_by_hand_five_minutes_three_hours():
    # delta/(2M) = 1/72; 1800 sqrt2 x (1/3) x 1/(6 sqrt2) = 100; 1800 sqrt2 / 9 / 72 = 3.92837;
    # tau = 2545.58441 + 100 + 3.92837 - 300 = 2349.51278 s.
    assert daly_interval_s(checkpoint_s=300, mtbf_s=3 * HOUR_S) == pytest.approx(
        2349.51278, abs=1e-4
    )


def test_daly_falls_back_to_mtbf_when_checkpoint_exceeds_two_mtbf():
    assert daly_interval_s(checkpoint_s=25_000, mtbf_s=10_000) == 10_000


@pytest.mark.parametrize(
    "delta_s, young_min, daly_min, waste_pct",
    [
        (30, 13.6, 13.3, 7.3),
        (60, 19.3, None, 10.4),
        (120, 27.3, None, 14.7),
        (300, 43.1, None, 23.2),
    ],
)
def test_planner_worked_example(delta_s, young_min, daly_min, waste_pct):
    # docs/notes/planner.md §4, M = 3.09 h (Llama 3): Young's tau and first-order waste sqrt(2
    # delta/M).
    # Rounded: 27.3 min for delta = 120 s; sqrt(2 x 120 x 11135 s) = 1634.8 s = 27.25
    # min.
    m = LLAMA3_JOB_MTBF_S
    tau = young_interval_s(checkpoint_s=delta_s, mtbf_s=m)
    assert tau / 60 == pytest.approx(young_min, abs=0.06)
    if daly_min is not None:
        assert round(daly_interval_s(checkpoint_s=delta_s, mtbf_s=m) / 60, 1) == daly_min
    w = waste(interval_s=tau, checkpoint_s=delta_s, restart_s=0, mtbf_s=m)
    assert round(100 * w.first_order_waste, 1) == waste_pct


def test_planner_ten_minute_restart_adds_five_point_four_percent():
    m = LLAMA3_JOB_MTBF_S
    with_r, without = (
        waste(interval_s=900, checkpoint_s=60, restart_s=r, mtbf_s=m) for r in (600, 0)
    )
    assert round(100 * (with_r.first_order_waste - without.first_order_waste), 1) == 5.4


def test_exact_optimum_matches_a_brute_force_grid_and_daly_tracks_it():
    m, d, r = 3 * HOUR_S, 120.0, 600.0
    grid = np.linspace(60, 3 * HOUR_S, 200_001)
    # Daly 2006's complete model, written independently: wall per tau = M e^(R/M) (e^((tau+delta)/M)
    # - 1).
    goodput = grid / (m * math.exp(r / m) * np.expm1((grid + d) / m))
    best = grid[np.argmax(goodput)]
    opt = optimal_interval_s(checkpoint_s=d, mtbf_s=m)
    assert opt == pytest.approx(best, abs=0.2)
    assert daly_interval_s(checkpoint_s=d, mtbf_s=m) == pytest.approx(opt, rel=1e-3)
    assert young_interval_s(checkpoint_s=d, mtbf_s=m) > opt  # Young ignores the -delta term


# --- waste and goodput ------------------------------------------------------------------------


def test_goodput_closed_form_by_hand():
    # M = 10,000 s, tau = 1000 s, delta = 100 s, R = 500 s: s/M = 0.11, R/M = 0.05.
    # expm1(0.11) = 0.1162780705, e^0.05 = 1.0512710964 -> wall = 10000 x 0.1222397 = 1222.3975 s.
    w = waste(interval_s=1000, checkpoint_s=100, restart_s=500, mtbf_s=10_000)
    assert w.wall_per_interval_s == pytest.approx(1222.3975, abs=1e-3)
    assert w.goodput == pytest.approx(1000 / 1222.3975, rel=1e-6)  # 0.81806
    # Breakdown: lost = 1162.7807 - 1100 = 62.7807 s; restart = 1162.7807 x 0.0512711 = 59.6171 s.
    assert w.lost_work_fraction * w.wall_per_interval_s == pytest.approx(62.7807, abs=1e-3)
    assert w.restart_fraction * w.wall_per_interval_s == pytest.approx(59.6171, abs=1e-3)
    assert w.checkpoint_fraction == pytest.approx(100 / 1222.3975, rel=1e-6)
    assert w.first_order_waste == pytest.approx(0.1 + 0.1)  # 100/1000 + (500 + 500)/10000
    assert w.wasted_fraction == pytest.approx(1 - 1000 / 1222.3975, rel=1e-6)


def test_goodput_curve_marks_young_daly_optimum():
    c = goodput_curve(checkpoint_s=60, restart_s=600, mtbf_s=LLAMA3_JOB_MTBF_S, num_points=50)
    assert len(c.points) == 50
    assert c.young.interval_s == pytest.approx(
        young_interval_s(checkpoint_s=60, mtbf_s=LLAMA3_JOB_MTBF_S)
    )
    assert max(p.goodput for p in c.points) <= c.optimum.goodput
    assert c.daly.goodput >= c.young.goodput
    assert c.points[0].interval_s == pytest.approx(c.optimum.interval_s / 10)


# --- Monte Carlo ------------------------------------------------------------------------------


@pytest.mark.parametrize("interval_s, seed", [(300, 1), (1800, 2), (7200, 3), (20_000, 4)])
def test_monte_carlo_agrees_with_closed_form(interval_s, seed):
    kw = dict(interval_s=interval_s, checkpoint_s=60, restart_s=600, mtbf_s=LLAMA3_JOB_MTBF_S)
    mc = simulate_goodput(run_work_s=14 * DAY_S, num_runs=64, seed=seed, **kw)
    w = waste(**kw)
    assert abs(mc.goodput - w.goodput) < 4 * mc.goodput_stderr
    assert mc.goodput_stderr < 0.01
    for part in ("checkpoint_fraction", "lost_work_fraction", "restart_fraction"):
        assert getattr(mc, part) == pytest.approx(getattr(w, part), abs=0.02)


def test_monte_carlo_failures_arrive_at_the_job_rate():
    m = 2 * HOUR_S
    mc = simulate_goodput(
        interval_s=1800,
        checkpoint_s=120,
        restart_s=900,
        mtbf_s=m,
        run_work_s=30 * DAY_S,
        num_runs=64,
        seed=7,
    )
    rate = mc.failures_per_run / mc.wall_per_run_s  # a Poisson process over all wall time
    n = mc.failures_per_run * mc.num_runs
    assert rate * m == pytest.approx(1.0, abs=4 / math.sqrt(n))


def test_monte_carlo_without_failures_costs_only_checkpoints():
    mc = simulate_goodput(
        interval_s=1000, checkpoint_s=10, restart_s=0, mtbf_s=1e15, run_work_s=1e5, num_runs=4
    )
    assert mc.intervals_per_run == 100 and mc.failures_per_run == 0
    assert mc.goodput == pytest.approx(1000 / 1010, rel=1e-9)


def test_monte_carlo_is_seeded_and_capped():
    kw = dict(interval_s=60, checkpoint_s=5, restart_s=60, mtbf_s=HOUR_S, run_work_s=90 * DAY_S)
    a, b = simulate_goodput(seed=3, **kw), simulate_goodput(seed=3, **kw)
    assert a == b and a != simulate_goodput(seed=4, **kw)
    # 90 d / 60 s = 129,600 intervals per run; ~1.04 draws each exceeds the 150,000-draw budget.
    assert a.num_runs == 2 and a.intervals_per_run < 129_600
    assert a.intervals_per_run * a.num_runs <= 150_000


def test_monte_carlo_refuses_a_run_that_would_never_finish():
    # tau = 30 M: e^30 ≈ 1e13 failed attempts per interval; goodput ~ 1e-12.
    with pytest.raises(ValueError, match=r"needs ~2\.\d+e\+13 failure draws.*shorten the interval"):
        simulate_goodput(
            interval_s=30 * 3600, checkpoint_s=60, restart_s=600, mtbf_s=3600, run_work_s=7 * DAY_S
        )


# --- useful devices ---------------------------------------------------------------------------


def test_useful_devices_from_pipeline_simulation():
    res = simulate("1f1b", 4, 8)
    ud = useful_devices(
        num_gpus=64, bubble_fraction=res.bubble_fraction, straggler_slowdown=1.25, goodput=0.9
    )
    # 1F1B, P = 4, m = 8: bubble (P-1)/(m+P-1) = 3/11, so 64 x 8/11 GPUs busy on average.
    busy_from_timeline = 64 / 4 * sum(res.busy_s) / res.makespan_s
    assert ud.steps[1][1] == pytest.approx(64 * 8 / 11) == pytest.approx(busy_from_timeline)
    assert ud.steps[2][1] == pytest.approx(64 * 8 / 11 / 1.25)
    assert ud.useful_gpus == pytest.approx(64 * 8 / 11 * 0.8 * 0.9)


def test_useful_devices_from_mfu():
    ud = useful_devices(num_gpus=16_384, mfu=0.4, goodput=0.9)
    assert [s for s, _ in ud.steps][0] == "allocated"
    assert ud.useful_gpus == pytest.approx(16_384 * 0.36)


# --- validation messages ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: interruptions(num_gpus=8, run_s=DAY_S, gpu_mtbf_s=0),
            r"gpu_mtbf_s=0 must be .*> 0; use",
        ),
        (
            lambda: interruptions(num_gpus=0, run_s=DAY_S, gpu_mtbf_s=1e6),
            r"num_gpus=0 must be a whole number",
        ),
        (
            lambda: interruptions(num_gpus=8, run_s=DAY_S),
            r"exactly one of gpu_mtbf_s or gpu_failure_rate",
        ),
        (lambda: interruptions(num_gpus=8, run_s=-1, gpu_mtbf_s=1e6), r"run_s=-1 must be .*> 0"),
        (
            lambda: checkpoint(model=ParamsOnly(num_params=10), write_bandwidth_bytes_per_s=0),
            r"write_bandwidth_bytes_per_s=0 must be .*> 0; use the storage's aggregate write "
            r"bandwidth",
        ),
        (
            lambda: checkpoint(
                model=ParamsOnly(num_params=10), write_bandwidth_bytes_per_s=1, contents="x"
            ),
            r"contents='x' is unknown: use one of weights\+optimizer, weights, all model states",
        ),
        (
            lambda: checkpoint(
                model=ParamsOnly(num_params=10), write_bandwidth_bytes_per_s=1, recipe="x"
            ),
            r"recipe='x' is unknown",
        ),
        (
            lambda: waste(interval_s=0, checkpoint_s=60, restart_s=0, mtbf_s=1e4),
            r"interval_s=0 must be .*> 0; use a checkpoint interval",
        ),
        (
            lambda: waste(interval_s=60, checkpoint_s=60, restart_s=0, mtbf_s=-5),
            r"mtbf_s=-5 must be .*> 0",
        ),
        (
            lambda: waste(interval_s=60, checkpoint_s=60, restart_s=float("nan"), mtbf_s=1e4),
            r"restart_s=nan must be a finite number ≥ 0",
        ),
        (lambda: waste(interval_s=1e9, checkpoint_s=60, restart_s=0, mtbf_s=1), r"over 700 MTBFs"),
        (lambda: young_interval_s(checkpoint_s=0, mtbf_s=1e4), r"checkpoint_s=0 must be .*> 0"),
        (
            lambda: simulate_goodput(
                interval_s=60, checkpoint_s=1, restart_s=0, mtbf_s=1e4, run_work_s=0
            ),
            r"run_work_s=0 must be .*> 0",
        ),
        (lambda: useful_devices(num_gpus=8, goodput=1.5), r"goodput=1.5 must be .*≤ 1"),
        (lambda: useful_devices(num_gpus=8, straggler_slowdown=0.5), r"straggler_slowdown=0.5 < 1"),
        (lambda: useful_devices(num_gpus=8, bubble_fraction=1.0), r"bubble_fraction=1.0 must be"),
        (
            lambda: useful_devices(num_gpus=8, mfu=0.4, bubble_fraction=0.2),
            r"mfu=0.4 with bubble_fraction=0.2.*pass either mfu or those two",
        ),
    ],
)
def test_errors_state_numbers_rule_and_fix(call, match):
    with pytest.raises(ValueError, match=match):
        call()

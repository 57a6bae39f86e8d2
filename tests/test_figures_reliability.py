"""Reliability figure specs carry the core's numbers, the optima, the Monte Carlo and the
parameters.
"""

import math

import plotly.graph_objects as go
import pytest

from core.data_parallel import straggler_curve
from core.reliability import (
    DAY_S,
    HOUR_S,
    goodput_curve,
    interruptions,
    simulate_goodput,
    useful_devices,
)
from figures.reliability import (
    goodput_figure,
    interruptions_figure,
    stragglers_figure,
    useful_devices_figure,
    waste_figure,
)


def _trace(fig, prefix):
    return next(t for t in fig["data"] if t["name"].startswith(prefix))


def test_goodput_figure_marks_young_daly_optimum_and_monte_carlo():
    curve = goodput_curve(checkpoint_s=300, restart_s=600, mtbf_s=3 * HOUR_S)
    mcs = [
        simulate_goodput(
            interval_s=t,
            checkpoint_s=300,
            restart_s=600,
            mtbf_s=3 * HOUR_S,
            run_work_s=7 * DAY_S,
            num_runs=16,
            seed=i,
        )
        for i, t in enumerate((900, 3600))
    ]
    fig = goodput_figure(curve, mcs)
    go.Figure(fig)  # a valid Plotly spec
    # Young by hand: sqrt(2 x 300 x 10800) = 1800 sqrt(2) s = 42.4 min; Daly by hand 2349.51 s =
    # 39.2 min.
    young, daly = _trace(fig, "Young"), _trace(fig, "Daly")
    assert young["x"] == [pytest.approx(1800 * math.sqrt(2))]
    assert daly["x"] == [pytest.approx(2349.51278, abs=1e-3)]
    assert young["name"].endswith("42.4 min") and daly["name"].endswith("39.2 min")
    # Daly 2006's complete model by hand at Young's tau: tau / (M e^(R/M) (e^((tau+delta)/M) - 1)).
    tau, m = 1800 * math.sqrt(2), 3 * HOUR_S
    assert young["y"] == [
        pytest.approx(tau / (m * math.exp(600 / m) * math.expm1((tau + 300) / m)))
    ]
    mc = _trace(fig, "Monte Carlo")
    assert mc["x"] == [900, 3600] and mc["y"] == [m.goodput for m in mcs]
    assert mc["error_y"]["array"] == [2 * m.goodput_stderr for m in mcs]
    closed = _trace(fig, "closed form")
    assert max(closed["y"]) <= _trace(fig, "exact optimum")["y"][0]
    title = _title(fig)
    assert "δ = 5 min" in title and "R = 10 min" in title and "M = 3 h" in title
    assert fig["layout"]["xaxis"]["type"] == "log"


def test_waste_figure_stacks_the_three_losses_by_hand():
    curve = goodput_curve(checkpoint_s=100, restart_s=500, mtbf_s=10_000, intervals_s=(1000,))
    fig = waste_figure(curve)
    go.Figure(fig)
    # By hand (M = 10,000 s, tau = 1000, delta = 100, R = 500): wall 1222.3975 s of which checkpoint
    # 100 s, lost 62.7807 s, restart 59.6171 s.
    ys = {t["name"].split(" ")[0]: t["y"][0] for t in fig["data"] if t.get("stackgroup")}
    assert ys["checkpoint"] == pytest.approx(100 / 1222.3975, rel=1e-6)
    assert ys["lost"] == pytest.approx(62.7807 / 1222.3975, rel=1e-5)
    assert ys["restarts"] == pytest.approx(59.6171 / 1222.3975, rel=1e-5)
    star = _trace(fig, "optimum")
    assert star["y"][0] == pytest.approx(1 - curve.optimum.goodput)
    assert "δ = 1.67 min" in _title(fig)


def test_interruptions_figure_by_hand_and_llama3_scaled():
    pts = [
        interruptions(num_gpus=n, run_s=7 * DAY_S, gpu_mtbf_s=50_000 * HOUR_S)
        for n in (1024, 4096, 16_384)
    ]
    fig = interruptions_figure(pts)
    go.Figure(fig)
    line = fig["data"][0]
    # 168 h x N / 50,000 h: 3.44064, 13.76256, 55.05024.
    assert line["x"] == [1024, 4096, 16_384]
    assert line["y"] == pytest.approx([3.44064, 13.76256, 55.05024])
    llama = _trace(fig, "Llama 3")
    assert llama["x"] == [16_384] and llama["y"] == [pytest.approx(419 * 7 / 54)]
    assert "7 d run" in _title(fig)
    assert "per-GPU MTBF 2,083 d" in _title(fig)  # 50,000 h / 24
    assert len(interruptions_figure(pts, show_llama3=False)["data"]) == 1
    with pytest.raises(ValueError, match="at least one"):
        interruptions_figure([])


def test_stragglers_figure_uses_the_stragglers_core():
    curve = straggler_curve(rank_counts=(2, 8, 64), mean_step_s=0.1, jitter_s=0.005, num_trials=200)
    fig = stragglers_figure(curve)
    go.Figure(fig)
    # docs/notes/collectives.md §5: N(100 ms, 5 ms) gives E[step] ≈ 107.12 ms at p 8, 111.72 at 64.
    closed = _trace(fig, "closed form")
    assert closed["y"][1:] == pytest.approx([1.0712, 1.1172], abs=1e-4)
    assert _trace(fig, "Monte Carlo")["y"] == pytest.approx([s / 0.1 for s in curve.mc_step_s])
    # q = 1%: 1 - 0.99^8 = 0.0773, 1 - 0.99^64 = 0.4744 (docs/notes/collectives.md §5).
    assert _trace(fig, "P(step slow)")["y"][1:] == pytest.approx([0.0773, 0.4744], abs=1e-4)
    title = _title(fig)
    assert "μ = 100 ms" in title and "σ = 5 ms" in title


def test_useful_devices_figure_steps_down_from_allocated():
    fig = useful_devices_figure(
        useful_devices(num_gpus=1000, bubble_fraction=0.2, straggler_slowdown=1.25, goodput=0.9)
    )
    go.Figure(fig)
    bars = fig["data"][0]
    assert bars["y"] == pytest.approx([1000, 800, 640, 576])
    assert "576 of 1,000 (57.6%)" in _title(fig)
    # level labels of at most 14 characters a line: rotated, the last one ran off the chart
    assert fig["layout"]["xaxis"]["tickangle"] == 0
    assert bars["x"][-1] == "after failures<br>+ checkpoints"
    assert max(len(line) for x in bars["x"] for line in x.split("<br>")) <= 14


def test_daly_marker_draws_over_the_optimum_star_and_monte_carlo_is_explained():
    """Issue 15 §3: Daly's τ sits within a percent of the optimum, so its marker must draw on top
    of (after) a larger star; the legend says what a Monte Carlo run and s.e. are."""
    curve = goodput_curve(checkpoint_s=300, restart_s=600, mtbf_s=3 * HOUR_S)
    mc = simulate_goodput(
        interval_s=3600, checkpoint_s=300, restart_s=600, mtbf_s=3 * HOUR_S, run_work_s=DAY_S
    )
    fig = goodput_figure(curve, [mc])
    names = [t["name"] for t in fig["data"]]
    star = next(i for i, n in enumerate(names) if n.startswith("exact optimum"))
    for marker in ("Daly", "Young"):
        i = next(i for i, n in enumerate(names) if n.startswith(marker))
        assert star < i  # Plotly draws later traces on top
        assert fig["data"][i]["marker"]["size"] < fig["data"][star]["marker"]["size"]
    legend = _trace(fig, "Monte Carlo")["name"]
    assert "±2 s.e." in legend and "standard error" in legend and "run = " in legend


def _title(fig: dict) -> str:
    """The title as read: its text and its subtitle's."""
    title = fig["layout"]["title"]
    return title["text"] + " " + title.get("subtitle", {}).get("text", "")

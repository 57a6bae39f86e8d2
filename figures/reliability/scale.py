"""Failures at scale: interruptions vs GPUs, stragglers, and devices doing useful work."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from core.data_parallel import StragglerCurve
from core.reliability import (
    LLAMA3_GPUS,
    LLAMA3_SNAPSHOT_S,
    LLAMA3_UNEXPECTED,
    Interruptions,
    UsefulDevices,
)
from core.units import format_seconds
from figures.reliability.axes import base_layout
from figures.style import RELIABILITY_COLOURS


def interruptions_figure(points: Sequence[Interruptions], show_llama3: bool = True) -> dict:
    """Expected interruptions over the run vs GPU count, with Llama 3's observed rate for scale."""
    if not points:
        raise ValueError(
            "interruptions_figure needs at least one Interruptions point; pass e.g. "
            "[interruptions(num_gpus=n, ...) for n in (8, 64, 512, 4096)]"
        )
    run_s, gpu_mtbf_s = points[0].run_s, points[0].gpu_mtbf_s
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "expected N·T / MTBF_gpu",
            "x": [p.num_gpus for p in points],
            "y": [p.expected_interruptions for p in points],
            "customdata": [[format_seconds(p.job_mtbf_s), p.prob_no_failure] for p in points],
            "hovertemplate": "%{x} GPUs<br>%{y:.3g} interruptions<br>job MTBF %{customdata[0]}"
            "<br>P(no failure) %{customdata[1]:.3g}<extra></extra>",
            "line": {"color": RELIABILITY_COLOURS["curve"]},
        }
    ]
    if show_llama3:
        scaled = LLAMA3_UNEXPECTED * run_s / LLAMA3_SNAPSHOT_S
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [LLAMA3_GPUS],
                "y": [scaled],
                "name": f"Llama 3: {LLAMA3_UNEXPECTED} unexpected in "
                f"{format_seconds(LLAMA3_SNAPSHOT_S)}, scaled to this run",
                "marker": {"symbol": "x", "size": 14, "color": RELIABILITY_COLOURS["optimum"]},
            }
        )
    title = f"Expected interruptions in a {format_seconds(run_s)} run"
    sub = f"per-GPU MTBF {format_seconds(gpu_mtbf_s)}; independent exponential failures"
    return {
        "data": data,
        "layout": base_layout(
            title,
            sub,
            xaxis={"title": {"text": "GPUs (log)"}, "type": "log", "dtick": 1},
            yaxis={"title": {"text": "expected interruptions (log)"}, "type": "log", "dtick": 1},
        ),
    }


def stragglers_figure(curve: StragglerCurve) -> dict:
    """E[step] / mean step vs ranks (closed form and Monte Carlo), and P(some rank hiccups)."""
    mu = curve.mean_step_s
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "closed form 1 + (σ/μ)·E[max of p N(0,1)]",
            "x": list(curve.rank_counts),
            "y": list(curve.slowdown),
            "line": {"color": RELIABILITY_COLOURS["curve"], "width": 3},
            "hovertemplate": "%{x} ranks<br>slowdown ×%{y:.4f}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "markers",
            "x": list(curve.rank_counts),
            "name": f"Monte Carlo ({curve.num_trials} steps, ±2 s.e.)",
            "y": [s / mu for s in curve.mc_step_s],
            "error_y": {"type": "data", "array": [2 * e / mu for e in curve.mc_stderr_s]},
            "marker": {"color": RELIABILITY_COLOURS["mc"], "symbol": "circle-open", "size": 8},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"P(step slow), q = {curve.slow_prob:g} per rank",
            "x": list(curve.rank_counts),
            "y": list(curve.prob_step_slow),
            "yaxis": "y2",
            "line": {"color": RELIABILITY_COLOURS["young"], "dash": "dash"},
            "hovertemplate": "%{x} ranks<br>P(step slow) %{y:.3f}<extra></extra>",
        },
    ]
    title = "Straggler slowdown vs GPU count"
    sub = (
        f"per-rank step N(μ = {format_seconds(mu)}, σ = {format_seconds(curve.jitter_s)}, "
        f"σ/μ = {curve.jitter_s / mu:.1%}); seed {curve.seed}"
    )
    return {
        "data": data,
        "layout": base_layout(
            title,
            sub,
            xaxis={"title": {"text": "ranks in the synchronous step (log)"}, "type": "log"},
            yaxis={"title": {"text": "E[step] / μ"}},
            yaxis2={
                "title": {"text": "P(at least one rank slow)"},
                "overlaying": "y",
                "side": "right",
                "range": [0, 1],
                "dtick": 0.2,
                "tickformat": ".0%",
                "showgrid": False,
            },
        ),
    }


def useful_devices_figure(devices: UsefulDevices) -> dict:
    """Bars from allocated GPUs down to those doing useful work at the same instant."""
    labels, values = zip(*devices.steps)
    data = [
        {
            "type": "bar",
            # wrapped, level: rotated, "after failures + checkpoints" ran past a half-width chart
            "x": ["<br>".join(textwrap.wrap(label, 14)) for label in labels],
            "y": list(values),
            "marker": {"color": RELIABILITY_COLOURS["curve"]},
            "text": [f"{v:,.0f}" for v in values],
            "textposition": "outside",
            "hovertemplate": "%{x}<br>%{y:,.1f} GPUs<extra></extra>",
        }
    ]
    share = values[-1] / values[0]
    title = "GPUs doing useful work at the same instant"
    sub = f"{values[-1]:,.0f} of {values[0]:,.0f} ({share:.1%}) on average"
    yaxis = {"title": {"text": "GPUs (average)"}, "rangemode": "tozero"}
    xaxis = {"tickangle": 0}
    return {
        "data": data,
        "layout": base_layout(title, sub, showlegend=False, xaxis=xaxis, yaxis=yaxis),
    }

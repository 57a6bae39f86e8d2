"""Reliability figures: goodput vs checkpoint interval, waste breakdown, interruptions,
stragglers.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.data_parallel import StragglerCurve
from core.reliability import (
    LLAMA3_GPUS,
    LLAMA3_SNAPSHOT_S,
    LLAMA3_UNEXPECTED,
    GoodputCurve,
    Interruptions,
    MonteCarloGoodput,
    UsefulDevices,
    Waste,
)
from core.units import format_seconds

_COLORS = {
    "curve": "#1f77b4",
    "young": "#ff7f0e",
    "daly": "#2ca02c",
    "optimum": "#d62728",
    "mc": "#111111",
    "checkpoint": "#9467bd",
    "lost": "#d62728",
    "restart": "#8c564b",
}
# Candidate tick positions (seconds) for log time axes, labelled by units.format_seconds.
_TICKS_S = [
    1,
    2,
    5,
    10,
    20,
    30,
    60,
    120,
    300,
    600,
    900,
    1200,
    1800,
    3600,
    7200,
    10800,
    14400,
    21600,
    28800,
    43200,
    86400,
    172800,
    259200,
    604800,
    1209600,
    2592000,
]


def _time_axis(title: str, lo_s: float, hi_s: float) -> dict:
    ticks = [t for t in _TICKS_S if lo_s <= t <= hi_s]
    while len(ticks) > 8:
        ticks = ticks[::2]
    return {
        "title": {"text": title},
        "type": "log",
        "tickvals": ticks,
        "ticktext": [format_seconds(t) for t in ticks],
    }


def _layout(title: str, **extra) -> dict:
    return {
        "title": {"text": title},
        "template": "plotly_white",
        "hovermode": "closest",
        "legend": {"orientation": "h", "y": -0.2},
        "margin": {"t": 70},
        **extra,
    }


def _params(curve: GoodputCurve) -> str:
    p = curve.optimum
    return (
        f"checkpoint δ = {format_seconds(p.checkpoint_s)}, "
        f"restart R = {format_seconds(p.restart_s)}, job MTBF M = {format_seconds(p.mtbf_s)}"
    )


def goodput_figure(
    curve: GoodputCurve, monte_carlo: Sequence[MonteCarloGoodput] = (), chosen: Waste | None = None
) -> dict:
    """Goodput vs interval (exact and first-order), Young/Daly/optimum marked, Monte Carlo on
    top.
    """
    xs = [p.interval_s for p in curve.points]
    hover = [format_seconds(x) for x in xs]
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "closed form (exponential failures)",
            "x": xs,
            "y": [p.goodput for p in curve.points],
            "line": {"color": _COLORS["curve"], "width": 3},
            "customdata": hover,
            "hovertemplate": "interval %{customdata}<br>goodput %{y:.2%}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "first order: 1 − δ/τ − (τ/2 + R)/M",
            "x": xs,
            "y": [1.0 - p.first_order_waste for p in curve.points],
            "visible": "legendonly",
            "line": {"color": _COLORS["curve"], "dash": "dot"},
            "customdata": hover,
            "hovertemplate": "interval %{customdata}<br>first order %{y:.2%}<extra></extra>",
        },
    ]
    for key, label, symbol in (
        ("young", "Young √(2δM)", "diamond"),
        ("daly", "Daly 2006", "triangle-up"),
        ("optimum", "exact optimum", "star"),
    ):
        w = getattr(curve, key)
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [w.interval_s],
                "name": f"{label}: {format_seconds(w.interval_s)}",
                "y": [w.goodput],
                "marker": {
                    "symbol": symbol,
                    "size": 14,
                    "color": _COLORS[key],
                    "line": {"width": 1, "color": "white"},
                },
                "hovertemplate": f"{label}<br>interval {format_seconds(w.interval_s)}"
                "<br>goodput %{y:.3%}<extra></extra>",
            }
        )
    if chosen is not None:  # the user's interval: a dashed drop line to its closed-form goodput
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": [chosen.interval_s] * 2,
                "y": [min(p.goodput for p in curve.points + (chosen,)), chosen.goodput],
                "name": f"your τ: {format_seconds(chosen.interval_s)}, {chosen.goodput:.1%}",
                "line": {"color": _COLORS["mc"], "dash": "dash", "width": 1},
                "marker": {"size": [0, 11], "color": _COLORS["mc"], "symbol": "square"},
                "hovertemplate": f"your interval {format_seconds(chosen.interval_s)}"
                "<br>goodput %{y:.2%}<extra></extra>",
            }
        )
    if monte_carlo:
        runs = {m.num_runs for m in monte_carlo}
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [m.interval_s for m in monte_carlo],
                "name": f"Monte Carlo ({'/'.join(map(str, sorted(runs)))} runs, ±2 s.e.)",
                "y": [m.goodput for m in monte_carlo],
                "error_y": {"type": "data", "array": [2 * m.goodput_stderr for m in monte_carlo]},
                "customdata": [
                    [m.num_runs, m.intervals_per_run, m.failures_per_run] for m in monte_carlo
                ],
                "marker": {"color": _COLORS["mc"], "size": 8, "symbol": "circle-open"},
                "hovertemplate": "Monte Carlo: %{customdata[0]} runs × %{customdata[1]} intervals"
                "<br>%{customdata[2]:.1f} failures per run"
                "<br>goodput %{y:.2%}<extra></extra>",
            }
        )
    extra = [m.interval_s for m in monte_carlo] + ([chosen.interval_s] if chosen else [])
    lo, hi = min(xs + extra), max(xs + extra)
    title = f"Goodput vs checkpoint interval<br><sup>{_params(curve)}</sup>"
    return {
        "data": data,
        "layout": _layout(
            title,
            xaxis=_time_axis("checkpoint interval τ (log)", lo, hi),
            yaxis={"title": {"text": "goodput (useful work / wall time)"}, "tickformat": ".0%"},
        ),
    }


def waste_figure(curve: GoodputCurve) -> dict:
    """Stacked shares of wall time lost to checkpoint writes, lost work and restarts vs interval."""
    xs = [p.interval_s for p in curve.points]
    hover = [format_seconds(x) for x in xs]
    parts = (
        ("checkpoint writes", "checkpoint_fraction", "checkpoint"),
        ("lost work (incl. partial checkpoints)", "lost_work_fraction", "lost"),
        ("restarts", "restart_fraction", "restart"),
    )
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "stackgroup": "waste",
            "name": name,
            "x": xs,
            "y": [getattr(p, field) for p in curve.points],
            "line": {"color": _COLORS[color]},
            "customdata": hover,
            "hovertemplate": f"{name}<br>interval %{{customdata}}<br>%{{y:.2%}} of wall time"
            "<extra></extra>",
        }
        for name, field, color in parts
    ]
    opt = curve.optimum
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "x": [opt.interval_s],
            "y": [opt.wasted_fraction],
            "name": f"optimum: {format_seconds(opt.interval_s)}, {opt.wasted_fraction:.1%} wasted",
            "marker": {"symbol": "star", "size": 14, "color": _COLORS["optimum"]},
        }
    )
    title = f"Where the wall time goes<br><sup>{_params(curve)}</sup>"
    return {
        "data": data,
        "layout": _layout(
            title,
            xaxis=_time_axis("checkpoint interval τ (log)", min(xs), max(xs)),
            yaxis={"title": {"text": "share of wall time wasted"}, "tickformat": ".0%"},
        ),
    }


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
            "line": {"color": _COLORS["curve"]},
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
                "marker": {"symbol": "x", "size": 14, "color": _COLORS["optimum"]},
            }
        )
    title = (
        f"Expected interruptions in a {format_seconds(run_s)} run<br><sup>per-GPU MTBF "
        f"{format_seconds(gpu_mtbf_s)}; independent exponential failures</sup>"
    )
    return {
        "data": data,
        "layout": _layout(
            title,
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
            "line": {"color": _COLORS["curve"], "width": 3},
            "hovertemplate": "%{x} ranks<br>slowdown ×%{y:.4f}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "markers",
            "x": list(curve.rank_counts),
            "name": f"Monte Carlo ({curve.num_trials} steps, ±2 s.e.)",
            "y": [s / mu for s in curve.mc_step_s],
            "error_y": {"type": "data", "array": [2 * e / mu for e in curve.mc_stderr_s]},
            "marker": {"color": _COLORS["mc"], "symbol": "circle-open", "size": 8},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"P(step slow), q = {curve.slow_prob:g} per rank",
            "x": list(curve.rank_counts),
            "y": list(curve.prob_step_slow),
            "yaxis": "y2",
            "line": {"color": _COLORS["young"], "dash": "dash"},
            "hovertemplate": "%{x} ranks<br>P(step slow) %{y:.3f}<extra></extra>",
        },
    ]
    title = (
        f"Straggler slowdown vs GPU count<br><sup>per-rank step N(μ = {format_seconds(mu)}, "
        f"σ = {format_seconds(curve.jitter_s)}, σ/μ = {curve.jitter_s / mu:.1%}); "
        f"seed {curve.seed}</sup>"
    )
    return {
        "data": data,
        "layout": _layout(
            title,
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
            "x": list(labels),
            "y": list(values),
            "marker": {"color": _COLORS["curve"]},
            "text": [f"{v:,.0f}" for v in values],
            "textposition": "outside",
            "hovertemplate": "%{x}<br>%{y:,.1f} GPUs<extra></extra>",
        }
    ]
    share = values[-1] / values[0]
    title = (
        f"GPUs doing useful work at the same instant<br><sup>{values[-1]:,.0f} of "
        f"{values[0]:,.0f} ({share:.1%}) on average</sup>"
    )
    yaxis = {"title": {"text": "GPUs (average)"}, "rangemode": "tozero"}
    return {"data": data, "layout": _layout(title, showlegend=False, yaxis=yaxis)}

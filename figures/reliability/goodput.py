"""Goodput vs checkpoint interval (with Young, Daly and Monte Carlo), and where the time goes."""

from __future__ import annotations

from collections.abc import Sequence

from core.reliability import GoodputCurve, MonteCarloGoodput, Waste
from core.units import format_seconds
from figures.reliability.axes import base_layout, time_axis
from figures.style import COLOURS, RELIABILITY_COLOURS


def _params(curve: GoodputCurve) -> str:
    p = curve.optimum
    return (
        f"checkpoint δ = {format_seconds(p.checkpoint_s)}, restart R = "
        f"{format_seconds(p.restart_s)}, job MTBF M = {format_seconds(p.mtbf_s)}"
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
            "line": {"color": RELIABILITY_COLOURS["curve"], "width": 3},
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
            "line": {"color": RELIABILITY_COLOURS["curve"], "dash": "dot"},
            "customdata": hover,
            "hovertemplate": "interval %{customdata}<br>first order %{y:.2%}<extra></extra>",
        },
    ]
    # The optimum first and largest: Young and Daly (often within a percent of it) draw on top
    # of the star, so no marker hides another (issue 15 §3).
    for key, label, symbol, size in (
        ("optimum", "exact optimum", "star", 22),
        ("young", "Young √(2δM)", "diamond", 12),
        ("daly", "Daly 2006", "triangle-up", 11),
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
                    "size": size,
                    "color": RELIABILITY_COLOURS[key],
                    "line": {"width": 1, "color": COLOURS["paper"]},
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
                "line": {"color": RELIABILITY_COLOURS["mc"], "dash": "dash", "width": 1},
                "marker": {"size": [0, 11], "color": RELIABILITY_COLOURS["mc"], "symbol": "square"},
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
                "name": f"Monte Carlo: {'/'.join(map(str, sorted(runs)))} runs, bars ±2 s.e.<br>"
                "(run = one simulated job with random failures; s.e. = standard error of the mean)",
                "y": [m.goodput for m in monte_carlo],
                "error_y": {"type": "data", "array": [2 * m.goodput_stderr for m in monte_carlo]},
                "customdata": [
                    [m.num_runs, m.intervals_per_run, m.failures_per_run] for m in monte_carlo
                ],
                "marker": {"color": RELIABILITY_COLOURS["mc"], "size": 8, "symbol": "circle-open"},
                "hovertemplate": "Monte Carlo: %{customdata[0]} runs × %{customdata[1]} "
                "intervals<br>%{customdata[2]:.1f} failures per run<br>goodput "
                "%{y:.2%}<extra></extra>",
            }
        )
    extra = [m.interval_s for m in monte_carlo] + ([chosen.interval_s] if chosen else [])
    lo, hi = min(xs + extra), max(xs + extra)
    title, sub = "Goodput vs checkpoint interval", _params(curve)
    return {
        "data": data,
        "layout": base_layout(
            title,
            sub,
            xaxis=time_axis("checkpoint interval τ (log)", lo, hi),
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
            "line": {"color": RELIABILITY_COLOURS[color]},
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
            "marker": {"symbol": "star", "size": 14, "color": RELIABILITY_COLOURS["optimum"]},
        }
    )
    title, sub = "Where the wall time goes", _params(curve)
    return {
        "data": data,
        "layout": base_layout(
            title,
            sub,
            xaxis=time_axis("checkpoint interval τ (log)", min(xs), max(xs)),
            yaxis={"title": {"text": "share of wall time wasted"}, "tickformat": ".0%"},
        ),
    }

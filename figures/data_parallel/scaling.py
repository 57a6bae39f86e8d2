"""Step time, scaling efficiency and stragglers as the number of data-parallel GPUs grows."""

from __future__ import annotations

import numpy as np

from core.data_parallel import ScalingCurve, StragglerCurve
from core.units import format_count
from figures.style import COLOURS, SERIES_COLOURS, bottom_legend, margin, ticks_125

SCALING_EFFICIENCY = (
    "scaling efficiency = tokens/s on N GPUs ÷ (N × one GPU's tokens/s without communication) "
    "= compute / step"
)


def dtype_name(bytes_per_element: float) -> str:
    """The usual name of a 2- or 4-byte training dtype, so every message states its dtype."""
    return {2: "bf16", 4: "fp32", 1: "fp8"}.get(
        int(bytes_per_element), f"{bytes_per_element:g}-byte"
    )


def percent(x: float) -> str:
    """A share with 2 significant digits, so a small one never rounds to '0%'."""
    return f"{100 * x:.2g}%" if x < 0.1 else f"{x:.0%}"


def straggler_figure(curve: StragglerCurve) -> dict:
    """Expected step (ms) vs ranks: closed form line, Monte Carlo points, P(step slow) on the
    right.
    """
    p = list(curve.rank_counts)
    mc = np.asarray(curve.mc_step_s) * 1e3
    traces = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "μ + σ·E[max of p N(0,1)] (integral)",
            "x": p,
            "y": (np.asarray(curve.expected_step_s) * 1e3).tolist(),
            "line": {"color": COLOURS["model"], "width": 3},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": f"Monte Carlo ({curve.num_trials} trials)",
            "x": p,
            "y": mc.tolist(),
            "marker": {"color": COLOURS["monte_carlo"], "size": 8},
            "error_y": {
                "type": "data",
                "array": (np.asarray(curve.mc_stderr_s) * 1e3 * 2).tolist(),
                "visible": True,
            },
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"P(some rank hiccups), q={curve.slow_prob:g}",
            "x": p,
            "y": list(curve.prob_step_slow),
            "yaxis": "y2",
            "line": {"color": COLOURS["guide"], "dash": "dot"},
        },
    ]
    mu, sigma = curve.mean_step_s * 1e3, curve.jitter_s * 1e3
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Stragglers · μ={mu:g} ms · σ={sigma:g} ms",
                "subtitle": {
                    "text": f"at p={p[-1]}: {curve.expected_step_s[-1] * 1e3:.2f} ms "
                    f"expected ({curve.slowdown[-1] - 1:.1%} slower than μ); "
                    "error bars ±2 standard errors"
                },
            },
            "xaxis": {"type": "log", "title": {"text": "ranks p"}, "tickvals": p},
            "yaxis": {"title": {"text": "expected step (ms)"}},
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "range": [0, 1],
                "dtick": 0.2,
                "tickformat": ".0%",
                "title": {"text": "P(step slow)"},
                "showgrid": False,
            },
            "legend": bottom_legend(),
            "height": 400,
            "margin": margin(l=70, r=70, t=80, b=60),
        },
    }


def to_ms(values) -> list:
    return np.round(np.asarray(values, dtype=float) * 1e3, 4).tolist()


def step_time_figure(curve: ScalingCurve, *, title: str | None = None) -> dict:
    """Stacked bars per GPU count: compute, then the exposed all-reduce; efficiency on the right."""
    x = [str(n) for n in curve.num_gpus.tolist()]
    last = curve.steps[-1]
    traces = [
        {
            "type": "bar",
            "name": "compute (forward + backward)",
            "x": x,
            "y": to_ms(curve.column("compute_s")),
            "marker": {"color": COLOURS["compute"]},
        },
        {
            "type": "bar",
            "name": "exposed all-reduce",
            "x": x,
            "y": to_ms(curve.column("exposed_comm_s")),
            "marker": {"color": COLOURS["exposed"]},
            "customdata": [s.bottleneck_link for s in curve.steps],
            "hovertemplate": "N=%{x}: %{y:.3g} ms exposed<br>bottleneck "
            "%{customdata}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "scaling efficiency",
            "x": x,
            "y": curve.column("efficiency").tolist(),
            "yaxis": "y2",
            "line": {"color": COLOURS["ink"]},
        },
    ]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": title
                or f"Data parallel · N={last.num_gpus} · {curve.scaling.value} scaling",
                "subtitle": {
                    "text": f"at N={last.num_gpus}: step {last.step_s * 1e3:.4g} ms, scaling "
                    f"efficiency {percent(last.efficiency)}, {last.tokens_per_s:,.0f} tokens/s"
                },
            },
            "barmode": "stack",
            "xaxis": {"title": {"text": "GPUs (N)"}, "type": "category"},
            "yaxis": {"title": {"text": "step time (ms)"}},
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "range": [0, 1.05],
                "tickformat": ".0%",
                "dtick": 0.2,
                "title": {"text": "efficiency"},
                "showgrid": False,
            },
            "legend": bottom_legend(),
            "height": 420,
            "margin": margin(l=70, r=70, t=80, b=60),
        },
    }


def efficiency_figure(curves: dict[str, ScalingCurve]) -> dict:
    """Scaling efficiency (left) and throughput (right, dotted) vs N for several variants."""
    colors = SERIES_COLOURS[:6]
    traces = []
    for i, (name, c) in enumerate(curves.items()):
        n, col = c.num_gpus.tolist(), colors[i % len(colors)]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{name}: efficiency",
                "x": n,
                "y": c.column("efficiency").tolist(),
                "line": {"color": col},
            }
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{name}: tokens/s",
                "x": n,
                "y": c.column("tokens_per_s").tolist(),
                "yaxis": "y2",
                "line": {"color": col, "dash": "dot"},
            }
        )
    top = max(c.num_gpus.max() for c in curves.values())
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"Data parallel · N≤{top} · efficiency and throughput"},
            "xaxis": {
                "type": "log",
                "title": {"text": "GPUs (N)"},
                "tickvals": sorted({int(n) for c in curves.values() for n in c.num_gpus}),
            },
            "yaxis": {
                "title": {"text": "efficiency = compute / step"},
                "range": [0, 1.05],
                "tickformat": ".0%",
            },
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "type": "log",
                "showgrid": False,
                "title": {"text": "tokens/s (dotted)"},
                **ticks_125(
                    [v for c in curves.values() for v in c.column("tokens_per_s")], format_count
                ),
            },
            "legend": bottom_legend(),
            "height": 420,
            "margin": margin(l=70, r=70, b=60),
        },
    }

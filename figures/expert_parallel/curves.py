"""Bias balancing over steps, NIC copies per token by routing rule, and the per-GPU memory bar
(plain dict specs)."""

from __future__ import annotations

from core.expert_parallel import BiasRun, EpMemory
from core.units import gib_or_gb
from figures.style import COLOURS, SERIES_COLOURS, bottom_legend, margin


def balance_figure(run: BiasRun) -> dict:
    steps = list(range(len(run.plain)))
    lines = (
        ("router alone (no balancing)", run.plain, SERIES_COLOURS[3]),
        (f"bias update, γ = {run.gamma:g}", run.balanced, SERIES_COLOURS[2]),
    )
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": name,
            "x": steps,
            "y": [round(float(v), 4) for v in y],
            "line": {"color": colour, "width": 3},
        }
        for name, y, colour in lines
    ]
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": "perfect balance",
            "x": [0, steps[-1]],
            "y": [1, 1],
            "line": {"color": COLOURS["guide"], "dash": "dash"},
        }
    )
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "Expert parallel · auxiliary-loss-free balancing (DeepSeek-V3)",
                "subtitle": {
                    "text": "after each step: b_i −= γ if expert i was overloaded, += γ if "
                    "underloaded; the bias only changes which experts are chosen"
                },
            },
            "xaxis": {"title": {"text": "training step (a fresh batch each)"}},
            "yaxis": {"title": {"text": "busiest expert ÷ mean load"}, "rangemode": "tozero"},
            "legend": bottom_legend(y=-0.22),
            "height": 380,
            "margin": margin(l=70, t=90, b=70),
        },
    }


def placement_figure(rows: list[dict], *, nodes: int, experts: int, k: int) -> dict:
    """rows: label, copies per token crossing the NIC (and the distinct nodes reached)."""
    return {
        "data": [
            {
                "type": "bar",
                "x": [r["label"] for r in rows],
                "y": [round(r["copies"], 3) for r in rows],
                "text": [f"{r['copies']:.2f}" for r in rows],
                "textposition": "outside",
                "marker": {"color": [SERIES_COLOURS[i] for i in range(len(rows))]},
                "hovertemplate": "%{x}: %{y:.2f} copies per token<extra></extra>",
            }
        ],
        "layout": {
            "title": {
                "text": f"Expert parallel · {experts} experts on {nodes} nodes, top-{k} · what "
                "crosses the NIC per token",
                "subtitle": {"text": "copies of a token's hidden state sent to other nodes"},
            },
            "yaxis": {"title": {"text": "copies per token"}, "rangemode": "tozero"},
            "showlegend": False,
            "height": 360,
            "margin": margin(l=70, t=90, b=60),
        },
    }


def fit_figure(mem: EpMemory, *, hbm_bytes: float, units: str, label: str) -> dict:
    unit, size = gib_or_gb(units)
    parts = (
        ("Parameters", mem.parameters_bytes, "parameters"),
        ("Gradients", mem.gradients_bytes, "gradients"),
        ("Optimizer states", mem.optimizer_bytes, "optimizer"),
    )
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": [label],
            "x": [round(v / size, 3)],
            "marker": {"color": COLOURS[colour]},
            "hovertemplate": f"{name}: %{{x:.1f}} {unit}<extra></extra>",
        }
        for name, v, colour in parts
    ]
    fits = mem.total_bytes <= hbm_bytes
    return {
        "data": data,
        "layout": {
            "title": {
                "text": f"Expert parallel · model states per GPU: {mem.total_bytes / size:.1f} "
                f"{unit} of {hbm_bytes / size:.0f} — {'fits' if fits else 'does not fit'}",
                "subtitle": {"text": "activations come on top (see the Memory page)"},
            },
            "barmode": "stack",
            "shapes": [
                {
                    "type": "line",
                    "x0": hbm_bytes / size,
                    "x1": hbm_bytes / size,
                    "y0": 0,
                    "y1": 1,
                    "yref": "paper",
                    "line": {"color": COLOURS["capacity"], "width": 3, "dash": "dot"},
                }
            ],
            "xaxis": {"title": {"text": f"{unit} per GPU"}},
            "legend": bottom_legend(y=-0.6, traceorder="normal"),
            "height": 240,
            "margin": margin(l=110, t=80, b=90),
        },
    }

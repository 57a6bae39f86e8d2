"""TP communication per layer beside the layer's compute, per link and per TP degree."""

from __future__ import annotations

from core.tensor_parallel import LinkTime, TpPoint
from figures.style import COLOURS, bottom_legend, margin, ticks_125


def comm_vs_compute_figure(times: tuple[LinkTime, ...], *, tp: int) -> dict:
    """Per layer: TP communication on each link type beside the layer's compute on one TP rank."""
    names = [t.link.name for t in times]
    compute_ms = times[0].compute_s * 1e3 if times else 0.0
    traces = [
        {
            "type": "bar",
            "name": "TP communication per layer",
            "x": names,
            "y": [round(t.comm_s * 1e3, 5) for t in times],
            "marker": {"color": COLOURS["exposed"]},
            "text": [f"{t.comm_to_compute:.2g}× compute" for t in times],
            "textposition": "outside",
            "customdata": [
                f"{t.link.bandwidth_bytes_per_s / 1e9:g} GB/s per direction × {t.efficiency:.0%}, "
                f"{t.algorithms}"
                for t in times
            ],
            "hovertemplate": "%{x} (%{customdata}): %{y:.3g} ms<extra></extra>",
        },
        {
            "type": "bar",
            "name": "layer compute (forward + backward) per rank",
            "x": names,
            "y": [round(t.compute_s * 1e3, 5) for t in times],
            "marker": {"color": COLOURS["compute"]},
        },
    ]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Tensor parallel · TP={tp} · comm vs compute per layer",
                "subtitle": {
                    "text": f"compute {compute_ms:.3g} ms per layer on each rank; collectives as "
                    "NCCL's tuner picks them, links at the achievable efficiency"
                },
            },
            "barmode": "group",
            "yaxis": {"title": {"text": "ms per layer per micro-batch"}},
            "legend": bottom_legend(),
            "height": 400,
            "margin": margin(l=70, t=80, b=60),
        },
    }


def tp_sweep_figure(points: tuple[TpPoint, ...], *, gpus_per_node: int, view: str = "") -> dict:
    """Comm and compute per layer vs TP degree (log y), comm/compute on the right, node boundary
    marked.
    """
    x = [f"TP={p.tp}" for p in points]
    ok = [p.valid for p in points]

    def ms(v, valid):
        return round(v * 1e3, 6) if valid else None

    traces = [
        {
            "type": "bar",
            "name": "TP communication per layer",
            "x": x,
            "y": [ms(p.comm_s, v) for p, v in zip(points, ok)],
            "marker": {"color": COLOURS["exposed"]},
            "customdata": [
                (p.link_label or p.reason)
                + (f" · {p.algorithms}, latency {p.latency_s * 1e3:.3g} ms" if p.valid else "")
                for p in points
            ],
            "hovertemplate": "%{x}: %{y:.3g} ms over %{customdata}<extra></extra>",
        },
        {
            "type": "bar",
            "name": "layer compute per rank",
            "x": x,
            "y": [ms(p.compute_s, v) for p, v in zip(points, ok)],
            "marker": {"color": COLOURS["compute"]},
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "comm / compute",
            "x": x,
            "yaxis": "y2",
            "y": [round(p.comm_to_compute, 6) if v else None for p, v in zip(points, ok)],
            "line": {"color": COLOURS["ink"]},
        },
    ]
    inside = [i for i, p in enumerate(points) if p.tp <= gpus_per_node]
    shapes, notes = [], []
    if inside and inside[-1] < len(points) - 1:
        b = inside[-1] + 0.5
        shapes.append(
            {
                "type": "line",
                "x0": b,
                "x1": b,
                "y0": 0,
                "y1": 1,
                "xref": "x",
                "yref": "paper",
                "line": {"dash": "dash", "color": COLOURS["ink"], "width": 2},
            }
        )
        notes.append(
            {
                "x": b,
                "y": 1.0,
                "xref": "x",
                "yref": "paper",
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "top",
                "bgcolor": COLOURS["label_background"],
                "text": f" node boundary ({gpus_per_node} GPUs): NVLink | NIC",
            }
        )
    notes += [
        {
            "x": xi,
            "y": 0.02,
            "xref": "x",
            "yref": "paper",
            "showarrow": False,
            "text": "invalid",
            "hovertext": p.reason,
        }
        for xi, p in zip(x, points)
        if not p.valid
    ]
    sub = ""
    if inside and inside[-1] < len(points) - 1 and ok[inside[-1]] and ok[inside[-1] + 1]:
        a, c = points[inside[-1]], points[inside[-1] + 1]
        sub = (
            f"TP={a.tp} → TP={c.tp}: comm {a.comm_s * 1e3:.3g} → {c.comm_s * 1e3:.3g} ms "
            f"({c.comm_s / a.comm_s:.2g}×) while compute halves"
        )
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"TP sweep · {gpus_per_node} GPUs per node"
                + (f" · {view}" if view else ""),
                "subtitle": {"text": sub},
            },
            "barmode": "group",
            "xaxis": {"type": "category"},
            "yaxis": {
                "type": "log",
                "title": {"text": "ms per layer per micro-batch"},
                **ticks_125([v for t in traces[:2] for v in t["y"]]),
            },
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "type": "log",
                "showgrid": False,
                "title": {"text": "comm / compute"},
                **ticks_125(traces[2]["y"]),
            },
            "shapes": shapes,
            "annotations": notes,
            "legend": bottom_legend(),
            "height": 420,
            "margin": margin(l=70, r=70, t=80, b=60),
        },
    }

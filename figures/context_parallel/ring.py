"""The ring of context-parallel ranks at one step: each rank keeps its queries and holds one K/V
block, which it passes on to the next rank (drawn on the collectives page's circle)."""

from __future__ import annotations

import math

import numpy as np

from core.context_parallel import RingAttentionResult
from figures.collectives.geometry import polar
from figures.style import COLOURS, RANK_COLOURS, margin


def _hop_arcs(c: int) -> tuple[dict, dict]:
    """Clockwise arcs from each rank to the next (trimmed clear of the nodes) and an arrowhead
    at each arc's end, pointing along it (Plotly marker angles: degrees clockwise from up)."""
    xs, ys, hx, hy, angle = [], [], [], [], []
    for k in range(c):
        a0 = math.pi / 2 - 2 * math.pi * k / c
        a1 = a0 - 2 * math.pi / c
        t = np.linspace(a0 + 0.2 * (a1 - a0), a1 - 0.2 * (a1 - a0), 16)
        x, y = polar(1.0, t)
        xs += np.round(x, 4).tolist() + [None]
        ys += np.round(y, 4).tolist() + [None]
        hx.append(round(float(x[-1]), 4))
        hy.append(round(float(y[-1]), 4))
        angle.append(round(math.degrees(math.atan2(math.sin(t[-1]), -math.cos(t[-1])))))
    return {"x": xs, "y": ys}, {"x": hx, "y": hy, "marker": {"angle": angle}}


def _side(x: float, y: float) -> str:
    """Label beside its node, away from the ring's centre."""
    if abs(x) < 0.35:
        return "top center" if y > 0 else "bottom center"
    return "middle right" if x > 0 else "middle left"


def ring_step_figure(r: RingAttentionResult, step: int) -> dict:
    """Ranks on a circle (rank 0 on top, clockwise), coloured by the K/V block they hold at
    `step`; arcs show the hop to the next rank (none after the last step)."""
    c = r.cp
    angles = [math.pi / 2 - 2 * math.pi * k / c for k in range(c)]
    x, y = polar(1.0, np.array(angles))
    src = [int(r.source[step, k]) for k in range(c)]
    text = [f"r{k} · Q{k} × KV{src[k]}" for k in range(c)]
    data = [
        {
            "type": "scatter",
            "mode": "markers+text",
            "x": np.round(x, 4).tolist(),
            "y": np.round(y, 4).tolist(),
            "text": text,
            "textposition": [_side(xx, yy) for xx, yy in zip(x, y)],
            "marker": {
                "size": 34,
                "color": [RANK_COLOURS[s % len(RANK_COLOURS)] for s in src],
                "line": {"width": 2, "color": COLOURS["ink"]},
            },
            "customdata": [int(r.pairs[step, k]) for k in range(c)],
            "hovertemplate": "%{text}: %{customdata:,} query-key pairs<extra></extra>",
            "showlegend": False,
        }
    ]
    if c > 1 and step < c - 1:  # the block moves on while this step computes
        arcs, heads = _hop_arcs(c)
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                **arcs,
                "line": {"color": COLOURS["guide"], "width": 2},
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                **heads,
                "marker": {
                    **heads["marker"],
                    "symbol": "triangle-up",
                    "size": 10,
                    "color": COLOURS["guide"],
                },
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
    last = "the last step: nothing is passed on" if step == c - 1 else "arrows: the K/V hop"
    axis = {"visible": False, "range": [-2.1, 2.1]}
    return {
        "data": data,
        "layout": {
            "title": {
                "text": f"Context parallel · CP={c} · the ring at step {step}",
                "subtitle": {"text": f"rank r holds the K/V of rank (r − {step}) mod {c}; {last}"},
            },
            "xaxis": axis,
            "yaxis": {**axis, "scaleanchor": "x"},
            "height": 420,
            "margin": margin(l=20, r=20, t=80, b=20),
        },
    }

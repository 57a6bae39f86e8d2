"""A time cursor over a Gantt: ▶ and a slider sweep the step from 0 to its end, covering what has
not happened yet, so the pipe is seen filling (ranks start one by one) and draining (they stop one
by one). Frames change only layout shapes and one annotation: cheap at any P and M.
"""

from __future__ import annotations

import numpy as np

from core.pipeline import PipelineResult
from figures.style import COLOURS

CURSOR_STEPS = 24


def busy_ranks(result: PipelineResult, t_s: float) -> int:
    """Ranks running an op at time t (start ≤ t < end)."""
    ops = result.ops
    on = (ops.start_s <= t_s) & (t_s < ops.end_s)
    return int(np.unique(ops.rank[on]).size)


def _cover(t_s: float, end_s: float) -> list[dict]:
    if t_s >= end_s:
        return []
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": t_s,
            "x1": end_s,
            "y0": 0,
            "y1": 1,
            "fillcolor": COLOURS["label_background"],
            "line": {"width": 0},
            "layer": "above",
        },
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": t_s,
            "x1": t_s,
            "y0": 0,
            "y1": 1,
            "line": {"color": COLOURS["ink"], "width": 2},
        },
    ]


def with_time_cursor(fig: dict, result: PipelineResult, steps: int = CURSOR_STEPS) -> dict:
    """fig with frames t = 0 … makespan, a ▶ button and a time slider (opens at the end)."""
    layout = fig["layout"]
    end = layout["xaxis"]["range"][1]
    base_shapes, base_notes = layout.get("shapes", []), layout.get("annotations", [])
    times = np.linspace(0.0, result.makespan_s, steps + 1)
    p = result.num_stages
    frames, slider_steps = [], []
    for t in times.tolist():
        name = f"{t:.4g}"
        note = {
            "x": 0,
            "y": 1,
            "xref": "paper",
            "yref": "paper",
            "xanchor": "left",
            "yanchor": "bottom",
            "text": f"t = {name} s: {busy_ranks(result, t)} of {p} ranks busy",
            "showarrow": False,
            "font": {"color": COLOURS["ink"]},
        }
        done = t >= result.makespan_s
        frames.append(
            {
                "name": name,
                "layout": {
                    "shapes": base_shapes + _cover(t, end),
                    "annotations": base_notes + ([] if done else [note]),
                },
            }
        )
        slider_steps.append(
            {
                "label": name,
                "method": "animate",
                "args": [[name], {"mode": "immediate", "frame": {"duration": 0, "redraw": False}}],
            }
        )
    play = {
        "label": "▶ fill and drain",
        "method": "animate",
        "args": [
            [f["name"] for f in frames],
            {
                "mode": "immediate",
                "frame": {"duration": 250, "redraw": False},
                "transition": {"duration": 0},
            },
        ],
    }
    menus = [
        {
            "type": "buttons",
            "showactive": False,
            "x": 0,
            "y": 0,
            "xanchor": "left",
            "yanchor": "top",
            "pad": {"t": 56},
            "buttons": [play],
        }
    ]
    slider = {
        "active": len(frames) - 1,
        "x": 0.24,
        "len": 0.76,
        "y": 0,
        "yanchor": "top",
        "pad": {"t": 50},
        "currentvalue": {"prefix": "t = ", "suffix": " s", "font": {"size": 14}},
        "ticklen": 0,
        "font": {"size": 10},
        "steps": slider_steps,
    }
    margin = {**layout.get("margin", {})}
    margin["b"] = max(margin.get("b", 40), 116)
    return {
        **fig,
        "frames": frames,
        "layout": {
            **layout,
            "updatemenus": menus,
            "sliders": [slider],
            "margin": margin,
            "height": layout["height"] + 76,
        },
    }

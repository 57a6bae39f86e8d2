"""Who holds what: each weight's cells coloured by the TP rank that owns them."""

from __future__ import annotations

import numpy as np

from core.tensor_parallel import REPLICATED
from figures.style import COLOURS, RANK_COLOURS, margin


def rank_colour(rank: int) -> str:
    return COLOURS["replicated"] if rank == REPLICATED else RANK_COLOURS[rank % len(RANK_COLOURS)]


def _discrete_scale(tp: int) -> list:
    """Step colour scale over values −1 … tp−1 (z is shifted by +1 so it starts at 0)."""
    colors = [COLOURS["replicated"]] + [rank_colour(r) for r in range(tp)]
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


def ownership_figure(
    ownership: dict[str, np.ndarray],
    *,
    tp: int,
    what: str = "MLP",
    below: dict[str, np.ndarray] | None = None,
) -> dict:
    """One heatmap per tensor: cell colour = the TP rank holding that element (grey = every rank).

    `below` adds a second row of tensors (e.g. attention under the MLP): one chart instead of two.
    """
    rows = [ownership] + ([below] if below else [])
    k, gap = max(len(r) for r in rows), 0.04
    width = (1 - gap * (k - 1)) / k
    heights = [(0.0, 1.0)] if len(rows) == 1 else [(0.62, 1.0), (0.0, 0.3)]
    traces, layout, i = [], {}, 0
    gap_px = (
        1 if max(max(np.shape(z)) for r in rows for z in r.values()) <= 48 else 0
    )  # keep cells visible
    for row, (y0, y1) in zip(rows, heights):
        first = (k - len(row)) / 2  # centre a shorter row
        for j, (name, z) in enumerate(row.items()):
            z, ax, x0 = np.asarray(z), "" if i == 0 else str(i + 1), (first + j) * (width + gap)
            i += 1
            # Small integer arrays go out as base64 typed arrays; a tensor is either replicated
            # whole
            # or split element by element, so one hover text per tensor suffices.
            who = "all GPUs" if (z == REPLICATED).all() else "GPU %{customdata}"
            traces.append(
                {
                    "type": "heatmap",
                    "z": (z + 1).astype(np.int8),
                    "customdata": z.astype(np.int8),
                    "zmin": 0,
                    "zmax": tp + 1,
                    "colorscale": _discrete_scale(tp),
                    "showscale": False,
                    "xgap": gap_px,
                    "ygap": gap_px,
                    "hovertemplate": f"{name}<br>row %{{y}}, col %{{x}}: {who}<extra></extra>",
                    "xaxis": f"x{ax}",
                    "yaxis": f"y{ax}",
                }
            )
            short, _, how = name.partition(" (")
            bare = {
                "showticklabels": False,
                "showgrid": False,
                "zeroline": False,
                "ticks": "",
                "showline": False,
            }
            # Two lines in a fixed size: presenter mode enlarges the rest, these must not collide.
            layout[f"xaxis{ax}"] = {
                "domain": [x0, x0 + width],
                "anchor": f"y{ax}",
                **bare,
                "title": {
                    "text": f"{short} · {z.shape[0]}×{z.shape[1]}" + (f"<br>({how}" if how else ""),
                    "font": {"size": 14},
                    "standoff": 6,
                },
            }
            layout[f"yaxis{ax}"] = {
                "domain": [y0, y1],
                "autorange": "reversed",
                "anchor": f"x{ax}",
                "scaleanchor": f"x{ax}",
                **bare,
            }
    # Legend entries: invisible scatter points, one per rank plus "all GPUs".
    for r in [REPLICATED] + list(range(tp)):
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "markers",
                "marker": {"color": rank_colour(r), "size": 12, "symbol": "square"},
                "name": "all GPUs (replicated)" if r == REPLICATED else f"GPU {r}",
            }
        )
    layout.update(
        {
            "title": {"text": f"Tensor parallel · TP={tp} · who holds what ({what})"},
            "legend": {
                "orientation": "h",
                "x": 1,
                "xanchor": "right",
                "y": 1.02,
                "yanchor": "bottom",
            },
            "height": 380 if len(rows) == 1 else 700,
            "margin": margin(l=20, t=80, b=80),
            "plot_bgcolor": COLOURS["paper"],
        }
    )
    return {"data": traces, "layout": layout}

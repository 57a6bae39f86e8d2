"""One MoE layer's dispatch as a rank × rank matrix, and each expert's load against its capacity
(plain dict specs from core.expert_parallel.MoeLayerResult)."""

from __future__ import annotations

from core.expert_parallel import MoeLayerResult
from figures.style import COLOURS, bottom_legend, margin


def traffic_matrix_figure(r: MoeLayerResult) -> dict:
    """Rows dispatched from each origin rank (tokens' home) to each owner rank (experts' home)."""
    m = r.traffic_rows
    labels = [f"r{i}" for i in range(r.ep)]
    return {
        "data": [
            {
                "type": "heatmap",
                "z": m.tolist(),
                "x": labels,
                "y": labels,
                "colorscale": "Blues",
                "reversescale": True,  # Plotly's Blues runs dark → light: more rows, darker
                "text": m.tolist() if r.ep <= 16 else None,
                "texttemplate": "%{text}" if r.ep <= 16 else None,
                "colorbar": {"title": {"text": "rows"}},
                "hovertemplate": "from %{y} to %{x}: %{z} token rows<extra></extra>",
            }
        ],
        "layout": {
            "title": {
                "text": f"Expert parallel · EP={r.ep} · dispatch, token rows",
                "subtitle": {"text": "from the token's rank (row) to its expert's rank (column)"},
            },
            "xaxis": {"title": {"text": "to (expert owner)"}},
            "yaxis": {"title": {"text": "from (token origin)"}, "autorange": "reversed"},
            "height": 420,
            "margin": margin(l=70, r=95, t=80, b=50),  # room for the colour bar: one draw
        },
    }


def expert_load_figure(r: MoeLayerResult) -> dict:
    """Pairs each expert computes and drops, the capacity, and the mean a balanced router gives."""
    x = list(range(r.experts))
    dropped = (r.routed - r.processed).tolist()
    mean = r.tokens * r.top_k / r.experts
    data = [
        {
            "type": "bar",
            "name": "computed",
            "x": x,
            "y": r.processed.tolist(),
            "marker": {"color": COLOURS["compute"]},
        },
        {
            "type": "bar",
            "name": "dropped (past capacity)",
            "x": x,
            "y": dropped,
            "marker": {"color": COLOURS["dropped"]},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"balanced: T·k/E = {mean:g}",
            "x": [-0.5, r.experts - 0.5],
            "y": [mean, mean],
            "line": {"color": COLOURS["guide"], "dash": "dash"},
        },
    ]
    if r.capacity is not None:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"capacity {r.capacity}",
                "x": [-0.5, r.experts - 0.5],
                "y": [r.capacity] * 2,
                "line": {"color": COLOURS["ink"], "dash": "dot"},
            }
        )
    per = r.experts // r.ep
    shapes = [
        {
            "type": "line",
            "x0": k * per - 0.5,
            "x1": k * per - 0.5,
            "y0": 0,
            "y1": 1,
            "yref": "paper",
            "line": {"color": COLOURS["guide"], "width": 1},
        }
        for k in range(1, r.ep)
    ]
    return {
        "data": data,
        "layout": {
            "title": {
                "text": f"Expert parallel · {r.experts} experts, top-{r.top_k} · load per expert",
                "subtitle": {
                    "text": f"grey lines: EP ranks ({per} experts each); busiest rank "
                    f"{r.slowdown:.2f}× the mean"
                },
            },
            "barmode": "stack",
            "bargap": 0.1,
            "shapes": shapes,
            "xaxis": {"title": {"text": "expert"}},
            "yaxis": {"title": {"text": "(token, expert) pairs"}},
            "legend": bottom_legend(y=-0.22),
            "height": 420,
            "margin": margin(l=70, t=90, b=70),
        },
    }

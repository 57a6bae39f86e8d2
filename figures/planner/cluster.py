"""The cluster drawn: nodes as boxes, GPUs as cells coloured by group, crossing groups outlined."""

from __future__ import annotations

import math

from core.hardware import Cluster
from core.parallel import ParallelDims, Placement
from figures.style import COLOURS, GROUP_COLOURS, ink_on

COLOUR_BY = {"tp": "TP group", "pp": "PP stage", "dp": "DP replica"}
MAX_NODES_DRAWN = 64


def _grid_shape(gpus_per_node: int) -> tuple[int, int]:
    """(columns, rows) of GPU cells inside one node box: 8 GPUs as 4 x 2."""
    cols = (
        gpus_per_node
        if gpus_per_node <= 4
        else (
            math.ceil(gpus_per_node / 2)
            if gpus_per_node <= 16
            else math.ceil(math.sqrt(gpus_per_node))
        )
    )
    return cols, math.ceil(gpus_per_node / cols)


def _group_ids(placement: Placement, dim: str) -> list[int]:
    """Per rank, which group it is coloured by: TP group index, PP stage or DP replica."""
    if dim == "tp":  # one colour per TP group: index of the group among all TP groups
        rows = placement.dims.groups("tp")
        ids = [0] * placement.dims.world_size
        for i, row in enumerate(rows.tolist()):
            for r in row:
                ids[r] = i
        return ids
    return placement.coord(dim).tolist()


def cluster_figure(
    placement: Placement,
    *,
    colour_by: str = "tp",
    max_nodes: int = MAX_NODES_DRAWN,
    width_px: int = 900,
) -> dict:
    """Nodes as boxes, GPUs as cells coloured by group; groups crossing a node outlined in red."""
    if colour_by not in COLOUR_BY:
        raise ValueError(f"colour_by={colour_by!r} is unknown: use one of {', '.join(COLOUR_BY)}")
    c, d = placement.cluster, placement.dims
    gpn, shown = c.gpus_per_node, min(c.num_nodes, max_nodes)
    cols, rows = _grid_shape(gpn)
    per_row = min(shown, 4 if gpn > 16 else 8)
    gap, top = 0.6, 1.0  # space between node boxes, and above each for its label
    n = shown * gpn
    ids, crossing = (
        _group_ids(placement, colour_by)[:n],
        placement.crossing_ranks(colour_by)[:n].tolist(),
    )
    with_cp = getattr(d, "cp", 1) > 1  # the planner's grid (core.planner.grid GridPlacement)
    coords = {k: placement.coord(k)[:n].tolist() for k in ("dp", "pp", "tp", "cp")[: 3 + with_cp]}
    xs, ys, shapes, notes = [], [], [], []
    for node in range(shown):
        x0, y0 = (node % per_row) * (cols + gap), -(node // per_row) * (rows + gap + top)
        shapes.append(
            {
                "type": "rect",
                "x0": x0 - 0.1,
                "x1": x0 + cols + 0.1,
                "y0": y0 + 0.1,
                "y1": y0 - rows - 0.1,
                "line": {"color": COLOURS["ink"], "width": 1},
                "fillcolor": COLOURS["node_fill"],
            }
        )
        notes.append(
            {
                "x": x0 + cols / 2,
                "y": y0 + 0.1,
                "yanchor": "bottom",
                "showarrow": False,
                "text": f"node {node}",
                "font": {"size": 11},
            }
        )
        for g in range(gpn):
            xs.append(x0 + g % cols + 0.5)
            ys.append(y0 - g // cols - 0.5)
    spans = placement.spans
    hover = [
        f"rank {r} · node {r // gpn}, GPU {r % gpn}<br>dp {coords['dp'][r]} · pp "
        f"{coords['pp'][r]} · tp {coords['tp'][r]}"
        f"{' · cp ' + str(coords['cp'][r]) if with_cp else ''}<br>{COLOUR_BY[colour_by]} "
        f"{ids[r]}{' — crosses a node boundary' if crossing[r] else ''}"
        for r in range(n)
    ]
    across = per_row * (cols + gap)
    size = max(4, min(40, 0.8 * (width_px - 80) / across))
    trace = {
        "type": "scatter",
        "mode": "markers+text" if n <= 256 else "markers",
        "x": xs,
        "y": ys,
        "text": [str(i) for i in ids],
        "textfont": {
            "color": [ink_on(GROUP_COLOURS[i % len(GROUP_COLOURS)]) for i in ids],
            "size": max(7, size / 2.2),
        },
        "marker": {
            "symbol": "square",
            "size": size,
            "color": [GROUP_COLOURS[i % len(GROUP_COLOURS)] for i in ids],
            "line": {
                "color": [COLOURS["crossing"] if x else COLOURS["ink"] for x in crossing],
                "width": [3 if x else 0.5 for x in crossing],
            },
        },
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
        "showlegend": False,
    }
    span = spans[colour_by]
    more = f" (nodes 0–{shown - 1} of {c.num_nodes} drawn)" if shown < c.num_nodes else ""
    cp = getattr(d, "cp", 1)  # the planner's grid (core.planner.grid): CP right after TP
    cp_ep = (f" × CP {cp}" if cp > 1 else "") + (f" (EP {d.ep})" if getattr(d, "ep", 1) > 1 else "")
    title = (
        f"{c.num_nodes} nodes × {gpn} {c.gpu.name} · DP {d.dp} × PP {d.pp} × TP {d.tp}{cp_ep}, "
        f"order {d.order} · coloured by {COLOUR_BY[colour_by]}{more}"
    )
    crossing = (  # at a degree of 1 there are no groups to cross anything: say so instead
        f"{span.crossing_groups} of {span.num_groups} {colour_by.upper()} groups cross a node "
        "boundary"
        if span.size > 1
        else f"{colour_by.upper()} = 1: every GPU is its own {colour_by.upper()} group"
    )
    sub = (
        crossing
        + "<br>"
        + " · ".join(
            f"{k.upper()} on {spans[k].link}"
            for k in ("tp", "cp", "pp", "ep", "dp")
            if k in spans and spans[k].size > 1
        )
        + f" · {c.intra_link.name} inside nodes, {c.inter_link.name} between"
    )
    y_units = math.ceil(shown / per_row) * (rows + gap + top)
    height = 100 + y_units * (width_px - 20) / across  # equal x and y scales (scaleanchor)
    # No layout width: the chart fills its column whatever the window (a width would fix it).
    # Whole pixels: Streamlit's own chart re-sized a fractional height with a second full draw,
    # 57-85 ms per planner move (docs/notes/plotly.md §5). width_px only sizes the cells.
    return {
        "data": [trace],
        "layout": {
            "title": {"text": title, "subtitle": {"text": sub}},
            "shapes": shapes,
            "annotations": notes,
            "height": round(max(200, min(1400, height))),
            "xaxis": {"visible": False, "range": [-0.5, across]},
            "yaxis": {"visible": False, "scaleanchor": "x"},
            "plot_bgcolor": COLOURS["paper"],
            "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
            "hovermode": "closest",
        },
    }


def bare_cluster_figure(cluster: Cluster, why: str) -> dict:
    """The cluster's nodes and GPUs in grey, for when no layout can be drawn on it (why = the
    rule).
    """
    fig = cluster_figure(
        Placement(dims=ParallelDims(dp=cluster.num_gpus), cluster=cluster), colour_by="dp"
    )
    cells = fig["data"][0]
    cells.update(mode="markers", text=None, customdata=None, hoverinfo="skip", hovertemplate=None)
    cells["marker"].update(
        color=COLOURS["replicated"], line={"color": COLOURS["guide"], "width": 0.5}
    )
    more = f" (nodes 0–{MAX_NODES_DRAWN - 1} drawn)" if cluster.num_nodes > MAX_NODES_DRAWN else ""
    fig["layout"]["title"] = {
        "text": f"{cluster.num_nodes} nodes × {cluster.gpus_per_node} {cluster.gpu.name} · "
        f"no layout drawn{more}",
        "subtitle": {"text": why},
    }
    return fig

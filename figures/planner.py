"""Planner figures (plain dict specs): the cluster with its groups, memory, step-time breakdown, comparison."""
from __future__ import annotations

import math
from typing import Sequence

from core.parallel import Placement
from core.planner import Evaluation, SearchResult
from core.units import format_count, format_seconds, gib_or_gb
from figures.memory import SEGMENTS, pipeline_stages_figure

PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#B279A2", "#E45756", "#72B7B2", "#EECA3B", "#FF9DA6",
           "#9D755D", "#BAB0AC", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22"]
CROSSING_COLOUR = "#C62828"
COLOUR_BY = {"tp": "TP group", "pp": "PP stage", "dp": "DP replica"}
MAX_NODES_DRAWN = 64
# Breakdown field -> colour; labels come from core.step_time.Breakdown.LABELS.
# (figures.memory uses blue, orange, green and purple for the memory segments.)
PART_COLOURS = {"compute_s": "#2F4B7C", "memory_bound_s": "#7FB3D5", "recompute_s": "#A9DFBF",
                "tp_s": "#D62728", "pp_p2p_s": "#FF9896", "pp_bubble_s": "#C7C7C7",
                "zero_gather_s": "#8C564B", "dp_s": "#E377C2", "optimizer_s": "#17BECF"}


def _grid_shape(gpus_per_node: int) -> tuple[int, int]:
    """(columns, rows) of GPU cells inside one node box: 8 GPUs as 4 x 2."""
    cols = gpus_per_node if gpus_per_node <= 4 else (
        math.ceil(gpus_per_node / 2) if gpus_per_node <= 16 else math.ceil(math.sqrt(gpus_per_node)))
    return cols, math.ceil(gpus_per_node / cols)


def _group_ids(placement: Placement, dim: str) -> list[int]:
    """Per rank, which group it is coloured by: TP group index, PP stage or DP replica."""
    if dim == "tp":  # one colour per TP group: index of the group among all TP groups
        return (placement.coord("dp") * placement.dims.pp + placement.coord("pp")).tolist()
    return placement.coord(dim).tolist()


def cluster_figure(placement: Placement, *, colour_by: str = "tp", max_nodes: int = MAX_NODES_DRAWN,
                   width_px: int = 900) -> dict:
    """Nodes as boxes, GPUs as cells coloured by group; groups crossing a node outlined in red."""
    if colour_by not in COLOUR_BY:
        raise ValueError(f"colour_by={colour_by!r} is unknown: use one of {', '.join(COLOUR_BY)}")
    c, d = placement.cluster, placement.dims
    gpn, shown = c.gpus_per_node, min(c.num_nodes, max_nodes)
    cols, rows = _grid_shape(gpn)
    per_row = min(shown, 4 if gpn > 16 else 8)
    gap, top = 0.6, 1.0  # space between node boxes, and above each for its label
    n = shown * gpn
    ids, crossing = _group_ids(placement, colour_by)[:n], placement.crossing_ranks(colour_by)[:n].tolist()
    coords = {k: placement.coord(k)[:n].tolist() for k in ("dp", "pp", "tp")}
    xs, ys, shapes, notes = [], [], [], []
    for node in range(shown):
        x0, y0 = (node % per_row) * (cols + gap), -(node // per_row) * (rows + gap + top)
        shapes.append({"type": "rect", "x0": x0 - 0.1, "x1": x0 + cols + 0.1, "y0": y0 + 0.1,
                       "y1": y0 - rows - 0.1, "line": {"color": "#555", "width": 1},
                       "fillcolor": "rgba(0,0,0,0.03)"})
        notes.append({"x": x0 + cols / 2, "y": y0 + 0.1, "yanchor": "bottom", "showarrow": False,
                      "text": f"node {node}", "font": {"size": 11}})
        for g in range(gpn):
            xs.append(x0 + g % cols + 0.5)
            ys.append(y0 - g // cols - 0.5)
    spans = placement.spans
    hover = [f"rank {r} · node {r // gpn}, GPU {r % gpn}<br>dp {coords['dp'][r]} · pp {coords['pp'][r]} · "
             f"tp {coords['tp'][r]}<br>{COLOUR_BY[colour_by]} {ids[r]}"
             f"{' — crosses a node boundary' if crossing[r] else ''}" for r in range(n)]
    across = per_row * (cols + gap)
    size = max(4, min(40, 0.8 * (width_px - 80) / across))
    trace = {"type": "scatter", "mode": "markers+text" if n <= 256 else "markers", "x": xs, "y": ys,
             "text": [str(i) for i in ids], "textfont": {"color": "#111", "size": max(6, size / 3)},
             "marker": {"symbol": "square", "size": size,
                        "color": [PALETTE[i % len(PALETTE)] for i in ids],
                        "line": {"color": [CROSSING_COLOUR if x else "#333" for x in crossing],
                                 "width": [3 if x else 0.5 for x in crossing]}},
             "customdata": hover, "hovertemplate": "%{customdata}<extra></extra>", "showlegend": False}
    span = spans[colour_by]
    more = f" (nodes 0–{shown - 1} of {c.num_nodes} drawn)" if shown < c.num_nodes else ""
    title = (f"{c.num_nodes} nodes × {gpn} {c.gpu.name} · DP {d.dp} × PP {d.pp} × TP {d.tp}, order {d.order}"
             f" · coloured by {COLOUR_BY[colour_by]}{more}")
    sub = (f"{span.crossing_groups} of {span.num_groups} {colour_by.upper()} groups cross a node boundary<br>"
           + " · ".join(f"{k.upper()} on {spans[k].link}" for k in ("tp", "pp", "dp") if spans[k].size > 1)
           + f" · {c.intra_link.name} inside nodes, {c.inter_link.name} between")
    y_units = math.ceil(shown / per_row) * (rows + gap + top)
    height = 100 + y_units * (width_px - 20) / across  # equal x and y scales (scaleanchor)
    return {"data": [trace],
            "layout": {"title": {"text": title, "subtitle": {"text": sub}}, "shapes": shapes,
                       "annotations": notes, "height": max(200, min(1400, height)), "width": width_px,
                       "xaxis": {"visible": False, "range": [-0.5, across]},
                       "yaxis": {"visible": False, "scaleanchor": "x"}, "plot_bgcolor": "white",
                       "margin": {"l": 10, "r": 10, "t": 80, "b": 10}, "hovermode": "closest"}}


def _label(ev: Evaluation) -> str:
    return ev.layout.label


def memory_figure(ev: Evaluation, units: str = "binary") -> dict:
    """Per-GPU memory of every pipeline stage with the capacity line (figures.memory's stack)."""
    t = ev.training
    fig = pipeline_stages_figure(ev.memory, ev.capacity_bytes, t.memory_headroom * ev.capacity_bytes,
                                 units, capacity_label=ev.cluster.gpu.name)
    fig["layout"]["title"] = {"text": f"Memory per GPU · {_label(ev)}", "subtitle": {"text": (
        f"{ev.model.name} · {t.recipe}, recompute {t.recompute} · reserve = {t.memory_headroom:.0%} "
        f"headroom · {'fits' if ev.fits else 'does NOT fit'}")}}
    return fig


def _parts_traces(evals: Sequence[Evaluation], x: list[str], xaxis: str = "x", yaxis: str = "y") -> list[dict]:
    traces = []
    for name, label in evals[0].breakdown.LABELS.items():
        vals = [getattr(e.breakdown, name) for e in evals]
        hover = [f"<b>{label}</b>: {format_seconds(v)} ({v / e.step_time_s:.1%} of the step)"
                 for v, e in zip(vals, evals)]
        traces.append({"type": "bar", "name": label, "x": x, "y": vals, "xaxis": xaxis, "yaxis": yaxis,
                       "legendgroup": "time", "legendgrouptitle": {"text": "step time"},
                       "marker": {"color": PART_COLOURS[name]}, "customdata": hover,
                       "hovertemplate": "%{customdata}<extra></extra>"})
    return traces


def _headline(ev: Evaluation) -> str:
    return (f"step {format_seconds(ev.step_time_s)} · {format_count(ev.tokens_per_s)} tokens/s · "
            f"MFU {ev.mfu:.1%} (HFU {ev.hfu:.1%})")


def breakdown_figure(evals: Evaluation | Sequence[Evaluation], labels: Sequence[str] | None = None) -> dict:
    """Step time stacked by component (compute, memory-bound, recompute, TP, PP, ZeRO, DP, optimizer)."""
    evals = [evals] if isinstance(evals, Evaluation) else list(evals)
    x = list(labels) if labels else [_label(e) for e in evals]
    one = evals[0]
    title = (f"Step-time breakdown · {_label(one)}" if len(evals) == 1 else "Step-time breakdown")
    sub = _headline(one) if len(evals) == 1 else " | ".join(f"{a}: {_headline(e)}" for a, e in zip(x, evals))
    notes = [{"x": a, "y": e.step_time_s, "yanchor": "bottom", "showarrow": False,
              "text": format_seconds(e.step_time_s)} for a, e in zip(x, evals)]
    return {"data": _parts_traces(evals, x),
            "layout": {"title": {"text": title, "subtitle": {"text": sub}}, "barmode": "stack",
                       "yaxis": {"title": {"text": "seconds per step"},
                                 "range": [0, 1.15 * max(e.step_time_s for e in evals)]},
                       "annotations": notes, "legend": {"orientation": "h", "y": -0.2},
                       "margin": {"t": 80}, "hovermode": "closest"}}


def compare_figure(a: Evaluation, b: Evaluation, labels: Sequence[str] = ("A", "B"),
                   units: str = "binary") -> dict:
    """Two layouts side by side: step-time breakdown (left) and fullest-stage memory (right)."""
    x = list(labels)
    data = _parts_traces([a, b], x)
    unit_name, unit = gib_or_gb(units)
    for field, name, colour, _ in SEGMENTS:
        data.append({"type": "bar", "name": name, "x": x, "y": [getattr(e.memory, field) / unit for e in (a, b)],
                     "xaxis": "x2", "yaxis": "y2", "marker": {"color": colour, "pattern": {"shape": "."}},
                     "legendgroup": "memory", "legendgrouptitle": {"text": "memory per GPU (fullest stage)"},
                     "hovertemplate": f"<b>{name}</b>: %{{y:.3g}} {unit_name}<extra></extra>"})
    cap = a.capacity_bytes / unit
    ratio = b.step_time_s / a.step_time_s
    title = f"{x[0]} vs {x[1]}: {x[1]} takes {ratio:.2f}× the step time"
    sub = f"{x[0]}: {_label(a)} · {_headline(a)}<br>{x[1]}: {_label(b)} · {_headline(b)}"
    top = max(cap, *(e.memory.total_bytes / unit for e in (a, b)))
    return {"data": data, "layout": {
        "title": {"text": title, "subtitle": {"text": sub}}, "barmode": "stack", "hovermode": "closest",
        "xaxis": {"domain": [0, 0.45]}, "xaxis2": {"domain": [0.55, 1], "anchor": "y2"},
        "yaxis": {"title": {"text": "seconds per step"}},
        "yaxis2": {"title": {"text": f"memory per GPU ({unit_name})"}, "anchor": "x2", "range": [0, 1.15 * top]},
        "shapes": [{"type": "line", "xref": "x2 domain", "yref": "y2", "x0": 0, "x1": 1, "y0": cap, "y1": cap,
                    "line": {"color": CROSSING_COLOUR, "dash": "dash"}}],
        "annotations": [{"xref": "x2 domain", "yref": "y2", "x": 1, "y": cap, "xanchor": "right",
                         "yanchor": "bottom", "showarrow": False,
                         "text": f"{a.cluster.gpu.name} {cap:.3g} {unit_name}"}],
        "legend": {"orientation": "h", "y": -0.15}, "margin": {"t": 100}}}


def table_rows(result: SearchResult, limit: int | None = None) -> list[dict]:
    """Ranked layouts then rejected ones, as rows for a table (SI units; None = any value)."""
    best = result.fastest.step_time_s if result.fastest else None
    rows = [{"rank": i + 1, "dp": e.layout.dp, "tp": e.layout.tp, "pp": e.layout.pp,
             "zero_stage": e.layout.zero_stage, "micro_batch": e.layout.micro_batch,
             "schedule": e.layout.schedule, "num_chunks": e.layout.num_chunks,
             "step_time_s": e.step_time_s, "vs_fastest": e.step_time_s / best - 1,
             "tokens_per_s": e.tokens_per_s, "mfu": e.mfu, "memory_bytes": e.memory.total_bytes,
             "boring": e is result.boring, "status": "ok", "reason": ""}
            for i, e in enumerate(result.ranked[:limit])]
    rows += [{"rank": None, "dp": r.dp, "tp": r.tp, "pp": r.pp, "zero_stage": r.zero_stage,
              "micro_batch": r.micro_batch, "schedule": r.schedule, "num_chunks": r.num_chunks,
              "step_time_s": None, "vs_fastest": None, "tokens_per_s": None, "mfu": None,
              "memory_bytes": None, "boring": False, "status": r.rule, "reason": r.reason}
             for r in result.rejected]
    return rows


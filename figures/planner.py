"""Planner figures (plain dict specs): the cluster with its groups, memory, step-time breakdown,
comparison.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from core.hardware import Cluster
from core.parallel import DEFAULT_ORDER, ORDERS, Layout, ParallelDims, Placement, group_span
from core.pipeline import SCHEDULES
from core.planner import CalibrationRow, Evaluation, SearchResult, calibration_table
from core.units import format_bytes, format_count, format_flops, format_seconds, gib_or_gb
from figures.memory import SEGMENTS, pipeline_stages_figure

PALETTE = [
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#B279A2",
    "#E45756",
    "#72B7B2",
    "#EECA3B",
    "#FF9DA6",
    "#9D755D",
    "#BAB0AC",
    "#1f77b4",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#17becf",
    "#bcbd22",
]
CROSSING_COLOUR = "#C62828"


def _ink(fill: str) -> str:
    """Black or white text, whichever reads on `fill` (higher WCAG contrast: luminance above 0.179
    takes black).
    """
    lin = [
        (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        for c in (int(fill[i : i + 2], 16) / 255 for i in (1, 3, 5))
    ]
    return "#111111" if 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.179 else "#ffffff"


COLOUR_BY = {"tp": "TP group", "pp": "PP stage", "dp": "DP replica"}
MAX_NODES_DRAWN = 64
# Breakdown field -> colour; labels come from core.planner.step_time.Breakdown.LABELS.
# (figures.memory uses blue, orange, green and purple for the memory segments.)
PART_COLOURS = {
    "compute_s": "#2F4B7C",
    "memory_bound_s": "#7FB3D5",
    "recompute_s": "#A9DFBF",
    "tp_s": "#D62728",
    "pp_p2p_s": "#FF9896",
    "pp_bubble_s": "#C7C7C7",
    "zero_gather_s": "#8C564B",
    "dp_s": "#E377C2",
    "optimizer_s": "#17BECF",
}


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
        return (placement.coord("dp") * placement.dims.pp + placement.coord("pp")).tolist()
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
    coords = {k: placement.coord(k)[:n].tolist() for k in ("dp", "pp", "tp")}
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
                "line": {"color": "#555", "width": 1},
                "fillcolor": "rgba(0,0,0,0.03)",
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
        f"rank {r} · node {r // gpn}, GPU {r % gpn}<br>dp {coords['dp'][r]} · pp {coords['pp'][r]} "
        "· "
        f"tp {coords['tp'][r]}<br>{COLOUR_BY[colour_by]} {ids[r]}"
        f"{' — crosses a node boundary' if crossing[r] else ''}"
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
            "color": [_ink(PALETTE[i % len(PALETTE)]) for i in ids],
            "size": max(7, size / 2.2),
        },
        "marker": {
            "symbol": "square",
            "size": size,
            "color": [PALETTE[i % len(PALETTE)] for i in ids],
            "line": {
                "color": [CROSSING_COLOUR if x else "#333" for x in crossing],
                "width": [3 if x else 0.5 for x in crossing],
            },
        },
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
        "showlegend": False,
    }
    span = spans[colour_by]
    more = f" (nodes 0–{shown - 1} of {c.num_nodes} drawn)" if shown < c.num_nodes else ""
    title = (
        f"{c.num_nodes} nodes × {gpn} {c.gpu.name} · DP {d.dp} × PP {d.pp} × TP {d.tp}, order "
        f"{d.order}"
        f" · coloured by {COLOUR_BY[colour_by]}{more}"
    )
    sub = (
        f"{span.crossing_groups} of {span.num_groups} {colour_by.upper()} groups cross a node "
        "boundary<br>"
        + " · ".join(
            f"{k.upper()} on {spans[k].link}" for k in ("tp", "pp", "dp") if spans[k].size > 1
        )
        + f" · {c.intra_link.name} inside nodes, {c.inter_link.name} between"
    )
    y_units = math.ceil(shown / per_row) * (rows + gap + top)
    height = 100 + y_units * (width_px - 20) / across  # equal x and y scales (scaleanchor)
    return {
        "data": [trace],
        "layout": {
            "title": {"text": title, "subtitle": {"text": sub}},
            "shapes": shapes,
            "annotations": notes,
            "height": max(200, min(1400, height)),
            "width": width_px,
            "xaxis": {"visible": False, "range": [-0.5, across]},
            "yaxis": {"visible": False, "scaleanchor": "x"},
            "plot_bgcolor": "white",
            "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
            "hovermode": "closest",
        },
    }


def _label(ev: Evaluation) -> str:
    return ev.layout.label


def memory_figure(ev: Evaluation, units: str = "binary") -> dict:
    """Per-GPU memory of every pipeline stage with the capacity line (figures.memory's stack)."""
    t = ev.training
    fig = pipeline_stages_figure(
        ev.memory,
        ev.capacity_bytes,
        t.memory_headroom * ev.capacity_bytes,
        units,
        capacity_label=ev.cluster.gpu.name,
    )
    fig["layout"]["title"] = {
        "text": "Memory per GPU, by pipeline stage",
        "subtitle": {
            "text": (
                f"{_label(ev)}<br>{ev.model.name} · {t.recipe}, recompute {t.recompute} · reserve "
                "= "
                f"{t.memory_headroom:.0%} headroom · {'fits' if ev.fits else 'does NOT fit'}"
            )
        },
    }
    fig["layout"]["margin"] = {**fig["layout"].get("margin", {}), "t": 90}
    return fig


def _parts_traces(
    evals: Sequence[Evaluation], x: list[str], xaxis: str = "x", yaxis: str = "y"
) -> list[dict]:
    traces = []
    for name, label in evals[0].breakdown.LABELS.items():
        vals = [getattr(e.breakdown, name) for e in evals]
        hover = [
            f"<b>{label}</b>: {format_seconds(v)} ({v / e.step_time_s:.1%} of the step)"
            for v, e in zip(vals, evals)
        ]
        traces.append(
            {
                "type": "bar",
                "name": label,
                "x": x,
                "y": vals,
                "xaxis": xaxis,
                "yaxis": yaxis,
                "legendgroup": "time",
                "legendgrouptitle": {"text": "step time"},
                "marker": {"color": PART_COLOURS[name]},
                "customdata": hover,
                "showlegend": any(v > 0 for v in vals),  # a part that is zero here needs no key
                "hovertemplate": "%{customdata}<extra></extra>",
            }
        )
    return traces


def _headline(ev: Evaluation) -> str:
    return (
        f"step {format_seconds(ev.step_time_s)} · {format_count(ev.tokens_per_s)} tokens/s · "
        f"MFU {ev.mfu:.1%} (HFU {ev.hfu:.1%})"
    )


def breakdown_figure(
    evals: Evaluation | Sequence[Evaluation], labels: Sequence[str] | None = None
) -> dict:
    """Step time stacked by component (compute, memory-bound, recompute, TP, PP, ZeRO, DP,
    optimizer).
    """
    evals = [evals] if isinstance(evals, Evaluation) else list(evals)
    x = list(labels) if labels else [_label(e) for e in evals]
    one = evals[0]
    title = "Step-time breakdown"
    sub = (
        f"{_label(one)}<br>{_headline(one)}"
        if len(evals) == 1
        else "<br>".join(f"{a}: {_headline(e)}" for a, e in zip(x, evals))
    )
    notes = [
        {
            "x": a,
            "y": e.step_time_s,
            "yanchor": "bottom",
            "showarrow": False,
            "text": format_seconds(e.step_time_s),
        }
        for a, e in zip(x, evals)
    ]
    return {
        "data": _parts_traces(evals, x),
        "layout": {
            "title": {"text": title, "subtitle": {"text": sub}},
            "barmode": "stack",
            "yaxis": {
                "title": {"text": "seconds per step"},
                "range": [0, 1.15 * max(e.step_time_s for e in evals)],
            },
            "annotations": notes,
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"t": 90},
            "hovermode": "closest",
        },
    }


def compare_figure(
    a: Evaluation, b: Evaluation, labels: Sequence[str] = ("A", "B"), units: str = "binary"
) -> dict:
    """Two layouts side by side: step-time breakdown (left) and fullest-stage memory (right)."""
    x = list(labels)
    data = _parts_traces([a, b], x)
    unit_name, unit = gib_or_gb(units)
    for field, name, colour, _ in SEGMENTS:
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [getattr(e.memory, field) / unit for e in (a, b)],
                "xaxis": "x2",
                "yaxis": "y2",
                "marker": {"color": colour, "pattern": {"shape": "."}},
                "legendgroup": "memory",
                "legendgrouptitle": {"text": "memory per GPU (fullest stage)"},
                "hovertemplate": f"<b>{name}</b>: %{{y:.3g}} {unit_name}<extra></extra>",
            }
        )
    cap = a.capacity_bytes / unit
    ratio = b.step_time_s / a.step_time_s
    title = f"{x[0]} vs {x[1]}: {x[1]} takes {ratio:.2f}× the step time"
    sub = f"{x[0]}: {_label(a)} · {_headline(a)}<br>{x[1]}: {_label(b)} · {_headline(b)}"
    top = max(cap, *(e.memory.total_bytes / unit for e in (a, b)))
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "subtitle": {"text": sub}},
            "barmode": "stack",
            "hovermode": "closest",
            "xaxis": {"domain": [0, 0.45]},
            "xaxis2": {"domain": [0.55, 1], "anchor": "y2"},
            "yaxis": {"title": {"text": "seconds per step"}},
            "yaxis2": {
                "title": {"text": f"memory per GPU ({unit_name})"},
                "anchor": "x2",
                "range": [0, 1.15 * top],
            },
            "shapes": [
                {
                    "type": "line",
                    "xref": "x2 domain",
                    "yref": "y2",
                    "x0": 0,
                    "x1": 1,
                    "y0": cap,
                    "y1": cap,
                    "line": {"color": CROSSING_COLOUR, "dash": "dash"},
                }
            ],
            "annotations": [
                {
                    "xref": "x2 domain",
                    "yref": "y2",
                    "x": 1,
                    "y": cap,
                    "xanchor": "right",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "text": f"{a.cluster.gpu.name} {cap:.3g} {unit_name}",
                }
            ],
            "legend": {"orientation": "h", "y": -0.15},
            "margin": {"t": 100},
        },
    }


def table_rows(result: SearchResult, limit: int | None = None) -> list[dict]:
    """Ranked layouts then rejected ones, as rows for a table (SI units; None = any value)."""
    best = result.fastest.step_time_s if result.fastest else None
    rows = [
        {
            "rank": i + 1,
            "dp": e.layout.dp,
            "tp": e.layout.tp,
            "pp": e.layout.pp,
            "zero_stage": e.layout.zero_stage,
            "micro_batch": e.layout.micro_batch,
            "schedule": e.layout.schedule,
            "num_chunks": e.layout.num_chunks,
            "step_time_s": e.step_time_s,
            "vs_fastest": e.step_time_s / best - 1,
            "tokens_per_s": e.tokens_per_s,
            "mfu": e.mfu,
            "memory_bytes": e.memory.total_bytes,
            "boring": e is result.boring,
            "status": "ok",
            "reason": "",
        }
        for i, e in enumerate(result.ranked[:limit])
    ]
    rows += [
        {
            "rank": None,
            "dp": r.dp,
            "tp": r.tp,
            "pp": r.pp,
            "zero_stage": r.zero_stage,
            "micro_batch": r.micro_batch,
            "schedule": r.schedule,
            "num_chunks": r.num_chunks,
            "step_time_s": None,
            "vs_fastest": None,
            "tokens_per_s": None,
            "mfu": None,
            "memory_bytes": None,
            "boring": False,
            "status": r.rule,
            "reason": r.reason,
        }
        for r in result.rejected
    ]
    return rows


# --- Text and rows for the planner page (strings and dicts; no Streamlit here) ---
def tp_flipped(ev: Evaluation) -> Layout | None:
    """The same layout with TP moved across nodes (or back inside); None when no order changes
    it.
    """
    inside = not ev.spans["tp"].crosses_node
    for order in ORDERS if inside else (DEFAULT_ORDER,):
        lay = replace(ev.layout, order=order)
        if group_span(lay.dims, "tp", ev.cluster).crosses_node == inside:
            return lay
    return None


def _row(label: str, formula: str, seconds: float, ev: Evaluation) -> str:
    return f"| {label} | {formula} | {format_seconds(seconds)} | {seconds / ev.step_time_s:.1%} |"


def how_computed_markdown(ev: Evaluation, units: str = "binary") -> str:
    """FLOP conventions, MFU vs HFU and every breakdown term, with this layout's numbers beside
    them.
    """
    m, c, t, lay, st, bd = ev.model, ev.cluster, ev.training, ev.layout, ev.stage, ev.breakdown
    s, B, n, mb, M = t.seq_len, t.global_batch, c.num_gpus, lay.micro_batch, ev.num_microbatches
    peak, L = c.gpu.bf16_flops_per_s, m.num_layers
    attn = 12 * L * m.q_width * s
    spans = ev.spans
    lines = [
        "**FLOPs (PaLM App. B).** Model FLOPs per token = 6N + 12·L·(a·d_head)·s, N "
        "= "
        f"{m.matmul_params:,} matmul weights: 6N = {format_flops(6 * m.matmul_params)}, attention "
        f"12·{L}·{m.q_width}·{s:,} = {format_flops(attn)}; × B·s = {B:,} × {s:,} tokens → "
        f"**F_model = {format_flops(ev.model_flops)}** per step.",
        f"Hardware FLOPs add the recompute ({t.recompute}): **F_hw = "
        f"{format_flops(ev.hardware_flops)}** "
        f"(×{ev.hardware_flops / ev.model_flops:.3f}; full recompute of a GPT shape is Narayanan "
        "et al. "
        "2021 Eq. 3, the 96 B s l h² form, versus 72 without).",
        "",
        f"**MFU** = F_model / (GPUs × dense peak × step) = {format_flops(ev.model_flops)} / ({n:,} "
        "× "
        f"{format_flops(peak)}/s × {format_seconds(ev.step_time_s)}) = **{ev.mfu:.1%}**; **HFU** "
        "uses F_hw: "
        f"**{ev.hfu:.1%}**. MFU does not reward recomputation; HFU does.",
        "",
        f"**Step time** = simulated pipeline makespan of {M} micro-batches (B / (DP × mb) = {B:,} "
        f"/ ({lay.dp} × "
        f"{mb})) on the slowest stage + exposed DP sync + optimizer. Per micro-batch t_F = "
        f"{format_seconds(st.forward_s)}, t_B = {format_seconds(st.backward_s)}.",
        "",
        "| part | how | value | share |",
        "|---|---|---|---|",
        _row(
            "compute",
            f"{M} × 3 × GEMM forward FLOPs / ({format_flops(peak)}/s × matmul eff. "
            f"{t.efficiency.matmul})",
            bd.compute_s,
            ev,
        ),
        _row(
            "memory-bound ops",
            f"{M} × norm/dropout/softmax/GeLU bytes / (HBM × {t.efficiency.hbm})",
            bd.memory_bound_s,
            ev,
        ),
        _row(
            "recompute",
            f"{M} × the forward work {t.recompute} recompute repeats",
            bd.recompute_s,
            ev,
        ),
        _row(
            "exposed TP",
            f"{M} × {L // lay.pp} layers × all-reduces of b·s·h·2 B = "
            f"{format_bytes(mb * s * m.hidden_size * 2, units)} over TP={lay.tp} on "
            f"{spans['tp'].link} "
            f"(ring: 2(t−1)/t × bytes / bw)",
            bd.tp_s,
            ev,
        ),
        _row(
            "PP p2p",
            f"{M} × 2 × v={lay.num_chunks} sends of b·s·h·2 B / TP on {spans['pp'].link}",
            bd.pp_p2p_s,
            ev,
        ),
        _row(
            "PP bubble",
            f"simulated makespan − {M}(t_F + t_B); closed form (p−1)(t_F + t_B)/v = "
            f"{format_seconds((lay.pp - 1) * (st.forward_s + st.backward_s) / lay.num_chunks)}",
            bd.pp_bubble_s,
            ev,
        ),
        _row(
            "ZeRO-3 gathers",
            "per-layer parameter all-gathers not hidden behind that layer's compute",
            bd.zero_gather_s,
            ev,
        ),
        _row(
            "exposed DP",
            f"max(0, sync − t_B of the last micro-batch); sync = {format_seconds(ev.dp_sync_s)} "
            f"over DP={lay.dp} on {spans['dp'].link}",
            bd.dp_s,
            ev,
        ),
        _row(
            "optimizer",
            "params on the GPU × (2·optimizer + grad + param bytes) / HBM",
            bd.optimizer_s,
            ev,
        ),
        f"| **total** | | **{format_seconds(ev.step_time_s)}** | 100% |",
    ]
    return "\n".join(lines)


def calibration_rows(rows: Sequence[CalibrationRow] | None = None) -> list[dict]:
    """Predicted vs published TFLOP/s per GPU (Narayanan et al. 2021 Table 1) as table rows."""
    rows = calibration_table() if rows is None else rows
    return [
        {
            "params (B)": r.run.params_billion,
            "GPUs": r.run.gpus,
            "TP": r.run.tp,
            "PP": r.run.pp,
            "DP": r.run.gpus // (r.run.tp * r.run.pp),
            "batch": r.run.global_batch,
            "schedule": SCHEDULES[r.schedule].label
            + (f" v={r.num_chunks}" if r.num_chunks > 1 else ""),
            "published TFLOP/s": r.run.tflops_per_gpu,
            "predicted": round(r.predicted_tflops_per_gpu, 1),
            "error": r.error,
        }
        for r in rows
    ]


def exercise_markdown(good: Evaluation, bad: Evaluation, link: str) -> str:
    """The seeds' 8 x 8 exercise: TP inside NVLink vs across nodes, with both computed step
    times.
    """
    t = good.training
    return (
        f"{good.model.name}, batch {t.global_batch}, {t.recompute} recompute, "
        f"{good.cluster.gpu.name}. "
        f"[**TP = {good.layout.tp} inside each node's {good.spans['tp'].link}, PP = "
        f"{good.layout.pp} "
        f"across**]({link}): step {format_seconds(good.step_time_s)}, exposed TP "
        f"{format_seconds(good.breakdown.tp_s)}. [**Same layout, TP across nodes** (order "
        f"{bad.layout.order})]({link}&order={bad.layout.order}): step "
        f"{format_seconds(bad.step_time_s)}, "
        f"exposed TP {format_seconds(bad.breakdown.tp_s)} — "
        f"{bad.step_time_s / good.step_time_s:.2f}× the "
        f"step, because every layer's all-reduces now cross {bad.spans['tp'].link}. Each link "
        "opens both "
        "breakdowns side by side."
    )


def pick_layout(result: SearchResult, which: str) -> Layout | None:
    """The layout a page pick names: "fastest", "#k" (k-th fastest, clamped) or "boring"; None if
    none
    fits.
    """
    if which == "boring" or not result.ranked:
        return result.boring and result.boring.layout
    k = 1 if which == "fastest" else int(which.lstrip("#"))
    return result.ranked[min(k, len(result.ranked)) - 1].layout


# Table column -> (header, printf or Streamlit number format (None: shown as is), column width), in
# order.
TABLE_COLUMNS = {
    "rank": ("#", None, "small"),
    "dp": ("DP", None, "small"),
    "tp": ("TP", None, "small"),
    "pp": ("PP", None, "small"),
    "zero_stage": ("ZeRO", None, "small"),
    "micro_batch": ("mb", None, "small"),
    "schedule": ("schedule", None, "medium"),
    "num_chunks": ("v", None, "small"),
    "step_time_s": ("step (s)", "%.3g", "small"),
    "vs_fastest": ("vs fastest", "percent", "small"),
    "mfu": ("MFU", "percent", "small"),
    "tokens_per_s": ("tokens/s", "compact", "small"),
    "memory": ("memory", "%.1f", "small"),
    "boring": ("boring", None, "small"),
    "status": ("status", None, "medium"),
    "reason": ("reason", None, "large"),
}


def table_columns(rule: str) -> list[str]:
    """Columns worth showing for a filter: timings for ranked layouts, the rule and reason for
    rejected
    ones.
    """
    timing, why = (
        {"rank", "step_time_s", "vs_fastest", "mfu", "tokens_per_s", "memory", "boring"},
        {"status", "reason"},
    )
    hide = set() if rule == "all" else why if rule == "ranked" else timing
    return [k for k in TABLE_COLUMNS if k not in hide]


def filter_rows(rows: list[dict], rule: str, limit: int, units: str = "binary") -> list[dict]:
    """Table rows whose status is the rule ("all", "ranked" = ok, or a rejection rule), memory in
    GiB/GB.
    """
    unit = gib_or_gb(units)[1]
    keep = [
        r for r in rows if rule == "all" or r["status"] == ("ok" if rule == "ranked" else rule)
    ][:limit]
    return [r | {"memory": r["memory_bytes"] and r["memory_bytes"] / unit} for r in keep]


def headline_metrics(
    ev: Evaluation, units: str = "binary"
) -> list[tuple[str, str, str | None, str | None]]:
    """(label, value, delta, help) of the drawn layout: step, tokens/s, MFU, GPUs, fullest-GPU
    memory.
    """
    b, lay = (lambda x: format_bytes(x, units)), ev.layout
    return [
        (
            "Step time",
            format_seconds(ev.step_time_s),
            None,
            f"{ev.num_microbatches} micro-batches per pipeline",
        ),
        ("Tokens / s", format_count(ev.tokens_per_s), None, None),
        (
            "MFU",
            f"{ev.mfu:.1%}",
            None,
            f"HFU (recompute counted) {ev.hfu:.1%}; {ev.tflops_per_gpu:.0f} model TFLOP/s per GPU",
        ),
        ("GPUs", f"{ev.cluster.num_gpus:,}", f"DP {lay.dp} × TP {lay.tp} × PP {lay.pp}", None),
        (
            "Memory per GPU (fullest)",
            b(ev.memory.total_bytes),
            f"{'fits' if ev.fits else 'OVER'} {b(ev.capacity_bytes)}",
            f"{ev.training.memory_headroom:.0%} of HBM "
            "kept free for CUDA context, NCCL buffers and fragmentation",
        ),
    ]


def bare_cluster_figure(cluster: Cluster, why: str) -> dict:
    """The cluster's nodes and GPUs in grey, for when no layout can be drawn on it (why = the
    rule).
    """
    fig = cluster_figure(
        Placement(dims=ParallelDims(dp=cluster.num_gpus), cluster=cluster), colour_by="dp"
    )
    cells = fig["data"][0]
    cells.update(mode="markers", text=None, customdata=None, hoverinfo="skip", hovertemplate=None)
    cells["marker"].update(color="#D9D9D9", line={"color": "#888", "width": 0.5})
    more = f" (nodes 0–{MAX_NODES_DRAWN - 1} drawn)" if cluster.num_nodes > MAX_NODES_DRAWN else ""
    fig["layout"]["title"] = {
        "text": f"{cluster.num_nodes} nodes × {cluster.gpus_per_node} {cluster.gpu.name} · "
        f"no layout drawn{more}",
        "subtitle": {"text": why},
    }
    return fig


def no_layout_message(result: SearchResult, num_gpus: int, model_name: str) -> str:
    """Why the search found nothing to run: how many layouts each rule rejected, and the usual
    fixes.
    """
    counts = Counter(r.rule for r in result.rejected)
    rules = ", ".join(f"{rule} ({n:,})" for rule, n in counts.most_common())
    return (
        f"No layout of {num_gpus:,} GPUs runs {model_name}: every one breaks a rule — {rules}; the "
        "table "
        "below gives each reason. Memory: add nodes, recompute, shard with ZeRO or shrink the "
        "micro-batch. "
        "Splits: choose a GPU count whose DP × TP × PP factors divide the batch, the heads and the "
        "layers."
    )


def takeaway_text(result: SearchResult) -> str:
    """The placement rule of thumb, and how far its "boring" layout lands from the search's
    fastest.
    """
    rule, best, boring = (
        "Minimum TP/PP that fits, then DP; TP in the node, PP across, DP outermost. ",
        result.fastest,
        result.boring,
    )
    if best is None:
        return rule + "Here nothing fits: first find more memory per GPU, or more GPUs."
    if boring is best:
        return rule + f"Here that rule gives **{boring.layout.label}**, which is also the fastest."
    return rule + (
        f"Here that rule gives **{boring.layout.label}**, {result.boring_slowdown:.0%} slower than "
        "the "
        f"fastest, **{best.layout.label}**: the search earns its keep."
    )


def _on_axes(item: dict, x: str, y: str) -> dict:
    """A trace, annotation or shape moved onto axes x/y ("paper" references become that subplot's
    domain).
    """
    item = dict(item)
    if "type" in item and item["type"] not in ("line", "rect"):  # a trace
        return item | {"xaxis": x, "yaxis": y}
    for ref, axis in (("xref", x), ("yref", y)):
        item[ref] = {"paper": f"{axis} domain", f"{ref[0]} domain": f"{axis} domain"}.get(
            item.get(ref), axis
        )
    return item


def layout_figure(ev: Evaluation, units: str = "binary") -> dict:
    """One figure, two panels: the step-time breakdown (left) and per-GPU memory of each stage
    (right).
    """
    bd, mem = breakdown_figure(ev), memory_figure(ev, units)
    data = bd["data"] + [
        _on_axes(t, "x2", "y2")
        | {"legendgroup": "memory", "legendgrouptitle": {"text": "memory per GPU"}}
        for t in mem["data"]
    ]
    notes = bd["layout"]["annotations"] + [
        _on_axes(a, "x2", "y2") for a in mem["layout"]["annotations"]
    ]
    title = f"Where the step time and the memory go · {'fits' if ev.fits else 'does NOT fit'}"
    layout = {
        "title": {"text": title, "subtitle": {"text": f"{_label(ev)}<br>{_headline(ev)}"}},
        "barmode": "stack",
        "hovermode": "closest",
        "annotations": notes,
        "shapes": [_on_axes(s, "x2", "y2") for s in mem["layout"].get("shapes", [])],
        "xaxis": {"domain": [0, 0.22], "showticklabels": False},
        "yaxis": bd["layout"]["yaxis"],
        "xaxis2": {"domain": [0.34, 0.9], "anchor": "y2"},
        "yaxis2": mem["layout"]["yaxis"] | {"anchor": "x2"},
        "legend": {"orientation": "h", "y": -0.12},
        "margin": {"t": 90, "r": 10},
    }
    return {"data": data, "layout": layout}

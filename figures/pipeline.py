"""Plotly figure builders (plain dict specs) for simulated pipeline schedules."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.pipeline import BubbleSweep, PipelineResult

# Reference pipeline.md section 8: F blue, B orange, I teal, W green, overlapped F&B purple;
# a later chunk is a lighter shade of the same hue.
KIND_COLORS = {"F": "#1f77b4", "B": "#ff7f0e", "I": "#17becf", "W": "#2ca02c", "F&B": "#9467bd"}
KIND_NAMES = {"F": "forward", "B": "backward", "I": "input grad", "W": "weight grad",
              "F&B": "overlapped F&B"}
IDLE_COLOR = "#ececec"
MAX_BARS = 2000  # above this, bars get slow in the browser: draw a heatmap raster instead
MAX_LABELS = 300  # micro-batch labels only when boxes are few (and wide)
RASTER_COLUMNS = 1200


def shade(color: str, chunk: int, num_chunks: int) -> str:
    """Mix a hex colour toward white: chunk 0 full colour, the last chunk ~55% lighter."""
    frac = 0.55 * chunk / max(num_chunks - 1, 1)
    rgb = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * frac):02x}" for c in rgb)


def gantt_title(result: PipelineResult) -> str:
    """Title carrying the key parameters, e.g. '1F1B · P=4 · M=8' (browser tests wait on it)."""
    v = f" · v={result.num_chunks}" if result.num_chunks > 1 else ""
    return f"{result.label} · P={result.num_stages} · M={result.num_microbatches}{v}"


def _subtitle(result: PipelineResult) -> str:
    peak, v = max(result.peak_activations), result.num_chunks
    held = f"{peak} chunk activations ({peak / v:g} stage-equivalents)" if v > 1 else \
        f"{peak} activations"
    return (f"makespan {result.makespan_s:.4g} s · bubble {result.bubble_fraction:.1%} "
            f"(Σ idle / P·T) · peak {held}")


def _layout(result: PipelineResult, title: str | None) -> dict:
    p = result.num_stages
    return {
        "title": {"text": title or gantt_title(result), "subtitle": {"text": _subtitle(result)}},
        "xaxis": {"title": {"text": "time (s)"}, "range": [0, result.makespan_s],
                  "zeroline": False},
        "yaxis": {"title": {"text": ""}, "autorange": "reversed", "tickmode": "array",
                  "tickvals": list(range(p)), "ticktext": [f"rank {r}" for r in range(p)]},
        "plot_bgcolor": IDLE_COLOR,  # idle time shows as the grey background between boxes
        "margin": {"l": 60, "r": 20, "t": 70, "b": 40},
        "height": max(260, 60 + 28 * p) if p <= 16 else 60 + 12 * p + 200,
    }


def gantt_figure(result: PipelineResult, *, title: str | None = None,
                 max_bars: int = MAX_BARS) -> dict:
    """Ranks on y, time on x: bars per op (base = start), or a raster heatmap when too many."""
    if len(result.ops) > max_bars:
        return gantt_raster_figure(result, title=title)
    ops = result.ops
    kinds = np.array(["F", "B", "I", "W"])[ops.kind]
    label = len(ops) <= MAX_LABELS
    traces = []
    for kind in ("F", "B", "I", "W"):
        # Chunk 0 first, so the legend swatch shows the full colour.
        sel = np.flatnonzero(kinds == kind)
        if not len(sel):
            continue
        sel = sel[np.argsort(ops.chunk[sel], kind="stable")]
        pair = ops.overlapped[sel]
        # An overlapped pair shares one time slot: F on the upper half of the row, B the lower.
        width = np.where(pair, 0.4, 0.8)
        offset = np.where(pair, np.where(kind == "F", -0.4, 0.0), -0.4)
        start, end = ops.start_s[sel], ops.end_s[sel]
        chunks = ops.chunk[sel]
        traces.append({
            "type": "bar", "orientation": "h", "name": f"{kind} ({KIND_NAMES[kind]})",
            "y": ops.rank[sel].tolist(), "base": np.round(start, 6).tolist(),
            "x": np.round(end - start, 6).tolist(),
            "width": width.tolist(), "offset": offset.tolist(),
            "marker": {"color": [shade(KIND_COLORS[kind], c, result.num_chunks)
                                 for c in chunks.tolist()],
                       "line": {"width": 0.5 if label else 0, "color": "white"}},
            "text": ops.microbatch[sel].tolist() if label else None,
            "textposition": "inside", "insidetextanchor": "middle", "textangle": 0,
            "textfont": {"color": "white", "size": 10},
            "customdata": np.column_stack([ops.stage[sel], chunks, ops.microbatch[sel],
                                           np.round(start, 6), np.round(end, 6),
                                           ops.rank[sel]]).tolist(),
            "hovertemplate": (f"stage %{{customdata[0]}} (rank %{{customdata[5]}}, chunk "
                              f"%{{customdata[1]}}), {kind}, mb %{{customdata[2]}}<br>"
                              "t = [%{customdata[3]}, %{customdata[4]}) s<extra></extra>"),
        })
    layout = _layout(result, title)
    layout.update({"barmode": "overlay", "bargap": 0.2,
                   "uniformtext": {"minsize": 8, "mode": "hide"}})
    return {"data": traces, "layout": layout}


def raster(result: PipelineResult, columns: int = RASTER_COLUMNS) -> tuple[np.ndarray, list]:
    """Sample each rank's timeline at column centres: code 0 idle, else 1 + kind·v + chunk."""
    ops, p, v = result.ops, result.num_stages, result.num_chunks
    dt = result.makespan_s / columns
    centres = (np.arange(columns) + 0.5) * dt
    # Ops are sorted by (rank, start): shift each rank by 2T so one searchsorted covers all ranks.
    shift = 2.0 * result.makespan_s
    keys = ops.rank * shift + ops.start_s
    probe = (np.arange(p)[:, None] * shift + centres[None, :]).ravel()
    idx = np.searchsorted(keys, probe, side="right") - 1
    rows = np.repeat(np.arange(p), columns)
    ok = (idx >= 0) & (ops.rank[idx] == rows) & (ops.end_s[idx] > np.tile(centres, p))
    kind = np.where(ops.overlapped[idx], 4, ops.kind[idx])  # 4 = overlapped F&B slot
    code = np.where(ok, 1 + kind * v + ops.chunk[idx], 0).reshape(p, columns)
    colors = [IDLE_COLOR] + [shade(KIND_COLORS[k], c, v) for k in KIND_COLORS for c in range(v)]
    return code.astype(np.int8), colors


def gantt_raster_figure(result: PipelineResult, *, title: str | None = None,
                        columns: int = RASTER_COLUMNS) -> dict:
    """Heatmap raster of the timeline (fast for tens of thousands of ops)."""
    code, colors = raster(result, columns)
    n = len(colors)
    # Stepwise colour scale: value k maps to colors[k] for k = 0..n-1.
    scale = [[pos, c] for k, c in enumerate(colors) for pos in (k / n, (k + 1) / n)]
    dt = result.makespan_s / columns
    heat = {"type": "heatmap", "z": code, "x0": dt / 2, "dx": dt, "y0": 0, "dy": 1,
            "zmin": -0.5, "zmax": n - 0.5, "colorscale": scale, "showscale": False,
            "hovertemplate": "rank %{y}, t ≈ %{x:.4g} s<extra></extra>"}
    ops = result.ops
    present = {"FBIW"[k] for k in np.unique(ops.kind[~ops.overlapped]).tolist()}
    present |= {"F&B"} if ops.overlapped.any() else set()
    legend = [{"type": "scatter", "x": [None], "y": [None], "mode": "markers",
               "marker": {"color": KIND_COLORS[k], "symbol": "square", "size": 10},
               "name": f"{k} ({KIND_NAMES[k]})"} for k in KIND_COLORS if k in present]
    layout = _layout(result, title)
    layout["title"]["subtitle"]["text"] += f" · raster of {len(result.ops):,} ops"
    return {"data": [heat, *legend], "layout": layout}


def bubble_vs_m_figure(sweeps: Sequence[BubbleSweep], labels: dict[str, str] | None = None,
                       *, title: str | None = None) -> dict:
    """Metric A against M: the closed-form curve per schedule with simulated points on it."""
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
    traces = []
    for k, sw in enumerate(sweeps):
        name = (labels or {}).get(sw.schedule, sw.schedule)
        name += f" (v={sw.num_chunks})" if sw.num_chunks > 1 else ""
        color = palette[k % len(palette)]
        traces.append({"type": "scatter", "mode": "lines", "name": name,
                       "legendgroup": sw.schedule, "x": list(sw.curve_microbatches),
                       "y": list(sw.curve), "connectgaps": False,
                       "line": {"color": color, "width": 2},
                       "hovertemplate": f"{name} formula<br>M=%{{x}}: %{{y:.2%}}<extra></extra>"})
        traces.append({"type": "scatter", "mode": "markers", "name": f"{name} simulated",
                       "legendgroup": sw.schedule, "showlegend": False,
                       "x": list(sw.microbatches),
                       "y": list(sw.simulated), "marker": {"color": color, "size": 9},
                       "hovertemplate": f"{name} simulated<br>M=%{{x}}: %{{y:.2%}}<extra></extra>"})
    p = sweeps[0].num_stages if sweeps else "?"
    top = max((max(sw.curve_microbatches, default=1) for sw in sweeps), default=1)
    ticks = [2 ** k for k in range(top.bit_length())]
    return {"data": traces, "layout": {
        "title": {"text": title or f"Bubble vs M · P={p}",
                  "subtitle": {"text": "lines: closed form · dots: simulated"}},
        "xaxis": {"title": {"text": "micro-batches M"}, "type": "log", "tickmode": "array",
                  "tickvals": ticks, "ticktext": [str(t) for t in ticks]},
        "yaxis": {"title": {"text": "bubble fraction A = Σ idle / (P · T)"},
                  "tickformat": ".0%", "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 40}}}


def peak_activations_figure(results: Sequence[PipelineResult], *,
                            title: str | None = None) -> dict:
    """Grouped bars: peak activations per rank, in full-stage micro-batch equivalents."""
    traces = []
    for k, res in enumerate(results):
        ranks = list(range(res.num_stages))
        traces.append({"type": "bar", "name": gantt_title(res), "x": ranks,
                       "y": list(res.peak_activation_stages),
                       "customdata": list(res.peak_activations),
                       "hovertemplate": (f"{res.label}, rank %{{x}}: %{{y:.3g}} stage-equivalents"
                                         " (%{customdata} chunk activations)<extra></extra>")})
    head = results[0] if results else None
    default = (f"Peak activations per rank · P={head.num_stages} · M={head.num_microbatches}"
               if head else "Peak activations per rank")
    return {"data": traces, "layout": {
        "title": {"text": title or default}, "barmode": "group",
        "xaxis": {"title": {"text": "rank"}, "tickmode": "linear", "dtick": 1},
        "yaxis": {"title": {"text": "peak activations (micro-batches of one stage)"}},
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 40}}}

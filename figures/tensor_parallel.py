"""Plotly figure builders (plain dict specs) for the tensor-parallel page."""
from __future__ import annotations

import numpy as np

from core.tensor_parallel import REPLICATED, TpProof
from core.tp_comm import LinkTime, TpPoint

# One colour per TP rank (Plotly's qualitative palette, 10 colours, repeated for TP > 10);
# grey = a tensor every rank holds whole.
RANK_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
ALL_RANKS_COLOR = "#d9d9d9"
FLOOR = 1e-18  # zero differences are drawn at this floor on the log axis


def rank_color(rank: int) -> str:
    return ALL_RANKS_COLOR if rank == REPLICATED else RANK_COLORS[rank % len(RANK_COLORS)]


def _discrete_scale(tp: int) -> list:
    """Step colour scale over values −1 … tp−1 (z is shifted by +1 so it starts at 0)."""
    colors = [ALL_RANKS_COLOR] + [rank_color(r) for r in range(tp)]
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


def ownership_figure(ownership: dict[str, np.ndarray], *, tp: int, what: str = "MLP") -> dict:
    """One heatmap per tensor: cell colour = the TP rank holding that element (grey = every rank)."""
    names = list(ownership)
    k = len(names)
    gap = 0.04
    width = (1 - gap * (k - 1)) / k
    traces, layout = [], {}
    for i, name in enumerate(names):
        z = np.asarray(ownership[name])
        ax = "" if i == 0 else str(i + 1)
        hover = np.where(z == REPLICATED, "all GPUs", np.char.add("GPU ", z.astype(str)))
        traces.append({
            "type": "heatmap", "z": (z + 1).tolist(), "zmin": 0, "zmax": tp + 1,
            "colorscale": _discrete_scale(tp), "showscale": False, "xgap": 1, "ygap": 1,
            "text": hover.tolist(), "hovertemplate": f"{name}<br>row %{{y}}, col %{{x}}: %{{text}}"
                                                     "<extra></extra>",
            "xaxis": f"x{ax}", "yaxis": f"y{ax}"})
        layout[f"xaxis{ax}"] = {"domain": [i * (width + gap), i * (width + gap) + width],
                                "title": {"text": f"{name}<br>{z.shape[0]}×{z.shape[1]}"},
                                "showticklabels": False, "anchor": f"y{ax}"}
        layout[f"yaxis{ax}"] = {"autorange": "reversed", "showticklabels": False,
                                "anchor": f"x{ax}", "scaleanchor": f"x{ax}"}
    # Legend entries: invisible scatter points, one per rank plus "all GPUs".
    for r in [REPLICATED] + list(range(tp)):
        traces.append({"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                       "marker": {"color": rank_color(r), "size": 12, "symbol": "square"},
                       "name": "all GPUs (replicated)" if r == REPLICATED else f"GPU {r}"})
    layout.update({"title": {"text": f"Tensor parallel · TP={tp} · who holds what ({what})"},
                   "legend": {"orientation": "h", "y": -0.25}, "height": 360,
                   "margin": {"l": 20, "r": 20, "t": 60, "b": 90}, "plot_bgcolor": "white"})
    return {"data": traces, "layout": layout}


def proof_figure(proofs: list[TpProof]) -> dict:
    """Max |sharded − unsharded| per output / gradient (log axis; exact zeros drawn at a floor)."""
    if not proofs:
        raise ValueError("no proofs to draw: pass at least one TpProof")
    tp = proofs[0].tp
    worst = max(p.worst for p in proofs)
    traces = []
    for i, p in enumerate(proofs):
        names = list(p.max_abs_diff)
        vals = [p.max_abs_diff[n] for n in names]
        traces.append({
            "type": "bar", "name": p.layer, "x": [f"{p.layer}: {n}" for n in names],
            "y": [max(v, FLOOR) for v in vals], "text": [f"{v:.1e}" for v in vals],
            "textposition": "outside", "marker": {"color": RANK_COLORS[i % len(RANK_COLORS)]},
            "hovertemplate": "%{x}: max |diff| = %{text}<extra></extra>"})
    return {"data": traces, "layout": {
        "title": {"text": f"Tensor parallel · TP={tp} · sharded = unsharded",
                  "subtitle": {"text": f"worst max |difference| {worst:.1e} (float64 rounding; "
                                       f"exact zeros drawn at {FLOOR:.0e})"}},
        "yaxis": {"type": "log", "title": {"text": "max |sharded − unsharded|"},
                  "range": [-18.5, -9], "exponentformat": "power"},
        "showlegend": len(proofs) > 1, "height": 380,
        "margin": {"l": 70, "r": 20, "t": 80, "b": 60}}}


def comm_vs_compute_figure(times: tuple[LinkTime, ...], *, tp: int) -> dict:
    """Per layer: TP communication on each link type beside the layer's compute on one TP rank."""
    names = [t.link.name for t in times]
    compute_ms = times[0].compute_s * 1e3 if times else 0.0
    traces = [
        {"type": "bar", "name": "TP communication per layer", "x": names,
         "y": [round(t.comm_s * 1e3, 5) for t in times], "marker": {"color": "#d62728"},
         "text": [f"{t.comm_to_compute:.2g}× compute" for t in times], "textposition": "outside",
         "customdata": [t.link.bandwidth_bytes_per_s / 1e9 for t in times],
         "hovertemplate": "%{x} (%{customdata:g} GB/s per direction): %{y:.3g} ms<extra></extra>"},
        {"type": "bar", "name": "layer compute (forward + backward) per rank", "x": names,
         "y": [round(t.compute_s * 1e3, 5) for t in times], "marker": {"color": "#1f77b4"}}]
    return {"data": traces, "layout": {
        "title": {"text": f"Tensor parallel · TP={tp} · comm vs compute per layer",
                  "subtitle": {"text": f"compute {compute_ms:.3g} ms per layer on each rank; "
                                       "ring all-reduce time from the α-β cost model"}},
        "barmode": "group", "yaxis": {"title": {"text": "ms per layer per micro-batch"}},
        "legend": {"orientation": "h", "y": -0.2}, "height": 400,
        "margin": {"l": 70, "r": 20, "t": 80, "b": 60}}}


def tp_sweep_figure(points: tuple[TpPoint, ...], *, gpus_per_node: int) -> dict:
    """Comm and compute per layer vs TP degree (log y), comm/compute on the right, node boundary marked."""
    x = [f"TP={p.tp}" for p in points]
    ok = [p.valid for p in points]

    def ms(v, valid):
        return round(v * 1e3, 6) if valid else None
    traces = [
        {"type": "bar", "name": "TP communication per layer", "x": x,
         "y": [ms(p.comm_s, v) for p, v in zip(points, ok)], "marker": {"color": "#d62728"},
         "customdata": [p.link_label or p.reason for p in points],
         "hovertemplate": "%{x}: %{y:.3g} ms over %{customdata}<extra></extra>"},
        {"type": "bar", "name": "layer compute per rank", "x": x,
         "y": [ms(p.compute_s, v) for p, v in zip(points, ok)], "marker": {"color": "#1f77b4"}},
        {"type": "scatter", "mode": "lines+markers", "name": "comm / compute", "x": x, "yaxis": "y2",
         "y": [round(p.comm_to_compute, 6) if v else None for p, v in zip(points, ok)],
         "line": {"color": "#333"}}]
    inside = [i for i, p in enumerate(points) if p.tp <= gpus_per_node]
    shapes, notes = [], []
    if inside and inside[-1] < len(points) - 1:
        b = inside[-1] + 0.5
        shapes.append({"type": "line", "x0": b, "x1": b, "y0": 0, "y1": 1, "xref": "x", "yref": "paper",
                       "line": {"dash": "dash", "color": "#333", "width": 2}})
        notes.append({"x": b, "y": 1.0, "xref": "x", "yref": "paper", "showarrow": False,
                      "xanchor": "left", "yanchor": "top",
                      "text": f" node boundary ({gpus_per_node} GPUs): NVLink | NIC"})
    notes += [{"x": xi, "y": 0.02, "xref": "x", "yref": "paper", "showarrow": False,
               "text": "invalid", "hovertext": p.reason} for xi, p in zip(x, points) if not p.valid]
    sub = ""
    if inside and inside[-1] < len(points) - 1 and ok[inside[-1]] and ok[inside[-1] + 1]:
        a, c = points[inside[-1]], points[inside[-1] + 1]
        sub = (f"TP={a.tp} → TP={c.tp}: comm {a.comm_s * 1e3:.3g} → {c.comm_s * 1e3:.3g} ms "
               f"({c.comm_s / a.comm_s:.2g}×) while compute halves")
    return {"data": traces, "layout": {
        "title": {"text": f"TP sweep · {gpus_per_node} GPUs per node", "subtitle": {"text": sub}},
        "barmode": "group", "xaxis": {"type": "category"},
        "yaxis": {"type": "log", "title": {"text": "ms per layer per micro-batch"}, "dtick": "D2"},
        "yaxis2": {"overlaying": "y", "side": "right", "type": "log", "showgrid": False,
                   "dtick": "D2", "title": {"text": "comm / compute"}},
        "shapes": shapes, "annotations": notes, "legend": {"orientation": "h", "y": -0.2},
        "height": 420, "margin": {"l": 70, "r": 70, "t": 80, "b": 60}}}

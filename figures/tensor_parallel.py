"""Plotly figure builders (plain dict specs) for the tensor-parallel page."""

from __future__ import annotations

import numpy as np

from core.tensor_parallel import REPLICATED, LinkTime, TpCommPlan, TpPoint, TpProof
from core.units import format_bytes, format_seconds
from figures.data_parallel import ticks_125

# One colour per TP rank (Plotly's qualitative palette, 10 colours, repeated for TP > 10);
# grey = a tensor every rank holds whole.
RANK_COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
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
                "marker": {"color": rank_color(r), "size": 12, "symbol": "square"},
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
            "margin": {"l": 20, "r": 20, "t": 80, "b": 80},
            "plot_bgcolor": "white",
        }
    )
    return {"data": traces, "layout": layout}


def proof_sweep_figure(proofs: dict[int, list[TpProof]], *, skipped: tuple[int, ...] = ()) -> dict:
    """Max |sharded − unsharded| of the output (forward) and the worst gradient (backward) at every
    TP degree: one chart that does not change with the TP slider, so moving it never redraws
    this."""
    if not proofs:
        raise ValueError("no proofs to draw: pass at least one TP degree's proofs")
    degrees = sorted(proofs)
    layers = [p.layer for p in proofs[degrees[0]]]
    traces = []
    for i, layer in enumerate(layers):
        got = [next(p for p in proofs[t] if p.layer == layer) for t in degrees]
        color = RANK_COLORS[i % len(RANK_COLORS)]
        for side, value, symbol in (
            ("forward (Y)", lambda p: p.forward_max_abs_diff, "circle"),
            ("backward (worst gradient)", lambda p: p.backward_max_abs_diff, "diamond-open"),
        ):
            vals = [value(p) for p in got]
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{layer} · {side}",
                    "x": [f"TP={t}" for t in degrees],
                    "y": [max(v, FLOOR) for v in vals],
                    "customdata": [f"{v:.1e}" for v in vals],
                    "line": {"color": color, "dash": "solid" if symbol == "circle" else "dot"},
                    "marker": {"color": color, "symbol": symbol, "size": 10},
                    "hovertemplate": f"{layer} · {side} · %{{x}}: %{{customdata}}<extra></extra>",
                }
            )
    eps = float(
        np.finfo(np.float64).eps
    )  # a reference line, drawn as a trace (exact on a log axis)
    traces.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"float64 machine epsilon {eps:.1e}",
            "x": [f"TP={degrees[0]}", f"TP={degrees[-1]}"],
            "y": [eps, eps],
            "hoverinfo": "skip",
            "line": {"color": "#555555", "dash": "dash", "width": 1},
        }
    )
    worst = max(p.worst for ps in proofs.values() for p in ps)
    skip = f"; TP={', '.join(map(str, skipped))} split no whole heads" if skipped else ""
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": "Tensor parallel · sharded = unsharded at every TP degree",
                "subtitle": {
                    "text": f"worst max |difference| {worst:.1e}: float64 rounding "
                    f"(exact zeros drawn at {FLOOR:.0e}){skip}"
                },
            },
            "xaxis": {"type": "category", "title": {"text": "TP degree"}},
            "yaxis": {
                "type": "log",
                "title": {"text": "max |sharded − unsharded|"},
                "range": [-18.5, -12],
                "exponentformat": "power",
                "dtick": 1,
            },
            "height": 380,
            "margin": {"l": 90, "r": 20, "t": 80, "b": 60},
        },
    }


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
            "marker": {"color": "#d62728"},
            "text": [f"{t.comm_to_compute:.2g}× compute" for t in times],
            "textposition": "outside",
            "customdata": [t.link.bandwidth_bytes_per_s / 1e9 for t in times],
            "hovertemplate": (
                "%{x} (%{customdata:g} GB/s per direction): %{y:.3g} ms<extra></extra>"
            ),
        },
        {
            "type": "bar",
            "name": "layer compute (forward + backward) per rank",
            "x": names,
            "y": [round(t.compute_s * 1e3, 5) for t in times],
            "marker": {"color": "#1f77b4"},
        },
    ]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Tensor parallel · TP={tp} · comm vs compute per layer",
                "subtitle": {
                    "text": f"compute {compute_ms:.3g} ms per layer on each rank; "
                    "ring all-reduce time from the α-β cost model"
                },
            },
            "barmode": "group",
            "yaxis": {"title": {"text": "ms per layer per micro-batch"}},
            "legend": {"orientation": "h", "y": -0.2},
            "height": 400,
            "margin": {"l": 70, "r": 20, "t": 80, "b": 60},
        },
    }


def tp_sweep_figure(points: tuple[TpPoint, ...], *, gpus_per_node: int) -> dict:
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
            "marker": {"color": "#d62728"},
            "customdata": [p.link_label or p.reason for p in points],
            "hovertemplate": "%{x}: %{y:.3g} ms over %{customdata}<extra></extra>",
        },
        {
            "type": "bar",
            "name": "layer compute per rank",
            "x": x,
            "y": [ms(p.compute_s, v) for p, v in zip(points, ok)],
            "marker": {"color": "#1f77b4"},
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "comm / compute",
            "x": x,
            "yaxis": "y2",
            "y": [round(p.comm_to_compute, 6) if v else None for p, v in zip(points, ok)],
            "line": {"color": "#333"},
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
                "line": {"dash": "dash", "color": "#333", "width": 2},
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
                "bgcolor": "rgba(255,255,255,0.85)",
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
                "text": f"TP sweep · {gpus_per_node} GPUs per node",
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
            "legend": {"orientation": "h", "y": -0.2},
            "height": 420,
            "margin": {"l": 70, "r": 70, "t": 80, "b": 60},
        },
    }


def _counts(d: dict[str, int]) -> str:
    return " + ".join(f"{n} {k.replace('_', '-')}" for k, n in d.items())


def comm_plan_rows(plans: list[TpCommPlan], units: str) -> list[dict]:
    """One table row per plan: collectives per layer, bytes per collective, bytes sent per GPU."""
    return [
        {
            "mode": "sequence parallel" if p.sequence_parallel else "plain TP",
            "forward, per layer": _counts(p.forward),
            "backward, per layer": _counts(p.backward),
            "sent per GPU per layer": format_bytes(p.bytes_sent_per_gpu_per_layer, units),
            "per step": format_bytes(p.bytes_sent_per_gpu_per_step, units),
            "layer input held per GPU": format_bytes(p.layer_input_bytes_per_gpu, units),
        }
        for p in plans
    ]


def node_boundary_note(points: tuple[TpPoint, ...], gpus_per_node: int) -> str:
    """'Inside the node … ; across nodes …': comm/compute on both sides of the boundary, in
    numbers.
    """
    inside = [p for p in points if p.valid and p.tp <= gpus_per_node and p.tp > 1]
    outside = [p for p in points if p.valid and p.tp > gpus_per_node]
    parts = []
    if inside:
        worst = max(inside, key=lambda p: p.comm_to_compute)
        parts.append(
            f"inside one node (TP ≤ {gpus_per_node}, {worst.link_label}) TP communication is "
            f"at most {worst.comm_to_compute:.0%} of the layer's compute (TP={worst.tp})"
        )
    for p in outside:
        parts.append(
            f"TP={p.tp} rides {p.link_label}: communication {p.comm_to_compute:.0%} of compute"
        )
    bad = [p for p in points if not p.valid]
    if bad:
        parts.append(
            "invalid: " + ", ".join(f"TP={p.tp}" for p in bad) + " (hover the chart for the rule)"
        )
    return "; ".join(parts) + "." if parts else ""


def how_computed_lines(
    proof_diffs: tuple[float, float] | None,
    plan: TpCommPlan | None,
    times: tuple[LinkTime, ...] | None,
    mfu: float,
    units: str,
) -> list[tuple[str, str]]:
    """(formula, measured) markdown pairs: the formula text never changes, so the browser's
    KaTeX render of it is reused across reruns; only the plain measured line is redrawn."""
    pairs = [
        (
            r"**MLP.** $Y = \mathrm{GeLU}(X W_1)\,W_2$ with $W_1 = [W_1^{(1)} \cdots W_1^{(t)}]$ "
            r"(columns) "
            r"and $W_2 = [W_2^{(1)}; \cdots; W_2^{(t)}]$ (rows): $Y = \sum_i \mathrm{GeLU}(X "
            r"W_1^{(i)})"
            r"\,W_2^{(i)}$, one all-reduce (g). Backward: $dX = \sum_i dA^{(i)} W_1^{(i)\top}$, "
            r"one "
            r"all-reduce (f). Attention: the same, each GPU owning whole heads.",
            ""
            if proof_diffs is None
            else f"Measured max |sharded − unsharded|: forward {proof_diffs[0]:.1e}, backward "
            f"{proof_diffs[1]:.1e}.",
        )
    ]
    if plan is not None:
        kinds = f"forward {_counts(plan.forward)}, backward {_counts(plan.backward)}"
        pairs.append(
            (
                r"**Bytes.** $M = b\,s\,h \times 2$ B per collective; a ring all-reduce sends "
                r"$2\frac{t-1}{t}M$ per GPU (a reduce-scatter or an all-gather half of that).",
                f"This run: M = {format_bytes(plan.message_bytes, units)}; per layer per step "
                f"({kinds}): "
                f"{format_bytes(plan.bytes_sent_per_gpu_per_layer, units)}; × {plan.num_layers} "
                "layers "
                f"= {format_bytes(plan.bytes_sent_per_gpu_per_step, units)}.",
            )
        )
    if times:
        pairs.append(
            (
                r"**Time.** $t_{AR} = 2(t-1)\,\alpha + 2\frac{t-1}{t}\frac{M}{B}$ per all-reduce "
                r"($B$, $\alpha$ of the link); compute $= 3 \times$ one layer's forward FLOPs "
                r"$/\,t$ "
                r"at the assumed MFU.",
                f"This run: compute at an assumed {mfu:.0%} MFU = "
                f"{format_seconds(times[0].compute_s)}; "
                "communication per layer: "
                + ", ".join(
                    f"{x.link.name} {format_seconds(x.comm_s)} ({x.comm_to_compute:.2g}× compute)"
                    for x in times
                )
                + ".",
            )
        )
    return pairs

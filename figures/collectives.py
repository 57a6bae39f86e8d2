"""Plotly figure builders (plain dict specs) for the collectives page: the animated ring and the
models.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from core.collectives import (
    ALL_REDUCE_MODELS,
    BytesScan,
    CollectiveTrace,
    algbw_bytes_per_s,
    all_gather_time_s,
    all_reduce_coefficients,
    all_reduce_cost,
    all_reduce_time_s,
    bus_bandwidth_factor,
    check_positive,
    flat_ring_all_reduce_time_s,
    hierarchical_all_reduce_time_s,
    reduce_scatter_time_s,
    step_times_s,
)
from core.hardware import Cluster
from core.units import format_bandwidth, format_bytes, format_seconds, gib_or_gb

MAX_ANIMATED_RANKS = 32
ALGORITHM_COLORS = {
    "ring": "#1f77b4",
    "halving_doubling": "#2ca02c",
    "recursive_doubling": "#9467bd",
    "tree": "#ff7f0e",
    "naive": "#d62728",
    "hierarchical": "#17becf",
    "flat_ring_cluster": "#7f7f7f",
}
PHASE_COLORS = {"reduce_scatter": "#e4572e", "all_gather": "#2e86ab"}
R_INNER, R_OUTER, EXTENT, HEIGHT = 0.7, 2.3, 2.7, 720
PLOT_PX = HEIGHT - 90 - 130  # plot area height: layout height minus top and bottom margins


def step_labels(num_ranks: int) -> list[str]:
    """Slider labels: 'start', 'RS 1'..'RS N-1', 'AG 1'..'AG N-1'."""
    k = range(1, num_ranks)
    return ["start"] + [f"RS {i}" for i in k] + [f"AG {i}" for i in k]


def _polar(radius, angle):
    return radius * np.cos(angle), radius * np.sin(angle)


def _arc_points(n: int) -> int:
    return max(3, 36 // n)  # enough points that a long arc (small N) still looks round


def _arcs(step, n: int, radii: np.ndarray) -> tuple[dict, dict]:
    """Clockwise arcs from each sender's chunk cell to the receiver's, and an arrowhead at each
    end.
    """
    xs, ys, hx, hy, angle = [], [], [], [], []
    for s, d, c in zip(step.src.tolist(), step.dst.tolist(), step.chunk.tolist()):
        a0, a1 = math.pi / 2 - 2 * math.pi * s / n, math.pi / 2 - 2 * math.pi * d / n
        a1 = a1 if a1 < a0 else a1 - 2 * math.pi
        t = np.linspace(a0 + 0.18 * (a1 - a0), a1 - 0.18 * (a1 - a0), _arc_points(n))
        x, y = _polar(radii[c], t)
        xs += np.round(x, 3).tolist() + [None]
        ys += np.round(y, 3).tolist() + [None]
        hx.append(round(float(x[-1]), 3))
        hy.append(round(float(y[-1]), 3))
        # Plotly marker angles are degrees clockwise from "up"; the head follows the arc's tangent.
        angle.append(round(math.degrees(math.atan2(math.sin(t[-1]), -math.cos(t[-1])))))
    return {"x": xs, "y": ys}, {"x": hx, "y": hy, "marker": {"angle": angle}}


def _cell_text(trace: CollectiveTrace, t: int) -> list[str]:
    off = trace.chunk_offsets
    fmt = str if np.issubdtype(trace.states.dtype, np.integer) else (lambda v: f"{v:.4g}")
    return [
        ",".join(fmt(v) for v in trace.states[t, r, off[c] : off[c + 1]].tolist())
        for r in range(trace.num_ranks)
        for c in range(trace.num_chunks)
    ]


def ring_animation_figure(
    trace: CollectiveTrace,
    *,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    link_name: str = "the link",
    message_bytes: float | None = None,
    byte_system: str = "binary",
    show_values: bool | None = None,
    frame_ms: int = 800,
    start_step: int = 0,
    timing: CollectiveTrace | None = None,
) -> dict:
    """Ranks on a circle, each tensor as N chunk cells coloured by contributions held; one frame per
    step.

    message_bytes (default: the simulated tensor's size) scales the running bytes and time, so a
    small
    simulated tensor can stand for e.g. 1 GB; exact when message_bytes splits like the simulated
    one.
    show_values (default: N ≤ 8 and ≤ 2 elements per chunk) writes each chunk's numbers in its cell.
    start_step opens the figure at that frame (see open_at_step). timing: a ring trace of the same N
    whose chunks split evenly (core.collectives.compare.timing_elements) for the bytes and time
    readouts,
    when the drawn tensor's few elements split unevenly (e.g. 8 elements on 32 GPUs).
    """
    n = trace.num_ranks
    if trace.collective != "all_reduce" or trace.algorithm != "ring":
        raise ValueError(
            f"the ring animation needs a ring all-reduce trace, got {trace.algorithm} "
            f"{trace.collective}; use ring_all_reduce(inputs)"
        )
    if n > MAX_ANIMATED_RANKS or trace.contributions is None:
        raise ValueError(f"N={n} ranks is too many to animate: use N ≤ {MAX_ANIMATED_RANKS}")
    counts = trace.contribution_counts
    if message_bytes is not None:
        check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    scale = (message_bytes or trace.message_bytes) / trace.message_bytes
    if show_values is None:
        show_values = (
            trace.states is not None and n <= 8 and np.diff(trace.chunk_offsets).max() <= 2
        )
    show_values = show_values and trace.states is not None
    h = (R_OUTER - R_INNER) / n
    radii = R_INNER + h * (np.arange(n) + 0.5)
    angles = math.pi / 2 - 2 * math.pi * np.arange(n) / n
    cx, cy = _polar(radii[None, :], angles[:, None])  # (rank, chunk)
    px_per_unit = PLOT_PX / (2 * EXTENT)
    size = float(min(40, 0.85 * min(h, 2 * math.pi * R_INNER / n) * px_per_unit))
    lx, ly = _polar(R_OUTER + 0.2, angles)
    clock = trace
    if timing is not None:
        if (
            timing.num_ranks != n
            or timing.num_steps != trace.num_steps
            or timing.algorithm != "ring"
        ):
            raise ValueError(
                f"the timing trace must be a ring all-reduce on the same {n} ranks "
                f"({trace.num_steps} steps); simulate it with the same N"
            )
        clock, scale = timing, (message_bytes or trace.message_bytes) / timing.message_bytes
    elapsed = np.concatenate(
        [[0.0], np.cumsum(step_times_s(clock, bandwidth_bytes_per_s, latency_s, bytes_scale=scale))]
    )
    sent = np.vstack([np.zeros(n), np.cumsum(clock.sent_per_step(), axis=0)]) * scale
    labels = step_labels(n)

    def title(t: int) -> str:
        lo, hi = sent[t].min(), sent[t].max()
        each = (
            format_bytes(hi, byte_system)
            if lo == hi
            else f"{format_bytes(lo, byte_system)}–{format_bytes(hi, byte_system)}"
        )
        phase = (
            ""
            if t == 0
            else (
                " (receiver adds)" if trace.steps[t - 1].reduce.any() else " (receiver overwrites)"
            )
        )
        return (
            f"ring N={n} · {labels[t]}{phase} · sent per GPU {each} · "
            f"elapsed {format_seconds(elapsed[t]) if t else '0'} on {link_name}"
        )

    def frame_data(t: int) -> list[dict]:
        cells = {"marker": {"color": counts[t].ravel().tolist()}}
        if show_values:  # dark text on the bright (many-contribution) end of Viridis
            cells["text"] = _cell_text(trace, t)
            cells["textfont"] = {
                "color": ["black" if c > n / 2 else "white" for c in counts[t].ravel()]
            }
        if t == 0:
            return [cells, {"x": [], "y": []}, {"x": [], "y": []}]
        arcs, heads = _arcs(trace.steps[t - 1], n, radii)
        color = PHASE_COLORS[trace.steps[t - 1].phase]
        return [
            cells,
            {**arcs, "line": {"color": color}},
            {**heads, "marker": {**heads["marker"], "color": color}},
        ]

    first = frame_data(0)
    cells = {
        "type": "scatter",
        "mode": "markers+text" if show_values else "markers",
        "name": "chunks",
        "x": np.round(cx.ravel(), 3).tolist(),
        "y": np.round(cy.ravel(), 3).tolist(),
        "customdata": [[r, c] for r in range(n) for c in range(n)],
        "marker": {
            "symbol": "square",
            "size": size,
            "color": first[0]["marker"]["color"],
            "cmin": 1,
            "cmax": max(n, 2),
            "colorscale": "Viridis",
            "line": {"width": 0.5, "color": "white"},
            "colorbar": {
                "title": {"text": "ranks'<br>contributions"},
                "len": 0.6,
                "tickmode": "linear",
                "tick0": 1,
                "dtick": max(1, n // 8),
            },
        },
        "text": first[0].get("text"),
        "textfont": {"size": 10, **first[0].get("textfont", {})},
        "hovertemplate": "GPU %{customdata[0]} · chunk %{customdata[1]}<br>holds %{marker.color} "
        f"of {n} ranks' contributions"
        + ("<br>value %{text}" if show_values else "")
        + "<extra></extra>",
    }
    arcs = {
        "type": "scatter",
        "mode": "lines",
        "name": "transfers",
        "hoverinfo": "skip",
        "x": [],
        "y": [],
        "line": {"width": 2, "color": PHASE_COLORS["reduce_scatter"]},
    }
    heads = {
        "type": "scatter",
        "mode": "markers",
        "name": "arrowheads",
        "hoverinfo": "skip",
        "x": [],
        "y": [],
        "marker": {
            "symbol": "arrow",
            "size": 11,
            "angle": [],
            "color": PHASE_COLORS["reduce_scatter"],
        },
    }
    ranks = {
        "type": "scatter",
        "mode": "text",
        "name": "GPUs",
        "hoverinfo": "skip",
        "x": np.round(lx, 3).tolist(),
        "y": np.round(ly, 3).tolist(),
        "text": [f"GPU {r}" if n <= 8 else str(r) for r in range(n)],
        "textfont": {"size": 12},
        "cliponaxis": False,
    }
    frames = [
        {
            "name": labels[t],
            "data": frame_data(t),
            "traces": [0, 1, 2],
            "layout": {"title": {"text": title(t)}},
        }
        for t in range(len(labels))
    ]
    anim = {"mode": "immediate", "transition": {"duration": 0}}
    axis = {"visible": False, "range": [-EXTENT, EXTENT], "fixedrange": True}
    fig = {
        "data": [cells, arcs, heads, ranks],
        "frames": frames,
        "layout": {
            "title": {"text": title(0)},
            "height": HEIGHT,
            "showlegend": False,
            "margin": {"l": 10, "r": 10, "t": 90, "b": 130},
            "xaxis": axis,
            "yaxis": {**axis, "scaleanchor": "x", "scaleratio": 1},
            "plot_bgcolor": "white",
            "updatemenus": [
                {
                    "type": "buttons",
                    "direction": "left",
                    "x": 0,
                    "y": -0.02,
                    "xanchor": "left",
                    "yanchor": "top",
                    "showactive": False,
                    "buttons": [
                        {
                            "label": "▶ Play",
                            "method": "animate",
                            "args": [
                                None,
                                {
                                    **anim,
                                    "fromcurrent": True,
                                    "frame": {"duration": frame_ms, "redraw": True},
                                },
                            ],
                        },
                        {
                            "label": "❚❚ Pause",
                            "method": "animate",
                            "args": [[None], {**anim, "frame": {"duration": 0, "redraw": False}}],
                        },
                    ],
                }
            ],
            "sliders": [
                {
                    "active": 0,
                    "x": 0.2,
                    "len": 0.8,
                    "y": -0.02,
                    "yanchor": "top",
                    "currentvalue": {"prefix": "step: "},
                    "pad": {"t": 10},
                    "steps": [
                        {
                            "label": lab,
                            "method": "animate",
                            "args": [[lab], {**anim, "frame": {"duration": 0, "redraw": True}}],
                        }
                        for lab in labels
                    ],
                }
            ],
        },
    }
    return open_at_step(fig, start_step) if start_step else fig


def _merged(base: dict, update: dict) -> dict:
    """base with update's keys applied, nested dicts merged: what Plotly.animate does with frame
    data.
    """
    out = dict(base)
    for k, v in update.items():
        out[k] = _merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def open_at_step(fig: dict, step: int) -> dict:
    """A copy of an animated figure that opens showing frame `step`, its slider set there.

    Play then runs on from that step (Plotly's fromcurrent only knows frames it has animated itself,
    so Play's frame list starts at `step`). The frames and the caller's figure are shared, not
    copied.
    """
    frames = fig["frames"]
    if (
        isinstance(step, bool)
        or not isinstance(step, (int, np.integer))
        or not 0 <= step < len(frames)
    ):
        raise ValueError(
            f"step={step!r} is not a frame of this animation: use 0 … {len(frames) - 1}"
        )
    frame = frames[step]
    data = list(fig["data"])
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = _merged(data[i], update)
    layout = fig["layout"]
    menu = layout["updatemenus"][0]
    play = {
        **menu["buttons"][0],
        "args": [
            [f["name"] for f in frames[step:]] if step else None,
            menu["buttons"][0]["args"][1],
        ],
    }
    return {
        **fig,
        "data": data,
        "layout": {
            **layout,
            "title": {**layout["title"], **frame["layout"]["title"]},
            "updatemenus": [
                {**menu, "buttons": [play, *menu["buttons"][1:]]},
                *layout["updatemenus"][1:],
            ],
            "sliders": [{**layout["sliders"][0], "active": int(step)}, *layout["sliders"][1:]],
        },
    }


def _log_axis(title: str, lo: float, hi: float, **extra) -> dict:
    return {
        "title": {"text": title},
        "type": "log",
        "range": [math.log10(lo), math.log10(hi)],
        **extra,
    }


def _bytes_ticks(lo: float, hi: float, byte_system: str) -> dict:
    """Tick positions at round sizes of the chosen byte system, labelled with units."""
    base = 1024.0 if byte_system == "binary" else 1000.0
    step = 32.0 if byte_system == "binary" else 10.0
    v = base ** math.floor(math.log(lo, base))
    vals = []
    while v <= hi * 1.0001:
        if v >= lo / 1.0001:
            vals.append(v)
        v *= step
    return {
        "tickmode": "array",
        "tickvals": vals,
        "ticktext": [format_bytes(x, byte_system) for x in vals],
    }


def _time_axis(data: list[dict]) -> dict:
    """Log time axis with decade ticks labelled in s / ms / µs."""
    ys = [y for d in data for y in d["y"] if y and y > 0]
    lo, hi = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    vals = [10.0**k for k in range(lo, hi + 1)]
    return {
        "title": {"text": "time"},
        "type": "log",
        "tickmode": "array",
        "tickvals": vals,
        "ticktext": [format_seconds(v) for v in vals],
    }


def _ranks_axis(counts) -> dict:
    return {
        "title": {"text": "ranks N"},
        "type": "log",
        "tickmode": "array",
        "tickvals": list(counts),
        "ticktext": [str(c) for c in counts],
    }


def bytes_per_rank_figure(scan: BytesScan, *, byte_system: str = "binary") -> dict:
    """Left: ring bytes sent per rank (simulated points on 2·S·(N−1)/N). Right: naive root
    traffic.
    """
    unit, size = gib_or_gb(byte_system)
    s = scan.message_bytes
    n = scan.num_ranks
    grid = np.unique(np.geomspace(n.min(), n.max(), 200).round().astype(int))
    ring_curve = [all_reduce_coefficients("ring", int(p))[1] * s / size for p in grid]
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "2·S·(N−1)/N",
            "x": grid.tolist(),
            "y": ring_curve,
            "line": {"color": ALGORITHM_COLORS["ring"]},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": "ring, simulated",
            "x": n.tolist(),
            "y": (scan.max_bytes_sent["ring"] / size).tolist(),
            "marker": {"color": ALGORITHM_COLORS["ring"], "size": 9, "symbol": "circle-open"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "2·S (N → ∞)",
            "x": [int(n.min()), int(n.max())],
            "y": [2 * s / size] * 2,
            "line": {"dash": "dot", "color": "#888"},
        },
    ]
    if "naive" in scan.max_bytes_sent:
        data += [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "root: (N−1)·S",
                "x": grid.tolist(),
                "y": ((grid - 1) * s / size).tolist(),
                "xaxis": "x2",
                "yaxis": "y2",
                "line": {"color": ALGORITHM_COLORS["naive"]},
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "naive root, simulated",
                "x": n.tolist(),
                "y": (scan.max_bytes_sent["naive"] / size).tolist(),
                "xaxis": "x2",
                "yaxis": "y2",
                "marker": {"color": ALGORITHM_COLORS["naive"], "size": 9, "symbol": "square-open"},
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "ring rank, simulated",
                "x": n.tolist(),
                "y": (scan.max_bytes_sent["ring"] / size).tolist(),
                "xaxis": "x2",
                "yaxis": "y2",
                "marker": {"color": ALGORITHM_COLORS["ring"], "size": 7},
                "showlegend": False,
            },
        ]
    ticks = _ranks_axis([int(c) for c in n])
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "Bytes each GPU sends in one all-reduce of S = "
                f"{format_bytes(s, byte_system)}"
            },
            "xaxis": {**ticks, "domain": [0, 0.46]},
            "xaxis2": {**ticks, "domain": [0.56, 1], "anchor": "y2"},
            "yaxis": {"title": {"text": f"sent per rank ({unit})"}, "rangemode": "tozero"},
            "yaxis2": {
                "title": {"text": f"sent by the busiest rank ({unit}, log)"},
                "type": "log",
                "anchor": "x2",
            },
            "legend": {"orientation": "h", "y": -0.2},
            "height": 460,
            "margin": {"l": 60, "r": 20, "t": 60, "b": 40},
        },
    }


def _cluster_with(cluster: Cluster, num_ranks: int) -> Cluster | None:
    if num_ranks % cluster.gpus_per_node:
        return None
    return dataclasses.replace(cluster, num_nodes=num_ranks // cluster.gpus_per_node)


def time_vs_ranks_figure(
    *,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    rank_counts=tuple(2**k for k in range(1, 11)),
    algorithms=("ring", "halving_doubling", "tree", "naive"),
    cluster: Cluster | None = None,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> dict:
    """All-reduce time vs N for each algorithm on one link (log-log); two-level curves on a
    cluster.
    """
    counts = [int(c) for c in rank_counts]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": ALL_REDUCE_MODELS[a][0],
            "x": counts,
            "y": [
                all_reduce_time_s(a, p, message_bytes, bandwidth_bytes_per_s, latency_s)
                for p in counts
            ],
            "line": {"color": ALGORITHM_COLORS[a]},
        }
        for a in algorithms
    ]
    if cluster is not None:
        points = [(p, c, message_bytes) for p in counts if (c := _cluster_with(cluster, p))]
        data += _cluster_curves(points, f", {cluster.gpus_per_node} GPUs/node", "lines+markers")
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "All-reduce time vs N",  # the parameters below: a half-width title must fit
                "subtitle": {
                    "text": f"S = {format_bytes(message_bytes, byte_system)}, "
                    f"B = {format_bandwidth(bandwidth_bytes_per_s, bandwidth_system)}, α = "
                    f"{format_seconds(latency_s)}"
                },
            },
            "xaxis": _ranks_axis(counts),
            "yaxis": _time_axis(data),
            "height": 440,
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"l": 60, "r": 20, "t": 80, "b": 40},
        },
    }


def _cluster_curves(
    points: list[tuple[float, Cluster, float]], suffix: str, mode: str
) -> list[dict]:
    """Hierarchical and flat-ring times on a cluster's two tiers; points are (x, cluster, bytes)."""
    return [
        {
            "type": "scatter",
            "mode": mode,
            "name": label + suffix,
            "x": [x for x, _, _ in points],
            "y": [fn(c, s) for _, c, s in points],
            "line": {"color": ALGORITHM_COLORS[key], "dash": "dash"},
        }
        for key, label, fn in (
            ("hierarchical", "Hierarchical (2-level)", hierarchical_all_reduce_time_s),
            ("flat_ring_cluster", "Flat ring across nodes", flat_ring_all_reduce_time_s),
        )
    ]


def time_vs_size_figure(
    *,
    num_ranks: int,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    sizes_bytes=None,
    algorithms=("ring", "halving_doubling", "tree", "naive"),
    cluster: Cluster | None = None,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> dict:
    """All-reduce time vs message size (log-log), shading where ring latency exceeds its bandwidth
    term.
    """
    sizes = (
        np.geomspace(1024, 16 * 2**30, 61)
        if sizes_bytes is None
        else np.asarray(sizes_bytes, float)
    )
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": ALL_REDUCE_MODELS[a][0],
            "x": sizes.tolist(),
            "y": [
                all_reduce_time_s(a, num_ranks, float(s), bandwidth_bytes_per_s, latency_s)
                for s in sizes
            ],
            "line": {"color": ALGORITHM_COLORS[a]},
        }
        for a in algorithms
    ]
    if cluster is not None:
        data += _cluster_curves(
            [(float(x), cluster, float(x)) for x in sizes],
            f" on {cluster.num_nodes}×{cluster.gpus_per_node} GPUs",
            "lines",
        )
    shapes, notes, n_star = [], [], 0.0
    if num_ranks > 1 and latency_s > 0:
        # Ring: 2(p−1)·α = 2(p−1)/p·n/B at n = p·α·B (docs/notes/collectives.md §2).
        n_star = num_ranks * latency_s * bandwidth_bytes_per_s
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": float(sizes[0]),
                "x1": n_star,
                "y0": 0,
                "y1": 1,
                "fillcolor": "#f2e6ff",
                "opacity": 0.5,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        notes = [
            {
                "x": math.log10(n_star),
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "showarrow": False,
                "xanchor": xa,
                "yanchor": "bottom",
                "text": text,
            }
            for xa, text in (("right", "latency-bound ◀ "), ("left", " ▶ bandwidth-bound"))
        ]
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "All-reduce time vs message size",
                "subtitle": {
                    "text": f"N = {num_ranks}, B = "
                    f"{format_bandwidth(bandwidth_bytes_per_s, bandwidth_system)}, "
                    f"α = {format_seconds(latency_s)}"
                    + (
                        f"; ring turns bandwidth-bound at n = p·α·B = "
                        f"{format_bytes(n_star, byte_system)}"
                        if notes
                        else ""
                    )
                },
            },
            "xaxis": {
                **_log_axis("message size per rank", sizes[0], sizes[-1]),
                **_bytes_ticks(sizes[0], sizes[-1], byte_system),
            },
            "yaxis": _time_axis(data),
            "shapes": shapes,
            "annotations": notes,
            "height": 460,
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"l": 60, "r": 20, "t": 100, "b": 40},
        },
    }


def bandwidth_figure(
    *,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    collective: str = "all_reduce",
    rank_counts=tuple(2**k for k in range(1, 11)),
    byte_system: str = "decimal",
) -> dict:
    """nccl-tests algbw = S/t and busbw = algbw × factor vs N for the ring model, beside link speed
    B.
    """
    times = {
        "all_reduce": lambda p: all_reduce_time_s(
            "ring", p, message_bytes, bandwidth_bytes_per_s, latency_s
        ),
        "reduce_scatter": lambda p: reduce_scatter_time_s(
            p, message_bytes, bandwidth_bytes_per_s, latency_s
        ),
        "all_gather": lambda p: all_gather_time_s(
            p, message_bytes, bandwidth_bytes_per_s, latency_s
        ),
    }
    if collective not in times:
        raise ValueError(f"bandwidth_figure draws {', '.join(times)}; got {collective!r}")
    unit, size = gib_or_gb(byte_system)
    counts = [int(c) for c in rank_counts if c > 1]
    alg = [algbw_bytes_per_s(message_bytes, times[collective](p)) for p in counts]
    bus = [a * bus_bandwidth_factor(collective, p) for a, p in zip(alg, counts)]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "algbw = S / t",
                "x": counts,
                "y": [a / size for a in alg],
                "line": {"color": "#ff7f0e"},
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "busbw = algbw × factor",
                "x": counts,
                "y": [b / size for b in bus],
                "line": {"color": "#1f77b4"},
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": "link B (per direction)",
                "x": [counts[0], counts[-1]],
                "y": [bandwidth_bytes_per_s / size] * 2,
                "line": {"dash": "dot", "color": "#444"},
            },
        ],
        "layout": {
            "title": {
                "text": f"{collective} (ring): algbw vs busbw · S = "
                f"{format_bytes(message_bytes, byte_system)}"
            },
            "xaxis": _ranks_axis(counts),
            "height": 420,
            "yaxis": {"title": {"text": f"{unit}/s"}, "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"l": 60, "r": 20, "t": 60, "b": 40},
        },
    }


def how_computed_markdown(
    *,
    num_ranks: int,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    link_name: str,
    simulated_steps: int,
    simulated_bytes: float,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> str:
    """The collectives page's formulas, each beside the simulator's measured value."""
    n, s, bw = num_ranks, message_bytes, bandwidth_bytes_per_s
    cost = all_reduce_cost("ring", n, s, bw, latency_s)
    others = "; ".join(f"{label}: {formula}" for label, formula, _ in ALL_REDUCE_MODELS.values())
    return f"""
- **Steps** = 2(N−1) = **{2 * (n - 1)}**; the simulator ran **{simulated_steps}**.
- **Bytes sent per GPU** = 2·S·(N−1)/N = {format_bytes(2 * s * (n - 1) / n, byte_system)};
  measured: **{format_bytes(simulated_bytes, byte_system)}** (chunks split as `np.array_split`, so
  uneven sizes differ slightly).
- **Time** (Thakur, Rabenseifner & Gropp 2005): t = 2(N−1)·α + 2(N−1)/N·S/B
  = {format_seconds(cost.latency_s)} + {format_seconds(cost.bandwidth_s)}
  = **{format_seconds(cost.time_s)}** on {link_name}
  (B = {format_bandwidth(bw, bandwidth_system)} per direction, α = {format_seconds(latency_s)}).
- **nccl-tests**: algbw = S/t; busbw = algbw × 2(N−1)/N, comparable with the link speed B.
- **A vs B** runs both simulators on the same integer inputs and times each step as α + (its largest
  message)/B, since a step's transfers run at once on separate links; bytes scale from the simulated
  tensor to S. Max |output − true sum| checks every GPU's result against `inputs.sum(axis=0)`.
- Closed forms: {others}.
"""

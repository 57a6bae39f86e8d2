"""The animated ring all-reduce: ranks on a circle, chunk cells coloured by contributions held."""

from __future__ import annotations

import math

import numpy as np

from core.collectives import CollectiveTrace, check_positive, step_times_s
from core.units import format_bytes, format_seconds
from figures.collectives.frames import open_at_step
from figures.collectives.geometry import polar, ring_arcs
from figures.style import COLOURS, PHASE_COLOURS, margin

MAX_ANIMATED_RANKS = 32
R_INNER, R_OUTER, EXTENT, HEIGHT = 0.7, 2.3, 2.7, 720
PLOT_PX = HEIGHT - 90 - 130  # plot area height: layout height minus top and bottom margins


def step_labels(num_ranks: int) -> list[str]:
    """Slider labels: 'start', 'RS 1'..'RS N-1', 'AG 1'..'AG N-1'."""
    k = range(1, num_ranks)
    return ["start"] + [f"RS {i}" for i in k] + [f"AG {i}" for i in k]


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
    cx, cy = polar(radii[None, :], angles[:, None])  # (rank, chunk)
    px_per_unit = PLOT_PX / (2 * EXTENT)
    size = float(min(40, 0.85 * min(h, 2 * math.pi * R_INNER / n) * px_per_unit))
    lx, ly = polar(R_OUTER + 0.2, angles)
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
                "color": [
                    COLOURS["ink_dark"] if c > n / 2 else COLOURS["light_text"]
                    for c in counts[t].ravel()
                ]
            }
        if t == 0:
            return [cells, {"x": [], "y": []}, {"x": [], "y": []}]
        arcs, heads = ring_arcs(trace.steps[t - 1], n, radii)
        color = PHASE_COLOURS[trace.steps[t - 1].phase]
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
            "line": {"width": 0.5, "color": COLOURS["paper"]},
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
        "line": {"width": 2, "color": PHASE_COLOURS["reduce_scatter"]},
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
            "color": PHASE_COLOURS["reduce_scatter"],
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
            "margin": margin(10, 10, 90, 130),
            "xaxis": axis,
            "yaxis": {**axis, "scaleanchor": "x", "scaleratio": 1},
            "plot_bgcolor": COLOURS["paper"],
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

"""The animated ring all-reduce: GPU boxes round a circle, each holding its N chunk cells labelled
by index and coloured by how many GPUs' inputs they hold; at every step the chunks in flight glide
along the links to the next GPU (interpolated frames) and land where the receiver adds or
overwrites.

Frames: "0" is the inputs; step t (1 … 2(N−1)) has "t.0", "t.1", "t.2" (the chunks a fraction 0, ⅓,
⅔ of the way) and "t" (landed: the receivers' cells after the step). A chunk keeps its id as it
travels, because the chunk a GPU receives in one step is the one it forwards in the next
(docs/notes/collectives.md §1), so each marker is one chunk going round the ring.
"""

from __future__ import annotations

import numpy as np

from core.collectives import CollectiveTrace, check_positive, step_times_s
from core.units import format_bytes, format_seconds
from figures.collectives.frames import open_at_step, step_frames
from figures.collectives.geometry import (
    NOTE_GAP,
    ZOOM_LABEL_PULL,
    box_shapes,
    label_sides,
    link_arcs,
    ring_boxes,
    view_window,
)
from figures.collectives.ring_check import check_ring
from figures.collectives.story import PHASE_NAMES, followed_move, receiver_note
from figures.presenter_layout import HEIGHT_SCALE
from figures.style import COLOURS, PHASE_COLOURS, margin

HEIGHT = 560
TOP, BOTTOM = 56, 74
SUBSTEPS = (0.0, 1 / 3, 2 / 3)  # where the in-flight chunks are in the frames before landing
# The colour bar under the ring, right of the replay button (the notes beside the east and west
# GPUs need the sides); compact, none (figures.collectives.text.colour_key beside the chart), and
# the replay button at the top left, where no title is.
BAR_UNDER = {"orientation": "h", "x": 1, "xanchor": "right", "y": 0, "yanchor": "top", "len": 0.42}
BAR_UNDER["title"] = {"text": "GPUs' inputs in the chunk", "side": "top"}
TOP_LEFT = {"y": 1, "yanchor": "top", "pad": {"t": 0}}
MIN_LABEL_PX = 15  # a cell smaller than this carries no chunk number (the chunks in flight do)


def step_labels(num_ranks: int) -> list[str]:
    """Short names of the states: 'start', 'RS 1'..'RS N-1', 'AG 1'..'AG N-1'."""
    k = range(1, num_ranks)
    return ["start"] + [f"RS {i}" for i in k] + [f"AG {i}" for i in k]


def ring_animation_figure(
    trace: CollectiveTrace,
    *,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    link_name: str = "the link",
    message_bytes: float | None = None,
    byte_system: str = "binary",
    frame_ms: int = 320,
    start_step: int = 0,
    timing: CollectiveTrace | None = None,
    height: int = HEIGHT,
    zoom: int | None = None,
    compact: bool = False,
) -> dict:
    """The ring, its frames, and a "▶ Replay this step" button (open_at_step points it at a step).

    message_bytes (default: the simulated tensor's size) scales the running bytes and time, so a
    few simulated elements stand for e.g. 1 GB; timing: a ring trace of the same N whose chunks
    split evenly (core.collectives.timing_elements), for those readouts when the drawn tensor's
    elements split unevenly. zoom: a GPU whose box and neighbours fill the chart (large N: the
    cells get big enough to carry their numbers); the note by the receiver is left to the caption.
    compact (the presenter's slide, drawn HEIGHT_SCALE × `height`): no title (the ring's centre and
    the caption beside it say the step), no colour bar (the page names the scale beside the chart):
    the ring gets the height and its cells keep their numbers.
    """
    check_ring(trace, timing)
    n, last = trace.num_ranks, trace.num_steps
    if message_bytes is not None:
        check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    clock = timing or trace
    scale = (message_bytes or trace.message_bytes) / clock.message_bytes
    elapsed = np.concatenate(
        [[0.0], np.cumsum(step_times_s(clock, bandwidth_bytes_per_s, latency_s, bytes_scale=scale))]
    )
    sent = np.concatenate([[0.0], np.cumsum(clock.sent_per_step().max(axis=1))]) * scale
    counts = trace.contribution_counts
    boxes = ring_boxes(n)
    xr, yr = view_window(boxes, zoom)
    top, bottom = (12, 12) if compact else (TOP, BOTTOM)
    px = (height - top - bottom) / max(xr[1] - xr[0], yr[1] - yr[0])  # pixels per plot unit
    cell_px = boxes.cell * px
    # compact is for the projected slide, which draws the chart HEIGHT_SCALE taller (figures.theme)
    labelled = cell_px * (HEIGHT_SCALE if compact else 1) >= MIN_LABEL_PX
    cx, cy = boxes.cells()
    (nx, ny), sides = boxes.labels(), label_sides(n)  # a note sits under (over) its GPU's label
    bright = n / 2  # Viridis: dark text on the bright (many-contribution) end

    def ink(values) -> list[str]:
        return [COLOURS["ink_dark"] if c > bright else COLOURS["light_text"] for c in values]

    def cells(t: int) -> dict:
        flat = counts[t].ravel().tolist()
        return {
            "marker": {"color": flat},
            **({"textfont": {"color": ink(flat)}} if labelled else {}),
        }

    def counters(t: int, u: float) -> tuple[float, float]:
        return sent[t - 1] + u * (sent[t] - sent[t - 1]), elapsed[t - 1] + u * (
            elapsed[t] - elapsed[t - 1]
        )

    def title(t: int, u: float = 1.0) -> str:
        if compact:
            return ""
        phase = "inputs" if t == 0 else PHASE_NAMES[trace.steps[t - 1].phase]
        return f"ring N={n} on {link_name} · step {t} of {last} · {phase}"

    def centre(t: int, u: float = 1.0) -> dict:
        if t == 0:
            return {"text": [f"<b>inputs</b><br>step 0 of {last}"]}
        b, s = counters(t, u)
        phase = PHASE_NAMES[trace.steps[t - 1].phase]
        more = f"<br>{format_bytes(b, byte_system)} · {format_seconds(s)}"
        return {"text": [f"<b>{phase}</b><br>step {t} of {last}{more}"]}

    def flight(t: int, u: float) -> dict:
        s = trace.steps[t - 1]
        order = np.argsort(s.chunk)  # marker k is chunk k (its id) in every frame
        src, dst, chunk = s.src[order], s.dst[order], s.chunk[order]
        x, y = boxes.in_flight(src, dst, chunk, u)
        held = counts[t, dst, chunk] if u == 1.0 else counts[t - 1, src, chunk]
        return {
            "x": np.round(x, 4).tolist(),
            "y": np.round(y, 4).tolist(),
            "marker": {
                "color": held.tolist(),
                "line": {"color": PHASE_COLOURS[s.phase], "width": 3},
            },
            "textfont": {"color": ink(held.tolist())},
        }

    def note(t: int) -> dict:
        if t == 0 or zoom is not None:
            return {"x": [None], "y": [None], "text": [""]}
        m = followed_move(trace, t)
        side = sides[m.dst]  # one line beyond the receiver's label: over a north one, else under
        y = ny[m.dst] + (NOTE_GAP if side.startswith("top") else -NOTE_GAP)
        x, y = round(float(nx[m.dst]), 4), round(float(y), 4)
        return {"x": [x], "y": [y], "text": [receiver_note(trace, t)], "textposition": side}

    hidden = {"x": [], "y": [], "marker": {"color": []}, "textfont": {"color": []}}
    frames = [
        {
            "name": "0",
            "data": [cells(0), hidden, centre(0), note(0)],
            "layout": {"title": {"text": title(0)}},
        }
    ]
    for t in range(1, last + 1):
        for j, u in enumerate(SUBSTEPS):
            data = [
                cells(t - 1) if u == 0.0 else {},
                flight(t, u),
                centre(t, u),
                note(0) if u == 0.0 else {},
            ]
            frames.append(
                {"name": f"{t}.{j}", "data": data, "layout": {"title": {"text": title(t, u)}}}
            )
        frames.append(
            {
                "name": str(t),
                "data": [cells(t), flight(t, 1.0), centre(t), note(t)],
                "layout": {"title": {"text": title(t)}},
            }
        )
    for f in frames:
        f["traces"] = [2, 3, 4, 5]
    scale_kw = {"cmin": 1, "cmax": max(n, 2), "colorscale": "Viridis"}
    flight_px = max(1.15 * cell_px, 18)
    lx, ly = boxes.labels(0.0 if zoom is None else -ZOOM_LABEL_PULL)
    links_x, links_y, heads = link_arcs(boxes)
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "links",
            "x": links_x,
            "y": links_y,
            "line": {"color": COLOURS["guide"], "width": 2},
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": "direction",
            "x": heads["x"],
            "y": heads["y"],
            "marker": {
                "symbol": "arrow",
                "size": 11,
                "angle": heads["angle"],
                "color": COLOURS["guide"],
            },
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "mode": "markers+text" if labelled else "markers",
            "name": "chunks",
            "x": np.round(cx.ravel(), 4).tolist(),
            "y": np.round(cy.ravel(), 4).tolist(),
            "customdata": [[r, c] for r in range(n) for c in range(n)],
            "text": [str(c) for _ in range(n) for c in range(n)] if labelled else None,
            "textfont": {"size": 11 if cell_px < 24 else 13},
            "marker": {
                "symbol": "square",
                "size": round(0.86 * cell_px, 1),
                **scale_kw,
                "line": {"width": 0},
                "showscale": not compact,  # compact: the page says the scale beside the ring
                "colorbar": {
                    **BAR_UNDER,
                    "thickness": 12,
                    "tickmode": "linear",
                    "tick0": 1,
                    "dtick": max(1, n // 8),
                },
            },
            "hovertemplate": "GPU %{customdata[0]} · chunk %{customdata[1]}<br>holds "
            f"%{{marker.color}} of {n} GPUs' inputs<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "markers+text",
            "name": "in flight",
            "ids": [str(c) for c in range(n)],
            "x": [],
            "y": [],
            "text": [str(c) for c in range(n)],
            "textfont": {"size": 12},
            "marker": {"symbol": "square", "size": round(flight_px, 1), **scale_kw},
            "hovertemplate": "chunk %{text} in flight<br>carries %{marker.color} GPUs' inputs"
            "<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "text",
            "name": "step",
            "x": [0],
            "y": [0],
            "text": [""],
            "textfont": {"size": 15, "color": COLOURS["ink"]},
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "mode": "text",
            "name": "receiver",
            "x": [None],
            "y": [None],
            "text": [""],
            "cliponaxis": zoom is not None,
            "textfont": {"size": 12, "color": COLOURS["ink"]},
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "mode": "text",
            "name": "GPUs",
            "x": np.round(lx, 4).tolist(),
            "y": np.round(ly, 4).tolist(),
            "text": [f"GPU {r}" if n <= 12 or zoom is not None else str(r) for r in range(n)],
            "textposition": label_sides(n),
            "textfont": {"size": 12 if n <= 16 else 10, "color": COLOURS["ink"]},
            "cliponaxis": zoom is not None,
            "hoverinfo": "skip",
        },
    ]
    axis = {"visible": False, "fixedrange": True}
    fig = {
        "data": data,
        "frames": frames,
        "layout": {
            "title": {"text": title(0), "font": {"size": 14}},
            "height": height,
            "showlegend": False,
            "margin": margin(10, 10, top, bottom),
            "xaxis": {**axis, "range": xr},
            "yaxis": {**axis, "range": yr, "scaleanchor": "x", "scaleratio": 1},
            "plot_bgcolor": COLOURS["paper"],
            "shapes": box_shapes(boxes, COLOURS["guide"], COLOURS["node_fill"]),
            "updatemenus": [step_frames(frame_ms) | (TOP_LEFT if compact else {})],
        },
    }
    # Every frame stays with the built figure (the page opens it at a step with open_at_step).
    return {**open_at_step(fig, start_step), "frames": frames}

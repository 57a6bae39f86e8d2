"""A drawing of a pipeline: the stages as boxes on their GPUs and the micro-batches flowing
through them, one frame per moment an op starts or ends in core.pipeline.simulate's timeline.

Each frame shows, on every GPU, the op it runs then (F3 = forward of micro-batch 3, coloured by op
kind as in the Gantt chart) or "idle" (the bubble), and under it one dot per micro-batch whose
activations it holds (its forward has run there, its backward not yet): GPipe's pile of M dots
against 1F1B's P − r is the memory story of docs/notes/pipeline.md.
"""

from __future__ import annotations

import numpy as np

from core.pipeline import KINDS, SCHEDULES, PipelineResult
from figures.draw import arrow
from figures.pipeline.playback import full_at, moments
from figures.style import COLOURS, KIND_COLOURS, ink_on, margin

BOX_PX = 64  # the stage box's marker size
HELD_ROW = -0.55  # y of the first row of held micro-batch dots
DOTS_PER_ROW = 8
MAX_RANKS, MAX_FRAMES = 8, 160  # a drawing for a small pipeline: the Gantt chart shows any size


def state_at(result: PipelineResult, t: float) -> tuple[list[str | None], list[list[int]]]:
    """At time t: each rank's running op ('F3', 'B0', …, or None) and the micro-batches whose
    activations it holds (forward done there, backward / input-gradient not yet)."""
    ops, p = result.ops, result.num_stages
    kind = np.array(KINDS)[ops.kind]
    running: list[str | None] = [None] * p
    held: list[list[int]] = [[] for _ in range(p)]
    eps = 1e-9
    active = (ops.start_s <= t + eps) & (ops.end_s > t + eps)
    for i in np.flatnonzero(active).tolist():
        running[int(ops.rank[i])] = f"{kind[i]}{int(ops.microbatch[i])}"
    done = ops.end_s <= t + eps
    for r in range(p):
        mine = ops.rank == r
        fwd = {
            (int(m), int(c))
            for m, c in zip(
                ops.microbatch[mine & done & (kind == "F")], ops.chunk[mine & done & (kind == "F")]
            )
        }
        back = mine & done & np.isin(kind, ("B", "I"))
        fwd -= {(int(m), int(c)) for m, c in zip(ops.microbatch[back], ops.chunk[back])}
        held[r] = sorted(m for m, _ in fwd)
    return running, held


def _frame_data(result: PipelineResult, t: float) -> list[dict]:
    running, held = state_at(result, t)
    p = result.num_stages
    fills = [KIND_COLOURS[op[0]] if op else COLOURS["idle"] for op in running]
    boxes = {
        "type": "scatter",
        "mode": "markers+text",
        "x": list(range(p)),
        "y": [0] * p,
        "marker": {
            "symbol": "square",
            "size": BOX_PX,
            "color": fills,
            "line": {"width": 1, "color": COLOURS["ink"]},
        },
        "text": [op or "idle" for op in running],
        "textfont": {"size": 15, "color": [ink_on(f) for f in fills]},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    xs, ys, labels = [], [], []
    for r, mbs in enumerate(held):
        for j, m in enumerate(mbs):
            xs.append(r - 0.3 + 0.6 * (j % DOTS_PER_ROW) / (DOTS_PER_ROW - 1))
            ys.append(HELD_ROW - 0.22 * (j // DOTS_PER_ROW))
            labels.append(str(m))
    dots = {
        "type": "scatter",
        "mode": "markers+text",
        "x": np.round(xs, 4).tolist(),
        "y": np.round(ys, 4).tolist(),
        "marker": {"size": 17, "color": KIND_COLOURS["F"]},
        "text": labels,
        "textfont": {"size": 9, "color": ink_on(KIND_COLOURS["F"])},
        "hovertemplate": "holds micro-batch %{text}<extra></extra>",
        "showlegend": False,
    }
    ops, eps = result.ops, 1e-9
    kind = np.array(KINDS)[ops.kind]
    finished = int((np.isin(kind, ("B", "I")) & (ops.stage == 0) & (ops.end_s <= t + eps)).sum())
    clock = {
        "type": "scatter",
        "mode": "text",
        "x": [(p - 1) / 2],
        "y": [HELD_ROW - 0.62],
        "text": [f"t = {t:g} s · {finished} of {result.num_microbatches} micro-batches done"],
        "textfont": {"size": 13, "color": COLOURS["ink"]},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    return [boxes, dots, clock]


def _key(result: PipelineResult) -> list[dict]:
    """Legend entries (static traces after the three a frame replaces): op kinds and idle."""
    kinds = sorted({KINDS[k] for k in result.ops.kind.tolist()}, key=KINDS.index)
    names = {"F": "forward F", "B": "backward B", "I": "input grad I", "W": "weight grad W"}
    entries = [(names[k], KIND_COLOURS[k]) for k in kinds] + [("idle (bubble)", COLOURS["idle"])]
    return [
        {
            "type": "scatter",
            "mode": "markers",
            "x": [None],
            "y": [None],
            "name": name,
            "marker": {"symbol": "square", "size": 12, "color": colour},
        }
        for name, colour in entries
    ]


def pp_drawing(
    result: PipelineResult, *, at: int | None = None, still_at_s: float | None = None
) -> dict:
    """Stages on GPUs with micro-batches flowing, one animation frame per moment of the timeline;
    `at` picks the frame shown first (default: the first moment every GPU is busy, else 0).

    still_at_s: instead, one still at that time and no frames, slider or ▶ (the page's time
    cursor drives it: a step re-sends three small traces, not every frame)."""
    p, ts = result.num_stages, moments(result)
    if p > MAX_RANKS or len(ts) > MAX_FRAMES:
        raise ValueError(
            f"P={p}, M={result.num_microbatches} has {len(ts)} moments on {p} GPUs: the flow "
            f"drawing animates at most {MAX_FRAMES} moments on at most {MAX_RANKS} GPUs; use "
            "P ≤ 8 and M ≤ 32 to watch the micro-batches flow (the timeline above shows any size)"
        )
    if still_at_s is not None:
        return _still(result, still_at_s)
    frames = [{"name": f"{t:g}", "data": _frame_data(result, t)} for t in ts]
    if at is None:
        busy = [i for i, t in enumerate(ts) if all(state_at(result, t)[0])]
        at = busy[0] if busy else 0
    at = min(max(at, 0), len(ts) - 1)
    slider = {
        "active": at,
        "x": 0.1,
        "len": 0.9,
        "currentvalue": {"prefix": "t = ", "suffix": " s"},
        "pad": {"t": 30},
        "steps": [
            {
                "label": f"{t:g}",
                "method": "animate",
                "args": [
                    [f"{t:g}"],
                    {
                        "mode": "immediate",
                        "frame": {"duration": 0, "redraw": True},
                        "transition": {"duration": 0},
                    },
                ],
            }
            for t in ts
        ],
    }
    play = {
        "type": "buttons",
        "showactive": False,
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "pad": {"t": 38},
        "buttons": [
            {
                "label": "▶ Play",
                "method": "animate",
                "args": [
                    None,
                    {
                        "frame": {"duration": 500, "redraw": True},
                        "transition": {"duration": 0},
                        "fromcurrent": True,
                    },
                ],
            }
        ],
    }
    sub = (
        f"{p} GPUs · {result.num_microbatches} micro-batches · one frame per op start or end "
        f"({len(ts)} frames, {result.makespan_s:g} s step)"
    )
    layout = _layout(result, sub) | {"sliders": [slider], "updatemenus": [play]}
    return {"data": frames[at]["data"] + _key(result), "frames": frames, "layout": layout}


def _still(result: PipelineResult, t_s: float) -> dict:
    """The drawing at one time, no frames; the subtitle says when, and when the pipe is full."""
    full = full_at(result)
    when = " (the pipe is full)" if full is not None and abs(t_s - full) < 1e-9 else ""
    sub = (
        f"{result.num_stages} GPUs · {result.num_microbatches} micro-batches · at t = {t_s:g} s"
        f"{when} of a {result.makespan_s:g} s step"
    )
    layout = _layout(result, sub) | {"height": 380, "margin": margin(l=10, r=10, t=80, b=10)}
    return {"data": _frame_data(result, t_s) + _key(result), "layout": layout}


def _layout(result: PipelineResult, sub: str) -> dict:
    p, v = result.num_stages, result.num_chunks
    name = SCHEDULES[result.schedule].short_label
    stages = f"{p} stages" if v == 1 else f"{p * v} stages on {p} GPUs ({v} chunks each)"
    notes = [
        {
            "x": r,
            "y": 0.62,
            "text": f"<b>GPU {r}</b><br>stage {r}" if v == 1 else f"<b>GPU {r}</b>",
            "showarrow": False,
            "font": {"size": 12, "color": COLOURS["ink"]},
        }
        for r in range(p)
    ]
    notes.append(
        {
            "x": -0.5,
            "y": HELD_ROW,
            "text": "activations<br>held",
            "showarrow": False,
            "xanchor": "right",
            "font": {"size": 11, "color": COLOURS["ink"]},
        }
    )
    arrows = [arrow(r + 0.32, 0, r + 1 - 0.32, 0, width=1) for r in range(p - 1)]
    return {
        "title": {
            "text": f"Pipeline ({name}): micro-batches flowing through {stages}",
            "subtitle": {"text": sub},
        },
        "annotations": notes + arrows,
        "xaxis": {"visible": False, "range": [-1.2, p - 0.4], "fixedrange": True},
        "yaxis": {"visible": False, "range": [HELD_ROW - 0.8, 0.95], "fixedrange": True},
        "showlegend": True,
        "legend": {"orientation": "v", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom"},
        "height": 420,
        "margin": margin(l=10, r=10, t=80, b=40),
        "plot_bgcolor": COLOURS["paper"],
        "paper_bgcolor": COLOURS["paper"],
    }

"""Plotly figures (plain dict specs): a real profiler trace beside a simulated plan, per rank.

Only numbers from an uploaded file reach a figure (ranks, times): never its names, which stay in
tables where they are shown as plain text.
"""

from __future__ import annotations

import numpy as np

from core.traces import COMM_ONLY, COMPUTE, IDLE, OVERLAP, PlanTimeline, TraceAnalysis
from core.units import format_seconds
from figures.style import COLOURS, legend_under_axis_title

# Compute blue, communication overlapped with compute green, exposed communication red, idle grey:
# the same meanings as the DP bucket timeline and the planner's breakdown (figures.style.COLOURS).
ORDER = (COMPUTE, OVERLAP, COMM_ONLY, IDLE)
STATE_COLOURS = {
    COMPUTE: COLOURS["compute"],
    OVERLAP: COLOURS["hidden"],
    COMM_ONLY: COLOURS["exposed"],
    IDLE: COLOURS["idle"],
}
NAMES = {
    COMPUTE: "compute",
    OVERLAP: "compute + comm (overlap)",
    COMM_ONLY: "comm only (exposed)",
    IDLE: "idle",
}
MS = 1e3
MAX_BARS = 2000  # plan bars drawn (every plan rank runs the same runs: past it, one row)
MAX_PLAN_ROWS = 8
# One fixed left margin for the page's three charts, wide enough for "trace · rank 1023": their
# time axes line up, and Plotly draws each once (an axis with automargin that widens the margin is
# drawn twice: 78 → 36 ms for the A100 trace, plotly.min.js newPlot in Chromium, this machine).
LEFT_PX = 130


def _trace_rows(analysis: TraceAnalysis) -> list[str]:
    return [f"trace · rank {r.rank}" for r in analysis.ranks]


def _plan_rows(plan: PlanTimeline) -> list[str]:
    """One row per plan rank, or one for all of them when that would be too many bars or rows."""
    n = plan.num_ranks
    if n > MAX_PLAN_ROWS or n * len(plan.seg_state) > MAX_BARS:
        return ["plan · every rank"]  # how many: in the subtitle
    return [f"plan · rank {r}" for r in range(n)]


def breakdown_figure(analysis: TraceAnalysis, plan: PlanTimeline | None = None) -> dict:
    """One stacked bar per rank (compute only, overlap, comm only, idle = the span), plan below."""
    rows = _trace_rows(analysis) + (["plan · every rank"] if plan else [])
    parts = {
        COMPUTE: [r.compute_s - r.overlap_s for r in analysis.ranks],
        OVERLAP: [r.overlap_s for r in analysis.ranks],
        COMM_ONLY: [r.comm_s - r.overlap_s for r in analysis.ranks],
        IDLE: [r.idle_s for r in analysis.ranks],
    }
    if plan:
        for k in ORDER:
            parts[k].append(plan.seconds(k))
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": NAMES[k],
            "y": rows,
            "x": np.round(np.array(parts[k]) * MS, 4).tolist(),
            "marker": {"color": STATE_COLOURS[k]},
            "hovertemplate": f"%{{y}}: {NAMES[k]} %{{x:.3f}} ms<extra></extra>",
        }
        for k in ORDER
    ]
    steps = max(1, min(r.steps for r in analysis.ranks))
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "Where each rank's time goes",
                "subtitle": {
                    "text": f"{steps} step{'s' * (steps > 1)}; bars add up to the traced span"
                },
            },
            "barmode": "stack",
            "xaxis": {"title": {"text": "time (ms)"}, "rangemode": "tozero"},
            "yaxis": {"autorange": "reversed"},
            "legend": legend_under_axis_title(height := 170 + 45 * len(rows), 70, 90),
            "height": height,
            "margin": {"t": 70, "b": 90, "l": LEFT_PX},
        },
    }


def _bars(rows: list[str], starts, ends, states, axis: str, legend: bool) -> list[dict]:
    """One horizontal bar trace per state; rows[i] is the row of starts[i] (seconds → ms)."""
    out = []
    for k in ORDER:
        sel = np.flatnonzero(states == k)
        if not len(sel):
            continue
        out.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": NAMES[k],
                "legendgroup": NAMES[k],
                "showlegend": legend,
                "yaxis": axis,
                "xaxis": "x",
                "y": [rows[i] for i in sel.tolist()],
                "base": np.round(starts[sel] * MS, 4).tolist(),
                "x": np.round((ends[sel] - starts[sel]) * MS, 4).tolist(),
                "marker": {"color": STATE_COLOURS[k], "line": {"width": 0}},
                "hovertemplate": f"%{{y}}: {NAMES[k]}<br>%{{base:.3f}} ms + %{{x:.3f}} "
                "ms<extra></extra>",
            }
        )
    return out


def time_range_ms(analysis: TraceAnalysis, plan: PlanTimeline | None = None) -> float:
    """The x-axis end both timelines share: the longest of the traced spans and the plan. The
    trace's own span whenever the plan fits in it, so a plan control leaves the trace chart as it
    is (one figure, one draw: Streamlit redraws a chart from scratch when its spec changes)."""
    ends = [r.seg_end_s[-1] for r in analysis.ranks if len(r.seg_end_s)]
    if plan is not None and len(plan.seg_end_s):
        ends.append(plan.seg_end_s[-1])
    return float(max(ends, default=0.0)) * MS


def _timeline_layout(title: str, sub: list[str], rows: list[str], legend: bool, x_ms: float):
    top, bottom = 80, (90 if legend else 60)
    height = top + bottom + 40 + 34 * len(rows)
    layout = {
        "title": {"text": title, "subtitle": {"text": "; ".join(sub)}},
        "barmode": "overlay",
        "bargap": 0.25,
        "showlegend": legend,
        "xaxis": {"title": {"text": "time (ms)"}, "range": [0, round(x_ms, 4)]},
        "yaxis": {"autorange": "reversed", "categoryorder": "array", "categoryarray": rows},
        "height": height,
        "margin": {"t": top, "b": bottom, "l": LEFT_PX},
    }
    if legend:
        layout["legend"] = legend_under_axis_title(height, top, bottom)
    return layout


def trace_figure(analysis: TraceAnalysis, x_ms: float | None = None) -> dict:
    """The real trace, one row per rank, on a time axis from 0 to `x_ms` (default: its span)."""
    t_rows, ranks = _trace_rows(analysis), analysis.ranks
    rows = np.concatenate([np.full(len(r.seg_state), i) for i, r in enumerate(ranks)])
    cat = lambda f: np.concatenate([getattr(r, f) for r in ranks])  # noqa: E731
    data = _bars(
        [t_rows[i] for i in rows.tolist()],
        cat("seg_start_s"),
        cat("seg_end_s"),
        cat("seg_state"),
        "y",
        True,
    )
    sub = [f"drawn from its {ranks[0].source}"]
    if not analysis.aligned:
        sub.append("files on different clocks: each rank drawn from its first event")
    if (bins := max(r.bin_s for r in ranks)) > 0:
        sub.append(f"drawn in {format_seconds(bins)} bins, each coloured by what filled most of it")
    x_ms = time_range_ms(analysis) if x_ms is None else x_ms
    title = "Real trace: what each rank did, step by step"
    return {"data": data, "layout": _timeline_layout(title, sub, t_rows, True, x_ms)}


def plan_figure(plan: PlanTimeline, x_ms: float) -> dict:
    """The simulated plan on the same time axis as the trace above it (same colours)."""
    p_rows, m = _plan_rows(plan), len(plan.seg_state)
    n = len(p_rows)
    data = _bars(
        [p_rows[i // m] for i in range(n * m)],
        np.tile(plan.seg_start_s, n),
        np.tile(plan.seg_end_s, n),
        np.tile(plan.seg_state, n),
        "y",
        legend=False,
    )
    every = f"; all {plan.num_ranks:,} ranks run the same" if len(p_rows) < plan.num_ranks else ""
    sub = [f"{plan.label}, {plan.steps} × {format_seconds(plan.step_s)}{every}; colours as above"]
    if plan.bin_s > 0:
        sub.append(f"drawn in {format_seconds(plan.bin_s)} bins (totals exact)")
    title = "Simulated plan, on the trace's time axis"
    return {"data": data, "layout": _timeline_layout(title, sub, p_rows, False, x_ms)}

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


def _trace_rows(analysis: TraceAnalysis) -> list[str]:
    return [f"trace · rank {r.rank}" for r in analysis.ranks]


def _plan_rows(plan: PlanTimeline) -> list[str]:
    """One row per plan rank, or one for all of them when that would be too many bars or rows."""
    n = plan.num_ranks
    if n > MAX_PLAN_ROWS or n * len(plan.seg_state) > MAX_BARS:
        return [f"plan · every rank ({n:,})"]
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
            "yaxis": {"autorange": "reversed", "automargin": True},
            "legend": legend_under_axis_title(height := 170 + 45 * len(rows), 70, 90),
            "height": height,
            "margin": {"t": 70, "b": 90},
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


def timeline_figure(analysis: TraceAnalysis, plan: PlanTimeline | None = None) -> dict:
    """Ranks on y, one shared time axis: the trace on top, the simulated plan underneath."""
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
    n_plan = len(_plan_rows(plan)) if plan else 0
    if plan:
        p_rows, m = _plan_rows(plan), len(plan.seg_state)
        data += _bars(
            [p_rows[i // m] for i in range(n_plan * m)],
            np.tile(plan.seg_start_s, n_plan),
            np.tile(plan.seg_end_s, n_plan),
            np.tile(plan.seg_state, n_plan),
            "y2",
            legend=False,
        )
    # Panel heights follow the row counts so every rank gets the same height.
    total = len(ranks) + n_plan
    split = n_plan / total if plan else 0.0
    gap = 0.1 if plan else 0.0
    bins = max(r.bin_s for r in ranks)
    sub = (
        []
        if analysis.aligned
        else ["files on different clocks: each rank drawn from its first event"]
    )
    if bins > 0:
        sub.append(
            f"trace drawn in {format_seconds(bins)} bins, each coloured by what filled most of it"
        )
    if plan and plan.bin_s > 0:
        sub.append(f"plan drawn in {format_seconds(plan.bin_s)} bins (totals exact)")
    layout = {
        "title": {
            "text": "Timeline: real trace (top) vs simulated plan (bottom)",
            "subtitle": {"text": "; ".join(sub)},
        },
        "barmode": "overlay",
        "bargap": 0.25,
        "legend": legend_under_axis_title(height := 210 + 34 * total + (50 if plan else 0), 80, 90),
        "xaxis": {
            "title": {"text": "time (ms)"},
            "anchor": "y2" if plan else "y",
            "rangemode": "tozero",
        },
        "yaxis": {
            "domain": [split + gap / 2 if plan else 0, 1],
            "autorange": "reversed",
            "automargin": True,
            "categoryorder": "array",
            "categoryarray": t_rows,
        },
        "height": height,
        "margin": {"t": 80, "b": 90},
        "annotations": [
            {
                "text": f"<b>Real trace</b> ({ranks[0].source})",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "xanchor": "left",
                "y": 1,
                "yanchor": "bottom",
            }
        ],
    }
    if plan:
        layout["yaxis2"] = {
            "domain": [0, split - gap / 2],
            "autorange": "reversed",
            "automargin": True,
            "categoryorder": "array",
            "categoryarray": _plan_rows(plan),
        }
        layout["annotations"].append(
            {
                "text": f"<b>Simulated plan</b> ({plan.label}, {plan.steps} × "
                f"{format_seconds(plan.step_s)})",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "xanchor": "left",
                "y": split - gap / 2,
                "yanchor": "bottom",
            }
        )
    return {"data": data, "layout": layout}

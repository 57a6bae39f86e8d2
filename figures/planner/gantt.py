"""The planner's pipeline, aggregated: with many micro-batches one box per op is a barcode, so
each rank's ops merge into busy runs (gaps under 1% of the step absorbed) over the idle background:
fill, steady state and drain stay readable at M = 288."""

from __future__ import annotations

import numpy as np

from core.pipeline import PipelineResult
from figures.pipeline import gantt_figure
from figures.style import COLOURS, bottom_legend, margin

AGGREGATE_ABOVE = 32  # micro-batches: above this the planner draws busy runs, not ops


def busy_runs(
    result: PipelineResult, gap_share: float = 0.01
) -> list[tuple[int, float, float, int, float]]:
    """(rank, start, end, ops, busy seconds) of each run of ops separated by gaps < gap_share of
    the makespan."""
    ops, tol, out = result.ops, gap_share * result.makespan_s, []
    for r in range(result.num_stages):
        sel = np.flatnonzero(ops.rank == r)
        start, end = ops.start_s[sel], ops.end_s[sel]
        if not len(sel):
            continue
        cut = np.flatnonzero(start[1:] - end[:-1] > tol) + 1  # ops are sorted by start per rank
        for a, b in zip(np.r_[0, cut], np.r_[cut, len(sel)]):
            out.append(
                (
                    r,
                    float(start[a]),
                    float(end[b - 1]),
                    int(b - a),
                    float((end[a:b] - start[a:b]).sum()),
                )
            )
    return out


def planner_gantt_figure(result: PipelineResult) -> dict:
    """One box per op up to AGGREGATE_ABOVE micro-batches; busy runs above (a barcode otherwise)."""
    many = result.num_microbatches > AGGREGATE_ABOVE
    return aggregated_gantt_figure(result) if many else gantt_figure(result)


def aggregated_gantt_figure(result: PipelineResult) -> dict:
    """Ranks on y, time on x: one bar per busy run (hover: ops and busy share), idle behind."""
    runs = busy_runs(result)
    p, T = result.num_stages, result.makespan_s
    rank, s, e, n, busy = (np.array(c) for c in zip(*runs))
    hover = [
        f"rank {r}: {k} ops, {format(b / (y - x), '.0%')} busy over {y - x:.3g} s"
        for r, x, y, k, b in runs
    ]
    bar = {
        "type": "bar",
        "orientation": "h",
        "name": "busy (F and B; gaps < 1% of the step merged)",
        "y": rank.astype(int).tolist(),
        "base": s.tolist(),
        "x": (e - s).tolist(),
        "width": 0.8,
        "marker": {"color": COLOURS["compute"]},
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
    }
    idle = {
        "type": "bar",
        "orientation": "h",
        "name": "idle (bubble)",
        "y": list(range(p)),
        "base": [0.0] * p,
        "x": [T] * p,
        "width": 0.8,
        "marker": {"color": COLOURS["idle"]},
        "hoverinfo": "skip",
    }
    return {
        "data": [idle, bar],
        "layout": {
            "title": {
                "text": f"{result.label} · P={p} · M={result.num_microbatches}, aggregated",
                "subtitle": {
                    "text": f"makespan {T:.4g} s · bubble {result.bubble_fraction:.1%} "
                    "(Σ idle / P·T) · each bar a run of back-to-back ops"
                },
            },
            "barmode": "overlay",
            "xaxis": {"title": {"text": "time (s)"}, "range": [0, T]},
            "yaxis": {
                "title": {"text": "pipeline rank"},
                "autorange": "reversed",
                "dtick": 1 if p <= 16 else None,
            },
            "legend": bottom_legend(),
            "margin": margin(t=80),
            "height": 160 + 22 * min(p, 32),
        },
    }

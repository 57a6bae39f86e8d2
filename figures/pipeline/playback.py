"""A time cursor over a Gantt: everything after time t is covered and a line marks t, so stepping t
through the step shows the pipe filling (ranks start one by one) and draining (they stop one by
one). The page's one "fill and drain" control (URL-bound: app_pages/common/pipeline_view.py) steps
t through `moments`, the times an op starts or ends; only two layout shapes change per step, so a
step re-sends a small figure at any P and M (the bars are the cached Gantt's own arrays).
"""

from __future__ import annotations

import numpy as np

from core.pipeline import PipelineResult
from figures.style import COLOURS


def moments(*results: PipelineResult) -> list[float]:
    """The times at which anything changes in any of the results: every op's start and end,
    sorted, once each (compared schedules share one cursor on their shared time axis)."""
    ops = [r.ops for r in results]
    times = np.concatenate([t for o in ops for t in (o.start_s, o.end_s)] or [np.zeros(1)])
    return sorted(set(np.round(times, 9).tolist()))


def busy_ranks(result: PipelineResult, t_s: float) -> int:
    """Ranks running an op at time t (start ≤ t < end)."""
    ops = result.ops
    on = (ops.start_s <= t_s) & (t_s < ops.end_s)
    return int(np.unique(ops.rank[on]).size)


def full_at(result: PipelineResult) -> float | None:
    """The first moment every rank is busy (the pipe is full), or None if it never is."""
    ops, p = result.ops, result.num_stages
    # Not before every rank has started: the first candidate usually is the answer.
    first = max(float(ops.start_s[ops.rank == r].min()) for r in range(p))
    later = (t for t in moments(result) if t >= first - 1e-9)
    return next((t for t in later if busy_ranks(result, t) == p), None)


def at_time(fig: dict, t_s: float) -> dict:
    """A copy of a Gantt figure with what has not happened by t covered and a line at t; at or past
    the end of its time axis, the figure itself (the whole step: nothing covered)."""
    layout = fig["layout"]
    end = layout["xaxis"]["range"][1]
    if t_s >= end:
        return fig
    cover = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": t_s,
        "x1": end,
        "y0": 0,
        "y1": 1,
        "fillcolor": COLOURS["label_background"],
        "line": {"width": 0},
        "layer": "above",
    }
    line = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": t_s,
        "x1": t_s,
        "y0": 0,
        "y1": 1,
        "line": {"color": COLOURS["ink"], "width": 2},
    }
    shapes = [*layout.get("shapes", []), cover, line]
    return {**fig, "layout": {**layout, "shapes": shapes}}

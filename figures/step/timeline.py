"""The timeline strip under a step drawing: one segment per timed phase on the step's time axis,
the current phase outlined. Phases far shorter than the step are widened to stay visible (each is
labelled with its real duration).
"""

from __future__ import annotations

from core.stepplan import StepPlan
from core.units import format_seconds
from figures.step.grid import rect
from figures.style import COLOURS

MIN_SHARE = 0.07  # narrowest segment, as a share of the strip
COLOUR = {
    "fill": COLOURS["compute"],
    "steady": COLOURS["compute"],
    "drain": COLOURS["compute"],
    "grad_sync": COLOURS["exposed_dp"],
    "param_gather": COLOURS["exposed_dp"],
    "optimizer": COLOURS["optimizer_step"],
}
AXES = {"xaxis": "x2", "yaxis": "y2"}


def segments(plan: StepPlan) -> list[tuple[int, float, float]]:
    """(phase index, x0, x1) on a 0 … 1 strip; the untimed rest phase is a sliver at 0."""
    timed = [(i, p) for i, p in enumerate(plan.phases) if p.key != "rest"]
    total = plan.step_time_s or 1.0
    share = [max(p.duration_s / total, MIN_SHARE) for _, p in timed]
    scale = 1.0 / sum(share)
    out, x = [], 0.0
    for (i, _), s in zip(timed, share):
        out.append((i, x, x + s * scale))
        x += s * scale
    return out


def strip_traces(plan: StepPlan, short: dict[str, str]) -> list[dict]:
    """Static: one filled trace per colour, then the labels (phase name and real duration)."""
    by_colour: dict[str, tuple[list, list]] = {}
    tx, text = [], []
    for i, x0, x1 in segments(plan):
        ph = plan.phases[i]
        xs, ys = by_colour.setdefault(COLOUR[ph.key], ([], []))
        px, py = rect(x0 + 0.002, x1 - 0.002, 0.15, 0.85)
        xs += px
        ys += py
        tx.append((x0 + x1) / 2)
        text.append(f"{short[ph.key]}<br>{format_seconds(ph.duration_s)}")
    out = [
        {
            "type": "scatter",
            "mode": "none",
            "x": xs,
            "y": ys,
            "fill": "toself",
            "fillcolor": colour,
            "opacity": 0.55,
            "hoverinfo": "skip",
            "showlegend": False,
            **AXES,
        }
        for colour, (xs, ys) in by_colour.items()
    ]
    out.append(
        {
            "type": "scatter",
            "mode": "text",
            "x": tx,
            "y": [0.5] * len(tx),
            "text": text,
            "textfont": {"size": 10, "color": COLOURS["dark_text"]},
            "hoverinfo": "skip",
            "showlegend": False,
            **AXES,
        }
    )
    return out


def marker_trace(plan: StepPlan, index: int) -> dict:
    """The current phase outlined on the strip (at 0 before the step starts)."""
    where = {i: (x0, x1) for i, x0, x1 in segments(plan)}
    x0, x1 = where.get(index, (0.0, 0.004))
    xs, ys = rect(x0, x1, 0.02, 0.98)
    return {
        "type": "scatter",
        "mode": "lines",
        "x": xs,
        "y": ys,
        "line": {"color": COLOURS["ink_dark"], "width": 3},
        "name": "this phase",
        "hoverinfo": "skip",
        "showlegend": False,
        **AXES,
    }

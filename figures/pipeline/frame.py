"""What every Gantt of a schedule shares: op-kind names, title, axes and idle background."""

from __future__ import annotations

from core.pipeline import PipelineResult
from figures.style import COLOURS, margin

# F blue, B orange, I teal, W green, overlapped F&B purple (figures.style.KIND_COLOURS); a later
# chunk is a lighter shade of the same hue.
KIND_NAMES = {
    "F": "forward",
    "B": "backward",
    "I": "input grad",
    "W": "weight grad",
    "F&B": "overlapped F&B",
}


def gantt_title(result: PipelineResult) -> str:
    """Title carrying the key parameters, e.g. '1F1B · P=4 · M=8' (browser tests wait on it)."""
    v = f" · v={result.num_chunks}" if result.num_chunks > 1 else ""
    return f"{result.label} · P={result.num_stages} · M={result.num_microbatches}{v}"


def _subtitle(result: PipelineResult) -> str:
    peak, v = max(result.peak_activations), result.num_chunks
    held = (
        f"{peak} chunk activations ({peak / v:g} stage-equivalents)"
        if v > 1
        else f"{peak} activations"
    )
    return (
        f"makespan {result.makespan_s:.4g} s · bubble {result.bubble_fraction:.1%} "
        f"(Σ idle / P·T) · peak {held}"
    )


def gantt_layout(
    result: PipelineResult, title: str | None, time_range_s: float | None = None
) -> dict:
    """time_range_s: a time axis longer than this schedule's makespan (compared Gantts share the
    longest one, so the faster schedule looks shorter); its end is then marked."""
    p = result.num_stages
    end = max(time_range_s or 0.0, result.makespan_s)
    layout = {
        "title": {"text": title or gantt_title(result), "subtitle": {"text": _subtitle(result)}},
        # No axis title: the ticks say "s" (the page's time cursor sits under the chart).
        "xaxis": {"range": [0, end], "zeroline": False, "ticksuffix": " s"},
        "yaxis": {
            "title": {"text": ""},
            "autorange": "reversed",
            "tickmode": "array",
            "tickvals": list(range(p)),
            "ticktext": [f"rank {r}" for r in range(p)],
        },
        "plot_bgcolor": COLOURS["idle"],  # idle time shows as the grey background between boxes
        "margin": margin(t=70),
        # Rows tall enough to read a micro-batch label at small P, still one screen at P = 32.
        "height": 130 + p * (44 if p <= 8 else 26 if p <= 16 else 15),
        "shapes": [],
        "annotations": [],
    }
    if end > result.makespan_s * (1 + 1e-9):  # the step is over: white after it, marked
        layout["shapes"] = [
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": result.makespan_s,
                "x1": end,
                "y0": 0,
                "y1": 1,
                "fillcolor": COLOURS["paper"],
                "line": {"width": 0},
                "layer": "below",
            }
        ]
        layout["annotations"] = [
            {
                "x": result.makespan_s,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "yanchor": "bottom",
                "xanchor": "left",
                "text": f" done at {result.makespan_s:.4g} s",
                "showarrow": False,
                "font": {"color": COLOURS["ink"]},
            }
        ]
    return layout

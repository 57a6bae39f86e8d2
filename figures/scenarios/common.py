"""What every scenario's words and figure share: the walkthrough record, verdicts, memory and
step-time bars.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.planner import Breakdown
from core.scenarios import GPU
from core.units import format_bytes, format_seconds, gib_or_gb
from figures.style import COLOURS, PART_COLOURS, bottom_legend

FONT = {"size": 14}
OK, BAD = COLOURS["ok"], COLOURS["bad"]


@dataclass(frozen=True, kw_only=True)
class Walkthrough:
    """What the page prints for one scenario: the setting, numbered steps, the lesson, a
    question. `headline` is the lesson in one line (≤ 90 characters), the presenter slide's
    takeaway: the full one runs ~4 lines at 1280×720 and pushes the chart off the first screen
    (issue 15; tests/e2e/test_presenter_browser.py).
    """

    title: str
    intro: str
    steps: tuple[str, ...]
    takeaway: str
    headline: str
    how: str
    question: str
    answer: float
    unit: str
    explanation: str


def pct(x: float) -> str:
    return f"{100 * x:.3g}%"


def sec(seconds: float) -> str:
    """Seconds as seconds from 1 s up (a step of 74 s reads better beside 124 s than as 1.24
    min).
    """
    return f"{seconds:.3g} s" if seconds >= 1 else format_seconds(seconds)


def verdict(ok: bool) -> str:
    return "**fits**" if ok else "**does not fit (OOM)**"


def _capacity_legend(capacity: float, units: str, what: str = f"{GPU} HBM") -> dict:
    """A legend entry for the dashed capacity line (a shape has none)."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "hoverinfo": "skip",
        "name": f"{what} {format_bytes(capacity, units)}",
        "line": {"color": COLOURS["capacity"], "dash": "dash"},
    }


def memory_bars(cols, capacity: float, reserve: float, units: str, title: str) -> dict:
    """Stacked bars: model states, activations, reserve; the HBM line; fits / OOM above each bar."""
    name, unit = gib_or_gb(units)
    x = [c[0] for c in cols]
    parts = [
        ("Model states", COLOURS["model_states"], [c[1] for c in cols]),
        ("Activations", COLOURS["activations"], [c[2] for c in cols]),
        ("Reserve", COLOURS["reserve"], [reserve] * len(cols)),
    ]
    data = [
        {
            "type": "bar",
            "name": p,
            "x": x,
            "y": [v / unit for v in vals],
            "marker": {"color": colour},
            "hovertemplate": f"{p}: %{{y:.4g}} {name}<extra></extra>",
        }
        for p, colour, vals in parts
    ]
    data.append(_capacity_legend(capacity, units))
    notes = [
        {
            "x": c[0],
            "y": (c[1] + c[2] + reserve) / unit,
            "yanchor": "bottom",
            "showarrow": False,
            "text": f"{'fits' if c[3] else 'OOM'} · {format_bytes(c[1] + c[2] + reserve, units)}",
            "font": {"color": OK if c[3] else BAD},
        }
        for c in cols
    ]
    top = max([capacity] + [c[1] + c[2] + reserve for c in cols]) / unit
    return {
        "data": data,
        "layout": {
            "title": {"text": title},
            "barmode": "stack",
            "font": FONT,
            "height": 420,
            "annotations": notes,
            "yaxis": {"title": {"text": f"memory per GPU ({name})"}, "range": [0, 1.15 * top]},
            "shapes": [
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "y0": capacity / unit,
                    "y1": capacity / unit,
                    "line": {"color": COLOURS["capacity"], "dash": "dash"},
                }
            ],
            "legend": bottom_legend(-0.15, traceorder="normal"),
            "margin": {"t": 60, "b": 40},
        },
    }


# ---------- 3 · 3D placement, and 6 · the sentence ----------
def breakdown_bars(outcomes, labels, title: str) -> dict:
    data = []
    for field, label in Breakdown.LABELS.items():
        vals = [getattr(o.breakdown, field) for o in outcomes]
        if any(vals):
            data.append(
                {
                    "type": "bar",
                    "name": label,
                    "x": labels,
                    "y": vals,
                    "marker": {"color": PART_COLOURS[field]},
                    "hovertemplate": f"{label}: %{{y:.4g}} s<extra></extra>",
                }
            )
    notes = [
        {"x": a, "y": o.step_s, "yanchor": "bottom", "showarrow": False, "text": sec(o.step_s)}
        for a, o in zip(labels, outcomes)
    ]
    return {
        "data": data,
        "layout": {
            "title": {"text": title},
            "barmode": "stack",
            "font": FONT,
            "height": 440,
            "annotations": notes,
            "yaxis": {
                "title": {"text": "seconds per step"},
                "range": [0, 1.15 * max(o.step_s for o in outcomes)],
            },
            "legend": bottom_legend(-0.15),
            "margin": {"t": 60, "b": 40},
        },
    }

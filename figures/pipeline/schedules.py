"""Schedules compared: bubble share vs micro-batches, and peak activations per stage."""

from __future__ import annotations

from collections.abc import Sequence

from core.pipeline import BubbleSweep, PipelineResult
from figures.style import COLOURS, bottom_legend, margin, schedule_colour

# Looped BFS is interleaved's breadth-first sibling (same chunks, same bubble curve): it shares
# interleaved's colour here and differs by dash and marker. Six schedule colours, three of them
# semantic, leave presenter mode (figures.theme) three free Okabe-Ito colours: never yellow.
_FAMILY = {"looped_bfs": "interleaved_1f1b"}
DASHES = [
    "dash",
    "dot",
    "dashdot",
    "longdash",
    "longdashdot",
    "5px,3px,1px,3px",
    "12px,3px,2px,3px,2px,3px",
]
SYMBOLS = ["circle", "diamond", "square", "triangle-up", "x", "cross", "triangle-down"]


def colour_of(schedule: str, index: int = 0) -> str:
    """The schedule's colour on these charts (schedule_colour, Looped BFS as interleaved)."""
    return schedule_colour(_FAMILY.get(schedule, schedule), index)


def _same_curve(a: BubbleSweep, b: BubbleSweep) -> bool:
    return list(a.curve_microbatches) == list(b.curve_microbatches) and all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) < 1e-12)
        for x, y in zip(a.curve, b.curve)
    )


def bubble_vs_m_figure(
    sweeps: Sequence[BubbleSweep],
    labels: dict[str, str] | None = None,
    *,
    title: str | None = None,
    highlight: str | None = None,
    here: tuple[int, float] | None = None,
) -> dict:
    """Metric A against M: the closed-form curve per schedule with simulated points on it.

    `highlight` draws one schedule thick and solid, on top; the others are told apart by dash and
    marker as well as colour. A schedule whose curve is one already drawn (GPipe = 1F1B,
    interleaved = looped BFS) is drawn as a wide translucent band under it, named as the same
    curve, so neither hides the other. `here` = (M, A) marks the current run.
    """
    names = {sw.schedule: (labels or {}).get(sw.schedule, sw.schedule) for sw in sweeps}
    traces = []
    # The chosen curve is drawn as a line whatever its order; a later twin of any line is a band.
    drawn = [sw for sw in sweeps if sw.schedule == highlight]
    for k, sw in enumerate(sweeps):
        name = names[sw.schedule] + (f" (v={sw.num_chunks})" if sw.num_chunks > 1 else "")
        chosen = sw.schedule == highlight
        twin = None if chosen else next((o for o in drawn if _same_curve(o, sw)), None)
        if twin is not None:
            name += f" (= {names[twin.schedule]})"
        elif not chosen:
            drawn.append(sw)
        color = colour_of(sw.schedule, k)
        band = twin is not None and not chosen
        line = (
            {"color": color, "width": 10, "dash": "solid"}
            if band
            else {
                "color": color,
                "width": 4 if chosen else 2,
                "dash": "solid" if chosen else DASHES[k % len(DASHES)],
            }
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": name,
                "legendrank": k,
                "legendgroup": sw.schedule,
                "x": list(sw.curve_microbatches),
                "y": list(sw.curve),
                "connectgaps": False,
                "opacity": 0.35 if band else 1.0,
                "line": line,
                "hovertemplate": f"{name} formula<br>M=%{{x}}: %{{y:.2%}}<extra></extra>",
            }
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{name} simulated",
                "legendgroup": sw.schedule,
                "showlegend": False,
                "x": list(sw.microbatches),
                "y": list(sw.simulated),
                "marker": {
                    "color": color,
                    "size": 12 if chosen else 9 if not band else 14,
                    "symbol": SYMBOLS[k % len(SYMBOLS)] + ("" if not band else "-open"),
                    "line": {"width": 2, "color": color},
                },
                "hovertemplate": f"{name} simulated<br>M=%{{x}}: %{{y:.2%}}<extra></extra>",
            }
        )
    # Paint order: bands first (underneath), the chosen schedule last (on top); legendrank keeps
    # the legend in input order.
    traces.sort(key=lambda t: (t["legendgroup"] == highlight, t.get("opacity", 1.0) == 1.0))
    if here is not None:
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"this run (M={here[0]})",
                "x": [here[0]],
                "y": [here[1]],
                "marker": {"color": COLOURS["ink_dark"], "size": 16, "symbol": "star"},
                "hovertemplate": "this run<br>M=%{x}: %{y:.2%}<extra></extra>",
            }
        )
    p = sweeps[0].num_stages if sweeps else "?"
    top = max((max(sw.curve_microbatches, default=1) for sw in sweeps), default=1)
    ticks = [2**k for k in range(top.bit_length())]
    chosen_name = names.get(highlight)
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": title or f"Bubble vs M · P={p}",
                "subtitle": {
                    "text": "lines: closed form · dots: simulated"
                    + (f" · bold: {chosen_name}" if chosen_name else "")
                },
            },
            "xaxis": {
                "title": {"text": "micro-batches M"},
                "type": "log",
                "tickmode": "array",
                "tickvals": ticks,
                "ticktext": [str(t) for t in ticks],
            },
            "yaxis": {
                "title": {"text": "bubble fraction A = Σ idle / (P · T)"},
                "tickformat": ".0%",
                "rangemode": "tozero",
            },
            "legend": bottom_legend(-0.25),
            "margin": margin(t=80),
        },
    }


def peak_activations_figure(results: Sequence[PipelineResult], *, title: str | None = None) -> dict:
    """Grouped bars: peak activations per rank, in full-stage micro-batch equivalents."""
    traces = []
    for k, res in enumerate(results):
        ranks = list(range(res.num_stages))
        name = res.label + (f" (v={res.num_chunks})" if res.num_chunks > 1 else "")
        traces.append(
            {
                "type": "bar",
                "name": name,
                "legendgroup": res.schedule,
                "x": ranks,
                "marker": {"color": colour_of(res.schedule, k)},
                "y": list(res.peak_activation_stages),
                "customdata": list(res.peak_activations),
                "hovertemplate": (
                    f"{res.label}, rank %{{x}}: %{{y:.3g}} stage-equivalents"
                    " (%{customdata} chunk activations)<extra></extra>"
                ),
            }
        )
    head = results[0] if results else None
    default = (
        f"Peak activations per rank · P={head.num_stages} · M={head.num_microbatches}"
        if head
        else "Peak activations per rank"
    )
    return {
        "data": traces,
        "layout": {
            "title": {"text": title or default},
            "barmode": "group",
            "xaxis": {
                "title": {"text": "rank"},
                "tickmode": "linear",
                "dtick": 1 if head is None or head.num_stages <= 16 else 4,
            },
            "yaxis": {"title": {"text": "peak activations (mb of one stage)"}},
            "legend": bottom_legend(-0.25),
            "margin": margin(t=50),
        },
    }

"""Schedules compared: bubble share vs micro-batches, and peak activations per stage."""

from __future__ import annotations

from collections.abc import Sequence

from core.pipeline import BubbleSweep, PipelineResult
from figures.style import COLOURS, bottom_legend, margin, schedule_colour


def bubble_vs_m_figure(
    sweeps: Sequence[BubbleSweep],
    labels: dict[str, str] | None = None,
    *,
    title: str | None = None,
    highlight: str | None = None,
    here: tuple[int, float] | None = None,
) -> dict:
    """Metric A against M: the closed-form curve per schedule with simulated points on it.

    `highlight` draws one schedule bold (the others thinner); `here` = (M, A) marks the current run.
    """
    # Several schedules share a curve (GPipe = 1F1B, interleaved = looped BFS): dashes and marker
    # symbols keep the overlapping ones distinguishable.
    dashes = ["dot", "dash", "longdash", "dashdot", "longdashdot"]
    symbols = ["circle", "diamond", "square", "triangle-up", "x", "cross", "triangle-down"]
    traces = []
    for k, sw in enumerate(sweeps):
        name = (labels or {}).get(sw.schedule, sw.schedule)
        name += f" (v={sw.num_chunks})" if sw.num_chunks > 1 else ""
        color = schedule_colour(sw.schedule, k)
        bold = highlight is None or sw.schedule == highlight
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
                "opacity": 1.0 if bold else 0.55,
                "line": {
                    "color": color,
                    "width": 3.5 if highlight and bold else 1.8,
                    "dash": "solid" if bold and (highlight or k == 0) else dashes[k % len(dashes)],
                },
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
                "opacity": 1.0 if bold else 0.55,
                "marker": {"color": color, "size": 9, "symbol": symbols[k % len(symbols)]},
                "hovertemplate": f"{name} simulated<br>M=%{{x}}: %{{y:.2%}}<extra></extra>",
            }
        )
    # Paint the highlighted schedule last (on top); legendrank keeps the legend in input order.
    traces.sort(key=lambda t: t["legendgroup"] == highlight)
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
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": title or f"Bubble vs M · P={p}",
                "subtitle": {"text": "lines: closed form · dots: simulated"},
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
                "marker": {"color": schedule_colour(res.schedule, k)},
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

"""The pipeline-schedules scenario: bubble share and memory of each schedule."""

from __future__ import annotations

from core.pipeline import SCHEDULES, closed_form_bubble_share
from core.scenarios import Schedules
from figures.scenarios.common import FONT, Walkthrough
from figures.style import SCHEDULE_COLOURS, bottom_legend


# ---------- 4 · GPipe vs 1F1B ----------
def schedules_text(s: Schedules) -> Walkthrough:
    p, ms = s.stages, sorted({m for _, m in s.rows})
    r = s.rows
    lo, hi = ms[0], ms[-1]
    bub = "; ".join(
        f"M = {m}: {p - 1}/{m + p - 1} = **{r['1f1b', m].closed_form:.2%}** (simulated GPipe "
        f"{r['gpipe', m].simulated:.2%}, 1F1B {r['1f1b', m].simulated:.2%})"
        for m in ms
    )
    q_m = 4 * p
    return Walkthrough(
        title=f"4 · GPipe vs 1F1B at P = {p}",
        intro=f"A pipeline of {p} stages, t_B = 2 t_F, at M = {lo} and M = {hi} micro-batches per "
        "step.",
        steps=(
            "**The bubble.** Both schedules idle (P−1)(t_F + t_B) per rank while the pipe fills "
            f"and drains, so the idle share is (P−1)/(M+P−1): {bub}.",
            "**GPipe's memory.** All M forwards run before the first backward, so the first rank "
            f"holds M micro-batches of activations: **{r['gpipe', lo].peak_activations}** at M = "
            f"{lo}, **{r['gpipe', hi].peak_activations}** at M = {hi}.",
            "**1F1B's memory.** Backward starts as soon as each micro-batch returns: rank r "
            f"holds at most P − r, so the fullest holds **{r['1f1b', hi].peak_activations}** at "
            f"M = {hi} ({r['gpipe', hi].peak_activations / r['1f1b', hi].peak_activations:.3g}× "
            f"less than GPipe, same bubble). At M = {lo} they hold "
            f"{r['gpipe', lo].peak_activations} and {r['1f1b', lo].peak_activations}: 1F1B's "
            "saving grows with M, exactly when M is raised to shrink the bubble.",
            "**So:** shrink the bubble with more micro-batches, and run 1F1B so that more "
            "micro-batches do not mean more memory. More stages make the bubble bigger, not "
            "smaller.",
        ),
        takeaway=(
            f"At P = {p}, going from M = {lo} to M = {hi} cuts the bubble from "
            f"{r['1f1b', lo].closed_form:.1%} to {r['1f1b', hi].closed_form:.1%}; 1F1B keeps the "
            f"activations at {r['1f1b', hi].peak_activations} micro-batches where GPipe needs "
            f"{r['gpipe', hi].peak_activations}."
        ),
        headline=(
            f"P = {p}, M {lo} → {hi}: bubble {r['1f1b', lo].closed_form:.1%} → "
            f"{r['1f1b', hi].closed_form:.1%}; 1F1B holds {r['1f1b', hi].peak_activations} "
            f"micro-batches, GPipe {r['gpipe', hi].peak_activations}."
        ),
        how=(
            "`core.pipeline.simulate` runs each rank's op list under the stage dependencies (t_F "
            "= 1 s, t_B = 2 s, no p2p latency); bubble fraction = Σ idle / (P · makespan). "
            "Closed form: `closed_form_bubble_share`, GPipe's (P−1)/(M+P−1). Peak activations: "
            "the most micro-batches whose forward has started and backward not finished, on any "
            "rank."
        ),
        question=f"1F1B at P = {p}, M = {q_m}: bubble fraction",
        unit="%",
        answer=100 * closed_form_bubble_share("1f1b", p, q_m),
        explanation=f"(P−1)/(M+P−1) = {p - 1}/{q_m + p - 1}.",
    )


def schedules_figure(s: Schedules) -> dict:
    ms = sorted({m for _, m in s.rows})
    x = [f"M = {m}" for m in ms]
    names = {k: SCHEDULES[k].label for k in ("gpipe", "1f1b")}
    data = []
    for k, name in names.items():
        c = SCHEDULE_COLOURS[k]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [100 * s.rows[k, m].simulated for m in ms],
                "marker": {"color": c},
                "legendgroup": k,
                "text": [f"{100 * s.rows[k, m].simulated:.1f}%" for m in ms],
                "textposition": "outside",
            }
        )
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [s.rows[k, m].peak_activations for m in ms],
                "marker": {"color": c},
                "legendgroup": k,
                "showlegend": False,
                "xaxis": "x2",
                "yaxis": "y2",
                "text": [s.rows[k, m].peak_activations for m in ms],
                "textposition": "outside",
            }
        )
    top = max(r.peak_activations for r in s.rows.values())
    return {
        "data": data,
        "layout": {
            "title": {"text": f"P = {s.stages}: same bubble, different memory"},
            "barmode": "group",
            "font": FONT,
            "height": 420,
            "xaxis": {"domain": [0, 0.45]},
            "xaxis2": {"domain": [0.55, 1], "anchor": "y2"},
            "yaxis": {"title": {"text": "bubble fraction (%)"}, "range": [0, 60]},
            "yaxis2": {
                "title": {"text": "peak activations (micro-batches)"},
                "anchor": "x2",
                "range": [0, 1.2 * top],
            },
            "legend": bottom_legend(-0.15),
            "margin": {"t": 60, "b": 40},
        },
    }

"""Tensor parallelism is exact: sharded vs unsharded outputs at every TP degree."""

from __future__ import annotations

import numpy as np

from core.tensor_parallel import TpProof
from figures.style import COLOURS, RANK_COLOURS, margin

# One colour per TP rank (figures.style.RANK_COLOURS, repeated for TP > 10); grey = a tensor every
# rank holds whole.
FLOOR = 1e-18  # zero differences are drawn at this floor on the log axis


def proof_sweep_figure(proofs: dict[int, list[TpProof]], *, skipped: tuple[int, ...] = ()) -> dict:
    """Max |sharded − unsharded| of the output (forward) and the worst gradient (backward) at every
    TP degree: one chart that does not change with the TP slider, so moving it never redraws
    this."""
    if not proofs:
        raise ValueError("no proofs to draw: pass at least one TP degree's proofs")
    degrees = sorted(proofs)
    layers = [p.layer for p in proofs[degrees[0]]]
    traces = []
    for i, layer in enumerate(layers):
        got = [next(p for p in proofs[t] if p.layer == layer) for t in degrees]
        color = RANK_COLOURS[i % len(RANK_COLOURS)]
        for side, value, symbol in (
            ("forward (Y)", lambda p: p.forward_max_abs_diff, "circle"),
            ("backward (worst gradient)", lambda p: p.backward_max_abs_diff, "diamond-open"),
        ):
            vals = [value(p) for p in got]
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{layer} · {side}",
                    "x": [f"TP={t}" for t in degrees],
                    "y": [max(v, FLOOR) for v in vals],
                    "customdata": [f"{v:.1e}" for v in vals],
                    "line": {"color": color, "dash": "solid" if symbol == "circle" else "dot"},
                    "marker": {"color": color, "symbol": symbol, "size": 10},
                    "hovertemplate": f"{layer} · {side} · %{{x}}: %{{customdata}}<extra></extra>",
                }
            )
    eps = float(
        np.finfo(np.float64).eps
    )  # a reference line, drawn as a trace (exact on a log axis)
    traces.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"float64 machine epsilon {eps:.1e}",
            "x": [f"TP={degrees[0]}", f"TP={degrees[-1]}"],
            "y": [eps, eps],
            "hoverinfo": "skip",
            "line": {"color": COLOURS["ink"], "dash": "dash", "width": 1},
        }
    )
    worst = max(p.worst for ps in proofs.values() for p in ps)
    skip = f"; TP={', '.join(map(str, skipped))} split no whole heads" if skipped else ""
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": "Tensor parallel · sharded = unsharded at every TP degree",
                "subtitle": {
                    "text": f"worst max |difference| {worst:.1e}: float64 rounding "
                    f"(exact zeros drawn at {FLOOR:.0e}){skip}"
                },
            },
            "xaxis": {"type": "category", "title": {"text": "TP degree"}},
            "yaxis": {
                "type": "log",
                "title": {"text": "max |sharded − unsharded|"},
                "range": [-18.5, -12],
                "exponentformat": "power",
                "dtick": 1,
            },
            "height": 380,
            "margin": margin(l=90, t=80, b=60),
        },
    }

"""Data parallelism is exact: full-batch vs averaged gradients, and the SGD loss curves."""

from __future__ import annotations

import numpy as np

from core.data_parallel import DpProof, SgdCurves
from figures.style import SERIES_COLOURS, bottom_legend, margin

# The gradient proof and SGD curves: the full-batch answer and the two averages of shard means.
FULL, RING, WEIGHTED = SERIES_COLOURS[:3]
MAX_PARAMS_SHOWN = 40


def _shards(sizes: tuple[int, ...]) -> str:
    return "/".join(map(str, sizes)) if len(sizes) <= 8 else f"{sizes[0]}/…/{sizes[-1]}"


def gradient_proof_figure(proof: DpProof, *, max_params: int = MAX_PARAMS_SHOWN) -> dict:
    """Top: full-batch vs ring-averaged (and weighted) gradient; bottom: their differences."""
    k = min(max_params, proof.full_grad.size)
    idx = list(range(k))
    n = len(proof.shard_sizes)
    series = [
        ("full batch", proof.full_grad, FULL),
        (f"ring all-reduce ÷ {n}", proof.ring_grad, RING),
    ]
    if not proof.equal_shards:
        series.append(("weighted by shard size", proof.weighted_grad, WEIGHTED))
    traces = [
        {
            "type": "bar",
            "name": name,
            "x": idx,
            "y": np.round(g[:k], 12).tolist(),
            "marker": {"color": c},
            "xaxis": "x",
            "yaxis": "y",
        }
        for name, g, c in series
    ]
    for name, g, c in series[1:]:
        traces.append(
            {
                "type": "bar",
                "name": f"{name} − full",
                "x": idx,
                "y": (g[:k] - proof.full_grad[:k]).tolist(),
                "marker": {"color": c},
                "showlegend": False,
                "xaxis": "x",
                "yaxis": "y2",
            }
        )
    sub = (
        f"shards {_shards(proof.shard_sizes)} · max |ring − full| = {proof.ring_max_abs_diff:.1e}"
        + (
            ""
            if proof.equal_shards
            else f" · max |weighted − full| = {proof.weighted_max_abs_diff:.1e}"
        )
    )
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"Data parallel · N={n} · gradient proof", "subtitle": {"text": sub}},
            "barmode": "group",
            "height": 460,
            "legend": bottom_legend(-0.15),
            "xaxis": {
                "title": {"text": f"parameter index (first {k} of {proof.full_grad.size})"},
                "anchor": "y2",
            },
            "yaxis": {"domain": [0.42, 1.0], "title": {"text": "gradient"}},
            "yaxis2": {
                "domain": [0.0, 0.32],
                "title": {"text": "difference"},
                "anchor": "x",
                "exponentformat": "e",
            },
            "margin": margin(l=70, t=80, b=60),
        },
    }


def loss_curves_figure(curves: SgdCurves, shard_sizes: tuple[int, ...]) -> dict:
    """Full-batch loss after each SGD step: full batch vs ring average vs weighted average."""
    n = len(shard_sizes)
    steps = curves.steps.tolist()
    traces = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "full batch",
            "x": steps,
            "y": curves.full_batch_loss.tolist(),
            "line": {"color": FULL, "width": 5},
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": f"plain average of {n} shard means",
            "x": steps,
            "y": curves.ring_average_loss.tolist(),
            "line": {"color": RING, "dash": "dash"},
            "marker": {"size": 5},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "average weighted by shard size",
            "x": steps,
            "y": curves.weighted_loss.tolist(),
            "line": {"color": WEIGHTED, "dash": "dot"},
        },
    ]
    sub = (
        f"shards {_shards(tuple(shard_sizes))} · max |loss diff|: plain "
        f"{curves.max_abs_loss_diff_ring:.1e}, weighted {curves.max_abs_loss_diff_weighted:.1e}"
    )
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"SGD · N={n} · loss curves", "subtitle": {"text": sub}},
            "xaxis": {"title": {"text": "SGD step"}},
            "yaxis": {"title": {"text": "full-batch loss (MSE / 2)"}},
            "legend": bottom_legend(),
            "height": 380,
            "margin": margin(l=70, t=80, b=60),
        },
    }

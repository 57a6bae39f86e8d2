"""Data parallelism is exact: full-batch vs averaged gradients, and the SGD loss curves."""

from __future__ import annotations

import numpy as np

from core.data_parallel import DpProof, SgdCurves
from figures.style import SERIES_COLOURS, legend_under_axis_title, margin

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
            "height": 480,
            "legend": legend_under_axis_title(480, 80, 95),
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
            "margin": margin(l=70, t=80, b=95),
        },
    }


def loss_curves_figure(curves: SgdCurves, shard_sizes: tuple[int, ...]) -> dict:
    """Top: full-batch loss after each SGD step (full batch, plain average, weighted average);
    bottom: each average's loss minus the full batch's, on its own axis, so an unequal-shard
    error of 1e-2 on a 0.5 → 0.13 loss shows as a curve leaving zero, not as two overlaid lines.
    """
    n = len(shard_sizes)
    steps = curves.steps.tolist()
    full = curves.full_batch_loss
    runs = [
        ("full batch", full, FULL, {"width": 5}, "lines"),
        (
            f"plain average of {n} shard means",
            curves.ring_average_loss,
            RING,
            {"dash": "dash"},
            "lines+markers",
        ),
        (
            "average weighted by shard size",
            curves.weighted_loss,
            WEIGHTED,
            {"dash": "dot"},
            "lines",
        ),
    ]
    traces = [
        {
            "type": "scatter",
            "mode": mode,
            "name": name,
            "legendgroup": name,
            "x": steps,
            "y": y.tolist(),
            "line": {"color": c, **style},
            **({"marker": {"size": 5}} if "markers" in mode else {}),
        }
        for name, y, c, style, mode in runs
    ]
    traces += [
        {
            "type": "scatter",
            "mode": mode,
            "name": f"{name} − full batch",
            "legendgroup": name,
            "showlegend": False,
            "x": steps,
            "y": (y - full).tolist(),
            "line": {"color": c, **style},
            "xaxis": "x",
            "yaxis": "y2",
            **({"marker": {"size": 5}} if "markers" in mode else {}),
        }
        for name, y, c, style, mode in runs[1:]
    ]
    sub = (
        f"shards {_shards(tuple(shard_sizes))} · max |loss diff|: plain "
        f"{curves.max_abs_loss_diff_ring:.1e}, weighted {curves.max_abs_loss_diff_weighted:.1e}"
    )
    height, top, bottom = 480, 80, 95
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"SGD · N={n} · loss curves", "subtitle": {"text": sub}},
            "xaxis": {"title": {"text": "SGD step"}, "anchor": "y2"},
            "yaxis": {"domain": [0.42, 1.0], "title": {"text": "full-batch loss (MSE / 2)"}},
            "yaxis2": {
                "domain": [0.0, 0.32],
                "title": {"text": "loss − full batch"},
                "anchor": "x",
                "exponentformat": "e",
                "zeroline": True,
            },
            "legend": legend_under_axis_title(height, top, bottom),
            "height": height,
            "margin": margin(l=70, t=top, b=bottom),
        },
    }
